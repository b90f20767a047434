/*
 * log_tail.h - where the last complete record of a growing log ends, found
 * from the log's last blocks without reading the rest.
 *
 * A follower of a live log (Spark's stream reader) needs, for each new
 * size of the file, a record boundary it can read up to: every record
 * whose first header lies before it is complete in the file, so a range
 * reader ending there never meets a record still being written. Every
 * block starts with a fresh header, so the boundary is found from the end:
 * the headers of the last block are walked (lengths and types only, no
 * checksum: the range reader checks those); when no record ends there, the
 * first header of each earlier block is read, going back while it is a
 * FIRST or MIDDLE fragment that fills its block (or zero fill), and the
 * first block holding anything else is walked.
 *
 * For a log a writer of its dialect wrote, cut anywhere, the boundary is
 * the end of the last complete record: the `position` a Reader of that
 * prefix reaches. A walk stops at what a writer does not leave before its
 * last record: zero fill, a trailer, a header cut short, a length past its
 * block, a type no writer writes, Pebble's end-of-log trailer, a record of
 * another log (in a recycled file: the log number is taken from the
 * file's first header when the caller does not give it), and, when asked
 * to verify checksums, a record of the walked block whose checksum fails:
 * a writer that extends its file before filling it (mmap) leaves a whole
 * header before payload bytes that are still zeros. The boundary is
 * then the end of the last complete record before it, so damage in the
 * last block holds the boundary back until the log grows past it; the
 * range reader reports it then.
 *
 * No I/O and no allocation: the caller reads the spans asked for.
 *
 *   llog_tail t;
 *   llog_tail_init(&t, size, LLOG_DIALECT_LEVELDB, 0, 0, 1);
 *   uint64_t at; size_t len; uint8_t buf[LLOG_BLOCK_SIZE];
 *   while (llog_tail_want(&t, &at, &len))
 *       llog_tail_got(&t, buf, pread(fd, buf, len, at));  // bytes read
 *   uint64_t end = llog_tail_end(&t);
 */
#ifndef LLOG_LOG_TAIL_H
#define LLOG_LOG_TAIL_H

#include "log_format.h"

/* The walk's state: read it only through the functions below. */
typedef struct llog_tail {
    uint64_t size;  /* the file's size */
    uint64_t block; /* start of the block being asked about */
    uint64_t end;   /* the boundary, once done */
    int phase;      /* what is asked for next */
    llog_dialect dialect;
    int has_log_number;
    uint64_t log_number; /* the log's, when has_log_number */
    int verify;          /* check the walked records' checksums */
} llog_tail;

/* Starts the search in a log of `size` bytes in a dialect, whose
 * recyclable records carry log_number (when has_log_number; else the
 * number in the file's first header, if recyclable); verify: 1 to stop at
 * a record of a walked block whose checksum fails (the reader's
 * verify_checksums; 0 for logs written without valid checksums). */
void llog_tail_init(llog_tail *t, uint64_t size, llog_dialect dialect,
                    int has_log_number, uint64_t log_number, int verify);

/* Returns 1 when the walk needs the bytes [*at, *at + *len) of the log
 * (*len <= LLOG_BLOCK_SIZE, never past `size`): read them, then call
 * llog_tail_got. Returns 0 when the boundary is known. */
int llog_tail_want(const llog_tail *t, uint64_t *at, size_t *len);

/* Hands over the `got` bytes read at *at (fewer than *len: the file ended
 * early, and the walk goes on as if it ended there). */
void llog_tail_got(llog_tail *t, const uint8_t *bytes, size_t got);

/* The boundary, once llog_tail_want has returned 0 (0 before). */
uint64_t llog_tail_end(const llog_tail *t);

#endif /* LLOG_LOG_TAIL_H */
