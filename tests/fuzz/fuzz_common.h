/*
 * fuzz_common.h - what the libFuzzer harnesses share: reading fuzz input,
 * driving the reader over a log held in memory, and checking the invariants
 * every read must keep, whatever the bytes.
 *
 * The harnesses are built by .ci/fuzz.sh with clang -fsanitize=fuzzer,
 * address,undefined. A broken invariant calls FUZZ_CHECK, which prints the
 * condition and aborts, so libFuzzer saves the input as a crash artifact.
 */
#ifndef LLOG_FUZZ_COMMON_H
#define LLOG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "log_header.h"
#include "log_reader.h"
#include "log_writer.h"

#include "fuzz_check.h"

/* ---- consuming the fuzz input ----------------------------------------- */

typedef struct {
    const uint8_t *p;
    size_t left;
} cursor;

static inline uint64_t take(cursor *c, int nbytes) {
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++) {
        v |= (uint64_t)(c->left ? *c->p : 0) << (8 * i);
        if (c->left) {
            c->p++;
            c->left--;
        }
    }
    return v;
}

/* A small deterministic generator for sizes and payload bytes. */
static inline uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* FNV-1a: a record is compared by (offset, length, hash); hashing also reads
 * every byte the reader hands out, so ASan checks the pointer is valid. */
static inline uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

/* ---- what a read saw --------------------------------------------------- */

typedef struct {
    int is_record; /* 1: a record, 2: a metadata record, 0: a corruption */
    uint64_t offset;
    uint64_t size; /* record length, or bytes dropped */
    uint64_t hash;
    char reason[40];
} seen_event;

typedef struct {
    seen_event *ev;
    size_t n, cap;
    int torn; /* the last EOF left an incomplete tail */
    uint64_t torn_offset, torn_size;
    int done; /* DONE was reached */
    uint64_t clean_end;
    int has_log_number; /* what the reader held at the end */
    uint64_t log_number;
    int recycled;
} seen_log;

static inline void seen_push(seen_log *s, const seen_event *e) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->ev = realloc(s->ev, s->cap * sizeof *s->ev);
        FUZZ_CHECK(s->ev != NULL);
    }
    s->ev[s->n++] = *e;
}

static inline void seen_free(seen_log *s) { free(s->ev); }

/* ---- the caller's assembly buffers (llog_reader_options.reserve) ------- */

/* Every buffer handed to the reader, freed only when the read is over: a
 * block fed in two pieces may still be read from one the reader has moved
 * on from, and a record handed out points into one. */
typedef struct {
    uint8_t **all;
    size_t n, cap;
    uint8_t *current; /* the one last returned */
} buffers;

static inline uint8_t *buffers_reserve(void *ctx, size_t len, size_t need,
                                       size_t *cap) {
    buffers *b = ctx;
    FUZZ_CHECK(need > len && (len == 0 || b->current != NULL));
    uint8_t *fresh = malloc(2 * need);
    if (fresh == NULL)
        return NULL;
    if (len > 0)
        memcpy(fresh, b->current, len);
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->all = realloc(b->all, b->cap * sizeof *b->all);
        FUZZ_CHECK(b->all != NULL);
    }
    b->all[b->n++] = fresh;
    b->current = fresh;
    *cap = 2 * need;
    return fresh;
}

static inline void buffers_free(buffers *b) {
    for (size_t i = 0; i < b->n; i++)
        free(b->all[i]);
    free(b->all);
}

/* ---- driving the reader ------------------------------------------------ */

/*
 * Runs reader r until EOF or DONE over the first `visible` bytes of log.
 * Checks, for every event: records' offsets strictly increase and lie in
 * [start, end) and inside the visible bytes; corruptions lie in [start, end)
 * and drop only visible bytes; the reader asks only for block-aligned offsets
 * and, when sequential, never for a block before one it was fed; the number
 * of calls is bounded (no hang). Returns 1 at EOF, 0 at DONE.
 */
/* The records llog_reader_next_run reads into run (emptied first), each
 * checked as drive() checks a record event, and then seen; how many. */
static inline size_t take_run(llog_reader *r, const llog_reader_options *opt,
                              const uint8_t *log, size_t visible, seen_log *s,
                              uint64_t *last_record, llog_run *run) {
    run->n = run->data_len = 0;
    run->ends[0] = 0;
    size_t k = llog_reader_next_run(r, run);
    FUZZ_CHECK(k == run->n && k <= run->max);
    for (size_t i = 0; i < k; i++) {
        uint64_t at = run->offsets[i];
        size_t len = (size_t)(run->ends[i + 1] - run->ends[i]);
        const uint8_t *data = run->data + run->ends[i];
        FUZZ_CHECK(at >= opt->start && at < opt->end);
        FUZZ_CHECK(*last_record == UINT64_MAX || at > *last_record);
        FUZZ_CHECK(at + LLOG_HEADER_SIZE + len <= visible);
        *last_record = at;
        /* a whole FULL record of LevelDB's, its payload as stored */
        llog_header hd = llog_header_decode(log + at);
        FUZZ_CHECK(hd.type == LLOG_FULL && hd.length == len);
        FUZZ_CHECK(memcmp(data, log + at + LLOG_HEADER_SIZE, len) == 0);
        if (opt->verify_checksums)
            FUZZ_CHECK(llog_checksum_ok(&hd, log + at + LLOG_HEADER_SIZE));
        seen_event e = {1, at, len, hash_bytes(data, len), ""};
        seen_push(s, &e);
    }
    if (k > 0) /* where the caller's next read begins */
        FUZZ_CHECK(llog_reader_position(r) ==
                   run->offsets[k - 1] + LLOG_HEADER_SIZE +
                       (size_t)(run->ends[k] - run->ends[k - 1]));
    return k;
}

/* The recovery mode's verdict (docs/recovery.md's table) on a corruption,
 * or on a torn tail (`torn`), in the reader's dialect. */
static inline unsigned mode_verdict(const llog_reader_options *opt, int torn) {
    switch (opt->recovery) {
    case LLOG_RECOVER_SKIP:
        return LLOG_READ_ON;
    case LLOG_RECOVER_TOLERATE_TAIL:
        return torn ? LLOG_READ_ON : LLOG_FAIL;
    case LLOG_RECOVER_POINT_IN_TIME:
        return !torn || opt->dialect == LLOG_DIALECT_ROCKSDB ? LLOG_STOP
                                                             : LLOG_READ_ON;
    default:
        return LLOG_FAIL;
    }
}

static inline int drive(llog_reader *r, const llog_reader_options *opt,
                        const uint8_t *log, size_t visible, seen_log *s,
                        uint64_t *last_record, uint64_t *last_fed,
                        llog_run *run) {
    /* Each call consumes a header or a block, or emits a queued event (at
     * most 3 per step); the look-back reads each block at most once. */
    uint64_t blocks = visible / LLOG_BLOCK_SIZE + 2;
    uint64_t bound = 8 * (visible / LLOG_HEADER_SIZE + 4 * blocks) + 64;
    for (uint64_t calls = 0;; calls++) {
        FUZZ_CHECK(calls < bound);
        if (run != NULL && take_run(r, opt, log, visible, s, last_record, run))
            continue; /* records read in bulk, as the Arrow batches do */
        llog_event ev;
        llog_reader_next(r, &ev);
        switch (ev.kind) {
        case LLOG_EV_NEED_BLOCK: {
            uint64_t want = llog_reader_wanted(r);
            FUZZ_CHECK(want % LLOG_BLOCK_SIZE == 0);
            if (opt->sequential && *last_fed != UINT64_MAX)
                FUZZ_CHECK(want >= *last_fed);
            *last_fed = want;
            size_t len = 0;
            if (want < visible)
                len = visible - want < LLOG_BLOCK_SIZE
                          ? (size_t)(visible - want)
                          : LLOG_BLOCK_SIZE;
            size_t assembled;
            if (opt->reserve != NULL && len > LLOG_HEADER_SIZE &&
                llog_reader_in_place(r, &assembled)) {
                /* Read the payload where the record goes on: whatever the
                 * block holds, the reader must make the same of it. */
                uint8_t *at = llog_reader_append_point(r, LLOG_MAX_FRAGMENT);
                FUZZ_CHECK(at != NULL);
                memcpy(at, log + want + LLOG_HEADER_SIZE,
                       len - LLOG_HEADER_SIZE);
                llog_reader_feed_split(r, log + want, at, len);
                break;
            }
            llog_reader_feed(r, len ? log + want : NULL, len);
            break;
        }
        case LLOG_EV_RECORD: {
            FUZZ_CHECK(ev.offset >= opt->start && ev.offset < opt->end);
            FUZZ_CHECK(*last_record == UINT64_MAX || ev.offset > *last_record);
            FUZZ_CHECK(ev.len == 0 || ev.data != NULL);
            *last_record = ev.offset;
            /* The record's first header, of the size its type has in the
             * dialect (LevelDB's: 7 bytes, FULL or FIRST). */
            const uint8_t *h = log + ev.offset;
            FUZZ_CHECK(ev.offset + LLOG_HEADER_SIZE <= visible);
            llog_header hd = llog_header_decode(h);
            hd.header_size = llog_type_header_size(opt->dialect, hd.type);
            unsigned role = llog_type_role(opt->dialect, hd.type);
            FUZZ_CHECK(ev.offset + hd.header_size + ev.len <= visible);
            const uint8_t *payload = h + hd.header_size;
            if (role == LLOG_ROLE_FULL || opt->reserve == NULL)
                FUZZ_CHECK(!ev.assembled); /* only a caller's buffer is */
            if (role == LLOG_ROLE_FULL) {  /* the payload is right there */
                FUZZ_CHECK(hd.length == ev.len);
                FUZZ_CHECK(ev.len == 0 ||
                           memcmp(ev.data, payload, ev.len) == 0);
            } else {
                FUZZ_CHECK(role == LLOG_ROLE_FIRST);
            }
            if (opt->verify_checksums) /* its first fragment's CRC holds */
                FUZZ_CHECK(llog_checksum_ok_dialect(h, &hd, payload));
            seen_event e = {1, ev.offset, ev.len, hash_bytes(ev.data, ev.len),
                            ""};
            seen_push(s, &e);
            break;
        }
        case LLOG_EV_META: {
            /* Only RocksDB's metadata; the compression record is handed
             * to every reader of a range (it holds for all), wherever it
             * is: RocksDB takes it anywhere before the first record (after
             * records it is reported, and still taken). */
            FUZZ_CHECK(opt->dialect == LLOG_DIALECT_ROCKSDB);
            FUZZ_CHECK(ev.offset + ev.len <= visible);
            if (ev.size == LLOG_RDB_SET_COMPRESSION)
                break;
            FUZZ_CHECK(ev.offset >= opt->start && ev.offset < opt->end);
            seen_event e = {2, ev.offset, ev.size, hash_bytes(ev.data, ev.len),
                            ""};
            seen_push(s, &e);
            break;
        }
        case LLOG_EV_CORRUPTION: {
            FUZZ_CHECK(ev.offset >= opt->start && ev.offset < opt->end);
            FUZZ_CHECK(ev.offset + ev.size <= visible);
            FUZZ_CHECK(ev.reason != NULL && ev.reason[0] != '\0');
            FUZZ_CHECK(ev.verdict == mode_verdict(opt, 0));
            seen_event e = {0, ev.offset, ev.size, 0, ""};
            /* The text may be reader-owned: copy it before the next call. */
            snprintf(e.reason, sizeof e.reason, "%s", ev.reason);
            seen_push(s, &e);
            break;
        }
        case LLOG_EV_EOF:
            s->torn = ev.torn;
            if (ev.torn) {
                FUZZ_CHECK(ev.offset >= opt->start && ev.offset < opt->end);
                FUZZ_CHECK(ev.reason != NULL);
                FUZZ_CHECK(ev.verdict == mode_verdict(opt, 1));
                llog_event also;
                if (llog_reader_torn_also(r, &ev, &also))
                    FUZZ_CHECK(also.verdict == ev.verdict);
                /* RocksDB sizes a file that ends between fragments by the
                 * open record's payload (log_reader.h); every other torn
                 * tail drops the bytes up to the end. */
                if (opt->dialect == LLOG_DIALECT_ROCKSDB &&
                    strcmp(ev.reason, "error reading trailing data due to "
                                      "encountering EOF") == 0)
                    FUZZ_CHECK(ev.offset + ev.size < visible);
                else
                    FUZZ_CHECK(ev.offset + ev.size == visible);
                FUZZ_CHECK(llog_reader_position(r) <= ev.offset);
            }
            s->torn_offset = ev.offset;
            s->torn_size = ev.size;
            s->clean_end = llog_reader_clean_end(r);
            FUZZ_CHECK(s->clean_end <= visible);
            return 1;
        case LLOG_EV_DONE:
            s->done = 1;
            s->torn = 0; /* a tail seen earlier turned out complete */
            s->clean_end = llog_reader_clean_end(r);
            FUZZ_CHECK(s->clean_end <= visible);
            return 0;
        case LLOG_EV_ERROR:
            /* Only out of memory or a record too large for size_t: neither
             * can happen for an input of a few megabytes. */
            FUZZ_CHECK(!"reader failed");
            return 0;
        }
    }
}

/* Notes the log number the reader holds, and whether it saw a recyclable
 * record. */
static inline void seen_numbers(const llog_reader *r, seen_log *s) {
    s->has_log_number = llog_reader_log_number(r, &s->log_number);
    s->recycled = llog_reader_recycled(r);
}

/* 1 when the log may hold what a Pebble reader takes for its trailer: a
 * longer header whose log number is the next one (an approximation: any
 * such bytes, wherever they are). */
static inline int pebble_trailer_possible(const llog_reader_options *opt,
                                          const seen_log *s,
                                          const uint8_t *log, size_t len) {
    uint64_t n = s->log_number;
    if (opt->dialect != LLOG_DIALECT_PEBBLE || !s->has_log_number)
        return 0;
    for (size_t i = 0; i + LLOG_RECYCLABLE_HEADER_SIZE <= len; i++)
        if (log[i + 6] >= 5 && log[i + 6] <= 12 &&
            llog_load32(log + i + 7) == (uint32_t)(n + 1))
            return 1;
    return 0;
}

/* Reads log[0..len) in one go with the given options. */
static inline void read_all(const llog_reader_options *opt, const uint8_t *log,
                            size_t len, seen_log *s) {
    llog_reader *r = llog_reader_new(opt);
    FUZZ_CHECK(r != NULL);
    uint64_t last_record = UINT64_MAX, last_fed = UINT64_MAX;
    int at_eof = drive(r, opt, log, len, s, &last_record, &last_fed, NULL);
    seen_numbers(r, s);
    if (at_eof) {
        /* At EOF nothing changes until the log grows: a second pass over
         * the same bytes yields nothing new and the same tail. */
        seen_log again = {0};
        int still_eof =
            drive(r, opt, log, len, &again, &last_record, &last_fed, NULL);
        FUZZ_CHECK(still_eof);
        FUZZ_CHECK(again.n == 0);
        FUZZ_CHECK(again.torn == s->torn);
        FUZZ_CHECK(!s->torn || (again.torn_offset == s->torn_offset &&
                                again.torn_size == s->torn_size));
        seen_free(&again);
    } else {
        llog_event ev;
        llog_reader_next(r, &ev); /* DONE is final */
        FUZZ_CHECK(ev.kind == LLOG_EV_DONE);
    }
    llog_reader_free(r);
}

/* read_all with every block that goes on with a record read in place. */
static inline void read_in_place(const llog_reader_options *opt,
                                 const uint8_t *log, size_t len, seen_log *s) {
    buffers b = {0};
    llog_reader_options placed = *opt;
    placed.reserve = buffers_reserve;
    placed.reserve_ctx = &b;
    read_all(&placed, log, len, s);
    buffers_free(&b);
}

/*
 * Reads the same log while it "grows": the reader sees a prefix, reaches
 * EOF, and is driven again after more bytes appear, as when following a log
 * being written. `steps` gives the growth increments.
 */
static inline void read_growing(const llog_reader_options *opt,
                                const uint8_t *log, size_t len, uint64_t seed,
                                seen_log *s) {
    llog_reader *r = llog_reader_new(opt);
    FUZZ_CHECK(r != NULL);
    uint64_t last_record = UINT64_MAX, last_fed = UINT64_MAX;
    size_t visible = 0;
    for (;;) {
        if (!drive(r, opt, log, visible, s, &last_record, &last_fed, NULL))
            break;
        if (visible == len)
            break;
        uint64_t step = mix(&seed);
        size_t grow = (step & 3) == 0
                          ? 1 + (size_t)(step >> 8) % 16
                          : 1 + (size_t)(step >> 8) % (2 * LLOG_BLOCK_SIZE);
        visible = len - visible < grow ? len : visible + grow;
    }
    seen_numbers(r, s);
    llog_reader_free(r);
}

/* Reads log[0..len) in one go, records in bulk (llog_reader_next_run)
 * wherever the reader offers them, at most `most` (1 or more) a call and
 * none past `budget` payload bytes, as Reader.iter_batches does. */
static inline void read_runs(const llog_reader_options *opt,
                             const uint8_t *log, size_t len, size_t most,
                             size_t budget, seen_log *s) {
    llog_reader *r = llog_reader_new(opt);
    FUZZ_CHECK(r != NULL);
    /* room for `most` records and a block's bytes, as the contract asks */
    uint64_t *offsets = malloc(most * sizeof *offsets);
    int64_t *ends = malloc((most + 1) * sizeof *ends);
    uint8_t *data = malloc(LLOG_BLOCK_SIZE);
    FUZZ_CHECK(offsets != NULL && ends != NULL && data != NULL);
    llog_run run = {offsets, ends, data, 0, most, 0, budget};
    uint64_t last_record = UINT64_MAX, last_fed = UINT64_MAX;
    drive(r, opt, log, len, s, &last_record, &last_fed, &run);
    seen_numbers(r, s);
    free(offsets);
    free(ends);
    free(data);
    llog_reader_free(r);
}

#endif /* LLOG_FUZZ_COMMON_H */
