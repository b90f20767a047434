/*
 * test_peer_log_test.c - the cases of RocksDB's db/log_test.cc that are
 * about the core rather than the binding (tests/format/test_peer_log_test.py
 * has the rest): the reports RocksDB's reader makes at a torn tail, all of
 * them (llog_reader_torn_also).
 *
 * RocksDB's MissingLastIsNotIgnored on a recyclable log cuts 14 bytes off a
 * log whose record fills block 0 and ends in block 1: 8 bytes of the LAST
 * fragment's 11-byte header are left. RocksDB reports the cut header
 * ("truncated header", 8 bytes), then the record it leaves open ("error
 * reading trailing data due to encountering EOF", its payload bytes). The
 * logs are built byte by byte (dialect_logs.h); the expected reports come
 * from that description.
 */
#include <string.h>

#include "dialect_logs.h"

static const char TRUNC_HEADER[] = "truncated header";
static const char EOF_OPEN[] =
    "error reading trailing data due to encountering EOF";

typedef struct torn_read {
    int torn, also;      /* the EOF was torn; a second report came */
    llog_event first;    /* the torn EOF */
    uint64_t at, size;   /* the second report */
    char reason[64];     /* its reason */
    char first_text[64]; /* the torn EOF's reason */
} torn_read;

/* Reads log to its EOF with o, then asks for RocksDB's second report. */
static torn_read read_to_eof(const buf *log, read_opts o) {
    llog_reader_options ro = {.start = o.start,
                              .end = o.end,
                              .verify_checksums = 1,
                              .dialect = o.dialect,
                              .recovery = o.recovery};
    torn_read out = {0};
    llog_reader *r = llog_reader_new(&ro);
    if (!CHECK(r != NULL))
        return out;
    llog_event ev;
    for (int steps = 0; steps < 100; steps++) {
        llog_reader_next(r, &ev);
        if (ev.kind == LLOG_EV_NEED_BLOCK) {
            uint64_t at = llog_reader_wanted(r);
            size_t n = at < log->len ? log->len - (size_t)at : 0;
            llog_reader_feed(r, n ? log->p + at : nothing, n < B ? n : B);
        } else if (ev.kind == LLOG_EV_EOF || ev.kind == LLOG_EV_DONE) {
            break;
        }
    }
    CHECK_EQ(ev.kind, LLOG_EV_EOF);
    out.torn = ev.torn;
    out.first = ev;
    if (ev.torn)
        snprintf(out.first_text, sizeof out.first_text, "%s", ev.reason);
    llog_event also;
    out.also = llog_reader_torn_also(r, &ev, &also);
    if (out.also) {
        CHECK_EQ(also.kind, LLOG_EV_EOF);
        out.at = also.offset;
        out.size = also.size;
        snprintf(out.reason, sizeof out.reason, "%s", also.reason);
    }
    llog_reader_free(r);
    return out;
}

/* A record filling block 0 (FIRST), then `keep` bytes of its LAST
 * fragment's header in block 1, headers of hs bytes. */
static void cut_in_last_header(buf *log, size_t hs, size_t keep) {
    static uint8_t payload[B];
    memset(payload, 'b', sizeof payload);
    if (hs == RB)
        put11(log, LLOG_FIRST + 4, payload, B - RB, 123);
    else
        put7(log, LLOG_FIRST, payload, B - H);
    buf tail = {0};
    if (hs == RB)
        put11(&tail, LLOG_LAST + 4, payload, RB, 123);
    else
        put7(&tail, LLOG_LAST, payload, H);
    buf_put(log, tail.p, keep);
    buf_free(&tail);
}

static void test_missing_last_is_not_ignored_recyclable(void) {
    /* Both reports, in absolute and point-in-time mode (RocksDB makes them
     * in both), none in the others. */
    buf log = {0};
    cut_in_last_header(&log, RB, 8);
    CHECK_EQ(log.len, B + 8);
    llog_recovery modes[] = {LLOG_RECOVER_ABSOLUTE,
                             LLOG_RECOVER_POINT_IN_TIME};
    for (size_t i = 0; i < 2; i++) {
        torn_read t = read_to_eof(&log, opts(LLOG_DIALECT_ROCKSDB, modes[i]));
        CHECK(t.torn);
        CHECK_EQ(t.first.offset, B);
        CHECK_EQ(t.first.size, 8);
        CHECK_STR(t.first_text, TRUNC_HEADER);
        CHECK(t.also);
        CHECK_EQ(t.at, 0);
        CHECK_EQ(t.size, B - RB);
        CHECK_STR(t.reason, EOF_OPEN);
    }
    buf_free(&log);
}

static void test_missing_last_plain_and_other_cuts(void) {
    /* 3 bytes of a 7-byte header: the same two reports. */
    buf log = {0};
    cut_in_last_header(&log, H, 3);
    torn_read t =
        read_to_eof(&log, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_ABSOLUTE));
    CHECK(t.torn && t.also);
    CHECK_STR(t.first_text, TRUNC_HEADER);
    CHECK_EQ(t.at, 0);
    CHECK_EQ(t.size, B - H);
    CHECK_STR(t.reason, EOF_OPEN);
    buf_free(&log);

    /* The LAST fragment cut whole (MissingLastIsNotIgnored, plain): one
     * report, the open record's, which the torn EOF itself is. */
    buf whole = {0};
    cut_in_last_header(&whole, H, 0);
    t = read_to_eof(&whole, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_ABSOLUTE));
    CHECK(t.torn && !t.also);
    CHECK_STR(t.first_text, EOF_OPEN);
    buf_free(&whole);

    /* A payload cut short (PartialLastIsNotIgnored): RocksDB reports only
     * the truncated record body. */
    buf body = {0};
    cut_in_last_header(&body, RB, 2 * RB - 1);
    t = read_to_eof(&body, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_ABSOLUTE));
    CHECK(t.torn && !t.also);
    buf_free(&body);

    /* A cut header with no record open (TruncatedTrailingRecordIsNotIgnored):
     * one report. */
    buf lone = {0};
    put11(&lone, LLOG_FULL + 4, "foo", 3, 123);
    lone.len -= 4;
    t = read_to_eof(&lone, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_ABSOLUTE));
    CHECK(t.torn && !t.also);
    CHECK_STR(t.first_text, TRUNC_HEADER);
    buf_free(&lone);
}

static void test_torn_also_only_in_rocksdb_and_in_range(void) {
    /* LevelDB's dialect reports a torn tail once, with its own texts. */
    buf log = {0};
    cut_in_last_header(&log, H, 3);
    torn_read t =
        read_to_eof(&log, opts(LLOG_DIALECT_LEVELDB, LLOG_RECOVER_ABSOLUTE));
    CHECK(t.torn && !t.also);
    /* A range holding the cut header but not the open record's first
     * header: the record is another range's. */
    read_opts later = opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_ABSOLUTE);
    later.start = B;
    t = read_to_eof(&log, later);
    CHECK(t.torn && !t.also);
    CHECK_STR(t.first_text, TRUNC_HEADER);
    /* A clean end: nothing. */
    buf clean = {0};
    put7(&clean, LLOG_FULL, "foo", 3);
    t = read_to_eof(&clean, opts(LLOG_DIALECT_ROCKSDB, LLOG_RECOVER_ABSOLUTE));
    CHECK(!t.torn && !t.also);
    buf_free(&clean);
    buf_free(&log);
}

void suite_peer_log_test(void) {
    RUN(test_missing_last_is_not_ignored_recyclable);
    RUN(test_missing_last_plain_and_other_cuts);
    RUN(test_torn_also_only_in_rocksdb_and_in_range);
}
