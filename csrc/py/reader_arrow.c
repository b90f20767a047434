/*
 * reader_arrow.c - a Reader's records as Arrow data (the Arrow C data and
 * C stream interfaces, arrow.h): Reader.iter_batches() yields Batch objects
 * (columns offset: uint64 or int64 and data: large_binary or binary, filled
 * from the core's payloads in one pass, no Python object per record), and
 * Reader.__arrow_c_stream__() hands the same batches to any consumer. The
 * columns themselves, their buffers and their Arrow export are
 * arrow_cols.c's.
 * Records, corruptions, recovery modes and ranges are exactly those of
 * record-by-record iteration: both read through the same records
 * (reader_records.c), which an iterator is given with the reader's lock.
 */
#include "arrow.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "reader_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_RECORDS 65536
/* iter_batches() is mostly read by a loop that drops each batch: the two
 * batches' buffers it fills in turn (arrow_cols.c) then stay in the CPU's
 * caches, where larger ones are fetched from memory again each time
 * (bench/ARROW.md). */
#define ITER_MAX_BYTES ((Py_ssize_t)1 << 20)
/* A stream is mostly read into a table that keeps every batch: buffers of
 * LLPY_PAGES_MIN and more come in huge pages, which fault in several times
 * faster (pages.c). */
#define STREAM_MAX_BYTES ((Py_ssize_t)4 << 20)
/* The most payload bytes a binary column (32-bit offsets) holds. */
#define BINARY_MOST ((size_t)INT32_MAX)

/* ---- Batch ------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD arrow_cols *cols;
} batch_object;

static PyObject *batch_new(PyTypeObject *type, arrow_cols *c) {
    batch_object *b = PyObject_New(batch_object, type);
    if (b == NULL) {
        llpy_cols_unref(c);
        return NULL;
    }
    b->cols = c; /* the reference passes to it */
    return (PyObject *)b;
}

static void Batch_dealloc(PyObject *op) {
    PyTypeObject *tp = Py_TYPE(op);
    llpy_cols_unref(((batch_object *)op)->cols);
    PyObject_Free(op);
    Py_DECREF(tp);
}

static Py_ssize_t Batch_len(PyObject *op) {
    return (Py_ssize_t)llpy_cols_rows(((batch_object *)op)->cols);
}

static PyObject *Batch_nbytes(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromSize_t(llpy_cols_nbytes(((batch_object *)op)->cols));
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
    return (off ? LLPY_COLS_INT64_OFFSETS : 0) | (data ? LLPY_COLS_BINARY : 0);
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
    PyObject *schema =
        llpy_cols_schema_capsule(llpy_cols_types(((batch_object *)op)->cols));
    PyObject *array =
        schema ? llpy_cols_array_capsule(((batch_object *)op)->cols) : NULL;
    PyObject *pair = array ? PyTuple_Pack(2, schema, array) : NULL;
    Py_XDECREF(schema);
    Py_XDECREF(array);
    return pair;
}

static PyObject *Batch_arrow_schema(PyObject *op, PyObject *unused) {
    (void)unused;
    return llpy_cols_schema_capsule(
        llpy_cols_types(((batch_object *)op)->cols));
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

PyType_Spec llpy_batch_spec = {
    .name = "leveldb_log.Batch",
    .basicsize = sizeof(batch_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Batch_slots,
};

/* ---- the batch iterator ----------------------------------------------- */

typedef struct {
    PyObject_HEAD PyObject *reader; /* kept alive: its records and lock */
    llpy_records *records;          /* read under rlock */
    llpy_lock *rlock;
    llpy_lock lock;
    size_t max_records, max_bytes;
    unsigned types;    /* of the batches' columns: LLPY_COLS_* */
    arrow_cols *carry; /* a record read that begins the next batch, or NULL */
    PyObject *pending; /* an exception raised after a batch's records */
    PyTypeObject *batch_type;
    cols_spare *spare; /* a released batch's columns, for the next */
} batches_object;

/* The most records a run may take: the core counts payload bytes only, so
 * it is given max_bytes less llpy_cols_row_bytes for as many records as it may
 * take (less than a batch's last 8 KiB then go record by record). A binary
 * column's run ends a block short of BINARY_MOST (a run's records each lie
 * in one block), past which records go one by one (batches_hold). */
#define RUN_ROWS 512

/* Appends the run of whole records the core reads at once, if any: the
 * count, 0 (none: the general path goes on), or -1 with MemoryError. */
static int batches_fill_run(batches_object *it, llpy_records *r,
                            arrow_cols *c) {
    if (!llpy_records_runs_possible(r))
        return 0; /* (the general path says so; no record moves) */
    /* Room for the records it may take, and a block's bytes (a run lies
     * in one block). */
    size_t held = llpy_cols_rows(c);
    size_t room = it->max_records - held; /* (> 0) */
    room = room < RUN_ROWS ? room : RUN_ROWS;
    size_t rows = llpy_cols_row_bytes(it->types) * (held + room);
    size_t budget = it->max_bytes > rows ? it->max_bytes - rows : 0;
    if (it->types & LLPY_COLS_BINARY && budget > BINARY_MOST - LLOG_BLOCK_SIZE)
        budget = BINARY_MOST - LLOG_BLOCK_SIZE;
    llog_run run;
    if (llpy_cols_run_start(c, room, budget, &run) < 0)
        return PyErr_NoMemory(), -1;
    size_t n = llpy_records_next_run(r, &run);
    if (n > 0)
        llpy_cols_run_end(c, &run);
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
    it->carry = llpy_cols_new(it->spare);
    if (it->carry == NULL)
        return -1;
    if (llpy_cols_append(it->carry, ev) < 0) {
        llpy_cols_unref(it->carry);
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
static int batches_fill(batches_object *it, llpy_records *r, arrow_cols *c) {
    size_t per_row = llpy_cols_row_bytes(it->types);
    llog_event ev;
    while (llpy_cols_room(c, it->max_records, it->max_bytes, per_row)) {
        int rc = batches_fill_run(it, r, c);
        if (rc > 0)
            continue; /* a run of whole records, read at once */
        if (rc == 0)
            rc = llpy_records_next_view(r, &ev);
        if (rc <= 0)
            return rc;
        if (it->types & LLPY_COLS_BINARY &&
            ev.len > BINARY_MOST - llpy_cols_data_len(c))
            return batches_hold(it, &ev) < 0 ? -1 : 0;
        if (llpy_cols_append(c, &ev) < 0)
            return -1;
    }
    return 0;
}

/* The next batch's columns (n == 0 at the end), or NULL with an exception
 * (raised after any records read before it, kept in it->pending). */
static arrow_cols *batches_next_cols(batches_object *it) {
    llpy_records *r = it->records;
    arrow_cols *c = it->carry != NULL ? it->carry : llpy_cols_new(it->spare);
    it->carry = NULL;
    if (c == NULL)
        return NULL;
    llpy_cols_limit(c, it->max_records, it->max_bytes,
                    llpy_cols_row_bytes(it->types));
    if (llpy_lock_acquire(it->rlock) < 0) {
        llpy_cols_unref(c);
        return NULL;
    }
    int rc = 0;
    if (llpy_records_check_open(r) < 0) {
        rc = -1;
    } else {
        llpy_records_redirect(r, llpy_cols_reserve, c);
        rc = batches_fill(it, r, c);
        if (llpy_records_redirect_end(r) < 0)
            rc = -1;
    }
    llpy_lock_release(it->rlock);
    llpy_cols_finish(c, it->types);
    if (rc < 0 && llpy_cols_rows(c) > 0) {
        it->pending = PyErr_GetRaisedException();
        rc = 0;
    }
    if (rc < 0) {
        llpy_cols_unref(c);
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
        if (c != NULL && llpy_cols_rows(c) == 0)
            llpy_cols_unref(c); /* the end: StopIteration */
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
        llpy_cols_unref(it->carry);
    if (it->spare != NULL)
        llpy_cols_spare_unref(it->spare);
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

PyType_Spec llpy_batches_spec = {
    .name = "leveldb_log.BatchIterator",
    .basicsize = sizeof(batches_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = Batches_slots,
};

/* A batch iterator over reader (types: its columns', LLPY_COLS_*), or NULL
 * with an exception set. */
static PyObject *batches_make(PyObject *reader, llpy_records *r,
                              llpy_lock *rlock, Py_ssize_t max_records,
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
        llpy_cols_spare_ref(it->spare);
    it->reader = Py_NewRef(reader);
    it->records = r;
    it->rlock = rlock;
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

PyObject *llpy_batches_iter(PyObject *reader, llpy_records *r, llpy_lock *lock,
                            PyObject *args, PyObject *kwds) {
    static char *kwlist[] = LLPY_KWLIST_Reader_iter_batches;
    Py_ssize_t max_records = DEFAULT_MAX_RECORDS, max_bytes = ITER_MAX_BYTES;
    PyObject *offset_type = NULL, *data_type = NULL;
    unsigned types = 0;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds, LLPY_FORMAT_Reader_iter_batches("n", "n", "O", "O"),
            kwlist, &max_records, &max_bytes, &offset_type, &data_type) ||
        parse_type(offset_type, "offset_type", "uint64", "int64",
                   LLPY_COLS_INT64_OFFSETS, &types) < 0 ||
        parse_type(data_type, "data_type", "large_binary", "binary",
                   LLPY_COLS_BINARY, &types) < 0)
        return NULL;
    if (llpy_records_check_open(r) < 0)
        return NULL;
    return batches_make(reader, r, lock, max_records, max_bytes, types);
}

/* Reader.to_arrow(): the checks here, so that they are iter_batches' own;
 * the table is made by leveldb_log._arrow_table, the one place that imports
 * pyarrow, from the stream below in the types asked for. */
PyObject *llpy_batches_table(PyObject *reader, const llpy_records *r,
                             PyObject *args, PyObject *kwds) {
    static char *kwlist[] = LLPY_KWLIST_Reader_to_arrow;
    PyObject *offset_type = NULL, *data_type = NULL;
    unsigned types = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds,
                                     LLPY_FORMAT_Reader_to_arrow("O", "O"),
                                     kwlist, &offset_type, &data_type) ||
        parse_type(offset_type, "offset_type", "uint64", "int64",
                   LLPY_COLS_INT64_OFFSETS, &types) < 0 ||
        parse_type(data_type, "data_type", "large_binary", "binary",
                   LLPY_COLS_BINARY, &types) < 0 ||
        llpy_records_check_open(r) < 0)
        return NULL;
    PyObject *mod = PyImport_ImportModule("leveldb_log._arrow_table");
    if (mod == NULL)
        return NULL;
    PyObject *table = PyObject_CallMethod(
        mod, "reader_table", "Oss", reader,
        types & LLPY_COLS_INT64_OFFSETS ? "int64" : "uint64",
        types & LLPY_COLS_BINARY ? "binary" : "large_binary");
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
    return llpy_cols_schema_export(out, ((batches_object *)p->batches)->types);
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
        rc = llpy_cols_array_export(((batch_object *)batch)->cols, out);
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
        llpy_records_set_arrow_spent(it->records);
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

PyObject *llpy_batches_stream(PyObject *reader, llpy_records *r,
                              llpy_lock *lock, PyObject *args,
                              PyObject *kwds) {
    static char *kwlist[] = LLPY_KWLIST_Reader___arrow_c_stream__;
    PyObject *requested;
    if (parse_requested(args, kwds, LLPY_FORMAT_Reader___arrow_c_stream__("O"),
                        kwlist, &requested) < 0 ||
        llpy_records_check_open(r) < 0)
        return NULL;
    if (llpy_records_arrow_spent(r)) {
        /* As a spent pyarrow RecordBatchReader refuses: an empty table
         * would pass for an empty log. */
        PyErr_SetString(PyExc_ValueError,
                        "this Reader was already exported to Arrow and read "
                        "to its end: open a new Reader to read the log again");
        return NULL;
    }
    PyObject *batches =
        batches_make(reader, r, lock, DEFAULT_MAX_RECORDS, STREAM_MAX_BYTES,
                     requested_types(requested, 0));
    return batches ? stream_capsule(batches) : NULL;
}
