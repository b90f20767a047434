/*
 * arrow_cols.c - the columns of one Arrow batch (offset, and the data
 * column's ends and bytes), shared by the batch and every export of it:
 * their buffers, grown as records come and kept for the next batch once
 * released, and their export through the Arrow C data interface (schema,
 * array, capsules). reader_arrow.c fills them from a Reader.
 */
#include "arrow.h"
#include "llpy_io.h"
#include "module.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef _MSC_VER
#include <intrin.h>
#endif

#define FIRST_ROWS 256
#define FIRST_BYTES ((size_t)64 * 1024)
#define RESERVE_AT_ONCE ((size_t)16 << 20)
#define SPARE_MOST ((size_t)32 << 20) /* bytes of a batch's buffers kept */
#define SPARE_SETS 2                  /* released batches' buffers kept */

/* ---- the columns of one batch, shared by every export of it ----------- */

/* The columns of one batch. Released from any thread (an Arrow
 * consumer's), hence the atomic counts and the C allocator. */
struct arrow_cols {
    long refs;
    size_t n, cap_n, cap_off; /* rows: held, and room in ends and offsets */
    uint64_t *offsets;        /* the offset column */
    int64_t *ends;            /* large_binary offsets: n + 1 of them */
    uint8_t *data;
    size_t len, cap_len;
    size_t cap_limit;  /* grow data no further unless a record needs it (a
                          batch's max_bytes and a block), or 0 */
    size_t rows_limit; /* the most rows a batch holds, or 0 */
    unsigned types;    /* LLPY_COLS_*: ends are 32-bit once BINARY is set */
    cols_spare *spare; /* where they go when released, or NULL */
};

/* Where the module keeps the columns of released batches (SPARE_SETS) for
 * the next batches of any iterator: their pages are already in memory, where
 * fresh ones cost a page fault and zeroing each (bench/README.md, "The Arrow
 * rows"). Shared by the module, the iterators and every batch they made (one
 * reference each); columns larger than SPARE_MOST are not kept (a record
 * being assembled, or dropped, may have filled more than the batch holds). */
struct cols_spare {
    long refs;
    /* Two, as a for loop over batches holds one while the next fills:
     * each NULL or kept columns, swapped atomically. */
    struct arrow_cols *kept[SPARE_SETS];
};

static long atomic_add(long *v, long d) {
#ifdef _MSC_VER
    return _InterlockedExchangeAdd(v, d) + d;
#else
    return __atomic_add_fetch(v, d, __ATOMIC_ACQ_REL);
#endif
}

static arrow_cols *spare_swap(cols_spare *sp, int i, arrow_cols *c) {
#ifdef _MSC_VER
    return _InterlockedExchangePointer((void *volatile *)&sp->kept[i], c);
#else
    return __atomic_exchange_n(&sp->kept[i], c, __ATOMIC_ACQ_REL);
#endif
}

static void cols_ref(arrow_cols *c) { atomic_add(&c->refs, 1); }

static void cols_destroy(arrow_cols *c) {
    /* (pages.c: large buffers are mappings of their own) */
    llpy_pages_free(c->offsets, c->cap_off * sizeof *c->offsets);
    llpy_pages_free(c->ends, (c->cap_n + 1) * sizeof *c->ends);
    llpy_pages_free(c->data, c->cap_len);
    free(c);
}

void llpy_cols_spare_unref(cols_spare *sp) {
    if (atomic_add(&sp->refs, -1) > 0)
        return;
    for (int i = 0; i < SPARE_SETS; i++) {
        arrow_cols *kept = spare_swap(sp, i, NULL);
        if (kept != NULL)
            cols_destroy(kept);
    }
    free(sp);
}

void llpy_cols_unref(arrow_cols *c) {
    if (atomic_add(&c->refs, -1) > 0)
        return;
    cols_spare *sp = c->spare;
    if (sp == NULL) {
        cols_destroy(c);
        return;
    }
    c->spare = NULL; /* kept columns hold no reference to their keeper */
    if (c->cap_len + LLPY_COLS_ROW_BYTES * c->cap_n > SPARE_MOST) {
        cols_destroy(c);
        llpy_cols_spare_unref(sp);
        return;
    }
    /* (each set is in one place at a time: a slot, a batch or freed) */
    for (int i = 0; i < SPARE_SETS && c != NULL; i++)
        c = spare_swap(sp, i, c); /* the one pushed out goes on */
    if (c != NULL)
        cols_destroy(c);
    llpy_cols_spare_unref(sp);
}

cols_spare *llpy_cols_spare_new(void) {
    cols_spare *sp = calloc(1, sizeof *sp);
    if (sp == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    sp->refs = 1;
    return sp;
}

void llpy_cols_spare_ref(cols_spare *sp) { atomic_add(&sp->refs, 1); }

/* Empty columns (one reference) that go to sp when released (sp may be
 * NULL): sp's kept ones if any, else new; or NULL with MemoryError. */
arrow_cols *llpy_cols_new(cols_spare *sp) {
    arrow_cols *c = NULL;
    for (int i = 0; sp != NULL && i < SPARE_SETS && c == NULL; i++)
        c = spare_swap(sp, i, NULL);
    if (c != NULL) { /* cap_n, cap_len and the buffers stay */
        c->n = c->len = 0;
        c->types = 0;
    } else {
        c = calloc(1, sizeof *c);
        if (c != NULL) {
            c->ends = malloc(sizeof *c->ends);
            c->data = malloc(1); /* never NULL, even when empty */
            c->cap_len = 1;
        }
        if (c == NULL || c->ends == NULL || c->data == NULL) {
            if (c != NULL)
                cols_destroy(c);
            PyErr_NoMemory();
            return NULL;
        }
    }
    c->refs = 1;
    c->ends[0] = 0;
    c->spare = sp;
    if (sp != NULL)
        atomic_add(&sp->refs, 1);
    return c;
}

/* A column's new capacity: cap, grown by doubling, or instead the batch's
 * limit (0: none) when that holds `need` and doubling would pass it or it
 * is no more than `at_once`: a batch ends near its limit, and a small one
 * is better reserved at once than reached by copies (pages never written
 * cost no memory). */
static size_t cap_at_once(size_t cap, size_t need, size_t limit,
                          size_t at_once) {
    return limit > 0 && need <= limit && (cap > limit || limit <= at_once)
               ? limit
               : cap;
}

/* Room for one more row; 0, or -1 (no row more). */
static int cols_grow_rows(arrow_cols *c) {
    size_t cap = c->cap_n < FIRST_ROWS ? FIRST_ROWS : 2 * c->cap_n;
    cap = cap_at_once(cap, c->cap_n + 1, c->rows_limit,
                      RESERVE_AT_ONCE / sizeof *c->offsets);
    if (c->cap_off < cap) {
        uint64_t *offsets = llpy_pages_resize(
            c->offsets, c->cap_off * sizeof *offsets, cap * sizeof *offsets);
        if (offsets == NULL)
            return -1;
        c->offsets = offsets;
        c->cap_off = cap;
    }
    int64_t *ends = llpy_pages_resize(c->ends, (c->cap_n + 1) * sizeof *ends,
                                      (cap + 1) * sizeof *ends);
    if (ends == NULL)
        return -1;
    c->ends = ends;
    c->cap_n = cap;
    return 0;
}

/* Room for n more bytes of data; 0, or -1 (nothing changed). */
static int cols_grow_data(arrow_cols *c, size_t n) {
    size_t need = c->len + n,
           cap = c->cap_len < FIRST_BYTES ? FIRST_BYTES : c->cap_len;
    if (need < c->len)
        return -1; /* overflow */
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
    cap = cap_at_once(cap, need, c->cap_limit, RESERVE_AT_ONCE);
    uint8_t *data = llpy_pages_resize(c->data, c->cap_len, cap);
    if (data == NULL)
        return -1;
    c->data = data;
    c->cap_len = cap;
    return 0;
}

/* The reader's redirect (llpy_records_redirect): a fragmented record is
 * assembled at the end of the data, where it stays; len bytes of it are
 * there already, and move with the data when it grows. */
uint8_t *llpy_cols_reserve(void *ctx, size_t len, size_t need, size_t *cap) {
    arrow_cols *c = ctx;
    (void)len;
    if (need > c->cap_len - c->len && cols_grow_data(c, need) < 0)
        return NULL;
    *cap = c->cap_len - c->len;
    return c->data + c->len;
}

/* Appends one record (a fragmented one may be in its place already: see
 * llpy_cols_reserve); 0, or -1 with MemoryError. */
size_t llpy_cols_rows(const arrow_cols *c) { return c->n; }

size_t llpy_cols_data_len(const arrow_cols *c) { return c->len; }

size_t llpy_cols_nbytes(const arrow_cols *c) {
    return c->len + llpy_cols_row_bytes(c->types) * c->n;
}

unsigned llpy_cols_types(const arrow_cols *c) { return c->types; }

void llpy_cols_limit(arrow_cols *c, size_t max_records, size_t max_bytes,
                     size_t per_row) {
    c->cap_limit = max_bytes > SIZE_MAX - LLOG_BLOCK_SIZE
                       ? 0
                       : max_bytes + LLOG_BLOCK_SIZE;
    /* (every row takes per_row of max_bytes, the last one past it) */
    size_t rows = max_bytes / per_row + 1;
    c->rows_limit = rows < max_records ? rows : max_records;
}

int llpy_cols_room(const arrow_cols *c, size_t max_records, size_t max_bytes,
                   size_t per_row) {
    return c->n < max_records && c->len + per_row * c->n < max_bytes;
}

int llpy_cols_run_start(arrow_cols *c, size_t rows, size_t budget,
                        llog_run *run) {
    while (c->cap_n - c->n < rows)
        if (cols_grow_rows(c) < 0)
            return -1;
    if (c->cap_len - c->len < LLOG_BLOCK_SIZE &&
        cols_grow_data(c, LLOG_BLOCK_SIZE) < 0)
        return -1;
    *run = (llog_run){c->offsets,  c->ends, c->data, c->n,
                      c->n + rows, c->len,  budget};
    return 0;
}

void llpy_cols_run_end(arrow_cols *c, const llog_run *run) {
    c->n = run->n;
    c->len = run->data_len;
}

int llpy_cols_append(arrow_cols *c, const llog_event *ev) {
    int in_place = ev->len > 0 && ev->data == c->data + c->len;
    if ((c->n == c->cap_n && cols_grow_rows(c) < 0) ||
        (!in_place && ev->len > c->cap_len - c->len &&
         cols_grow_data(c, ev->len) < 0) ||
        c->len + ev->len > (size_t)INT64_MAX) {
        PyErr_NoMemory();
        return -1;
    }
    if (ev->len > 0 && !in_place)
        memcpy(c->data + c->len, ev->data, ev->len);
    c->len += ev->len;
    c->offsets[c->n] = ev->offset;
    c->n++;
    c->ends[c->n] = (int64_t)c->len;
    return 0;
}

/* Sets the batch's column types once it is full: a binary column's ends,
 * filled as 64-bit ones, are narrowed in place (each 32-bit end lies no
 * later than the 64-bit one it comes from, so a forward pass reads each
 * before it is overwritten). */
void llpy_cols_finish(arrow_cols *c, unsigned types) {
    c->types = types;
    if (!(types & LLPY_COLS_BINARY))
        return;
    uint8_t *bytes = (uint8_t *)c->ends; /* (memcpy: no aliasing rules) */
    for (size_t i = 0; i <= c->n; i++) {
        int64_t wide;
        memcpy(&wide, bytes + 8 * i, 8);
        int32_t narrow = (int32_t)wide;
        memcpy(bytes + 4 * i, &narrow, 4);
    }
}

/* ---- ArrowSchema: struct<offset: uint64|int64, data: large_binary|binary> */

typedef struct {
    struct ArrowSchema kids[2];
    struct ArrowSchema *ptrs[2];
} schema_priv;

static void schema_release_child(struct ArrowSchema *s) { s->release = NULL; }

static void schema_release(struct ArrowSchema *s) {
    schema_priv *p = s->private_data;
    for (int i = 0; i < 2; i++)
        if (p->kids[i].release != NULL)
            p->kids[i].release(&p->kids[i]);
    free(p);
    s->release = NULL;
}

static void schema_field(struct ArrowSchema *s, const char *format,
                         const char *name) {
    memset(s, 0, sizeof *s);
    s->format = format;
    s->name = name;
    s->release = schema_release_child;
}

/* Fills out with the batches' schema (types: LLPY_COLS_*); 0, or ENOMEM (no
 * exception). */
int llpy_cols_schema_export(struct ArrowSchema *out, unsigned types) {
    schema_priv *p = malloc(sizeof *p);
    if (p == NULL)
        return ENOMEM;
    schema_field(&p->kids[0], types & LLPY_COLS_INT64_OFFSETS ? "l" : "L",
                 "offset");
    schema_field(&p->kids[1], types & LLPY_COLS_BINARY ? "z" : "Z", "data");
    p->ptrs[0] = &p->kids[0];
    p->ptrs[1] = &p->kids[1];
    memset(out, 0, sizeof *out);
    out->format = "+s";
    out->name = "";
    out->n_children = 2;
    out->children = p->ptrs;
    out->release = schema_release;
    out->private_data = p;
    return 0;
}

/* ---- ArrowArray: the struct array and its two children ---------------- */

typedef struct {
    arrow_cols *cols;
    const void *buffers[3];
    struct ArrowArray *children[2];
} array_priv;

static void array_release_child(struct ArrowArray *a) {
    array_priv *p = a->private_data;
    llpy_cols_unref(p->cols);
    free(p);
    a->release = NULL;
}

static void array_release(struct ArrowArray *a) {
    array_priv *p = a->private_data;
    for (int i = 0; i < 2; i++) {
        if (p->children[i] != NULL && p->children[i]->release != NULL)
            p->children[i]->release(p->children[i]);
        free(p->children[i]);
    }
    array_release_child(a);
}

/* One array over cols (a reference taken), buffers given; 0 or -1. */
static int array_init(struct ArrowArray *a, arrow_cols *c, int n_buffers,
                      const void *b1, const void *b2) {
    array_priv *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -1;
    cols_ref(c);
    p->cols = c;
    p->buffers[1] = b1;
    p->buffers[2] = b2;
    memset(a, 0, sizeof *a);
    a->length = (int64_t)c->n;
    a->n_buffers = n_buffers;
    a->buffers = p->buffers;
    a->release = array_release_child;
    a->private_data = p;
    return 0;
}

/* Fills out with the batch as a struct array; 0, or ENOMEM. */
int llpy_cols_array_export(arrow_cols *c, struct ArrowArray *out) {
    if (array_init(out, c, 1, NULL, NULL) < 0)
        return ENOMEM;
    array_priv *p = out->private_data;
    out->release = array_release;
    out->n_children = 2;
    out->children = p->children;
    for (int i = 0; i < 2; i++) {
        p->children[i] = malloc(sizeof(struct ArrowArray));
        int rc = p->children[i] == NULL ? -1
                 : i == 0 ? array_init(p->children[i], c, 2, c->offsets, NULL)
                          : array_init(p->children[i], c, 3, c->ends, c->data);
        if (rc < 0) {
            free(p->children[i]);
            p->children[i] = NULL;
            array_release(out);
            return ENOMEM;
        }
    }
    return 0;
}

/* ---- capsules --------------------------------------------------------- */

static void schema_capsule_free(PyObject *capsule) {
    struct ArrowSchema *s = PyCapsule_GetPointer(capsule, "arrow_schema");
    if (s != NULL && s->release != NULL)
        s->release(s);
    free(s);
}

static void array_capsule_free(PyObject *capsule) {
    struct ArrowArray *a = PyCapsule_GetPointer(capsule, "arrow_array");
    if (a != NULL && a->release != NULL)
        a->release(a);
    free(a);
}

PyObject *llpy_cols_schema_capsule(unsigned types) {
    struct ArrowSchema *s = malloc(sizeof *s);
    if (s == NULL || llpy_cols_schema_export(s, types) != 0) {
        free(s);
        return PyErr_NoMemory();
    }
    PyObject *cap = PyCapsule_New(s, "arrow_schema", schema_capsule_free);
    if (cap == NULL) {
        s->release(s);
        free(s);
    }
    return cap;
}

PyObject *llpy_cols_array_capsule(arrow_cols *c) {
    struct ArrowArray *a = malloc(sizeof *a);
    if (a == NULL || llpy_cols_array_export(c, a) != 0) {
        free(a);
        return PyErr_NoMemory();
    }
    PyObject *cap = PyCapsule_New(a, "arrow_array", array_capsule_free);
    if (cap == NULL) {
        a->release(a);
        free(a);
    }
    return cap;
}
