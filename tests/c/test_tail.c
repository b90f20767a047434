/*
 * test_tail.c - where the last complete record of a growing log ends
 * (log_tail.h): every prefix of logs built with the record encoder of
 * harness.h, whose record ends are the expected boundaries; zero fill and
 * damage at the end; and how little of the log the walk reads.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_tail.h"

/* Runs the walk over log[0..size) (LevelDB's dialect, checksums verified
 * or not); *read counts the bytes it asked for. Checks every span asked
 * for. */
static uint64_t tail_end_v(const uint8_t *log, size_t size, int verify,
                           size_t *read) {
    llog_tail t;
    llog_tail_init(&t, size, LLOG_DIALECT_LEVELDB, 0, 0, verify);
    if (size > 0)
        CHECK_EQ(llog_tail_end(&t), 0); /* not known yet */
    uint64_t at;
    size_t len, calls = 0;
    *read = 0;
    while (llog_tail_want(&t, &at, &len)) {
        if (!CHECK(++calls < 10000)) /* a hang */
            break;
        CHECK(len > 0 && len <= B && at + len <= size);
        *read += len;
        llog_tail_got(&t, log + at, len);
    }
    return llog_tail_end(&t);
}

static uint64_t tail_end(const uint8_t *log, size_t size, size_t *read) {
    return tail_end_v(log, size, 1, read);
}

/* A log of records of these lengths; ends[i] where record i ends. */
static void build(buf *log, const size_t *lengths, size_t n, uint64_t *ends) {
    uint8_t *data = xmalloc(200000);
    rnd_fill(data, 200000);
    for (size_t i = 0; i < n; i++) {
        uint64_t first;
        ref_encode(log->len, data, lengths[i], log, &first);
        ends[i] = log->len;
    }
    free(data);
}

/* The end of the last record that ends at or before size; the end of its
 * block when only a trailer follows it there and the block is whole (a
 * Reader steps over the trailer). */
static uint64_t expected(const uint64_t *ends, size_t n, size_t size) {
    uint64_t e = 0;
    for (size_t i = 0; i < n && ends[i] <= size; i++)
        e = ends[i];
    uint64_t block_end = e - e % B + B;
    if (e % B != 0 && block_end - e < H && block_end <= size)
        e = block_end;
    return e;
}

/* Every prefix ends at the end of its last complete record (past the
 * trailer of a whole block), whatever the records' sizes: one that leaves
 * a trailer, fragments across blocks, a record of many blocks, empty
 * records. */
static void test_every_prefix(void) {
    static const size_t lengths[] = {10,    B - 27, 0, 1, 100000,
                                     B - H, 5,      B, 0, 3 * B};
    enum { N = sizeof lengths / sizeof lengths[0] };
    uint64_t ends[N];
    buf log = {0};
    build(&log, lengths, N, ends);
    size_t step = harness_pick(1, 61), read, most = 0;
    for (size_t size = 0; size <= log.len; size += step) {
        uint64_t end = tail_end(log.p, size, &read);
        if (!CHECK_EQ(end, expected(ends, N, size)))
            note("prefix of %zu bytes", size);
        most = read > most ? read : most;
    }
    /* At most the last two blocks, and a header of each block between. */
    CHECK(most <= 2 * B + (3 * B / B + 1) * LLOG_MAX_HEADER_SIZE);
    buf_free(&log);
}

/* Zero fill after the last record (preallocated space), in its block and
 * in whole blocks after it: the boundary stays at the record's end. */
static void test_zero_fill(void) {
    static const size_t lengths[] = {100, 40000, 7};
    uint64_t ends[3];
    buf log = {0};
    build(&log, lengths, 3, ends);
    buf_bytes(&log, 0, 3 * B + 100);
    size_t read;
    for (size_t size = ends[2]; size <= log.len; size += harness_pick(97, 997))
        CHECK_EQ(tail_end(log.p, size, &read), ends[2]);
    buf_free(&log);
}

/* Damage in the last block holds the boundary at the last record before
 * it: a length past a full block, a type no writer writes. */
static void test_damage_stops(void) {
    buf log = {0};
    put_phys(&log, LLOG_FULL, "abc", 3);
    size_t good = log.len;
    put_header(&log, 0, B, LLOG_FULL); /* cannot fit its block */
    buf_zero_to(&log, B);
    size_t read;
    CHECK_EQ(tail_end(log.p, log.len, &read), good);
    log.len = good;
    put_phys(&log, 77, "xyz", 3); /* a type LevelDB does not know */
    put_phys(&log, LLOG_FULL, "abc", 3);
    CHECK_EQ(tail_end(log.p, log.len, &read), good);
    buf_free(&log);
}

/* A record whose header is whole but whose checksum fails (its payload
 * still zeros, as a writer that extends its file before filling it leaves
 * it; or damage): the boundary stays before it when checksums are
 * verified, and passes it when they are not. */
static void test_checksums_when_verifying(void) {
    buf log = {0};
    put_phys(&log, LLOG_FULL, "abc", 3);
    size_t good = log.len;
    size_t at = put_phys(&log, LLOG_FULL, "defgh", 5);
    memset(log.p + at + H, 0, 5); /* not written yet */
    size_t read;
    CHECK_EQ(tail_end_v(log.p, log.len, 1, &read), good);
    CHECK_EQ(tail_end_v(log.p, log.len, 0, &read), log.len);
    memcpy(log.p + at + H, "defgh", 5); /* written now: a whole record */
    CHECK_EQ(tail_end_v(log.p, log.len, 1, &read), log.len);
    buf_free(&log);
}

/* A short read (the file shrank since its size was taken) is taken as the
 * end of the file. */
static void test_shrunk(void) {
    static const size_t lengths[] = {100, 200};
    uint64_t ends[2];
    buf log = {0};
    build(&log, lengths, 2, ends);
    llog_tail t;
    llog_tail_init(&t, log.len, LLOG_DIALECT_LEVELDB, 0, 0, 1);
    uint64_t at;
    size_t len;
    CHECK(llog_tail_want(&t, &at, &len));
    CHECK_EQ(at, 0);
    CHECK_EQ(len, log.len);
    llog_tail_got(&t, log.p, (size_t)ends[1] - 5);
    CHECK(!llog_tail_want(&t, &at, &len));
    CHECK_EQ(llog_tail_end(&t), ends[0]);
    buf_free(&log);
}

void suite_tail(void) {
    RUN(test_every_prefix);
    RUN(test_zero_fill);
    RUN(test_damage_stops);
    RUN(test_checksums_when_verifying);
    RUN(test_shrunk);
}
