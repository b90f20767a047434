/*
 * log_regions.h - the physical regions of a log's blocks, by the reader's
 * rules: the one walker of a block's bytes that tells what each span is.
 *
 * A block is tiled by regions: records (of this log, or of another one in a
 * recycled file), and, ending the block's walk, a trailer, zero fill,
 * garbage (a length that runs past the block, or everything after a record
 * whose checksum does not match: LevelDB drops the rest of the block, as
 * the length may be what is damaged), a torn tail (the data ends inside a
 * record) or Pebble's end-of-log trailer with the rest of its block. Each
 * header is decoded once (llog_header_region). The walker learns the log's
 * number from its first recyclable record, as the reader does, unless it
 * was given. leveldb_log.scan() is its map of a file; the reader and the
 * append rule judge bytes by the same functions of log_header.h.
 *
 *   llog_regions w;
 *   llog_regions_init(&w, dialect, verify, has_log_number, log_number);
 *   for each block:
 *       llog_regions_feed(&w, block, len, len < LLOG_BLOCK_SIZE);
 *       while (llog_regions_next(&w, &region)) ...
 */
#ifndef LLOG_LOG_REGIONS_H
#define LLOG_LOG_REGIONS_H

#include "log_header.h"

typedef enum llog_region_kind {
    LLOG_KIND_RECORD,    /* a physical record of the log, whole */
    LLOG_KIND_OTHER_LOG, /* a whole recyclable record of another log number
                            (an older log's, in a recycled file) */
    LLOG_KIND_TRAILER,   /* a full block's last bytes, too few for a header */
    LLOG_KIND_ZERO,      /* zero fill (type 0, length 0) to the block's end */
    LLOG_KIND_GARBAGE,   /* dropped as damage to the block's end: reason */
    LLOG_KIND_TORN,      /* the data ends inside this record: a torn tail */
    LLOG_KIND_END        /* Pebble's trailer, and the rest of its block */
} llog_region_kind;

/* One region: `size` bytes from `at` in the block. */
typedef struct llog_region_info {
    llog_region_kind kind;
    size_t at;
    size_t size;
    int has_header; /* h holds a whole LLOG_HEADER_SIZE-byte header (for a
                       record, the whole header of its size) */
    llog_header h;
    int checksum;       /* records: 1 matches, 0 not, -1 not checked */
    const char *reason; /* GARBAGE: LLOG_REASON_*; TORN: the implausible
                           tail's text (llog_torn_implausible), or NULL */
} llog_region_info;

/* The walker's state: the log (dialect, number) and the block walked. */
typedef struct llog_regions {
    llog_dialect dialect;
    const uint8_t *types;
    int verify;
    int has_log_number;
    uint64_t log_number;
    const uint8_t *block;
    size_t len;
    int final;
    size_t at;
    int bad_checksum; /* the record before had one: garbage follows */
    int done;
} llog_regions;

/* Starts a walk of a log in a dialect; checksums are checked when verify;
 * recyclable records carry log_number when has_log_number (else the first
 * one's number is taken). */
void llog_regions_init(llog_regions *w, llog_dialect dialect, int verify,
                       int has_log_number, uint64_t log_number);

/* Walks the next block: len bytes at block (at most LLOG_BLOCK_SIZE),
 * `final` when the log ends in it (a short block). */
void llog_regions_feed(llog_regions *w, const uint8_t *block, size_t len,
                       int final);

/* The block's next region into *out: 1, or 0 when the block is done. */
int llog_regions_next(llog_regions *w, llog_region_info *out);

#endif /* LLOG_LOG_REGIONS_H */
