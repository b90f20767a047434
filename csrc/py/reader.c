/*
 * reader.c - the Reader type: iteration (the per-record hot path, kept in
 * this one file so that the compiler can inline it), assembling fragmented
 * records into bytes, recovery modes and on_corruption, pickling, getters.
 * Blocks come from reader_fill.c.
 */
#include "arrow.h"
#include "binding.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

/* Physical records at least this long are checksummed without the GIL. */
#define GIL_FRAGMENT (16 * 1024)
/* Lengths remembered of fragmented records are capped at this: a guess of
 * the next one's, sizing the bytes object it is assembled in. */
#define ASSEMBLY_HINT_MAX ((size_t)64 << 20)

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
    PyMem_Free(self->block);
    self->block = NULL;
}

/* With no on_corruption, a corruption that is skipped or ends the log
 * quietly (skip, point_in_time) is never silent: it warns. */
static PyObject *reader_warn(llpy_reader *self, PyObject *c,
                             const char *what) {
    llpy_state *st = llpy_state_of(Py_TYPE(self));
    /* A path by its repr; a buffer or file object by its type alone. */
    PyObject *source =
        llpy_is_path(self->name)
            ? PyObject_Repr(self->name)
            : PyUnicode_FromFormat("a %.100s source",
                                   Py_TYPE(self->name)->tp_name);
    /* The same text for every corruption of a source: the warnings filter
     * then shows it once per place; the corruption rides along. */
    PyObject *text =
        source
            ? PyUnicode_FromFormat("%U %s (pass on_corruption to hear of each "
                                   "corruption, or filter CorruptionWarning)",
                                   source, what)
            : NULL;
    PyObject *warning =
        text ? PyObject_CallFunction(st->corruption_warning, "OO", text, c)
             : NULL;
    PyObject *r = warning ? llpy_warn(warning) : NULL;
    Py_XDECREF(warning);
    Py_XDECREF(text);
    Py_XDECREF(source);
    return r;
}

/* A torn tail no writer leaves, with no on_corruption: warned of once (the
 * records and reports stay LevelDB's; this is only a warning). */
static int reader_warn_tail(llpy_reader *self, const llog_event *ev) {
    if (self->warned_tail || self->on_corruption != NULL)
        return 0;
    self->warned_tail = 1;
    PyObject *c = Py_BuildValue("(KKs)", (unsigned long long)ev->offset,
                                (unsigned long long)ev->size,
                                "a torn tail no writer leaves (not a log?)");
    if (c == NULL)
        return -1;
    self->in_callback++;
    llpy_lock_release(&self->lock);
    PyObject *r = reader_warn(
        self, c, "ends in bytes no writer of this format leaves: not a log?");
    (void)llpy_lock_acquire(&self->lock); /* this thread gave it up */
    self->in_callback--;
    Py_DECREF(c);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Passes a corruption to on_corruption, or warns (without holding the
 * lock, so the callback or a warning hook may use the reader). */
static int reader_notify(llpy_reader *self, PyObject *c) {
    int raises = self->recovery == LLOG_RECOVER_TOLERATE_TAIL ||
                 self->recovery == LLOG_RECOVER_ABSOLUTE;
    if (self->on_corruption == NULL && raises)
        return 0; /* the exception says it */
    PyObject *cb = self->on_corruption ? Py_NewRef(self->on_corruption) : NULL;
    self->in_callback++; /* events may still be queued in the core */
    llpy_lock_release(&self->lock);
    PyObject *r = cb ? PyObject_CallOneArg(cb, c)
                     : reader_warn(self, c,
                                   self->recovery == LLOG_RECOVER_SKIP
                                       ? "is damaged: the damage was skipped"
                                       : "is damaged: reading stopped before "
                                         "the damage");
    Py_XDECREF(cb);
    /* Cannot fail: this thread no longer owns the lock. */
    (void)llpy_lock_acquire(&self->lock);
    self->in_callback--;
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

static void reader_finish(llpy_reader *self) {
    self->finished = 1;
    if (self->kind == LLPY_SRC_BUFFER && self->view.obj != NULL)
        PyBuffer_Release(&self->view); /* exhausted: let the buffer go */
}

/* Applies the recovery mode to a corruption; returns 1 to keep reading,
 * 0 to end iteration cleanly, -1 with an exception set. The event's reason
 * is copied first: the core may be used by another thread during the
 * callback, or closed by it. */
static int reader_on_corruption(llpy_reader *self, llpy_state *st,
                                const llog_event *ev, int torn) {
    PyObject *c = PyObject_CallFunction(
        st->corruption_type, "KKs", (unsigned long long)ev->offset,
        (unsigned long long)ev->size, ev->reason);
    if (c == NULL)
        return -1;
    self->dropped_bytes += ev->size;
    int rc = reader_notify(self, c);
    if (rc == 0 && self->recovery == LLOG_RECOVER_SKIP) {
        rc = !self->closed; /* the callback may have closed the reader */
    } else if (rc == 0) {
        reader_finish(self);
        if (self->recovery != LLOG_RECOVER_POINT_IN_TIME) {
            llpy_raise_corruption(st, torn, c);
            rc = -1;
        }
    }
    Py_DECREF(c);
    return rc;
}

/* The larger of a and b when they are within 1/16 of each other, else 0. */
static size_t agreeing(size_t a, size_t b) {
    size_t hi = a > b ? a : b, lo = a > b ? b : a;
    return hi - lo <= hi / 16 ? hi : 0;
}

/* Module state that readers in several threads read and write: sizes
 * remembered as guesses, where a stale value is harmless but a torn one
 * must not happen (free-threaded builds have no GIL to prevent it). */
static size_t shared_size(const Py_ssize_t *at) {
#ifdef Py_GIL_DISABLED
    return (size_t)_Py_atomic_load_ssize_relaxed(at);
#else
    return (size_t)*at;
#endif
}

static void shared_size_set(Py_ssize_t *at, size_t value) {
#ifdef Py_GIL_DISABLED
    _Py_atomic_store_ssize_relaxed(at, (Py_ssize_t)value);
#else
    *at = (Py_ssize_t)value;
#endif
}

/* The length of the last fragmented record this reader (or, before its
 * first, any reader) assembled: a guess of the next one's. */
size_t llpy_reader_assembly_hint(llpy_reader *self) {
    if (self->last_len > 0)
        return self->last_len;
    return shared_size(&llpy_state_of(Py_TYPE(self))->assembly_hint);
}

/* The length the next fragmented record can be expected to have, when the
 * last two agree (else 0): it is then built in a bytes object that long. */
static size_t assembly_expect(llpy_reader *self) {
    if (self->prev_len > 0)
        return agreeing(self->last_len, self->prev_len);
    return shared_size(&llpy_state_of(Py_TYPE(self))->assembly_expect);
}

static void assembly_learn(llpy_reader *self, size_t len) {
    if (len > ASSEMBLY_HINT_MAX)
        len = ASSEMBLY_HINT_MAX;
    llpy_state *st = llpy_state_of(Py_TYPE(self));
    size_t expect = agreeing(len, llpy_reader_assembly_hint(self));
    self->prev_len = self->last_len;
    self->last_len = len;
    shared_size_set(&st->assembly_hint, len);
    shared_size_set(&st->assembly_expect, expect);
}

/* Room for `need` bytes in the scratch buffer, what it holds kept. */
static uint8_t *scratch_reserve(llpy_reader *self, size_t need, size_t *cap) {
    if (need > self->scratch_cap) {
        size_t size = self->scratch_cap < 65536 ? 65536 : self->scratch_cap;
        while (size < need)
            size = size > (size_t)PY_SSIZE_T_MAX / 2 ? need : 2 * size;
        uint8_t *grown = PyMem_RawRealloc(self->scratch, size);
        if (grown == NULL)
            return NULL;
        self->scratch = grown;
        self->scratch_cap = size;
    }
    *cap = self->scratch_cap;
    return self->scratch;
}

/* Room for `need` bytes in self->assembly, a bytes object. NULL when out of
 * memory (an exception set), or when a record being built outgrows it
 * (`len` > 0: no exception; it then goes on in the scratch buffer). */
static uint8_t *bytes_reserve(llpy_reader *self, size_t len, size_t need,
                              size_t *cap) {
    size_t have =
        self->assembly ? (size_t)PyBytes_GET_SIZE(self->assembly) : 0;
    if (have < need && len > 0)
        return NULL; /* longer than expected */
    if (have < need) {
        size_t expect = assembly_expect(self);
        size_t size = expect > need ? expect : need;
        Py_CLEAR(self->assembly);
        self->assembly = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
        if (self->assembly == NULL && size > need) {
            PyErr_Clear();
            self->assembly = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)need);
        }
        if (self->assembly == NULL)
            return NULL;
    }
    *cap = (size_t)PyBytes_GET_SIZE(self->assembly);
    return (uint8_t *)PyBytes_AS_STRING(self->assembly);
}

/*
 * The core's reserve callback. When the last fragmented records had about
 * the same length (most logs repeat their sizes), the next one is built
 * straight in a bytes object of that length and cut to its own at the end
 * (realloc shrinks in place): returning it costs no copy. Otherwise, or
 * once a record outgrows that object, it is built in the reader's scratch
 * buffer and copied into a bytes object of its exact length at the end:
 * growing a bytes object would copy as well, and sizing them by guesses
 * that miss makes malloc map and unmap memory, whose pages must fault in
 * again each time. The core may call this without the GIL (see
 * reader_next_locked): take it back meanwhile.
 */
static uint8_t *assembly_reserve(void *ctx, size_t len, size_t need,
                                 size_t *cap) {
    llpy_reader *self = ctx;
    PyThreadState *released = self->released;
    if (released != NULL)
        PyEval_RestoreThread(released);
    uint8_t *buf = NULL;
    if (len == 0) { /* a new record */
        self->in_scratch = assembly_expect(self) == 0;
        if (self->in_scratch)
            Py_CLEAR(self->assembly); /* what a dropped record left */
    }
    if (need > (size_t)PY_SSIZE_T_MAX) {
        /* no buffer that large */
    } else if (!self->in_scratch) {
        buf = bytes_reserve(self, len, need, cap);
        if (buf == NULL && len > 0) {       /* outgrown */
            assert(self->assembly != NULL); /* it holds the first len */
            self->in_scratch = 1;
            buf = scratch_reserve(self, need, cap);
            if (buf != NULL)
                memcpy(buf, PyBytes_AS_STRING(self->assembly), len);
            Py_CLEAR(self->assembly);
        }
    } else {
        buf = scratch_reserve(self, need, cap);
    }
    PyErr_Clear(); /* out of memory: the core reports LLOG_ERR_NOMEM */
    if (released != NULL)
        self->released = PyEval_SaveThread();
    return buf;
}

/* The record the core finished assembling, as a bytes object. */
static PyObject *assembly_take(llpy_reader *self, size_t len) {
    assembly_learn(self, len);
    if (self->in_scratch) {
        assert(len <= self->scratch_cap);
        return PyBytes_FromStringAndSize((const char *)self->scratch,
                                         (Py_ssize_t)len);
    }
    PyObject *rec = self->assembly;
    self->assembly = NULL;
    assert(rec != NULL && (size_t)PyBytes_GET_SIZE(rec) >= len && len > 0);
    if ((size_t)PyBytes_GET_SIZE(rec) != len &&
        _PyBytes_Resize(&rec, (Py_ssize_t)len) < 0)
        return NULL;
    return rec;
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
        rec = assembly_take(self, ev->len);
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

/* The end of the data fed so far: a torn tail is damage in "absolute"
 * mode; otherwise a buffer, which never grows, is finished. */
static void reader_eof(llpy_reader *self, llpy_state *st,
                       const llog_event *ev) {
    if (ev->torn && self->recovery == LLOG_RECOVER_ABSOLUTE) {
        reader_on_corruption(self, st, ev, 1);
        return;
    }
    if (ev->torn && self->recovery == LLOG_RECOVER_POINT_IN_TIME &&
        self->dialect == LLOG_DIALECT_ROCKSDB) {
        reader_on_corruption(self, st, ev, 0); /* RocksDB reports it */
        return;
    }
    if (ev->torn && ev->implausible && reader_warn_tail(self, ev) < 0)
        return;
    if (self->kind == LLPY_SRC_BUFFER)
        reader_finish(self); /* a buffer never grows */
}

/* The next record as bytes, NULL at the end (no exception) or on error. */
static PyObject *reader_next_locked(llpy_reader *self, llpy_state *st) {
    llog_event ev;
    for (;;) {
        if (self->finished || self->closed)
            return NULL;
        reader_step(self, &ev);
        switch (ev.kind) {
        case LLOG_EV_RECORD:
            return reader_record(self, &ev);
        case LLOG_EV_CORRUPTION:
            if (reader_on_corruption(self, st, &ev, 0) <= 0)
                return NULL;
            break;
        case LLOG_EV_NEED_BLOCK:
            if (llpy_reader_fill(self) < 0)
                return NULL;
            break;
        case LLOG_EV_EOF:
            reader_eof(self, st, &ev);
            return NULL;
        case LLOG_EV_META:
            if (llpy_reader_on_meta(self, &ev) < 0)
                return NULL;
            break;
        case LLOG_EV_DONE:
            reader_finish(self);
            return NULL;
        case LLOG_EV_ERROR:
            reader_finish(self);
            llpy_raise_status((llog_status)ev.size);
            return NULL;
        }
    }
}

/* The next record for an Arrow batch (reader_arrow.c): as
 * reader_next_locked, with the payload left where the core put it instead
 * of copied into bytes. 1 with the record in *ev, 0 at the end, -1. */
int llpy_reader_next_view(llpy_reader *self, llpy_state *st, llog_event *ev) {
    for (;;) {
        if (self->finished || self->closed)
            return 0;
        reader_step(self, ev);
        switch (ev->kind) {
        case LLOG_EV_RECORD:
            if (ev->assembled) {
                assembly_learn(self, ev->len);
                ev->data = self->in_scratch
                               ? self->scratch
                               : (uint8_t *)PyBytes_AS_STRING(self->assembly);
            }
            self->has_last = 1;
            self->last_record_offset = ev->offset;
            return 1;
        case LLOG_EV_CORRUPTION: {
            int rc = reader_on_corruption(self, st, ev, 0);
            if (rc <= 0)
                return rc;
            break;
        }
        case LLOG_EV_NEED_BLOCK:
            if (llpy_reader_fill(self) < 0)
                return -1;
            break;
        case LLOG_EV_EOF:
            reader_eof(self, st, ev);
            return PyErr_Occurred() ? -1 : 0;
        case LLOG_EV_META:
            if (llpy_reader_on_meta(self, ev) < 0)
                return -1;
            break;
        default: /* DONE, ERROR */
            reader_finish(self);
            if (ev->kind == LLOG_EV_ERROR)
                llpy_raise_status((llog_status)ev->size);
            return ev->kind == LLOG_EV_ERROR ? -1 : 0;
        }
    }
}

static int reader_check_open(llpy_reader *self) {
    if (self->closed) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on closed reader");
        return -1;
    }
    return 0;
}

static PyObject *Reader_iternext(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    llpy_state *st = llpy_state_of(Py_TYPE(op));
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    PyObject *rec = NULL;
    if (reader_check_open(self) == 0)
        rec = reader_next_locked(self, st);
    llpy_lock_release(&self->lock);
    return rec;
}

static int parse_recovery(PyObject *obj, llog_recovery *out) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "recovery must be a str, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    for (unsigned i = 0; i < LLOG_RECOVERY_COUNT; i++) {
        if (PyUnicode_CompareWithASCIIString(obj, llog_recovery_name(i)) ==
            0) {
            *out = (llog_recovery)i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "recovery must be 'skip', 'tolerate_tail', 'point_in_time' "
                 "or 'absolute', not %R",
                 obj);
    return -1;
}

static int reader_open_file(llpy_reader *self, PyObject *file) {
    self->kind = LLPY_SRC_FILE;
    self->file = Py_NewRef(file);
    PyObject *r = PyObject_CallMethod(file, "seekable", NULL);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    } else {
        self->seekable = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (self->seekable < 0)
            return -1;
    }
    if (self->seekable) {
        PyObject *pos = PyObject_CallMethod(file, "tell", NULL);
        if (pos == NULL)
            return -1;
        int rc = llpy_parse_offset(pos, "tell()", &self->base);
        Py_DECREF(pos);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Checks the keyword options and fills *opt and the reader's copies. */
static int reader_options(llpy_reader *self, PyObject *recovery, int verify,
                          PyObject *start, PyObject *end,
                          PyObject *on_corruption, llog_reader_options *opt) {
    *opt = (llog_reader_options){.end = LLOG_NO_END,
                                 .verify_checksums = verify,
                                 .reserve = assembly_reserve,
                                 .reserve_ctx = self};
    self->recovery = LLOG_RECOVER_SKIP;
    self->verify_checksums = verify;
    if (recovery != NULL && parse_recovery(recovery, &self->recovery) < 0)
        return -1;
    if (start != NULL && llpy_parse_offset(start, "start", &opt->start) < 0)
        return -1;
    if (end != Py_None && llpy_parse_offset(end, "end", &opt->end) < 0)
        return -1;
    if (opt->end < opt->start) {
        PyErr_Format(
            PyExc_ValueError, "end (%llu) must not be less than start (%llu)",
            (unsigned long long)opt->end, (unsigned long long)opt->start);
        return -1;
    }
    if (on_corruption != Py_None && !PyCallable_Check(on_corruption)) {
        PyErr_SetString(PyExc_TypeError,
                        "on_corruption must be callable or None");
        return -1;
    }
    self->start = opt->start;
    self->end = opt->end;
    return 0;
}

static int reader_open_path(llpy_reader *self, llpy_state *st,
                            PyObject *path) {
    self->kind = LLPY_SRC_FD;
    self->fd = llpy_open_path(st, path, O_RDONLY);
    if (self->fd < 0)
        return -1;
    struct stat info;
    if (fstat(self->fd, &info) == 0 && S_ISDIR(info.st_mode)) {
        errno = EISDIR;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
        return -1;
    }
#ifdef _WIN32
    self->seekable = _lseeki64(self->fd, 0, SEEK_CUR) >= 0;
#else
    self->seekable = lseek(self->fd, 0, SEEK_CUR) >= 0;
#endif
    return 0;
}

/* A URL, opened by leveldb_log._storage: a local file system's path is read
 * as a path; any other store's file object is the reader's own. */
static int reader_open_url(llpy_reader *self, PyObject *url,
                           PyObject *storage_options) {
    PyObject *opened = llpy_open_url(url, "rb", storage_options);
    if (opened == NULL)
        return -1;
    self->storage_options = Py_NewRef(storage_options);
    int rc = PyUnicode_Check(opened)
                 ? reader_open_path(self, llpy_state_of(Py_TYPE(self)), opened)
                 : reader_open_file(self, opened);
    Py_DECREF(opened);
    return rc;
}

/* Opens the source by its kind, and the block buffer a file needs. */
static int reader_open_source(llpy_reader *self, PyObject *source,
                              PyObject *storage_options,
                              llog_reader_options *opt) {
    self->fd = -1;
    int url = llpy_is_url(source);
    if (url < 0)
        return -1;
    if (url) {
        if (reader_open_url(self, source, storage_options) < 0)
            return -1;
        opt->sequential = !self->seekable;
    } else if (storage_options != Py_None) {
        PyErr_SetString(PyExc_ValueError,
                        "storage_options applies to URLs (scheme://...)");
        return -1;
    } else if (llpy_is_path(source)) {
        if (reader_open_path(self, llpy_state_of(Py_TYPE(self)), source) < 0)
            return -1;
        opt->sequential = !self->seekable;
    } else if (PyObject_CheckBuffer(source)) {
        self->kind = LLPY_SRC_BUFFER;
        return PyObject_GetBuffer(source, &self->view, PyBUF_SIMPLE);
    } else if (PyObject_HasAttrString(source, "readinto")) {
        if (reader_open_file(self, source) < 0)
            return -1;
        opt->sequential = !self->seekable;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "Reader source must be a path, a bytes-like object or a "
                     "binary file object, not %.100s",
                     Py_TYPE(source)->tp_name);
        return -1;
    }
    self->block = PyMem_Malloc(self->kind == LLPY_SRC_FD && self->seekable
                                   ? LLPY_READ_CHUNK
                                   : LLOG_BLOCK_SIZE);
    if (self->block == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The options of other dialects (reader_dialect.c). */
static int reader_dialect(llpy_reader *self, PyObject *dialect,
                          PyObject *log_number, PyObject *source,
                          llog_reader_options *opt) {
    opt->recovery = self->recovery;
    if (llpy_dialect_options(dialect, log_number,
                             llpy_is_path(source) ? source : NULL, opt) < 0)
        return -1;
    self->dialect = opt->dialect;
    llpy_dialect_decoder(self, opt);
    self->timestamp_sizes = PyDict_New();
    return self->timestamp_sizes ? 0 : -1;
}

static int Reader_init(PyObject *op, PyObject *args, PyObject *kwds) {
    llpy_reader *self = (llpy_reader *)op;
    static char *kwlist[] = {"source",   "dialect",          "log_number",
                             "recovery", "verify_checksums", "start",
                             "end",      "on_corruption",    "storage_options",
                             NULL};
    PyObject *source, *recovery = NULL, *start = NULL, *end = Py_None;
    PyObject *on_corruption = Py_None, *dialect = NULL, *log_number = NULL;
    PyObject *storage_options = Py_None;
    int verify = 1;
    if (self->core != NULL || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "Reader is already initialized");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOpOOOO:Reader", kwlist,
                                     &source, &dialect, &log_number, &recovery,
                                     &verify, &start, &end, &on_corruption,
                                     &storage_options))
        return -1;
    llog_reader_options opt;
    if (reader_options(self, recovery, verify, start, end, on_corruption,
                       &opt) < 0 ||
        reader_dialect(self, dialect, log_number, source, &opt) < 0 ||
        reader_open_source(self, source, storage_options, &opt) < 0)
        return -1;
    self->name = Py_NewRef(source);
    self->on_corruption =
        on_corruption == Py_None ? NULL : Py_NewRef(on_corruption);
    self->core = llog_reader_new(&opt);
    if (self->core == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
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
    if (reader_check_open((llpy_reader *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_exit(PyObject *op, PyObject *args) {
    (void)args;
    return Reader_close(op, NULL);
}

static PyObject *Reader_iter(PyObject *op) {
    if (reader_check_open((llpy_reader *)op) < 0)
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
    uint64_t last, dropped, in_place;
} reader_counts;

static int reader_counters(PyObject *op, reader_counts *out) {
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    out->has_last = self->has_last;
    out->last = self->last_record_offset;
    out->dropped = self->dropped_bytes;
    out->in_place = self->blocks_in_place;
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
    {"close", Reader_close, METH_NOARGS,
     "close($self, /)\n"
     "--\n\n"
     "Release the source; calling it again does nothing.\n\n"
     "A path or URL the reader opened is closed; a buffer is released; a\n"
     "file object is left open. Iterating a closed reader raises\n"
     "ValueError.\n\n"
     "Returns\n"
     "  None."},
    {"__enter__", Reader_enter, METH_NOARGS,
     "__enter__($self, /)\n"
     "--\n\n"
     "Return the reader itself, for a with statement.\n\n"
     "Raises\n"
     "  ValueError: the reader is closed."},
    {"__exit__", Reader_exit, METH_VARARGS,
     "__exit__($self, exc_type, exc, tb, /)\n"
     "--\n\n"
     "Close the reader (see close()); an exception is not suppressed."},
    {"__reduce__", llpy_reader_reduce, METH_NOARGS,
     "__reduce__($self, /)\n"
     "--\n\n"
     "Pickle a reader over a path as what reopens it where it stands.\n\n"
     "Returns\n"
     "  (leveldb_log._restore.restore_reader, (path, options, progress)).\n\n"
     "Raises\n"
     "  TypeError: the reader is over a buffer or a file object, is\n"
     "    closed, or is inside its on_corruption callback."},
    {"iter_batches", (PyCFunction)(void (*)(void))llpy_reader_iter_batches,
     METH_VARARGS | METH_KEYWORDS,
     "iter_batches($self, /, *, max_records=65536, max_bytes=67108864)\n"
     "--\n\n"
     "Iterate over the records as Arrow batches (leveldb_log.Batch).\n\n"
     "Each batch has the columns offset (uint64) and data (large_binary)\n"
     "and exports __arrow_c_array__: pyarrow.record_batch(batch) takes it.\n"
     "The records, reports and errors are those of iterating the reader\n"
     "itself (which it advances): an exception comes after a batch of the\n"
     "records before it. Following a growing log, the iterator stops at\n"
     "the current end and can be resumed later.\n\n"
     "Arguments\n"
     "  max_records: at most this many records a batch (>= 1).\n"
     "  max_bytes: a batch ends with the record that brings its data to\n"
     "    this many bytes or more (>= 1): it holds less than max_bytes\n"
     "    plus its last record.\n\n"
     "Returns\n"
     "  An iterator of Batch objects.\n\n"
     "Raises\n"
     "  ValueError: a limit below 1; the reader is closed (from next()).\n"
     "  As iteration does: CorruptionError and the rest."},
    {"__arrow_c_stream__",
     (PyCFunction)(void (*)(void))llpy_reader_arrow_stream,
     METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_stream__($self, /, requested_schema=None)\n"
     "--\n\n"
     "Export the records as an Arrow C stream of iter_batches() batches.\n\n"
     "pyarrow.table(reader), polars.DataFrame(reader) and DuckDB's\n"
     "FROM reader read the log through it. Reading the stream advances\n"
     "the reader; an exception raised while reading ends the stream with\n"
     "an error whose text (get_last_error) is 'Type: message'.\n\n"
     "Arguments\n"
     "  requested_schema: ignored (the protocol's best effort).\n\n"
     "Returns\n"
     "  A PyCapsule named \"arrow_array_stream\"."},
    {"_restore", llpy_reader_restore, METH_VARARGS,
     "_restore($self, last, dropped, finished, /)\n"
     "--\n\n"
     "Set the progress counters of an unpickled reader (internal).\n\n"
     "Arguments\n"
     "  last: last_record_offset, or None; dropped: dropped_bytes;\n"
     "  finished: whether the original had reached the end of a buffer.\n\n"
     "Returns\n"
     "  None."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Reader_getset[] = {
    {"dialect", llpy_reader_get_dialect, NULL,
     "The dialect read: 'leveldb', 'rocksdb' or 'pebble'.", NULL},
    {"log_number", llpy_reader_get_log_number, NULL,
     "The log number recyclable records are held to (given, from the\n"
     "file name, or the first recyclable record's), or None.",
     NULL},
    {"compression", llpy_reader_get_compression, NULL,
     "'zstd' once the log said its records are compressed, else None.", NULL},
    {"timestamp_sizes", llpy_reader_get_timestamp_sizes, NULL,
     "Column family id -> user-defined timestamp size, as the log's\n"
     "records stated them so far (a copy).",
     NULL},
    {"predecessor", llpy_reader_get_predecessor, NULL,
     "The previous WAL as the log recorded it: Predecessor(log_number,\n"
     "size, last_sequence), or None.",
     NULL},
    {"recycled", llpy_reader_get_recycled, NULL,
     "True once a recyclable record (one with a log number) was read.", NULL},
    {"last_record_offset", Reader_get_last, NULL,
     "Offset of the first header of the record returned last (None\n"
     "before the first).",
     NULL},
    {"dropped_bytes", Reader_get_dropped, NULL,
     "Total bytes of the corruptions reported so far.", NULL},
    {"closed", Reader_get_closed, NULL, "True once close() was called.", NULL},
    {"recovery", Reader_get_recovery, NULL,
     "The recovery mode: 'skip', 'tolerate_tail', 'point_in_time'\n"
     "or 'absolute'.",
     NULL},
    {"verify_checksums", Reader_get_verify, NULL, "Whether CRCs are checked.",
     NULL},
    {"start", Reader_get_start, NULL,
     "First offset of the range read: records whose first header lies\n"
     "before it are not returned.",
     NULL},
    {"end", Reader_get_end, NULL,
     "End of the range read: records whose first header lies at or\n"
     "after it are not returned (None: no end).",
     NULL},
    {"position", Reader_get_position, NULL,
     "Offset where reading goes on: Reader(source, start=position)\n"
     "returns exactly the records this reader has yet to return. None\n"
     "once closed.",
     NULL},
    {"_blocks_in_place", Reader_get_in_place, NULL,
     "Blocks whose payload was read from the file straight into a\n"
     "record (internal: for tests and benchmarks).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(
    Reader_doc,
    "Reader(source, *, dialect='leveldb', log_number=None, recovery='skip', "
    "verify_checksums=True, start=0, end=None, on_corruption=None, "
    "storage_options=None)\n"
    "--\n\n"
    "Iterate over the records of a LevelDB log, as bytes, in write order.\n"
    "\n"
    "Arguments\n"
    "  source: the log, opened here (a missing path raises at the call):\n"
    "    - a path (str or os.PathLike);\n"
    "    - a URL (scheme://...), opened with fsspec: see storage_options;\n"
    "    - a bytes-like object (bytes, bytearray, memoryview, mmap, ...),\n"
    "      read in place, never copied whole, and released when the\n"
    "      reader is closed or exhausted;\n"
    "    - a binary file object with readinto(), holding the log from its\n"
    "      position when the reader is made.\n"
    "  recovery: what damage does: 'skip' (the default), 'tolerate_tail',\n"
    "    'point_in_time' or 'absolute'; see \"Recovery modes\".\n"
    "  verify_checksums: False skips CRC checks (LevelDB's\n"
    "    checksum=false): a damaged payload is then returned as data.\n"
    "  start, end: only the records whose first header lies in\n"
    "    [start, end); end=None reads to the end. See \"Ranges\".\n"
    "  on_corruption: None, or a callable given a Corruption(offset,\n"
    "    size, reason) for each damage reported; see \"Reports\".\n"
    "  dialect: 'leveldb' (the default), 'rocksdb' or 'pebble'; see\n"
    "    \"Dialects\".\n"
    "  log_number: the number recyclable records must carry (RocksDB,\n"
    "    Pebble); None takes it from a path named NNNNNN.log, else from\n"
    "    the first recyclable record.\n"
    "  storage_options: for a source given as a URL (s3://, gcs://,\n"
    "    memory://, file://, ...), which fsspec opens (pip install\n"
    "    'leveldb-log[fsspec]'): the file system's options, such as\n"
    "    {'anon': True}; None for none. A local file system's URL is read\n"
    "    as a path; any other store's object through a file object the\n"
    "    reader owns and closes.\n"
    "\n"
    "Returns\n"
    "  An iterator: next() gives the next record's payload (bytes).\n"
    "  Properties: last_record_offset, dropped_bytes, position, closed and\n"
    "  the options. close(), or a with statement, releases the source.\n"
    "\n"
    "Dialects\n"
    "  'rocksdb' reads RocksDB's WALs and MANIFESTs: recyclable records\n"
    "  (11-byte headers with the log number), metadata records (never\n"
    "  returned: see compression, timestamp_sizes, predecessor), unknown\n"
    "  types with bit 0x80 skipped, RocksDB's reason texts. A recyclable\n"
    "  record of another log number is an older log's data: the log ends\n"
    "  before it, except in 'skip' mode, which skips it. In a recycled log\n"
    "  'tolerate_tail' ends at damage; 'point_in_time' reports a torn tail.\n"
    "  A zstd-compressed WAL is decompressed record by record (this needs\n"
    "  the extra leveldb-log[rocksdb]). 'pebble' reads Pebble's WALs:\n"
    "  recyclable and walSync chunks (19-byte headers), ending at its\n"
    "  end-of-log trailer. See docs/rocksdb.md.\n"
    "\n"
    "Recovery modes\n"
    "  A torn tail is what a crash leaves at the end of a log: a partial\n"
    "  header, a payload cut short, or a fragmented record without its\n"
    "  last fragment. Any other damage is corruption.\n"
    "\n"
    "  recovery         corruption mid-file           torn tail\n"
    "  'skip'           reported and skipped;         stops before it,\n"
    "                   reading goes on (LevelDB's)   unreported\n"
    "  'tolerate_tail'  raises CorruptionError        stops before it,\n"
    "                                                 unreported\n"
    "  'point_in_time'  reported; iteration ends      stops before it,\n"
    "                   cleanly before it             unreported\n"
    "  'absolute'       raises CorruptionError        raises\n"
    "                                                 TruncatedRecordError\n"
    "\n"
    "  In every mode the records before the damage are returned first.\n"
    "\n"
    "Reports\n"
    "  Without on_corruption, 'skip' and 'point_in_time' issue a\n"
    "  leveldb_log.CorruptionWarning (a UserWarning) through warnings for\n"
    "  each corruption they skip or stop before: shown once per place by\n"
    "  default, an exception under -W error, silenced by a filter. The\n"
    "  raising modes raise instead. A given on_corruption replaces the\n"
    "  warning: it is called for every corruption (in 'absolute', for the\n"
    "  torn tail too) before the mode acts on it, without the reader's\n"
    "  lock held, so it may use the reader; what it raises propagates\n"
    "  from next().\n"
    "\n"
    "Ranges\n"
    "  A record belongs to the range that holds its first header: the\n"
    "  reader returns exactly the records whose first header lies in\n"
    "  [start, end), reading past end to finish the last of them. Readers\n"
    "  over consecutive ranges (see splits()) together return every\n"
    "  record and report every corruption exactly once, wherever the cuts\n"
    "  fall (a corruption by the range its dropped bytes begin in).\n"
    "\n"
    "Following a growing log\n"
    "  Over a path or a file object, iteration stops at the current end\n"
    "  of the log; iterate again later for the records appended since. An\n"
    "  incomplete record at the end is not consumed until it is complete.\n"
    "  A buffer does not grow: the reader is finished at its end. Do not\n"
    "  follow a live log in 'absolute' mode: its torn tail raises.\n"
    "  Reader(source, start=position) resumes where a reader stood, after\n"
    "  a restart too.\n"
    "\n"
    "Pickling\n"
    "  A reader over a path or a URL pickles as what reopens it: the\n"
    "  path or URL, its options (on_corruption and storage_options must\n"
    "  be picklable) and its progress.\n"
    "  Unpickled (or copied with copy.copy or copy.deepcopy) it goes on\n"
    "  exactly where the original stood; a file that is gone by then\n"
    "  raises FileNotFoundError. A reader over a buffer or a file object,\n"
    "  or a closed one, refuses with TypeError.\n"
    "\n"
    "Threads\n"
    "  A reader may be shared by threads: each call holds its lock. A\n"
    "  call on it from a file object's method it is calling raises\n"
    "  RuntimeError instead of deadlocking.\n"
    "\n"
    "Raises\n"
    "  FileNotFoundError, OSError: the path cannot be opened (at the\n"
    "    call); reading fails (from next(): the original OSError).\n"
    "  TypeError: a source of another kind; an argument of the wrong\n"
    "    type; on_corruption not callable.\n"
    "  ValueError: an unknown recovery mode or dialect; start or end\n"
    "    negative or above 2**64 - 1 (the message names which); end <\n"
    "    start; log_number with dialect 'leveldb'; next() on a closed\n"
    "    reader; storage_options with a source that is no URL.\n"
    "  CorruptionError, TruncatedRecordError: from next(), as the\n"
    "    recovery mode says.\n"
    "  ImportError: a URL without fsspec (the message names the extra);\n"
    "    ZstdMissingError, from next(): a compressed WAL with no zstd\n"
    "    binding installed (the message names the extra).");

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
