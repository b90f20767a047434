/*
 * writer_write.c - writing records: write(), write_many() (over an
 * iterable, or Arrow data through writer_arrow.c), flush() and sync(). A
 * record lands whole or not at all: a failed write is rolled back to where
 * the record began. Its bytes go out through writer_output.c; a durable
 * call then waits for a group commit (writer_sync.c). One verb per job: a
 * record is put (writer_put_*, llpy_writer_put), the buffer is handed over
 * (*_hand_over*).
 */
#include "args.h"
#include "arrow.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "writer_internal.h"

#include <errno.h>
#include <string.h>

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

int llpy_writer_check_open(llpy_writer *self) {
    if (self->closed || self->closing || self->buf == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        self->closed || self->closing
                            ? "I/O operation on closed Writer"
                            : "Writer is not initialized");
        return -1;
    }
    return 0;
}

/* What writer_put returns when the target failed (its exception set), as
 * against -1 for a record refused before anything was handed over. */
#define PUT_TARGET_FAILED (-2)

/* Puts a record as the log stores it (its bytes, or a compressed log's
 * zstd frame) at data, n bytes long (lock held), kept alive by the caller;
 * returns its offset in *offset. */
static int writer_put_stored(llpy_writer *self, const uint8_t *data, size_t n,
                             uint64_t *offset) {
    writer_mark mark = writer_mark_now(self);
    int rc;
    if (self->file == NULL && n >= LLPY_GIL_THRESHOLD) {
        /* The caller pins the memory while the GIL is released. */
        Py_BEGIN_ALLOW_THREADS
        rc = llpy_writer_put(self, data, n, offset);
        Py_END_ALLOW_THREADS
    } else {
        rc = llpy_writer_put(self, data, n, offset);
    }
    if (rc < 0) {
        writer_rollback(self, mark);
        writer_raise_pending(self);
        return PUT_TARGET_FAILED;
    }
    return 0;
}

/* A compressed log's record is written as its zstd frame. */
static int writer_put_record(llpy_writer *self, const uint8_t *data, size_t n,
                             uint64_t *offset) {
    if (!self->compress || n == 0) /* an empty record has no frame */
        return writer_put_stored(self, data, n, offset);
    PyObject *frame = llpy_writer_compress(data, n);
    if (frame == NULL)
        return -1;
    int rc = writer_put_stored(self, (const uint8_t *)PyBytes_AS_STRING(frame),
                               (size_t)PyBytes_GET_SIZE(frame), offset);
    Py_DECREF(frame);
    return rc;
}

/* Writes one record (lock held); returns its offset in *offset. */
static int writer_put_object(llpy_writer *self, PyObject *obj,
                             uint64_t *offset) {
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
    int rc = writer_put_record(self, view.buf, (size_t)view.len, offset);
    PyBuffer_Release(&view);
    return rc;
}

/* A failed hand-off with the records of queued durable write() calls still
 * buffered (its exception set): they are dropped, and each of those calls
 * raises the same error. Records buffered before them stay, as after any
 * failed flush. */
static void writer_drop_deferred(llpy_writer *self) {
    if (!self->deferred)
        return;
    writer_mark mark = {self->deferred_from, self->deferred_pad};
    writer_rollback(self, mark);
    self->deferred = 0;
    llpy_sync_dropped(self, self->core.offset);
}

/* A durable write() queued behind a flush in flight leaves its record to
 * the next leader, who hands over every such record in one write. Records
 * queued before it are still buffered, unless its put handed the whole
 * buffer over (a full buffer, a large record): the queue starts anew. */
static void writer_defer(llpy_writer *self, writer_mark mark) {
    if (self->deferred && self->written <= self->deferred_from)
        return;
    self->deferred = 1;
    self->deferred_from = mark.offset;
    self->deferred_pad = mark.pad_next;
}

static int writer_hand_over_buffered(llpy_writer *self) {
    int rc;
    if (self->file == NULL && self->regular && self->len <= LLPY_PAGE) {
        /* A page into the page cache: giving the GIL up and taking it back
         * costs more, and while it is given up the threads that want this
         * writer only wake to wait for its lock. */
        rc = llpy_writer_hand_over_buffer(self);
        if (rc == 0)
            llpy_policy_after_output(self->policy, self->fd, self->written);
        return rc < 0 ? writer_raise_pending(self) : 0;
    }
    if (self->file == NULL) {
        Py_BEGIN_ALLOW_THREADS
        rc = llpy_writer_hand_over_buffer(self);
        if (rc == 0)
            llpy_policy_after_output(self->policy, self->fd, self->written);
        Py_END_ALLOW_THREADS
        return rc < 0 ? writer_raise_pending(self) : 0;
    }
    if (llpy_writer_hand_over_buffer(self) < 0)
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

int llpy_writer_hand_over(llpy_writer *self) {
    int rc = writer_hand_over_buffered(self);
    if (self->len == 0)
        self->deferred = 0; /* every record queued for a flush handed over */
    if (rc < 0)
        writer_drop_deferred(self);
    return rc;
}

int llpy_writer_hand_over_queued(llpy_writer *self) {
    return self->deferred ? llpy_writer_hand_over(self) : 0;
}

/* Flushes when the buffer reached its limit (every call when unbuffered). */
static int writer_hand_over_if_full(llpy_writer *self) {
    if (self->len > 0 && self->len >= self->limit)
        return llpy_writer_hand_over(self);
    return 0;
}

/* A durable call hands everything to the target before it waits. */
static int writer_hand_over_for(llpy_writer *self, int sync) {
    return sync ? llpy_writer_hand_over(self) : writer_hand_over_if_full(self);
}

/* write(data, /, *, sync=None) and write_many(records, /, *, sync=None), by
 * the stub's parameter list sig: the one argument, and whether the call is
 * durable (None: the writer's sync=). The two lists have one shape, so
 * write's OUT serves both (llpy_args_fast refuses a sig of another count). */
static int parse_write_args(llpy_writer *self, const llpy_sig *sig,
                            PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames, PyObject **arg, int *sync) {
    PyObject *flag;
    if (llpy_args_fast(sig, args, nargs, kwnames,
                       LLPY_OUT_Writer_write(arg, &flag)) < 0)
        return -1;
    if (flag == NULL)
        flag = Py_None;
    if (flag != Py_None && !PyBool_Check(flag)) {
        PyErr_Format(PyExc_TypeError,
                     "sync must be a bool or None, not %.100s",
                     Py_TYPE(flag)->tp_name);
        return -1;
    }
    *sync = flag == Py_None ? self->sync_default : flag == Py_True;
    return 0;
}

/* writer_put_record over a group of Arrow values (an llpy_arrow_put_fn):
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
        if (writer_put_record(self, data[i], len[i], &offset) < 0)
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
        if (llpy_writer_check_open(self) == 0 &&
            llpy_writer_hand_over_queued(self) == 0)
            count = llpy_arrow_write(d, writer_put_arrow, self);
        /* Records written before an error still reach the target. */
        int flushed = self->closed ? 0 : writer_hand_over_for(self, sync);
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

PyObject *llpy_writer_write(PyObject *op, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames) {
    llpy_writer *self = (llpy_writer *)op;
    PyObject *data;
    int sync;
    if (parse_write_args(self, LLPY_SIG_Writer_write, args, nargs, kwnames,
                         &data, &sync) < 0)
        return NULL;
    uint64_t offset = 0;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = llpy_writer_check_open(self);
    int defer = rc == 0 && sync && llpy_sync_defers(self);
    if (rc == 0 && !defer)
        rc = llpy_writer_hand_over_queued(self);
    writer_mark mark = writer_mark_now(self);
    if (rc == 0)
        rc = writer_put_object(self, data, &offset);
    if (rc == 0 && defer) {
        writer_defer(self, mark);
    } else if (rc == 0 && writer_hand_over_for(self, sync) < 0) {
        /* write() raised: its record must not reach the log later (a retry
         * would write it twice). Records before it stay buffered. */
        writer_rollback(self, mark);
        rc = -1;
    }
    if (rc == 0 && sync) {
        uint64_t end = defer ? self->core.offset : self->written;
        if (llpy_sync_wait_locked(self, end) < 0) /* gives the lock up */
            return NULL;
        return PyLong_FromUnsignedLongLong(offset);
    }
    llpy_lock_release(&self->lock);
    return rc < 0 ? NULL : PyLong_FromUnsignedLongLong(offset);
}

/* The exception being raised by write_many learns, as .written, how many
 * of its records are in the target: they stay written. */
static void raise_with_written(Py_ssize_t count) {
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *n = PyLong_FromSsize_t(count);
    if (n == NULL || PyObject_SetAttrString(exc, "written", n) < 0)
        PyErr_Clear(); /* (an exception without a __dict__ goes as it is) */
    Py_XDECREF(n);
    PyErr_SetRaisedException(exc);
}

/* bytes, str and their kin iterate as ints or characters: one record given
 * where an iterable of them belongs. */
static int check_iterable(PyObject *obj) {
    if (!PyBytes_Check(obj) && !PyByteArray_Check(obj) &&
        !PyMemoryView_Check(obj) && !PyUnicode_Check(obj))
        return 0;
    PyErr_Format(PyExc_TypeError,
                 "write_many() takes an iterable of records (bytes-like "
                 "objects), not %.100s: write() writes one record",
                 Py_TYPE(obj)->tp_name);
    raise_with_written(0);
    return -1;
}

static PyObject *iterate_records(PyObject *obj) {
    PyObject *it = PyObject_GetIter(obj);
    if (it == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "write_many() takes an iterable of records (bytes-like "
                     "objects), not %.100s",
                     Py_TYPE(obj)->tp_name);
    }
    if (it == NULL)
        raise_with_written(0);
    return it;
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

/*
 * Where write_many's records end in the log, for those not yet known to be
 * in the target: after a failed hand-over the call counts exactly the
 * records that reached it, and drops the others from the buffer, as a
 * failed write() drops its record. Only buffered records are listed, so the
 * list stays about as short as the buffer holds records.
 */
#define RECORD_ENDS_INLINE 64

typedef struct {
    uint64_t *ends;
    size_t head, tail, cap;
    Py_ssize_t out;  /* records known to be in the target */
    int failed;      /* a hand-over failed: the rest are dropped */
    writer_mark cut; /* where the last of them ends */
    uint64_t inline_ends[RECORD_ENDS_INLINE];
} record_ends;

static void record_ends_init(record_ends *e, writer_mark start) {
    e->ends = e->inline_ends;
    e->head = e->tail = 0;
    e->cap = RECORD_ENDS_INLINE;
    e->out = 0;
    e->failed = 0;
    e->cut = start;
}

/* Counts the listed records that reached `written` as out. */
static void record_ends_settle(record_ends *e, uint64_t written) {
    while (e->head < e->tail && e->ends[e->head] <= written) {
        e->cut.offset = e->ends[e->head++];
        e->cut.pad_next = 0;
        e->out++;
    }
}

/* Room to list one more record; 0, or -1 with MemoryError. */
static int record_ends_reserve(record_ends *e, uint64_t written) {
    if (e->tail < e->cap)
        return 0;
    record_ends_settle(e, written);
    size_t n = e->tail - e->head;
    if (n == e->cap) {
        uint64_t *grown = PyMem_Malloc(2 * e->cap * sizeof *grown);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(grown, e->ends + e->head, n * sizeof *grown);
        if (e->ends != e->inline_ends)
            PyMem_Free(e->ends);
        e->ends = grown;
        e->cap *= 2;
    } else {
        memmove(e->ends, e->ends + e->head, n * sizeof *e->ends);
    }
    e->head = 0;
    e->tail = n;
    return 0;
}

/* The records the call wrote: all of them, or after a failed hand-over
 * the ones in the target, the rest dropped. */
static Py_ssize_t record_ends_finish(record_ends *e, llpy_writer *self) {
    if (!e->failed)
        return e->out + (Py_ssize_t)(e->tail - e->head);
    record_ends_settle(e, self->written);
    if (e->head < e->tail && self->core.offset > e->cut.offset)
        writer_rollback(self, e->cut);
    return e->out;
}

static void record_ends_free(record_ends *e) {
    if (e->ends != e->inline_ends)
        PyMem_Free(e->ends);
}

/* write_many's loop over an iterator (lock held): 0, or -1 with an
 * exception set; e lists the records written. */
static int write_items(llpy_writer *self, PyObject *it, record_ends *e) {
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        uint64_t offset;
        int rc = record_ends_reserve(e, self->written);
        if (rc == 0)
            rc = writer_put_object(self, item, &offset);
        Py_DECREF(item);
        e->failed = rc == PUT_TARGET_FAILED;
        if (rc < 0)
            return -1;
        e->ends[e->tail++] = self->core.offset;
    }
    return PyErr_Occurred() ? -1 : 0; /* the iterator raised */
}

PyObject *llpy_writer_write_many(PyObject *op, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames) {
    llpy_writer *self = (llpy_writer *)op;
    PyObject *iterable;
    int sync;
    if (parse_write_args(self, LLPY_SIG_Writer_write_many, args, nargs,
                         kwnames, &iterable, &sync) < 0)
        return NULL;
    /* A Reader, itself an Arrow stream of a struct type, is iterated. */
    if (!PyObject_TypeCheck(iterable,
                            llpy_state_of(Py_TYPE(op))->reader_type) &&
        llpy_arrow_exportable(iterable))
        return writer_write_arrow(self, iterable, sync);
    if (check_iterable(iterable) < 0 ||
        ((PyList_Check(iterable) || PyTuple_Check(iterable)) &&
         check_records(iterable) < 0))
        return NULL;
    PyObject *it = iterate_records(iterable);
    if (it == NULL)
        return NULL;
    if (llpy_lock_acquire(&self->lock) < 0) {
        Py_DECREF(it);
        return NULL;
    }
    int rc = llpy_writer_check_open(self);
    if (rc == 0)
        rc = llpy_writer_hand_over_queued(self);
    record_ends e;
    record_ends_init(&e, writer_mark_now(self));
    if (rc == 0)
        rc = write_items(self, it, &e);
    /* Records written before an error still reach the target; the first
     * error is the one raised. */
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    int flushed = self->closed ? 0 : writer_hand_over_for(self, sync);
    if (exc != NULL) {
        PyErr_Clear();
        PyErr_SetRaisedException(exc);
    }
    e.failed |= flushed < 0;
    Py_ssize_t count = record_ends_finish(&e, self);
    record_ends_free(&e);
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
    int rc = llpy_writer_check_open(self);
    if (rc == 0)
        rc = locked(self);
    llpy_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *llpy_writer_flush(PyObject *op, PyObject *unused) {
    (void)unused;
    return writer_run_locked(op, llpy_writer_hand_over);
}

/* flush(), then a group commit up to what it wrote (writer_sync.c). */
PyObject *llpy_writer_sync(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = llpy_writer_check_open(self);
    if (rc == 0)
        rc = llpy_writer_hand_over(self);
    uint64_t end = self->written;
    llpy_lock_release(&self->lock);
    if (rc < 0 || llpy_sync_wait(self, end) < 0)
        return NULL;
    Py_RETURN_NONE;
}
