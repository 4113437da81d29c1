/* _hlo_layout_json: instructions as `inspect --format json` spells them, in C.
 *
 *   instructions(seq, start, stop, opcodes, shapes, lazy_type, spans, called_keys, fragments,
 *                calls, prefix, suffix) -> (str, end)
 *
 * A faster writer of the records `hlo_layout/report/model.py` writes (`InstructionText.add`
 * is the reference, `instruction_record` the schema), called by `computation_pieces` once per
 * batch: `prefix`, then seq[start:end] written whole, each instruction after its separator
 * (`fragments[0]`, from the second instruction of the computation on), `end` being the first
 * instruction it leaves to the Python branch (or `stop`, and then `suffix` follows: most batches
 * become one string, never joined again). It reads no HLO: it takes an instruction whose name,
 * operands, literal and attribute text are ASCII, whose opcode's and shape's fragments the Python
 * has spelled already (`opcodes`, `shapes`: InstructionText's memos) and whose attributes are
 * none or a `LazyAttributes` (`lazy_type`) with the spans of the scanner's one splitter
 * (`LazyAttributes.spans`: `spans(text)` is that splitter, called and its answer kept in the
 * object where none is kept yet, so the tree's attributes and every reader read the same
 * spans); the called computations of `called_keys` in the form `key=%name` (what
 * `called_computations` gives). Anything else (a repeated key, a value in braces under a
 * called key, a tail the grammar splits, a new shape) goes to the Python branch. Into `calls`
 * (a list, or None) it appends what the streamer gathers: (callee, opcode) per call.
 *
 * Strings are escaped as json.encoder.encode_basestring escapes them.
 * tests/report/test_json_accel.py compares it with the Python branch on generated instructions
 * (escapes, control characters, non-ASCII, huge and deep inputs) and on the corpus.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "lexicon.h"

#define ABI 3
/* More items than this go to the Python branch (the repeated-key check here is quadratic). */
#define MAX_ITEMS 256

typedef struct {
    Py_ssize_t key, key_end, value, value_end;
} item_t;


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

/* ---------------------------------------------------------------------------------------------
 * instructions(): whole instructions, the twin of `InstructionText.add` (the reference).
 *
 * A growable byte buffer: every write reserves its bytes first (overflow checked), so nothing is
 * written past `cap`. Only ASCII is written; an instruction holding anything else is declined.
 */
typedef struct {
    char *p;
    Py_ssize_t n, cap;
} buf_t;

static int reserve(buf_t *b, Py_ssize_t extra) {
    if (extra < 0 || extra > PY_SSIZE_T_MAX - b->n) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t need = b->n + extra;
    if (need <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 16384;
    while (cap < need) cap = cap > PY_SSIZE_T_MAX / 2 ? need : cap * 2;
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static int put(buf_t *b, const char *s, Py_ssize_t n) {
    if (reserve(b, n) < 0) return -1;
    memcpy(b->p + b->n, s, (size_t)n);
    b->n += n;
    return 0;
}

/* `json.encoder.encode_basestring` of the ASCII text s[0:n]: quotes and escapes. */
/* Whether json.encoder.encode_basestring escapes an ASCII character: `"`, `\\`, below 0x20. */
static int escapes(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

static int put_quoted(buf_t *b, const unsigned char *s, Py_ssize_t n) {
    if (n > (PY_SSIZE_T_MAX - 2) / 6) {
        PyErr_NoMemory();
        return -1;
    }
    /* room for the worst case (every character `\u00XX`); a long string (a constant's literal
     * of megabytes) is measured first, so the buffer grows by its text, not six times it */
    Py_ssize_t need = 6 * n + 2;
    if (n > 4096) {
        need = 2;
        for (Py_ssize_t i = 0; i < n; i++) need += escaped_length(s[i]);
    }
    if (reserve(b, need) < 0) return -1;
    char *out = b->p + b->n;
    *out++ = '"';
    Py_ssize_t i = 0;
    while (i < n) { /* runs that need no escape copied whole */
        Py_ssize_t j = i;
        while (j < n && !escapes(s[j])) j++;
        memcpy(out, s + i, (size_t)(j - i));
        out += j - i;
        if (j < n) out = put_escaped(out, s[j++]);
        i = j;
    }
    *out++ = '"';
    b->n = out - b->p;
    return 0;
}

/* A str's ASCII bytes and length, or NULL (not a str, or not ASCII). */
static const unsigned char *ascii(PyObject *o, Py_ssize_t *n) {
    if (!PyUnicode_Check(o) || !PyUnicode_IS_ASCII(o)) return NULL;
    *n = PyUnicode_GET_LENGTH(o);
    return PyUnicode_1BYTE_DATA(o);
}

static PyObject *ascii_str(const unsigned char *s, Py_ssize_t n) {
    PyObject *o = PyUnicode_New(n, 127);
    if (o != NULL) memcpy(PyUnicode_1BYTE_DATA(o), s, (size_t)n);
    return o;
}

/* The constant pieces `instructions` writes, in the order model._FRAGMENTS gives them. */
enum { F_SEPARATOR, F_HEAD, F_OPEN_LIST, F_ITEM_SEP, F_CLOSE_LIST, F_INFERRED, F_NUMBER, F_LITERAL,
       F_CALLED, F_ATTRIBUTES_OPEN, F_ITEM, F_CLOSE_OBJECT_END, F_NO_ATTRIBUTES_END, F_COUNT };

#define MAX_CALLED_KEYS 32

typedef struct {
    const char *f[F_COUNT];
    Py_ssize_t fn[F_COUNT];
    PyObject *opcodes, *shapes, *lazy, *spans, *calls;
    const unsigned char *called[MAX_CALLED_KEYS];
    Py_ssize_t called_n[MAX_CALLED_KEYS];
    Py_ssize_t ncalled;
    item_t *items; /* MAX_ITEMS */
} state_t;

static PyObject *s_spans, *s_text; /* "_spans", "_text" */

#define PUTF(k) put(b, st->f[k], st->fn[k])

/* The spans of an attribute text as the scanner's splitter gives them (`LazyAttributes.spans`:
 * kept in the object, else asked of `st->spans` and kept) into `items`: their count, 0 where
 * the writer leaves the instruction to the Python branch (the splitter does not follow the
 * text, more than `cap` items, spans out of order), -1 on an error. */
static Py_ssize_t read_spans(state_t *st, PyObject *lazy, PyObject *text, Py_ssize_t n, item_t *items,
                             Py_ssize_t cap) {
    PyObject *spans = PyObject_GetAttr(lazy, s_spans);
    if (spans == NULL) return -1;
    if (spans == Py_None) {
        Py_DECREF(spans);
        spans = PyObject_CallOneArg(st->spans, text);
        if (spans == NULL || PyObject_SetAttr(lazy, s_spans, spans) < 0) {
            Py_XDECREF(spans);
            return -1;
        }
    }
    Py_ssize_t count = 0;
    if (PyTuple_Check(spans) && PyTuple_GET_SIZE(spans) % 4 == 0 && PyTuple_GET_SIZE(spans) / 4 <= cap) {
        count = PyTuple_GET_SIZE(spans) / 4;
        Py_ssize_t last = 0;
        for (Py_ssize_t k = 0; k < 4 * count; k++) {
            Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(spans, k));
            if (v == -1 && PyErr_Occurred()) {
                Py_DECREF(spans);
                return -1;
            }
            if (v < last || v > n) { /* not the splitter's */
                count = 0;
                break;
            }
            item_t *it = &items[k / 4];
            switch (k % 4) {
            case 0: it->key = v; break;
            case 1: it->key_end = v; break;
            case 2: it->value = v; break;
            default: it->value_end = v;
            }
            last = v;
        }
    }
    Py_DECREF(spans);
    return count;
}

/* The called computation of a value `%name` or `name` (computation_names of a value not in
 * braces: the value without `%`), as [*a, *b); 0 when not of that form (the caller declines). */
static int callee(const unsigned char *s, const item_t *it, Py_ssize_t *a, Py_ssize_t *b) {
    Py_ssize_t v = it->value, e = it->value_end;
    if (v < e && s[v] == '%') v++;
    if (v >= e || s[v] == '%' || hlo_run_end(PyUnicode_1BYTE_KIND, s, e, v) != e) return 0;
    *a = v;
    *b = e;
    return 1;
}

static int called_key(const state_t *st, const unsigned char *s, const item_t *it) {
    Py_ssize_t n = it->key_end - it->key;
    for (Py_ssize_t k = 0; k < st->ncalled; k++)
        if (st->called_n[k] == n && memcmp(st->called[k], s + it->key, (size_t)n) == 0) return 1;
    return 0;
}

/* Append `index` as `int.__repr__` spells it. */
static int put_int_repr(buf_t *b, PyObject *number) {
    PyObject *r = PyLong_Type.tp_repr(number);
    if (r == NULL) return -1;
    Py_ssize_t n;
    const unsigned char *t = ascii(r, &n);
    int rc = t == NULL ? -1 : put(b, (const char *)t, n);
    if (t == NULL) PyErr_SetString(PyExc_SystemError, "int repr not ASCII");
    Py_DECREF(r);
    return rc;
}

/* Write one instruction (after its separator when `index` > 0). 1: written; 0: declined (the
 * buffer and the lists as they were: the caller's Python branch writes it); -1: an error. */
static int one(state_t *st, buf_t *b, PyObject *ins, Py_ssize_t index) {
    if (!PyTuple_Check(ins) || PyTuple_GET_SIZE(ins) < 10) return 0;
    /* borrowed from `ins`, which the caller holds (a tuple: they cannot change) */
    PyObject *name = PyTuple_GET_ITEM(ins, 0), *opcode = PyTuple_GET_ITEM(ins, 1);
    PyObject *shape = PyTuple_GET_ITEM(ins, 2), *operands = PyTuple_GET_ITEM(ins, 3);
    PyObject *attributes = PyTuple_GET_ITEM(ins, 4), *literal = PyTuple_GET_ITEM(ins, 6);
    PyObject *number = PyTuple_GET_ITEM(ins, 7);
    Py_ssize_t name_n, op_n, shape_n, figures_n, literal_n = 0, tail_n = 0, count = 0;
    const unsigned char *name_s = ascii(name, &name_n), *literal_s = NULL, *tail = NULL;
    if (name_s == NULL || !PyUnicode_CheckExact(opcode) || !PyTuple_Check(operands)) return 0;
    if (literal != Py_None && (literal_s = ascii(literal, &literal_n)) == NULL) return 0;
    if (number != Py_None && !PyLong_Check(number)) return 0;
    PyObject *is_root_o = PyTuple_GET_ITEM(ins, 5), *inferred_o = PyTuple_GET_ITEM(ins, 9);
    if (!PyBool_Check(is_root_o) || !PyBool_Check(inferred_o)) return 0;
    int is_root = is_root_o == Py_True, inferred = inferred_o == Py_True;

    /* operands: each (name, index, shape), name ASCII, index None or an int */
    Py_ssize_t noperands = PyTuple_GET_SIZE(operands);
    for (Py_ssize_t k = 0; k < noperands; k++) {
        PyObject *o = PyTuple_GET_ITEM(operands, k);
        Py_ssize_t n;
        if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) < 2 || ascii(PyTuple_GET_ITEM(o, 0), &n) == NULL)
            return 0;
        PyObject *i = PyTuple_GET_ITEM(o, 1);
        if (i != Py_None && !PyLong_CheckExact(i)) return 0;
    }

    /* attributes: none, or a tail with the splitter's spans (its text held until the end) */
    int rc = 0;
    PyObject *op = NULL, *hit = NULL, *text = NULL;
    if (PyTuple_Check(attributes) && PyTuple_GET_SIZE(attributes) == 0) {
        /* no attributes */
    } else if ((PyObject *)Py_TYPE(attributes) == st->lazy) {
        text = PyObject_GetAttr(attributes, s_text);
        if (text == NULL) return -1;
        tail = ascii(text, &tail_n);
        if (tail == NULL) goto out;
        count = read_spans(st, attributes, text, tail_n, st->items, MAX_ITEMS);
        if (count <= 0) {
            rc = count;
            goto out;
        }
        for (Py_ssize_t k = 1; k < count; k++) { /* a repeated key: the Python branch decides */
            const item_t *it = &st->items[k];
            Py_ssize_t klen = it->key_end - it->key;
            for (Py_ssize_t m = 0; m < k; m++)
                if (st->items[m].key_end - st->items[m].key == klen &&
                    memcmp(tail + st->items[m].key, tail + it->key, (size_t)klen) == 0)
                    goto out;
        }
    } else {
        return 0;
    }
    Py_ssize_t ncallees = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (!called_key(st, tail, &st->items[k])) continue;
        Py_ssize_t a, e;
        if (!callee(tail, &st->items[k], &a, &e)) goto out; /* `{...}` and the odd forms */
        ncallees++;
    }

    /* the fragments of the opcode and of the shape (model: _opcodes, _shapes by id) */
    op = PyDict_GetItemWithError(st->opcodes, opcode);
    if (op == NULL) {
        rc = PyErr_Occurred() ? -1 : 0;
        goto out;
    }
    Py_INCREF(op);
    PyObject *key = PyLong_FromVoidPtr(shape);
    if (key == NULL) {
        rc = -1;
        goto out;
    }
    hit = PyDict_GetItemWithError(st->shapes, key);
    Py_DECREF(key);
    if (hit == NULL) {
        rc = PyErr_Occurred() ? -1 : 0;
        goto out;
    }
    Py_INCREF(hit);
    const unsigned char *op_s = ascii(op, &op_n);
    if (op_s == NULL || !PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 4 || PyTuple_GET_ITEM(hit, 0) != shape)
        goto out;
    const unsigned char *shape_s = ascii(PyTuple_GET_ITEM(hit, 1), &shape_n);
    const unsigned char *figures_s = ascii(PyTuple_GET_ITEM(hit, is_root ? 3 : 2), &figures_n);
    if (shape_s == NULL || figures_s == NULL) goto out;

    /* everything read: write */
    rc = -1;
    Py_ssize_t mark = b->n;
    if (index > 0 && PUTF(F_SEPARATOR) < 0) goto undo;
    if (PUTF(F_HEAD) < 0 || put_quoted(b, name_s, name_n) < 0 || put(b, (const char *)op_s, op_n) < 0 ||
        put(b, (const char *)shape_s, shape_n) < 0)
        goto undo;
    if (noperands == 0) {
        if (put(b, "[]", 2) < 0) goto undo;
    } else {
        if (PUTF(F_OPEN_LIST) < 0) goto undo;
        for (Py_ssize_t k = 0; k < noperands; k++) {
            PyObject *o = PyTuple_GET_ITEM(operands, k), *i = PyTuple_GET_ITEM(o, 1);
            Py_ssize_t n;
            const unsigned char *s = ascii(PyTuple_GET_ITEM(o, 0), &n);
            if (k && PUTF(F_ITEM_SEP) < 0) goto undo;
            if (put_quoted(b, s, n) < 0) goto undo;
            if (i == Py_None) continue;
            /* f"{name}#{index}": the string reopened, `#` and the digits need no escape */
            b->n--;
            if (put(b, "#", 1) < 0 || put_int_repr(b, i) < 0 || put(b, "\"", 1) < 0) goto undo;
        }
        if (PUTF(F_CLOSE_LIST) < 0) goto undo;
    }
    if (put(b, (const char *)figures_s, figures_n) < 0) goto undo;
    if (inferred && PUTF(F_INFERRED) < 0) goto undo;
    if (number != Py_None && (PUTF(F_NUMBER) < 0 || put_int_repr(b, number) < 0)) goto undo;
    if (literal_s != NULL && (PUTF(F_LITERAL) < 0 || put_quoted(b, literal_s, literal_n) < 0)) goto undo;
    if (ncallees) {
        if (PUTF(F_CALLED) < 0) goto undo;
        Py_ssize_t written = 0;
        for (Py_ssize_t k = 0; k < count; k++) {
            Py_ssize_t a, e;
            if (!called_key(st, tail, &st->items[k]) || !callee(tail, &st->items[k], &a, &e)) continue;
            if (written++ && PUTF(F_ITEM_SEP) < 0) goto undo;
            if (put_quoted(b, tail + a, e - a) < 0) goto undo;
        }
        if (PUTF(F_CLOSE_LIST) < 0) goto undo;
    }
    if (count == 0) {
        if (PUTF(F_NO_ATTRIBUTES_END) < 0) goto undo;
    } else {
        if (PUTF(F_ATTRIBUTES_OPEN) < 0) goto undo;
        for (Py_ssize_t k = 0; k < count; k++) {
            const item_t *it = &st->items[k];
            if (k && put(b, ",", 1) < 0) goto undo;
            if (PUTF(F_ITEM) < 0 || put_quoted(b, tail + it->key, it->key_end - it->key) < 0 ||
                put(b, ": ", 2) < 0 || put_quoted(b, tail + it->value, it->value_end - it->value) < 0)
                goto undo;
        }
        if (PUTF(F_CLOSE_OBJECT_END) < 0) goto undo;
    }

    /* what the streamer gathers: (callee, opcode) of each call. On an error the list may hold
     * a part of this instruction's: the caller raises, and the document is abandoned. */
    if (st->calls != Py_None && ncallees) {
        for (Py_ssize_t k = 0; k < count; k++) {
            Py_ssize_t a, e;
            if (!called_key(st, tail, &st->items[k]) || !callee(tail, &st->items[k], &a, &e)) continue;
            PyObject *c = ascii_str(tail + a, e - a);
            PyObject *t = c == NULL ? NULL : PyTuple_Pack(2, c, opcode);
            Py_XDECREF(c);
            if (t == NULL || PyList_Append(st->calls, t) < 0) {
                Py_XDECREF(t);
                goto undo;
            }
            Py_DECREF(t);
        }
    }
    rc = 1;
    goto out;
undo:
    b->n = mark;
out:
    Py_XDECREF(op);
    Py_XDECREF(hit);
    Py_XDECREF(text);
    return rc;
}

/* The buffer of the last call, kept for the next (a batch's text is a few hundred KB: growing a
 * fresh one each time cost more than writing it); a call made while it is lent (re-entered from
 * a finalizer the garbage collector runs) takes a buffer of its own. */
static buf_t spare = {NULL, 0, 0};
static int spare_lent = 0;
#define SPARE_KEEP (8 << 20)

static PyObject *instructions(PyObject *self, PyObject *args) {
    PyObject *seq, *fragments, *called_keys, *prefix, *suffix;
    Py_ssize_t start, stop;
    state_t st;
    if (!PyArg_ParseTuple(args, "OnnO!O!OOO!O!OUU", &seq, &start, &stop, &PyDict_Type, &st.opcodes,
                          &PyDict_Type, &st.shapes, &st.lazy, &st.spans, &PyTuple_Type, &called_keys,
                          &PyTuple_Type, &fragments, &st.calls, &prefix, &suffix))
        return NULL;
    if (!PyTuple_Check(seq) && !PyList_Check(seq)) {
        PyErr_SetString(PyExc_TypeError, "instructions: a tuple or list");
        return NULL;
    }
    if (st.calls != Py_None && !PyList_Check(st.calls)) {
        PyErr_SetString(PyExc_TypeError, "instructions: calls is a list or None");
        return NULL;
    }
    if (!PyCallable_Check(st.spans)) {
        PyErr_SetString(PyExc_TypeError, "instructions: spans is the splitter (a callable)");
        return NULL;
    }
    if (PyTuple_GET_SIZE(fragments) != F_COUNT) {
        PyErr_Format(PyExc_ValueError, "instructions: %d fragments", F_COUNT);
        return NULL;
    }
    for (int k = 0; k < F_COUNT; k++) {
        const unsigned char *f = ascii(PyTuple_GET_ITEM(fragments, k), &st.fn[k]);
        if (f == NULL) {
            PyErr_SetString(PyExc_ValueError, "instructions: fragments are ASCII str");
            return NULL;
        }
        st.f[k] = (const char *)f;
    }
    st.ncalled = PyTuple_GET_SIZE(called_keys);
    if (st.ncalled > MAX_CALLED_KEYS) {
        PyErr_SetString(PyExc_ValueError, "instructions: too many called-computation keys");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < st.ncalled; k++) {
        st.called[k] = ascii(PyTuple_GET_ITEM(called_keys, k), &st.called_n[k]);
        if (st.called[k] == NULL) {
            PyErr_SetString(PyExc_ValueError, "instructions: keys are ASCII str");
            return NULL;
        }
    }
    Py_ssize_t prefix_n, suffix_n;
    const unsigned char *prefix_s = ascii(prefix, &prefix_n), *suffix_s = ascii(suffix, &suffix_n);
    if (suffix_s == NULL) {
        PyErr_SetString(PyExc_ValueError, "instructions: the suffix is ASCII");
        return NULL;
    }
    Py_ssize_t size = PySequence_Fast_GET_SIZE(seq);
    if (start < 0) start = 0;
    if (stop > size) stop = size;
    item_t items[MAX_ITEMS];
    st.items = items;
    buf_t b = {NULL, 0, 0};
    int lent = !spare_lent;
    if (lent) {
        b = spare;
        b.n = 0;
        spare_lent = 1;
    }
    Py_ssize_t k = start;
    PyObject *result = NULL, *text = NULL;
    /* a prefix of another kind (a computation's non-ASCII name) is joined to the text after */
    if (prefix_s != NULL && put(&b, (const char *)prefix_s, prefix_n) < 0) goto done;
    for (; k < stop; k++) {
        if (k >= PySequence_Fast_GET_SIZE(seq)) break; /* a list may shrink */
        PyObject *ins = PySequence_Fast_GET_ITEM(seq, k);
        Py_INCREF(ins);
        int rc = one(&st, &b, ins, k);
        Py_DECREF(ins);
        if (rc < 0) goto done;
        if (rc == 0) break;
    }
    if (k >= stop && put(&b, (const char *)suffix_s, suffix_n) < 0) goto done;
    text = PyUnicode_New(b.n, 127);
    if (text == NULL) goto done;
    if (b.n) memcpy(PyUnicode_1BYTE_DATA(text), b.p, (size_t)b.n);
    if (prefix_s == NULL) {
        PyObject *joined = PyUnicode_Concat(prefix, text);
        Py_SETREF(text, joined);
        if (text == NULL) goto done;
    }
    result = Py_BuildValue("Nn", text, k);
done:
    if (lent && b.cap <= SPARE_KEEP) {
        spare = b;
    } else {
        PyMem_Free(b.p);
        if (lent) spare = (buf_t){NULL, 0, 0};
    }
    if (lent) spare_lent = 0;
    return result;
}

static PyMethodDef methods[] = {
    {"instructions", instructions, METH_VARARGS,
     "instructions(seq, start, stop, opcodes, shapes, lazy_type, spans, called_keys, fragments, "
     "calls, prefix, suffix) -> (str, end): prefix, then seq[start:end] as InstructionText.add "
     "writes them, each after its separator, then suffix when end is stop; end is the first "
     "it leaves to the Python branch (or stop)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_hlo_layout_json", "InstructionText.add in C: a faster writer of its records.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__hlo_layout_json(void) {
    s_spans = PyUnicode_InternFromString("_spans");
    s_text = PyUnicode_InternFromString("_text");
    if (s_spans == NULL || s_text == NULL) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "ABI", ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
