/* _hlo_layout_heap: GlobalDecreasingSizeBestFitHeap's packing loop in C.
 *
 * The twin of hlo_layout/memory/heap_simulator.py `_Packer._pack_python` (the reference); the
 * caller (`_Packer._pack_compiled`) flattens the packer's index into int64 arrays:
 *
 *   pack(order, gptr, gmem, starts, ends, sizes, aptr, aids, stride, alignment, out) -> heap
 *
 *   order      leader numbers in packing order (spatial or temporal sort, done by the caller)
 *   gptr/gmem  CSR: the positions (index in start order) of leader j's colocation group
 *   starts     every interval's start, sorted; ends, sizes: per position
 *   aptr/aids  CSR: the positions alive at checkpoint c (time c * stride)
 *   out        int64[n], written: every position's offset
 *
 * Returns the heap size. Every step is the Python loop's, in the same order, so the offsets
 * are equal (tests/memory/test_heap_accel.py proves it on generated traces).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ABI 1

typedef struct {
    int64_t lo, hi;
} pair_t;

static int cmp_pair(const void *a, const void *b) {
    const pair_t *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
    return 0;
}

/* Sorts pairs by `lo` (the gap sweep needs no order among equal offsets): quicksort with
 * median-of-three pivots and insertion sort below 16, comparisons inline (qsort's calls through
 * a function pointer took 90 % of the packing). Recursion goes to the smaller side only. */
static void sort_by_lo(pair_t *a, Py_ssize_t n) {
    while (n > 16) {
        Py_ssize_t mid = n / 2, last = n - 1;
        pair_t t;
#define SWAP(i, j) (t = a[i], a[i] = a[j], a[j] = t)
        if (a[mid].lo < a[0].lo) SWAP(mid, 0);
        if (a[last].lo < a[0].lo) SWAP(last, 0);
        if (a[last].lo < a[mid].lo) SWAP(last, mid);
        int64_t pivot = a[mid].lo;
        Py_ssize_t i = 0, j = last;
        for (;;) {
            while (a[i].lo < pivot) i++;
            while (a[j].lo > pivot) j--;
            if (i >= j) break;
            SWAP(i, j);
            i++, j--;
        }
#undef SWAP
        /* [0, j] <= pivot <= [j + 1, n) */
        if (j + 1 < n - j - 1) {
            sort_by_lo(a, j + 1);
            a += j + 1, n -= j + 1;
        } else {
            sort_by_lo(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        pair_t x = a[i];
        Py_ssize_t j = i;
        for (; j > 0 && a[j - 1].lo > x.lo; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

/* bisect.bisect_right(a[0:n], x) */
static Py_ssize_t upper_bound(const int64_t *a, Py_ssize_t n, int64_t x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (x < a[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* Python's floor division for a positive divisor. */
static int64_t floor_div(int64_t x, int64_t d) {
    int64_t q = x / d;
    return (x % d != 0 && x < 0) ? q - 1 : q;
}

static int64_t round_up(int64_t x, int64_t a) { return -floor_div(-x, a) * a; }

typedef struct {
    Py_buffer b;
    const int64_t *p;
    Py_ssize_t n;
} arr_t;

static int get_arr(PyObject *o, arr_t *a, int writable, const char *what) {
    if (PyObject_GetBuffer(o, &a->b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                                         (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (a->b.itemsize != 8 || a->b.format == NULL || strchr("qlL", a->b.format[0]) == NULL) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int64 buffer", what);
        PyBuffer_Release(&a->b);
        return -1;
    }
    a->p = (const int64_t *)a->b.buf;
    a->n = a->b.len / 8;
    return 0;
}

static PyObject *pack(PyObject *self, PyObject *args) {
    PyObject *objs[9];
    long long stride, alignment;
    if (!PyArg_ParseTuple(args, "OOOOOOOOLLO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &objs[6], &objs[7], &stride, &alignment, &objs[8]))
        return NULL;
    static const char *names[9] = {"order", "gptr", "gmem", "starts", "ends",
                                   "sizes", "aptr", "aids", "out"};
    arr_t a[9];
    int got = 0;
    for (; got < 9; got++)
        if (get_arr(objs[got], &a[got], got == 8, names[got]) < 0) goto fail;
    if (stride <= 0 || alignment <= 0) {
        PyErr_SetString(PyExc_ValueError, "stride and alignment must be positive");
        goto fail;
    }
    const int64_t *order = a[0].p, *gptr = a[1].p, *gmem = a[2].p, *starts = a[3].p;
    const int64_t *ends = a[4].p, *sizes = a[5].p, *aptr = a[6].p, *aids = a[7].p;
    int64_t *out = (int64_t *)a[8].b.buf;
    Py_ssize_t n = a[3].n, n_leaders = a[1].n - 1, n_cp = a[6].n - 1;
    if (a[4].n != n || a[5].n != n || a[8].n != n || n_leaders < 0 || n_cp < 0) {
        PyErr_SetString(PyExc_ValueError, "array lengths disagree");
        goto fail;
    }
    for (Py_ssize_t j = 0; j < a[0].n; j++)
        if (order[j] < 0 || order[j] >= n_leaders) goto bad_index;
    for (Py_ssize_t j = 0; j <= n_leaders; j++)
        if (gptr[j] < 0 || gptr[j] > a[2].n || (j && gptr[j] < gptr[j - 1])) goto bad_index;
    for (Py_ssize_t j = 0; j < a[2].n; j++)
        if (gmem[j] < 0 || gmem[j] >= n) goto bad_index;
    for (Py_ssize_t j = 0; j <= n_cp; j++)
        if (aptr[j] < 0 || aptr[j] > a[7].n || (j && aptr[j] < aptr[j - 1])) goto bad_index;
    for (Py_ssize_t j = 0; j < a[7].n; j++)
        if (aids[j] < 0 || aids[j] >= n) goto bad_index;

    int64_t *end_list = malloc(sizeof(int64_t) * (n ? n : 1));
    pair_t *chunk = malloc(sizeof(pair_t) * (n ? n : 1));
    pair_t *used = malloc(sizeof(pair_t) * (n ? n : 1));
    pair_t *win = malloc(sizeof(pair_t) * (a[2].n ? a[2].n : 1));
    if (!end_list || !chunk || !used || !win) {
        free(end_list), free(chunk), free(used), free(win);
        PyErr_NoMemory();
        goto fail;
    }
    int64_t heap = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++) end_list[k] = -1;
    for (Py_ssize_t j = 0; j < a[0].n; j++) {
        int64_t g0 = gptr[order[j]], g1 = gptr[order[j] + 1];
        int64_t max_size = 0;
        Py_ssize_t nw = 0;
        for (int64_t m = g0; m < g1; m++) {
            int64_t k = gmem[m];
            if (m == g0 || sizes[k] > max_size) max_size = sizes[k];
            win[nw].lo = starts[k];
            win[nw].hi = ends[k];
            nw++;
        }
        if (nw > 1) { /* _windows: the union as disjoint [start, end] windows, in order */
            qsort(win, nw, sizeof(pair_t), cmp_pair);
            Py_ssize_t w = 0;
            for (Py_ssize_t i = 1; i < nw; i++) {
                if (win[i].lo <= win[w].hi + 1) {
                    if (win[i].hi > win[w].hi) win[w].hi = win[i].hi;
                } else {
                    win[++w] = win[i];
                }
            }
            nw = w + 1;
        }
        int64_t s = nw ? win[0].lo : 0, e = nw ? win[nw - 1].hi : -1;
        int64_t cp = floor_div(s, stride);
        Py_ssize_t lo = upper_bound(starts, n, cp * stride);
        Py_ssize_t p = upper_bound(starts, n, e);
        Py_ssize_t nu = 0;
        Py_ssize_t a0 = 0, a1 = 0;
        if (cp >= 0 && cp < n_cp) a0 = aptr[cp], a1 = aptr[cp + 1]; /* else: none, as in Python */
        for (Py_ssize_t t = a0; t < a1 + (p > lo ? p - lo : 0); t++) {
            int64_t k = t < a1 ? aids[t] : (int64_t)(lo + (t - a1));
            int hit = 0;
            if (nw == 1) {
                hit = end_list[k] >= s;
            } else {
                for (Py_ssize_t i = 0; i < nw && !hit; i++)
                    hit = end_list[k] >= win[i].lo && starts[k] <= win[i].hi;
            }
            if (hit) used[nu++] = chunk[k];
        }
        /* _find_chunk_sorted */
        sort_by_lo(used, nu);
        int64_t best_len = -1, best_off = 0, cur = 0;
        for (Py_ssize_t i = 0; i < nu; i++) {
            int64_t gap = used[i].lo - cur;
            if (gap >= max_size && (best_len < 0 || gap < best_len)) best_len = gap, best_off = cur;
            if (used[i].hi > cur) cur = used[i].hi;
        }
        int64_t offset = best_len >= 0 ? best_off : cur;
        for (int64_t m = g0; m < g1; m++) {
            int64_t k = gmem[m];
            end_list[k] = ends[k];
            chunk[k].lo = offset;
            chunk[k].hi = round_up(offset + sizes[k], alignment);
            out[k] = offset;
        }
        if (offset + max_size > heap) heap = offset + max_size;
    }
    Py_END_ALLOW_THREADS
    free(end_list), free(chunk), free(used), free(win);
    for (int i = 0; i < got; i++) PyBuffer_Release(&a[i].b);
    return PyLong_FromLongLong(heap);

bad_index:
    PyErr_SetString(PyExc_ValueError, "index out of range");
fail:
    for (int i = 0; i < got; i++) PyBuffer_Release(&a[i].b);
    return NULL;
}

static PyMethodDef methods[] = {
    {"pack", pack, METH_VARARGS,
     "pack(order, gptr, gmem, starts, ends, sizes, aptr, aids, stride, alignment, out) -> heap"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_hlo_layout_heap",
                                    "GlobalDecreasingSizeBestFitHeap's packing loop.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__hlo_layout_heap(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "ABI", ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
