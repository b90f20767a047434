/*
 * test_dialects.c - RocksDB's and Pebble's dialects (docs/rocksdb.md) in the
 * core: golden logs built byte by byte (every row of the recovery-mode
 * table in all four modes, recyclable headers, metadata records, unknown
 * types, old log numbers, compressed records through a decode callback,
 * Pebble's walSync chunks and trailer), the writer's longer headers,
 * chunks, metadata records and trailer, ranges over logs of every header,
 * and log_tail in every dialect.
 *
 * Expected events are written from docs/rocksdb.md and log_reader.h; the
 * records are encoded here, with the reference CRC (ref_crc32c.h).
 *
 * At the core's level a recovery mode changes only where a log ends (an
 * old record, damage in a recycled log in "tolerate_tail", the trailer):
 * raising in "absolute" and stopping at the first report in
 * "point_in_time" are the binding's, so the core's events for those rows
 * are the ones of "skip" up to the end of the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_tail.h"
#include "log_writer.h"
#include "reading.h"

#define RB LLOG_RECYCLABLE_HEADER_SIZE
#define SB LLOG_SYNC_HEADER_SIZE

static const char TRUNC_BODY[] = "truncated record body";
static const char TRUNC_HEADER[] = "truncated header";
static const char EOF_OPEN[] =
    "error reading trailing data due to encountering EOF";
static const char OLD_OPEN[] =
    "error reading trailing data due to encountering old record";
static const char AFTER_LEGACY[] = "recyclable record after legacy records";

/* ---- encoding (docs/rocksdb.md, "Headers") ------------------------------ */

/* Appends a physical record with a header of hs bytes (7, 11 or 19): the
 * log number's low 32 bits from byte 7, the synced offset from byte 11;
 * the CRC covers the type byte, the rest of the header, the payload.
 * Returns its offset. */
static size_t put_d(buf *b, unsigned type, const void *payload, size_t n,
                    size_t hs, uint32_t log_number, uint64_t synced) {
    size_t at = b->len;
    uint8_t *h = buf_grow(b, hs);
    h[4] = (uint8_t)n;
    h[5] = (uint8_t)(n >> 8);
    h[6] = (uint8_t)type;
    if (hs >= RB)
        for (int i = 0; i < 4; i++)
            h[7 + i] = (uint8_t)(log_number >> (8 * i));
    if (hs == SB)
        for (int i = 0; i < 8; i++)
            h[11 + i] = (uint8_t)(synced >> (8 * i));
    uint32_t crc = ref_crc32c(0, h + 6, hs - 6);
    crc = ref_crc32c(crc, payload, n);
    uint32_t masked = ref_crc32c_mask(crc);
    for (int i = 0; i < 4; i++)
        h[i] = (uint8_t)(masked >> (8 * i));
    buf_put(b, payload, n);
    return at;
}

/* A legacy (7-byte) and a recyclable (11-byte) record. */
static size_t put7(buf *b, unsigned type, const void *p, size_t n) {
    return put_d(b, type, p, n, H, 0, 0);
}

static size_t put11(buf *b, unsigned type, const void *p, size_t n,
                    uint32_t log_number) {
    return put_d(b, type, p, n, RB, log_number, 0);
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- reading ------------------------------------------------------------ */

static read_opts opts(llog_dialect d, llog_recovery mode) {
    read_opts o = WHOLE;
    o.dialect = d;
    o.recovery = mode;
    return o;
}

/* What the test is at, printed with a failure of expect_d. */
static char ctx[160];
#define CTX(...) snprintf(ctx, sizeof ctx, __VA_ARGS__)

/* Reads log with o, seekable and sequential, and checks the events. */
static read_info expect_d(const char *what, const buf *log, read_opts o,
                          const tevs *want) {
    tevs got = {0};
    read_info info = read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(%s; dialect %d, recovery %d)", ctx, (int)o.dialect,
             (int)o.recovery);
    tevs_free(&got);
    o.sequential = 1;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(%s; sequential; dialect %d, recovery %d)", ctx, (int)o.dialect,
             (int)o.recovery);
    tevs_free(&got);
    return info;
}

/* The end of the range or of a closed log: nothing more, ever. */
static void want_done(tevs *l) {
    tev done = {.kind = LLOG_EV_DONE};
    tevs_add_copy(l, &done);
}

static const char *mode_name(llog_recovery m) {
    return llog_recovery_name((unsigned)m);
}

/* What a whole read of log with o learnt: the log number (*has) and
 * whether it read a recyclable record. */
static uint64_t numbers_of(const buf *log, read_opts o, int *has,
                           int *recycled) {
    llog_reader_options ro = {.start = o.start,
                              .end = o.end,
                              .verify_checksums = 1,
                              .sequential = o.sequential,
                              .dialect = o.dialect,
                              .recovery = o.recovery,
                              .has_log_number = o.has_log_number,
                              .log_number = o.log_number};
    llog_reader *r = llog_reader_new(&ro);
    uint64_t n = 0;
    if (!CHECK(r != NULL))
        return 0;
    feeder f = {.log = log->p, .len = log->len};
    tevs ignored = {0};
    drive(r, &f, 0, &ignored);
    tevs_free(&ignored);
    *has = llog_reader_log_number(r, &n);
    *recycled = llog_reader_recycled(r);
    llog_reader_free(r);
    return n;
}

/* ---- recyclable records ------------------------------------------------- */

static void test_recyclable_records_read_in_every_mode(void) {
    buf log = {0};
    uint8_t *big = xmalloc(2 * B);
    rnd_fill(big, 2 * B);
    put11(&log, 5, "hello", 5, 7);
    size_t first = B - 16 - RB; /* FIRST fills block 0 */
    put11(&log, 6, big, first, 7);
    put11(&log, 7, big + first, B - RB, 7);
    put11(&log, 8, big + first + B - RB, 3, 7);
    CHECK_EQ(log.len, 2 * B + RB + 3);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        want_rec(&want, 0, "hello", 5);
        want_rec(&want, 16, big, first + B - RB + 3);
        want_eof(&want);
        read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
        read_info info = expect_d(mode_name(m), &log, o, &want);
        CHECK_EQ(info.clean_end, log.len);
        CHECK_EQ(info.position, log.len);
        o.dialect = LLOG_DIALECT_PEBBLE;
        expect_d(mode_name(m), &log, o, &want);
        tevs_free(&want);
        int has = 0, recycled = 0;
        CHECK_EQ(numbers_of(&log, o, &has, &recycled), 7);
        CHECK(has && recycled);
    }
    /* Read as LevelDB's, every block is a checksum mismatch (the CRC
     * covers the log number, where LevelDB expects the payload). */
    tevs want = {0};
    want_bad(&want, 0, B, CHECKSUM);
    want_bad(&want, B, B, CHECKSUM);
    want_bad(&want, 2 * B, RB + 3, CHECKSUM);
    want_eof(&want);
    expect_d("recyclable log read as LevelDB's", &log, WHOLE, &want);
    tevs_free(&want);
    free(big);
    buf_free(&log);
}

static void test_recyclable_crc_covers_the_log_number(void) {
    /* A flipped bit in a log number: the number is checked before the CRC
     * (RocksDB's order), so the record is an older log's, skipped silently
     * in "skip" mode. A flipped bit of the CRC is a mismatch. */
    buf log = {0};
    put11(&log, 5, "abc", 3, 7);
    put11(&log, 5, "def", 3, 7);
    log.p[14 + 8] ^= 1; /* the second record's log number: 7 -> 263 */
    read_opts o = opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP);
    tevs want = {0};
    want_rec(&want, 0, "abc", 3);
    want_eof(&want); /* skipped silently: an old record */
    expect_d("log number flipped", &log, o, &want);
    tevs_free(&want);
    log.p[14 + 8] ^= 1;
    log.p[14 + 1] ^= 1; /* its CRC */
    want_rec(&want, 0, "abc", 3);
    want_bad(&want, 14, 14, CHECKSUM);
    want_eof(&want);
    expect_d("CRC flipped", &log, o, &want);
    tevs_free(&want);
    /* The CRC covers the log number: the same bytes with the right CRC for
     * a log number the header does not hold fail. */
    buf other = {0};
    put11(&other, 5, "def", 3, 8);
    put_u32(other.p + 7, 7); /* header says 7, CRC computed for 8 */
    want_bad(&want, 0, 14, CHECKSUM);
    want_eof(&want);
    expect_d("CRC over another log number", &other, o, &want);
    tevs_free(&want);
    buf_free(&other);
    buf_free(&log);
}

/* ---- the recovery-mode table (docs/rocksdb.md) ---------------------------
 */

static void test_row_old_record_between_records(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 7);
    put11(&log, 5, "b", 1, 7);
    size_t old = put11(&log, 5, "old", 3, 4);
    put11(&log, 5, "old2", 4, 4);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        /* skip: skipped silently, reading goes on; the others: the log
         * ends, silently, before the old record (not consumed) */
        tevs want = {0};
        want_rec(&want, 0, "a", 1);
        want_rec(&want, 12, "b", 1);
        want_eof(&want);
        read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
        read_info info = expect_d(mode_name(m), &log, o, &want);
        CHECK_EQ(info.position, m == LLOG_RECOVER_SKIP ? log.len : old);
        CHECK_EQ(info.clean_end, old);
        o.dialect = LLOG_DIALECT_PEBBLE; /* the same in Pebble's */
        expect_d(mode_name(m), &log, o, &want);
        tevs_free(&want);
    }
    /* The log number given: 4's records are the current ones, 7's old. */
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
        o.has_log_number = 1;
        o.log_number = 4;
        tevs want = {0};
        if (m == LLOG_RECOVER_SKIP) {
            want_rec(&want, old, "old", 3);
            want_rec(&want, old + 14, "old2", 4);
        }
        want_eof(&want);
        expect_d("log number 4 given", &log, o, &want);
        tevs_free(&want);
    }
    buf_free(&log);
}

static void test_row_old_record_inside_a_record(void) {
    buf log = {0};
    put11(&log, 6, "ab", 2, 7); /* FIRST at 0 */
    put11(&log, 7, "cd", 2, 4); /* an old MIDDLE at 13 */
    put11(&log, 8, "ef", 2, 4); /* an old LAST at 26 */
    put11(&log, 5, "z", 1, 7);  /* FULL at 39 */
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        switch (m) {
        case LLOG_RECOVER_SKIP: /* error in middle of record, reads on */
            want_bad(&want, 0, 2, MIDDLE_ERR);
            want_rec(&want, 39, "z", 1);
            break;
        case LLOG_RECOVER_TOLERATE_TAIL: /* the log ends, silently */
            break;
        default: /* reported; the log ends (absolute: the binding raises) */
            want_bad(&want, 0, 2, OLD_OPEN);
            break;
        }
        want_eof(&want);
        read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
        read_info info = expect_d(mode_name(m), &log, o, &want);
        if (m != LLOG_RECOVER_SKIP)
            CHECK_EQ(info.position, 13);
        /* Pebble: the same rule, with LevelDB's text in skip mode */
        o.dialect = LLOG_DIALECT_PEBBLE;
        expect_d(mode_name(m), &log, o, &want);
        tevs_free(&want);
    }
    buf_free(&log);
}

/* (Long: two logs, each read in the four modes, with and without
 * recycling.) */
static void test_row_damage_in_a_recycled_log(void) {
    /* A bad checksum, then a bad length, each in a log with recyclable
     * records and in one without. */
    for (int recyclable = 0; recyclable < 2; recyclable++) {
        size_t hs = recyclable ? RB : H;
        unsigned full = recyclable ? 5 : 1;
        buf log = {0};
        put_d(&log, full, "a", 1, hs, 7, 0);
        size_t bad = put_d(&log, full, "bb", 2, hs, 7, 0);
        log.p[bad + 8 + (hs - H)] ^= 1; /* its payload: a CRC mismatch */
        put_d(&log, full, "c", 1, hs, 7, 0);
        for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
            tevs want = {0};
            want_rec(&want, 0, "a", 1);
            if (!(recyclable && m == LLOG_RECOVER_TOLERATE_TAIL))
                want_bad(&want, bad, log.len - bad, CHECKSUM);
            want_eof(&want);
            read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
            CTX("(%s, recyclable %d)", mode_name(m), recyclable);
            read_info info = expect_d("bad checksum", &log, o, &want);
            if (recyclable && m == LLOG_RECOVER_TOLERATE_TAIL)
                CHECK_EQ(info.position, bad);
            tevs_free(&want);
        }
        buf_free(&log);

        /* A length running past a full block. */
        put_d(&log, full, "a", 1, hs, 7, 0);
        bad = log.len;
        put_d(&log, full, "xx", 2, hs, 7, 0);
        log.p[bad + 4] = 0xFF;
        log.p[bad + 5] = 0xFF;
        buf_zero_to(&log, B);
        size_t next = put_d(&log, full, "c", 1, hs, 7, 0);
        for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
            tevs want = {0};
            want_rec(&want, 0, "a", 1);
            if (!(recyclable && m == LLOG_RECOVER_TOLERATE_TAIL)) {
                want_bad(&want, bad, B - bad, BAD_LENGTH);
                want_rec(&want, next, "c", 1);
            }
            want_eof(&want);
            read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
            CTX("(%s, recyclable %d)", mode_name(m), recyclable);
            expect_d("bad length", &log, o, &want);
            tevs_free(&want);
        }
        buf_free(&log);
    }
}

static void test_row_file_ends_inside_a_physical_record(void) {
    /* RocksDB's texts and sizes: the cut record's bytes from its header to
     * the end of the file; "truncated header" while the header (of the
     * size its type has) is not whole. */
    for (int recyclable = 0; recyclable < 2; recyclable++) {
        size_t hs = recyclable ? RB : H;
        unsigned full = recyclable ? 5 : 1;
        buf whole = {0};
        put_d(&whole, full, "a", 1, hs, 7, 0);
        size_t cut_rec = put_d(&whole, full, "0123456789", 10, hs, 7, 0);
        static const size_t keep[] = {1, 5, 7, 9, 10, 11, 15, 20};
        for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
            if (keep[k] >= hs + 10)
                continue;
            buf log = {0};
            buf_put(&log, whole.p, cut_rec + keep[k]);
            const char *reason = keep[k] >= hs ? TRUNC_BODY : TRUNC_HEADER;
            for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
                tevs want = {0};
                want_rec(&want, 0, "a", 1);
                want_torn(&want, cut_rec, keep[k], reason);
                read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
                CTX("(%s, %zu bytes kept, recyclable %d)", mode_name(m),
                    keep[k], recyclable);
                read_info info = expect_d("cut record", &log, o, &want);
                CHECK_EQ(info.position, cut_rec);
                CHECK_EQ(info.clean_end, cut_rec);
                tevs_free(&want);
            }
            buf_free(&log);
        }
        buf_free(&whole);
    }
}

static void test_row_file_ends_between_fragments(void) {
    /* RocksDB's size: the payload bytes of the fragments read. */
    for (int recyclable = 0; recyclable < 2; recyclable++) {
        size_t hs = recyclable ? RB : H;
        unsigned base = recyclable ? 5 : 1;
        uint8_t *p = xmalloc(2 * B);
        rnd_fill(p, 2 * B);
        buf log = {0};
        put_d(&log, base, "a", 1, hs, 7, 0);
        size_t open = log.len;
        size_t n1 = B - open - hs;
        put_d(&log, base + 1, p, n1, hs, 7, 0);          /* FIRST */
        put_d(&log, base + 2, p + n1, B - hs, hs, 7, 0); /* MIDDLE */
        CHECK_EQ(log.len, 2 * B);
        for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
            tevs want = {0};
            want_rec(&want, 0, "a", 1);
            want_torn(&want, open, n1 + B - hs, EOF_OPEN);
            read_opts o = opts(LLOG_DIALECT_ROCKSDB, (llog_recovery)m);
            CTX("(%s, recyclable %d)", mode_name(m), recyclable);
            read_info info = expect_d("open at EOF", &log, o, &want);
            CHECK_EQ(info.position, open);
            tevs_free(&want);
        }
        /* A few bytes of the LAST's header too: that is what is cut. */
        buf_put(&log, "\1\2\3", 3);
        tevs want = {0};
        want_rec(&want, 0, "a", 1);
        want_torn(&want, 2 * B, 3, TRUNC_HEADER);
        read_info info = expect_d(
            "open, then a cut header", &log,
            opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_POINT_IN_TIME), &want);
        CHECK_EQ(info.position, open);
        tevs_free(&want);
        buf_free(&log);
        free(p);
    }
}

static void test_row_unknown_types(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 7);                 /* 0 */
    put7(&log, 0x85, "future", 6);             /* 12: skipped */
    size_t first = put11(&log, 6, "bc", 2, 7); /* 25: FIRST */
    put7(&log, 0xC0, "x", 1);                  /* 38: drops the open record */
    size_t last = put11(&log, 8, "de", 2, 7);  /* 46: LAST, no start */
    size_t unknown = put7(&log, 20, "u", 1);   /* 59: unknown, reported */
    put11(&log, 5, "f", 1, 7);                 /* 67 */
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        want_rec(&want, 0, "a", 1);
        want_bad(&want, last, 2, "missing start of fragmented record(2)");
        want_bad(&want, unknown, 1, "unknown record type 20");
        want_rec(&want, 67, "f", 1);
        want_eof(&want);
        expect_d(mode_name(m), &log, opts(LLOG_DIALECT_ROCKSDB, m), &want);
        tevs_free(&want);
    }
    (void)first;
    /* Pebble knows no 0x80 rule: both are unknown types there, and its
     * joining texts are LevelDB's. */
    tevs want = {0};
    want_rec(&want, 0, "a", 1);
    want_bad(&want, 12, 6, "unknown record type 133");
    want_bad(&want, 25, 2 + 1, "unknown record type 192");
    want_bad(&want, last, 2, MISSING);
    want_bad(&want, unknown, 1, "unknown record type 20");
    want_rec(&want, 67, "f", 1);
    want_eof(&want);
    expect_d("pebble", &log, opts(LLOG_DIALECT_PEBBLE, LLOG_RECOVER_SKIP),
             &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_recyclable_after_legacy_records(void) {
    buf log = {0};
    put7(&log, 1, "a", 1);
    size_t late = put11(&log, 5, "b", 1, 7);
    put7(&log, 1, "c", 1);
    tevs want = {0};
    want_rec(&want, 0, "a", 1);
    want_bad(&want, late, log.len - late, AFTER_LEGACY);
    want_eof(&want);
    expect_d("recyclable after legacy", &log,
             opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP), &want);
    tevs_free(&want);
    /* Pebble has no such rule. */
    want_rec(&want, 0, "a", 1);
    want_rec(&want, late, "b", 1);
    want_rec(&want, late + 12, "c", 1);
    want_eof(&want);
    expect_d("pebble: legacy, then recyclable", &log,
             opts(LLOG_DIALECT_PEBBLE, LLOG_RECOVER_SKIP), &want);
    tevs_free(&want);
    buf_free(&log);
}

/* ---- metadata records ----------------------------------------------------
 */

/* A timestamp-size entry: column family (fixed32), size (fixed16). */
static void ts_entry(uint8_t *p, uint32_t family, unsigned size) {
    put_u32(p, family);
    p[4] = (uint8_t)size;
    p[5] = (uint8_t)(size >> 8);
}

static void test_metadata_records_checked_and_handed_out(void) {
    uint8_t zstd[4], pred[24], ts[18];
    put_u32(zstd, 7);
    for (int i = 0; i < 24; i++)
        pred[i] = (uint8_t)i;
    ts_entry(ts, 3, 8);
    ts_entry(ts + 6, 4, 16);
    ts_entry(ts + 12, 3, 4); /* family 3 again: bad */

    buf log = {0};
    put7(&log, 9, zstd, 4);                          /* 0 */
    put11(&log, 131, pred, 24, 7);                   /* 11 */
    put7(&log, 10, ts, 12);                          /* 46 */
    put11(&log, 5, "rec", 3, 7);                     /* 65 */
    size_t again = put7(&log, 9, zstd, 4);           /* 79: a second one */
    size_t dup = put11(&log, 11, ts, 18, 7);         /* 90: 3 again */
    size_t bad_pred = put7(&log, 130, pred, 23);     /* 119 */
    size_t zero = put7(&log, 10, "\1\0\0\0\0\0", 6); /* 149 */
    size_t odd = put7(&log, 10, ts, 5);              /* 162 */
    put11(&log, 5, "end", 3, 7);                     /* 174 */
    tevs want = {0};
    want_meta(&want, 0, 9, zstd, 4);
    want_meta(&want, 11, 131, pred, 24);
    want_meta(&want, 46, 10, ts, 12);
    want_rec(&want, 65, "rec", 3);
    want_bad(&want, again, 4, "read multiple SetCompressionType records");
    want_bad(&want, again, 4, "SetCompressionType not the first record");
    want_meta(&want, again, 9, zstd, 4); /* still taken */
    /* entries before the bad one hold: none here (3 is known) */
    want_bad(&want, dup, 18,
             "User-defined timestamp size record contains update to "
             "recorded column family.");
    want_bad(&want, bad_pred, 23,
             "could not decode PredecessorWALInfoType record");
    want_bad(&want, zero, 6,
             "User-defined timestamp size record contains zero timestamp "
             "size.");
    want_bad(&want, odd, 5,
             "could not decode user-defined timestamp size record");
    want_rec(&want, 174, "end", 3);
    want_eof(&want);
    read_info info =
        expect_d("metadata", &log,
                 opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP), &want);
    CHECK_EQ(info.clean_end, log.len);
    tevs_free(&want);
    buf_free(&log);
}

static void test_metadata_compression_kinds(void) {
    /* Compression: none (0) is taken silently, another kind reported. */
    uint8_t none[4], lz4[4];
    put_u32(none, 0);
    put_u32(lz4, 4);
    buf log = {0};
    tevs want = {0};
    put7(&log, 9, none, 4);
    put7(&log, 1, "a", 1);
    want_rec(&want, 11, "a", 1);
    want_eof(&want);
    expect_d("no compression", &log,
             opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP), &want);
    tevs_free(&want);
    buf_free(&log);
    put7(&log, 9, lz4, 4);
    put7(&log, 1, "a", 1);
    want_bad(&want, 0, 4, "could not decode SetCompressionType record");
    want_rec(&want, 11, "a", 1);
    want_eof(&want);
    expect_d("lz4 compression", &log,
             opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP), &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_metadata_good_entries_before_a_bad_one(void) {
    buf log = {0};
    tevs want = {0};
    /* Good entries before a bad one are handed out, then the report. */
    uint8_t two[12];
    ts_entry(two, 1, 8);
    ts_entry(two + 6, 1, 4);
    put7(&log, 10, two, 12);
    want_meta(&want, 0, 10, two, 6);
    want_bad(&want, 0, 12,
             "User-defined timestamp size record contains update to "
             "recorded column family.");
    want_eof(&want);
    expect_d("a good entry, then a bad one", &log,
             opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP), &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_metadata_records_end_an_open_record(void) {
    uint8_t pred[24] = {1}, ts[6];
    ts_entry(ts, 2, 8);
    buf log = {0};
    put11(&log, 6, "ab", 2, 7);                /* FIRST at 0 */
    put7(&log, 10, ts, 6);                     /* 13 */
    size_t last1 = put11(&log, 8, "cd", 2, 7); /* 26 */
    put11(&log, 6, "ef", 2, 7);                /* 39 */
    put11(&log, 131, pred, 24, 7);             /* 52 */
    size_t last2 = put11(&log, 8, "gh", 2, 7); /* 87 */
    tevs want = {0};
    want_bad(&want, 0, 2,
             "user-defined timestamp size record interspersed partial "
             "record");
    want_meta(&want, 13, 10, ts, 6);
    want_bad(&want, last1, 2, "missing start of fragmented record(2)");
    want_bad(&want, 39, 2, MIDDLE_ERR);
    want_meta(&want, 52, 131, pred, 24);
    want_bad(&want, last2, 2, "missing start of fragmented record(2)");
    want_eof(&want);
    expect_d("metadata inside records", &log,
             opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP), &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_metadata_of_an_old_log(void) {
    /* A recyclable predecessor record of log 4 in log 7: an old record. */
    uint8_t pred[24] = {9};
    buf log = {0};
    put11(&log, 5, "a", 1, 7);
    put11(&log, 131, pred, 24, 4);
    put11(&log, 5, "b", 1, 7);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        want_rec(&want, 0, "a", 1);
        if (m == LLOG_RECOVER_SKIP)
            want_rec(&want, 12 + 35, "b", 1);
        want_eof(&want);
        expect_d(mode_name(m), &log, opts(LLOG_DIALECT_ROCKSDB, m), &want);
        tevs_free(&want);
    }
    buf_free(&log);
}

/* ---- compressed records --------------------------------------------------
 */

/* The test's "compression": every byte XORed with 0x5A, fragment by
 * fragment; a fragment whose first byte decodes to '!' fails. Counts the
 * calls and checks first/last against the record's fragments. */
typedef struct xor_ctx {
    uint8_t out[B];
    size_t calls, firsts, lasts;
} xor_ctx;

static const uint8_t *xor_decode(void *ctx, const uint8_t *in, size_t n,
                                 int first, int last, size_t *out_len) {
    xor_ctx *x = ctx;
    x->calls++;
    x->firsts += first != 0;
    x->lasts += last != 0;
    CHECK(n <= B);
    for (size_t i = 0; i < n; i++)
        x->out[i] = in[i] ^ 0x5A;
    if (n > 0 && x->out[0] == '!')
        return NULL;
    *out_len = n;
    return x->out;
}

static void xor_bytes(uint8_t *dst, const void *src, size_t n) {
    const uint8_t *s = src;
    for (size_t i = 0; i < n; i++)
        dst[i] = s[i] ^ 0x5A;
}

/* (Long: one golden log, each record a case, read once.) */
static void test_compressed_records_decoded(void) {
    uint8_t zstd[4], enc[64];
    put_u32(zstd, 7);
    buf log = {0};
    put7(&log, 9, zstd, 4); /* 0 */
    xor_bytes(enc, "hello", 5);
    put7(&log, 1, enc, 5); /* 11 */
    put7(&log, 1, "", 0);  /* 23: no frame */
    xor_bytes(enc, "frag", 4);
    put7(&log, 2, enc, 2);     /* 30: FIRST */
    put7(&log, 3, enc + 2, 1); /* 39: MIDDLE */
    put7(&log, 4, enc + 3, 1); /* 47: LAST */
    xor_bytes(enc, "!bad", 4);
    size_t bad = put7(&log, 1, enc, 4); /* 55 */
    xor_bytes(enc, "ok!x", 4);
    size_t bad2 = put7(&log, 2, enc, 2); /* 66: FIRST "ok" */
    put7(&log, 4, enc + 2, 2);           /* 75: LAST "!x" */
    xor_bytes(enc, "end", 3);
    put7(&log, 1, enc, 3); /* 84 */
    xor_ctx x = {0};
    read_opts o = opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP);
    o.decode = xor_decode;
    o.decode_ctx = &x;
    tevs want = {0};
    want_meta(&want, 0, 9, zstd, 4);
    want_rec(&want, 11, "hello", 5);
    want_rec(&want, 23, "", 0);
    want_rec(&want, 30, "frag", 4);
    want_bad(&want, bad, 4, "could not decompress record");
    want_bad(&want, bad2, 4, "could not decompress record");
    want_rec(&want, 84, "end", 3);
    want_eof(&want);
    tevs got = {0};
    read_log(log.p, log.len, o, &got);
    check_events(&got, &want, "compressed");
    CHECK_EQ(x.calls, 8);  /* no call for the empty record */
    CHECK_EQ(x.firsts, 5); /* hello, frag, !bad, ok, end */
    CHECK_EQ(x.lasts, 5);  /* hello, frag's LAST, !bad, !x, end */
    tevs_free(&got);
    tevs_free(&want);
    /* Without the compression record, records are handed out as stored. */
    buf plain = {0};
    buf_put(&plain, log.p + 11, log.len - 11);
    x = (xor_ctx){0};
    read_log(plain.p, plain.len, o, &got);
    CHECK_EQ(x.calls, 0);
    CHECK(got.n > 0 && got.v[0].kind == LLOG_EV_RECORD);
    tevs_free(&got);
    buf_free(&plain);
    buf_free(&log);
}

static void test_compressed_chunks_across_blocks(void) {
    /* RocksDB's chunked layout (docs/rocksdb.md, "Compressed WALs"): a
     * fragment may end before its block does. */
    uint8_t zstd[4];
    put_u32(zstd, 7);
    size_t n = 70000;
    uint8_t *plain = xmalloc(n), *enc = xmalloc(n);
    rnd_fill(plain, n);
    xor_bytes(enc, plain, n);
    buf log = {0};
    put7(&log, 9, zstd, 4);
    /* chunks of 32761: 32750 + 11, 32743 + 18, 4478 */
    static const size_t frag[] = {32750, 11, 32743, 18, 4478};
    size_t done = 0;
    for (size_t i = 0; i < 5; i++) {
        unsigned type = i == 0 ? 2 : i == 4 ? 4 : 3;
        put7(&log, type, enc + done, frag[i]);
        done += frag[i];
    }
    CHECK_EQ(done, n);
    xor_ctx x = {0};
    read_opts o = opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP);
    o.decode = xor_decode;
    o.decode_ctx = &x;
    tevs want = {0};
    want_meta(&want, 0, 9, zstd, 4);
    want_rec(&want, 11, plain, n);
    want_eof(&want);
    expect_d("chunked compressed record", &log, o, &want);
    tevs_free(&want);
    free(plain);
    free(enc);
    buf_free(&log);
}

/* ---- Pebble ------------------------------------------------------------- */

/* Pebble's trailer: an empty recyclable FULL, checksum 0, number + 1. */
static size_t put_trailer(buf *b, uint32_t next) {
    size_t at = b->len;
    uint8_t *h = buf_grow(b, RB);
    memset(h, 0, RB);
    h[6] = 5;
    put_u32(h + 7, next);
    return at;
}

static void test_pebble_walsync_chunks(void) {
    uint8_t *p = xmalloc(2 * B);
    rnd_fill(p, 2 * B);
    buf log = {0};
    put_d(&log, 9, "one", 3, SB, 3, 0); /* FULL at 0 */
    size_t first = log.len;             /* 22 */
    size_t n1 = B - first - SB;
    put_d(&log, 10, p, n1, SB, 3, 22);          /* FIRST fills block 0 */
    put_d(&log, 11, p + n1, 100, SB, 3, 22);    /* MIDDLE at B */
    put_d(&log, 12, p + n1 + 100, 5, SB, 3, 0); /* LAST */
    size_t mixed = put_d(&log, 5, "two", 3, RB, 3, 0); /* recyclable */
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        want_rec(&want, 0, "one", 3);
        want_rec(&want, first, p, n1 + 105);
        want_rec(&want, mixed, "two", 3);
        want_eof(&want);
        read_info info =
            expect_d(mode_name(m), &log, opts(LLOG_DIALECT_PEBBLE, m), &want);
        CHECK_EQ(info.position, log.len);
        tevs_free(&want);
    }
    /* In RocksDB's dialect types 9-11 are metadata with other headers:
     * nothing there reads as a record. */
    tevs got = {0};
    read_log(log.p, log.len, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP),
             &got);
    for (size_t i = 0; i < got.n; i++)
        CHECK(got.v[i].kind != LLOG_EV_RECORD || got.v[i].offset == mixed);
    tevs_free(&got);
    free(p);
    buf_free(&log);
}

static void test_pebble_trailer_ends_the_log(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 3);
    size_t t = put_trailer(&log, 4);
    put11(&log, 5, "after", 5, 3); /* never read */
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        want_rec(&want, 0, "a", 1);
        want_done(&want);
        read_info info =
            expect_d(mode_name(m), &log, opts(LLOG_DIALECT_PEBBLE, m), &want);
        CHECK_EQ(info.position, t + RB); /* consumed */
        tevs_free(&want);
    }
    /* The log number given (as from a file name): a mismatch at once. */
    read_opts o = opts(LLOG_DIALECT_PEBBLE, LLOG_RECOVER_POINT_IN_TIME);
    o.has_log_number = 1;
    o.log_number = 2; /* 3 is then the trailer's number */
    tevs want = {0};
    want_done(&want);
    read_info info = expect_d("log number 2 given", &log, o, &want);
    CHECK_EQ(info.position, RB + 1); /* "a" was the trailer: consumed */
    tevs_free(&want);
    buf_free(&log);
}

/* In Pebble's dialect, a record of another log number than the log's or
 * the next (the trailer's) is an older log's, as in RocksDB's. */
static void test_pebble_other_log_numbers(void) {
    /* Inside a record it is an old record (PIT: RocksDB's text). */
    buf open = {0};
    put11(&open, 6, "ab", 2, 3);
    put_trailer(&open, 4);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        if (m == LLOG_RECOVER_SKIP)
            want_bad(&want, 0, 2, MIDDLE_ERR);
        else if (m != LLOG_RECOVER_TOLERATE_TAIL)
            want_bad(&want, 0, 2, OLD_OPEN);
        want_eof(&want);
        expect_d(mode_name(m), &open, opts(LLOG_DIALECT_PEBBLE, m), &want);
        tevs_free(&want);
    }
    buf_free(&open);
    /* A number neither the log's nor the next: an older log's record. */
    buf other = {0};
    put11(&other, 5, "a", 1, 3);
    size_t old = put11(&other, 5, "b", 1, 9);
    put11(&other, 5, "c", 1, 3);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        tevs want = {0};
        want_rec(&want, 0, "a", 1);
        if (m == LLOG_RECOVER_SKIP)
            want_rec(&want, old + 12, "c", 1);
        want_eof(&want);
        read_info info = expect_d(mode_name(m), &other,
                                  opts(LLOG_DIALECT_PEBBLE, m), &want);
        CHECK_EQ(info.position, m == LLOG_RECOVER_SKIP ? other.len : old);
        tevs_free(&want);
    }
    buf_free(&other);
}

/* (A core bug, fixed.) a trailer consumed up to a range's end gives EOF (the
 * range is over: DONE is what a range that reaches its end gives, and what
 * the next call gives). */
static void test_pebble_trailer_at_range_end_is_done(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 3);
    put_trailer(&log, 4);
    read_opts o = opts(LLOG_DIALECT_PEBBLE, LLOG_RECOVER_SKIP);
    o.end = log.len;
    tevs got = {0};
    read_info info = read_log(log.p, log.len, o, &got);
    CHECK_EQ(info.last, LLOG_EV_DONE);
    tevs_free(&got);
    buf_free(&log);
}

/* ---- the writer --------------------------------------------------------- */

/* Appends a record through llog_writer_add; returns its offset. */
static uint64_t wadd(buf *log, llog_writer *w, const void *data, size_t len) {
    uint64_t size = llog_writer_encoded_size(w, len), at = 0;
    CHECK_EQ(w->offset, log->len);
    uint8_t *dst = buf_grow(log, (size_t)size);
    CHECK_EQ(llog_writer_add(w, data, len, dst, &at), size);
    return at;
}

static void check_same_log(const buf *got, const buf *want, const char *what) {
    if (!CHECK_MEM(got->p, got->len, want->p, want->len))
        note("%s", what);
}

static void test_writer_recyclable_headers(void) {
    uint8_t *p = xmalloc(70000);
    rnd_fill(p, 70000);
    size_t fill = B - 4509 - RB - 10; /* leaves 10 bytes in block 2 */
    llog_writer w;
    llog_writer_init(&w, 0);
    llog_writer_set_header(&w, RB, 7);
    buf got = {0}, want = {0};
    CHECK_EQ(wadd(&got, &w, "x", 1), 0);
    CHECK_EQ(wadd(&got, &w, p, 70000), 12);
    CHECK_EQ(wadd(&got, &w, p, fill), 2 * B + 4509);
    CHECK_EQ(wadd(&got, &w, "y", 1), 3 * B); /* 10 bytes were too few */

    put11(&want, 5, "x", 1, 7);
    put11(&want, 6, p, 32745, 7);
    put11(&want, 7, p + 32745, 32757, 7);
    put11(&want, 8, p + 65502, 4498, 7);
    put11(&want, 5, p, fill, 7);
    CHECK_EQ(want.len, 3 * B - 10);
    buf_zero_to(&want, 3 * B);
    put11(&want, 5, "y", 1, 7);
    check_same_log(&got, &want, "11-byte headers");

    tevs ev = {0}, exp = {0};
    want_rec(&exp, 0, "x", 1);
    want_rec(&exp, 12, p, 70000);
    want_rec(&exp, 2 * B + 4509, p, fill);
    want_rec(&exp, 3 * B, "y", 1);
    want_eof(&exp);
    read_log(got.p, got.len, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP),
             &ev);
    check_events(&ev, &exp, "read back, RocksDB's dialect");
    tevs_free(&ev);
    read_log(got.p, got.len, opts(LLOG_DIALECT_PEBBLE, LLOG_RECOVER_SKIP),
             &ev);
    check_events(&ev, &exp, "read back, Pebble's dialect");
    tevs_free(&ev);
    tevs_free(&exp);
    buf_free(&got);
    buf_free(&want);
    free(p);
}

static void test_writer_walsync_headers(void) {
    uint8_t *p = xmalloc(B);
    rnd_fill(p, B);
    llog_writer w;
    llog_writer_init(&w, 0);
    llog_writer_set_header(&w, SB, 3);
    w.synced = 42;
    buf got = {0}, want = {0};
    wadd(&got, &w, "a", 1);
    size_t fill = B - 20 - SB - 18; /* leaves 18 bytes: too few */
    wadd(&got, &w, p, fill);
    w.synced = 1000;
    CHECK_EQ(wadd(&got, &w, p, 100), B);
    put_d(&want, 9, "a", 1, SB, 3, 42);
    put_d(&want, 9, p, fill, SB, 3, 42);
    buf_zero_to(&want, B);
    put_d(&want, 9, p, 100, SB, 3, 1000);
    check_same_log(&got, &want, "19-byte headers");
    /* a record across blocks: FIRST, MIDDLE, LAST as 10, 11, 12 */
    buf_free(&got);
    buf_free(&want);
    llog_writer_init(&w, 0);
    llog_writer_set_header(&w, SB, 3);
    wadd(&got, &w, p, B);
    put_d(&want, 10, p, B - SB, SB, 3, 0);
    put_d(&want, 12, p + B - SB, SB, SB, 3, 0);
    check_same_log(&got, &want, "19-byte headers, fragmented");
    buf_free(&got);
    buf_free(&want);
    free(p);
}

static void test_writer_chunks(void) {
    /* The compression record (7-byte header in RocksDB), then a 70,000-byte
     * frame in chunks of 32768 - 7: each chunk cut at block ends. */
    uint8_t zstd[4];
    put_u32(zstd, 7);
    uint8_t *p = xmalloc(70000);
    rnd_fill(p, 70000);
    static const struct {
        size_t hs, chunk, frags[5];
    } cases[] = {
        {H, B - H, {32750, 11, 32743, 18, 4478}},
        {RB, B - RB, {32746, 11, 32735, 22, 4486}},
    };
    for (size_t c = 0; c < 2; c++) {
        llog_writer w;
        llog_writer_init(&w, 0);
        buf got = {0}, want = {0};
        uint8_t *dst = buf_grow(&got, (size_t)llog_writer_meta_size(
                                          &w, LLOG_RDB_SET_COMPRESSION, 4));
        CHECK_EQ(llog_writer_meta(&w, LLOG_RDB_SET_COMPRESSION, zstd, 4, dst),
                 11);
        llog_writer_set_header(&w, cases[c].hs, 7);
        llog_writer_set_chunk(&w, cases[c].chunk);
        CHECK_EQ(wadd(&got, &w, p, 70000), 11);
        wadd(&got, &w, "z", 1); /* a new record: a new chunk */
        put7(&want, 9, zstd, 4);
        unsigned base = cases[c].hs == H ? 1 : 5;
        size_t done = 0;
        for (size_t i = 0; i < 5; i++) {
            unsigned role = i == 0 ? 1 : i == 4 ? 3 : 2;
            put_d(&want, base + role, p + done, cases[c].frags[i], cases[c].hs,
                  7, 0);
            done += cases[c].frags[i];
        }
        CHECK_EQ(done, 70000);
        put_d(&want, base, "z", 1, cases[c].hs, 7, 0);
        check_same_log(&got, &want,
                       cases[c].hs == H ? "chunks, header 7"
                                        : "chunks, header 11");
        buf_free(&got);
        buf_free(&want);
    }
    free(p);
}

static void test_writer_meta_padding(void) {
    uint8_t zstd[4], pred[24] = {5};
    put_u32(zstd, 7);
    llog_writer w;
    llog_writer_init(&w, B - 10);
    uint8_t out[2 * B];
    CHECK_EQ(llog_writer_meta_size(&w, LLOG_RDB_SET_COMPRESSION, 4), 21);
    CHECK_EQ(llog_writer_meta(&w, LLOG_RDB_SET_COMPRESSION, zstd, 4, out), 21);
    buf want = {0};
    buf_bytes(&want, 0, 10);
    put7(&want, 9, zstd, 4);
    CHECK_MEM(out, 21, want.p, want.len);
    CHECK_EQ(w.offset, B + 11);
    buf_free(&want);
    /* A recyclable predecessor record: 11 + 24 bytes fit exactly in 35. */
    llog_writer_init(&w, B - 35);
    llog_writer_set_header(&w, RB, 7);
    CHECK_EQ(llog_writer_meta_size(&w, LLOG_RDB_PREDECESSOR_RECYCLABLE, 24),
             35);
    CHECK_EQ(
        llog_writer_meta(&w, LLOG_RDB_PREDECESSOR_RECYCLABLE, pred, 24, out),
        35);
    put11(&want, 131, pred, 24, 7);
    CHECK_MEM(out, 35, want.p, want.len);
    buf_free(&want);
    llog_writer_init(&w, B - 34);
    llog_writer_set_header(&w, RB, 7);
    CHECK_EQ(llog_writer_meta_size(&w, LLOG_RDB_PREDECESSOR_RECYCLABLE, 24),
             34 + 35);
    /* A payload no block holds: 0. */
    CHECK_EQ(llog_writer_meta_size(&w, LLOG_RDB_TIMESTAMP_SIZE, B - 6), 0);
    CHECK_EQ(llog_writer_meta_size(&w, LLOG_RDB_TIMESTAMP_SIZE, B - 7),
             34 + B);
}

static void test_writer_pebble_trailer(void) {
    static const uint64_t at[] = {100, B - 11, B - 10, B - 1};
    for (size_t i = 0; i < 4; i++) {
        llog_writer w;
        llog_writer_init(&w, at[i]);
        llog_writer_set_header(&w, RB, 0xFFFFFFFFu); /* + 1 wraps */
        uint8_t out[64];
        memset(out, 0xEE, sizeof out);
        size_t pad = B - at[i] % B < RB ? (size_t)(B - at[i] % B) : 0;
        CHECK_EQ(llog_writer_pebble_trailer(&w, out), pad + RB);
        buf want = {0};
        buf_bytes(&want, 0, pad);
        put_trailer(&want, 0);
        CHECK_MEM(out, pad + RB, want.p, want.len);
        CHECK_EQ(out[pad + RB], 0xEE);
        CHECK_EQ(w.offset, at[i] + pad + RB);
        buf_free(&want);
    }
}

/* ---- ranges in every dialect -------------------------------------------- */

/* Cut points near every block edge (+-12: the longer headers), and a few
 * more. */
static size_t edge_cuts(size_t len, uint64_t *c, size_t cap) {
    size_t n = 0;
    c[n++] = 0;
    for (size_t b = B; b < len + B && n + 30 < cap; b += B)
        for (long d = -21; d <= 21; d += (d > -13 && d < 13) ? 1 : 4)
            if ((long)b + d > (long)c[n - 1] && (size_t)((long)b + d) <= len)
                c[n++] = (uint64_t)((long)b + d);
    for (size_t at = 1000; at < len && n < cap; at += 7919) {
        size_t k = n; /* keep the list sorted */
        while (k > 0 && c[k - 1] > at)
            k--;
        if (k > 0 && c[k - 1] == at)
            continue;
        memmove(c + k + 1, c + k, (n - k) * sizeof *c);
        c[k] = at;
        n++;
    }
    return n;
}

/* A log written by the core writer with the given header (and chunks, and
 * a compression record first), records of mixed sizes. */
static void write_dialect_log(buf *log, size_t hs, size_t chunk,
                              uint64_t seed) {
    llog_writer w;
    llog_writer_init(&w, 0);
    if (chunk) {
        uint8_t zstd[4];
        put_u32(zstd, 7);
        uint8_t *dst = buf_grow(log, 11);
        llog_writer_meta(&w, LLOG_RDB_SET_COMPRESSION, zstd, 4, dst);
    }
    llog_writer_set_header(&w, hs, 7);
    llog_writer_set_chunk(&w, chunk);
    rng = seed;
    uint8_t *data = xmalloc(80000);
    for (int i = 0; i < 40; i++) {
        size_t len;
        switch (rnd_below(5)) {
        case 0:
            len = rnd_below(20);
            break;
        case 1: /* end near the block's end */
            len = B - (size_t)(w.offset % B);
            len = len > 2 * SB ? len - hs - rnd_below(2 * SB) : rnd_below(9);
            break;
        case 2:
            len = 32740 + rnd_below(30);
            break;
        case 3:
            len = 33000 + rnd_below(40000);
            break;
        default:
            len = rnd_below(3000);
            break;
        }
        rnd_fill(data, len);
        if (hs == SB)
            w.synced = w.offset;
        wadd(log, &w, data, len);
    }
    free(data);
}

static void test_ranges_in_every_dialect(void) {
    static const struct {
        llog_dialect d;
        size_t hs, chunk;
    } cases[] = {
        {LLOG_DIALECT_ROCKSDB, H, 0},     {LLOG_DIALECT_ROCKSDB, RB, 0},
        {LLOG_DIALECT_ROCKSDB, H, B - H}, {LLOG_DIALECT_ROCKSDB, RB, B - RB},
        {LLOG_DIALECT_PEBBLE, RB, 0},     {LLOG_DIALECT_PEBBLE, SB, 0},
    };
    uint64_t *cuts = xmalloc(2000 * sizeof *cuts);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        buf log = {0};
        write_dialect_log(&log, cases[c].hs, cases[c].chunk, 77 + c);
        size_t n = edge_cuts(log.len, cuts, 2000);
        char what[96];
        for (int damaged = 0; damaged < 2; damaged++) {
            if (damaged) /* a bad checksum in block 1: reports to place */
                log.p[B + 3 * H] ^= 0x10;
            for (int seq = 0; seq < 2; seq++) {
                read_opts o = opts(cases[c].d, LLOG_RECOVER_SKIP);
                o.sequential = seq;
                snprintf(what, sizeof what,
                         "%s, header %zu, chunk %zu%s%s in %zu ranges",
                         llog_dialect_name(cases[c].d), cases[c].hs,
                         cases[c].chunk, damaged ? ", damaged" : "",
                         seq ? ", sequential" : "", n);
                check_dialect_ranges_match_whole(log.p, log.len, cuts, n, o,
                                                 what);
            }
        }
        /* Pairs of ranges cut at one point near each block edge. */
        for (size_t i = 1; i < n; i += 3) {
            uint64_t two[2] = {0, cuts[i]};
            read_opts o = opts(cases[c].d, LLOG_RECOVER_SKIP);
            snprintf(what, sizeof what, "%s, header %zu, cut at %llu",
                     llog_dialect_name(cases[c].d), cases[c].hs,
                     (unsigned long long)cuts[i]);
            check_dialect_ranges_match_whole(log.p, log.len, two, 2, o, what);
        }
        buf_free(&log);
    }
    free(cuts);
}

/* (A core bug, fixed.) a range reader past block 0 learns the log number from
 * block 0's first records, and only from a checksum-valid one; a whole read
 * learns it from the first recyclable header, whatever its checksum. A
 * recyclable record of log 6 with a bad checksum, then log 7's records in
 * block 1: the whole read takes 7's records for old ones (skipped), and so
 * must a range from block 1. */
static void test_range_learns_log_number_as_whole_read(void) {
    buf log = {0};
    size_t bad = put11(&log, 5, "x", 1, 6);
    log.p[bad + 11] ^= 1;
    buf_zero_to(&log, B);
    put11(&log, 5, "a", 1, 7);
    put11(&log, 5, "b", 1, 7);
    uint64_t cuts[2] = {0, B};
    check_dialect_ranges_match_whole(
        log.p, log.len, cuts, 2, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP),
        "a bad recyclable record first, then log 7");
    buf_free(&log);
}

/* (A core bug, fixed.) in Pebble's dialect, a range reader past block 0
 * stopped looking at block 0 at the first legacy record, where a whole read
 * learns the log number from the first recyclable record after it. */
static void test_pebble_range_learns_log_number_after_legacy(void) {
    buf log = {0};
    uint64_t cuts[2] = {0, B};
    put7(&log, 1, "legacy", 6);
    put11(&log, 5, "three", 5, 3);
    buf_zero_to(&log, B);
    put11(&log, 5, "five", 4, 5);
    check_dialect_ranges_match_whole(
        log.p, log.len, cuts, 2, opts(LLOG_DIALECT_PEBBLE, LLOG_RECOVER_SKIP),
        "Pebble: a legacy record first");
    buf_free(&log);
}

/* (A core bug, fixed.) RocksDB takes the compression record anywhere before
 * the first record (a whole read does, after a type with bit 0x80), but a
 * range reader's look at block 0 stops at the first record that is not
 * metadata: a range past block 0 then hands out compressed records undecoded.
 */
static void test_range_sees_compression_after_unknown_type(void) {
    uint8_t zstd[4], enc[5];
    put_u32(zstd, 7);
    buf log = {0};
    put7(&log, 0x85, "newer", 5);
    put7(&log, 9, zstd, 4);
    buf_zero_to(&log, B);
    xor_bytes(enc, "hello", 5);
    put7(&log, 1, enc, 5);
    xor_ctx x = {0};
    read_opts o = opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP);
    o.decode = xor_decode;
    o.decode_ctx = &x;
    uint64_t cuts[2] = {0, B};
    check_dialect_ranges_match_whole(log.p, log.len, cuts, 2, o,
                                     "compression after a 0x80 type");
    buf_free(&log);
}

/* (A core bug, fixed.) "recyclable record after legacy records" needs to know
 * that a record was read before; a range reader past block 0 knows it only
 * from block 0's first record, and only when its checksum holds. A damaged
 * record first, a legacy record in block 1, a recyclable one in block 2:
 * the whole read reports it, a range from block 2 returns the record. */
static void test_range_knows_records_were_read(void) {
    buf log = {0};
    size_t bad = put7(&log, 1, "damaged", 7);
    log.p[bad + 8] ^= 1;
    buf_zero_to(&log, B);
    put7(&log, 1, "legacy", 6);
    buf_zero_to(&log, 2 * B);
    put11(&log, 5, "late", 4, 7);
    uint64_t cuts[2] = {0, 2 * B};
    check_dialect_ranges_match_whole(
        log.p, log.len, cuts, 2, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP),
        "a recyclable record after legacy ones, read in a range");
    buf_free(&log);
}

/* (A core bug, fixed.) a range reader past block 0 reads block 0 once, as it
 * is then: one that follows a log from before block 0 is written never learns
 * the log number there, and takes the first it meets in range. */
static void test_growing_range_learns_log_number_of_block_0(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 7);
    buf_zero_to(&log, B);
    put11(&log, 5, "old", 3, 4); /* an older log's record in block 1 */
    read_opts o = opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_SKIP);
    o.start = B;
    tevs whole = {0};
    read_log(log.p, log.len, o, &whole); /* nothing: 4's record is old */
    /* Following: nothing written yet, then the whole log. */
    llog_reader_options ro = {.start = B,
                              .end = LLOG_NO_END,
                              .verify_checksums = 1,
                              .dialect = LLOG_DIALECT_ROCKSDB,
                              .recovery = LLOG_RECOVER_SKIP};
    llog_reader *r = llog_reader_new(&ro);
    feeder f = {.log = log.p, .len = 0};
    tevs grown = {0};
    CHECK_EQ(drive(r, &f, 0, &grown), LLOG_EV_EOF);
    f.len = log.len;
    drive(r, &f, 0, &grown);
    uint64_t n = 0;
    if (!CHECK(llog_reader_log_number(r, &n) && n == 7))
        note("following learnt log number %llu", (unsigned long long)n);
    tevs a = {0}, b = {0};
    for (size_t i = 0; i < whole.n; i++)
        if (whole.v[i].kind == LLOG_EV_RECORD)
            tevs_add_copy(&a, &whole.v[i]);
    for (size_t i = 0; i < grown.n; i++)
        if (grown.v[i].kind == LLOG_EV_RECORD)
            tevs_add_copy(&b, &grown.v[i]);
    check_events(&b, &a, "following a range from an empty log");
    llog_reader_free(r);
    tevs_free(&a);
    tevs_free(&b);
    tevs_free(&whole);
    tevs_free(&grown);
    buf_free(&log);
}

/* The trailer ends a Pebble log "in every mode": the reader says DONE, and
 * driven again (a follower polls so) reads nothing past it. */
static void test_pebble_trailer_is_final(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 3);
    put_trailer(&log, 4);
    put11(&log, 5, "after", 5, 3);
    llog_reader_options ro = {.end = LLOG_NO_END,
                              .verify_checksums = 1,
                              .dialect = LLOG_DIALECT_PEBBLE};
    llog_reader *r = llog_reader_new(&ro);
    feeder f = {.log = log.p, .len = log.len};
    tevs first = {0}, again = {0};
    CHECK_EQ(drive(r, &f, 0, &first), LLOG_EV_DONE);
    CHECK_EQ(drive(r, &f, 0, &again), LLOG_EV_DONE);
    if (!CHECK(again.n == 1 && again.v[0].kind != LLOG_EV_RECORD))
        note("driven again after the trailer: %zu events, the first a %s",
             again.n,
             again.n && again.v[0].kind == LLOG_EV_RECORD ? "RECORD" : "?");
    llog_reader_free(r);
    tevs_free(&first);
    tevs_free(&again);
    buf_free(&log);
}

/* Known core bug: a Pebble trailer ends the log in every mode, "skip"
 * too, but a range that starts after it reads on (an end before a range's
 * start ends nothing for it): ranges then return records a whole read never
 * does. */
static void test_ranges_after_pebble_trailer_match_whole(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 3);
    size_t t = put_trailer(&log, 4);
    put11(&log, 5, "b", 1, 3);
    uint64_t cuts[2] = {0, t + RB};
    check_dialect_ranges_match_whole(
        log.p, log.len, cuts, 2, opts(LLOG_DIALECT_PEBBLE, LLOG_RECOVER_SKIP),
        "ranges cut after the trailer");
    buf_free(&log);
}

/* Known core bug: where an old record inside an open record ends the log
 * (EOF), the open record is dropped; driven again without new data, the
 * same bytes are then read at a record start, where a Pebble reader takes
 * a record of the next log number for the trailer: DONE. The answer must
 * not change until the log grows. */
static void test_redrive_after_old_record_in_a_record(void) {
    buf log = {0};
    put11(&log, 6, "ab", 2, 3); /* FIRST of log 3 */
    put_trailer(&log, 4);       /* inside it: an old record, not a trailer */
    llog_reader_options ro = {.end = LLOG_NO_END,
                              .verify_checksums = 1,
                              .dialect = LLOG_DIALECT_PEBBLE,
                              .recovery = LLOG_RECOVER_TOLERATE_TAIL};
    llog_reader *r = llog_reader_new(&ro);
    feeder f = {.log = log.p, .len = log.len};
    tevs first = {0}, again = {0};
    CHECK_EQ(drive(r, &f, 0, &first), LLOG_EV_EOF);
    CHECK_EQ(drive(r, &f, 0, &again), LLOG_EV_EOF);
    llog_reader_free(r);
    tevs_free(&first);
    tevs_free(&again);
    buf_free(&log);
}

/* (A core quirk, fixed.) where a log ends (an old record, the trailer) at or
 * past the end of a range, the reader gives EOF, then DONE on the next
 * call; a range that reaches its end gives DONE at once. */
static void test_end_of_log_at_range_end_is_done(void) {
    buf log = {0};
    put11(&log, 6, "ab", 2, 7); /* FIRST, in range */
    size_t old = put11(&log, 8, "cd", 2, 4);
    read_opts o = opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_POINT_IN_TIME);
    o.end = old;
    tevs got = {0};
    read_info info = read_log(log.p, log.len, o, &got);
    CHECK_EQ(info.last, LLOG_EV_DONE);
    tevs_free(&got);
    buf_free(&log);
}

/* ---- log_tail in every dialect ------------------------------------------ */

static llog_tail_result decide_d(const buf *log, llog_dialect d, int has,
                                 uint64_t log_number) {
    llog_tail_result out = {0, 0, 0, 0, NULL};
    llog_tail *t = llog_tail_new_dialect(log->len, d, has, log_number);
    if (!CHECK(t != NULL))
        return out;
    uint64_t at;
    size_t len, calls = 0;
    uint8_t *into;
    while (llog_tail_want(t, &at, &len, &into)) {
        if (!CHECK(++calls < 1000))
            break;
        CHECK(len > 0 && len <= B && at + len <= log->len);
        memcpy(into, log->p + at, len);
        llog_tail_got(t, len);
    }
    CHECK_EQ(llog_tail_decision(t, &out), LLOG_OK);
    llog_tail_free(t);
    return out;
}

#define CHECK_CUT(log, d, cut_, fresh_)                                       \
    do {                                                                      \
        llog_tail_result r_ = decide_d((log), (d), 0, 0);                     \
        if (!CHECK(r_.refusal == NULL))                                       \
            note("%s: refused at %llu: %s", ctx,                              \
                 (unsigned long long)r_.refused_at, r_.refusal);              \
        CHECK_EQ(r_.cut, cut_);                                               \
        CHECK_EQ(r_.fresh_block, fresh_);                                     \
    } while (0)

/* The endings of log_tail.h in a dialect, on logs of recyclable records
 * (long: one log, its endings written over its end in turn). */
static void tail_cases(llog_dialect d, const uint8_t *p) {
    buf log = {0};
    put11(&log, 5, "a", 1, 7);
    put11(&log, 6, p, B - 12 - RB, 7);
    put11(&log, 8, p, 100, 7);
    size_t clean = log.len;
    CHECK_CUT(&log, d, clean, 0); /* a clean log */
    /* torn tails: a cut header, a cut payload, an open record */
    put11(&log, 5, p, 500, 7);
    static const size_t keep[] = {3, 9, 11, 200};
    for (size_t k = 0; k < 4; k++) {
        log.len = clean + keep[k];
        CTX("%s, %zu bytes of the torn record", llog_dialect_name(d), keep[k]);
        CHECK_CUT(&log, d, clean, 0);
    }
    log.len = clean;
    put11(&log, 6, p, B - clean % B - RB, 7); /* FIRST, fills */
    put11(&log, 7, p, 30, 7);                 /* MIDDLE, cut */
    log.len -= 10;
    CHECK_CUT(&log, d, clean, 0);
    /* zero fill after the last record */
    log.len = clean;
    buf_bytes(&log, 0, 5000);
    CHECK_CUT(&log, d, clean, 0);
    /* an older log's records after the end (a recycled file) */
    log.len = clean;
    put11(&log, 5, p, 40, 4);
    put11(&log, 5, p, 40, 4);
    CHECK_CUT(&log, d, clean, 0);
    /* the log number given: 7's records are the old ones */
    llog_tail_result r = decide_d(&log, d, 1, 4);
    CHECK(r.refusal != NULL || r.cut == 0);
    /* damage in the middle stays; appends start at a fresh block */
    log.len = clean;
    put11(&log, 5, "b", 1, 7);
    put11(&log, 5, "c", 1, 7);
    size_t end = log.len;
    log.p[clean + 11] ^= 1;
    CHECK_CUT(&log, d, end, 1);
    log.p[clean + 11] ^= 1;
    /* refusals as in LevelDB: text after the last record */
    log.len = clean;
    buf_put(&log, "some text\n", 10);
    r = decide_d(&log, d, 0, 0);
    if (CHECK(r.refusal != NULL))
        CHECK_EQ(r.refused_at, clean);
    buf_free(&log);
    /* a text file is no log */
    buf text = {0};
    for (int j = 0; j < 100; j++)
        buf_put(&text, "a line of a README file\n", 24);
    CHECK(decide_d(&text, d, 0, 0).refusal != NULL);
    buf_free(&text);
}

static void test_tail_in_every_dialect(void) {
    uint8_t *p = xmalloc(2 * B);
    rnd_fill(p, 2 * B);
    tail_cases(LLOG_DIALECT_ROCKSDB, p);
    tail_cases(LLOG_DIALECT_PEBBLE, p);
    free(p);
}

static void test_tail_pebble_trailer_and_walsync(void) {
    uint8_t *p = xmalloc(B);
    rnd_fill(p, B);
    /* Pebble's trailer is cut like a torn tail: appending goes on in the
     * same log. */
    buf log = {0};
    put11(&log, 5, "a", 1, 3);
    size_t t = put_trailer(&log, 4);
    CHECK_CUT(&log, LLOG_DIALECT_PEBBLE, t, 0);
    put11(&log, 5, "old", 3, 2); /* and what followed it */
    CHECK_CUT(&log, LLOG_DIALECT_PEBBLE, t, 0);
    buf_free(&log);
    /* walSync chunks: the same rules with 19-byte headers. */
    put_d(&log, 9, "a", 1, SB, 3, 0);
    size_t clean = log.len;
    put_d(&log, 9, p, 300, SB, 3, clean);
    log.len -= 100;
    CHECK_CUT(&log, LLOG_DIALECT_PEBBLE, clean, 0);
    buf_free(&log);
    free(p);
}

/* ---- the suite ---------------------------------------------------------- */

void suite_dialects(void) {
    RUN(test_recyclable_records_read_in_every_mode);
    RUN(test_recyclable_crc_covers_the_log_number);
    RUN(test_row_old_record_between_records);
    RUN(test_row_old_record_inside_a_record);
    RUN(test_row_damage_in_a_recycled_log);
    RUN(test_row_file_ends_inside_a_physical_record);
    RUN(test_row_file_ends_between_fragments);
    RUN(test_row_unknown_types);
    RUN(test_recyclable_after_legacy_records);
    RUN(test_metadata_records_checked_and_handed_out);
    RUN(test_metadata_compression_kinds);
    RUN(test_metadata_good_entries_before_a_bad_one);
    RUN(test_metadata_records_end_an_open_record);
    RUN(test_metadata_of_an_old_log);
    RUN(test_compressed_records_decoded);
    RUN(test_compressed_chunks_across_blocks);
    RUN(test_pebble_walsync_chunks);
    RUN(test_pebble_trailer_ends_the_log);
    RUN(test_pebble_other_log_numbers);
    RUN(test_writer_recyclable_headers);
    RUN(test_writer_walsync_headers);
    RUN(test_writer_chunks);
    RUN(test_writer_meta_padding);
    RUN(test_writer_pebble_trailer);
    RUN(test_ranges_in_every_dialect);
    RUN(test_tail_in_every_dialect);
    RUN(test_tail_pebble_trailer_and_walsync);
    RUN(test_pebble_trailer_at_range_end_is_done);
    RUN(test_end_of_log_at_range_end_is_done);
    RUN(test_pebble_trailer_is_final);
    RUN(test_range_learns_log_number_as_whole_read);
    RUN(test_range_sees_compression_after_unknown_type);
    RUN(test_range_knows_records_were_read);
    RUN(test_growing_range_learns_log_number_of_block_0);
    RUN(test_pebble_range_learns_log_number_after_legacy);
    RUN(test_redrive_after_old_record_in_a_record);
    /* A known limitation (docs/rocksdb.md): a range past a Pebble trailer
     * cannot see it, and reads on. Runs with LLOG_TEST_KNOWN_BUGS=1 in the
     * environment (listed as skipped otherwise). */
    if (getenv("LLOG_TEST_KNOWN_BUGS") == NULL) {
        printf("skipped (a known limitation; LLOG_TEST_KNOWN_BUGS=1 runs "
               "it): 1 test of test_dialects.c\n");
        return;
    }
    RUN(test_ranges_after_pebble_trailer_match_whole);
}
