/*
 * reader.c - the Reader type: its fields (the options it was made with,
 * the objects it holds, its lock), slots, properties, methods and
 * docstring. The fields are this file's alone, and it calls down into the
 * Reader's other files, which never call it back (reader_internal.h):
 * reader_open.c parses tp_init's arguments and opens the source,
 * reader_records.c holds where reading stands and reads each record,
 * reader_arrow.c makes Arrow batches from those records, reader_pickle.c
 * pickles; the rest of the binding uses reader.h.
 */
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "reader_internal.h"

struct llpy_reader {
    PyObject_HEAD llpy_records *records; /* where reading stands */
    llpy_lock lock;
    llog_recovery recovery;
    int verify_checksums;
    uint64_t start, end;
    PyObject *source; /* the source as given: repr, warnings, pickling */
    PyObject *name;   /* Reader.name: the path, a file's name, or None */
    PyObject *on_corruption; /* callable or NULL */
    /* A source given as a URL: its storage_options (None or a mapping), kept
     * for pickling; a file object opened for it is then the reader's own,
     * closed with it. NULL for every other source. */
    PyObject *storage_options;
};

/* The per-record path is reader_records.c's, lock and all: this is a jump
 * there. */
static PyObject *Reader_iternext(PyObject *op) {
    return llpy_records_next(((llpy_reader *)op)->records);
}

/* ---- the type: slots and properties ------------------------------------ */

static PyObject *Reader_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    PyObject *op = llpy_lock_new_object(type, offsetof(llpy_reader, lock));
    if (op == NULL)
        return NULL;
    llpy_reader *self = (llpy_reader *)op;
    self->records = llpy_records_new(llpy_state_of(type), &self->lock);
    if (self->records == NULL)
        Py_CLEAR(op);
    return op;
}

/* tp_init: what reader_open.c makes of the arguments, taken. */
static int Reader_init(PyObject *op, PyObject *args, PyObject *kwds) {
    llpy_reader *self = (llpy_reader *)op;
    llpy_opened o;
    if (llpy_records_initialized(self->records)) {
        PyErr_SetString(PyExc_RuntimeError, "Reader is already initialized");
        return -1;
    }
    if (llpy_reader_open(llpy_state_of(Py_TYPE(op)), args, kwds, &o) < 0)
        return -1;
    Py_XSETREF(self->name, o.name);
    Py_XSETREF(self->source, Py_NewRef(o.source));
    Py_XSETREF(self->on_corruption, Py_XNewRef(o.on_corruption));
    Py_XSETREF(self->storage_options, Py_XNewRef(o.storage_options));
    self->recovery = o.opt.recovery;
    self->verify_checksums = o.opt.verify_checksums;
    self->start = o.opt.start;
    self->end = o.opt.end;
    return llpy_records_open(self->records, &o.opt, o.feed, self->source,
                             self->on_corruption);
}

/* 0, or -1 with ValueError for a closed or uninitialized reader. */
static int reader_check_open(llpy_reader *self) {
    return llpy_records_check_open(self->records);
}

static PyObject *Reader_close(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    llpy_records_close(self->records);
    llpy_lock_release(&self->lock);
    Py_RETURN_NONE;
}

static PyObject *Reader_enter(PyObject *op, PyObject *unused) {
    (void)unused;
    if (reader_check_open((llpy_reader *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_exit(PyObject *op, PyObject *args) {
    PyObject *type, *value, *tb;
    if (!PyArg_ParseTuple(args, LLPY_FORMAT_Reader___exit__("O", "O", "O"),
                          &type, &value, &tb))
        return NULL;
    return Reader_close(op, NULL);
}

static PyObject *Reader_iter(PyObject *op) {
    if (reader_check_open((llpy_reader *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_repr(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    const char *state = llpy_records_closed(self->records) ? " closed" : "";
    if (self->source == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (llpy_records_source_kind(self->records) == LLPY_SRC_BUFFER)
        return PyUnicode_FromFormat(
            "<leveldb_log.Reader over %.100s recovery='%s'%s>",
            Py_TYPE(self->source)->tp_name, llog_recovery_name(self->recovery),
            state);
    return PyUnicode_FromFormat("<leveldb_log.Reader %R recovery='%s'%s>",
                                self->source,
                                llog_recovery_name(self->recovery), state);
}

/* Counters change while another thread iterates: read them under the lock
 * (free-threaded builds have no GIL to make a plain read safe). */
static int reader_progress(PyObject *op, llpy_progress *out) {
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    llpy_records_progress(self->records, out);
    llpy_lock_release(&self->lock);
    return 0;
}

static PyObject *Reader_get_last(PyObject *op, void *closure) {
    (void)closure;
    llpy_progress p;
    if (reader_progress(op, &p) < 0)
        return NULL;
    if (!p.has_last)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(p.last_record_offset);
}

static PyObject *Reader_get_dropped(PyObject *op, void *closure) {
    (void)closure;
    llpy_progress p;
    if (reader_progress(op, &p) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(p.dropped_bytes);
}

static PyObject *Reader_get_closed(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(llpy_records_closed(((llpy_reader *)op)->records));
}

static PyObject *Reader_get_recovery(PyObject *op, void *closure) {
    (void)closure;
    return PyUnicode_FromString(
        llog_recovery_name(((llpy_reader *)op)->recovery));
}

static PyObject *Reader_get_verify(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((llpy_reader *)op)->verify_checksums);
}

static PyObject *Reader_get_start(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(((llpy_reader *)op)->start);
}

static PyObject *Reader_get_end(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    if (self->end == LLOG_NO_END)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(self->end);
}

/* Where reading goes on is the file's: a closed reader has none (io's
 * rule), while its options and counters stay readable. */
static PyObject *Reader_get_position(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    llpy_progress p;
    if (reader_progress(op, &p) < 0 ||
        (!p.open && reader_check_open(self) < 0))
        return NULL;
    return PyLong_FromUnsignedLongLong(p.position);
}

static PyObject *Reader_get_name(PyObject *op, void *closure) {
    (void)closure;
    PyObject *name = ((llpy_reader *)op)->name;
    return Py_NewRef(name != NULL ? name : Py_None);
}

/* With "auto", the dialect block 0 told, which the core holds: read under
 * the lock. */
static PyObject *Reader_get_dialect(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    int told;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    llog_dialect dialect = llpy_records_dialect(self->records, &told);
    llpy_lock_release(&self->lock);
    return PyUnicode_FromString(llog_dialect_name(dialect));
}

static PyObject *Reader_get_log_number(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    uint64_t n = 0;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int known = llpy_records_log_number(self->records, &n);
    llpy_lock_release(&self->lock);
    if (!known)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(n);
}

static PyObject *Reader_get_recycled(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    int recycled = 0;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    recycled = llpy_records_recycled(self->records);
    llpy_lock_release(&self->lock);
    return PyBool_FromLong(recycled);
}

static PyObject *Reader_get_compression(PyObject *op, void *closure) {
    (void)closure;
    return llpy_meta_compression(
        llpy_records_meta(((llpy_reader *)op)->records));
}

static PyObject *Reader_get_timestamp_sizes(PyObject *op, void *closure) {
    (void)closure;
    return llpy_meta_timestamp_sizes(
        llpy_records_meta(((llpy_reader *)op)->records));
}

static PyObject *Reader_get_predecessor(PyObject *op, void *closure) {
    (void)closure;
    return llpy_meta_predecessor(
        llpy_records_meta(((llpy_reader *)op)->records));
}

/* ---- methods that call down: Arrow, pickling ---------------------------- */

static PyObject *Reader_iter_batches(PyObject *op, PyObject *args,
                                     PyObject *kwds) {
    llpy_reader *self = (llpy_reader *)op;
    return llpy_batches_iter(op, self->records, &self->lock, args, kwds);
}

static PyObject *Reader_arrow_stream(PyObject *op, PyObject *args,
                                     PyObject *kwds) {
    llpy_reader *self = (llpy_reader *)op;
    return llpy_batches_stream(op, self->records, &self->lock, args, kwds);
}

static PyObject *Reader_to_arrow(PyObject *op, PyObject *args,
                                 PyObject *kwds) {
    return llpy_batches_table(op, ((llpy_reader *)op)->records, args, kwds);
}

/* What reopens the reader where it stands, read under the lock. */
static int reader_state(llpy_reader *self, llpy_reader_state *out) {
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    int kind = llpy_records_source_kind(self->records), told;
    llog_dialect dialect = llpy_records_dialect(self->records, &told);
    *out = (llpy_reader_state){.name = self->source,
                               .on_corruption = self->on_corruption,
                               .storage_options = self->storage_options,
                               .over_path = self->storage_options != NULL ||
                                            kind == LLPY_SRC_FD,
                               .recovery = self->recovery,
                               .dialect = dialect,
                               .told = told,
                               .verify_checksums = self->verify_checksums,
                               .end = self->end};
    llpy_records_progress(self->records, &out->progress);
    if (out->progress.position > self->end) /* read past its range */
        out->progress.position = self->end;
    llpy_lock_release(&self->lock);
    return 0;
}

static PyObject *Reader_reduce(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_reader_state s;
    if (reader_state((llpy_reader *)op, &s) < 0)
        return NULL;
    return llpy_pickle_reduce(&s);
}

static PyObject *Reader_restore(PyObject *op, PyObject *args) {
    llpy_reader *self = (llpy_reader *)op;
    llpy_progress p;
    if (llpy_pickle_progress(args, &p) < 0 ||
        llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    llpy_records_set_progress(self->records, &p);
    llpy_lock_release(&self->lock);
    Py_RETURN_NONE;
}

/* ---- what the test hooks read (reader.h) ---------------------------------
 */

int llpy_reader_blocks_of(llpy_reader *self, llpy_reader_blocks *out) {
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    llpy_records_blocks(self->records, &out->in_place, &out->bounced);
    llpy_lock_release(&self->lock);
    return 0;
}

/* ---- the type: garbage collection, tables, docstring -------------------- */

static int Reader_traverse(PyObject *op, visitproc visit, void *arg) {
    llpy_reader *self = (llpy_reader *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->source);
    Py_VISIT(self->name);
    Py_VISIT(self->on_corruption);
    Py_VISIT(self->storage_options);
    return llpy_records_traverse(self->records, visit, arg);
}

static int Reader_clear(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    Py_CLEAR(self->source);
    Py_CLEAR(self->name);
    Py_CLEAR(self->on_corruption);
    llpy_records_clear(self->records);
    Py_CLEAR(self->storage_options);
    return 0;
}

static void Reader_dealloc(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    if (self->records != NULL)
        llpy_records_close(self->records);
    Reader_clear(op);
    llpy_records_free(self->records);
    llpy_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Reader_methods[] = {
    {"close", Reader_close, METH_NOARGS, LLPY_DOC_Reader_close},
    {"__enter__", Reader_enter, METH_NOARGS, LLPY_DOC_Reader___enter__},
    {"__exit__", Reader_exit, METH_VARARGS, LLPY_DOC_Reader___exit__},
    {"__reduce__", Reader_reduce, METH_NOARGS, LLPY_DOC_Reader___reduce__},
    {"iter_batches", (PyCFunction)(void (*)(void))Reader_iter_batches,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC_Reader_iter_batches},
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))Reader_arrow_stream,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC_Reader___arrow_c_stream__},
    {"to_arrow", (PyCFunction)(void (*)(void))Reader_to_arrow,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC_Reader_to_arrow},
    {"_restore", Reader_restore, METH_VARARGS, LLPY_DOC_Reader__restore},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Reader_getset[] = {
    {"dialect", Reader_get_dialect, NULL, LLPY_DOC_Reader_dialect, NULL},
    {"log_number", Reader_get_log_number, NULL, LLPY_DOC_Reader_log_number,
     NULL},
    {"compression", Reader_get_compression, NULL, LLPY_DOC_Reader_compression,
     NULL},
    {"timestamp_sizes", Reader_get_timestamp_sizes, NULL,
     LLPY_DOC_Reader_timestamp_sizes, NULL},
    {"predecessor", Reader_get_predecessor, NULL, LLPY_DOC_Reader_predecessor,
     NULL},
    {"recycled", Reader_get_recycled, NULL, LLPY_DOC_Reader_recycled, NULL},
    {"last_record_offset", Reader_get_last, NULL,
     LLPY_DOC_Reader_last_record_offset, NULL},
    {"dropped_bytes", Reader_get_dropped, NULL, LLPY_DOC_Reader_dropped_bytes,
     NULL},
    {"name", Reader_get_name, NULL, LLPY_DOC_Reader_name, NULL},
    {"closed", Reader_get_closed, NULL, LLPY_DOC_Reader_closed, NULL},
    {"recovery", Reader_get_recovery, NULL, LLPY_DOC_Reader_recovery, NULL},
    {"verify_checksums", Reader_get_verify, NULL,
     LLPY_DOC_Reader_verify_checksums, NULL},
    {"start", Reader_get_start, NULL, LLPY_DOC_Reader_start, NULL},
    {"end", Reader_get_end, NULL, LLPY_DOC_Reader_end, NULL},
    {"position", Reader_get_position, NULL, LLPY_DOC_Reader_position, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(Reader_doc, LLPY_DOC_Reader);

static PyType_Slot Reader_slots[] = {
    {Py_tp_doc, (void *)Reader_doc},   {Py_tp_new, Reader_new},
    {Py_tp_init, Reader_init},         {Py_tp_dealloc, Reader_dealloc},
    {Py_tp_traverse, Reader_traverse}, {Py_tp_clear, Reader_clear},
    {Py_tp_iter, Reader_iter},         {Py_tp_iternext, Reader_iternext},
    {Py_tp_repr, Reader_repr},         {Py_tp_methods, Reader_methods},
    {Py_tp_getset, Reader_getset},     {0, NULL}};

PyType_Spec llpy_reader_spec = {
    .name = "leveldb_log.Reader",
    .basicsize = sizeof(llpy_reader),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Reader_slots,
};
