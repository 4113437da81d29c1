/* accel/lexicon.h: HLO's token classes for the compiled scanner and JSON writer.
 *
 * Generated from hlo_layout/syntax/lexicon.py by `python -m hlo_layout.syntax.lexicon_files --write`: do not edit.
 * tests/syntax/test_lexicon.py fails when this file is stale.
 */
#ifndef HLO_LEXICON_H
#define HLO_LEXICON_H

#include <Python.h>

#define HLO_NAME_START 0x01 /* [A-Za-z0-9_.$] */
#define HLO_NAME_CHAR 0x02 /* [A-Za-z0-9_.$+\-] */
#define HLO_TYPE_START 0x04 /* [a-z] */
#define HLO_TYPE_CHAR 0x08 /* [a-z0-9] */
#define HLO_DIM_CHAR 0x10 /* [0-9,<=?] */
#define HLO_DIGIT 0x20 /* [0-9] */
#define HLO_BLANK 0x40 /* [ \t] */
#define HLO_LINE_BLANK 0x80 /* [ \t\f\r] */

/* The classes of each ASCII character (bits above); other characters are in none. */
static const unsigned char hlo_classes[128] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x80, 0x80, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xc0, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x10, 0x02, 0x03, 0x00,
    0x3b, 0x3b, 0x3b, 0x3b, 0x3b, 0x3b, 0x3b, 0x3b, 0x3b, 0x3b, 0x00, 0x00, 0x10, 0x10, 0x00, 0x10,
    0x00, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03,
    0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x03,
    0x00, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f,
    0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* Whether the character `c` is in every class of `classes`. */
static inline int hlo_is(Py_UCS4 c, int classes) {
    return c < 128 && (hlo_classes[c] & classes) == classes;
}

/* The end of the run of a name's characters (lexicon.NAME_RUN: `-?[NAME_START][NAME_CHAR]*`,
 * ended before a `-` that begins `->`) starting at p in the `n` characters of `kind`/`data` (a
 * str's), or -1. Every reader of a name here follows it with a character no name holds, so the
 * longest run is the regular expression's. */
static inline Py_ssize_t hlo_run_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t p) {
    if (p < 0)
        return -1;
    if (p < n && PyUnicode_READ(kind, data, p) == '-')
        p++;
    if (p >= n || !hlo_is(PyUnicode_READ(kind, data, p), HLO_NAME_START))
        return -1;
    for (p++; p < n; p++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, p);
        if (!hlo_is(c, HLO_NAME_CHAR) || (c == '-' && p + 1 < n &&
                                          PyUnicode_READ(kind, data, p + 1) == '>'))
            break;
    }
    return p;
}

/* The end of the bare name (lexicon.BARE_NAME) at p, or -1: a run that is no integer (digits
 * after an optional `-`, then no name character: a run of digits ends before `->` only). */
static inline Py_ssize_t hlo_name_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t p) {
    Py_ssize_t e = hlo_run_end(kind, data, n, p);
    if (e < 0)
        return -1;
    Py_ssize_t q = p < n && PyUnicode_READ(kind, data, p) == '-' ? p + 1 : p;
    while (q < e && hlo_is(PyUnicode_READ(kind, data, q), HLO_DIGIT))
        q++;
    if (q == e && (e >= n || PyUnicode_READ(kind, data, e) != '-'))
        return -1; /* an integer */
    return e;
}

#endif /* HLO_LEXICON_H */
