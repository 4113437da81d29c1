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

/* Whether committed chunk k meets the buffer in time (its windows win[0:nw]; s = win[0].lo):
 * an uncommitted position has end -1. */
static inline int hits(int64_t k, const int64_t *end_list, const int64_t *starts,
                       const pair_t *win, Py_ssize_t nw, int64_t s) {
    if (nw == 1) return end_list[k] >= s;
    for (Py_ssize_t i = 0; i < nw; i++)
        if (end_list[k] >= win[i].lo && starts[k] <= win[i].hi) return 1;
    return 0;
}

/* Inserts position k into the list l[0:*cnt] kept sorted by chunk[].lo (after equal offsets). */
static void enlist(int64_t *l, int64_t *cnt, int64_t k, const pair_t *chunk) {
    int64_t off = chunk[k].lo, lo = 0, hi = *cnt;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (off < chunk[l[mid]].lo) hi = mid;
        else lo = mid + 1;
    }
    memmove(l + lo + 1, l + lo, sizeof(int64_t) * (size_t)(*cnt - lo));
    l[lo] = k;
    ++*cnt;
}

/* Removes one occurrence of position k from the list l[0:*cnt]. */
static void unlist(int64_t *l, int64_t *cnt, int64_t k) {
    for (int64_t i = 0; i < *cnt; i++)
        if (l[i] == k) {
            memmove(l + i, l + i + 1, sizeof(int64_t) * (size_t)(*cnt - i - 1));
            --*cnt;
            return;
        }
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

    /* The committed positions alive at each checkpoint, kept sorted by chunk offset (`slist`,
     * laid out as aids: list c is slist[aptr[c], aptr[c] + scnt[c])), and each position's
     * checkpoints (CSR iptr/icp, the inverse of aptr/aids): a buffer's used chunks from its
     * checkpoint come out in offset order, and only those starting after it are sorted. */
    Py_ssize_t n_alive = a[7].n;
    int64_t *end_list = malloc(sizeof(int64_t) * (n ? n : 1));
    pair_t *chunk = malloc(sizeof(pair_t) * (n ? n : 1));
    pair_t *used = malloc(sizeof(pair_t) * (n ? n : 1));
    pair_t *merged = malloc(sizeof(pair_t) * (n + n_alive ? n + n_alive : 1));
    pair_t *win = malloc(sizeof(pair_t) * (a[2].n ? a[2].n : 1));
    int64_t *slist = malloc(sizeof(int64_t) * (n_alive ? n_alive : 1));
    int64_t *scnt = calloc(n_cp ? n_cp : 1, sizeof(int64_t));
    int64_t *iptr = calloc(n + 1, sizeof(int64_t));
    int64_t *icp = malloc(sizeof(int64_t) * (n_alive ? n_alive : 1));
    char *committed = calloc(n ? n : 1, 1);
    if (!end_list || !chunk || !used || !merged || !win || !slist || !scnt || !iptr || !icp ||
        !committed) {
        free(end_list), free(chunk), free(used), free(merged), free(win);
        free(slist), free(scnt), free(iptr), free(icp), free(committed);
        PyErr_NoMemory();
        goto fail;
    }
    int64_t heap = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++) end_list[k] = -1, chunk[k].lo = chunk[k].hi = 0;
    for (Py_ssize_t t = 0; t < n_alive; t++) iptr[aids[t] + 1]++;
    for (Py_ssize_t k = 0; k < n; k++) iptr[k + 1] += iptr[k];
    for (Py_ssize_t c = 0; c < n_cp; c++) /* icp: each position's checkpoints, ascending */
        for (int64_t t = aptr[c]; t < aptr[c + 1]; t++) icp[iptr[aids[t]]++] = c;
    for (Py_ssize_t k = n; k > 0; k--) iptr[k] = iptr[k - 1]; /* the fill moved each start */
    iptr[0] = 0;
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
        /* The used chunks that start after the checkpoint, sorted... */
        Py_ssize_t nu = 0;
        for (Py_ssize_t k = lo; k < p; k++)
            if (hits(k, end_list, starts, win, nw, s)) used[nu++] = chunk[k];
        sort_by_lo(used, nu);
        /* ...merged with those alive at it, in offset order already (as _find_chunk_sorted's
         * sort: the order among equal offsets does not change the gaps). */
        Py_ssize_t nm = 0, i = 0;
        if (cp >= 0 && cp < n_cp) { /* else: none, as in Python */
            const int64_t *l = slist + aptr[cp];
            for (int64_t x = 0; x < scnt[cp]; x++) {
                int64_t k = l[x];
                if (!hits(k, end_list, starts, win, nw, s)) continue;
                for (; i < nu && used[i].lo < chunk[k].lo; i++) merged[nm++] = used[i];
                merged[nm++] = chunk[k];
            }
        }
        for (; i < nu; i++) merged[nm++] = used[i];
        /* _find_chunk_sorted */
        int64_t best_len = -1, best_off = 0, cur = 0;
        for (Py_ssize_t i = 0; i < nm; i++) {
            int64_t gap = merged[i].lo - cur;
            if (gap >= max_size && (best_len < 0 || gap < best_len)) best_len = gap, best_off = cur;
            if (merged[i].hi > cur) cur = merged[i].hi;
        }
        int64_t offset = best_len >= 0 ? best_off : cur;
        for (int64_t m = g0; m < g1; m++) {
            int64_t k = gmem[m];
            if (committed[k]) /* committed again (a position in two groups): unlist it first */
                for (int64_t t = iptr[k]; t < iptr[k + 1]; t++)
                    unlist(slist + aptr[icp[t]], &scnt[icp[t]], k);
            committed[k] = 1;
            end_list[k] = ends[k];
            chunk[k].lo = offset;
            chunk[k].hi = round_up(offset + sizes[k], alignment);
            out[k] = offset;
            for (int64_t t = iptr[k]; t < iptr[k + 1]; t++)
                enlist(slist + aptr[icp[t]], &scnt[icp[t]], k, chunk);
        }
        if (offset + max_size > heap) heap = offset + max_size;
    }
    Py_END_ALLOW_THREADS
    free(end_list), free(chunk), free(used), free(merged), free(win);
    free(slist), free(scnt), free(iptr), free(icp), free(committed);
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
