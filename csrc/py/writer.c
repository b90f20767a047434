/*
 * writer.c - the Writer type: its fields (each part's own state is kept by
 * its file: the way out by writer_output.c, the group commit by
 * writer_sync.c, the options by writer_policy.c and writer_dialect.c),
 * Writer() (its arguments; the target is opened by writer_open.c, mode "a"
 * resumes where writer_append.c says), close and the finalizer, the other
 * slots, the methods and properties tables and the docstring. Writing
 * records is writer_write.c's, given the parts it works on.
 */
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "writer_internal.h"
#include "writer_policy.h"

struct llpy_writer {
    PyObject_HEAD llpy_lock lock;
    PyObject *name;
    char mode;
    int opts;                     /* LLPY_WRITE_*: sync=, compression */
    int use_lock;                 /* lock= */
    llpy_output *out;             /* the way out (writer_output.c) */
    llpy_sync_group *group;       /* durable calls (writer_sync.c) */
    llpy_policy *policy;          /* bytes_per_sync=, preallocate= */
    llpy_writer_dialect *dialect; /* other dialects (writer_dialect.c) */
};

/* Closes the target; the first error is raised, after everything is
 * released. */
static int writer_close_locked(llpy_writer *self) {
    int rc = llpy_output_finish(self->out, self->dialect);
    if (rc > 0)
        return 0; /* closed, or another call is closing it */
    rc = llpy_sync_after_hand_over(self->group, rc);
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    /* Threads waiting for a flush get it before the descriptor closes. */
    if (llpy_sync_close(self->group) < 0 && exc == NULL)
        exc = PyErr_GetRaisedException();
    PyErr_Clear();
    if (llpy_output_close(self->out) < 0 && exc == NULL)
        exc = PyErr_GetRaisedException();
    PyErr_Clear();
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
    if (llpy_output_check_open(((llpy_writer *)op)->out) < 0)
        return NULL;
    return Py_NewRef(op);
}

/* The methods that write, on the parts they work on (writer_write.c). */
static PyObject *Writer_write(PyObject *op, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
    llpy_writer *self = (llpy_writer *)op;
    return llpy_writer_write(&self->lock, self->out, self->group, self->opts,
                             args, nargs, kwnames);
}

static PyObject *Writer_write_many(PyObject *op, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames) {
    llpy_writer *self = (llpy_writer *)op;
    return llpy_writer_write_many(op, &self->lock, self->out, self->group,
                                  self->opts, args, nargs, kwnames);
}

static PyObject *Writer_flush(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    return llpy_writer_flush(&self->lock, self->out, self->group);
}

static PyObject *Writer_sync(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    return llpy_writer_sync(&self->lock, self->out, self->group);
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

/* The target opened, handed to the output and the group commit, and the
 * output started (the dialect's first record buffered). */
static int writer_open(llpy_writer *self, PyObject *target, int closefd,
                       PyObject *storage_options, size_t limit) {
    llpy_state *st = llpy_state_of(Py_TYPE(self));
    int flags = (self->use_lock ? LLPY_OPEN_LOCK : 0) |
                (closefd ? LLPY_OPEN_CLOSEFD : 0);
    PyObject *name;
    int dir_fd;
    int rc = llpy_writer_open_target(self->out, self->dialect, st, target,
                                     self->mode, flags, storage_options, &name,
                                     &dir_fd);
    Py_XSETREF(self->name, name);
    llpy_sync_set_target(self->group, name, dir_fd);
    if (rc < 0)
        return -1;
    return llpy_output_start(self->out, st, limit, self->dialect);
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
    if (llpy_output_started(self->out)) {
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
    size_t limit;
    int sync_default;
    if ((mode != NULL && llpy_writer_parse_mode(mode, &self->mode) < 0) ||
        llpy_writer_parse_buffering(buffering, &limit) < 0 ||
        llpy_policy_options(self->policy, target, sync, per_sync, preallocate,
                            &sync_default) < 0 ||
        llpy_writer_dialect_options(self->dialect, target, dialect, log_number,
                                    recycle, compression, sync_offsets) < 0)
        return -1;
    self->opts =
        (sync_default ? LLPY_WRITE_SYNC : 0) |
        (llpy_writer_dialect_compressed(self->dialect) ? LLPY_WRITE_COMPRESS
                                                       : 0);
    return writer_open(self, target, closefd, storage_options, limit);
}

static PyObject *Writer_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    PyObject *self = llpy_lock_new_object(type, offsetof(llpy_writer, lock));
    if (self == NULL)
        return NULL;
    llpy_writer *w = (llpy_writer *)self;
    w->policy = llpy_policy_new();
    w->dialect = w->policy ? llpy_writer_dialect_new() : NULL;
    w->out = w->dialect ? llpy_output_new(w->policy) : NULL;
    w->group = w->out ? llpy_sync_group_new(&w->lock, w->out) : NULL;
    if (w->group == NULL)
        Py_CLEAR(self);
    return self;
}

static PyObject *Writer_repr(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    if (self->name == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (llpy_output_closed(self->out))
        return PyUnicode_FromFormat("<leveldb_log.Writer %R closed>",
                                    self->name);
    return PyUnicode_FromFormat(
        "<leveldb_log.Writer %R mode='%c' offset=%llu>", self->name,
        self->mode, (unsigned long long)llpy_output_offset(self->out));
}

static PyObject *Writer_get_closed(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(llpy_output_closed(((llpy_writer *)op)->out));
}

/* Under the lock: a write in another thread moves the offset. */
static PyObject *Writer_get_position(PyObject *op, void *closure) {
    (void)closure;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = llpy_output_check_open(self->out);
    uint64_t offset = llpy_output_offset(self->out);
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
    if (!(((llpy_writer *)op)->opts & LLPY_WRITE_COMPRESS))
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
    return PyBool_FromLong(((llpy_writer *)op)->opts & LLPY_WRITE_SYNC);
}

static PyObject *Writer_get_buffering(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromSize_t(llpy_output_limit(((llpy_writer *)op)->out));
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
    int rc = llpy_output_traverse(self->out, visit, arg);
    return rc != 0 ? rc : llpy_sync_group_traverse(self->group, visit, arg);
}

static int Writer_clear(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    Py_CLEAR(self->name);
    llpy_output_clear(self->out);
    llpy_sync_group_clear(self->group);
    return 0;
}

/* Like io's objects, an unclosed writer is flushed and closed when collected
 * (PEP 442 finalizer: safe to run Python code and to report errors here). */
static void Writer_finalize(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    llpy_output *out = self->out;
    if (llpy_output_closed(out) ||
        (!llpy_output_started(out) && llpy_output_fd(out) < 0))
        return;
    PyObject *saved = PyErr_GetRaisedException();
    size_t len = llpy_output_buffered(out);
    if (len > 0 && /* as an unclosed file does */
        PyErr_ResourceWarning(op, 1,
                              "unclosed Writer %R with %zu bytes "
                              "of records not yet written",
                              op, len) < 0)
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
    Writer_clear(op);
    llpy_sync_group_free(self->group);
    llpy_output_free(self->out);
    llpy_policy_free(self->policy);
    llpy_writer_dialect_free(self->dialect);
    llpy_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Writer_methods[] = {
    {"write", (PyCFunction)(void (*)(void))Writer_write,
     METH_FASTCALL | METH_KEYWORDS, LLPY_DOC_Writer_write},
    {"write_many", (PyCFunction)(void (*)(void))Writer_write_many,
     METH_FASTCALL | METH_KEYWORDS, LLPY_DOC_Writer_write_many},
    {"flush", Writer_flush, METH_NOARGS, LLPY_DOC_Writer_flush},
    {"sync", Writer_sync, METH_NOARGS, LLPY_DOC_Writer_sync},
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

/* ---- the test hooks' reads (writer_testing.c) ------------------------- */

int llpy_writer_count(llpy_writer *w, llpy_writer_counter which,
                      uint64_t *out) {
    if (llpy_lock_acquire(&w->lock) < 0)
        return -1;
    uint64_t waiters, flushes;
    llpy_sync_counts(w->group, &waiters, &flushes);
    switch (which) {
    case LLPY_COUNT_SYNC_WAITERS:
        *out = waiters;
        break;
    case LLPY_COUNT_SYNC_FLUSHES:
        *out = flushes;
        break;
    case LLPY_COUNT_RANGE_SYNCS:
        *out = llpy_policy_range_syncs(w->policy);
        break;
    default:
        *out = llpy_output_bounced(w->out);
    }
    llpy_lock_release(&w->lock);
    return 0;
}

int llpy_writer_set_before_sync(llpy_writer *w, PyObject *hook) {
    if (llpy_lock_acquire(&w->lock) < 0)
        return -1;
    PyObject *old = llpy_sync_swap_hook(w->group, hook);
    llpy_lock_release(&w->lock);
    Py_XDECREF(old);
    return 0;
}
