/*
 * writer.c - the Writer type: Writer() (its arguments; the target is opened
 * by writer_open.c, mode "a" resumes where writer_append.c says), close and
 * the finalizer, the other slots, the methods and properties tables and the
 * docstring. Writing records is writer_write.c's.
 */
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "writer_internal.h"

/* 1 when the target is a file object that is already closed (nothing to
 * flush into it then), else 0. */
static int target_closed(llpy_writer *self) {
    if (self->file == NULL)
        return 0;
    PyObject *closed = PyObject_GetAttrString(self->file, "closed");
    if (closed == NULL) {
        PyErr_Clear();
        return 0;
    }
    int yes = PyObject_IsTrue(closed) > 0;
    Py_DECREF(closed);
    PyErr_Clear();
    return yes;
}

/* What the policy holds (writer_policy.c), the new log's directory and the
 * file lock, given up before the descriptor closes. */
static void writer_release_policy(llpy_writer *self) {
    if (self->dir_fd >= 0) {
        llpy_close_fd(self->dir_fd);
        self->dir_fd = -1;
    }
    if (self->fd < 0)
        return;
    llpy_policy_release(self->policy, self->fd, self->locked);
    if (self->locked)
        llpy_file_unlock(self->fd);
    self->locked = 0;
}

/* The dialect's record at the start or the end of a log (writer_dialect.c),
 * buffered; 0, or -1 with an exception set. */
static int writer_dialect_record(llpy_writer *self,
                                 size_t (*record)(const llpy_writer_dialect *,
                                                  llog_writer *, uint8_t *)) {
    uint8_t bytes[LLPY_DIALECT_RECORD_MAX];
    size_t n = record(self->dialect, &self->core, bytes);
    return llpy_writer_put_raw(self, bytes, n);
}

/* Closes the target; the first error is raised, after everything is released.
 */
static int writer_close_locked(llpy_writer *self) {
    if (self->closed || self->closing)
        return 0;
    int rc = 0;
    if (self->buf != NULL && !target_closed(self))
        rc = writer_dialect_record(self, llpy_writer_dialect_finish);
    if (rc == 0 && self->buf != NULL &&
        (self->len > 0 || !target_closed(self)))
        rc = llpy_writer_hand_over(self);
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    /* Threads waiting for a flush get it before the descriptor closes. */
    if (llpy_sync_close(self) < 0 && exc == NULL)
        exc = PyErr_GetRaisedException();
    PyErr_Clear();
    writer_release_policy(self);
    self->closed = 1;
    self->closing = 0;
    if (self->fd >= 0) {
        llpy_close_fd(self->fd);
        self->fd = -1;
    }
    if (self->file != NULL && self->closefd) {
        PyObject *r = PyObject_CallMethod(self->file, "close", NULL);
        if (r == NULL && exc == NULL)
            exc = PyErr_GetRaisedException();
        PyErr_Clear();
        Py_XDECREF(r);
    }
    Py_CLEAR(self->file);
    PyMem_Free(self->buf);
    self->buf = NULL;
    llpy_io_free(self->bounce);
    self->bounce = NULL;
    if (exc != NULL) {
        PyErr_SetRaisedException(exc);
        return -1;
    }
    return 0;
}

static PyObject *Writer_close(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_close_locked(self);
    llpy_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Writer_enter(PyObject *op, PyObject *unused) {
    (void)unused;
    if (llpy_writer_check_open((llpy_writer *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Writer_exit(PyObject *op, PyObject *args) {
    PyObject *type, *value, *tb;
    if (!PyArg_ParseTuple(args, LLPY_FORMAT_Writer___exit__("O", "O", "O"),
                          &type, &value, &tb))
        return NULL;
    return Writer_close(op, NULL);
}

static PyObject *Writer_reduce(PyObject *op, PyObject *unused) {
    (void)op;
    (void)unused;
    PyErr_SetString(PyExc_TypeError, "cannot pickle a Writer");
    return NULL;
}

/* bytes are a log's contents wherever a log is read (Reader(b"...") reads
 * them as the log itself), so they are never a path here either. */
static int refuse_bytes_path(PyObject *target) {
    if (!PyBytes_Check(target))
        return 0;
    PyErr_SetString(PyExc_TypeError,
                    "Writer does not take bytes as a path (bytes given to a "
                    "Reader are read as the log itself): pass the path as a "
                    "str or an os.PathLike");
    return -1;
}

static int Writer_init(PyObject *op, PyObject *args, PyObject *kwds) {
    llpy_writer *self = (llpy_writer *)op;
    static char *kwlist[] = LLPY_KWLIST_Writer;
    PyObject *target, *mode = NULL, *buffering = NULL, *dialect = NULL;
    PyObject *log_number = NULL, *compression = NULL;
    PyObject *storage_options = Py_None, *sync = NULL, *per_sync = NULL;
    PyObject *preallocate = NULL, *lock = Py_True;
    PyObject *flags[3] = {Py_False, Py_False, Py_False};
    int closefd = 0, recycle = 0, sync_offsets = 0;
    if (self->buf != NULL || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "Writer is already initialized");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds,
            LLPY_FORMAT_Writer("O", "O", "O", "O", "O", "O", "O", "O", "O",
                               "O", "O", "O", "O", "O!"),
            kwlist, &target, &mode, &buffering, &flags[0], &dialect,
            &log_number, &flags[1], &compression, &flags[2], &storage_options,
            &sync, &per_sync, &preallocate, &PyBool_Type, &lock) ||
        llpy_parse_flag(flags[0], "closefd", &closefd) < 0 ||
        llpy_parse_flag(flags[1], "recycle", &recycle) < 0 ||
        llpy_parse_flag(flags[2], "sync_offsets", &sync_offsets) < 0)
        return -1;
    if (refuse_bytes_path(target) < 0)
        return -1;
    self->mode = 'w';
    self->use_lock = lock == Py_True;
    if ((mode != NULL && llpy_writer_parse_mode(mode, &self->mode) < 0) ||
        llpy_writer_parse_buffering(buffering, &self->limit) < 0 ||
        llpy_policy_options(self->policy, target, sync, per_sync, preallocate,
                            &self->sync_default) < 0 ||
        llpy_writer_dialect_options(self->dialect, target, dialect, log_number,
                                    recycle, compression, sync_offsets) < 0)
        return -1;
    self->compress = llpy_writer_dialect_compressed(self->dialect);
    self->cap =
        self->limit < LLPY_DEFAULT_BUFFER ? LLPY_DEFAULT_BUFFER : self->limit;
    if (llpy_writer_open_target(self, target, mode, closefd, storage_options) <
        0)
        return -1;
    llog_writer_init(&self->core, self->written);
    llpy_policy_start(self->policy, self->fd, self->written);
    llpy_state *st = llpy_state_of(Py_TYPE(self));
    self->slow_copy_max = st->slow_copy_max;
    self->lend_views =
        self->file != NULL &&
        (Py_IS_TYPE(self->file, (PyTypeObject *)st->bytesio_type) ||
         Py_IS_TYPE(self->file, (PyTypeObject *)st->fileio_type));
    self->buf = PyMem_Malloc(self->cap + LLPY_BUF_SLACK);
    if (self->buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return writer_dialect_record(self, llpy_writer_dialect_start);
}

static PyObject *Writer_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    PyObject *self = llpy_lock_new_object(type, offsetof(llpy_writer, lock));
    if (self == NULL)
        return NULL;
    llpy_writer *w = (llpy_writer *)self;
    w->fd = -1; /* no descriptor yet */
    w->dir_fd = -1;
    w->policy = llpy_policy_new();
    w->dialect = w->policy ? llpy_writer_dialect_new() : NULL;
    w->group =
        w->dialect ? llpy_sync_group_new(llpy_writer_hand_over_queued) : NULL;
    if (w->group == NULL)
        Py_CLEAR(self);
    return self;
}

static PyObject *Writer_repr(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    if (self->name == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (self->closed)
        return PyUnicode_FromFormat("<leveldb_log.Writer %R closed>",
                                    self->name);
    return PyUnicode_FromFormat(
        "<leveldb_log.Writer %R mode='%c' offset=%llu>", self->name,
        self->mode, (unsigned long long)self->core.offset);
}

static PyObject *Writer_get_closed(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((llpy_writer *)op)->closed);
}

/* Under the lock: a write in another thread moves the offset. */
static PyObject *Writer_get_position(PyObject *op, void *closure) {
    (void)closure;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = llpy_writer_check_open(self);
    uint64_t offset = self->core.offset;
    llpy_lock_release(&self->lock);
    return rc < 0 ? NULL : PyLong_FromUnsignedLongLong(offset);
}

static PyObject *Writer_get_mode(PyObject *op, void *closure) {
    (void)closure;
    char m[2] = {((llpy_writer *)op)->mode, 0};
    return PyUnicode_FromString(m);
}

static PyObject *Writer_get_name(PyObject *op, void *closure) {
    (void)closure;
    llpy_writer *self = (llpy_writer *)op;
    return Py_NewRef(self->name ? self->name : Py_None);
}

/* The options Writer() was given, as they took effect; readable after
 * close(), as a closed file's mode and name are. */
static PyObject *Writer_get_dialect(PyObject *op, void *closure) {
    (void)closure;
    return PyUnicode_FromString(llog_dialect_name(
        llpy_writer_dialect_of(((llpy_writer *)op)->dialect).dialect));
}

static PyObject *Writer_get_log_number(PyObject *op, void *closure) {
    (void)closure;
    llog_reader_options opt =
        llpy_writer_dialect_of(((llpy_writer *)op)->dialect);
    if (!opt.has_log_number)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(opt.log_number);
}

static PyObject *Writer_get_compression(PyObject *op, void *closure) {
    (void)closure;
    if (!((llpy_writer *)op)->compress)
        Py_RETURN_NONE;
    return PyUnicode_FromString("zstd");
}

static PyObject *Writer_get_recycle(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(
        llpy_writer_dialect_header_size(((llpy_writer *)op)->dialect) !=
        LLOG_HEADER_SIZE);
}

static PyObject *Writer_get_sync_offsets(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(
        llpy_writer_dialect_header_size(((llpy_writer *)op)->dialect) ==
        LLOG_SYNC_HEADER_SIZE);
}

static PyObject *Writer_get_sync(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((llpy_writer *)op)->sync_default);
}

static PyObject *Writer_get_buffering(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromSize_t(((llpy_writer *)op)->limit);
}

static PyObject *Writer_get_bytes_per_sync(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(
        llpy_policy_bytes_per_sync(((llpy_writer *)op)->policy));
}

static PyObject *Writer_get_preallocate(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(
        llpy_policy_preallocate(((llpy_writer *)op)->policy));
}

static int Writer_traverse(PyObject *op, visitproc visit, void *arg) {
    llpy_writer *self = (llpy_writer *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->file);
    return llpy_sync_group_traverse(self->group, visit, arg);
}

static int Writer_clear(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->file);
    llpy_sync_group_clear(self->group);
    return 0;
}

/* Like io's objects, an unclosed writer is flushed and closed when collected
 * (PEP 442 finalizer: safe to run Python code and to report errors here). */
static void Writer_finalize(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    if (self->closed || (self->buf == NULL && self->fd < 0))
        return;
    PyObject *saved = PyErr_GetRaisedException();
    if (self->len > 0 && /* as an unclosed file does */
        PyErr_ResourceWarning(op, 1,
                              "unclosed Writer %R with %zu bytes "
                              "of records not yet written",
                              op, self->len) < 0)
        PyErr_WriteUnraisable(op);
    if (llpy_lock_acquire(&self->lock) == 0) {
        if (writer_close_locked(self) < 0)
            PyErr_WriteUnraisable(op);
        llpy_lock_release(&self->lock);
    } else {
        PyErr_WriteUnraisable(op);
    }
    PyErr_SetRaisedException(saved);
}

static void Writer_dealloc(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    PyTypeObject *tp = Py_TYPE(op);
    if (PyObject_CallFinalizerFromDealloc(op) < 0)
        return; /* resurrected by the finalizer */
    PyObject_GC_UnTrack(op);
    if (self->dir_fd >= 0)
        llpy_close_fd(self->dir_fd);
    if (self->fd >= 0)
        llpy_close_fd(self->fd);
    PyMem_Free(self->buf);
    llpy_io_free(self->bounce);
    Writer_clear(op);
    llpy_sync_group_free(self->group);
    llpy_policy_free(self->policy);
    llpy_writer_dialect_free(self->dialect);
    llpy_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Writer_methods[] = {
    {"write", (PyCFunction)(void (*)(void))llpy_writer_write,
     METH_FASTCALL | METH_KEYWORDS, LLPY_DOC_Writer_write},
    {"write_many", (PyCFunction)(void (*)(void))llpy_writer_write_many,
     METH_FASTCALL | METH_KEYWORDS, LLPY_DOC_Writer_write_many},
    {"flush", llpy_writer_flush, METH_NOARGS, LLPY_DOC_Writer_flush},
    {"sync", llpy_writer_sync, METH_NOARGS, LLPY_DOC_Writer_sync},
    {"close", Writer_close, METH_NOARGS, LLPY_DOC_Writer_close},
    {"__enter__", Writer_enter, METH_NOARGS, LLPY_DOC_Writer___enter__},
    {"__exit__", Writer_exit, METH_VARARGS, LLPY_DOC_Writer___exit__},
    {"__reduce__", Writer_reduce, METH_NOARGS, LLPY_DOC_Writer___reduce__},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Writer_getset[] = {
    {"closed", Writer_get_closed, NULL, LLPY_DOC_Writer_closed, NULL},
    {"position", Writer_get_position, NULL, LLPY_DOC_Writer_position, NULL},
    {"mode", Writer_get_mode, NULL, LLPY_DOC_Writer_mode, NULL},
    {"name", Writer_get_name, NULL, LLPY_DOC_Writer_name, NULL},
    {"dialect", Writer_get_dialect, NULL, LLPY_DOC_Writer_dialect, NULL},
    {"log_number", Writer_get_log_number, NULL, LLPY_DOC_Writer_log_number,
     NULL},
    {"compression", Writer_get_compression, NULL, LLPY_DOC_Writer_compression,
     NULL},
    {"recycle", Writer_get_recycle, NULL, LLPY_DOC_Writer_recycle, NULL},
    {"sync_offsets", Writer_get_sync_offsets, NULL,
     LLPY_DOC_Writer_sync_offsets, NULL},
    {"sync_default", Writer_get_sync, NULL, LLPY_DOC_Writer_sync_default,
     NULL},
    {"buffering", Writer_get_buffering, NULL, LLPY_DOC_Writer_buffering, NULL},
    {"bytes_per_sync", Writer_get_bytes_per_sync, NULL,
     LLPY_DOC_Writer_bytes_per_sync, NULL},
    {"preallocate", Writer_get_preallocate, NULL, LLPY_DOC_Writer_preallocate,
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(Writer_doc, LLPY_DOC_Writer);

static PyType_Slot Writer_slots[] = {{Py_tp_doc, (void *)Writer_doc},
                                     {Py_tp_new, Writer_new},
                                     {Py_tp_init, Writer_init},
                                     {Py_tp_dealloc, Writer_dealloc},
                                     {Py_tp_finalize, Writer_finalize},
                                     {Py_tp_traverse, Writer_traverse},
                                     {Py_tp_clear, Writer_clear},
                                     {Py_tp_repr, Writer_repr},
                                     {Py_tp_methods, Writer_methods},
                                     {Py_tp_getset, Writer_getset},
                                     {0, NULL}};

PyType_Spec llpy_writer_spec = {
    .name = "leveldb_log.Writer",
    .basicsize = sizeof(llpy_writer),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Writer_slots,
};
