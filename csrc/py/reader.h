/*
 * reader.h - the Reader (reader.c) as the binding's other files use it:
 * an opaque object and the accessors they need. Its fields are reader.c's
 * alone; the Reader's own files ask each other through
 * reader_internal.h.
 *
 * The Reader's files: reader.c (the type and its iteration), reader_open.c
 * (tp_init: options and source), reader_damage.c (reports, and the core's
 * verdicts on damage acted on), reader_assembly.c (fragmented records
 * built into bytes objects or Arrow batches), reader_fill.c (feeding the
 * core blocks); and, through this header, reader_pickle.c, reader_arrow.c,
 * reader_testing.c and module.c. (reader_dialect.c, the dialect options
 * and metadata state, knows no Reader: reader_dialect.h.)
 */
#ifndef LLPY_READER_H
#define LLPY_READER_H

#include "module.h"

typedef struct llpy_reader llpy_reader;

/* The reader's lock (0, or -1 with an exception set), and giving it up. */
int llpy_reader_acquire(llpy_reader *self);
void llpy_reader_release(llpy_reader *self);
/* 0, or -1 with ValueError for a closed reader. */
int llpy_reader_check_open(llpy_reader *self);

/* ---- records for Arrow batches (reader_arrow.c), the lock held -----------
 */

/* The next record, as iteration would return it, with the payload left
 * where the core put it: 1 with the record in *ev (ev->data valid until the
 * next call), 0 at the end (no exception), -1 with an exception set. */
int llpy_reader_next_view(llpy_reader *self, llpy_state *st, llog_event *ev);
/* 1 when the reader may read a run of whole records now (it is open, not
 * finished, and assembles no record in the caller's buffer). */
int llpy_reader_runs_possible(const llpy_reader *self);
/* llog_reader_next_run on the reader's core, which then counts the last
 * record read as returned (last_record_offset). */
size_t llpy_reader_next_run(llpy_reader *self, llog_run *run);
/*
 * Fragmented records assembled through fn (with ctx: the Arrow batch being
 * filled makes room in its data) instead of in a bytes object, from the
 * next record on, until llpy_reader_redirect_end. The end moves a record
 * still being assembled there (and payloads read in place for it) to the
 * scratch buffer, as the batch is about to be handed out; so does giving
 * up the lock for a callback, which takes the redirect up again after it.
 * End returns 0, or -1 with MemoryError (the reader is then finished).
 */
void llpy_reader_redirect(llpy_reader *self, llog_reserve_fn fn, void *ctx);
int llpy_reader_redirect_end(llpy_reader *self);
/* An Arrow stream export of the reader was read to the end: another is
 * refused. */
int llpy_reader_arrow_spent(llpy_reader *self);
void llpy_reader_set_arrow_spent(llpy_reader *self);

/* ---- test hooks (reader_testing.c) --------------------------------------
 */

/* How many blocks were read in place (their payload straight into the
 * record being assembled), and of those, through the block buffer. */
typedef struct llpy_reader_blocks {
    uint64_t in_place, bounced;
} llpy_reader_blocks;

/* Fills *out under the lock; 0, or -1 with an exception set. */
int llpy_reader_blocks_of(llpy_reader *self, llpy_reader_blocks *out);

/* ---- pickling (reader_pickle.c) ------------------------------------------
 */

/* What reopens a reader where it stands. The objects are borrowed: they
 * live as long as the reader. */
typedef struct llpy_reader_state {
    PyObject *name;            /* the source */
    PyObject *on_corruption;   /* or NULL */
    PyObject *storage_options; /* a URL's, or NULL */
    int over_path;             /* a path or URL: it can be reopened */
    int closed, in_callback, finished;
    llog_recovery recovery;
    llog_dialect dialect;
    int told; /* 0: dialect "auto", not told for good yet (reopen so) */
    int verify_checksums;
    uint64_t position, end; /* position clipped to end */
    int has_last, has_log_number;
    uint64_t last_record_offset, dropped_bytes, log_number;
} llpy_reader_state;

/* Fills *out under the lock (the progress only for an open reader); 0, or
 * -1 with an exception set. */
int llpy_reader_state_of(llpy_reader *self, llpy_reader_state *out);
/* Sets the progress counters of an unpickled reader; 0, or -1. */
int llpy_reader_set_progress(llpy_reader *self, int has_last, uint64_t last,
                             uint64_t dropped, int finished);
/* Reader.__reduce__ and Reader._restore. */
PyObject *llpy_reader_reduce(PyObject *op, PyObject *unused);
PyObject *llpy_reader_restore(PyObject *op, PyObject *args);

#endif /* LLPY_READER_H */
