/*
 * writer_write.c - writing records: write(), write_many() (over an
 * iterable, or Arrow data through writer_arrow.c), flush() and sync(), on
 * the parts of the Writer writer.c passes them (its lock, output and group
 * commit, and options). A record lands whole or not at all
 * (writer_output.c rolls a failed one back); a durable call then waits for
 * a group commit (writer_sync.c), which hands the buffer over for it. One
 * verb per job: a record is put (writer_put_*, llpy_output_put), the
 * buffer is handed over (*_hand_over*).
 */
#include "args.h"
#include "arrow.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "writer_internal.h"

#include "log_writer.h"

#include <string.h>

/* What writer_put returns when the target failed (its exception set), as
 * against -1 for a record refused before anything was handed over. */
#define PUT_TARGET_FAILED (-2)

/* The bytes of a record given as a bytes-like object (release the view);
 * 0, or -1 with TypeError. */
static int writer_get_record(PyObject *obj, Py_buffer *view) {
    return llpy_get_bytes_for(
        obj, view, "a record must be a bytes-like object, not %.100s");
}

/* A compressed log's record is written as its zstd frame (an empty record
 * has none): put, or for write() (`whole`) put and handed over as
 * llpy_output_write does. */
static int writer_put_frame(llpy_output *out, int whole, int sync,
                            const uint8_t *data, size_t n, uint64_t *offset,
                            uint64_t *end) {
    PyObject *frame = n > 0 ? llpy_writer_compress(data, n) : NULL;
    if (frame == NULL && n > 0)
        return -1;
    if (frame != NULL) {
        data = (const uint8_t *)PyBytes_AS_STRING(frame);
        n = (size_t)PyBytes_GET_SIZE(frame);
    }
    int rc = whole ? llpy_output_write(out, data, n, sync, offset)
                   : llpy_output_put(out, data, n, offset, end);
    Py_XDECREF(frame);
    return rc < 0 ? PUT_TARGET_FAILED : 0;
}

/* Puts one record given as a bytes-like object (lock held), as the log
 * stores it: its offset in *offset, its end in *end. */
static int writer_put_object(llpy_output *out, int opts, PyObject *obj,
                             uint64_t *offset, uint64_t *end) {
    Py_buffer view;
    if (writer_get_record(obj, &view) < 0)
        return -1;
    const uint8_t *data = view.buf;
    int rc;
    if (opts & LLPY_WRITE_COMPRESS)
        rc = writer_put_frame(out, 0, 0, data, (size_t)view.len, offset, end);
    else if (llpy_output_put(out, data, (size_t)view.len, offset, end) < 0)
        rc = PUT_TARGET_FAILED;
    else
        rc = 0;
    PyBuffer_Release(&view);
    return rc;
}

/* write()'s record (lock held): put, then handed over as the call asks
 * (llpy_output_write). */
static int writer_write_object(llpy_output *out, int opts, int sync,
                               PyObject *obj, uint64_t *offset) {
    Py_buffer view;
    if (writer_get_record(obj, &view) < 0)
        return -1;
    uint64_t end;
    const uint8_t *data = view.buf;
    int rc;
    if (opts & LLPY_WRITE_COMPRESS)
        rc = writer_put_frame(out, 1, sync, data, (size_t)view.len, offset,
                              &end);
    else if (llpy_output_write(out, data, (size_t)view.len, sync, offset) < 0)
        rc = PUT_TARGET_FAILED;
    else
        rc = 0;
    PyBuffer_Release(&view);
    return rc;
}

/* Hands the buffer over when it reached its limit, or for a durable call;
 * records queued a failure drops are told (writer_sync.c). */
static int writer_hand_over_for(llpy_sync_group *g, llpy_output *out,
                                int sync) {
    return llpy_sync_after_hand_over(g, llpy_output_hand_over_for(out, sync));
}

/* write(data, /, *, sync=None) and write_many(records, /, *, sync=None), by
 * the stub's parameter list sig: the one argument, and whether the call is
 * durable (None: the writer's sync=). The two lists have one shape, so
 * write's OUT serves both (llpy_args_fast refuses a sig of another count). */
static int parse_write_args(int opts, const llpy_sig *sig,
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
    *sync = flag == Py_None ? (opts & LLPY_WRITE_SYNC) != 0 : flag == Py_True;
    return 0;
}

/* The parts an Arrow write puts its records with (writer_put_arrow). */
typedef struct {
    llpy_output *out;
    int opts;
} arrow_put;

/* writer_put_object over a group of Arrow values (an llpy_arrow_put_fn):
 * runs of short records encoded straight into the buffer by the core,
 * their checksums side by side; any other record alone. */
static int writer_put_arrow(void *ctx, const uint8_t *const *data,
                            const size_t *len, size_t n) {
    const arrow_put *p = ctx;
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        if (!(p->opts & LLPY_WRITE_COMPRESS))
            k = llpy_output_put_run(p->out, data + i, len + i, n - i);
        if (k > 0) {
            i += k;
            continue;
        }
        uint64_t offset, end; /* cut, another dialect, or no room: alone */
        int rc = p->opts & LLPY_WRITE_COMPRESS
                     ? writer_put_frame(p->out, 0, 0, data[i], len[i], &offset,
                                        &end)
                     : llpy_output_put(p->out, data[i], len[i], &offset, &end);
        if (rc < 0)
            return -1;
        i++;
    }
    return 0;
}

/* write_many over Arrow data (writer_arrow.c): all of it is taken and
 * checked before the lock is, then written from its buffers. */
static PyObject *writer_write_arrow(llpy_lock *lock, llpy_output *out,
                                    llpy_sync_group *g, int opts,
                                    PyObject *obj, int sync) {
    llpy_arrow_data *d = llpy_arrow_import(obj);
    if (d == NULL)
        return NULL;
    Py_ssize_t count = -1;
    uint64_t end = 0;
    arrow_put p = {out, opts};
    if (llpy_lock_acquire(lock) == 0) {
        if (llpy_output_check_open(out) == 0 &&
            llpy_sync_hand_over_queued(g) == 0)
            count = llpy_arrow_write(d, writer_put_arrow, &p);
        /* Records written before an error still reach the target. */
        int flushed =
            llpy_output_closed(out) ? 0 : writer_hand_over_for(g, out, sync);
        if (flushed < 0 && count >= 0)
            count = -1;
        end = llpy_output_written(out);
        llpy_lock_release(lock);
    }
    llpy_arrow_free(d);
    if (count >= 0 && sync && llpy_sync_wait(g, end) < 0)
        count = -1;
    return count < 0 ? NULL : PyLong_FromSsize_t(count);
}

/* A durable write() while a flush is in flight (lock held): its record is
 * left buffered for the next leader, who hands over every such record in
 * one write. */
static int writer_put_deferred(llpy_output *out, int opts, PyObject *data,
                               uint64_t *offset) {
    llpy_output_mark mark = llpy_output_mark_now(out);
    uint64_t end;
    int rc = writer_put_object(out, opts, data, offset, &end);
    if (rc == 0)
        llpy_output_defer(out, mark);
    return rc;
}

PyObject *llpy_writer_write(llpy_lock *lock, llpy_output *out,
                            llpy_sync_group *g, int opts,
                            PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    PyObject *data;
    int sync;
    if (parse_write_args(opts, LLPY_SIG_Writer_write, args, nargs, kwnames,
                         &data, &sync) < 0)
        return NULL;
    uint64_t offset = 0, end;
    if (llpy_lock_acquire(lock) < 0)
        return NULL;
    int rc = llpy_output_check_open(out);
    int defer = rc == 0 && sync && llpy_sync_defers(g);
    if (rc == 0 && defer) {
        rc = writer_put_deferred(out, opts, data, &offset);
    } else if (rc == 0 && (rc = llpy_sync_hand_over_queued(g)) == 0) {
        rc = writer_write_object(out, opts, sync, data, &offset);
        if (rc == PUT_TARGET_FAILED) /* records queued may be dropped */
            llpy_sync_after_hand_over(g, -1);
    }
    if (rc == 0 && sync) {
        end = defer ? llpy_output_offset(out) : llpy_output_written(out);
        if (llpy_sync_wait_locked(g, end) < 0) /* gives the lock up */
            return NULL;
        return PyLong_FromUnsignedLongLong(offset);
    }
    llpy_lock_release(lock);
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
    Py_ssize_t out;       /* records known to be in the target */
    int failed;           /* a hand-over failed: the rest are dropped */
    llpy_output_mark cut; /* where the last of them ends */
    uint64_t inline_ends[RECORD_ENDS_INLINE];
} record_ends;

static void record_ends_init(record_ends *e, llpy_output_mark start) {
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
static int record_ends_reserve(record_ends *e, const llpy_output *out) {
    if (e->tail < e->cap)
        return 0;
    record_ends_settle(e, llpy_output_written(out));
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
static Py_ssize_t record_ends_finish(record_ends *e, llpy_output *out) {
    if (!e->failed)
        return e->out + (Py_ssize_t)(e->tail - e->head);
    record_ends_settle(e, llpy_output_written(out));
    if (e->head < e->tail && llpy_output_offset(out) > e->cut.offset)
        llpy_output_rollback(out, e->cut);
    return e->out;
}

static void record_ends_free(record_ends *e) {
    if (e->ends != e->inline_ends)
        PyMem_Free(e->ends);
}

/* write_many's loop over an iterator (lock held): 0, or -1 with an
 * exception set; e lists the records written. */
static int write_items(llpy_output *out, int opts, PyObject *it,
                       record_ends *e) {
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        uint64_t offset;
        int rc = record_ends_reserve(e, out);
        if (rc == 0)
            rc =
                writer_put_object(out, opts, item, &offset, &e->ends[e->tail]);
        Py_DECREF(item);
        e->failed = rc == PUT_TARGET_FAILED;
        if (rc < 0)
            return -1;
        e->tail++;
    }
    return PyErr_Occurred() ? -1 : 0; /* the iterator raised */
}

/* write_many's records from an iterator, under the lock: how many were
 * written (and are kept), or -1 with an exception set. */
static Py_ssize_t writer_write_items(llpy_output *out, llpy_sync_group *g,
                                     int opts, PyObject *it, int sync,
                                     uint64_t *end) {
    int rc = llpy_output_check_open(out);
    if (rc == 0)
        rc = llpy_sync_hand_over_queued(g);
    record_ends e;
    record_ends_init(&e, llpy_output_mark_now(out));
    if (rc == 0)
        rc = write_items(out, opts, it, &e);
    /* Records written before an error still reach the target; the first
     * error is the one raised. */
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    int flushed =
        llpy_output_closed(out) ? 0 : writer_hand_over_for(g, out, sync);
    if (exc != NULL) {
        PyErr_Clear();
        PyErr_SetRaisedException(exc);
    }
    e.failed |= flushed < 0;
    Py_ssize_t count = record_ends_finish(&e, out);
    record_ends_free(&e);
    *end = llpy_output_written(out);
    if (rc < 0 || flushed < 0) {
        raise_with_written(count);
        return -1;
    }
    return count;
}

PyObject *llpy_writer_write_many(PyObject *op, llpy_lock *lock,
                                 llpy_output *out, llpy_sync_group *g,
                                 int opts, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *iterable;
    int sync;
    if (parse_write_args(opts, LLPY_SIG_Writer_write_many, args, nargs,
                         kwnames, &iterable, &sync) < 0)
        return NULL;
    /* A Reader, itself an Arrow stream of a struct type, is iterated. */
    if (!PyObject_TypeCheck(iterable,
                            llpy_state_of(Py_TYPE(op))->reader_type) &&
        llpy_arrow_exportable(iterable))
        return writer_write_arrow(lock, out, g, opts, iterable, sync);
    if (check_iterable(iterable) < 0 ||
        ((PyList_Check(iterable) || PyTuple_Check(iterable)) &&
         check_records(iterable) < 0))
        return NULL;
    PyObject *it = iterate_records(iterable);
    if (it == NULL)
        return NULL;
    if (llpy_lock_acquire(lock) < 0) {
        Py_DECREF(it);
        return NULL;
    }
    uint64_t end;
    Py_ssize_t count = writer_write_items(out, g, opts, it, sync, &end);
    llpy_lock_release(lock);
    Py_DECREF(it);
    if (count < 0 || (sync && llpy_sync_wait(g, end) < 0))
        return NULL;
    return PyLong_FromSsize_t(count);
}

PyObject *llpy_writer_flush(llpy_lock *lock, llpy_output *out,
                            llpy_sync_group *g) {
    if (llpy_lock_acquire(lock) < 0)
        return NULL;
    int rc = llpy_output_check_open(out);
    if (rc == 0)
        rc = llpy_sync_hand_over(g);
    llpy_lock_release(lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* flush(), then a group commit up to what it wrote (writer_sync.c). */
PyObject *llpy_writer_sync(llpy_lock *lock, llpy_output *out,
                           llpy_sync_group *g) {
    if (llpy_lock_acquire(lock) < 0)
        return NULL;
    int rc = llpy_output_check_open(out);
    if (rc == 0)
        rc = llpy_sync_hand_over(g);
    uint64_t end = llpy_output_written(out);
    llpy_lock_release(lock);
    if (rc < 0 || llpy_sync_wait(g, end) < 0)
        return NULL;
    Py_RETURN_NONE;
}
