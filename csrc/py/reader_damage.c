/*
 * reader_damage.c - what damage does to a Reader's iteration: each report
 * goes to on_corruption, or becomes a CorruptionWarning, and the core's
 * verdict on it (the recovery mode, decided in log_reader.c) becomes an
 * exception (CorruptionError, TruncatedRecordError for a torn tail) or the
 * end of iteration, or lets reading go on. A torn tail no writer leaves
 * is warned of once. Each call is given what it reads and updates (an
 * llpy_damage, made by reader_records.c); it calls no Reader file back.
 */
#include "reader_internal.h"

/* What a warning of damage advises (a tail no writer leaves has its own). */
#define DAMAGE_ADVICE                                                         \
    " (pass on_corruption to hear of each corruption, or filter "             \
    "CorruptionWarning)"

/* With no on_corruption, a corruption that is skipped or ends the log
 * quietly (skip, point_in_time) is never silent: it warns. */
static PyObject *damage_warn(const llpy_damage *d, PyObject *c,
                             const char *what) {
    /* A path by its repr; a buffer or file object by its type alone. */
    PyObject *given = d->source;
    PyObject *source =
        llpy_is_path(given)
            ? PyObject_Repr(given)
            : PyUnicode_FromFormat("a %.100s source", Py_TYPE(given)->tp_name);
    /* The same text for every corruption of a source: the warnings filter
     * then shows it once per place; the corruption rides along. */
    PyObject *text =
        source ? PyUnicode_FromFormat("%U %s", source, what) : NULL;
    PyObject *warning =
        text ? PyObject_CallFunction(d->st->corruption_warning, "OO", text, c)
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

/* No more records, ever (a buffer source is let go). */
static void damage_finish(const llpy_damage *d) {
    *d->finished = 1;
    llpy_feed_finished(d->feed);
}

/* Gives up the lock for a callback, which may use the reader, as may other
 * threads meanwhile: a redirect ends first (saved), so that nothing of the
 * reader's stays in a batch being filled. 0, or -1 with an exception set
 * (the lock still held). */
static int callback_enter(const llpy_damage *d, redirect_saved *saved) {
    saved->fn = llpy_assembly_redirect_of(d->assembly, &saved->ctx);
    if (saved->fn != NULL && llpy_feed_redirect_end(d->feed) < 0) {
        damage_finish(d); /* the core's bytes are going away */
        return -1;
    }
    ++*d->in_callback;
    llpy_lock_release(d->lock);
    return 0;
}

/* Takes the lock back (this cannot fail: this thread no longer owns it)
 * and the redirect up again. */
static void callback_leave(const llpy_damage *d, const redirect_saved *saved) {
    (void)llpy_lock_acquire(d->lock);
    --*d->in_callback;
    if (saved->fn != NULL)
        llpy_assembly_redirect(d->assembly, saved->fn, saved->ctx);
}

/* A torn tail no writer leaves: warned of once, in every mode and with or
 * without on_corruption (the records and reports stay LevelDB's, which end
 * a log there silently; this judgement is only a warning). */
static int damage_warn_tail(const llpy_damage *d, const llog_event *ev) {
    if (*d->warned & LLPY_WARNED_TAIL)
        return 0;
    *d->warned |= LLPY_WARNED_TAIL;
    PyObject *c = PyObject_CallFunction(
        d->st->corruption_type, "KKs", (unsigned long long)ev->offset,
        (unsigned long long)ev->size, LLOG_REASON_IMPLAUSIBLE_TAIL);
    if (c == NULL)
        return -1;
    redirect_saved saved;
    if (callback_enter(d, &saved) < 0) {
        Py_DECREF(c);
        return -1;
    }
    /* bytes given for a path is the likely mistake: say how a file opens */
    PyObject *r = damage_warn(
        d, c,
        llpy_feed_kind(d->feed) == LLPY_SRC_BUFFER
            ? "ends in bytes no writer of this format leaves: not a log? A "
              "bytes-like source is read as the log itself: to open a file, "
              "pass its path as a str or os.PathLike (filter "
              "CorruptionWarning to silence this)"
            : "ends in bytes no writer of this format leaves: not a log? "
              "(filter CorruptionWarning to silence this)");
    callback_leave(d, &saved);
    Py_DECREF(c);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Passes a corruption to on_corruption, or warns (without holding the
 * lock, so the callback or a warning hook may use the reader). A failing
 * read needs no warning: its exception says it. */
static int damage_notify(const llpy_damage *d, PyObject *c, unsigned verdict) {
    PyObject *on_corruption = d->on_corruption;
    if (on_corruption == NULL && verdict == LLOG_FAIL)
        return 0;
    redirect_saved saved;
    if (callback_enter(d, &saved) < 0)
        return -1;
    PyObject *cb = on_corruption ? Py_NewRef(on_corruption) : NULL;
    PyObject *r = cb ? PyObject_CallOneArg(cb, c)
                     : damage_warn(d, c,
                                   verdict == LLOG_READ_ON
                                       ? "is damaged: the damage was "
                                         "skipped" DAMAGE_ADVICE
                                       : "is damaged: reading stopped before "
                                         "the damage" DAMAGE_ADVICE);
    Py_XDECREF(cb);
    callback_leave(d, &saved);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* A Corruption for the event, counted in dropped_bytes and passed to the
 * callback (or warned of, as the verdict on it says): *c holds it (NULL on
 * failure); 0, or -1 with an exception set. */
static int damage_one(const llpy_damage *d, const llog_event *ev,
                      PyObject **c) {
    *c = PyObject_CallFunction(d->st->corruption_type, "KKs",
                               (unsigned long long)ev->offset,
                               (unsigned long long)ev->size, ev->reason);
    if (*c == NULL)
        return -1;
    *d->dropped += ev->size;
    return damage_notify(d, *c, ev->verdict);
}

/* Passes on a further report of the same damage, which the mode then acts
 * on with the first: 0, or -1 with an exception set. */
static int damage_also(const llpy_damage *d, const llog_event *ev) {
    PyObject *c;
    int rc = damage_one(d, ev, &c);
    Py_XDECREF(c);
    return rc;
}

/* The event's reason is copied first: the core may be used by another
 * thread during the callback, or closed by it. */
int llpy_damage_report(const llpy_damage *d, const llog_event *ev) {
    /* Asked before the callback runs: it may close the reader. */
    llog_event also;
    llog_reader *core = *d->core;
    int has_also = core != NULL && llog_reader_torn_also(core, ev, &also);
    PyObject *c;
    int rc = damage_one(d, ev, &c);
    if (c == NULL)
        return -1;
    if (rc == 0 && has_also) /* RocksDB reports both before it stops */
        rc = damage_also(d, &also);
    if (rc == 0 && ev->verdict == LLOG_READ_ON) {
        /* the callback may have closed the reader (its core is then gone) */
        rc = *d->core != NULL;
    } else if (rc == 0) {
        damage_finish(d);
        if (ev->verdict == LLOG_FAIL) {
            llpy_raise_corruption(d->st, ev->kind == LLOG_EV_EOF, c);
            rc = -1;
        }
    }
    Py_DECREF(c);
    return rc;
}

/* A followed file that shrank below the position or was replaced: said
 * once, as a RuntimeWarning (the reader goes on, and finds nothing more in
 * what it has open); 0, or -1 with an exception set. */
static int damage_warn_changed(const llpy_damage *d) {
    uint64_t size = 0;
    enum llpy_source_change change;
    if (*d->warned & LLPY_WARNED_GONE ||
        (change = llpy_feed_change(d->feed, &size)) == LLPY_SOURCE_SAME)
        return 0;
    *d->warned |= LLPY_WARNED_GONE;
    PyObject *text =
        change == LLPY_SOURCE_SHRANK
            ? PyUnicode_FromFormat(
                  "%R shrank to %llu bytes, below the reader's position "
                  "%llu: it was truncated or rewritten, and this reader "
                  "returns nothing more from it (open a new Reader to read "
                  "it again)",
                  d->source, (unsigned long long)size,
                  (unsigned long long)llog_reader_position(*d->core))
            : PyUnicode_FromFormat(
                  "%R was replaced: another file is at that path now, and "
                  "this reader goes on with the file it opened (open a new "
                  "Reader to read the new one)",
                  d->source);
    PyObject *warning =
        text ? PyObject_CallOneArg(PyExc_RuntimeWarning, text) : NULL;
    Py_XDECREF(text);
    if (warning == NULL)
        return -1;
    redirect_saved saved;
    if (callback_enter(d, &saved) < 0) {
        Py_DECREF(warning);
        return -1;
    }
    PyObject *r = llpy_warn(warning);
    callback_leave(d, &saved);
    Py_DECREF(warning);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

void llpy_damage_end(const llpy_damage *d, const llog_event *ev) {
    if (damage_warn_changed(d) < 0)
        return;
    if (ev->torn && ev->implausible && damage_warn_tail(d, ev) < 0)
        return;
    if (ev->torn && ev->verdict != LLOG_READ_ON) {
        llpy_damage_report(d, ev);
        return;
    }
    if (llpy_feed_kind(d->feed) == LLPY_SRC_BUFFER)
        damage_finish(d); /* a buffer never grows */
}
