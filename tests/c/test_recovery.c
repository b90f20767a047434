/*
 * test_recovery.c - the recovery modes through the core's API alone
 * (log_reader.h, llog_verdict): the verdict each mode gives a corruption
 * and a torn tail, in LevelDB's dialect and in RocksDB's, and what a caller
 * that acts on the verdicts reads (docs/recovery.md, "The four modes").
 *
 * Expected verdicts are the table of docs/recovery.md; the logs are built
 * with the reference encoder (harness.h, dialect_logs.h).
 */
#include <string.h>

#include "dialect_logs.h"

/* A corruption or torn EOF as the reader handed it out. */
typedef struct damage {
    llog_event_kind kind;
    uint64_t offset;
    unsigned verdict;
} damage;

typedef struct outcome {
    size_t records; /* records returned */
    uint64_t last;  /* offset of the last one */
    damage seen[8]; /* the damage reported, in order */
    size_t nseen;
    unsigned verdict; /* on the damage the read ended at (LLOG_READ_ON: it
                         ended at the end of the log) */
    int torn;         /* it ended at a torn tail */
    int also;         /* llog_reader_torn_also gave a second report */
    unsigned also_verdict;
} outcome;

/* Feeds the block the reader wants from log. */
static void feed(llog_reader *r, const buf *log) {
    uint64_t want = llog_reader_wanted(r);
    size_t n = 0;
    if (want < log->len)
        n = log->len - want < B ? (size_t)(log->len - want) : B;
    llog_reader_feed(r, n > 0 ? log->p + want : nothing, n);
}

/* Notes the damage an event reports (a corruption, or a torn EOF). */
static void note_damage(outcome *o, const llog_event *ev) {
    if (o->nseen < sizeof o->seen / sizeof o->seen[0])
        o->seen[o->nseen++] = (damage){ev->kind, ev->offset, ev->verdict};
}

/*
 * Reads log in the dialect and mode as a caller applying the mode does:
 * every record up to the first damage whose verdict is LLOG_STOP or
 * LLOG_FAIL, and no further (`apply` 0: to the end of the log whatever the
 * verdicts, as a caller mapping the damage reads).
 */
static outcome read_mode(const buf *log, llog_dialect d, llog_recovery m,
                         int apply) {
    llog_reader_options opt = {.end = LLOG_NO_END,
                               .verify_checksums = 1,
                               .dialect = d,
                               .recovery = m};
    llog_reader *r = llog_reader_new(&opt);
    outcome o = {0};
    for (long guard = 0; CHECK(r != NULL) && CHECK(guard < 100000); guard++) {
        llog_event ev;
        llog_reader_next(r, &ev);
        if (ev.kind == LLOG_EV_NEED_BLOCK) {
            feed(r, log);
            continue;
        }
        if (ev.kind == LLOG_EV_RECORD) {
            o.records++;
            o.last = ev.offset;
            continue;
        }
        if (ev.kind == LLOG_EV_META)
            continue;
        if (ev.kind == LLOG_EV_CORRUPTION ||
            (ev.kind == LLOG_EV_EOF && ev.torn))
            note_damage(&o, &ev);
        if (ev.kind == LLOG_EV_EOF && ev.torn) {
            llog_event also;
            o.also = llog_reader_torn_also(r, &ev, &also);
            o.also_verdict = o.also ? also.verdict : 0;
        }
        if (ev.kind == LLOG_EV_CORRUPTION &&
            (!apply || ev.verdict == LLOG_READ_ON))
            continue;
        o.verdict =
            ev.kind == LLOG_EV_EOF && !ev.torn ? LLOG_READ_ON : ev.verdict;
        o.torn = ev.kind == LLOG_EV_EOF && ev.torn;
        CHECK(ev.kind != LLOG_EV_ERROR);
        break;
    }
    llog_reader_free(r);
    return o;
}

/* FULL records at 0, 107, 214 (filling block 0) and B, the third with a
 * flipped payload bit when `corrupt` (the rest of its block is dropped);
 * a FULL record cut short after them when `torn`. Returns where that
 * begins. */
static size_t damaged_log(buf *log, int corrupt, int torn) {
    static uint8_t payload[B];
    memset(payload, 'r', sizeof payload);
    put_phys(log, LLOG_FULL, payload, 100);
    put_phys(log, LLOG_FULL, payload, 100);
    put_phys(log, LLOG_FULL, payload, B - 214 - H);
    put_phys(log, LLOG_FULL, payload, 100);
    if (corrupt)
        log->p[214 + H + 50] ^= 0x10;
    size_t tail = log->len;
    if (torn) {
        put_phys(log, LLOG_FULL, payload, 100);
        log->len -= 40; /* the writer died in its payload */
    }
    return tail;
}

static const unsigned CORRUPTION_VERDICT[LLOG_RECOVERY_COUNT] = {
    [LLOG_RECOVER_SKIP] = LLOG_READ_ON,
    [LLOG_RECOVER_TOLERATE_TAIL] = LLOG_FAIL,
    [LLOG_RECOVER_POINT_IN_TIME] = LLOG_STOP,
    [LLOG_RECOVER_ABSOLUTE] = LLOG_FAIL,
};

/* Every report carries its mode's verdict on a corruption, and the torn
 * tail the verdict on a torn tail; the events are otherwise those of
 * "skip" (the reader goes on when called). */
static void test_verdicts_in_leveldb_dialect(void) {
    buf log = {0};
    size_t tail = damaged_log(&log, 1, 1);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        outcome o = read_mode(&log, LLOG_DIALECT_LEVELDB, m, 0);
        CTX("%s", mode_name(m));
        if (!CHECK_EQ(o.nseen, 2))
            note("%s", dialect_ctx);
        CHECK_EQ(o.records, 3); /* 0, 107, B: the reader read on */
        CHECK_EQ(o.seen[0].kind, LLOG_EV_CORRUPTION);
        CHECK_EQ(o.seen[0].offset, 214);
        CHECK_EQ(o.seen[0].verdict, CORRUPTION_VERDICT[m]);
        CHECK_EQ(o.seen[1].kind, LLOG_EV_EOF);
        CHECK_EQ(o.seen[1].offset, tail);
        CHECK_EQ(o.seen[1].verdict,
                 m == LLOG_RECOVER_ABSOLUTE ? LLOG_FAIL : LLOG_READ_ON);
        CHECK(o.torn);
        CHECK(!o.also);
    }
    buf_free(&log);
}

/* docs/recovery.md, "The four modes": skip reads past the corruption and
 * ends quietly at the torn tail; tolerate_tail and absolute fail at the
 * corruption, point_in_time ends cleanly before it. */
static void test_acting_on_verdicts_at_a_corruption(void) {
    buf log = {0};
    damaged_log(&log, 1, 1);
    outcome o = read_mode(&log, LLOG_DIALECT_LEVELDB, LLOG_RECOVER_SKIP, 1);
    CHECK_EQ(o.records, 3);
    CHECK_EQ(o.last, B);
    CHECK_EQ(o.verdict, LLOG_READ_ON);
    CHECK(o.torn);
    static const llog_recovery stopping[] = {LLOG_RECOVER_TOLERATE_TAIL,
                                             LLOG_RECOVER_POINT_IN_TIME,
                                             LLOG_RECOVER_ABSOLUTE};
    for (size_t i = 0; i < 3; i++) {
        o = read_mode(&log, LLOG_DIALECT_LEVELDB, stopping[i], 1);
        CHECK_EQ(o.records, 2); /* those before the damage */
        CHECK_EQ(o.last, 107);
        CHECK_EQ(o.nseen, 1);
        CHECK_EQ(o.verdict, CORRUPTION_VERDICT[stopping[i]]);
        CHECK(!o.torn);
    }
    buf_free(&log);
}

/* docs/recovery.md, "Only a torn tail": only "absolute" fails there. */
static void test_acting_on_verdicts_at_a_torn_tail(void) {
    buf log = {0};
    size_t tail = damaged_log(&log, 0, 1);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        outcome o = read_mode(&log, LLOG_DIALECT_LEVELDB, m, 1);
        CHECK_EQ(o.records, 4);
        CHECK(o.torn);
        CHECK_EQ(o.nseen, 1);
        CHECK_EQ(o.seen[0].offset, tail);
        CHECK_EQ(o.verdict,
                 m == LLOG_RECOVER_ABSOLUTE ? LLOG_FAIL : LLOG_READ_ON);
    }
    /* A whole log: a quiet end in every mode, no verdict to act on. */
    buf whole = {0};
    damaged_log(&whole, 0, 0);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        outcome o = read_mode(&whole, LLOG_DIALECT_LEVELDB, m, 1);
        CHECK_EQ(o.records, 4);
        CHECK(!o.torn);
        CHECK_EQ(o.nseen, 0);
        CHECK_EQ(o.verdict, LLOG_READ_ON);
    }
    buf_free(&whole);
    buf_free(&log);
}

/* RocksDB's dialect: point-in-time recovery reports a torn tail and stops
 * there; a header cut short inside a fragmented record gives a second
 * report (llog_reader_torn_also), with the same verdict. */
static void test_rocksdb_torn_tail_verdicts(void) {
    buf log = {0};
    put7(&log, LLOG_FULL, "a", 1);
    put7(&log, LLOG_FIRST, "bc", 2);  /* open at the end of the file */
    uint8_t *cut = buf_grow(&log, 3); /* a header cut short */
    memset(cut, 0x11, 3);
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        outcome o = read_mode(&log, LLOG_DIALECT_ROCKSDB, m, 1);
        unsigned want = m == LLOG_RECOVER_ABSOLUTE        ? LLOG_FAIL
                        : m == LLOG_RECOVER_POINT_IN_TIME ? LLOG_STOP
                                                          : LLOG_READ_ON;
        CTX("%s", mode_name(m));
        if (!CHECK_EQ(o.verdict, want))
            note("%s", dialect_ctx);
        CHECK_EQ(o.records, 1);
        CHECK(o.torn);
        CHECK(o.also);
        CHECK_EQ(o.also_verdict, want);
    }
    buf_free(&log);
}

/* An older log's record cutting a record short: reported in "absolute"
 * (failing) and "point_in_time" (stopping), where the log ends. */
static void test_rocksdb_old_record_verdicts(void) {
    buf log = {0};
    put11(&log, 6, "ab", 2, 7); /* FIRST of log 7 */
    put11(&log, 8, "cd", 2, 4); /* an old LAST of log 4 */
    for (int m = 0; m < LLOG_RECOVERY_COUNT; m++) {
        outcome o = read_mode(&log, LLOG_DIALECT_ROCKSDB, m, 1);
        CTX("%s", mode_name(m));
        int reported =
            m == LLOG_RECOVER_ABSOLUTE || m == LLOG_RECOVER_POINT_IN_TIME;
        if (!CHECK_EQ(o.nseen, reported ? 1 : m == LLOG_RECOVER_SKIP))
            note("%s", dialect_ctx);
        CHECK_EQ(o.records, 0);
        if (o.nseen > 0) {
            CHECK_EQ(o.seen[0].kind, LLOG_EV_CORRUPTION);
            CHECK_EQ(o.seen[0].offset, 0);
            CHECK_EQ(o.seen[0].verdict, CORRUPTION_VERDICT[m]);
        }
        CHECK_EQ(o.verdict, reported ? CORRUPTION_VERDICT[m] : LLOG_READ_ON);
    }
    buf_free(&log);
}

void suite_recovery(void) {
    RUN(test_verdicts_in_leveldb_dialect);
    RUN(test_acting_on_verdicts_at_a_corruption);
    RUN(test_acting_on_verdicts_at_a_torn_tail);
    RUN(test_rocksdb_torn_tail_verdicts);
    RUN(test_rocksdb_old_record_verdicts);
}
