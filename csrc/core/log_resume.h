/*
 * log_resume.h - where an append to an existing log resumes.
 *
 * A writer that died (or a file preallocated with zeros) leaves the end of a
 * log unfinished: a torn physical record, fragments of a record that never
 * got its LAST, zero fill. Appending after them would bury that tail inside
 * the log, where readers report it as damage. This module decides, from the
 * log's last blocks, how far back the log is cut before new records go on,
 * and whether they must start at a block boundary (docs/format.md,
 * "Appending").
 *
 * The rule:
 * - The log is cut back to the end of its last complete record when all that
 *   follows it is a torn tail (what the reader reports as the end of the data
 *   with a tail left over) or zero fill.
 * - A torn record followed by zero fill (a crash inside preallocated space)
 *   reads as damage; if the log, taken to end at its last non-zero byte
 *   (never before the last complete record: payloads may end in zeros), has
 *   only a torn tail after that record, it is cut back there too.
 * - Any other damage after the last complete record is left in place: only
 *   a torn tail at the very end is cut, and new records start at the next
 *   block boundary, so they never share a block with the damage.
 * - A crashed writer never leaves a valid physical record after a torn one.
 *   So when one of this log's records (checksum valid, fitting its block,
 *   at any offset) follows what looks like a torn tail, that "tail" is
 *   damage, such as a flipped length bit: it stays, with the records after
 *   it; what follows those is judged as the end of a log again (a torn
 *   tail, zero fill, an older log's records or Pebble's trailer are cut);
 *   new records start at the next block boundary; and damaged_at /
 *   intact_at say where (verify reports it). Records of the log after
 *   Pebble's end-of-log trailer, which every reader stops at, are refused.
 * - What is cut must be what a crashed writer of this format leaves, and
 *   nothing else: checksum-valid fragments of one unfinished record (FIRST,
 *   then MIDDLEs, each filling its block), then at most one incomplete
 *   physical record whose header, where whole, has a type that follows them
 *   and a length that fits its block, then zero fill (trailers included).
 *   When it is not, but a valid record of the log lies in it or after it
 *   (a hole a lost write left, a complete record the reader did not
 *   reach), that is damage as above: all is kept, fresh block next.
 *   Otherwise, and for a file that is not empty, holds no complete record
 *   and no such valid fragment, and is not all zeros (no log), the decision
 *   is a refusal: nothing may be cut or appended (a text file opened for
 *   append by mistake is left as it was).
 *
 * Like the reader, it does no I/O: it asks for spans of the log by offset
 * and the caller reads them into a buffer the module owns.
 *
 *   llog_resume *t = llog_resume_new(size, LLOG_DIALECT_LEVELDB, 0, 0);
 *   uint64_t at; size_t len; uint8_t *into;
 *   while (llog_resume_want(t, &at, &len, &into))
 *       llog_resume_got(t, pread(fd, into, len, at));   // bytes actually read
 *   llog_resume_decision(t, &result);
 *   llog_resume_free(t);
 */
#ifndef LLOG_LOG_RESUME_H
#define LLOG_LOG_RESUME_H

#include "log_format.h"

typedef struct llog_resume_result {
    uint64_t cut;    /* the log's new length: truncate to it, append there */
    int fresh_block; /* 1: damage stays before `cut`; the next record must
                        start at a block boundary (zero-fill up to it) */
    uint64_t clean_end;  /* end of the last complete record (0 if none) */
    uint64_t refused_at; /* when refusal is set: where the log stops */
    const char *refusal; /* NULL, or why the file does not end like a log
                            (static text): then leave it as it is */
    int no_log;          /* with refusal: the file holds no valid record at
                            all (it is no log), rather than ending unlike one */
    uint64_t damaged_at; /* when intact_at > 0: where the part taken for a
                            torn tail began, until ... */
    uint64_t intact_at;  /* ... a valid record was found here after it */
} llog_resume_result;

typedef struct llog_resume llog_resume;

/*
 * Starts deciding for a log of `size` bytes in a dialect (docs/rocksdb.md),
 * whose recyclable records carry log_number (when has_log_number; else the
 * first one's). In a recycled file, what follows the log's last record may
 * be an older log's records, and Pebble ends a closed log with a trailer:
 * both are cut like a torn tail. NULL when out of memory.
 */
llog_resume *llog_resume_new(uint64_t size, llog_dialect dialect,
                             int has_log_number, uint64_t log_number);

void llog_resume_free(llog_resume *t);

/*
 * Returns 1 when the module needs the log's bytes [*offset, *offset + *len)
 * (*len <= LLOG_BLOCK_SIZE, never past `size`): read them into *into, then
 * call llog_resume_got. Returns 0 when the result is ready (or the module has
 * failed: llog_resume_decision says which).
 */
int llog_resume_want(llog_resume *t, uint64_t *offset, size_t *len,
                     uint8_t **into);

/*
 * Says how many of the bytes asked for were read into the buffer: fewer
 * than *len means the file ended there (it shrank since `size` was taken),
 * and the module carries on as if the log ended at that point.
 */
void llog_resume_got(llog_resume *t, size_t got);

/*
 * The decision, once llog_resume_want has returned 0: LLOG_OK and *out, or
 * the status that stopped the module (LLOG_ERR_NOMEM; LLOG_ERR_ARG when
 * asked before the decision is made).
 */
llog_status llog_resume_decision(const llog_resume *t,
                                 llog_resume_result *out);

#endif /* LLOG_LOG_RESUME_H */
