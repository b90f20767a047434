/*
 * test_dialects_reading.c - reading RocksDB's and Pebble's dialects
 * (docs/rocksdb.md) in the core: golden logs built byte by byte (every row
 * of the recovery-mode table in all four modes, recyclable headers, unknown
 * types, old log numbers, Pebble's walSync chunks and trailer), whole and in
 * ranges over logs of every header (dialect_logs.h builds them).
 *
 * Expected events are written from docs/rocksdb.md and log_reader.h; the
 * records are encoded here, with the reference CRC (ref_crc32c.h).
 *
 * Besides its verdicts on damage (llog_verdict: tests/c/test_recovery.c),
 * a recovery mode changes only where a log ends (an old record, damage in
 * a recycled log in "tolerate_tail", the trailer): a reader called on past
 * a verdict to stop or fail reads on, so the core's events for those rows
 * are the ones of "skip" up to the end of the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect_logs.h"
#include "log_detect.h"

static const char TRUNC_BODY[] = "truncated record body";
static const char TRUNC_HEADER[] = "truncated header";
static const char EOF_OPEN[] =
    "error reading trailing data due to encountering EOF";
static const char OLD_OPEN[] =
    "error reading trailing data due to encountering old record";
static const char AFTER_LEGACY[] = "recyclable record after legacy records";

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

/* ---- Pebble ------------------------------------------------------------- */

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

/* ---- ranges in every dialect -------------------------------------------- */

/* Cut points near every block edge (+-12: the longer headers), and a few
 * more (a reduced run: about one near each edge, a different one from edge
 * to edge, and fewer more). */
static size_t edge_cuts(size_t len, uint64_t *c, size_t cap) {
    size_t n = 0;
    c[n++] = 0;
    for (size_t b = B; b < len + B && n + 30 < cap; b += B)
        for (long d = -21; d <= 21; d += (d > -13 && d < 13) ? 1 : 4)
            if ((long)b + d > (long)c[n - 1] && (size_t)((long)b + d) <= len &&
                harness_keep(b / B + (size_t)(d + 21), 32))
                c[n++] = (uint64_t)((long)b + d);
    for (size_t at = 1000; at < len && n < cap;
         at += harness_pick(7919, 16 * 7919)) {
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
        /* (A reduced run: the damaged log, the clean one but for block 1.) */
        for (int damaged = (int)harness_pick(0, 1); damaged < 2; damaged++) {
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
        for (size_t i = 1; i < n; i += harness_pick(3, 61)) {
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

/* options.detect: a reader told the dialect by block 0 reads exactly as one
 * made in the dialect llog_detect_dialect names (LevelDB's for none), whole
 * and from every cut, seekable and sequential, the log clean or damaged in
 * block 0 or 1; and says that dialect (told) once block 0 was fed. */
static void test_detect_reads_as_the_dialect_told(void) {
    static const size_t headers[] = {H, RB, SB};
    uint64_t *cuts = xmalloc(2000 * sizeof *cuts);
    for (size_t c = 0; c < 3; c++) {
        buf log = {0};
        write_dialect_log(&log, headers[c], 0, 91 + c);
        size_t n = edge_cuts(log.len, cuts, 2000);
        for (int damage = 0; damage < 3; damage++) {
            if (damage > 0) /* in block 0's first record, then in block 1 */
                log.p[damage == 1 ? headers[c] : B + 3 * SB] ^= 0x10;
            llog_detection d = llog_detect_dialect(log.p, log.len, 0, 0);
            llog_dialect told = d.dialect == LLOG_DIALECT_COUNT
                                    ? LLOG_DIALECT_LEVELDB
                                    : d.dialect;
            for (size_t i = 0; i < n; i += harness_pick(1, 7)) {
                for (int seq = 0; seq < 2; seq++) {
                    read_opts named = opts(told, LLOG_RECOVER_SKIP);
                    named.start = cuts[i];
                    named.sequential = seq;
                    read_opts auto_ = named;
                    auto_.dialect = LLOG_DIALECT_LEVELDB;
                    auto_.detect = 1;
                    tevs want = {0}, got = {0};
                    read_log(log.p, log.len, named, &want);
                    read_log(log.p, log.len, auto_, &got);
                    CTX("header %zu, damage %d, from %llu%s", headers[c],
                        damage, (unsigned long long)cuts[i],
                        seq ? ", sequential" : "");
                    check_events(&got, &want, dialect_ctx);
                    tevs_free(&want);
                    tevs_free(&got);
                }
            }
            llog_reader_options ro = {
                .end = LLOG_NO_END, .verify_checksums = 1, .detect = 1};
            llog_reader *r = llog_reader_new(&ro);
            int done = -1;
            CHECK_EQ(llog_reader_dialect(r, &done), LLOG_DIALECT_LEVELDB);
            CHECK_EQ(done, 0); /* nothing fed yet */
            llog_reader_feed(r, log.p, B);
            CHECK_EQ(llog_reader_dialect(r, &done), told);
            CHECK_EQ(done, 1); /* a whole block tells for good */
            llog_reader_free(r);
        }
        buf_free(&log);
    }
    free(cuts);
}

/* options.detect, following a log from its creation: an empty block 0 reads
 * as LevelDB's, untold; once it holds a record, it tells, and the reader
 * reads it in that dialect from offset 0. A range past block 0 waits. */
static void test_detect_tells_a_growing_log_once_it_has_a_record(void) {
    buf log = {0};
    put11(&log, 5, "a", 1, 7);
    buf_zero_to(&log, B);
    put11(&log, 5, "b", 1, 7);
    for (int past = 0; past < 2; past++) {
        llog_reader_options ro = {.start = past ? B : 0,
                                  .end = LLOG_NO_END,
                                  .verify_checksums = 1,
                                  .detect = 1};
        llog_reader *r = llog_reader_new(&ro);
        feeder f = {.log = log.p, .len = 0};
        tevs got = {0}, want = {0};
        CHECK_EQ(drive(r, &f, 0, &got), LLOG_EV_EOF);
        int done = -1;
        llog_reader_dialect(r, &done);
        CHECK_EQ(done, 0);
        f.len = log.len;
        drive(r, &f, 0, &got);
        CHECK_EQ(llog_reader_dialect(r, &done), LLOG_DIALECT_ROCKSDB);
        CHECK_EQ(done, 1);
        want_eof(&want);
        if (!past)
            want_rec(&want, 0, "a", 1);
        want_rec(&want, B, "b", 1);
        want_eof(&want);
        check_events(&got, &want, past ? "a range past block 0" : "whole");
        tevs_free(&got);
        tevs_free(&want);
        llog_reader_free(r);
    }
    buf_free(&log);
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

/* ---- the suite ---------------------------------------------------------- */

void suite_dialects_reading(void) {
    RUN(test_recyclable_records_read_in_every_mode);
    RUN(test_recyclable_crc_covers_the_log_number);
    RUN(test_row_old_record_between_records);
    RUN(test_row_old_record_inside_a_record);
    RUN(test_row_damage_in_a_recycled_log);
    RUN(test_row_file_ends_inside_a_physical_record);
    RUN(test_row_file_ends_between_fragments);
    RUN(test_row_unknown_types);
    RUN(test_recyclable_after_legacy_records);
    RUN(test_pebble_walsync_chunks);
    RUN(test_pebble_trailer_ends_the_log);
    RUN(test_pebble_other_log_numbers);
    RUN(test_ranges_in_every_dialect);
    RUN(test_pebble_trailer_at_range_end_is_done);
    RUN(test_end_of_log_at_range_end_is_done);
    RUN(test_pebble_trailer_is_final);
    RUN(test_range_learns_log_number_as_whole_read);
    RUN(test_range_sees_compression_after_unknown_type);
    RUN(test_range_knows_records_were_read);
    RUN(test_growing_range_learns_log_number_of_block_0);
    RUN(test_pebble_range_learns_log_number_after_legacy);
    RUN(test_redrive_after_old_record_in_a_record);
    RUN(test_detect_reads_as_the_dialect_told);
    RUN(test_detect_tells_a_growing_log_once_it_has_a_record);
    /* A known limitation (docs/rocksdb.md): a range past a Pebble trailer
     * cannot see it, and reads on. Runs with LLOG_TEST_KNOWN_BUGS=1 in the
     * environment (listed as skipped otherwise). */
    if (getenv("LLOG_TEST_KNOWN_BUGS") == NULL) {
        printf("skipped (a known limitation; LLOG_TEST_KNOWN_BUGS=1 runs "
               "it): 1 test of test_dialects_reading.c\n");
        return;
    }
    RUN(test_ranges_after_pebble_trailer_match_whole);
}
