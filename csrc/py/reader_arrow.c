/*
 * reader_arrow.c - a Reader's records as Arrow data (the Arrow C data and
 * C stream interfaces, arrow.h): Reader.iter_batches() yields Batch objects
 * (columns offset: uint64 or int64 and data: large_binary or binary, filled
 * from the core's payloads in one pass, no Python object per record), and
 * Reader.__arrow_c_stream__() hands the same batches to any consumer.
 * Records, corruptions, recovery modes and ranges are exactly those of
 * record-by-record iteration: both read through the same reader.
 */
#include "arrow.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "llpy_io.h"
#include "lock.h"
#include "module.h"
#include "reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef _MSC_VER
#include <intrin.h>
#endif

#define DEFAULT_MAX_RECORDS 65536
/* iter_batches() is mostly read by a loop that drops each batch: the two
 * batches' buffers it fills in turn (SPARE_SETS) then stay in the CPU's
 * caches, where larger ones are fetched from memory again each time
 * (bench/README.md, "Arrow batches from a file"). */
#define ITER_MAX_BYTES ((Py_ssize_t)1 << 20)
/* A stream is mostly read into a table that keeps every batch: buffers of
 * LLPY_PAGES_MIN and more come in huge pages, which fault in several times
 * faster (pages.c). */
#define STREAM_MAX_BYTES ((Py_ssize_t)4 << 20)
#define FIRST_ROWS 256
/* What a record adds to a batch besides its payload: its offset and the
 * end of its payload, 8 bytes each (4 for the end in a binary column; see
 * row_bytes). A batch's size (nbytes, max_bytes) is its payloads plus this
 * for each record, as pyarrow counts it. */
#define ROW_BYTES 16
/* The most payload bytes a binary column (32-bit offsets) holds. */
#define BINARY_MOST ((size_t)INT32_MAX)
#define FIRST_BYTES ((size_t)64 * 1024)
#define RESERVE_AT_ONCE ((size_t)16 << 20)
#define SPARE_MOST ((size_t)32 << 20) /* bytes of a batch's buffers kept */
#define SPARE_SETS 2                  /* released batches' buffers kept */

/* ---- the column types ------------------------------------------------- */

/* The types a batch's columns are exported in (iter_batches' offset_type
 * and data_type): bits of an unsigned. The offsets are the same bits
 * either way (file offsets stay far below 2**63); a binary column's ends
 * are narrowed to 32 bits once the batch is full (cols_finish). */
#define TYPE_INT64_OFFSETS 1u /* "l" instead of "L" */
#define TYPE_BINARY 2u        /* "z" instead of "Z" */

static size_t row_bytes(unsigned types) {
    return types & TYPE_BINARY ? 12 : ROW_BYTES;
}

/* ---- the columns of one batch, shared by every export of it ----------- */

/* Where the module keeps the columns of released batches (SPARE_SETS) for
 * the next batches of any iterator: their pages are already in memory, where
 * fresh ones cost a page fault and zeroing each (bench/README.md, "The Arrow
 * rows"). Shared by the module, the iterators and every batch they made (one
 * reference each); columns larger than SPARE_MOST are not kept (a record
 * being assembled, or dropped, may have filled more than the batch holds). */
typedef struct cols_spare {
    long refs;
    /* Two, as a for loop over batches holds one while the next fills:
     * each NULL or kept columns, swapped atomically. */
    struct arrow_cols *kept[SPARE_SETS];
} cols_spare;

/* Released from any thread (an Arrow consumer's), hence the atomic counts
 * and the C allocator. */
typedef struct arrow_cols {
    long refs;
    size_t n, cap_n, cap_off; /* rows: held, and room in ends and offsets */
    uint64_t *offsets;        /* the offset column */
    int64_t *ends;            /* large_binary offsets: n + 1 of them */
    uint8_t *data;
    size_t len, cap_len;
    size_t cap_limit;  /* grow data no further unless a record needs it (a
                          batch's max_bytes and a block), or 0 */
    size_t rows_limit; /* the most rows a batch holds, or 0 */
    unsigned types;    /* TYPE_*: ends are 32-bit once TYPE_BINARY is set */
    cols_spare *spare; /* where they go when released, or NULL */
} arrow_cols;

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

static void spare_unref(cols_spare *sp) {
    if (atomic_add(&sp->refs, -1) > 0)
        return;
    for (int i = 0; i < SPARE_SETS; i++) {
        arrow_cols *kept = spare_swap(sp, i, NULL);
        if (kept != NULL)
            cols_destroy(kept);
    }
    free(sp);
}

static void cols_unref(arrow_cols *c) {
    if (atomic_add(&c->refs, -1) > 0)
        return;
    cols_spare *sp = c->spare;
    if (sp == NULL) {
        cols_destroy(c);
        return;
    }
    c->spare = NULL; /* kept columns hold no reference to their keeper */
    if (c->cap_len + ROW_BYTES * c->cap_n > SPARE_MOST) {
        cols_destroy(c);
        spare_unref(sp);
        return;
    }
    /* (each set is in one place at a time: a slot, a batch or freed) */
    for (int i = 0; i < SPARE_SETS && c != NULL; i++)
        c = spare_swap(sp, i, c); /* the one pushed out goes on */
    if (c != NULL)
        cols_destroy(c);
    spare_unref(sp);
}

/* Empty columns (one reference) that go to sp when released (sp may be
 * NULL): sp's kept ones if any, else new; or NULL with MemoryError. */
static arrow_cols *cols_new(cols_spare *sp) {
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

/* The reader's redirect (llpy_reader_redirect): a fragmented record is
 * assembled at the end of the data, where it stays; len bytes of it are
 * there already, and move with the data when it grows. */
static uint8_t *cols_reserve(void *ctx, size_t len, size_t need, size_t *cap) {
    arrow_cols *c = ctx;
    (void)len;
    if (need > c->cap_len - c->len && cols_grow_data(c, need) < 0)
        return NULL;
    *cap = c->cap_len - c->len;
    return c->data + c->len;
}

/* Appends one record (a fragmented one may be in its place already: see
 * cols_reserve); 0, or -1 with MemoryError. */
static int cols_append(arrow_cols *c, const llog_event *ev) {
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
static void cols_finish(arrow_cols *c, unsigned types) {
    c->types = types;
    if (!(types & TYPE_BINARY))
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

/* Fills out with the batches' schema (types: TYPE_*); 0, or ENOMEM (no
 * exception). */
static int schema_export(struct ArrowSchema *out, unsigned types) {
    schema_priv *p = malloc(sizeof *p);
    if (p == NULL)
        return ENOMEM;
    schema_field(&p->kids[0], types & TYPE_INT64_OFFSETS ? "l" : "L",
                 "offset");
    schema_field(&p->kids[1], types & TYPE_BINARY ? "z" : "Z", "data");
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
    cols_unref(p->cols);
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
static int array_export(arrow_cols *c, struct ArrowArray *out) {
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

static PyObject *schema_capsule(unsigned types) {
    struct ArrowSchema *s = malloc(sizeof *s);
    if (s == NULL || schema_export(s, types) != 0) {
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

static PyObject *array_capsule(arrow_cols *c) {
    struct ArrowArray *a = malloc(sizeof *a);
    if (a == NULL || array_export(c, a) != 0) {
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

/* ---- Batch ------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD arrow_cols *cols;
} batch_object;

static PyObject *batch_new(PyTypeObject *type, arrow_cols *c) {
    batch_object *b = PyObject_New(batch_object, type);
    if (b == NULL) {
        cols_unref(c);
        return NULL;
    }
    b->cols = c; /* the reference passes to it */
    return (PyObject *)b;
}

static void Batch_dealloc(PyObject *op) {
    PyTypeObject *tp = Py_TYPE(op);
    cols_unref(((batch_object *)op)->cols);
    PyObject_Free(op);
    Py_DECREF(tp);
}

static Py_ssize_t Batch_len(PyObject *op) {
    return (Py_ssize_t)((batch_object *)op)->cols->n;
}

static PyObject *Batch_nbytes(PyObject *op, void *closure) {
    (void)closure;
    arrow_cols *c = ((batch_object *)op)->cols;
    return PyLong_FromSize_t(c->len + row_bytes(c->types) * c->n);
}

/* A child of a requested schema: named name, of format a or b (1 for b);
 * or -1. */
static int requested_child(const struct ArrowSchema *s, const char *name,
                           const char *a, const char *b) {
    if (s == NULL || s->format == NULL || s->name == NULL ||
        s->n_children != 0 || s->dictionary != NULL ||
        strcmp(s->name, name) != 0)
        return -1;
    return strcmp(s->format, a) == 0 ? 0 : strcmp(s->format, b) == 0 ? 1 : -1;
}

/* The column types a requested schema (an "arrow_schema" capsule) asks
 * for when it is one this exports: struct<offset: uint64 or int64, data:
 * large_binary or binary> (flags and metadata aside); else `types`, as the
 * protocol lets a producer ignore the request (best effort). */
static unsigned requested_types(PyObject *requested, unsigned types) {
    if (!PyCapsule_IsValid(requested, "arrow_schema"))
        return types;
    const struct ArrowSchema *s =
        PyCapsule_GetPointer(requested, "arrow_schema");
    if (s->release == NULL || s->format == NULL ||
        strcmp(s->format, "+s") != 0 || s->n_children != 2 ||
        s->children == NULL || s->dictionary != NULL)
        return types;
    int off = requested_child(s->children[0], "offset", "L", "l");
    int data = requested_child(s->children[1], "data", "Z", "z");
    if (off < 0 || data < 0)
        return types;
    return (off ? TYPE_INT64_OFFSETS : 0) | (data ? TYPE_BINARY : 0);
}

/* requested_schema, the one argument of the protocol's methods (None when
 * not given, borrowed), by each method's own parameter list; 0, or -1 with
 * an exception set. */
static int parse_requested(PyObject *args, PyObject *kwds, const char *format,
                           char **kwlist, PyObject **requested) {
    *requested = Py_None;
    return PyArg_ParseTupleAndKeywords(args, kwds, format, kwlist, requested)
               ? 0
               : -1;
}

static PyObject *Batch_arrow_array(PyObject *op, PyObject *args,
                                   PyObject *kwds) {
    static char *kwlist[] = LLPY_KWLIST_Batch___arrow_c_array__;
    PyObject *requested;
    /* (a batch's columns keep the types it was made in: the request is
     * ignored, as the protocol allows) */
    if (parse_requested(args, kwds, LLPY_FORMAT_Batch___arrow_c_array__("O"),
                        kwlist, &requested) < 0)
        return NULL;
    PyObject *schema = schema_capsule(((batch_object *)op)->cols->types);
    PyObject *array =
        schema ? array_capsule(((batch_object *)op)->cols) : NULL;
    PyObject *pair = array ? PyTuple_Pack(2, schema, array) : NULL;
    Py_XDECREF(schema);
    Py_XDECREF(array);
    return pair;
}

static PyObject *Batch_arrow_schema(PyObject *op, PyObject *unused) {
    (void)unused;
    return schema_capsule(((batch_object *)op)->cols->types);
}

static PyMethodDef Batch_methods[] = {
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))Batch_arrow_array,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC_Batch___arrow_c_array__},
    {"__arrow_c_schema__", Batch_arrow_schema, METH_NOARGS,
     LLPY_DOC_Batch___arrow_c_schema__},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Batch_getset[] = {
    {"nbytes", Batch_nbytes, NULL, LLPY_DOC_Batch_nbytes, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(Batch_doc, LLPY_DOC_Batch);

static PyType_Slot Batch_slots[] = {
    {Py_tp_doc, (void *)Batch_doc}, {Py_tp_dealloc, Batch_dealloc},
    {Py_tp_methods, Batch_methods}, {Py_tp_getset, Batch_getset},
    {Py_sq_length, Batch_len},      {0, NULL}};

static PyType_Spec Batch_spec = {
    .name = "leveldb_log.Batch",
    .basicsize = sizeof(batch_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Batch_slots,
};

/* ---- the batch iterator ----------------------------------------------- */

typedef struct {
    PyObject_HEAD PyObject *reader;
    llpy_lock lock;
    size_t max_records, max_bytes;
    unsigned types;    /* of the batches' columns: TYPE_* */
    arrow_cols *carry; /* a record read that begins the next batch, or NULL */
    PyObject *pending; /* an exception raised after a batch's records */
    PyTypeObject *batch_type;
    cols_spare *spare; /* a released batch's columns, for the next */
} batches_object;

/* The most records a run may take: the core counts payload bytes only, so
 * it is given max_bytes less row_bytes for as many records as it may take
 * (less than a batch's last 8 KiB then go record by record). A binary
 * column's run ends a block short of BINARY_MOST (a run's records each lie
 * in one block), past which records go one by one (batches_hold). */
#define RUN_ROWS 512

/* Appends the run of whole records the core reads at once, if any: the
 * count, 0 (none: the general path goes on), or -1 with MemoryError. */
static int batches_fill_run(batches_object *it, llpy_reader *r,
                            arrow_cols *c) {
    if (!llpy_reader_runs_possible(r))
        return 0; /* (the general path says so; no record moves) */
    /* Room for the records it may take, and a block's bytes (a run lies
     * in one block). */
    size_t room = it->max_records - c->n; /* (> 0) */
    room = room < RUN_ROWS ? room : RUN_ROWS;
    while (c->cap_n - c->n < room)
        if (cols_grow_rows(c) < 0)
            return PyErr_NoMemory(), -1;
    if (c->cap_len - c->len < LLOG_BLOCK_SIZE &&
        cols_grow_data(c, LLOG_BLOCK_SIZE) < 0)
        return PyErr_NoMemory(), -1;
    size_t rows = row_bytes(it->types) * (c->n + room);
    size_t budget = it->max_bytes > rows ? it->max_bytes - rows : 0;
    if (it->types & TYPE_BINARY && budget > BINARY_MOST - LLOG_BLOCK_SIZE)
        budget = BINARY_MOST - LLOG_BLOCK_SIZE;
    llog_run run = {c->offsets,  c->ends, c->data, c->n,
                    c->n + room, c->len,  budget};
    size_t n = llpy_reader_next_run(r, &run);
    if (n > 0) {
        c->n = run.n;
        c->len = run.data_len;
    }
    return (int)n;
}

/* A record that would take a binary column past BINARY_MOST bytes: it
 * begins the next batch (it->carry, a copy), or, too large for any binary
 * column, raises ValueError. 1 (the batch ends), or -1. */
static int batches_hold(batches_object *it, const llog_event *ev) {
    if (ev->len > BINARY_MOST) {
        PyErr_Format(PyExc_ValueError,
                     "the record at offset %llu is %zu bytes, more than a "
                     "binary column holds (%zu): use "
                     "data_type=\"large_binary\"",
                     (unsigned long long)ev->offset, ev->len, BINARY_MOST);
        return -1;
    }
    it->carry = cols_new(it->spare);
    if (it->carry == NULL)
        return -1;
    if (cols_append(it->carry, ev) < 0) {
        cols_unref(it->carry);
        it->carry = NULL;
        return -1;
    }
    return 1;
}

/* Reads records into c until a limit, the end or an error (the reader's
 * lock held): 0, or -1 with an exception set. The record that reaches
 * max_bytes ends the batch: the reader never reads past the records it
 * hands over, so its position and last_record_offset stay exact (but for
 * one a binary column has no room for: batches_hold). */
static int batches_fill(batches_object *it, llpy_reader *r, arrow_cols *c) {
    llpy_state *st = llpy_state_of(Py_TYPE(r));
    size_t per_row = row_bytes(it->types);
    llog_event ev;
    while (c->n < it->max_records && c->len + per_row * c->n < it->max_bytes) {
        int rc = batches_fill_run(it, r, c);
        if (rc > 0)
            continue; /* a run of whole records, read at once */
        if (rc == 0)
            rc = llpy_reader_next_view(r, st, &ev);
        if (rc <= 0)
            return rc;
        if (it->types & TYPE_BINARY && ev.len > BINARY_MOST - c->len)
            return batches_hold(it, &ev) < 0 ? -1 : 0;
        if (cols_append(c, &ev) < 0)
            return -1;
    }
    return 0;
}

/* The next batch's columns (n == 0 at the end), or NULL with an exception
 * (raised after any records read before it, kept in it->pending). */
static arrow_cols *batches_next_cols(batches_object *it) {
    llpy_reader *r = (llpy_reader *)it->reader;
    arrow_cols *c = it->carry != NULL ? it->carry : cols_new(it->spare);
    it->carry = NULL;
    if (c == NULL)
        return NULL;
    c->cap_limit = it->max_bytes > SIZE_MAX - LLOG_BLOCK_SIZE
                       ? 0
                       : it->max_bytes + LLOG_BLOCK_SIZE;
    /* (every row takes row_bytes of max_bytes, the last one past it) */
    size_t rows = it->max_bytes / row_bytes(it->types) + 1;
    c->rows_limit = rows < it->max_records ? rows : it->max_records;
    if (llpy_reader_acquire(r) < 0) {
        cols_unref(c);
        return NULL;
    }
    int rc = 0;
    if (llpy_reader_check_open(r) < 0) {
        rc = -1;
    } else {
        llpy_reader_redirect(r, cols_reserve, c);
        rc = batches_fill(it, r, c);
        if (llpy_reader_redirect_end(r) < 0)
            rc = -1;
    }
    llpy_reader_release(r);
    cols_finish(c, it->types);
    if (rc < 0 && c->n > 0) {
        it->pending = PyErr_GetRaisedException();
        rc = 0;
    }
    if (rc < 0) {
        cols_unref(c);
        return NULL;
    }
    return c;
}

static PyObject *Batches_next(PyObject *op) {
    batches_object *it = (batches_object *)op;
    if (llpy_lock_acquire(&it->lock) < 0)
        return NULL;
    PyObject *result = NULL;
    if (it->pending != NULL) {
        PyErr_SetRaisedException(it->pending);
        it->pending = NULL;
    } else {
        arrow_cols *c = batches_next_cols(it);
        if (c != NULL && c->n == 0)
            cols_unref(c); /* the end: StopIteration */
        else if (c != NULL)
            result = batch_new(it->batch_type, c);
    }
    llpy_lock_release(&it->lock);
    return result;
}

static int Batches_traverse(PyObject *op, visitproc visit, void *arg) {
    batches_object *it = (batches_object *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(it->reader);
    Py_VISIT(it->pending);
    return 0;
}

static int Batches_clear(PyObject *op) {
    batches_object *it = (batches_object *)op;
    Py_CLEAR(it->reader);
    Py_CLEAR(it->pending);
    return 0;
}

static void Batches_dealloc(PyObject *op) {
    batches_object *it = (batches_object *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Batches_clear(op);
    if (it->carry != NULL)
        cols_unref(it->carry);
    if (it->spare != NULL)
        spare_unref(it->spare);
    llpy_lock_free(&it->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

PyDoc_STRVAR(Batches_doc, LLPY_DOC_BatchIterator);

static PyType_Slot Batches_slots[] = {{Py_tp_doc, (void *)Batches_doc},
                                      {Py_tp_dealloc, Batches_dealloc},
                                      {Py_tp_traverse, Batches_traverse},
                                      {Py_tp_clear, Batches_clear},
                                      {Py_tp_iter, PyObject_SelfIter},
                                      {Py_tp_iternext, Batches_next},
                                      {0, NULL}};

static PyType_Spec Batches_spec = {
    .name = "leveldb_log.BatchIterator",
    .basicsize = sizeof(batches_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Batches_slots,
};

/* A batch iterator over reader (types: its columns', TYPE_*), or NULL with
 * an exception set. */
static PyObject *batches_make(PyObject *reader, Py_ssize_t max_records,
                              Py_ssize_t max_bytes, unsigned types) {
    if (max_records < 1 || max_bytes < 1) {
        PyErr_SetString(PyExc_ValueError,
                        max_records < 1 ? "max_records must be at least 1"
                                        : "max_bytes must be at least 1");
        return NULL;
    }
    llpy_state *st = llpy_state_of(Py_TYPE(reader));
    PyTypeObject *type = st->batches_type;
    batches_object *it = (batches_object *)type->tp_alloc(type, 0);
    if (it == NULL)
        return NULL;
    if (llpy_lock_init(&it->lock) < 0) {
        Py_DECREF(it);
        return NULL;
    }
    it->spare = st->arrow_spare;
    if (it->spare != NULL)
        atomic_add(&it->spare->refs, 1);
    it->reader = Py_NewRef(reader);
    it->max_records = (size_t)max_records;
    it->max_bytes = (size_t)max_bytes;
    it->types = types;
    it->batch_type = st->batch_type;
    return (PyObject *)it;
}

/* Adds `bit` to *types when value (NULL: not given) is `other` rather than
 * `usual`; 0, or -1 with TypeError (not a str) or ValueError (neither),
 * naming the argument. */
static int parse_type(PyObject *value, const char *arg, const char *usual,
                      const char *other, unsigned bit, unsigned *types) {
    if (value == NULL)
        return 0;
    if (!PyUnicode_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.200s", arg,
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    if (PyUnicode_CompareWithASCIIString(value, other) == 0)
        *types |= bit;
    else if (PyUnicode_CompareWithASCIIString(value, usual) != 0) {
        PyErr_Format(PyExc_ValueError, "%s must be \"%s\" or \"%s\", not %R",
                     arg, usual, other, value);
        return -1;
    }
    return 0;
}

PyObject *llpy_reader_iter_batches(PyObject *reader, PyObject *args,
                                   PyObject *kwds) {
    static char *kwlist[] = LLPY_KWLIST_Reader_iter_batches;
    Py_ssize_t max_records = DEFAULT_MAX_RECORDS, max_bytes = ITER_MAX_BYTES;
    PyObject *offset_type = NULL, *data_type = NULL;
    unsigned types = 0;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds, LLPY_FORMAT_Reader_iter_batches("n", "n", "O", "O"),
            kwlist, &max_records, &max_bytes, &offset_type, &data_type) ||
        parse_type(offset_type, "offset_type", "uint64", "int64",
                   TYPE_INT64_OFFSETS, &types) < 0 ||
        parse_type(data_type, "data_type", "large_binary", "binary",
                   TYPE_BINARY, &types) < 0)
        return NULL;
    if (llpy_reader_check_open((llpy_reader *)reader) < 0)
        return NULL;
    return batches_make(reader, max_records, max_bytes, types);
}

/* Reader.to_arrow(): the checks here, so that they are iter_batches' own;
 * the table is made by leveldb_log._arrow_table, the one place that imports
 * pyarrow, from the stream below in the types asked for. */
PyObject *llpy_reader_to_arrow(PyObject *reader, PyObject *args,
                               PyObject *kwds) {
    static char *kwlist[] = {"offset_type", "data_type", NULL};
    PyObject *offset_type = NULL, *data_type = NULL;
    unsigned types = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OO:to_arrow", kwlist,
                                     &offset_type, &data_type) ||
        parse_type(offset_type, "offset_type", "uint64", "int64",
                   TYPE_INT64_OFFSETS, &types) < 0 ||
        parse_type(data_type, "data_type", "large_binary", "binary",
                   TYPE_BINARY, &types) < 0 ||
        llpy_reader_check_open((llpy_reader *)reader) < 0)
        return NULL;
    PyObject *mod = PyImport_ImportModule("leveldb_log._arrow_table");
    if (mod == NULL)
        return NULL;
    PyObject *table =
        PyObject_CallMethod(mod, "reader_table", "Oss", reader,
                            types & TYPE_INT64_OFFSETS ? "int64" : "uint64",
                            types & TYPE_BINARY ? "binary" : "large_binary");
    Py_DECREF(mod);
    return table;
}

/* ---- the stream ------------------------------------------------------- */

typedef struct {
    PyObject *batches;
    char *last_error;
} stream_priv;

static int stream_get_schema(struct ArrowArrayStream *s,
                             struct ArrowSchema *out) {
    stream_priv *p = s->private_data;
    return schema_export(out, ((batches_object *)p->batches)->types);
}

/* The exception raised as "Type: message", kept for get_last_error. */
static void stream_keep_error(stream_priv *p) {
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *text =
        exc ? PyUnicode_FromFormat("%s: %S", Py_TYPE(exc)->tp_name, exc)
            : NULL;
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    free(p->last_error);
    p->last_error = NULL;
    if (utf8 != NULL) {
        size_t n = strlen(utf8) + 1;
        p->last_error = malloc(n);
        if (p->last_error != NULL)
            memcpy(p->last_error, utf8, n);
    }
    PyErr_Clear();
    Py_XDECREF(text);
    Py_XDECREF(exc);
}

static int stream_get_next(struct ArrowArrayStream *s,
                           struct ArrowArray *out) {
    stream_priv *p = s->private_data;
    PyGILState_STATE gil = PyGILState_Ensure();
    int rc = 0;
    PyObject *batch = PyIter_Next(p->batches);
    if (batch != NULL) {
        rc = array_export(((batch_object *)batch)->cols, out);
        Py_DECREF(batch);
        if (rc != 0) {
            PyErr_NoMemory();
            stream_keep_error(p);
        }
    } else if (PyErr_Occurred()) {
        stream_keep_error(p);
        rc = EIO;
    } else {
        memset(out, 0, sizeof *out); /* released: the end of the stream */
        batches_object *it = (batches_object *)p->batches;
        llpy_reader_set_arrow_spent((llpy_reader *)it->reader);
    }
    PyGILState_Release(gil);
    return rc;
}

static const char *stream_get_last_error(struct ArrowArrayStream *s) {
    return ((stream_priv *)s->private_data)->last_error;
}

static void stream_release(struct ArrowArrayStream *s) {
    stream_priv *p = s->private_data;
    if (Py_IsInitialized()) { /* else the interpreter, and the reader, are gone
                               */
        PyGILState_STATE gil = PyGILState_Ensure();
        Py_XDECREF(p->batches);
        PyGILState_Release(gil);
    }
    free(p->last_error);
    free(p);
    s->release = NULL;
}

static void stream_capsule_free(PyObject *capsule) {
    struct ArrowArrayStream *s =
        PyCapsule_GetPointer(capsule, "arrow_array_stream");
    if (s != NULL && s->release != NULL)
        s->release(s);
    free(s);
}

/* A stream capsule over a batch iterator (reference stolen). */
static PyObject *stream_capsule(PyObject *batches) {
    struct ArrowArrayStream *s = malloc(sizeof *s);
    stream_priv *p = calloc(1, sizeof *p);
    if (s == NULL || p == NULL) {
        free(s);
        free(p);
        Py_DECREF(batches);
        return PyErr_NoMemory();
    }
    p->batches = batches;
    s->get_schema = stream_get_schema;
    s->get_next = stream_get_next;
    s->get_last_error = stream_get_last_error;
    s->release = stream_release;
    s->private_data = p;
    PyObject *cap =
        PyCapsule_New(s, "arrow_array_stream", stream_capsule_free);
    if (cap == NULL) {
        stream_release(s);
        free(s);
    }
    return cap;
}

PyObject *llpy_reader_arrow_stream(PyObject *reader, PyObject *args,
                                   PyObject *kwds) {
    static char *kwlist[] = LLPY_KWLIST_Reader___arrow_c_stream__;
    PyObject *requested;
    if (parse_requested(args, kwds, LLPY_FORMAT_Reader___arrow_c_stream__("O"),
                        kwlist, &requested) < 0 ||
        llpy_reader_check_open((llpy_reader *)reader) < 0)
        return NULL;
    if (llpy_reader_arrow_spent((llpy_reader *)reader)) {
        /* As a spent pyarrow RecordBatchReader refuses: an empty table
         * would pass for an empty log. */
        PyErr_SetString(PyExc_ValueError,
                        "this Reader was already exported to Arrow and read "
                        "to its end: open a new Reader to read the log again");
        return NULL;
    }
    PyObject *batches =
        batches_make(reader, DEFAULT_MAX_RECORDS, STREAM_MAX_BYTES,
                     requested_types(requested, 0));
    return batches ? stream_capsule(batches) : NULL;
}

int llpy_arrow_add_types(PyObject *module, llpy_state *st) {
    st->batch_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &Batch_spec, NULL);
    if (st->batch_type == NULL || PyModule_AddType(module, st->batch_type) < 0)
        return -1;
    st->batches_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &Batches_spec, NULL);
    if (st->batches_type == NULL ||
        PyModule_AddType(module, st->batches_type) < 0)
        return -1;
    st->arrow_spare = calloc(1, sizeof *st->arrow_spare);
    if (st->arrow_spare == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    st->arrow_spare->refs = 1; /* the module's */
    return 0;
}

void llpy_arrow_clear(llpy_state *st) {
    if (st->arrow_spare != NULL)
        spare_unref(st->arrow_spare);
    st->arrow_spare = NULL;
}
