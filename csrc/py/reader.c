/*
 * reader.c - the Reader type: its fields, slots, properties, methods and
 * docstring, and iteration (the per-record hot path, in this one file so
 * that the compiler can inline it). The fields are this file's alone; the
 * Reader's other files use functions (reader_internal.h): making it is
 * reader_open.c's, what damage does (reports, and the core's verdicts
 * acted on) reader_damage.c's, building fragmented records
 * reader_assembly.c's, and feeding the core blocks reader_fill.c's; the
 * rest of the binding uses reader.h.
 */
#include "arrow.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "llpy_io.h"
#include "module.h"
#include "reader_internal.h"

#include <string.h>

/* Physical records at least this long are checksummed without the GIL.
 * It is not LLPY_GIL_THRESHOLD: the core checks one physical record at a
 * time, and none is longer than a block, so only a share of a block can be
 * worth releasing the GIL for. */
#define GIL_FRAGMENT (16 * 1024)

struct llpy_reader {
    PyObject_HEAD llog_reader *core;
    llpy_lock lock;
    llpy_feed *feed;         /* the source, read (reader_fill.c) */
    llpy_assembly *assembly; /* fragmented records built (reader_assembly.c) */
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
    int finished;    /* no more records, ever */
    unsigned warned; /* enum llpy_reader_warning flags */
    int arrow_spent; /* an Arrow stream export was read to the end */
    int in_callback; /* on_corruption is running (events still queued) */
    int closed;
    int has_last;
    uint64_t last_record_offset;
    uint64_t dropped_bytes;
    PyThreadState *released; /* the GIL's saved state while the core runs
                                without it, else NULL */
    /* Other dialects */
    llog_dialect dialect;
    int has_log_number, recycled; /* the core's, kept when it is freed */
    uint64_t log_number;
    llpy_meta *meta; /* what metadata records said (reader_dialect.c) */
};

/* ---- iteration ---------------------------------------------------------- */

void llpy_reader_finish(llpy_reader *self) {
    self->finished = 1;
    llpy_feed_finished(self->feed); /* exhausted: a buffer is let go */
}

/* The core's next event. A long checksum runs without the GIL, letting
 * other threads run: the object lock keeps the core to this thread, and a
 * buffer source stays exported meanwhile. */
static void reader_step(llpy_reader *self, llog_event *ev) {
    if (llog_reader_next_length(self->core) >= GIL_FRAGMENT) {
        self->released = PyEval_SaveThread();
        llog_reader_next(self->core, ev);
        PyEval_RestoreThread(self->released);
        self->released = NULL;
    } else {
        llog_reader_next(self->core, ev);
    }
}

/* A record event as bytes, or NULL with an exception set. */
static PyObject *reader_record(llpy_reader *self, const llog_event *ev) {
    PyObject *rec;
    if (ev->assembled) {
        rec = llpy_assembly_take(self->assembly, ev->len);
    } else {
        rec = PyBytes_FromStringAndSize((const char *)ev->data,
                                        (Py_ssize_t)ev->len);
    }
    if (rec == NULL)
        return NULL;
    self->has_last = 1;
    self->last_record_offset = ev->offset;
    return rec;
}

/* 1 when an end of the data must be looked at again before it is believed:
 * the data behind it was read by an earlier call, and the file may have
 * grown since (a record completed after it; RocksDB's reader re-reads in
 * the same case). The core asks for the same block again. */
static int reader_eof_stale(const llpy_reader *self, int *fed) {
    if (*fed || llpy_feed_kind(self->feed) == LLPY_SRC_BUFFER)
        return 0;
    *fed = 1;
    return 1;
}

/* The module state, looked up only where a record's way out needs it (the
 * damage and end handlers), not once a record. */
static llpy_state *reader_state(llpy_reader *self) {
    return llpy_state_of(Py_TYPE(self));
}

/* The next record as bytes, NULL at the end (no exception) or on error. */
static PyObject *reader_next_locked(llpy_reader *self) {
    llog_event ev;
    int fed = 0; /* a block was read during this call */
    for (;;) {
        if (self->finished || self->closed)
            return NULL;
        reader_step(self, &ev);
        switch (ev.kind) {
        case LLOG_EV_RECORD:
            return reader_record(self, &ev);
        case LLOG_EV_CORRUPTION:
            if (llpy_reader_on_damage(self, reader_state(self), &ev) <= 0)
                return NULL;
            break;
        case LLOG_EV_NEED_BLOCK:
            fed = 1;
            if (llpy_feed_fill(self->feed) < 0)
                return NULL;
            break;
        case LLOG_EV_EOF:
            if (reader_eof_stale(self, &fed))
                break;
            llpy_reader_on_end(self, reader_state(self), &ev);
            return NULL;
        case LLOG_EV_META:
            if (llpy_meta_on_event(self->meta, &ev) < 0)
                return NULL;
            break;
        case LLOG_EV_DONE:
            llpy_reader_finish(self);
            return NULL;
        case LLOG_EV_ERROR:
            llpy_reader_finish(self);
            llpy_raise_status((llog_status)ev.size);
            return NULL;
        }
    }
}

/* As reader_next_locked, with the payload left where the core put it
 * instead of copied into bytes (reader.h). */
int llpy_reader_next_view(llpy_reader *self, llpy_state *st, llog_event *ev) {
    int fed = 0; /* as in reader_next_locked */
    for (;;) {
        if (self->finished || self->closed)
            return 0;
        reader_step(self, ev);
        switch (ev->kind) {
        case LLOG_EV_RECORD:
            if (ev->assembled)
                llpy_assembly_view(self->assembly, ev);
            self->has_last = 1;
            self->last_record_offset = ev->offset;
            return 1;
        case LLOG_EV_CORRUPTION: {
            int rc = llpy_reader_on_damage(self, st, ev);
            if (rc <= 0)
                return rc;
            break;
        }
        case LLOG_EV_NEED_BLOCK:
            fed = 1;
            if (llpy_feed_fill(self->feed) < 0)
                return -1;
            break;
        case LLOG_EV_EOF:
            if (reader_eof_stale(self, &fed))
                break;
            llpy_reader_on_end(self, st, ev);
            return PyErr_Occurred() ? -1 : 0;
        case LLOG_EV_META:
            if (llpy_meta_on_event(self->meta, ev) < 0)
                return -1;
            break;
        default: /* DONE, ERROR */
            llpy_reader_finish(self);
            if (ev->kind == LLOG_EV_ERROR)
                llpy_raise_status((llog_status)ev->size);
            return ev->kind == LLOG_EV_ERROR ? -1 : 0;
        }
    }
}

static PyObject *Reader_iternext(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    PyObject *rec = NULL;
    if (llpy_reader_check_open(self) == 0)
        rec = reader_next_locked(self);
    llpy_lock_release(&self->lock);
    return rec;
}

/* ---- the type: slots and properties ------------------------------------ */

static PyObject *Reader_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    return llpy_lock_new_object(type, offsetof(llpy_reader, lock));
}

static void reader_close_locked(llpy_reader *self) {
    if (self->closed)
        return;
    self->closed = 1;
    llpy_feed_close(self->feed); /* the source let go */
    if (self->core != NULL) {    /* what the getters still say */
        int told;
        self->dialect = llog_reader_dialect(self->core, &told);
        self->has_log_number =
            llog_reader_log_number(self->core, &self->log_number);
        self->recycled = llog_reader_recycled(self->core);
    }
    llog_reader_free(self->core);
    self->core = NULL;
    llpy_assembly_clear(self->assembly);
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
    PyObject *type, *value, *tb;
    if (!PyArg_ParseTuple(args, LLPY_FORMAT_Reader___exit__("O", "O", "O"),
                          &type, &value, &tb))
        return NULL;
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
    if (self->source == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (llpy_feed_kind(self->feed) == LLPY_SRC_BUFFER)
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
typedef struct {
    int has_last;
    uint64_t last, dropped;
} reader_counts;

static int reader_counters(PyObject *op, reader_counts *out) {
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    out->has_last = self->has_last;
    out->last = self->last_record_offset;
    out->dropped = self->dropped_bytes;
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

/* Where reading goes on is the file's: a closed reader has none (io's
 * rule), while its options and counters stay readable. */
static PyObject *Reader_get_position(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int open = llpy_reader_check_open(self) == 0;
    uint64_t position = open ? llog_reader_position(self->core) : 0;
    llpy_lock_release(&self->lock);
    if (!open)
        return NULL;
    return PyLong_FromUnsignedLongLong(position);
}

static PyObject *Reader_get_name(PyObject *op, void *closure) {
    (void)closure;
    PyObject *name = ((llpy_reader *)op)->name;
    return Py_NewRef(name != NULL ? name : Py_None);
}

/* The dialect read in: with "auto", the one block 0 told (the core's),
 * *told 0 while it has not for good; a closed reader's last. */
static llog_dialect reader_dialect(const llpy_reader *self, int *told) {
    *told = 1;
    return self->core != NULL ? llog_reader_dialect(self->core, told)
                              : self->dialect;
}

static PyObject *Reader_get_dialect(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    int told;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    llog_dialect dialect = reader_dialect(self, &told);
    llpy_lock_release(&self->lock);
    return PyUnicode_FromString(llog_dialect_name(dialect));
}

static PyObject *Reader_get_log_number(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    uint64_t n = 0;
    int known = 0;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    if (self->core != NULL)
        known = llog_reader_log_number(self->core, &n);
    else if (self->has_log_number) { /* closed: what it had */
        known = 1;
        n = self->log_number;
    }
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
    recycled = self->core ? llog_reader_recycled(self->core) : self->recycled;
    llpy_lock_release(&self->lock);
    return PyBool_FromLong(recycled);
}

static PyObject *Reader_get_compression(PyObject *op, void *closure) {
    (void)closure;
    return llpy_meta_compression(((llpy_reader *)op)->meta);
}

static PyObject *Reader_get_timestamp_sizes(PyObject *op, void *closure) {
    (void)closure;
    return llpy_meta_timestamp_sizes(((llpy_reader *)op)->meta);
}

static PyObject *Reader_get_predecessor(PyObject *op, void *closure) {
    (void)closure;
    return llpy_meta_predecessor(((llpy_reader *)op)->meta);
}

/* ---- what the other files use (reader.h) -------------------------------- */

int llpy_reader_acquire(llpy_reader *self) {
    return llpy_lock_acquire(&self->lock);
}

void llpy_reader_release(llpy_reader *self) { llpy_lock_release(&self->lock); }

int llpy_reader_check_open(llpy_reader *self) {
    if (self->closed || self->core == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        self->closed ? "I/O operation on closed Reader"
                                     : "Reader is not initialized");
        return -1;
    }
    return 0;
}

int llpy_reader_runs_possible(const llpy_reader *self) {
    return !self->finished && !self->closed &&
           !llpy_assembly_redirecting(self->assembly);
}

size_t llpy_reader_next_run(llpy_reader *self, llog_run *run) {
    size_t n = llog_reader_next_run(self->core, run);
    if (n > 0) {
        self->has_last = 1;
        self->last_record_offset = run->offsets[run->n - 1];
    }
    return n;
}

void llpy_reader_redirect(llpy_reader *self, llog_reserve_fn fn, void *ctx) {
    llpy_assembly_redirect(self->assembly, fn, ctx);
}

int llpy_reader_redirect_end(llpy_reader *self) {
    uint8_t **pending = NULL; /* payloads read in place, moved with it */
    size_t len = self->feed ? llpy_feed_pending(self->feed, &pending) : 0;
    if (self->assembly == NULL ||
        llpy_assembly_redirect_end(self->assembly, self->core, pending, len) ==
            0)
        return 0;
    llpy_reader_finish(self); /* the core's bytes are going away */
    return -1;
}

int llpy_reader_arrow_spent(llpy_reader *self) { return self->arrow_spent; }

void llpy_reader_set_arrow_spent(llpy_reader *self) { self->arrow_spent = 1; }

int llpy_reader_blocks_of(llpy_reader *self, llpy_reader_blocks *out) {
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    *out = (llpy_reader_blocks){0, 0};
    if (self->feed != NULL)
        llpy_feed_blocks(self->feed, &out->in_place, &out->bounced);
    llpy_lock_release(&self->lock);
    return 0;
}

/* A path or URL: it can be opened again. */
static int reader_over_path(const llpy_reader *self) {
    return self->storage_options != NULL ||
           (self->feed != NULL && llpy_feed_kind(self->feed) == LLPY_SRC_FD);
}

int llpy_reader_state_of(llpy_reader *self, llpy_reader_state *out) {
    int told;
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    llog_dialect dialect = reader_dialect(self, &told);
    *out = (llpy_reader_state){.name = self->source,
                               .on_corruption = self->on_corruption,
                               .storage_options = self->storage_options,
                               .over_path = reader_over_path(self),
                               .closed = self->closed,
                               .in_callback = self->in_callback,
                               .finished = self->finished,
                               .recovery = self->recovery,
                               .dialect = dialect,
                               .told = told,
                               .verify_checksums = self->verify_checksums,
                               .end = self->end,
                               .has_last = self->has_last,
                               .last_record_offset = self->last_record_offset,
                               .dropped_bytes = self->dropped_bytes};
    if (self->core != NULL) {
        out->position = llog_reader_position(self->core);
        if (out->position > self->end) /* read past its range */
            out->position = self->end;
        out->has_log_number =
            llog_reader_log_number(self->core, &out->log_number);
    }
    llpy_lock_release(&self->lock);
    return 0;
}

int llpy_reader_set_progress(llpy_reader *self, int has_last, uint64_t last,
                             uint64_t dropped, int finished) {
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    self->has_last = has_last;
    if (has_last)
        self->last_record_offset = last;
    self->dropped_bytes = dropped;
    if (finished)
        self->finished = 1;
    llpy_lock_release(&self->lock);
    return 0;
}

/* ---- what the Reader's own files use (reader_internal.h) ---------------- */

int llpy_reader_initialized(const llpy_reader *self) {
    return self->core != NULL || self->closed;
}

int llpy_reader_adopt(llpy_reader *self, llog_reader_options *opt,
                      llpy_feed *feed, PyObject *source, PyObject *name,
                      PyObject *on_corruption, PyObject *storage_options) {
    llpy_feed_free(self->feed); /* of an earlier tp_init that failed */
    self->feed = feed;
    Py_XSETREF(self->name, name);
    Py_XSETREF(self->source, Py_NewRef(source));
    Py_XSETREF(self->on_corruption, Py_XNewRef(on_corruption));
    Py_XSETREF(self->storage_options, Py_XNewRef(storage_options));
    self->recovery = opt->recovery;
    self->verify_checksums = opt->verify_checksums;
    self->start = opt->start;
    self->end = opt->end;
    self->dialect = opt->dialect;
    if (self->assembly == NULL)
        self->assembly =
            llpy_assembly_new(llpy_state_of(Py_TYPE(self)), &self->released);
    if (self->meta == NULL)
        self->meta = llpy_meta_new();
    if (self->assembly == NULL || self->meta == NULL ||
        llpy_meta_init(self->meta, opt) < 0)
        return -1;
    opt->reserve = llpy_assembly_reserve;
    opt->reserve_ctx = self->assembly;
    self->core = llog_reader_new(opt);
    if (self->core == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    llpy_feed_attach(feed, self->core, self->assembly);
    return 0;
}

PyObject *llpy_reader_source(const llpy_reader *self) { return self->source; }

PyObject *llpy_reader_on_corruption(const llpy_reader *self) {
    return self->on_corruption;
}

llog_reader *llpy_reader_core(const llpy_reader *self) { return self->core; }

int llpy_reader_over_buffer(const llpy_reader *self) {
    return llpy_feed_kind(self->feed) == LLPY_SRC_BUFFER;
}

int llpy_reader_closed(const llpy_reader *self) { return self->closed; }

void llpy_reader_count_dropped(llpy_reader *self, uint64_t n) {
    self->dropped_bytes += n;
}

int llpy_reader_warned(const llpy_reader *self, enum llpy_reader_warning w) {
    return (self->warned & (unsigned)w) != 0;
}

void llpy_reader_set_warned(llpy_reader *self, enum llpy_reader_warning w) {
    self->warned |= (unsigned)w;
}

int llpy_reader_callback_enter(llpy_reader *self, llog_reserve_fn *fn,
                               void **ctx) {
    *fn = llpy_assembly_redirect_of(self->assembly, ctx);
    if (*fn != NULL && llpy_reader_redirect_end(self) < 0)
        return -1;
    self->in_callback++;
    llpy_lock_release(&self->lock);
    return 0;
}

void llpy_reader_callback_leave(llpy_reader *self, llog_reserve_fn fn,
                                void *ctx) {
    (void)llpy_lock_acquire(&self->lock);
    self->in_callback--;
    if (fn != NULL)
        llpy_reader_redirect(self, fn, ctx);
}

enum llpy_source_change llpy_reader_source_change(llpy_reader *self,
                                                  uint64_t *size) {
    return llpy_feed_change(self->feed, size);
}

/* ---- the type: garbage collection, tables, docstring -------------------- */

static int Reader_traverse(PyObject *op, visitproc visit, void *arg) {
    llpy_reader *self = (llpy_reader *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->source);
    Py_VISIT(self->name);
    Py_VISIT(self->on_corruption);
    Py_VISIT(self->storage_options);
    int rc = llpy_feed_traverse(self->feed, visit, arg);
    return rc || self->meta == NULL
               ? rc
               : llpy_meta_traverse(self->meta, visit, arg);
}

static int Reader_clear(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    Py_CLEAR(self->source);
    Py_CLEAR(self->name);
    Py_CLEAR(self->on_corruption);
    llpy_feed_clear(self->feed);
    if (self->meta != NULL)
        llpy_meta_clear(self->meta);
    Py_CLEAR(self->storage_options);
    return 0;
}

static void Reader_dealloc(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    reader_close_locked(self);
    Reader_clear(op);
    llpy_feed_free(self->feed);
    llpy_assembly_free(self->assembly);
    llpy_meta_free(self->meta);
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
    {"to_arrow", (PyCFunction)(void (*)(void))llpy_reader_to_arrow,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC_Reader_to_arrow},
    {"_restore", llpy_reader_restore, METH_VARARGS, LLPY_DOC_Reader__restore},
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
    {Py_tp_init, llpy_reader_init},    {Py_tp_dealloc, Reader_dealloc},
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
