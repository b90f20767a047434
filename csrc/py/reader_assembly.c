/*
 * reader_assembly.c - where the Reader builds fragmented records: straight
 * in a bytes object of the expected length when the last records agree on
 * one, else in a scratch buffer copied out at the end, or in an Arrow
 * batch's own buffer while one is filled (the redirect). The core calls
 * llpy_assembly_reserve as a record grows (llog_reserve_fn).
 */
#include "reader_internal.h"

#include <string.h>

/* What assembling needs beside the core: its buffers, the lengths of the
 * last records as guesses of the next one's, and the redirect. */
struct llpy_assembly {
    llpy_state *st; /* the module's: guesses shared by every reader */
    /* The reader's saved GIL state while the core runs without it (else
     * NULL): the reserve callback takes the GIL back meanwhile. */
    PyThreadState **released;
    PyObject *bytes;  /* a fragmented record is built in this, */
    uint8_t *scratch; /* or this, when in_scratch */
    size_t scratch_cap;
    int in_scratch;
    size_t last_len, prev_len; /* the last two such records' lengths */
    /* While an Arrow batch is filled (reader_arrow.c), records are built
     * through redirect, in the batch's own buffer; in_redirect says the
     * record being built is there. */
    llog_reserve_fn redirect;
    void *redirect_ctx;
    int in_redirect;
};

llpy_assembly *llpy_assembly_new(llpy_state *st, PyThreadState **released) {
    llpy_assembly *a = PyMem_RawCalloc(1, sizeof *a);
    if (a == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    a->st = st;
    a->released = released;
    return a;
}

/* Lengths remembered of fragmented records are capped at this: a guess of
 * the next one's, sizing the bytes object it is assembled in. */
#define ASSEMBLY_HINT_MAX ((size_t)64 << 20)

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

size_t llpy_assembly_hint(const llpy_assembly *self) {
    if (self->last_len > 0)
        return self->last_len;
    return shared_size(&self->st->assembly_hint);
}

/* The length the next fragmented record can be expected to have, when the
 * last two agree (else 0): it is then built in a bytes object that long. */
static size_t assembly_expect(const llpy_assembly *self) {
    if (self->prev_len > 0)
        return agreeing(self->last_len, self->prev_len);
    return shared_size(&self->st->assembly_expect);
}

static void assembly_learn(llpy_assembly *self, size_t len) {
    if (len > ASSEMBLY_HINT_MAX)
        len = ASSEMBLY_HINT_MAX;
    llpy_state *st = self->st;
    size_t expect = agreeing(len, llpy_assembly_hint(self));
    self->prev_len = self->last_len;
    self->last_len = len;
    shared_size_set(&st->assembly_hint, len);
    shared_size_set(&st->assembly_expect, expect);
}

/* Room for `need` bytes in the scratch buffer, what it holds kept. */
static uint8_t *scratch_reserve(llpy_assembly *self, size_t need,
                                size_t *cap) {
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

/* Room for `need` bytes in self->bytes, a bytes object. NULL when out of
 * memory (an exception set), or when a record being built outgrows it
 * (`len` > 0: no exception; it then goes on in the scratch buffer). */
static uint8_t *bytes_reserve(llpy_assembly *self, size_t len, size_t need,
                              size_t *cap) {
    size_t have = self->bytes ? (size_t)PyBytes_GET_SIZE(self->bytes) : 0;
    if (have < need && len > 0)
        return NULL; /* longer than expected */
    if (have < need) {
        size_t expect = assembly_expect(self);
        size_t size = expect > need ? expect : need;
        Py_CLEAR(self->bytes);
        self->bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
        if (self->bytes == NULL && size > need) {
            PyErr_Clear();
            self->bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)need);
        }
        if (self->bytes == NULL)
            return NULL;
    }
    *cap = (size_t)PyBytes_GET_SIZE(self->bytes);
    return (uint8_t *)PyBytes_AS_STRING(self->bytes);
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
 * records_step in reader_records.c): take it back meanwhile.
 */
uint8_t *llpy_assembly_reserve(void *ctx, size_t len, size_t need,
                               size_t *cap) {
    llpy_assembly *self = ctx;
    PyThreadState *released = *self->released;
    if (released != NULL)
        PyEval_RestoreThread(released);
    uint8_t *buf = NULL;
    if (len == 0) { /* a new record */
        self->in_redirect = self->redirect != NULL;
        self->in_scratch = !self->in_redirect && assembly_expect(self) == 0;
        if (self->in_scratch || self->in_redirect)
            Py_CLEAR(self->bytes); /* what a dropped record left */
    }
    if (need > (size_t)PY_SSIZE_T_MAX) {
        /* no buffer that large */
    } else if (self->in_redirect) {
        buf = self->redirect(self->redirect_ctx, len, need, cap);
    } else if (!self->in_scratch) {
        buf = bytes_reserve(self, len, need, cap);
        if (buf == NULL && len > 0) {    /* outgrown */
            assert(self->bytes != NULL); /* it holds the first len */
            self->in_scratch = 1;
            buf = scratch_reserve(self, need, cap);
            if (buf != NULL)
                memcpy(buf, PyBytes_AS_STRING(self->bytes), len);
            Py_CLEAR(self->bytes);
        }
    } else {
        buf = scratch_reserve(self, need, cap);
    }
    PyErr_Clear(); /* out of memory: the core reports LLOG_ERR_NOMEM */
    if (released != NULL)
        *self->released = PyEval_SaveThread();
    return buf;
}

PyObject *llpy_assembly_take(llpy_assembly *self, size_t len) {
    assembly_learn(self, len);
    if (self->in_scratch) {
        assert(len <= self->scratch_cap);
        return PyBytes_FromStringAndSize((const char *)self->scratch,
                                         (Py_ssize_t)len);
    }
    PyObject *rec = self->bytes;
    self->bytes = NULL;
    assert(rec != NULL && (size_t)PyBytes_GET_SIZE(rec) >= len && len > 0);
    if ((size_t)PyBytes_GET_SIZE(rec) != len &&
        _PyBytes_Resize(&rec, (Py_ssize_t)len) < 0)
        return NULL;
    return rec;
}

void llpy_assembly_redirect(llpy_assembly *self, llog_reserve_fn fn,
                            void *ctx) {
    assert(!self->in_redirect);
    self->redirect = fn;
    self->redirect_ctx = ctx;
}

llog_reserve_fn llpy_assembly_redirect_of(const llpy_assembly *self,
                                          void **ctx) {
    *ctx = self->redirect_ctx;
    return self->redirect;
}

int llpy_assembly_redirecting(const llpy_assembly *self) {
    return self->in_redirect;
}

/* Where the bytes of the reader's that lie in the redirect's buffer begin
 * and end: the record being assembled (where it begins in *open, else
 * NULL), then the payloads read in place for it and not yet fed (pending,
 * which may outlive it: see reader_fill.c). */
static int redirected_span(llog_reader *core, uint8_t *pending,
                           size_t pending_len, uint8_t **open, uint8_t **from,
                           uint8_t **end) {
    size_t len;
    *open = *from = *end = NULL;
    if (llog_reader_assembly(core, open, &len)) {
        *from = *open;
        *end = *open + len;
    }
    if (pending != NULL && pending_len > 0) {
        uint8_t *e = pending + pending_len;
        if (*from == NULL || pending < *from)
            *from = pending;
        if (*end == NULL || e > *end)
            *end = e;
    }
    return *from != NULL;
}

int llpy_assembly_redirect_end(llpy_assembly *self, llog_reader *core,
                               uint8_t **pending, size_t pending_len) {
    self->redirect = NULL;
    int was = self->in_redirect;
    self->in_redirect = 0;
    uint8_t *open, *from, *end;
    size_t cap;
    if (!was || core == NULL ||
        !redirected_span(core, pending ? *pending : NULL, pending_len, &open,
                         &from, &end))
        return 0;
    uint8_t *to = scratch_reserve(self, (size_t)(end - from), &cap);
    if (to == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(to, from, (size_t)(end - from));
    if (open != NULL)
        llog_reader_assembly_moved(core, to + (open - from),
                                   cap - (size_t)(open - from));
    if (pending != NULL && *pending != NULL && pending_len > 0)
        *pending = to + (*pending - from);
    self->in_scratch = 1;
    return 0;
}

void llpy_assembly_view(llpy_assembly *self, llog_event *ev) {
    assembly_learn(self, ev->len);
    if (self->in_redirect) /* (in the batch already) */
        self->in_redirect = 0;
    else
        ev->data = self->in_scratch
                       ? self->scratch
                       : (uint8_t *)PyBytes_AS_STRING(self->bytes);
}

void llpy_assembly_clear(llpy_assembly *self) {
    if (self == NULL)
        return;
    Py_CLEAR(self->bytes);
    PyMem_RawFree(self->scratch);
    self->scratch = NULL;
    self->scratch_cap = 0;
}

void llpy_assembly_free(llpy_assembly *self) {
    llpy_assembly_clear(self);
    PyMem_RawFree(self);
}
