/*
 * reader_internal.h - what the Reader's own files ask of each other, as
 * functions, each of a file below the one that calls it: reader.c (the
 * type) calls reader_open.c (tp_init's arguments and source),
 * reader_pickle.c (pickling), reader_arrow.c (Arrow batches) and
 * reader_records.c (where reading stands, iteration); reader_arrow.c calls
 * reader_records.c, which calls reader_damage.c (reports and the verdicts
 * acted on), reader_fill.c (feeding blocks) and reader_assembly.c
 * (building fragmented records). Each keeps its state in its own .c file;
 * what one hands another is a value (llpy_opened, llpy_progress,
 * llpy_damage, llpy_reader_state). Every other file goes through reader.h.
 */
#ifndef LLPY_READER_INTERNAL_H
#define LLPY_READER_INTERNAL_H

#include "llpy_io.h"
#include "lock.h"
#include "reader.h"
#include "reader_dialect.h"

typedef struct llpy_feed llpy_feed;         /* reader_fill.c */
typedef struct llpy_assembly llpy_assembly; /* reader_assembly.c */

/* ---- reader_open.c -------------------------------------------------------
 */

/* What tp_init's arguments make, for reader.c to take: the core's options,
 * the feed that reads the source (owned), the reader's name (a new
 * reference); source, on_corruption and a URL's storage_options borrowed
 * from the arguments (the last two NULL when not given). */
typedef struct llpy_opened {
    llog_reader_options opt;
    llpy_feed *feed;
    PyObject *name;
    PyObject *source, *on_corruption, *storage_options;
} llpy_opened;

/* Parses Reader(...)'s arguments and opens the source into *out: 0, or -1
 * with an exception set (nothing owned is left in *out). */
int llpy_reader_open(llpy_state *st, PyObject *args, PyObject *kwds,
                     llpy_opened *out);

/* ---- reader_records.c ----------------------------------------------------
 */

/* Where a Reader's reading stands (the core, its feed and assembly, the
 * metadata, the counters), in a struct of reader_records.c's own. Made
 * with the module state and the reader's lock, which it gives up around
 * callbacks (NULL with MemoryError). */
typedef struct llpy_records llpy_records;
llpy_records *llpy_records_new(llpy_state *st, llpy_lock *lock);
/* Makes the core from opt over feed (taken, even on failure); source and
 * on_corruption (or NULL) are borrowed, held by the reader for as long.
 * With opt->detect ("auto"), block 0 is read then, under the lock. 0, or -1
 * with an exception set. */
int llpy_records_open(llpy_records *r, llog_reader_options *opt,
                      llpy_feed *feed, PyObject *source,
                      PyObject *on_corruption);
/* 1 once opened (or closed): it is not opened again. */
int llpy_records_initialized(const llpy_records *r);
/* 1 once closed; 0, or -1 with ValueError for a closed or unopened
 * reader. */
int llpy_records_closed(const llpy_records *r);
int llpy_records_check_open(const llpy_records *r);
/* The next record as bytes, read under the reader's lock (Reader's
 * tp_iternext, which calls only this, once a record): NULL at the end (no
 * exception) or with an exception set (ValueError when closed). */
PyObject *llpy_records_next(llpy_records *r);
/* The lock held for each of these. */
/* The next record, with the payload left where the core put it: 1 with the
 * record in *ev (ev->data valid until the next call), 0 at the end (no
 * exception), -1 with an exception set. */
int llpy_records_next_view(llpy_records *r, llog_event *ev);
/* 1 when a run of whole records may be read now (open, not finished, no
 * record being assembled in the caller's buffer); llog_reader_next_run,
 * which then counts the last record read as returned. */
int llpy_records_runs_possible(const llpy_records *r);
size_t llpy_records_next_run(llpy_records *r, llog_run *run);
/*
 * Fragmented records assembled through fn (with ctx: the Arrow batch being
 * filled makes room in its data) instead of in a bytes object, from the
 * next record on, until llpy_records_redirect_end. The end moves a record
 * still being assembled there (and payloads read in place for it) to the
 * scratch buffer, as the batch is about to be handed out; so does giving
 * up the lock for a callback, which takes the redirect up again after it.
 * End returns 0, or -1 with MemoryError (the reader is then finished).
 */
void llpy_records_redirect(llpy_records *r, llog_reserve_fn fn, void *ctx);
int llpy_records_redirect_end(llpy_records *r);
/* An Arrow stream export was read to the end: another is refused. */
int llpy_records_arrow_spent(const llpy_records *r);
void llpy_records_set_arrow_spent(llpy_records *r);
/* Lets the source and the core go (what the getters say is kept). */
void llpy_records_close(llpy_records *r);

/* Where reading stands, as Reader's properties and pickling read it: a
 * value. */
typedef struct llpy_progress {
    int open, closed, in_callback, finished;
    uint64_t position; /* when open */
    int has_last, has_log_number;
    uint64_t last_record_offset, dropped_bytes, log_number;
} llpy_progress;
void llpy_records_progress(const llpy_records *r, llpy_progress *out);
/* An unpickled reader's counters (has_last, last_record_offset,
 * dropped_bytes, finished). */
void llpy_records_set_progress(llpy_records *r, const llpy_progress *p);
/* The dialect read in (with "auto", the one block 0 told: *told 0 while it
 * has not for good), the log number (1 when known, in *n) and whether the
 * log is recycled: the core's or, once closed, what it had. */
llog_dialect llpy_records_dialect(const llpy_records *r, int *told);
int llpy_records_log_number(const llpy_records *r, uint64_t *n);
int llpy_records_recycled(const llpy_records *r);
/* The source's kind (enum llpy_source_kind), or -1 before one is open. */
int llpy_records_source_kind(const llpy_records *r);
const llpy_meta *llpy_records_meta(const llpy_records *r);
/* Blocks read in place, and of those through the block buffer (tests). */
void llpy_records_blocks(const llpy_records *r, uint64_t *in_place,
                         uint64_t *bounced);
/* GC support; frees all (closing first). NULL is a no-op for these. */
int llpy_records_traverse(llpy_records *r, visitproc visit, void *arg);
void llpy_records_clear(llpy_records *r);
void llpy_records_free(llpy_records *r);

/* ---- reader_arrow.c ------------------------------------------------------
 */

/* Reader.iter_batches(...), Reader.__arrow_c_stream__(...) and
 * Reader.to_arrow(...) of the reader object `reader` (a reference is kept
 * by what they return), given its records and its lock, which each batch
 * is read under. */
PyObject *llpy_batches_iter(PyObject *reader, llpy_records *r, llpy_lock *lock,
                            PyObject *args, PyObject *kwds);
PyObject *llpy_batches_stream(PyObject *reader, llpy_records *r,
                              llpy_lock *lock, PyObject *args, PyObject *kwds);
PyObject *llpy_batches_table(PyObject *reader, const llpy_records *r,
                             PyObject *args, PyObject *kwds);

/* ---- reader_damage.c -----------------------------------------------------
 */

/* The warnings given once per reader (llpy_damage.warned). */
enum llpy_reader_warning { LLPY_WARNED_TAIL = 1, LLPY_WARNED_GONE = 2 };

/* What a damage report reads and updates, handed to it as arguments (a
 * value of pointers into reader_records.c's fields): the source as given
 * and the callback (borrowed; on_corruption NULL for none), the lock given
 * up around the callback and warnings, the core (*core NULL once a
 * callback closed the reader), the feed and assembly (a batch's redirect
 * ends around a callback), and the counters and flags it sets. */
typedef struct llpy_damage {
    llpy_state *st;
    PyObject *source, *on_corruption;
    llpy_lock *lock;
    llog_reader *const *core;
    llpy_feed *feed;
    llpy_assembly *assembly;
    uint64_t *dropped;
    unsigned *warned;
    int *finished, *in_callback;
} llpy_damage;

/* A CORRUPTION event (or a torn EOF whose verdict is to stop or fail)
 * reported and its verdict acted on: 1 to keep reading, 0 to end iteration
 * cleanly, -1 with an exception set. And the end of the data fed so far,
 * once it is believed: a torn tail is reported and acted on when the
 * verdict on it says so; otherwise a buffer, which never grows, is
 * finished (an exception may be set: check PyErr_Occurred). */
int llpy_damage_report(const llpy_damage *d, const llog_event *ev);
void llpy_damage_end(const llpy_damage *d, const llog_event *ev);

/* ---- reader_pickle.c -----------------------------------------------------
 */

/* What reopens a reader where it stands: its options and its progress (the
 * objects borrowed from the reader). */
typedef struct llpy_reader_state {
    PyObject *name;            /* the source */
    PyObject *on_corruption;   /* or NULL */
    PyObject *storage_options; /* a URL's, or NULL */
    int over_path;             /* a path or URL: it can be reopened */
    llog_recovery recovery;
    llog_dialect dialect;
    int told; /* 0: dialect "auto", not told for good yet (reopen so) */
    int verify_checksums;
    uint64_t end;
    llpy_progress progress; /* its position clipped to end */
} llpy_reader_state;

/* Reader.__reduce__'s value for a reader in state s (NULL with an
 * exception set: a closed reader, a buffer or file object, a reader inside
 * its callback). */
PyObject *llpy_pickle_reduce(const llpy_reader_state *s);
/* Reader._restore(last, dropped, finished)'s arguments into *out's
 * counters; 0, or -1 with an exception set. */
int llpy_pickle_progress(PyObject *args, llpy_progress *out);

/* ---- reader_assembly.c ---------------------------------------------------
 */

/* Where fragmented records are built: made with the module state and the
 * reader's saved GIL state (see records_step in reader_records.c); NULL with
 * MemoryError. */
llpy_assembly *llpy_assembly_new(llpy_state *st, PyThreadState **released);
/* The core's reserve callback (llog_reserve_fn, ctx the assembly); the
 * record it finished assembling as a bytes object (NULL with an exception
 * set); the same left in place for an Arrow batch (ev->data set to where it
 * is); the length of the last fragmented record this reader (or, before
 * its first, any reader) assembled: a guess of the next one's. */
uint8_t *llpy_assembly_reserve(void *ctx, size_t len, size_t need,
                               size_t *cap);
PyObject *llpy_assembly_take(llpy_assembly *self, size_t len);
void llpy_assembly_view(llpy_assembly *self, llog_event *ev);
size_t llpy_assembly_hint(const llpy_assembly *self);
/* The redirect (llpy_records_redirect): set; what it is (fn,
 * *ctx); whether the record being built is in it; and its end, which
 * moves what is there (the core's open record, and the pending payloads
 * read in place for it: *pending is moved with them) to the scratch
 * buffer (pending may be NULL): 0, or -1 with MemoryError. */
void llpy_assembly_redirect(llpy_assembly *self, llog_reserve_fn fn,
                            void *ctx);
llog_reserve_fn llpy_assembly_redirect_of(const llpy_assembly *self,
                                          void **ctx);
int llpy_assembly_redirecting(const llpy_assembly *self);
int llpy_assembly_redirect_end(llpy_assembly *self, llog_reader *core,
                               uint8_t **pending, size_t pending_len);
/* Frees the buffers (the reader is closed); frees all. NULL is a no-op. */
void llpy_assembly_clear(llpy_assembly *self);
void llpy_assembly_free(llpy_assembly *self);

/* ---- reader_fill.c -------------------------------------------------------
 */

/* What a source is and where reading stands in it, feeding the core the
 * block it wants. Made by kind (NULL with an exception set): a buffer
 * (exported while read); a path's descriptor (the feed's, closed with it;
 * abs_path stolen, may be NULL: where to tell whether it was replaced); a
 * file object from where it stands (owned: closed with the reader). */
enum llpy_source_kind { LLPY_SRC_BUFFER, LLPY_SRC_FD, LLPY_SRC_FILE };
llpy_feed *llpy_feed_buffer(llpy_state *st, PyObject *source);
llpy_feed *llpy_feed_path(llpy_state *st, int fd, int seekable,
                          PyObject *abs_path);
llpy_feed *llpy_feed_file(llpy_state *st, PyObject *file, int seekable,
                          uint64_t base, int owned);
/* The core it feeds and the assembly it reads in place for. */
void llpy_feed_attach(llpy_feed *self, llog_reader *core,
                      llpy_assembly *assembly);
enum llpy_source_kind llpy_feed_kind(const llpy_feed *self);
int llpy_feed_seekable(const llpy_feed *self);
/* Feeds the core the block it wants (llog_reader_wanted); 0, or -1 with an
 * exception set. */
int llpy_feed_fill(llpy_feed *self);
/* A followed file at its end: the same, shrunk below the reader's position
 * (*size its size now), or replaced by another file at its path. */
enum llpy_source_change {
    LLPY_SOURCE_SAME,
    LLPY_SOURCE_SHRANK,
    LLPY_SOURCE_REPLACED
};
enum llpy_source_change llpy_feed_change(const llpy_feed *self,
                                         uint64_t *size);
/* The redirect's end (llpy_assembly_redirect_end) on the attached core
 * and assembly, with the payloads read in place and not fed yet moved
 * along; 0, or -1 with MemoryError. */
int llpy_feed_redirect_end(llpy_feed *self);
/* Blocks read in place, and of those through the block buffer (tests). */
void llpy_feed_blocks(const llpy_feed *self, uint64_t *in_place,
                      uint64_t *bounced);
/* No more records: a buffer is let go. */
void llpy_feed_finished(llpy_feed *self);
/* Lets the source go (the reader is closed); GC support; frees all. NULL
 * is a no-op for these. */
void llpy_feed_close(llpy_feed *self);
int llpy_feed_traverse(llpy_feed *self, visitproc visit, void *arg);
void llpy_feed_clear(llpy_feed *self);
void llpy_feed_free(llpy_feed *self);

#endif /* LLPY_READER_INTERNAL_H */
