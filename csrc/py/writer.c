/*
 * writer.c - the Writer type: its arguments, locking, writing a record
 * (whose bytes go out through writer_output.c), rolling back a failed write
 * so that a record lands whole or not at all, flush, sync and close. The
 * target is opened by writer_open.c; mode "a" starts where writer_append.c
 * says.
 */
#include "arrow.h"
#include "binding.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <sys/uio.h>
#include <unistd.h>
#endif

/*
 * After a failed write: drop this record's bytes that are still buffered. If
 * the target already has some of them, the log holds a torn record; the next
 * record then starts in a fresh block so readers resynchronize before it.
 */
typedef struct {
    uint64_t offset; /* log offset where the record's bytes begin */
    int pad_next;    /* whether it was to start a fresh block */
} writer_mark;

static writer_mark writer_mark_now(const llpy_writer *self) {
    writer_mark mark = {self->core.offset, self->pad_next};
    return mark;
}

static void writer_rollback(llpy_writer *self, writer_mark mark) {
    if (self->written <= mark.offset) {
        self->len = (size_t)(mark.offset - self->written);
        self->pad_next = mark.pad_next;
    } else {
        self->len = 0;
        self->pad_next = 1;
    }
    self->core.offset = self->written + self->len;
}

static int writer_raise_pending(llpy_writer *self) {
    if (self->os_error == 0)
        return 0;
    errno = self->os_error;
    self->os_error = 0;
    PyErr_SetFromErrno(PyExc_OSError);
    return -1;
}

static int writer_check_open(llpy_writer *self) {
    if (self->closed || self->closing || self->buf == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        self->closed || self->closing
                            ? "I/O operation on closed writer"
                            : "Writer is not initialized");
        return -1;
    }
    return 0;
}

/* Writes the record at data, n bytes long (lock held), kept alive by the
 * caller; returns its offset in *offset. */
static int writer_put_encoded(llpy_writer *self, const uint8_t *data, size_t n,
                              uint64_t *offset) {
    writer_mark mark = writer_mark_now(self);
    int rc;
    if (self->file == NULL && n >= LLPY_GIL_THRESHOLD) {
        /* The caller pins the memory while the GIL is released. */
        Py_BEGIN_ALLOW_THREADS
        rc = llpy_writer_encode(self, data, n, offset);
        Py_END_ALLOW_THREADS
    } else {
        rc = llpy_writer_encode(self, data, n, offset);
    }
    if (rc < 0) {
        writer_rollback(self, mark);
        writer_raise_pending(self);
        return -1;
    }
    return 0;
}

/* A compressed log's record is written as its zstd frame. */
static int writer_put_bytes(llpy_writer *self, const uint8_t *data, size_t n,
                            uint64_t *offset) {
    if (!self->compress || n == 0) /* an empty record has no frame */
        return writer_put_encoded(self, data, n, offset);
    PyObject *frame = llpy_writer_compress(data, n);
    if (frame == NULL)
        return -1;
    int rc =
        writer_put_encoded(self, (const uint8_t *)PyBytes_AS_STRING(frame),
                           (size_t)PyBytes_GET_SIZE(frame), offset);
    Py_DECREF(frame);
    return rc;
}

/* Writes one record (lock held); returns its offset in *offset. */
static int writer_put(llpy_writer *self, PyObject *obj, uint64_t *offset) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "a record must be a bytes-like object, not %.100s",
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    int rc = writer_put_bytes(self, view.buf, (size_t)view.len, offset);
    PyBuffer_Release(&view);
    return rc;
}

static int writer_flush_locked(llpy_writer *self) {
    int rc;
    if (self->file == NULL && self->regular && self->len <= LLPY_PAGE) {
        /* A page into the page cache: giving the GIL up and taking it back
         * costs more, and while it is given up the threads that want this
         * writer only wake to wait for its lock. */
        rc = llpy_writer_flush_buffer(self);
        if (rc == 0)
            llpy_sync_after_output(self);
        return rc < 0 ? writer_raise_pending(self) : 0;
    }
    if (self->file == NULL) {
        Py_BEGIN_ALLOW_THREADS
        rc = llpy_writer_flush_buffer(self);
        if (rc == 0)
            llpy_sync_after_output(self);
        Py_END_ALLOW_THREADS
        return rc < 0 ? writer_raise_pending(self) : 0;
    }
    if (llpy_writer_flush_buffer(self) < 0)
        return -1;
    PyObject *r = PyObject_CallMethod(self->file, "flush", NULL);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    }
    Py_XDECREF(r);
    return 0;
}

/* Flushes when the buffer reached its limit (every call when unbuffered). */
static int writer_maybe_flush(llpy_writer *self) {
    if (self->len > 0 && self->len >= self->limit)
        return writer_flush_locked(self);
    return 0;
}

/* A durable call hands everything to the target before it waits. */
static int writer_flush_for(llpy_writer *self, int sync) {
    return sync ? writer_flush_locked(self) : writer_maybe_flush(self);
}

/* write(data, *, sync=None) and write_many(records, *, sync=None): the one
 * argument, and whether the call is durable (None: the writer's sync=). */
static int parse_write_args(llpy_writer *self, const char *fname,
                            PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames, PyObject **arg, int *sync) {
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *flag = nkw == 1 ? args[nargs] : Py_None;
    if (nargs != 1 || nkw > 1 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(
                         PyTuple_GET_ITEM(kwnames, 0), "sync") != 0)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes one argument and the keyword sync", fname);
        return -1;
    }
    if (flag != Py_None && !PyBool_Check(flag)) {
        PyErr_Format(PyExc_TypeError,
                     "sync must be a bool or None, not %.100s",
                     Py_TYPE(flag)->tp_name);
        return -1;
    }
    *arg = args[0];
    *sync = flag == Py_None ? self->sync_default : flag == Py_True;
    return 0;
}

/* writer_put_bytes over a group of Arrow values (an llpy_arrow_put_fn):
 * runs of short records encoded straight into the buffer by the core,
 * their checksums side by side; any other record alone. */
static int writer_put_arrow(void *ctx, const uint8_t *const *data,
                            const size_t *len, size_t n) {
    llpy_writer *self = ctx;
    for (size_t i = 0; i < n;) {
        size_t k = 0, written = 0;
        if (!self->compress && !self->pad_next)
            k = llog_writer_add_run(&self->core, data + i, len + i, n - i,
                                    self->buf + self->len,
                                    self->cap - self->len, &written);
        self->len += written;
        if (k > 0) {
            i += k;
            continue;
        }
        uint64_t offset; /* cut, another dialect, or no room: alone */
        if (writer_put_bytes(self, data[i], len[i], &offset) < 0)
            return -1;
        i++;
    }
    return 0;
}

/* write_many over Arrow data (writer_arrow.c): all of it is taken and
 * checked before the lock is, then written from its buffers. */
static PyObject *writer_write_arrow(llpy_writer *self, PyObject *obj,
                                    int sync) {
    llpy_arrow_data *d = llpy_arrow_import(obj);
    if (d == NULL)
        return NULL;
    Py_ssize_t count = -1;
    uint64_t end = 0;
    if (llpy_lock_acquire(&self->lock) == 0) {
        if (writer_check_open(self) == 0)
            count = llpy_arrow_write(d, writer_put_arrow, self);
        /* Records written before an error still reach the target. */
        int flushed = self->closed ? 0 : writer_flush_for(self, sync);
        if (flushed < 0 && count >= 0)
            count = -1;
        end = self->written;
        llpy_lock_release(&self->lock);
    }
    llpy_arrow_free(d);
    if (count >= 0 && sync && llpy_sync_wait(self, end) < 0)
        count = -1;
    return count < 0 ? NULL : PyLong_FromSsize_t(count);
}

static PyObject *Writer_write(PyObject *op, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames) {
    llpy_writer *self = (llpy_writer *)op;
    PyObject *data;
    int sync;
    if (parse_write_args(self, "write", args, nargs, kwnames, &data, &sync) <
        0)
        return NULL;
    uint64_t offset = 0;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    writer_mark mark = writer_mark_now(self);
    if (rc == 0)
        rc = writer_put(self, data, &offset);
    if (rc == 0 && writer_flush_for(self, sync) < 0) {
        /* write() raised: its record must not reach the log later (a retry
         * would write it twice). Records before it stay buffered. */
        writer_rollback(self, mark);
        rc = -1;
    }
    uint64_t end = self->written;
    llpy_lock_release(&self->lock);
    if (rc == 0 && sync && llpy_sync_wait(self, end) < 0)
        rc = -1;
    return rc < 0 ? NULL : PyLong_FromUnsignedLongLong(offset);
}

/* The exception being raised by write_many learns, as .written, how many
 * records the call took before it: they stay written. */
static void raise_with_written(Py_ssize_t count) {
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *n = PyLong_FromSsize_t(count);
    if (n == NULL || PyObject_SetAttrString(exc, "written", n) < 0)
        PyErr_Clear(); /* (an exception without a __dict__ goes as it is) */
    Py_XDECREF(n);
    PyErr_SetRaisedException(exc);
}

/* A list or tuple is checked whole before its first record is written, as
 * Arrow data is: a bad item then leaves the log as it was. */
static int check_records(PyObject *seq) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_buffer view;
        if (PyObject_GetBuffer(item, &view, PyBUF_SIMPLE) == 0) {
            PyBuffer_Release(&view);
            continue;
        }
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "record %zd must be a bytes-like object, not %.100s "
                         "(none of the %zd records was written)",
                         i, Py_TYPE(item)->tp_name, n);
        }
        raise_with_written(0);
        return -1;
    }
    return 0;
}

static PyObject *Writer_write_many(PyObject *op, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames) {
    llpy_writer *self = (llpy_writer *)op;
    PyObject *iterable;
    int sync;
    if (parse_write_args(self, "write_many", args, nargs, kwnames, &iterable,
                         &sync) < 0)
        return NULL;
    /* A Reader, itself an Arrow stream of a struct type, is iterated. */
    if (!PyObject_TypeCheck(iterable,
                            llpy_state_of(Py_TYPE(op))->reader_type) &&
        llpy_arrow_exportable(iterable))
        return writer_write_arrow(self, iterable, sync);
    if ((PyList_Check(iterable) || PyTuple_Check(iterable)) &&
        check_records(iterable) < 0)
        return NULL;
    PyObject *it = PyObject_GetIter(iterable);
    if (it == NULL)
        return NULL;
    if (llpy_lock_acquire(&self->lock) < 0) {
        Py_DECREF(it);
        return NULL;
    }
    Py_ssize_t count = 0;
    int rc = writer_check_open(self);
    PyObject *item;
    while (rc == 0 && (item = PyIter_Next(it)) != NULL) {
        uint64_t offset;
        rc = writer_put(self, item, &offset);
        Py_DECREF(item);
        if (rc == 0)
            count++;
    }
    if (rc == 0 && PyErr_Occurred())
        rc = -1; /* the iterator raised */
    /* Records written before an error still reach the target. */
    int flushed = self->closed ? 0 : writer_flush_for(self, sync);
    uint64_t end = self->written;
    llpy_lock_release(&self->lock);
    Py_DECREF(it);
    if (rc < 0 || flushed < 0 || (sync && llpy_sync_wait(self, end) < 0)) {
        if (rc < 0 || flushed < 0)
            raise_with_written(count);
        return NULL;
    }
    return PyLong_FromSsize_t(count);
}

/* A method that runs `locked` on an open writer under its lock: None. */
static PyObject *writer_run_locked(PyObject *op,
                                   int (*locked)(llpy_writer *)) {
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    if (rc == 0)
        rc = locked(self);
    llpy_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Writer_flush(PyObject *op, PyObject *unused) {
    (void)unused;
    return writer_run_locked(op, writer_flush_locked);
}

/* flush(), then a group commit up to what it wrote (writer_sync.c). */
static PyObject *Writer_sync(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    if (rc == 0)
        rc = writer_flush_locked(self);
    uint64_t end = self->written;
    llpy_lock_release(&self->lock);
    if (rc < 0 || llpy_sync_wait(self, end) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Writer_tell(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    uint64_t offset = self->core.offset;
    llpy_lock_release(&self->lock);
    return rc < 0 ? NULL : PyLong_FromUnsignedLongLong(offset);
}

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

/* Closes the target; the first error is raised, after everything is released.
 */
static int writer_close_locked(llpy_writer *self) {
    if (self->closed || self->closing)
        return 0;
    int rc = 0;
    if (self->buf != NULL && !target_closed(self))
        rc = llpy_writer_finish(self);
    if (rc == 0 && self->buf != NULL &&
        (self->len > 0 || !target_closed(self)))
        rc = writer_flush_locked(self);
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    /* Threads waiting for a flush get it before the descriptor closes. */
    if (llpy_sync_close(self) < 0 && exc == NULL)
        exc = PyErr_GetRaisedException();
    PyErr_Clear();
    llpy_sync_release(self);
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
    if (writer_check_open((llpy_writer *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Writer_exit(PyObject *op, PyObject *args) {
    (void)args;
    return Writer_close(op, NULL);
}

static PyObject *Writer_reduce(PyObject *op, PyObject *unused) {
    (void)op;
    (void)unused;
    PyErr_SetString(PyExc_TypeError, "cannot pickle a Writer");
    return NULL;
}

static int Writer_init(PyObject *op, PyObject *args, PyObject *kwds) {
    llpy_writer *self = (llpy_writer *)op;
    static char *kwlist[] = {
        "target",          "mode",        "buffering",
        "closefd",         "dialect",     "log_number",
        "recycle",         "compression", "sync_offsets",
        "storage_options", "sync",        "bytes_per_sync",
        "preallocate",     "lock",        NULL};
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
            args, kwds, "O|O$OOOOOOOOOOOO!:Writer", kwlist, &target, &mode,
            &buffering, &flags[0], &dialect, &log_number, &flags[1],
            &compression, &flags[2], &storage_options, &sync, &per_sync,
            &preallocate, &PyBool_Type, &lock) ||
        llpy_parse_flag(flags[0], "closefd", &closefd) < 0 ||
        llpy_parse_flag(flags[1], "recycle", &recycle) < 0 ||
        llpy_parse_flag(flags[2], "sync_offsets", &sync_offsets) < 0)
        return -1;
    self->mode = 'w';
    self->use_lock = lock == Py_True;
    if ((mode != NULL && llpy_writer_parse_mode(mode, &self->mode) < 0) ||
        llpy_writer_parse_buffering(buffering, &self->limit) < 0 ||
        llpy_sync_options(self, target, sync, per_sync, preallocate) < 0 ||
        llpy_writer_dialect_options(self, target, dialect, log_number, recycle,
                                    compression, sync_offsets) < 0)
        return -1;
    self->cap =
        self->limit < LLPY_DEFAULT_BUFFER ? LLPY_DEFAULT_BUFFER : self->limit;
    if (llpy_writer_open_target(self, target, mode, closefd, storage_options) <
        0)
        return -1;
    llog_writer_init(&self->core, self->written);
    self->range_start = self->prealloc_end = self->written;
    llpy_sync_after_output(self); /* the first reservation */
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
    return llpy_writer_start(self);
}

static PyObject *Writer_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    PyObject *self = llpy_new_object(type, offsetof(llpy_writer, lock),
                                     offsetof(llpy_writer, fd));
    if (self != NULL)
        ((llpy_writer *)self)->dir_fd = -1;
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

static PyObject *Writer_get_bounced(PyObject *op, void *closure) {
    (void)closure;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    uint64_t n = self->bounced;
    llpy_lock_release(&self->lock);
    return PyLong_FromUnsignedLongLong(n);
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

static int Writer_traverse(PyObject *op, visitproc visit, void *arg) {
    llpy_writer *self = (llpy_writer *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->file);
    Py_VISIT(self->group.before_sync);
    return 0;
}

static int Writer_clear(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->file);
    Py_CLEAR(self->group.before_sync);
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
    {"tell", Writer_tell, METH_NOARGS, LLPY_DOC_Writer_tell},
    {"close", Writer_close, METH_NOARGS, LLPY_DOC_Writer_close},
    {"__enter__", Writer_enter, METH_NOARGS, LLPY_DOC_Writer___enter__},
    {"__exit__", Writer_exit, METH_VARARGS, LLPY_DOC_Writer___exit__},
    {"__reduce__", Writer_reduce, METH_NOARGS, LLPY_DOC_Writer___reduce__},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Writer_getset[] = {
    {"closed", Writer_get_closed, NULL, LLPY_DOC_Writer_closed, NULL},
    {"_sync_waiters", llpy_sync_get_waiters, NULL,
     LLPY_DOC_Writer__sync_waiters, NULL},
    {"_sync_flushes", llpy_sync_get_flushes, NULL,
     LLPY_DOC_Writer__sync_flushes, NULL},
    {"_range_syncs", llpy_sync_get_range_syncs, NULL,
     LLPY_DOC_Writer__range_syncs, NULL},
    {"_before_sync", llpy_sync_get_hook, llpy_sync_set_hook,
     LLPY_DOC_Writer__before_sync, NULL},
    {"_blocks_bounced", Writer_get_bounced, NULL,
     LLPY_DOC_Writer__blocks_bounced, NULL},
    {"mode", Writer_get_mode, NULL, LLPY_DOC_Writer_mode, NULL},
    {"name", Writer_get_name, NULL, LLPY_DOC_Writer_name, NULL},
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
