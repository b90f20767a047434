/*
 * reader_type.c - the Reader type as Python sees it: its slots (new,
 * close, the context manager, repr, the garbage collector's), properties
 * and methods tables, and its docstring. Iterating and opening a Reader,
 * the slots tp_iternext and tp_init, are reader.c's.
 */
#include "arrow.h"
#include "binding.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "llpy_io.h"
#include "lock.h"
#include "module.h"

/* Lets the source go: a buffer is released, a descriptor or a URL's file
 * object the reader opened is closed, the block buffer freed. */
static void reader_release_source(llpy_reader *self) {
    if (self->view.obj != NULL)
        PyBuffer_Release(&self->view);
    if (self->kind == LLPY_SRC_FD && self->fd >= 0) {
        llpy_close_fd(self->fd);
        self->fd = -1;
    }
    if (self->file != NULL && self->storage_options != NULL) {
        /* a URL's file object is the reader's own */
        PyObject *r = PyObject_CallMethod(self->file, "close", NULL);
        if (r == NULL)
            PyErr_WriteUnraisable(self->file);
        Py_XDECREF(r);
    }
    Py_CLEAR(self->file);
    llpy_io_free(self->block);
    self->block = NULL;
}

static PyObject *Reader_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    return llpy_new_object(type, offsetof(llpy_reader, lock),
                           offsetof(llpy_reader, fd));
}

static void reader_close_locked(llpy_reader *self) {
    if (self->closed)
        return;
    self->closed = 1;
    reader_release_source(self);
    if (self->core != NULL) { /* what the getters still say */
        self->has_log_number =
            llog_reader_log_number(self->core, &self->log_number);
        self->recycled = llog_reader_recycled(self->core);
    }
    llog_reader_free(self->core);
    self->core = NULL;
#ifdef LLPY_IN_PLACE_BLOCKS
    self->in_place_left = 0; /* their payloads were in what goes now */
#endif
    Py_CLEAR(self->assembly);
    PyMem_RawFree(self->scratch);
    self->scratch = NULL;
    self->scratch_cap = 0;
}

static PyObject *Reader_close(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    reader_close_locked(self);
    llpy_lock_release(&self->lock);
    Py_RETURN_NONE;
}

static PyObject *Reader_enter(PyObject *op, PyObject *unused) {
    (void)unused;
    if (llpy_reader_check_open((llpy_reader *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_exit(PyObject *op, PyObject *args) {
    (void)args;
    return Reader_close(op, NULL);
}

static PyObject *Reader_iter(PyObject *op) {
    if (llpy_reader_check_open((llpy_reader *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_repr(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    const char *state = self->closed ? " closed" : "";
    if (self->name == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (self->kind == LLPY_SRC_BUFFER)
        return PyUnicode_FromFormat(
            "<leveldb_log.Reader over %.100s recovery='%s'%s>",
            Py_TYPE(self->name)->tp_name, llog_recovery_name(self->recovery),
            state);
    return PyUnicode_FromFormat("<leveldb_log.Reader %R recovery='%s'%s>",
                                self->name, llog_recovery_name(self->recovery),
                                state);
}

/* Counters change while another thread iterates: read them under the lock
 * (free-threaded builds have no GIL to make a plain read safe). */
typedef struct {
    int has_last;
    uint64_t last, dropped, in_place, bounced;
} reader_counts;

static int reader_counters(PyObject *op, reader_counts *out) {
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    out->has_last = self->has_last;
    out->last = self->last_record_offset;
    out->dropped = self->dropped_bytes;
    out->in_place = self->blocks_in_place;
    out->bounced = self->blocks_bounced;
    llpy_lock_release(&self->lock);
    return 0;
}

static PyObject *Reader_get_last(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    if (!c.has_last)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(c.last);
}

static PyObject *Reader_get_dropped(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(c.dropped);
}

static PyObject *Reader_get_in_place(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(c.in_place);
}

static PyObject *Reader_get_bounced(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(c.bounced);
}

static PyObject *Reader_get_closed(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((llpy_reader *)op)->closed);
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

static PyObject *Reader_get_position(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int known = self->core != NULL; /* close() frees the core */
    uint64_t position = known ? llog_reader_position(self->core) : 0;
    llpy_lock_release(&self->lock);
    if (!known)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(position);
}

static int Reader_traverse(PyObject *op, visitproc visit, void *arg) {
    llpy_reader *self = (llpy_reader *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->on_corruption);
    Py_VISIT(self->file);
    Py_VISIT(self->storage_options);
    Py_VISIT(self->view.obj);
    Py_VISIT(self->timestamp_sizes);
    Py_VISIT(self->predecessor);
    Py_VISIT(self->decompressor);
    return 0;
}

static int Reader_clear(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->on_corruption);
    Py_CLEAR(self->file);
    Py_CLEAR(self->timestamp_sizes);
    Py_CLEAR(self->predecessor);
    Py_CLEAR(self->decompressor);
    Py_CLEAR(self->decoded);
    Py_CLEAR(self->storage_options);
    return 0;
}

static void Reader_dealloc(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    reader_close_locked(self);
    Reader_clear(op);
    llpy_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Reader_methods[] = {
    {"close", Reader_close, METH_NOARGS, LLPY_DOC_Reader_close},
    {"__enter__", Reader_enter, METH_NOARGS, LLPY_DOC_Reader___enter__},
    {"__exit__", Reader_exit, METH_VARARGS, LLPY_DOC_Reader___exit__},
    {"__reduce__", llpy_reader_reduce, METH_NOARGS,
     LLPY_DOC_Reader___reduce__},
    {"iter_batches", (PyCFunction)(void (*)(void))llpy_reader_iter_batches,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC_Reader_iter_batches},
    {"__arrow_c_stream__",
     (PyCFunction)(void (*)(void))llpy_reader_arrow_stream,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC_Reader___arrow_c_stream__},
    {"_restore", llpy_reader_restore, METH_VARARGS, LLPY_DOC_Reader__restore},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Reader_getset[] = {
    {"dialect", llpy_reader_get_dialect, NULL, LLPY_DOC_Reader_dialect, NULL},
    {"log_number", llpy_reader_get_log_number, NULL,
     LLPY_DOC_Reader_log_number, NULL},
    {"compression", llpy_reader_get_compression, NULL,
     LLPY_DOC_Reader_compression, NULL},
    {"timestamp_sizes", llpy_reader_get_timestamp_sizes, NULL,
     LLPY_DOC_Reader_timestamp_sizes, NULL},
    {"predecessor", llpy_reader_get_predecessor, NULL,
     LLPY_DOC_Reader_predecessor, NULL},
    {"recycled", llpy_reader_get_recycled, NULL, LLPY_DOC_Reader_recycled,
     NULL},
    {"last_record_offset", Reader_get_last, NULL,
     LLPY_DOC_Reader_last_record_offset, NULL},
    {"dropped_bytes", Reader_get_dropped, NULL, LLPY_DOC_Reader_dropped_bytes,
     NULL},
    {"closed", Reader_get_closed, NULL, LLPY_DOC_Reader_closed, NULL},
    {"recovery", Reader_get_recovery, NULL, LLPY_DOC_Reader_recovery, NULL},
    {"verify_checksums", Reader_get_verify, NULL,
     LLPY_DOC_Reader_verify_checksums, NULL},
    {"start", Reader_get_start, NULL, LLPY_DOC_Reader_start, NULL},
    {"end", Reader_get_end, NULL, LLPY_DOC_Reader_end, NULL},
    {"position", Reader_get_position, NULL, LLPY_DOC_Reader_position, NULL},
    {"_blocks_in_place", Reader_get_in_place, NULL,
     LLPY_DOC_Reader__blocks_in_place, NULL},
    {"_blocks_bounced", Reader_get_bounced, NULL,
     LLPY_DOC_Reader__blocks_bounced, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(Reader_doc, LLPY_DOC_Reader);

static PyType_Slot Reader_slots[] = {
    {Py_tp_doc, (void *)Reader_doc},   {Py_tp_new, Reader_new},
    {Py_tp_init, llpy_reader_init},    {Py_tp_dealloc, Reader_dealloc},
    {Py_tp_traverse, Reader_traverse}, {Py_tp_clear, Reader_clear},
    {Py_tp_iter, Reader_iter},         {Py_tp_iternext, llpy_reader_iternext},
    {Py_tp_repr, Reader_repr},         {Py_tp_methods, Reader_methods},
    {Py_tp_getset, Reader_getset},     {0, NULL}};

PyType_Spec llpy_reader_spec = {
    .name = "leveldb_log.Reader",
    .basicsize = sizeof(llpy_reader),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Reader_slots,
};
