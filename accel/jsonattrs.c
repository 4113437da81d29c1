/* _hlo_layout_json: an instruction's attributes as `inspect --format json` spells them, in C.
 *
 * The twin of the attribute branch of hlo_layout/report/model.py `InstructionText.add` (the
 * reference) for a tail of the common kind (`scan._SIMPLE_TAIL`: values hold no nested
 * brackets), which that branch splits with `scan._SIMPLE_ATTR_RE.findall` and writes as
 *
 *     ",".join(prefix + encode_str(key) + ": " + encode_str(value) for key, value in pairs)
 *
 *   attributes(tail, prefix) -> str | None
 *
 * Returns None, and the caller takes the Python branch, for anything it does not read exactly
 * as that regex does: a tail that is not ASCII, is not of the simple kind, or names a key twice
 * (the Python branch keeps a repeated key's first place and last value). Values are escaped as
 * json.encoder.encode_basestring escapes them. tests/report/test_json_accel.py compares the two
 * on generated tails and on every corpus tail.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define ABI 1
/* More items than this go to the Python branch (the repeated-key check here is quadratic). */
#define MAX_ITEMS 256

typedef struct {
    Py_ssize_t key, key_end, value, value_end;
} item_t;

/* `[A-Za-z0-9_.$]`, the first character of a name after `%?-?` (scan._NAME) */
static int name_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '$';
}

/* The rest of a name: `[A-Za-z0-9_.$+]` and `-` not before `>`. */
static int name_char(unsigned char c) { return name_start(c) || c == '+' || c == '-'; }

/* Python's `\s` on an ASCII character. */
static int space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

/* `"[^"\\\n]*(?:\\.[^"\\\n]*)*"` at s[i] (a quote): the index after it, or -1. */
static Py_ssize_t string_end(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) {
    for (i++; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"') return i + 1;
        if (c == '\n') return -1;
        if (c == '\\') {
            if (i + 1 >= n || s[i + 1] == '\n') return -1;
            i++;
        }
    }
    return -1;
}

/* The key of s[a:b] (a name, scan._NAME) is well formed. */
static int valid_key(const unsigned char *s, Py_ssize_t a, Py_ssize_t b) {
    if (a < b && s[a] == '%') a++;
    if (a < b && s[a] == '-') a++;
    if (a >= b || !name_start(s[a])) return 0;
    for (Py_ssize_t i = a + 1; i < b; i++) {
        if (!name_char(s[i])) return 0;
        if (s[i] == '-' && i + 1 < b && s[i + 1] == '>') return 0;
    }
    return 1;
}

/* Split `tail` as `(?:[ \t]*,[ \t]*NAME=VALUE)*[ \t\f\r]*` must match it; the item count, or -1. */
static Py_ssize_t split(const unsigned char *s, Py_ssize_t n, item_t *items, Py_ssize_t cap) {
    Py_ssize_t i = 0, count = 0;
    for (;;) {
        Py_ssize_t j = i;
        while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
        if (j >= n || s[j] != ',') {
            /* the end: only `[ \t\f\r]*` may follow */
            for (j = i; j < n; j++)
                if (!(s[j] == ' ' || s[j] == '\t' || s[j] == '\f' || s[j] == '\r')) return -1;
            return count;
        }
        j++;
        while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
        Py_ssize_t key = j;
        while (j < n && s[j] != '=') j++;
        if (j >= n || !valid_key(s, key, j)) return -1;
        Py_ssize_t key_end = j++;
        Py_ssize_t value = j;
        if (j >= n) return -1;
        if (s[j] == '"') {
            j = string_end(s, j, n);
            if (j < 0) return -1;
        } else if (s[j] == '{') {
            for (j++;; ) {
                if (j >= n) return -1;
                unsigned char c = s[j];
                if (c == '}') {
                    j++;
                    break;
                }
                if (c == '{') return -1;
                if (c == '"') {
                    j = string_end(s, j, n);
                    if (j < 0) return -1;
                } else {
                    j++;
                }
            }
        } else {
            while (j < n && !space(s[j]) && !strchr(",{}()[]\"", s[j])) j++;
            if (j == value) return -1;
        }
        if (count >= cap) return -1; /* past MAX_ITEMS (an item takes 4 characters or more) */
        items[count].key = key;
        items[count].key_end = key_end;
        items[count].value = value;
        items[count].value_end = j;
        count++;
        i = j;
    }
}

/* Characters json.encoder.encode_basestring writes for c (ASCII). */
static Py_ssize_t escaped_length(unsigned char c) {
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') return 2;
    return c < 0x20 ? 6 : 1;
}

static char *put_escaped(char *out, unsigned char c) {
    static const char hex[] = "0123456789abcdef";
    switch (c) {
    case '"': *out++ = '\\'; *out++ = '"'; return out;
    case '\\': *out++ = '\\'; *out++ = '\\'; return out;
    case '\b': *out++ = '\\'; *out++ = 'b'; return out;
    case '\f': *out++ = '\\'; *out++ = 'f'; return out;
    case '\n': *out++ = '\\'; *out++ = 'n'; return out;
    case '\r': *out++ = '\\'; *out++ = 'r'; return out;
    case '\t': *out++ = '\\'; *out++ = 't'; return out;
    default:
        if (c < 0x20) {
            memcpy(out, "\\u00", 4);
            out[4] = hex[c >> 4];
            out[5] = hex[c & 15];
            return out + 6;
        }
        *out++ = (char)c;
        return out;
    }
}

static PyObject *attributes(PyObject *self, PyObject *args) {
    PyObject *tail, *prefix;
    if (!PyArg_ParseTuple(args, "UU", &tail, &prefix)) return NULL;
    if (!PyUnicode_IS_ASCII(tail) || !PyUnicode_IS_ASCII(prefix)) Py_RETURN_NONE;
    const unsigned char *s = PyUnicode_1BYTE_DATA(tail);
    Py_ssize_t n = PyUnicode_GET_LENGTH(tail);
    const char *p = (const char *)PyUnicode_1BYTE_DATA(prefix);
    Py_ssize_t np = PyUnicode_GET_LENGTH(prefix);
    item_t stack[64];
    item_t *items = stack;
    Py_ssize_t cap = 64;
    if (n / 4 + 1 > 64) { /* an item takes at least 4 characters: `,k=v` */
        cap = n / 4 + 1 < MAX_ITEMS ? n / 4 + 1 : MAX_ITEMS;
        items = PyMem_Malloc(sizeof(item_t) * cap);
        if (items == NULL) return PyErr_NoMemory();
    }
    PyObject *result = NULL;
    Py_ssize_t count = split(s, n, items, cap);
    if (count <= 0) goto none;
    Py_ssize_t length = count - 1; /* the commas */
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t klen = items[k].key_end - items[k].key;
        for (Py_ssize_t m = 0; m < k; m++) /* a repeated key: the Python branch decides */
            if (items[m].key_end - items[m].key == klen &&
                memcmp(s + items[m].key, s + items[k].key, klen) == 0)
                goto none;
        length += np + klen + 4 + 2; /* prefix "key": "..." */
        for (Py_ssize_t i = items[k].value; i < items[k].value_end; i++) length += escaped_length(s[i]);
    }
    result = PyUnicode_New(length, 127);
    if (result == NULL) goto done;
    char *out = (char *)PyUnicode_1BYTE_DATA(result);
    for (Py_ssize_t k = 0; k < count; k++) {
        if (k) *out++ = ',';
        memcpy(out, p, np);
        out += np;
        *out++ = '"';
        memcpy(out, s + items[k].key, items[k].key_end - items[k].key);
        out += items[k].key_end - items[k].key;
        memcpy(out, "\": \"", 4);
        out += 4;
        for (Py_ssize_t i = items[k].value; i < items[k].value_end; i++) out = put_escaped(out, s[i]);
        *out++ = '"';
    }
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    if (items != stack) PyMem_Free(items);
    return result;
}

static PyMethodDef methods[] = {
    {"attributes", attributes, METH_VARARGS,
     "attributes(tail, prefix) -> str | None: a simple tail's attributes as JSON object items."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_hlo_layout_json", "InstructionText's attribute items in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__hlo_layout_json(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "ABI", ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
