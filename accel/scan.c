/* _hlo_layout_scan: the scanner's per-line loop over a computation's common lines, in C.
 *
 * Twin of the `_HEAD` branch of `hlo_layout/syntax/scan.py::_scan_lines` (the pure-Python code
 * stays the reference and the fallback). `run` frames each line exactly as the `_HEAD` regular
 * expression does and builds the same Instruction the Python builds, with the same memos. It
 * also takes the lines of older dumps whose operands carry their shapes (`add(f32[] %x, f32[]
 * %y)`), which the Python reads by `_slow_instruction` and `_shaped_operands`, and builds what
 * those build (see `shaped_read`). It
 * never decides a fallback: at the first line it does not take whole (no `_HEAD` match, a memo
 * callback that raises, a tail the grammar rejects, a literal or parameter number that is not a
 * word or integer), it stops and hands that line back, and the Python loop reads it again, so
 * every decline, error and position comes from the Python code.
 *
 * Hostile input: lines are read through bounds-checked accessors (any string kind), nothing
 * recurses, nothing is allocated from a size the text declares, every C-API result is checked.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "lexicon.h"

/* Interface version; hlo_layout/syntax/scan.py passes the same number to accel.load. */
#define SCAN_ABI 7

/* A value no character has: what `at` reads past either end of a line. */
#define END ((Py_UCS4)0x110000)

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t len;
} Text;

/* A view of a str object's characters (the caller has checked it is a str). */
static inline Text text_of(PyObject *s) {
    Text t = {PyUnicode_KIND(s), PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s)};
    return t;
}

/* `text_of(arg)` into `*t`, or 0 with a TypeError naming `usage` when `arg` is not a str. */
static int text_arg(PyObject *arg, const char *usage, Text *t) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, usage);
        return 0;
    }
    *t = text_of(arg);
    return 1;
}

static inline Py_UCS4 at(const Text *t, Py_ssize_t i) {
    return (i >= 0 && i < t->len) ? PyUnicode_READ(t->kind, t->data, i) : END;
}

/* The token classes of hlo_layout/syntax/lexicon.py (accel/lexicon.h is generated from it). */
static inline int is_blank(Py_UCS4 c) { return hlo_is(c, HLO_BLANK); }
static inline int is_digit(Py_UCS4 c) { return hlo_is(c, HLO_DIGIT); }
static inline int is_lower(Py_UCS4 c) { return hlo_is(c, HLO_TYPE_START); }

/* The end of the bare name (lexicon.BARE_NAME) starting at p, or -1. The regex can only take
 * the longest such name here: every use is followed by a character no name holds. */
static Py_ssize_t name_end(const Text *t, Py_ssize_t p) {
    return hlo_name_end(t->kind, t->data, t->len, p);
}

/* The end of a word-like literal (lexicon.NAME_RUN: a name or an integer) at p, or -1. */
static Py_ssize_t run_end(const Text *t, Py_ssize_t p) {
    return hlo_run_end(t->kind, t->data, t->len, p);
}

static inline Py_ssize_t skip_blanks(const Text *t, Py_ssize_t p) {
    while (is_blank(at(t, p)))
        p++;
    return p;
}

/* The end of the string token `"[^"\\\n]*(?:\\.[^"\\\n]*)*"` at p, or < 0: no token (the
 * tokenizer then passes over the quote, as `_TAIL_TOKEN.finditer` does), -2 at a line break,
 * NO_STRING at the end of the text. After NO_STRING no later quote begins a token either (a
 * quote the scan passed over was escaped, and the scan from it goes on as this one did), so the
 * callers stop asking: a text of many escaped quotes costs one scan, not one per quote. */
#define NO_STRING (-1)
static Py_ssize_t string_end(const Text *t, Py_ssize_t p) {
    for (Py_ssize_t q = p + 1;; q++) {
        Py_UCS4 c = at(t, q);
        if (c == END)
            return NO_STRING;
        if (c == '\n')
            return -2;
        if (c == '"')
            return q + 1;
        if (c == '\\') {
            c = at(t, q + 1);
            if (c == END)
                return NO_STRING;
            if (c == '\n')
                return -2;
            q++;
        }
    }
}

/* Where `_HEAD` puts its groups: 1 root (from start1, `root` when non-empty), 2 name, 3 shape,
 * 4 opcode, 5 operands (inner), 6 tail (to the end of the line). `shaped`: 1 the operands are
 * a list `shaped_read` takes instead (`count` of them), 2 a list with comments, read once they
 * are removed; inner1 is then the `)` that `_slow_instruction` finds. */
typedef struct {
    Py_ssize_t start1, name0, name1, shape0, shape1, op0, op1, inner0, inner1, tail0, count;
    int root, shaped;
} Head;

/* The end of an array shape `[a-z][a-z0-9]*\[[0-9,<=?]*\](?:\{[^{}]*\})?` at p, or -1. */
static Py_ssize_t array_end(const Text *t, Py_ssize_t p) {
    if (!is_lower(at(t, p)))
        return -1;
    p++;
    while (hlo_is(at(t, p), HLO_TYPE_CHAR))
        p++;
    if (at(t, p) != '[')
        return -1;
    p++;
    for (;;) {
        Py_UCS4 c = at(t, p);
        if (hlo_is(c, HLO_DIM_CHAR))
            p++;
        else
            break;
    }
    if (at(t, p) != ']')
        return -1;
    p++;
    if (at(t, p) == '{') {
        Py_ssize_t q = p + 1;
        for (;;) {
            Py_UCS4 c = at(t, q);
            if (c == END || c == '{' || c == '}')
                break;
            q++;
        }
        if (at(t, q) == '}')
            return q + 1;
        /* Without the layout the shape is followed by `{`, which nothing that follows takes. */
        return -1;
    }
    return p;
}

/* One operand of a shaped list: its shape [s0, s1), its name [n0, n1) (after a `%`), its end
 * (after `#N` when written) and where the next operand starts. */
typedef struct {
    Py_ssize_t s0, s1, n0, n1, end, next;
    int comma;
} ShapedOperand;

/* The end of the tuple shape at p, `_shape_at`'s: after the `)` matching its `(` (only
 * parentheses counted), or -1. */
static Py_ssize_t tuple_end(const Text *t, Py_ssize_t p) {
    Py_ssize_t depth = 0;
    for (;; p++) {
        Py_UCS4 c = at(t, p);
        if (c == END)
            return -1;
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            return p + 1;
    }
}

/* `_SHAPED_OPERAND.match(list, pos)` on the list `u` (a view that ends where the list does):
 * `[ \t]*(ARRAY)[ \t]+(NAME)(?:#([0-9]+))?[ \t]*(,|$)`, where ARRAY may also be a tuple shape
 * (`tuple_end`) in a list `shaped_read` reads as the general split. 1 with the parts in `o`, or
 * 0. Each part is decided by the next character (a name is taken whole, as no name character
 * may follow one), so one pass decides it; an array with a `<...>` layout gives 0 (the Python
 * reads it). */
static int shaped_operand(const Text *u, Py_ssize_t pos, ShapedOperand *o) {
    Py_ssize_t p = skip_blanks(u, pos);
    o->s0 = p;
    p = at(u, p) == '(' ? tuple_end(u, p) : array_end(u, p);
    if (p < 0 || !is_blank(at(u, p)))
        return 0;
    o->s1 = p;
    p = skip_blanks(u, p);
    if (at(u, p) == '%')
        p++;
    o->n0 = p;
    p = name_end(u, p);
    if (p < 0)
        return 0;
    o->n1 = p;
    if (at(u, p) == '#' && is_digit(at(u, p + 1))) {
        p++;
        while (is_digit(at(u, p)))
            p++;
    }
    o->end = p;
    p = skip_blanks(u, p);
    if (p == u->len) {
        o->comma = 0;
        o->next = p;
    } else if (at(u, p) == ',') {
        o->comma = 1;
        o->next = p + 1;
    } else {
        return 0;
    }
    return 1;
}

/* The `)` that `_slow_instruction` finds for the operand list opened at a (its `(` at a - 1):
 * the first `)`, or when a `(` comes before it, the `)` matching the opening one (only
 * parentheses counted, in comments too). -1 when there is none or a `"` comes first (the
 * Python's). `*comment`: whether the list holds a `/` `*`. */
static Py_ssize_t list_close(const Text *t, Py_ssize_t a, int *comment) {
    Py_ssize_t depth = 1;
    *comment = 0;
    for (Py_ssize_t p = a;; p++) {
        Py_UCS4 c = at(t, p);
        if (c == END || c == '"')
            return -1;
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            return p;
        else if (c == '/' && at(t, p + 1) == '*')
            *comment = 1;
    }
}

/* The number of operands of the list u[a:] (comments removed, `u` ends where it does) as
 * `_operands` reads it, or -1 where it reads no shaped list (or the Python must).
 *
 * A list without `(` and `"` goes to `_shaped_operands`, which takes it when every operand
 * matches `shaped_operand` and the last has no comma. A list with a `(` (a tuple shape, a tiled
 * layout) and a `[` is split at the commas outside brackets, after checking that they nest
 * (`_split_top`), and each piece read as a shape (an array, or a tuple up to its matching
 * parenthesis), blanks and a name: where the brackets nest, those pieces are the operands
 * `shaped_operand` reads one after the other (a shape's brackets close within it), so the same
 * reading serves both. */
static Py_ssize_t shaped_read(const Text *u, Py_ssize_t a) {
    int parens = 0, square = 0;
    for (Py_ssize_t i = a; i < u->len; i++) {
        Py_UCS4 c = at(u, i);
        if (c == '"')
            return -1;
        parens |= c == '(';
        square |= c == '[';
    }
    if (!square)
        return -1; /* `_operands` reads a list of bare names */
    if (parens) {
        /* `_split_top`: brackets of every kind nest; deeper than the stack, the Python's. */
        char stack[64];
        int top = 0;
        for (Py_ssize_t i = a; i < u->len; i++) {
            Py_UCS4 c = at(u, i);
            if (c == '(' || c == '[' || c == '{') {
                if (top == (int)sizeof stack)
                    return -1;
                stack[top++] = (char)c;
            } else if (c == ')' || c == ']' || c == '}') {
                char open = c == ')' ? '(' : c == ']' ? '[' : '{';
                if (top == 0 || stack[--top] != open)
                    return -1;
            }
        }
        if (top)
            return -1;
    }
    ShapedOperand o = {0};
    Py_ssize_t n = 0;
    for (Py_ssize_t pos = a; pos < u->len; pos = o.next, n++)
        if (!shaped_operand(u, pos, &o))
            return -1;
    return o.comma || n == 0 ? -1 : n;
}

/* `_FLAT_OPERANDS` from p: the position after it, or -1 when it does not match. */
static Py_ssize_t flat_operands(const Text *t, Py_ssize_t p) {
    p = skip_blanks(t, p);
    for (;;) {
        if (at(t, p) == '%')
            p++;
        p = run_end(t, p); /* a word: `operand_tuple` declines an integer where a name stands */
        if (p < 0)
            return -1;
        if (at(t, p) == '#' && is_digit(at(t, p + 1))) {
            p++;
            while (is_digit(at(t, p)))
                p++;
        }
        p = skip_blanks(t, p);
        if (at(t, p) != ',')
            return p;
        p = skip_blanks(t, p + 1);
    }
}

/* `_HEAD.match(line)`: 1 and the groups in `h`, or 0. The regex is deterministic on every
 * line (each optional part is decided by the next character), so one pass decides it. */
static int frame(const Text *t, Head *h) {
    Py_ssize_t p = skip_blanks(t, 0), q, e;
    h->start1 = p;
    h->root = h->shaped = 0;
    h->count = 0;
    if (at(t, p) == 'R' && at(t, p + 1) == 'O' && at(t, p + 2) == 'O' && at(t, p + 3) == 'T' &&
        is_blank(at(t, p + 4))) {
        /* `ROOT = ...` names an instruction ROOT; otherwise ROOT is the prefix (and if the line
         * then fails, the reading without the prefix fails too). */
        q = skip_blanks(t, p + 4);
        if (at(t, q) != '=') {
            h->root = 1;
            p = q;
        }
    }
    if (at(t, p) == '%')
        p++;
    h->name0 = p;
    e = name_end(t, p);
    if (e < 0)
        return 0;
    h->name1 = e;
    p = skip_blanks(t, e);
    if (at(t, p) != '=')
        return 0;
    p = skip_blanks(t, p + 1);
    h->shape0 = p;
    if (is_lower(at(t, p))) {
        p = array_end(t, p);
        if (p < 0)
            return 0;
    } else if (at(t, p) == '(') {
        /* A tuple: balanced parentheses at most three deep. */
        int depth = 0;
        for (;;) {
            Py_UCS4 c = at(t, p);
            if (c == END)
                return 0;
            p++;
            if (c == '(') {
                if (++depth > 3)
                    return 0;
            } else if (c == ')' && --depth == 0) {
                break;
            }
        }
    } else {
        return 0;
    }
    h->shape1 = p;
    if (!is_blank(at(t, p)))
        return 0;
    p = skip_blanks(t, p);
    h->op0 = p;
    e = name_end(t, p);
    if (e < 0 || at(t, e) != '(')
        return 0;
    h->op1 = e;
    h->inner0 = e + 1;
    q = flat_operands(t, e + 1);
    if (q < 0 || at(t, q) != ')') {
        q = skip_blanks(t, e + 1);
        if (at(t, q) != ')') {
            /* Not a `_HEAD` line: maybe `_slow_instruction`'s with a shaped list. A list with
             * comments is read once they are removed (`instruction`). */
            int comment;
            q = list_close(t, e + 1, &comment);
            if (q < 0)
                return 0;
            if (!comment) {
                Text u = *t; /* the list alone: the pattern sees nothing past it */
                u.len = q;
                h->count = shaped_read(&u, e + 1);
                if (h->count < 0)
                    return 0;
            }
            h->shaped = 1 + comment;
        }
    }
    h->inner1 = q;
    h->tail0 = q + 1;
    return 1;
}

static PyObject *read_signature(PyObject *text, PyObject *shapes, PyObject *shape_fn, PyObject *decl);

/* What `run` needs from the Python scanner, unpacked once per call. */
typedef struct {
    PyObject *source, *shapes, *opcodes, *operands, *tails;
    PyObject *shape_fn, *tail_kind_fn, *lazy, *split;
    PyTypeObject *instruction, *operand;
    PyObject *span, *decl, *computation;
    /* Slot offsets of Span (start, end, source) and LazyAttributes (_text, _offset, _split,
     * _items, _spans): both are plain slotted classes whose __init__ only stores its arguments, so
     * the objects are filled in place (a Python __init__ per line costs more than the line). */
    Py_ssize_t span_slots[3], lazy_slots[5];
} Ctx;

/* The offset of the object slot `name` of `type`, or -1 with TypeError. */
static Py_ssize_t slot_offset(PyObject *type, const char *name) {
    PyObject *d = PyObject_GetAttrString(type, name);
    if (d == NULL)
        return -1;
    Py_ssize_t off = -1;
    if (Py_IS_TYPE(d, &PyMemberDescr_Type) &&
        ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX)
        off = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    if (off < (Py_ssize_t)sizeof(PyObject))
        PyErr_Format(PyExc_TypeError, "run: %s is not an object slot", name);
    return off < (Py_ssize_t)sizeof(PyObject) ? -1 : off;
}

/* A new instance of the slotted class `type` with `n` slots set to `values` (stolen, even on
 * error), as its __init__ would set them. */
static PyObject *new_slotted(PyObject *type, const Py_ssize_t *offsets, PyObject **values, int n) {
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *o = NULL;
    for (int i = 0; i < n; i++)
        if (values[i] == NULL)
            goto fail;
    o = tp->tp_alloc(tp, 0);
    if (o == NULL)
        goto fail;
    for (int i = 0; i < n; i++)
        *(PyObject **)((char *)o + offsets[i]) = values[i];
    return o;
fail:
    for (int i = 0; i < n; i++)
        Py_XDECREF(values[i]);
    return NULL;
}

/* A tuple subclass instance holding `n` new references from `items` (stolen, even on error),
 * as `tuple.__new__(cls, items)` builds it. */
static PyObject *new_tuple(PyTypeObject *type, PyObject **items, Py_ssize_t n) {
    PyObject *o = type->tp_alloc(type, n);
    if (o == NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            Py_XDECREF(items[i]);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(o, i, items[i]);
    return o;
}

/* Operand(line[a:b], index, shape): `index` and `shape` stolen, NULL for None. New reference
 * or NULL. */
static PyObject *make_operand(Ctx *c, PyObject *line, Py_ssize_t a, Py_ssize_t b, PyObject *index,
                              PyObject *shape) {
    PyObject *items[3];
    items[0] = PyUnicode_Substring(line, a, b);
    if (items[0] == NULL) {
        Py_XDECREF(index);
        Py_XDECREF(shape);
        return NULL;
    }
    items[1] = index != NULL ? index : Py_NewRef(Py_None);
    items[2] = shape != NULL ? shape : Py_NewRef(Py_None);
    return new_tuple(c->operand, items, 3);
}

/* The Operand memoized under `key`: a new reference; NULL with no error set when there is none
 * yet, NULL with the error on failure. */
static PyObject *known_operand(Ctx *c, PyObject *key) {
    PyObject *op = PyDict_GetItemWithError(c->operands, key);
    if (op != NULL)
        Py_INCREF(op);
    return op;
}

/* Memoizes `op` (a new reference, or NULL: its making failed) under `key`: `op`, or NULL with
 * the error. */
static PyObject *remember_operand(Ctx *c, PyObject *key, PyObject *op) {
    if (op != NULL && PyDict_SetItem(c->operands, key, op) < 0)
        Py_CLEAR(op);
    return op;
}

/* int(line[a:b]) (digits), new reference or NULL with the error (int's digit limit). */
static PyObject *integer(PyObject *line, Py_ssize_t a, Py_ssize_t b) {
    PyObject *digits = PyUnicode_Substring(line, a, b);
    if (digits == NULL)
        return NULL;
    PyObject *value = PyLong_FromUnicodeObject(digits, 10);
    Py_DECREF(digits);
    return value;
}

/* The operands of `inner` (line[a:b], a valid flat operand list) as the Python builds them:
 * memoized in `operands` by the raw piece when any has `#N`, else by the bare name. */
static PyObject *operand_tuple(Ctx *c, PyObject *line, const Text *t, Py_ssize_t a, Py_ssize_t b) {
    int hashed = 0;
    Py_ssize_t count = 1;
    for (Py_ssize_t i = a; i < b; i++) {
        Py_UCS4 ch = at(t, i);
        if (ch == '#')
            hashed = 1;
        else if (ch == ',')
            count++;
    }
    PyObject *out = PyTuple_New(count);
    if (out == NULL)
        return NULL;
    Py_ssize_t p = a;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t piece_end = p;
        while (piece_end < b && at(t, piece_end) != ',')
            piece_end++;
        Py_ssize_t n0 = skip_blanks(t, p);
        if (at(t, n0) == '%')
            n0++;
        Py_ssize_t n1 = name_end(t, n0);
        if (n1 < 0 || n1 > piece_end) {
            /* an integer, no name: the caller declines the line, the Python declines it too */
            PyErr_SetString(PyExc_ValueError, "an operand that is no name");
            goto fail;
        }
        PyObject *key = hashed ? PyUnicode_Substring(line, p, piece_end)
                               : PyUnicode_Substring(line, n0, n1);
        if (key == NULL)
            goto fail;
        PyObject *op = known_operand(c, key);
        if (op == NULL && !PyErr_Occurred()) {
            PyObject *index = NULL;
            if (at(t, n1) == '#') {
                Py_ssize_t d = n1 + 1;
                while (is_digit(at(t, d)))
                    d++;
                index = integer(line, n1 + 1, d);
            }
            if (!PyErr_Occurred()) /* int's digit limit */
                op = remember_operand(c, key, make_operand(c, line, n0, n1, index, NULL));
        }
        Py_DECREF(key);
        if (op == NULL)
            goto fail;
        PyTuple_SET_ITEM(out, k, op);
        p = piece_end + 1;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}


/* Memo lookup `memo.get(key)`, else `memo[key] = fn(key)`. New reference or NULL. */
static PyObject *memo(PyObject *dict, PyObject *fn, PyObject *key) {
    PyObject *v = PyDict_GetItemWithError(dict, key);
    if (v != NULL)
        return Py_NewRef(v);
    if (PyErr_Occurred())
        return NULL;
    v = PyObject_CallOneArg(fn, key);
    if (v == NULL)
        return NULL;
    if (PyDict_SetItem(dict, key, v) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* The operands of the shaped list line[a:b] (`shaped_read` took it, `count` of them) as
 * `_shaped_operands` builds them: Operand(name, index, _shape(shape text)). Memoized in
 * `operands` by the operand's text from its shape to its name's end (which holds a `[`, so it is
 * no key of a flat list's operand); the shapes in `shapes`. New reference or NULL. */
static PyObject *shaped_tuple(Ctx *c, PyObject *line, const Text *t, Py_ssize_t a, Py_ssize_t b,
                              Py_ssize_t count) {
    Text u = *t;
    u.len = b;
    PyObject *out = PyTuple_New(count);
    if (out == NULL)
        return NULL;
    ShapedOperand o = {0};
    Py_ssize_t pos = a;
    for (Py_ssize_t k = 0; k < count; k++, pos = o.next) {
        if (!shaped_operand(&u, pos, &o)) {
            PyErr_SetString(PyExc_ValueError, "operand list changed under the scanner");
            goto fail;
        }
        PyObject *key = PyUnicode_Substring(line, o.s0, o.end);
        if (key == NULL)
            goto fail;
        PyObject *op = known_operand(c, key);
        if (op == NULL && !PyErr_Occurred()) {
            PyObject *shape = NULL, *index = NULL, *shape_text = PyUnicode_Substring(line, o.s0, o.s1);
            if (shape_text != NULL)
                shape = memo(c->shapes, c->shape_fn, shape_text);
            Py_XDECREF(shape_text);
            if (shape != NULL && o.end > o.n1) {
                index = integer(line, o.n1 + 1, o.end);
                if (index == NULL)
                    Py_CLEAR(shape);
            }
            if (shape != NULL)
                op = remember_operand(c, key, make_operand(c, line, o.n0, o.n1, index, shape));
        }
        Py_DECREF(key);
        if (op == NULL)
            goto fail;
        PyTuple_SET_ITEM(out, k, op);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* The operands of a list of bare names u (its comments taken out) as `_operands` reads it:
 * () when blank, else each comma-separated piece `[ \t]*(%?NAME)(?:#([0-9]+))?[ \t]*` gives
 * Operand(name, index); NULL (an error set) where a piece is no such thing (the Python declines
 * it too). New reference. */
static PyObject *bare_tuple(Ctx *c, PyObject *list, const Text *u) {
    Py_ssize_t count = 1, blank = 1;
    for (Py_ssize_t i = 0; i < u->len; i++) {
        Py_UCS4 ch = at(u, i);
        count += ch == ',';
        blank &= Py_UNICODE_ISSPACE(ch);
    }
    if (blank)
        return PyTuple_New(0);
    PyObject *out = PyTuple_New(count);
    if (out == NULL)
        return NULL;
    Py_ssize_t p = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t n0 = skip_blanks(u, p);
        if (at(u, n0) == '%')
            n0++;
        Py_ssize_t n1 = name_end(u, n0), e = n1;
        if (n1 < 0)
            goto fail;
        PyObject *index = NULL;
        if (at(u, e) == '#' && is_digit(at(u, e + 1))) {
            Py_ssize_t d = e + 1;
            while (is_digit(at(u, d)))
                d++;
            index = integer(list, e + 1, d);
            if (index == NULL)
                goto fail;
            e = d;
        }
        e = skip_blanks(u, e);
        if (e != u->len && at(u, e) != ',') {
            Py_XDECREF(index);
            goto fail;
        }
        PyObject *op = make_operand(c, list, n0, n1, index, NULL);
        if (op == NULL)
            goto fail;
        PyTuple_SET_ITEM(out, k, op);
        p = e + 1;
    }
    return out;
fail:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "not a list of names");
    Py_DECREF(out);
    return NULL;
}

/* The end of the comment `/\*.*?\*\/` that starts at p (before b), or -1 (unclosed). */
static Py_ssize_t comment_end(const Text *t, Py_ssize_t p, Py_ssize_t b) {
    for (Py_ssize_t q = p + 2; q + 1 < b; q++)
        if (at(t, q) == '*' && at(t, q + 1) == '/')
            return q + 2;
    return -1;
}

/* `_COMMENT.sub("", line[a:b])`: a new str, or NULL with the error. */
static PyObject *uncomment(PyObject *line, const Text *t, Py_ssize_t a, Py_ssize_t b) {
    PyObject *pieces = PyList_New(0), *out = NULL;
    if (pieces == NULL)
        return NULL;
    Py_ssize_t keep = a;
    for (Py_ssize_t p = a; p + 1 < b;) {
        if (at(t, p) != '/' || at(t, p + 1) != '*') {
            p++;
            continue;
        }
        Py_ssize_t q = comment_end(t, p, b);
        if (q < 0)
            break; /* no comment closes after this one: the rest stays */
        PyObject *piece = PyUnicode_Substring(line, keep, p);
        if (piece == NULL || PyList_Append(pieces, piece) < 0) {
            Py_XDECREF(piece);
            goto done;
        }
        Py_DECREF(piece);
        keep = p = q;
    }
    PyObject *piece = PyUnicode_Substring(line, keep, b);
    if (piece == NULL || PyList_Append(pieces, piece) < 0) {
        Py_XDECREF(piece);
        goto done;
    }
    Py_DECREF(piece);
    PyObject *empty = PyUnicode_New(0, 0);
    if (empty != NULL)
        out = PyUnicode_Join(empty, pieces);
    Py_XDECREF(empty);
done:
    Py_DECREF(pieces);
    return out;
}

/* Whether `_scan_lines` gives the line (a shaped one, framed from `start`) to
 * `_slow_instruction`: no `\r` inside its stripped text, no `/` `*` in `_COMMENT.sub("", line)`
 * (an unclosed comment, or one made by taking a comment out), and no `//` in
 * `_STRINGS.sub("", line)` (likewise). `*end`: the end of `line.rstrip(" \t\f\r")`. */
static int slow_line(const Text *t, Py_ssize_t start, Py_ssize_t *end) {
    Py_ssize_t e = t->len;
    for (;;) {
        Py_UCS4 c = at(t, e - 1);
        if (c == ' ' || c == '\t' || c == '\f' || c == '\r')
            e--;
        else
            break;
    }
    *end = e;
    /* `"\r" in stripped`, comments included: the Python asks before it looks for comments (a
     * test made inside the loop below skipped the characters of each comment it passed over). */
    for (Py_ssize_t p = start; p < e; p++)
        if (at(t, p) == '\r')
            return 0;
    Py_UCS4 last = 0; /* the last character `_COMMENT.sub` keeps */
    for (Py_ssize_t p = 0; p < t->len;) {
        Py_UCS4 c = at(t, p);
        if (c == '/' && at(t, p + 1) == '*') {
            p = comment_end(t, p, t->len);
            if (p < 0)
                return 0;
            continue;
        }
        if (c == '*' && last == '/')
            return 0;
        last = c;
        p++;
    }
    last = 0; /* the last character `_STRINGS.sub` keeps */
    int strings = 1; /* see NO_STRING */
    for (Py_ssize_t p = 0; p < t->len;) {
        Py_UCS4 c = at(t, p);
        if (c == '"' && strings) {
            Py_ssize_t q = string_end(t, p);
            if (q >= 0) {
                p = q;
                continue;
            }
            strings = q != NO_STRING;
        }
        if (c == '/' && last == '/')
            return 0;
        last = c;
        p++;
    }
    return 1;
}

/* The Instruction of one framed line (new reference), Py_None when the Python must read the
 * line (it declines it, or raises), or NULL on an error the Python would not meet. */
static PyObject *instruction(Ctx *c, PyObject *line, const Text *t, const Head *h,
                             Py_ssize_t line_offset) {
    PyObject *name = NULL, *shape_text = NULL, *shape = NULL, *opcode = NULL, *operands = NULL;
    PyObject *attrs = NULL, *literal = NULL, *number = NULL, *span = NULL, *tmp = NULL;
    PyObject *result = NULL;
    /* The span ends at the last token, as the grammar's: `line.rstrip(" \t\f\r")` */
    Py_ssize_t end = t->len;
    while (end > 0 && hlo_is(at(t, end - 1), HLO_LINE_BLANK))
        end--;
    if (h->shaped && !slow_line(t, h->start1, &end))
        return Py_NewRef(Py_None);

    shape_text = PyUnicode_Substring(line, h->shape0, h->shape1);
    if (shape_text == NULL)
        goto error;
    shape = memo(c->shapes, c->shape_fn, shape_text);
    if (shape == NULL)
        goto decline;
    tmp = PyUnicode_Substring(line, h->op0, h->op1);
    if (tmp == NULL)
        goto error;
    opcode = PyDict_SetDefault(c->opcodes, tmp, tmp);
    if (opcode == NULL)
        goto error;
    Py_INCREF(opcode);
    Py_CLEAR(tmp);

    Py_ssize_t a = skip_blanks(t, h->inner0), b = h->inner1;
    while (b > a && is_blank(at(t, b - 1)))
        b--;
    int constant = PyUnicode_CompareWithASCIIString(opcode, "constant") == 0;
    int parameter = !constant && PyUnicode_CompareWithASCIIString(opcode, "parameter") == 0;
    if (h->shaped) {
        /* `_slow_instruction` reads a constant's or a parameter's parentheses otherwise. */
        if (constant || parameter)
            goto decline;
        if (h->shaped == 2) {
            /* `_operands` reads the list with its comments taken out. */
            tmp = uncomment(line, t, h->inner0, h->inner1);
            if (tmp == NULL)
                goto error;
            Text u = text_of(tmp);
            int square = 0;
            for (Py_ssize_t i = 0; i < u.len && !square; i++)
                square = at(&u, i) == '[';
            if (!square) {
                /* a list of bare names, its `/\*index=N*\/` comments taken out */
                operands = bare_tuple(c, tmp, &u);
            } else {
                Py_ssize_t count = shaped_read(&u, 0);
                if (count < 0)
                    goto decline;
                operands = shaped_tuple(c, tmp, &u, 0, u.len, count);
            }
            Py_CLEAR(tmp);
        } else {
            operands = shaped_tuple(c, line, t, h->inner0, h->inner1, h->count);
        }
        if (operands == NULL)
            goto decline;
    } else if (constant) {
        /* _WORD_LITERAL.fullmatch(inner.strip(" \t")) */
        if (a == b || at(t, a) == '%' || run_end(t, a) != b)
            goto decline;
        literal = PyUnicode_Substring(line, a, b);
        if (literal == NULL)
            goto error;
    } else if (parameter) {
        /* _INT.fullmatch(...) then int(): -?[0-9]+ */
        Py_ssize_t d = a;
        if (at(t, d) == '-')
            d++;
        if (d == b)
            goto decline;
        for (; d < b; d++)
            if (!is_digit(at(t, d)))
                goto decline;
        tmp = PyUnicode_Substring(line, a, b);
        if (tmp == NULL)
            goto error;
        number = PyLong_FromUnicodeObject(tmp, 10);
        if (number == NULL)
            goto decline; /* int's digit limit: the Python raises it */
        Py_CLEAR(tmp);
    } else if (a < b) {
        operands = operand_tuple(c, line, t, h->inner0, h->inner1);
        if (operands == NULL)
            goto decline;
    }

    Py_ssize_t len = t->len;
    if (h->tail0 < len) {
        tmp = PyUnicode_Substring(line, h->tail0, len);
        if (tmp == NULL)
            goto error;
        PyObject *kind = memo(c->tails, c->tail_kind_fn, tmp);
        if (kind == NULL)
            goto decline;
        long k = PyLong_AsLong(kind);
        Py_DECREF(kind);
        if (k == -1 && PyErr_Occurred())
            goto error;
        if (k == 2 && h->shaped) {
            /* `_lazy_tail`: a tail of whitespace the grammar does not skip (\v, \x1c, ...) */
            Py_ssize_t i = h->tail0;
            while (i < len && Py_UNICODE_ISSPACE(at(t, i)))
                i++;
            if (i == len)
                goto decline;
        }
        if (k == 2) {
            PyObject *values[5] = {Py_NewRef(tmp), PyLong_FromSsize_t(line_offset + h->tail0),
                                   Py_NewRef(c->split), Py_NewRef(Py_None), Py_NewRef(Py_None)};
            attrs = new_slotted(c->lazy, c->lazy_slots, values, 5);
            if (attrs == NULL)
                goto error;
        } else if (k != 1) {
            goto decline;
        }
        Py_CLEAR(tmp);
    }

    name = PyUnicode_Substring(line, h->name0, h->name1);
    if (name == NULL)
        goto error;
    {
        PyObject *values[3] = {PyLong_FromSsize_t(line_offset + h->start1),
                               PyLong_FromSsize_t(line_offset + end), Py_NewRef(c->source)};
        span = new_slotted(c->span, c->span_slots, values, 3);
        if (span == NULL)
            goto error;
    }
    {
        PyObject *items[10] = {
            name,
            opcode,
            shape,
            operands ? operands : PyTuple_New(0),
            attrs ? attrs : PyTuple_New(0),
            Py_NewRef(h->root ? Py_True : Py_False),
            literal ? literal : Py_NewRef(Py_None),
            number ? number : Py_NewRef(Py_None),
            span,
            Py_NewRef(Py_False), /* shape_inferred: the scanner only reads written shapes */
        };
        name = opcode = shape = operands = attrs = literal = number = span = NULL;
        if (items[3] == NULL || items[4] == NULL) {
            for (int i = 0; i < 10; i++)
                Py_XDECREF(items[i]);
            goto error;
        }
        result = new_tuple(c->instruction, items, 10);
    }
    goto done;

decline:
    PyErr_Clear();
    result = Py_NewRef(Py_None);
    goto done;
error:
    result = NULL;
done:
    Py_XDECREF(name);
    Py_XDECREF(shape_text);
    Py_XDECREF(shape);
    Py_XDECREF(opcode);
    Py_XDECREF(operands);
    Py_XDECREF(attrs);
    Py_XDECREF(literal);
    Py_XDECREF(number);
    Py_XDECREF(span);
    Py_XDECREF(tmp);
    return result;
}

/* Whether the line is a computation's last: one `}` between blanks (`line.strip(" \t\f\r")`
 * is "}"), and in `*end` where its text ends (as the Python's span: `line.rstrip(...)`). */
static int closing_line(const Text *t, Py_ssize_t *end) {
    Py_ssize_t a = 0, b = t->len;
    while (a < b && hlo_is(at(t, a), HLO_LINE_BLANK))
        a++;
    while (b > a && hlo_is(at(t, b - 1), HLO_LINE_BLANK))
        b--;
    *end = b;
    return b == a + 1 && at(t, a) == '}';
}

/* Whether `_scan_lines` passes over the line between computations: blank, or a `//` comment. */
static int skipped_line(const Text *t) {
    Py_ssize_t a = 0;
    while (a < t->len && hlo_is(at(t, a), HLO_LINE_BLANK))
        a++;
    return a == t->len || (at(t, a) == '/' && at(t, a + 1) == '/');
}

/* `_COMP_HEAD.fullmatch(line)` and `_signature` of a plain computation header (`[ENTRY] %name
 * (params) -> shape {` or `[ENTRY] %name {`): 1 with the name (new), whether it is the entry,
 * its signature (new: `(params, result)` or None) and the column its text starts at; 0 where
 * the Python reads the line (anything else: a `\r`, a comment, a string, a header the C
 * signature reader does not take, an error it would raise); -1 on an error. */
static int header_line(Ctx *c, PyObject *line, const Text *t, PyObject **name, int *entry,
                       PyObject **sig, Py_ssize_t *column) {
    for (Py_ssize_t i = 0; i < t->len; i++) {
        Py_UCS4 ch = at(t, i);
        if (ch == '\r' || ch == '\f' || ch == '/' || ch == '"')
            return 0;
    }
    Py_ssize_t p = skip_blanks(t, 0), q, e;
    *column = p;
    *entry = 0;
    static const char module[] = "HloModule"; /* a module header: the Python's */
    Py_ssize_t k = 0;
    while (module[k] && at(t, p + k) == (Py_UCS4)module[k])
        k++;
    if (!module[k])
        return 0;
    if (at(t, p) == 'E' && at(t, p + 1) == 'N' && at(t, p + 2) == 'T' && at(t, p + 3) == 'R' &&
        at(t, p + 4) == 'Y' && is_blank(at(t, p + 5))) {
        q = skip_blanks(t, p + 5);
        if (at(t, q) == '%')
            q++;
        if (name_end(t, q) < 0)
            return 0; /* `ENTRY {`: the regex's other reading, the Python's */
        *entry = 1;
        p = q;
    } else if (at(t, p) == '%') {
        p++;
    }
    e = name_end(t, p);
    if (e < 0)
        return 0;
    Py_ssize_t name0 = p, name1 = e;
    p = skip_blanks(t, e);
    Py_ssize_t close = t->len;
    while (close > 0 && is_blank(at(t, close - 1)))
        close--;
    if (close == 0 || at(t, close - 1) != '{')
        return 0;
    close--; /* the `{` */
    *sig = NULL;
    if (at(t, p) == '(') {
        Py_ssize_t s1 = close;
        while (s1 > p && is_blank(at(t, s1 - 1)))
            s1--;
        PyObject *text = PyUnicode_Substring(line, p, s1);
        if (text == NULL)
            return -1;
        PyObject *found = read_signature(text, c->shapes, c->shape_fn, c->decl);
        Py_DECREF(text);
        if (found == NULL) {
            PyErr_Clear(); /* the Python raises it again, where it should */
            return 0;
        }
        if (found == Py_None) {
            Py_DECREF(found);
            return 0;
        }
        *sig = found;
    } else if (p != close) {
        return 0;
    }
    *name = PyUnicode_Substring(line, name0, name1);
    if (*name == NULL) {
        Py_XDECREF(*sig);
        return -1;
    }
    if (*sig == NULL)
        *sig = Py_NewRef(Py_None);
    return 1;
}

/* Append the Computation `_scan_lines` builds for a computation closed by a lone `}` (its
 * name, entry, signature and start in `head`, its text ending at `end`) to `items`: 0, or -1
 * with the error. */
static int close_computation(Ctx *c, PyObject *head, PyObject *instructions, Py_ssize_t end,
                             PyObject *items) {
    PyObject **h = &PyList_GET_ITEM(head, 0);
    Py_ssize_t start = PyLong_AsSsize_t(h[3]);
    if (start == -1 && PyErr_Occurred())
        return -1;
    PyObject *params = Py_None, *result = Py_None;
    if (h[2] != Py_None) {
        if (!PyTuple_Check(h[2]) || PyTuple_GET_SIZE(h[2]) != 2) {
            PyErr_SetString(PyExc_TypeError, "run: a signature is (parameters, result)");
            return -1;
        }
        params = PyTuple_GET_ITEM(h[2], 0);
        result = PyTuple_GET_ITEM(h[2], 1);
    }
    PyObject *values[3] = {PyLong_FromSsize_t(start), PyLong_FromSsize_t(end), Py_NewRef(c->source)};
    PyObject *span = new_slotted(c->span, c->span_slots, values, 3);
    PyObject *tuple = PyList_AsTuple(instructions);
    PyObject *empty = PyTuple_New(0);
    PyObject *computation = NULL;
    if (span != NULL && tuple != NULL && empty != NULL) {
        PyObject *args[8] = {h[0], tuple, PyObject_IsTrue(h[1]) ? Py_True : Py_False, params,
                             result, empty, Py_False, span};
        computation = PyObject_Vectorcall(c->computation, args, 8, NULL);
    }
    Py_XDECREF(span);
    Py_XDECREF(tuple);
    Py_XDECREF(empty);
    if (computation == NULL)
        return -1;
    int failed = PyList_Append(items, computation);
    Py_DECREF(computation);
    return failed;
}

PyDoc_STRVAR(run_doc,
             "run(lines, index, offset, instructions, ctx, head, items)\n"
             "    -> (index, offset, instructions | None)\n\n"
             "Append the Instruction of each line from lines[index] on (the first at offset) to\n"
             "instructions, as scan.py's _HEAD branch of _scan_lines builds it (and for a line\n"
             "whose operands carry their shapes, as _slow_instruction does). With `items` a\n"
             "list, a computation closed by a lone `}` is appended to it as _scan_lines builds\n"
             "it (its name, entry, signature, start and header line in the list `head`), and\n"
             "the plain header of the next one is read into `head` (its instructions in a new\n"
             "list). Stop at the first line it does not take whole and return that line's index\n"
             "and offset and the open computation's instructions (None: between computations).\n"
             "ctx is (source, shapes, opcodes, operand_cache, tails, shape_fn, tail_kind_fn,\n"
             "LazyAttributes, split, Instruction, Operand, Span, ParameterDecl, Computation).");

/* The slot offsets of the last Span and LazyAttributes classes `run` met (they are looked up
 * by name once, not per call: a call per computation). */
static PyObject *known_span, *known_lazy;
static Py_ssize_t known_span_slots[3], known_lazy_slots[5];

static int slots_of(Ctx *c) {
    static const char *span_names[3] = {"start", "end", "source"};
    static const char *lazy_names[5] = {"_text", "_offset", "_split", "_items", "_spans"};
    if (c->span != known_span) {
        for (int i = 0; i < 3; i++)
            if ((known_span_slots[i] = slot_offset(c->span, span_names[i])) < 0)
                return -1;
        Py_XSETREF(known_span, Py_NewRef(c->span));
    }
    if (c->lazy != known_lazy) {
        for (int i = 0; i < 5; i++)
            if ((known_lazy_slots[i] = slot_offset(c->lazy, lazy_names[i])) < 0)
                return -1;
        Py_XSETREF(known_lazy, Py_NewRef(c->lazy));
    }
    memcpy(c->span_slots, known_span_slots, sizeof known_span_slots);
    memcpy(c->lazy_slots, known_lazy_slots, sizeof known_lazy_slots);
    return 0;
}

static PyObject *run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7 || !PyList_Check(args[0]) || !PyList_Check(args[3]) ||
        !PyTuple_Check(args[4]) || PyTuple_GET_SIZE(args[4]) != 14 || !PyList_Check(args[5]) ||
        PyList_GET_SIZE(args[5]) != 5 || (args[6] != Py_None && !PyList_Check(args[6]))) {
        PyErr_SetString(PyExc_TypeError, "run(lines: list, index, offset, instructions: list, "
                                         "ctx: 14-tuple, head: 5-list, items: list | None)");
        return NULL;
    }
    PyObject *lines = args[0], *ctx = args[4], *head = args[5], *items = args[6];
    PyObject *instructions = Py_NewRef(args[3]);
    Py_ssize_t index = PyLong_AsSsize_t(args[1]);
    if (index == -1 && PyErr_Occurred())
        goto error;
    Py_ssize_t offset = PyLong_AsSsize_t(args[2]);
    if (offset == -1 && PyErr_Occurred())
        goto error;
    Ctx c;
    PyObject **f = &PyTuple_GET_ITEM(ctx, 0);
    c.source = f[0];
    c.shapes = f[1];
    c.opcodes = f[2];
    c.operands = f[3];
    c.tails = f[4];
    c.shape_fn = f[5];
    c.tail_kind_fn = f[6];
    c.lazy = f[7];
    c.split = f[8];
    c.span = f[11];
    c.decl = f[12];
    c.computation = f[13];
    if (!PyDict_CheckExact(c.shapes) || !PyDict_CheckExact(c.opcodes) ||
        !PyDict_CheckExact(c.operands) || !PyDict_CheckExact(c.tails) || !PyType_Check(f[9]) ||
        !PyType_Check(f[10]) || !PyType_IsSubtype((PyTypeObject *)f[9], &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)f[10], &PyTuple_Type) || !PyType_Check(c.decl) ||
        !PyCallable_Check(c.computation)) {
        PyErr_SetString(PyExc_TypeError, "run: ctx holds four dicts, two tuple types, classes");
        goto error;
    }
    if (!PyType_Check(c.span) || !PyType_Check(c.lazy)) {
        PyErr_SetString(PyExc_TypeError, "run: Span and LazyAttributes must be classes");
        goto error;
    }
    if (slots_of(&c) < 0)
        goto error;
    c.instruction = (PyTypeObject *)f[9];
    c.operand = (PyTypeObject *)f[10];
    if (index < 0)
        index = 0;
    for (;;) {
        /* the instruction lines of the open computation */
        while (index < PyList_GET_SIZE(lines)) {
            PyObject *line = PyList_GET_ITEM(lines, index);
            if (!PyUnicode_Check(line)) {
                PyErr_SetString(PyExc_TypeError, "run: lines must be strings");
                goto error;
            }
            Text t = text_of(line);
            Head h;
            if (!frame(&t, &h))
                break;
            Py_INCREF(line); /* the list may change under callbacks */
            PyObject *ins = instruction(&c, line, &t, &h, offset);
            Py_DECREF(line);
            if (ins == NULL)
                goto error;
            if (ins == Py_None) {
                Py_DECREF(ins);
                goto done;
            }
            int failed = PyList_Append(instructions, ins);
            Py_DECREF(ins);
            if (failed)
                goto error;
            offset += t.len + 1;
            index++;
        }
        if (items == Py_None || index >= PyList_GET_SIZE(lines))
            break;
        /* a lone `}`: the computation ends */
        PyObject *line = PyList_GET_ITEM(lines, index);
        if (!PyUnicode_Check(line))
            break;
        Text t = text_of(line);
        Py_ssize_t end;
        if (!closing_line(&t, &end))
            break;
        if (close_computation(&c, head, instructions, offset + end, items) < 0)
            goto error;
        Py_CLEAR(instructions);
        offset += t.len + 1;
        index++;
        /* blank lines, then the next plain header (else the Python reads on) */
        while (index < PyList_GET_SIZE(lines)) {
            line = PyList_GET_ITEM(lines, index);
            if (!PyUnicode_Check(line))
                goto done;
            t = text_of(line);
            if (!skipped_line(&t))
                break;
            offset += t.len + 1;
            index++;
        }
        if (index >= PyList_GET_SIZE(lines))
            goto done;
        PyObject *name, *sig;
        int entry;
        Py_ssize_t column;
        Py_INCREF(line);
        int found = header_line(&c, line, &t, &name, &entry, &sig, &column);
        Py_DECREF(line);
        if (found < 0)
            goto error;
        if (found == 0)
            goto done;
        PyObject *values[5] = {name, Py_NewRef(entry ? Py_True : Py_False), sig,
                               PyLong_FromSsize_t(offset + column), PyLong_FromSsize_t(index)};
        for (int i = 0; i < 5; i++) {
            if (values[i] == NULL) {
                for (int j = i; j < 5; j++)
                    Py_XDECREF(values[j]);
                goto error;
            }
            PyList_SetItem(head, i, values[i]); /* steals */
        }
        instructions = PyList_New(0);
        if (instructions == NULL)
            goto error;
        offset += t.len + 1;
        index++;
    }
done:;
    PyObject *out = Py_BuildValue("(nnO)", index, offset, instructions ? instructions : Py_None);
    Py_XDECREF(instructions);
    return out;
error:
    Py_XDECREF(instructions);
    return NULL;
}

/* The positions of the commas of `t` at bracket depth 0, outside strings (`"`...`"` as
 * string_end reads them), in `*commas` (PyMem, the caller frees it; NULL when there are none):
 * their count, -1 where the brackets do not match or nest (ScanFallback in the Python), -2 on
 * an error (set). */
static Py_ssize_t top_commas(const Text *t, Py_ssize_t **commas) {
    /* The open brackets and the commas, each grown on demand (bounded by the text's length). */
    Py_ssize_t cap = 64, depth = 0, ncap = 0, n = 0;
    char *stack = PyMem_Malloc(cap);
    *commas = NULL;
    if (stack == NULL) {
        PyErr_NoMemory();
        return -2;
    }
    int strings = 1; /* see NO_STRING */
    for (Py_ssize_t p = 0; p < t->len;) {
        Py_UCS4 c = at(t, p);
        if (c == '"') {
            Py_ssize_t e = strings ? string_end(t, p) : NO_STRING;
            strings = e != NO_STRING;
            p = e < 0 ? p + 1 : e;
            continue;
        }
        if (c == '{' || c == '(' || c == '[') {
            if (depth == cap) {
                char *grown = PyMem_Realloc(stack, cap * 2);
                if (grown == NULL)
                    goto error;
                stack = grown;
                cap *= 2;
            }
            stack[depth++] = (char)c;
        } else if (c == '}' || c == ')' || c == ']') {
            char open = c == '}' ? '{' : c == ')' ? '(' : '[';
            if (depth == 0 || stack[--depth] != open) {
                n = -1;
                break;
            }
        } else if (c == ',' && depth == 0) {
            if (n == ncap) {
                Py_ssize_t *grown = PyMem_Realloc(*commas, sizeof(Py_ssize_t) * (ncap ? 2 * ncap : 16));
                if (grown == NULL)
                    goto error;
                *commas = grown;
                ncap = ncap ? 2 * ncap : 16;
            }
            (*commas)[n++] = p;
        }
        p++;
    }
    PyMem_Free(stack);
    if (n >= 0 && depth)
        n = -1;
    return n;
error:
    PyMem_Free(stack);
    PyErr_NoMemory();
    return -2;
}

PyDoc_STRVAR(split_top_doc,
             "split_top(text) -> list[tuple[int, int]] | None\n\n"
             "scan.py's _split_top: (start, end) of each comma-separated piece at bracket depth\n"
             "0, strings respected; None where it raises ScanFallback (unbalanced brackets).");

static PyObject *split_top(PyObject *self, PyObject *arg) {
    (void)self;
    Text t;
    if (!text_arg(arg, "split_top(text: str)", &t))
        return NULL;
    Py_ssize_t *commas;
    Py_ssize_t n = top_commas(&t, &commas);
    if (n == -2)
        return NULL;
    if (n == -1) {
        PyMem_Free(commas);
        Py_RETURN_NONE;
    }
    PyObject *out = PyList_New(n + 1);
    for (Py_ssize_t k = 0; out != NULL && k <= n; k++) {
        PyObject *piece = Py_BuildValue("(nn)", k ? commas[k - 1] + 1 : 0, k < n ? commas[k] : t.len);
        if (piece == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, k, piece);
    }
    PyMem_Free(commas);
    return out;
}

PyDoc_STRVAR(attribute_spans_doc,
             "attribute_spans(tail) -> tuple[int, ...]\n\n"
             "scan.py's attribute_spans, the one attribute splitter: of a tail the grammar\n"
             "accepts (`, key=value, ...`), (key start, key end, value start, value end) of each\n"
             "attribute, flat, at the commas outside strings and brackets; each piece\n"
             "`[ \\t\\f\\r]*KEY[ \\t\\f\\r]*=[ \\t\\f\\r]*VALUE`, the value without its trailing\n"
             "blanks. () where the splitter does not follow the tail (the grammar splits it).");

static inline int line_blank(Py_UCS4 c) { return hlo_is(c, HLO_LINE_BLANK); }

static PyObject *attribute_spans(PyObject *self, PyObject *arg) {
    (void)self;
    Text t;
    if (!text_arg(arg, "attribute_spans(tail: str)", &t))
        return NULL;
    Py_ssize_t *commas;
    Py_ssize_t n = top_commas(&t, &commas);
    if (n == -2)
        return NULL;
    PyObject *out = NULL;
    if (n <= 0)
        goto declined;
    for (Py_ssize_t p = 0; p < commas[0]; p++)
        if (!line_blank(at(&t, p)))
            goto declined; /* text before the first comma */
    out = PyTuple_New(4 * n);
    if (out == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t b = k + 1 < n ? commas[k + 1] : t.len;
        Text piece = t; /* `_KEY.match(tail, a + 1, b)`: the key reader sees the piece alone */
        piece.len = b;
        Py_ssize_t k0 = commas[k] + 1;
        while (line_blank(at(&piece, k0)))
            k0++;
        Py_ssize_t k1 = name_end(&piece, k0), v0 = k1, v1 = b;
        if (k1 < 0)
            goto declined;
        while (line_blank(at(&piece, v0)))
            v0++;
        if (at(&piece, v0) != '=')
            goto declined;
        v0++;
        while (line_blank(at(&piece, v0)))
            v0++;
        while (v1 > v0 && line_blank(at(&piece, v1 - 1)))
            v1--;
        Py_ssize_t values[4] = {k0, k1, v0, v1};
        for (int i = 0; i < 4; i++) {
            PyObject *number = PyLong_FromSsize_t(values[i]);
            if (number == NULL) {
                Py_CLEAR(out);
                goto done;
            }
            PyTuple_SET_ITEM(out, 4 * k + i, number);
        }
    }
    goto done;
declined:
    Py_XDECREF(out);
    out = PyTuple_New(0);
done:
    PyMem_Free(commas);
    return out;
}

PyDoc_STRVAR(flat_params_doc,
             "flat_params(text, shapes, shape_fn, ParameterDecl) -> list | None\n\n"
             "scan.py's _flat_params: the parameters of a signature holding only array shapes\n"
             "(shapes memoized in `shapes` through `shape_fn`), None for any other text;\n"
             "what shape_fn raises propagates.");

/* flat_params on checked arguments: a new list, Py_None, or NULL with the error. */
static PyObject *read_flat_params(PyObject *text, PyObject *shapes, PyObject *shape_fn,
                                  PyObject *decl) {
    Py_ssize_t slots[2];
    if ((slots[0] = slot_offset(decl, "name")) < 0 || (slots[1] = slot_offset(decl, "shape")) < 0)
        return NULL;
    Text t = text_of(text);
    /* `not text or text.isspace()` */
    Py_ssize_t i = 0;
    while (i < t.len && Py_UNICODE_ISSPACE(at(&t, i)))
        i++;
    if (i == t.len)
        Py_RETURN_NONE;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = 0;
    while (pos < t.len) {
        /* [ \t]*%?(NAME)[ \t]*:[ \t]*(ARRAY)[ \t]*(?:,|$) */
        Py_ssize_t p = skip_blanks(&t, pos);
        if (at(&t, p) == '%')
            p++;
        Py_ssize_t n0 = p, n1 = name_end(&t, p);
        if (n1 < 0)
            goto none;
        p = skip_blanks(&t, n1);
        if (at(&t, p) != ':')
            goto none;
        Py_ssize_t s0 = skip_blanks(&t, p + 1), s1 = array_end(&t, s0);
        if (s1 < 0)
            goto none;
        p = skip_blanks(&t, s1);
        if (p == t.len) {
            pos = p;
        } else if (at(&t, p) == ',') {
            pos = p + 1;
            if (pos == t.len)
                goto none; /* a trailing comma: the general path decides */
        } else {
            goto none;
        }
        PyObject *shape_text = PyUnicode_Substring(text, s0, s1);
        if (shape_text == NULL)
            goto error;
        PyObject *shape = memo(shapes, shape_fn, shape_text);
        Py_DECREF(shape_text);
        if (shape == NULL)
            goto error;
        PyObject *values[2] = {PyUnicode_Substring(text, n0, n1), shape};
        PyObject *param = new_slotted(decl, slots, values, 2);
        if (param == NULL || PyList_Append(out, param) < 0) {
            Py_XDECREF(param);
            goto error;
        }
        Py_DECREF(param);
    }
    return out;
none:
    Py_DECREF(out);
    Py_RETURN_NONE;
error:
    Py_DECREF(out);
    return NULL;
}

PyDoc_STRVAR(skeleton_doc,
             "skeleton(tail) -> str | None\n\n"
             "scan.py's tail skeleton (NOTE: [tail skeletons]): every string `\"...\"` as `\"\"`,\n"
             "then every digit run as 0; None when the text with strings replaced holds a\n"
             "shape head (`_HAS_ARRAY`), which the Python path reads.");

static PyObject *skeleton(PyObject *self, PyObject *arg) {
    (void)self;
    Text t;
    if (!text_arg(arg, "skeleton(tail: str)", &t))
        return NULL;
    /* The output is never longer than the input: a string becomes two quotes, a digit run one
     * digit. One buffer of the input's kind holds both passes. */
    void *buf = PyMem_Malloc(t.len ? (size_t)t.len * (size_t)t.kind : 1);
    if (buf == NULL)
        return PyErr_NoMemory();
    Py_ssize_t n = 0;
    int strings = 1; /* see NO_STRING */
    for (Py_ssize_t p = 0; p < t.len;) {
        Py_UCS4 c = at(&t, p);
        if (c == '"' && strings) {
            Py_ssize_t e = string_end(&t, p);
            strings = e != NO_STRING;
            if (e >= 0) {
                PyUnicode_WRITE(t.kind, buf, n, '"');
                PyUnicode_WRITE(t.kind, buf, n + 1, '"');
                n += 2;
                p = e;
                continue;
            }
        }
        PyUnicode_WRITE(t.kind, buf, n, c);
        n++;
        p++;
    }
    /* _HAS_ARRAY: [a-z][0-9]*\[ anywhere in the strings-replaced text. */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyUnicode_READ(t.kind, buf, i) != '[')
            continue;
        Py_ssize_t j = i;
        while (j > 0 && is_digit(PyUnicode_READ(t.kind, buf, j - 1)))
            j--;
        if (j > 0 && is_lower(PyUnicode_READ(t.kind, buf, j - 1))) {
            PyMem_Free(buf);
            Py_RETURN_NONE;
        }
    }
    /* _DIGITS.sub("0", ...), in place. */
    Py_ssize_t m = 0;
    int in_run = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(t.kind, buf, i);
        int digit = is_digit(c);
        if (!(digit && in_run))
            PyUnicode_WRITE(t.kind, buf, m++, digit ? '0' : c);
        in_run = digit;
    }
    PyObject *out = PyUnicode_FromKindAndData(t.kind, buf, m);
    PyMem_Free(buf);
    return out;
}

static int params_args_ok(PyObject *const *args, Py_ssize_t nargs, const char *usage) {
    if (nargs != 4 || !PyUnicode_Check(args[0]) || !PyDict_CheckExact(args[1]) ||
        !PyType_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return 0;
    }
    return 1;
}

static PyObject *flat_params(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!params_args_ok(args, nargs,
                        "flat_params(text: str, shapes: dict, shape_fn, ParameterDecl: type)"))
        return NULL;
    return read_flat_params(args[0], args[1], args[2], args[3]);
}

PyDoc_STRVAR(signature_doc,
             "signature(text, shapes, shape_fn, ParameterDecl) -> (params, result) | None\n\n"
             "scan.py's _signature for the common signature: parameters of array shapes (or\n"
             "none) and an array or tuple result; None for any other text, which the Python\n"
             "reads. What shape_fn raises propagates, as from _signature.");

static PyObject *signature(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (!params_args_ok(args, nargs,
                        "signature(text: str, shapes: dict, shape_fn, ParameterDecl: type)"))
        return NULL;
    return read_signature(args[0], args[1], args[2], args[3]);
}

/* `signature` on checked arguments (`text` a str, `shapes` a dict, `decl` a type). */
static PyObject *read_signature(PyObject *text, PyObject *shapes, PyObject *shape_fn, PyObject *decl) {
    Text t = text_of(text);
    /* _SIGNATURE: \((.*)\)[ \t]*->[ \t]*(.*?)[ \t]*$ -- the greedy group ends at the last `)`
     * followed by blanks and `->`; `.` stops at a line break, which then declines. */
    if (at(&t, 0) != '(')
        Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < t.len; i++)
        if (at(&t, i) == '\n')
            Py_RETURN_NONE;
    Py_ssize_t close = -1, arrow = -1;
    for (Py_ssize_t i = t.len - 1; i >= 1 && close < 0; i--) {
        if (at(&t, i) != ')')
            continue;
        Py_ssize_t q = skip_blanks(&t, i + 1);
        if (at(&t, q) == '-' && at(&t, q + 1) == '>') {
            close = i;
            arrow = q + 2;
        }
    }
    if (close < 0)
        Py_RETURN_NONE;
    for (Py_ssize_t i = 1; i < close; i++)
        if (at(&t, i) == '(')
            Py_RETURN_NONE; /* tuples in the parameters: the general path */
    Py_ssize_t r0 = skip_blanks(&t, arrow), r1 = t.len;
    while (r1 > r0 && is_blank(at(&t, r1 - 1)))
        r1--;
    /* _shape_at: an array shape, or a tuple up to its matching parenthesis; either must end
     * the text. Anything else (`<...>` layouts, `b(` tuples) the Python reads. */
    if (at(&t, r0) == '(') {
        Py_ssize_t depth = 0, i = r0;
        for (; i < r1; i++) {
            Py_UCS4 c = at(&t, i);
            if (c == '(')
                depth++;
            else if (c == ')' && --depth == 0)
                break;
        }
        if (i != r1 - 1)
            Py_RETURN_NONE;
    } else if (array_end(&t, r0) != r1) {
        Py_RETURN_NONE;
    }
    PyObject *params_text = PyUnicode_Substring(text, 1, close);
    if (params_text == NULL)
        return NULL;
    PyObject *params = read_flat_params(params_text, shapes, shape_fn, decl);
    if (params == Py_None) {
        /* flat_params declines blank text, which `_signature` reads as no parameters. */
        Py_ssize_t k = 0, n = PyUnicode_GET_LENGTH(params_text);
        while (k < n && Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(params_text, k)))
            k++;
        Py_DECREF(params);
        params = k == n ? PyList_New(0) : Py_NewRef(Py_None);
    }
    Py_DECREF(params_text);
    if (params == NULL || params == Py_None)
        return params;
    PyObject *tuple = PyList_AsTuple(params);
    Py_DECREF(params);
    if (tuple == NULL)
        return NULL;
    PyObject *result_text = PyUnicode_Substring(text, r0, r1);
    if (result_text == NULL) {
        Py_DECREF(tuple);
        return NULL;
    }
    PyObject *result = PyObject_CallOneArg(shape_fn, result_text);
    Py_DECREF(result_text);
    if (result == NULL) {
        Py_DECREF(tuple);
        return NULL;
    }
    PyObject *out = PyTuple_Pack(2, tuple, result);
    Py_DECREF(tuple);
    Py_DECREF(result);
    return out;
}

static PyMethodDef methods[] = {
    {"signature", (PyCFunction)(void (*)(void))signature, METH_FASTCALL, signature_doc},
    {"skeleton", skeleton, METH_O, skeleton_doc},
    {"flat_params", (PyCFunction)(void (*)(void))flat_params, METH_FASTCALL, flat_params_doc},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, run_doc},
    {"split_top", split_top, METH_O, split_top_doc},
    {"attribute_spans", attribute_spans, METH_O, attribute_spans_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_hlo_layout_scan",
    "The scanner's per-line loop in C (hlo_layout/syntax/scan.py is the reference).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__hlo_layout_scan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "ABI", SCAN_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
