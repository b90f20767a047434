/*
 * log_reader_internal.h - what the two files of the reader share: its state
 * and the steps each hands the other. log_reader.c reads LevelDB's logs
 * (the hot path), ranges and the look-back; log_reader_dialect.c reads
 * RocksDB's and Pebble's (docs/rocksdb.md) and walks a range's prologue.
 *
 * Internal: not installed and not part of the API (log_reader.h); its
 * functions are hidden from a shared library's exports.
 */
#ifndef LLOG_READER_INTERNAL_H
#define LLOG_READER_INTERNAL_H

#include "log_reader.h"

#if defined(__GNUC__) || defined(__clang__)
#define LLOG_READER_INTERNAL __attribute__((visibility("hidden")))
#else
#define LLOG_READER_INTERNAL
#endif

enum phase {
    PHASE_DETECT,     /* options.detect: block 0 tells the dialect first */
    PHASE_PROLOGUE,   /* other dialects: what block 0 states (log_reader.h) */
    PHASE_SYNC_START, /* is the block holding `start` entered mid-record? */
    PHASE_SYNC_BACK,  /* walking back over MIDDLE-only blocks */
    PHASE_READ,
    PHASE_READ_DIALECT, /* PHASE_READ in another dialect */
    PHASE_DONE,
    PHASE_FAILED
};

enum step_result { STEP_CONTINUE, STEP_NEED_BLOCK, STEP_EOF };

/* The recyclable fragments' types, LLOG_RECYCLABLE_FULL to _LAST. */
#define RECYCLABLE_TYPES (LLOG_RECYCLABLE_LAST - LLOG_RECYCLABLE_FULL + 1)

/* One step queues at most a report, a report, a record. */
#define QUEUE_MAX 3

/* At most this many records are checked ahead (see fast_at below). */
#define LLOG_FAST_MAX 16

struct llog_reader {
    llog_reader_options opt;
    enum phase phase;
    uint64_t probe; /* SYNC phases: offset of the block examined */
    int resync;     /* skip MIDDLE and LAST until another type shows up */

    const uint8_t *block; /* the block fed by the caller */
    const uint8_t *rest;  /* its bytes past the first header, when fed in
                             two pieces (llog_reader_feed_split); else NULL */
    size_t block_len;
    uint64_t block_offset;
    int have_block;
    uint64_t pos; /* offset of the next unparsed byte */

    int in_record;          /* a fragmented record is open */
    uint64_t record_offset; /* its first header */
    uint64_t open_size;     /* payload bytes of its fragments so far */
    uint8_t *buf;           /* those bytes, when the record is in range: */
    size_t buf_len;         /* the reader's own buffer, or the caller's */
    size_t buf_cap;         /* (opt.reserve) */
    uint64_t clean_end;

    llog_event *out; /* the caller's event, while none was produced */
    llog_event queue[QUEUE_MAX];
    int queue_head;
    int queue_len;
    llog_status failure;
    char reason[32]; /* "unknown record type N" */
    /* The recovery mode's verdicts (llog_verdict) on a corruption and on a
     * torn tail, for the reader's mode and dialect. */
    uint8_t corruption_verdict;
    uint8_t torn_verdict;

    /* Other dialects (docs/rocksdb.md) */
    int rocksdb;           /* RocksDB's dialect: its texts and endings */
    int recycled;          /* a recyclable record was read */
    uint64_t recycled_at;  /* where: a range tells it only before its end */
    uint64_t number_at;    /* where the log number was learnt, if not given */
    int first_record_read; /* a range's prologue saw a user record */
    uint64_t meta_end;     /* clean_end, for the last metadata record */
    int compressed;        /* the log said its records are zstd frames */
    int compression_seen;
    int have_log_number;
    uint64_t log_number;
    uint32_t *ts_families; /* column families whose timestamp size is known */
    size_t ts_count, ts_cap;
    /* The dialect's types at a glance (llog_type_role | header size << 3),
     * and the checksum of types 5-8 with the log number, from which a
     * recyclable record's checksum goes on over its payload. */
    uint8_t types[256];
    uint32_t recyclable_crc[RECYCLABLE_TYPES];
    uint64_t prologue_at; /* PHASE_PROLOGUE: the block walked */
    uint64_t ended_at;    /* 1 + where an older log's record ended it */
    int detecting; /* options.detect, and block 0 has not told it for good */

    /* Short FULL records after the one just read, in the same block, their
     * checksums checked together (log_reader.c, "checked ahead"): the next
     * calls hand them out in order while pos is fast_at. */
    uint64_t fast_at;
    unsigned fast_i, fast_n;
    const uint8_t *fast_data[LLOG_FAST_MAX];
    uint32_t fast_len[LLOG_FAST_MAX];
};

/* 1 when offset lies in the range read, [start, end). */
static inline int in_range(const llog_reader *r, uint64_t offset) {
    return offset >= r->opt.start && offset < r->opt.end;
}

/* 1 when the open record is returned (it begins in range): else its bytes
 * are only counted. */
static inline int kept(const llog_reader *r) {
    return r->record_offset >= r->opt.start;
}

/* Skips the rest of the current block. */
static inline void next_block(llog_reader *r) {
    r->pos = r->block_offset + LLOG_BLOCK_SIZE;
}

/* ---- log_reader.c: the steps LevelDB's reading shares ------------------ */

/* Each is the static function of log_reader.c named without the prefix
 * (documented there), which LevelDB's hot path inlines. */

LLOG_READER_INTERNAL llog_event *llog_reader_push(llog_reader *r,
                                                  llog_event_kind kind);
LLOG_READER_INTERNAL void llog_reader_report(llog_reader *r, uint64_t offset,
                                             uint64_t size,
                                             const char *reason);
LLOG_READER_INTERNAL void llog_reader_bad_physical(llog_reader *r);
LLOG_READER_INTERNAL void llog_reader_drop_unfinished(llog_reader *r,
                                                      unsigned role);
LLOG_READER_INTERNAL void llog_reader_on_fragment(llog_reader *r,
                                                  unsigned role, unsigned type,
                                                  uint64_t at,
                                                  const uint8_t *payload,
                                                  size_t n, size_t raw);
LLOG_READER_INTERNAL llog_event *
llog_reader_end_of_data(llog_reader *r, size_t left, const char *tail);
LLOG_READER_INTERNAL void llog_reader_torn_physical(llog_reader *r, size_t in,
                                                    size_t left,
                                                    llog_header h);
LLOG_READER_INTERNAL enum step_result
llog_reader_drop_rest(llog_reader *r, size_t left, const char *reason);

/* Sets up the reader for a dialect (its tables, verdicts, log number), and
 * the phase it begins in (the range's). */
LLOG_READER_INTERNAL void llog_reader_set_dialect(llog_reader *r,
                                                  llog_dialect dialect);
LLOG_READER_INTERNAL void llog_reader_begin(llog_reader *r);

/* ---- log_reader_dialect.c: other dialects (docs/rocksdb.md) ------------ */

/* options.detect: block 0 was fed; the dialect it tells (log_reader.h). */
LLOG_READER_INTERNAL void llog_reader_detect(llog_reader *r);

/* Sets the log number recyclable records must carry. */
LLOG_READER_INTERNAL void llog_reader_learn_log_number(llog_reader *r,
                                                       uint64_t number);
/* step() of PHASE_READ_DIALECT: one physical record of another dialect. */
LLOG_READER_INTERNAL enum step_result llog_reader_step_dialect(llog_reader *r);
/* PHASE_PROLOGUE, fed the block at prologue_at. */
LLOG_READER_INTERNAL void llog_reader_prologue_step(llog_reader *r);

#endif /* LLOG_READER_INTERNAL_H */
