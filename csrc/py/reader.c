/*
 * reader.c - the Reader's work: iteration (the per-record hot path, kept in
 * this one file so that the compiler can inline it), assembling fragmented
 * records into bytes, recovery modes and on_corruption, and opening a
 * Reader (tp_init: its options and source). Blocks come from reader_fill.c;
 * the type's other slots, properties, methods and docstring are
 * reader_type.c's.
 */
#include "arrow.h"
#include "binding.h"
#include "llpy_io.h"
#include "module.h"

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

/* What a warning of damage advises (a tail no writer leaves has its own). */
#define DAMAGE_ADVICE                                                         \
    " (pass on_corruption to hear of each corruption, or filter "             \
    "CorruptionWarning)"

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
        source ? PyUnicode_FromFormat("%U %s", source, what) : NULL;
    PyObject *warning =
        text ? PyObject_CallFunction(st->corruption_warning, "OO", text, c)
             : NULL;
    PyObject *r = warning ? llpy_warn(warning) : NULL;
    Py_XDECREF(warning);
    Py_XDECREF(text);
    Py_XDECREF(source);
    return r;
}

/* What a callback's lock release suspends: the Arrow batch's redirect. */
typedef struct {
    llog_reserve_fn fn;
    void *ctx;
} redirect_saved;

/* Gives up the lock for a callback, which may use the reader, as may other
 * threads meanwhile (events may still be queued in the core): a redirect
 * ends first, so that nothing of the reader's stays in a batch being
 * filled. 0, or -1 with an exception set (the lock still held). */
static int callback_enter(llpy_reader *self, redirect_saved *saved) {
    saved->fn = self->redirect;
    saved->ctx = self->redirect_ctx;
    if (saved->fn != NULL && llpy_reader_redirect_end(self) < 0)
        return -1;
    self->in_callback++;
    llpy_lock_release(&self->lock);
    return 0;
}

/* Takes the lock back after a callback (this cannot fail: this thread no
 * longer owns it), and the redirect up again. */
static void callback_leave(llpy_reader *self, const redirect_saved *saved) {
    (void)llpy_lock_acquire(&self->lock);
    self->in_callback--;
    if (saved->fn != NULL)
        llpy_reader_redirect(self, saved->fn, saved->ctx);
}

/* A torn tail no writer leaves: warned of once, in every mode and with or
 * without on_corruption (the records and reports stay LevelDB's, which end
 * a log there silently; this judgement is only a warning). */
static int reader_warn_tail(llpy_reader *self, const llog_event *ev) {
    if (self->warned_tail)
        return 0;
    self->warned_tail = 1;
    llpy_state *st = llpy_state_of(Py_TYPE(self));
    PyObject *c = PyObject_CallFunction(
        st->corruption_type, "KKs", (unsigned long long)ev->offset,
        (unsigned long long)ev->size, LLOG_REASON_IMPLAUSIBLE_TAIL);
    if (c == NULL)
        return -1;
    redirect_saved saved;
    if (callback_enter(self, &saved) < 0) {
        Py_DECREF(c);
        return -1;
    }
    PyObject *r = reader_warn(self, c,
                              "ends in bytes no writer of this format leaves: "
                              "not a log? (filter CorruptionWarning to "
                              "silence this)");
    callback_leave(self, &saved);
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
    redirect_saved saved;
    if (callback_enter(self, &saved) < 0)
        return -1;
    PyObject *cb = self->on_corruption ? Py_NewRef(self->on_corruption) : NULL;
    PyObject *r = cb ? PyObject_CallOneArg(cb, c)
                     : reader_warn(self, c,
                                   self->recovery == LLOG_RECOVER_SKIP
                                       ? "is damaged: the damage was "
                                         "skipped" DAMAGE_ADVICE
                                       : "is damaged: reading stopped before "
                                         "the damage" DAMAGE_ADVICE);
    Py_XDECREF(cb);
    callback_leave(self, &saved);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* A Corruption for the event, counted in dropped_bytes and passed to the
 * callback (or warned of): *c holds it (NULL on failure); 0, or -1 with an
 * exception set. */
static int reader_report(llpy_reader *self, llpy_state *st,
                         const llog_event *ev, PyObject **c) {
    *c = PyObject_CallFunction(st->corruption_type, "KKs",
                               (unsigned long long)ev->offset,
                               (unsigned long long)ev->size, ev->reason);
    if (*c == NULL)
        return -1;
    self->dropped_bytes += ev->size;
    return reader_notify(self, *c);
}

/* Passes on a further report of the same damage, which the mode then acts
 * on with the first: 0, or -1 with an exception set. */
static int reader_report_also(llpy_reader *self, llpy_state *st,
                              const llog_event *ev) {
    PyObject *c;
    int rc = reader_report(self, st, ev, &c);
    Py_XDECREF(c);
    return rc;
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
    /* Asked before the callback runs: it may close the reader. */
    llog_event also;
    int has_also =
        self->core != NULL && llog_reader_torn_also(self->core, ev, &also);
    PyObject *c;
    int rc = reader_report(self, st, ev, &c);
    if (c == NULL)
        return -1;
    if (rc == 0 && has_also) /* RocksDB reports both before it stops */
        rc = reader_report_also(self, st, &also);
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
        self->in_redirect = self->redirect != NULL;
        self->in_scratch = !self->in_redirect && assembly_expect(self) == 0;
        if (self->in_scratch || self->in_redirect)
            Py_CLEAR(self->assembly); /* what a dropped record left */
    }
    if (need > (size_t)PY_SSIZE_T_MAX) {
        /* no buffer that large */
    } else if (self->in_redirect) {
        buf = self->redirect(self->redirect_ctx, len, need, cap);
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

void llpy_reader_redirect(llpy_reader *self, llog_reserve_fn fn, void *ctx) {
    assert(!self->in_redirect);
    self->redirect = fn;
    self->redirect_ctx = ctx;
}

/* Where the bytes of the reader's that lie in the redirect's buffer begin
 * and end: the record being assembled (where it begins in *open, else
 * NULL), then the payloads read in place for it and not yet fed (which may
 * outlive it: see reader_fill.c). */
static int redirected_span(llpy_reader *self, uint8_t **open, uint8_t **from,
                           uint8_t **end) {
    size_t len;
    *open = *from = *end = NULL;
    if (llog_reader_assembly(self->core, open, &len)) {
        *from = *open;
        *end = *open + len;
    }
#ifdef LLPY_IN_PLACE_BLOCKS
    if (self->in_place_left > 0) {
        uint8_t *b = self->in_place_body;
        uint8_t *e = b + (size_t)self->in_place_left * LLOG_MAX_FRAGMENT;
        if (*from == NULL || b < *from)
            *from = b;
        if (*end == NULL || e > *end)
            *end = e;
    }
#endif
    return *from != NULL;
}

int llpy_reader_redirect_end(llpy_reader *self) {
    self->redirect = NULL;
    int was = self->in_redirect;
    self->in_redirect = 0;
    uint8_t *open, *from, *end;
    size_t cap;
    if (!was || self->core == NULL ||
        !redirected_span(self, &open, &from, &end))
        return 0;
    uint8_t *to = scratch_reserve(self, (size_t)(end - from), &cap);
    if (to == NULL) {
        reader_finish(self); /* the core's bytes are going away */
        PyErr_NoMemory();
        return -1;
    }
    memcpy(to, from, (size_t)(end - from));
    if (open != NULL)
        llog_reader_assembly_moved(self->core, to + (open - from),
                                   cap - (size_t)(open - from));
#ifdef LLPY_IN_PLACE_BLOCKS
    if (self->in_place_left > 0)
        self->in_place_body = to + (self->in_place_body - from);
#endif
    self->in_scratch = 1;
    return 0;
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
    if (ev->torn && ev->implausible && reader_warn_tail(self, ev) < 0)
        return;
    if (ev->torn && self->recovery == LLOG_RECOVER_ABSOLUTE) {
        reader_on_corruption(self, st, ev, 1);
        return;
    }
    if (ev->torn && self->recovery == LLOG_RECOVER_POINT_IN_TIME &&
        self->dialect == LLOG_DIALECT_ROCKSDB) {
        reader_on_corruption(self, st, ev, 0); /* RocksDB reports it */
        return;
    }
    if (self->kind == LLPY_SRC_BUFFER)
        reader_finish(self); /* a buffer never grows */
}

/* 1 when an end of the data must be looked at again before it is believed:
 * the data behind it was read by an earlier call, and the file may have
 * grown since (a record completed after it; RocksDB's reader re-reads in
 * the same case). The core asks for the same block again. */
static int reader_eof_stale(const llpy_reader *self, int *fed) {
    if (*fed || self->kind == LLPY_SRC_BUFFER)
        return 0;
    *fed = 1;
    return 1;
}

/* The next record as bytes, NULL at the end (no exception) or on error. */
static PyObject *reader_next_locked(llpy_reader *self, llpy_state *st) {
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
            if (reader_on_corruption(self, st, &ev, 0) <= 0)
                return NULL;
            break;
        case LLOG_EV_NEED_BLOCK:
            fed = 1;
            if (llpy_reader_fill(self) < 0)
                return NULL;
            break;
        case LLOG_EV_EOF:
            if (reader_eof_stale(self, &fed))
                break;
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
    int fed = 0; /* as in reader_next_locked */
    for (;;) {
        if (self->finished || self->closed)
            return 0;
        reader_step(self, ev);
        switch (ev->kind) {
        case LLOG_EV_RECORD:
            if (ev->assembled) {
                assembly_learn(self, ev->len);
                if (self->in_redirect) /* (in the batch already) */
                    self->in_redirect = 0;
                else
                    ev->data =
                        self->in_scratch
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
            fed = 1;
            if (llpy_reader_fill(self) < 0)
                return -1;
            break;
        case LLOG_EV_EOF:
            if (reader_eof_stale(self, &fed))
                break;
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

PyObject *llpy_reader_iternext(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    llpy_state *st = llpy_state_of(Py_TYPE(op));
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    PyObject *rec = NULL;
    if (llpy_reader_check_open(self) == 0)
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
    self->block = llpy_io_alloc(self->kind == LLPY_SRC_FD && self->seekable
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

int llpy_reader_init(PyObject *op, PyObject *args, PyObject *kwds) {
    llpy_reader *self = (llpy_reader *)op;
    static char *kwlist[] = {"source",   "dialect",          "log_number",
                             "recovery", "verify_checksums", "start",
                             "end",      "on_corruption",    "storage_options",
                             NULL};
    PyObject *source, *recovery = NULL, *start = NULL, *end = Py_None;
    PyObject *on_corruption = Py_None, *dialect = NULL, *log_number = NULL;
    PyObject *storage_options = Py_None, *verify_obj = Py_True;
    int verify = 1;
    if (self->core != NULL || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "Reader is already initialized");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOOOOOO:Reader", kwlist,
                                     &source, &dialect, &log_number, &recovery,
                                     &verify_obj, &start, &end, &on_corruption,
                                     &storage_options) ||
        llpy_parse_flag(verify_obj, "verify_checksums", &verify) < 0)
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
