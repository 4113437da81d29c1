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
 * are equal (tests/memory/test_heap_accel.py proves it on generated traces). One difference: the
 * Python loop sorts each buffer's used chunks by offset; here committed chunks are kept in lists
 * sorted by offset (per checkpoint and per block of starts, see pack), and a buffer's used
 * chunks are merged from a few of them.
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
    for (Py_ssize_t k = 1; k < n; k++)
        if (starts[k] < starts[k - 1]) {
            PyErr_SetString(PyExc_ValueError, "starts must be sorted");
            goto fail;
        }

    /* Committed chunks in lists kept sorted by offset, so that a buffer's used chunks come out
     * as a few sorted runs, merged instead of sorted:
     * - those alive at each checkpoint c: slist[aptr[c], aptr[c] + scnt[c]) (laid out as aids),
     *   with each position's checkpoints in CSR iptr/icp (the inverse of aptr/aids);
     * - those starting in each block (b * stride, (b + 1) * stride]: the positions of a block
     *   are a run in start order, [bfirst[i], bfirst[i + 1]) for the i-th block that has any
     *   (bid: each position's block number i); list i is blist[bfirst[i], + bcnt[i]).
     * A buffer's candidates [lo, p) start in blocks bid[lo] .. bid[p - 1], and lo begins its
     * block; the last block may hold positions past p (starting after e), filtered out. */
    Py_ssize_t n_alive = a[7].n;
    int64_t *end_list = malloc(sizeof(int64_t) * (n ? n : 1));
    pair_t *chunk = malloc(sizeof(pair_t) * (n ? n : 1));
    pair_t *used = malloc(sizeof(pair_t) * (n + n_alive ? n + n_alive : 1));
    pair_t *merged = malloc(sizeof(pair_t) * (n + n_alive ? n + n_alive : 1));
    pair_t *win = malloc(sizeof(pair_t) * (a[2].n ? a[2].n : 1));
    int64_t *slist = malloc(sizeof(int64_t) * (n_alive ? n_alive : 1));
    int64_t *scnt = calloc(n_cp ? n_cp : 1, sizeof(int64_t));
    int64_t *iptr = calloc(n + 1, sizeof(int64_t));
    int64_t *icp = malloc(sizeof(int64_t) * (n_alive ? n_alive : 1));
    char *committed = calloc(n ? n : 1, 1);
    int64_t *bid = malloc(sizeof(int64_t) * (n ? n : 1));
    int64_t *bfirst = malloc(sizeof(int64_t) * (n + 1));
    int64_t *bcnt = calloc(n ? n : 1, sizeof(int64_t));
    int64_t *blist = malloc(sizeof(int64_t) * (n ? n : 1));
    int64_t *runs = malloc(sizeof(int64_t) * (n + 3));
    if (!end_list || !chunk || !used || !merged || !win || !slist || !scnt || !iptr || !icp ||
        !committed || !bid || !bfirst || !bcnt || !blist || !runs) {
        free(end_list), free(chunk), free(used), free(merged), free(win);
        free(slist), free(scnt), free(iptr), free(icp), free(committed);
        free(bid), free(bfirst), free(bcnt), free(blist), free(runs);
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
    Py_ssize_t nb = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (k == 0 || floor_div(starts[k] - 1, stride) != floor_div(starts[k - 1] - 1, stride))
            bfirst[nb++] = k;
        bid[k] = nb - 1;
    }
    bfirst[nb] = n;
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
        /* The used chunks as sorted runs in `used` (run r: [runs[r], runs[r + 1])): those alive
         * at the checkpoint, then those of each block the buffer's span starts in. */
        Py_ssize_t nu = 0, nr = 0;
        runs[0] = 0;
        if (cp >= 0 && cp < n_cp) { /* else: none, as in Python */
            const int64_t *l = slist + aptr[cp];
            for (int64_t x = 0; x < scnt[cp]; x++)
                if (hits(l[x], end_list, starts, win, nw, s)) used[nu++] = chunk[l[x]];
            if (nu) runs[++nr] = nu;
        }
        if (p > lo)
            for (int64_t b = bid[lo]; b <= bid[p - 1]; b++) {
                const int64_t *l = blist + bfirst[b];
                for (int64_t x = 0; x < bcnt[b]; x++)
                    if (starts[l[x]] <= e && hits(l[x], end_list, starts, win, nw, s))
                        used[nu++] = chunk[l[x]];
                if (nu > runs[nr]) runs[++nr] = nu;
            }
        /* Merged pairwise, as a bottom-up merge sort (the order among equal offsets does not
         * change the gaps _find_chunk_sorted finds). */
        pair_t *src_ = used, *dst = merged;
        while (nr > 1) {
            Py_ssize_t out_r = 0;
            for (Py_ssize_t r = 0; r < nr; r += 2) {
                int64_t i = runs[r], i1 = runs[r + 1], w = runs[r];
                if (r + 1 < nr) {
                    int64_t j = runs[r + 1], j1 = runs[r + 2];
                    while (i < i1 && j < j1)
                        dst[w++] = src_[j].lo < src_[i].lo ? src_[j++] : src_[i++];
                    while (j < j1) dst[w++] = src_[j++];
                }
                while (i < i1) dst[w++] = src_[i++];
                runs[++out_r] = w;
            }
            nr = out_r;
            pair_t *t = src_;
            src_ = dst, dst = t;
        }
        /* _find_chunk_sorted */
        int64_t best_len = -1, best_off = 0, cur = 0;
        for (Py_ssize_t i = 0; i < nu; i++) {
            int64_t gap = src_[i].lo - cur;
            if (gap >= max_size && (best_len < 0 || gap < best_len)) best_len = gap, best_off = cur;
            if (src_[i].hi > cur) cur = src_[i].hi;
        }
        int64_t offset = best_len >= 0 ? best_off : cur;
        for (int64_t m = g0; m < g1; m++) {
            int64_t k = gmem[m];
            if (committed[k]) /* committed again (a position in two groups): unlist it first */
                {
                for (int64_t t = iptr[k]; t < iptr[k + 1]; t++)
                    unlist(slist + aptr[icp[t]], &scnt[icp[t]], k);
                unlist(blist + bfirst[bid[k]], &bcnt[bid[k]], k);
            }
            committed[k] = 1;
            end_list[k] = ends[k];
            chunk[k].lo = offset;
            chunk[k].hi = round_up(offset + sizes[k], alignment);
            out[k] = offset;
            for (int64_t t = iptr[k]; t < iptr[k + 1]; t++)
                enlist(slist + aptr[icp[t]], &scnt[icp[t]], k, chunk);
            enlist(blist + bfirst[bid[k]], &bcnt[bid[k]], k, chunk);
        }
        if (offset + max_size > heap) heap = offset + max_size;
    }
    Py_END_ALLOW_THREADS
    free(end_list), free(chunk), free(used), free(merged), free(win);
    free(slist), free(scnt), free(iptr), free(icp), free(committed);
    free(bid), free(bfirst), free(bcnt), free(blist), free(runs);
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
