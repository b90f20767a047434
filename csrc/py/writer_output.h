/*
 * writer_output.h - a Writer's way out (writer_output.c): the core encoder,
 * the buffer and the target it is handed to (a descriptor or a file
 * object), and where the log stands in both, in a struct only
 * writer_output.c sees. A record goes in whole or not at all: a failed one
 * is rolled back to where it began. It calls no other file of the Writer's
 * but the policy's (writer_policy.h) and the dialect's records.
 */
#ifndef LLPY_WRITER_OUTPUT_H
#define LLPY_WRITER_OUTPUT_H

#include "module.h"
#include "writer_dialect.h"
#include "writer_policy.h"

typedef struct llpy_output llpy_output;

/* Where a record's bytes begin, and whether it was to start a fresh block
 * (a value the caller keeps, to roll back to). */
typedef struct llpy_output_mark {
    uint64_t offset;
    int pad_next;
} llpy_output_mark;

/* ---- life ------------------------------------------------------------- */

/* An output with no target, writing through policy p (borrowed: it
 * outlives the output); NULL with MemoryError. */
llpy_output *llpy_output_new(llpy_policy *p);
/* Frees all (the descriptor closed, not flushed); NULL is a no-op. */
void llpy_output_free(llpy_output *out);
int llpy_output_traverse(llpy_output *out, visitproc visit, void *arg);
void llpy_output_clear(llpy_output *out);

/* ---- the target, as writer_open.c finds it ---------------------------- */

/* A descriptor of a path, the output's from now on (closed with it); its
 * file lock taken (given up before it closes). */
void llpy_output_adopt_fd(llpy_output *out, int fd);
void llpy_output_set_locked(llpy_output *out);
/* A file object (closed with the output when closefd). */
void llpy_output_adopt_file(llpy_output *out, PyObject *file, int closefd);
/* The log goes on at target offset `written`, a fresh block first when
 * pad_next (mode "a" after damage). */
void llpy_output_resume(llpy_output *out, uint64_t written, int pad_next);
/* The descriptor (-1 for a file object) and the file object (borrowed,
 * NULL for a descriptor). */
int llpy_output_fd(const llpy_output *out);
PyObject *llpy_output_file(const llpy_output *out);

/* Ready to write once the target is open: the core started where the
 * target is, the policy too, a buffer of max(limit, the default) bytes
 * handed over once `limit` are held (0: every record), and the dialect's
 * first record in it. 0, or -1 with MemoryError. */
int llpy_output_start(llpy_output *out, llpy_state *st, size_t limit,
                      const llpy_writer_dialect *d);

/* ---- state ------------------------------------------------------------ */

/* 0, or -1 with ValueError for an output closed, closing (close() waits
 * for a group commit) or never started. */
int llpy_output_check_open(const llpy_output *out);
/* Whether llpy_output_start ran (or the output was closed). */
int llpy_output_started(const llpy_output *out);
int llpy_output_closed(const llpy_output *out);
void llpy_output_set_closing(llpy_output *out, int closing);
/* The log offset after the last record put, and the one the target has
 * reached; bytes buffered; buffering=; payloads bounced (for tests). */
uint64_t llpy_output_offset(const llpy_output *out);
uint64_t llpy_output_written(const llpy_output *out);
size_t llpy_output_buffered(const llpy_output *out);
size_t llpy_output_limit(const llpy_output *out);
uint64_t llpy_output_bounced(const llpy_output *out);
/* A group commit made the log durable up to `at` (Pebble's walSync
 * headers say so). */
void llpy_output_synced(llpy_output *out, uint64_t at);

/* ---- records ---------------------------------------------------------- */

llpy_output_mark llpy_output_mark_now(const llpy_output *out);
/* Drops what was put after the mark; bytes the target already has leave a
 * torn record, and the next one starts a fresh block. */
void llpy_output_rollback(llpy_output *out, llpy_output_mark mark);
/* Puts one record (its stored bytes, n long, at data, kept alive by the
 * caller; the GIL given up around a large one to a descriptor): its
 * offset in *offset, where it ends in *end. On failure (-1, the target's
 * error set) it is rolled back. */
int llpy_output_put(llpy_output *out, const uint8_t *data, size_t n,
                    uint64_t *offset, uint64_t *end);
/* write()'s record: put, then the buffer handed over when it reached its
 * limit or `sync` (durable); if that hand-over fails, the record is rolled
 * back (a retry would write it twice). 0, or -1 with an exception set. */
int llpy_output_write(llpy_output *out, const uint8_t *data, size_t n,
                      int sync, uint64_t *offset);
/* Puts the first records of data[0..n) (len[i] bytes each) that are short
 * enough to go straight into the buffer in one run (llog_writer_add_run):
 * how many; 0 when the next must go alone. */
size_t llpy_output_put_run(llpy_output *out, const uint8_t *const *data,
                           const size_t *len, size_t n);

/* ---- handing over ----------------------------------------------------- */

/* Hands everything buffered to the target, and a file object's flush();
 * 0, or -1 with an exception set. A failure drops the records durable
 * write() calls queued (llpy_output_defer): llpy_output_dropped then says
 * from which offset, once. */
int llpy_output_hand_over(llpy_output *out);
/* The same when the buffer reached its limit, or when `sync`. */
int llpy_output_hand_over_for(llpy_output *out, int sync);
/* Whether queued durable records are buffered. */
int llpy_output_queued(const llpy_output *out);
/* A durable write() left its record (put after `mark`) buffered for the
 * next group-commit leader to hand over. */
void llpy_output_defer(llpy_output *out, llpy_output_mark mark);
/* 1 with *from set when the last hand-over dropped queued records. */
int llpy_output_dropped(llpy_output *out, uint64_t *from);

/* ---- the end ---------------------------------------------------------- */

/* close()'s first step: the dialect's last record and the buffer handed
 * over (only what is buffered when the target is a closed file object).
 * 1 when the output is closed or closing already (nothing to do), 0, or
 * -1 with an exception set (llpy_output_dropped then applies). */
int llpy_output_finish(llpy_output *out, const llpy_writer_dialect *d);
/* Then gives the target up: the policy's reservation and the file lock, the
 * descriptor or (when closefd) the file object closed, the buffers freed;
 * the output is closed. 0, or -1 with the first error set. */
int llpy_output_close(llpy_output *out);

#endif /* LLPY_WRITER_OUTPUT_H */
