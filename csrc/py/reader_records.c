/*
 * reader_records.c - where a Reader's reading stands, in a struct of this
 * file's own: the core reader, the feed that gives it blocks
 * (reader_fill.c), the assembly of fragmented records (reader_assembly.c),
 * what metadata records said (reader_dialect.c) and the counters. Its
 * per-record path (the next record as bytes, or left in place for an Arrow
 * batch) is here, so that the compiler can inline it; damage is reported
 * through reader_damage.c, which is given what it acts on. reader.c (the
 * type) and reader_arrow.c (the batch iterator) call it; it calls neither.
 */
#include "reader_internal.h"

/* Physical records at least this long are checksummed without the GIL.
 * It is not LLPY_GIL_THRESHOLD: the core checks one physical record at a
 * time, and none is longer than a block, so only a share of a block can be
 * worth releasing the GIL for. */
#define GIL_FRAGMENT (16 * 1024)

struct llpy_records {
    llpy_state *st;
    llpy_lock *lock;         /* the reader's, given up around callbacks */
    llog_reader *core;       /* NULL until opened, and once closed */
    llpy_feed *feed;         /* the source, read (reader_fill.c) */
    llpy_assembly *assembly; /* fragmented records built (reader_assembly.c) */
    llpy_meta *meta;         /* what metadata records said */
    PyObject *source;        /* as given (borrowed: the reader holds it) */
    PyObject *on_corruption; /* or NULL (borrowed) */
    int finished;            /* no more records, ever */
    unsigned warned;         /* LLPY_WARNED_* flags */
    int arrow_spent;         /* an Arrow stream export was read to the end */
    int in_callback;         /* on_corruption is running (events queued) */
    int closed;
    int has_last;
    uint64_t last_record_offset;
    uint64_t dropped_bytes;
    PyThreadState *released;      /* the GIL's saved state while the core runs
                                     without it, else NULL */
    int has_log_number, recycled; /* the core's, kept when it is freed */
    uint64_t log_number;
    llog_dialect dialect; /* the options' until opened, then the core's */
};

llpy_records *llpy_records_new(llpy_state *st, llpy_lock *lock) {
    llpy_records *r = PyMem_Calloc(1, sizeof *r);
    if (r == NULL)
        return (llpy_records *)PyErr_NoMemory();
    r->st = st;
    r->lock = lock;
    r->assembly = llpy_assembly_new(st, &r->released);
    r->meta = llpy_meta_new();
    if (r->assembly == NULL || r->meta == NULL) {
        llpy_records_free(r);
        return NULL;
    }
    return r;
}

int llpy_records_open(llpy_records *r, llog_reader_options *opt,
                      llpy_feed *feed, PyObject *source,
                      PyObject *on_corruption) {
    llpy_feed_free(r->feed); /* of an earlier tp_init that failed */
    r->feed = feed;
    r->source = source;
    r->on_corruption = on_corruption;
    r->dialect = opt->dialect;
    if (llpy_meta_init(r->meta, opt) < 0)
        return -1;
    opt->reserve = llpy_assembly_reserve;
    opt->reserve_ctx = r->assembly;
    r->core = llog_reader_new(opt);
    if (r->core == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    llpy_feed_attach(feed, r->core, r->assembly);
    /* dialect="auto": block 0 is read now, so that the dialect is known
     * from the start, pipes included (the core asks for it first). */
    if (!opt->detect)
        return 0;
    if (llpy_lock_acquire(r->lock) < 0)
        return -1;
    int rc = llpy_feed_fill(feed);
    llpy_lock_release(r->lock);
    return rc;
}

int llpy_records_initialized(const llpy_records *r) {
    return r->core != NULL || r->closed;
}

int llpy_records_closed(const llpy_records *r) { return r->closed; }

int llpy_records_check_open(const llpy_records *r) {
    if (r->closed || r->core == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        r->closed ? "I/O operation on closed Reader"
                                  : "Reader is not initialized");
        return -1;
    }
    return 0;
}

/* ---- iteration ---------------------------------------------------------- */

static void records_finish(llpy_records *r) {
    r->finished = 1;
    llpy_feed_finished(r->feed); /* exhausted: a buffer is let go */
}

/* The core's next event. A long checksum runs without the GIL, letting
 * other threads run: the object lock keeps the core to this thread, and a
 * buffer source stays exported meanwhile. */
static void records_step(llpy_records *r, llog_event *ev) {
    if (llog_reader_next_length(r->core) >= GIL_FRAGMENT) {
        r->released = PyEval_SaveThread();
        llog_reader_next(r->core, ev);
        PyEval_RestoreThread(r->released);
        r->released = NULL;
    } else {
        llog_reader_next(r->core, ev);
    }
}

/* A record event as bytes, or NULL with an exception set. */
static PyObject *records_bytes(llpy_records *r, const llog_event *ev) {
    PyObject *rec;
    if (ev->assembled) {
        rec = llpy_assembly_take(r->assembly, ev->len);
    } else {
        rec = PyBytes_FromStringAndSize((const char *)ev->data,
                                        (Py_ssize_t)ev->len);
    }
    if (rec == NULL)
        return NULL;
    r->has_last = 1;
    r->last_record_offset = ev->offset;
    return rec;
}

/* 1 when an end of the data must be looked at again before it is believed:
 * the data behind it was read by an earlier call, and the file may have
 * grown since (a record completed after it; RocksDB's reader re-reads in
 * the same case). The core asks for the same block again. */
static int records_eof_stale(const llpy_records *r, int *fed) {
    if (*fed || llpy_feed_kind(r->feed) == LLPY_SRC_BUFFER)
        return 0;
    *fed = 1;
    return 1;
}

/* What a damage report reads and updates: this reader's own fields. */
static llpy_damage records_damage(llpy_records *r) {
    return (llpy_damage){.st = r->st,
                         .source = r->source,
                         .on_corruption = r->on_corruption,
                         .lock = r->lock,
                         .core = &r->core,
                         .feed = r->feed,
                         .assembly = r->assembly,
                         .dropped = &r->dropped_bytes,
                         .warned = &r->warned,
                         .finished = &r->finished,
                         .in_callback = &r->in_callback};
}

static int records_on_damage(llpy_records *r, const llog_event *ev) {
    llpy_damage d = records_damage(r);
    return llpy_damage_report(&d, ev);
}

/* The end of the data fed so far: 0, or -1 with an exception set. */
static int records_on_end(llpy_records *r, const llog_event *ev) {
    llpy_damage d = records_damage(r);
    llpy_damage_end(&d, ev);
    return PyErr_Occurred() ? -1 : 0;
}

/* The next record as bytes, NULL at the end (no exception) or on error;
 * the lock held. */
static PyObject *records_next_locked(llpy_records *r) {
    llog_event ev;
    int fed = 0; /* a block was read during this call */
    for (;;) {
        if (r->finished || r->closed)
            return NULL;
        records_step(r, &ev);
        switch (ev.kind) {
        case LLOG_EV_RECORD:
            return records_bytes(r, &ev);
        case LLOG_EV_CORRUPTION:
            if (records_on_damage(r, &ev) <= 0)
                return NULL;
            break;
        case LLOG_EV_NEED_BLOCK:
            fed = 1;
            if (llpy_feed_fill(r->feed) < 0)
                return NULL;
            break;
        case LLOG_EV_EOF:
            if (records_eof_stale(r, &fed))
                break;
            (void)records_on_end(r, &ev);
            return NULL;
        case LLOG_EV_META:
            if (llpy_meta_on_event(r->meta, &ev) < 0)
                return NULL;
            break;
        case LLOG_EV_DONE:
            records_finish(r);
            return NULL;
        case LLOG_EV_ERROR:
            records_finish(r);
            llpy_raise_status((llog_status)ev.size);
            return NULL;
        }
    }
}

PyObject *llpy_records_next(llpy_records *r) {
    if (llpy_lock_acquire(r->lock) < 0)
        return NULL;
    PyObject *rec =
        llpy_records_check_open(r) == 0 ? records_next_locked(r) : NULL;
    llpy_lock_release(r->lock);
    return rec;
}

/* As records_next_locked, with the payload left where the core put it
 * instead of copied into bytes. */
int llpy_records_next_view(llpy_records *r, llog_event *ev) {
    int fed = 0; /* as in records_next_locked */
    for (;;) {
        if (r->finished || r->closed)
            return 0;
        records_step(r, ev);
        switch (ev->kind) {
        case LLOG_EV_RECORD:
            if (ev->assembled)
                llpy_assembly_view(r->assembly, ev);
            r->has_last = 1;
            r->last_record_offset = ev->offset;
            return 1;
        case LLOG_EV_CORRUPTION: {
            int rc = records_on_damage(r, ev);
            if (rc <= 0)
                return rc;
            break;
        }
        case LLOG_EV_NEED_BLOCK:
            fed = 1;
            if (llpy_feed_fill(r->feed) < 0)
                return -1;
            break;
        case LLOG_EV_EOF:
            if (records_eof_stale(r, &fed))
                break;
            return records_on_end(r, ev);
        case LLOG_EV_META:
            if (llpy_meta_on_event(r->meta, ev) < 0)
                return -1;
            break;
        default: /* DONE, ERROR */
            records_finish(r);
            if (ev->kind == LLOG_EV_ERROR)
                llpy_raise_status((llog_status)ev->size);
            return ev->kind == LLOG_EV_ERROR ? -1 : 0;
        }
    }
}

int llpy_records_runs_possible(const llpy_records *r) {
    return !r->finished && !r->closed &&
           !llpy_assembly_redirecting(r->assembly);
}

size_t llpy_records_next_run(llpy_records *r, llog_run *run) {
    size_t n = llog_reader_next_run(r->core, run);
    if (n > 0) {
        r->has_last = 1;
        r->last_record_offset = run->offsets[run->n - 1];
    }
    return n;
}

void llpy_records_redirect(llpy_records *r, llog_reserve_fn fn, void *ctx) {
    llpy_assembly_redirect(r->assembly, fn, ctx);
}

int llpy_records_redirect_end(llpy_records *r) {
    if (r->feed == NULL || llpy_feed_redirect_end(r->feed) == 0)
        return 0;
    records_finish(r); /* the core's bytes are going away */
    return -1;
}

/* ---- closing, and what the getters and pickling read ---------------------
 */

void llpy_records_close(llpy_records *r) {
    if (r->closed)
        return;
    r->closed = 1;
    llpy_feed_close(r->feed); /* the source let go */
    if (r->core != NULL) {    /* what the getters still say */
        int told;
        r->dialect = llog_reader_dialect(r->core, &told);
        r->has_log_number = llog_reader_log_number(r->core, &r->log_number);
        r->recycled = llog_reader_recycled(r->core);
    }
    llog_reader_free(r->core);
    r->core = NULL;
    llpy_assembly_clear(r->assembly);
}

void llpy_records_progress(const llpy_records *r, llpy_progress *out) {
    *out = (llpy_progress){.closed = r->closed,
                           .in_callback = r->in_callback,
                           .finished = r->finished,
                           .has_last = r->has_last,
                           .last_record_offset = r->last_record_offset,
                           .dropped_bytes = r->dropped_bytes};
    if (r->core != NULL) {
        out->open = 1;
        out->position = llog_reader_position(r->core);
    }
    out->has_log_number = llpy_records_log_number(r, &out->log_number);
}

void llpy_records_set_progress(llpy_records *r, const llpy_progress *p) {
    r->has_last = p->has_last;
    if (p->has_last)
        r->last_record_offset = p->last_record_offset;
    r->dropped_bytes = p->dropped_bytes;
    if (p->finished)
        r->finished = 1;
}

llog_dialect llpy_records_dialect(const llpy_records *r, int *told) {
    *told = 1;
    return r->core != NULL ? llog_reader_dialect(r->core, told) : r->dialect;
}

int llpy_records_log_number(const llpy_records *r, uint64_t *n) {
    if (r->core != NULL)
        return llog_reader_log_number(r->core, n);
    *n = r->log_number; /* closed: what it had */
    return r->has_log_number;
}

int llpy_records_recycled(const llpy_records *r) {
    return r->core != NULL ? llog_reader_recycled(r->core) : r->recycled;
}

int llpy_records_source_kind(const llpy_records *r) {
    return r->feed != NULL ? (int)llpy_feed_kind(r->feed) : -1;
}

const llpy_meta *llpy_records_meta(const llpy_records *r) { return r->meta; }

void llpy_records_blocks(const llpy_records *r, uint64_t *in_place,
                         uint64_t *bounced) {
    *in_place = *bounced = 0;
    if (r->feed != NULL)
        llpy_feed_blocks(r->feed, in_place, bounced);
}

int llpy_records_arrow_spent(const llpy_records *r) { return r->arrow_spent; }

void llpy_records_set_arrow_spent(llpy_records *r) { r->arrow_spent = 1; }

/* ---- garbage collection ------------------------------------------------- */

int llpy_records_traverse(llpy_records *r, visitproc visit, void *arg) {
    if (r == NULL)
        return 0;
    int rc = llpy_feed_traverse(r->feed, visit, arg);
    return rc ? rc : llpy_meta_traverse(r->meta, visit, arg);
}

void llpy_records_clear(llpy_records *r) {
    if (r == NULL)
        return;
    r->source = r->on_corruption = NULL; /* the reader lets them go */
    llpy_feed_clear(r->feed);
    llpy_meta_clear(r->meta);
}

void llpy_records_free(llpy_records *r) {
    if (r == NULL)
        return;
    llpy_records_close(r);
    llpy_feed_free(r->feed);
    llpy_assembly_free(r->assembly);
    llpy_meta_free(r->meta);
    PyMem_Free(r);
}
