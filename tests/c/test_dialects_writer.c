/*
 * test_dialects_writer.c - writing RocksDB's and Pebble's dialects
 * (docs/rocksdb.md) with the core: the writer's longer headers, chunks,
 * metadata records and Pebble's trailer, byte for byte against logs built
 * here (dialect_logs.h), and log_resume's decision (where appending resumes)
 * in every dialect.
 */
#include <stdlib.h>
#include <string.h>

#include "dialect_logs.h"
#include "log_resume.h"

/* ---- the writer --------------------------------------------------------- */

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

/* ---- log_resume in every dialect ---------------------------------------- */

static llog_resume_result decide_d(const buf *log, llog_dialect d, int has,
                                   uint64_t log_number) {
    llog_resume_result out = {0};
    llog_resume *t = llog_resume_new(log->len, d, has, log_number);
    if (!CHECK(t != NULL))
        return out;
    uint64_t at;
    size_t len, calls = 0;
    uint8_t *into;
    while (llog_resume_want(t, &at, &len, &into)) {
        if (!CHECK(++calls < 1000))
            break;
        CHECK(len > 0 && len <= B && at + len <= log->len);
        memcpy(into, log->p + at, len);
        llog_resume_got(t, len);
    }
    CHECK_EQ(llog_resume_decision(t, &out), LLOG_OK);
    llog_resume_free(t);
    return out;
}

#define CHECK_CUT(log, d, cut_, fresh_)                                       \
    do {                                                                      \
        llog_resume_result r_ = decide_d((log), (d), 0, 0);                   \
        if (!CHECK(r_.refusal == NULL))                                       \
            note("%s: refused at %llu: %s", dialect_ctx,                      \
                 (unsigned long long)r_.refused_at, r_.refusal);              \
        CHECK_EQ(r_.cut, cut_);                                               \
        CHECK_EQ(r_.fresh_block, fresh_);                                     \
    } while (0)

/* The endings of log_resume.h in a dialect, on logs of recyclable records
 * (long: one log, its endings written over its end in turn). */
static void tail_cases(llog_dialect d, const uint8_t *p) {
    buf log = {0};
    put11(&log, 5, "a", 1, 7);
    put11(&log, 6, p, B - 12 - RB, 7);
    put11(&log, 8, p, 100, 7);
    size_t clean = log.len;
    llog_resume_result r0;
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
    /* a torn-looking record (its length reaches past the end) before a
     * record of this log is damage: nothing is cut, a fresh block next */
    log.len = clean;
    size_t bad = log.len;
    put11(&log, 5, p, 40, 7);
    put11(&log, 5, p, 40, 7);
    log.p[bad + 5] ^= 0x04; /* + 1024 */
    r0 = decide_d(&log, d, 0, 0);
    CHECK(r0.refusal == NULL);
    CHECK_EQ(r0.cut, log.len);
    CHECK_EQ(r0.fresh_block, 1);
    CHECK_EQ(r0.damaged_at, bad);
    CHECK_EQ(r0.intact_at, bad + RB + 40);
    log.p[bad + 5] ^= 0x04;
    log.len = clean;
    put11(&log, 5, p, 40, 4);
    put11(&log, 5, p, 40, 4);
    /* the log number given: 7's records are the old ones, and the log's
     * own after them are never cut */
    llog_resume_result r = decide_d(&log, d, 1, 4);
    CHECK(r.refusal == NULL && r.cut == log.len && r.fresh_block);
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

void suite_dialects_writer(void) {
    RUN(test_writer_recyclable_headers);
    RUN(test_writer_walsync_headers);
    RUN(test_writer_chunks);
    RUN(test_writer_meta_padding);
    RUN(test_writer_pebble_trailer);
    RUN(test_tail_in_every_dialect);
    RUN(test_tail_pebble_trailer_and_walsync);
}
