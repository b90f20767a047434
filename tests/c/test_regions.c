/*
 * test_regions.c - the region walker (log_regions.h) over every kind of
 * region: records of the log and of another log, a trailer, zero fill,
 * garbage after a bad length and after a bad checksum, a torn tail (cut
 * header, cut payload, implausible), Pebble's end-of-log trailer, and the
 * log number learnt from the first recyclable record or given.
 */
#include <stdlib.h>
#include <string.h>

#include "dialect_logs.h"
#include "log_regions.h"

#define MAX_REGIONS 16

typedef struct walked {
    llog_region_info r[MAX_REGIONS];
    size_t n;
} walked;

/* The regions of one block of b (from `from`, len bytes). */
static walked walk_block(llog_regions *w, const buf *b, size_t from,
                         size_t len, int final) {
    walked out = {.n = 0};
    llog_regions_feed(w, b->p + from, len, final);
    while (out.n < MAX_REGIONS && llog_regions_next(w, &out.r[out.n]))
        out.n++;
    return out;
}

/* The regions of a log of one block (final when shorter than a block). */
static walked walk(llog_dialect d, int verify, const buf *b) {
    llog_regions w;
    llog_regions_init(&w, d, verify, 0, 0);
    return walk_block(&w, b, 0, b->len, b->len < B);
}

/* The regions tile [0, len): each starts where the one before ends. */
static void check_tiles(const walked *k, size_t len) {
    size_t at = 0;
    for (size_t i = 0; i < k->n; i++) {
        CHECK_EQ(k->r[i].at, at);
        at += k->r[i].size;
    }
    CHECK_EQ(at, len);
}

static void test_records_trailer_and_the_end_of_a_full_block(void) {
    buf b = {0};
    put7(&b, LLOG_FULL, "abc", 3);
    put7(&b, LLOG_FIRST, "de", 2);
    size_t last = put7(&b, LLOG_LAST, NULL, 0);
    size_t fill = B - 3 - (last + H);
    uint8_t *big = xmalloc(fill);
    memset(big, 'x', fill);
    put7(&b, LLOG_FULL, big, fill - H);
    buf_zero_to(&b, B); /* 3 bytes left: a trailer */
    walked k = walk(LLOG_DIALECT_LEVELDB, 1, &b);
    CHECK_EQ(k.n, 5);
    check_tiles(&k, B);
    for (size_t i = 0; i < 4; i++) {
        CHECK_EQ(k.r[i].kind, LLOG_KIND_RECORD);
        CHECK_EQ(k.r[i].checksum, 1);
        CHECK(k.r[i].has_header);
    }
    CHECK_EQ(k.r[0].h.type, LLOG_FULL);
    CHECK_EQ(k.r[0].h.length, 3);
    CHECK_EQ(k.r[1].h.type, LLOG_FIRST);
    CHECK_EQ(k.r[4].kind, LLOG_KIND_TRAILER);
    CHECK_EQ(k.r[4].size, 3);
    CHECK(!k.r[4].has_header);
    free(big);
    buf_free(&b);
}

static void test_zero_fill_ends_the_block(void) {
    buf b = {0};
    put7(&b, LLOG_FULL, "abc", 3);
    buf_zero_to(&b, 100);
    walked k = walk(LLOG_DIALECT_LEVELDB, 1, &b);
    CHECK_EQ(k.n, 2);
    check_tiles(&k, 100);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_ZERO);
    CHECK_EQ(k.r[1].h.type, 0);
    buf_free(&b);
}

static void test_a_bad_length_is_garbage_to_the_end_of_a_full_block(void) {
    buf b = {0};
    put7(&b, LLOG_FULL, "abc", 3);
    put_header(&b, 0, B, LLOG_FULL); /* runs past the block */
    buf_zero_to(&b, B);
    walked k = walk(LLOG_DIALECT_LEVELDB, 1, &b);
    CHECK_EQ(k.n, 2);
    check_tiles(&k, B);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_GARBAGE);
    CHECK_STR(k.r[1].reason, LLOG_REASON_BAD_LENGTH);
    CHECK(k.r[1].has_header);
    buf_free(&b);
}

static void test_a_bad_checksum_drops_the_rest_of_the_block(void) {
    buf b = {0};
    size_t bad = put7(&b, LLOG_FULL, "abc", 3);
    put7(&b, LLOG_FULL, "def", 3);
    b.p[bad + H] ^= 1;
    walked k = walk(LLOG_DIALECT_LEVELDB, 1, &b);
    CHECK_EQ(k.n, 2);
    check_tiles(&k, b.len);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_RECORD);
    CHECK_EQ(k.r[0].checksum, 0);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_GARBAGE);
    CHECK_STR(k.r[1].reason, LLOG_REASON_CHECKSUM);
    CHECK(!k.r[1].has_header);
    /* Unverified, both are records. */
    k = walk(LLOG_DIALECT_LEVELDB, 0, &b);
    CHECK_EQ(k.n, 2);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_RECORD);
    CHECK_EQ(k.r[0].checksum, -1);
    buf_free(&b);
}

static void test_torn_tails_cut_header_cut_payload_implausible(void) {
    buf b = {0};
    put7(&b, LLOG_FULL, "abcdef", 6);
    walked k;
    b.len = 3; /* a cut header */
    k = walk(LLOG_DIALECT_LEVELDB, 1, &b);
    CHECK_EQ(k.n, 1);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_TORN);
    CHECK_EQ(k.r[0].size, 3);
    CHECK(!k.r[0].has_header);
    b.len = H + 2; /* a cut payload */
    k = walk(LLOG_DIALECT_LEVELDB, 1, &b);
    CHECK_EQ(k.n, 1);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_TORN);
    CHECK(k.r[0].has_header);
    CHECK_EQ(k.r[0].h.type, LLOG_FULL);
    CHECK(k.r[0].reason == NULL);
    b.p[6] = 77; /* a type no writer writes */
    k = walk(LLOG_DIALECT_LEVELDB, 1, &b);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_TORN);
    CHECK_STR(k.r[0].reason, LLOG_REASON_IMPLAUSIBLE_TAIL);
    buf_free(&b);
}

static void test_the_log_number_is_learnt_and_older_logs_records_told(void) {
    buf b = {0};
    put11(&b, 5, "new", 3, 9);
    put11(&b, 5, "old", 3, 8);
    llog_regions w;
    llog_regions_init(&w, LLOG_DIALECT_ROCKSDB, 1, 0, 0);
    walked k = walk_block(&w, &b, 0, b.len, 1);
    CHECK_EQ(k.n, 2);
    check_tiles(&k, b.len);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_RECORD);
    CHECK_EQ(k.r[0].h.header_size, RB);
    CHECK_EQ(k.r[0].h.log_number, 9);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_OTHER_LOG);
    CHECK_EQ(k.r[1].checksum, 1);
    CHECK(w.has_log_number);
    CHECK_EQ(w.log_number, 9);
    /* Given the number, the first is the older log's. */
    llog_regions_init(&w, LLOG_DIALECT_ROCKSDB, 1, 1, 8);
    k = walk_block(&w, &b, 0, b.len, 1);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_OTHER_LOG);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_RECORD);
    buf_free(&b);
}

static void test_pebbles_trailer_ends_the_block(void) {
    buf b = {0};
    put11(&b, 5, "abc", 3, 4);
    put_trailer(&b, 5);
    put11(&b, 5, "older", 5, 2); /* a recycled file's older bytes */
    walked k = walk(LLOG_DIALECT_PEBBLE, 1, &b);
    CHECK_EQ(k.n, 2);
    check_tiles(&k, b.len);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_END);
    CHECK_EQ(k.r[1].h.log_number, 5);
    /* Alone at the start, the exact header Close writes is the trailer. */
    buf t = {0};
    put_trailer(&t, 5);
    k = walk(LLOG_DIALECT_PEBBLE, 1, &t);
    CHECK_EQ(k.n, 1);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_END);
    /* RocksDB has no such trailer: a record of another log. */
    k = walk(LLOG_DIALECT_ROCKSDB, 1, &b);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_OTHER_LOG);
    buf_free(&t);
    buf_free(&b);
}

static void test_the_walk_goes_on_across_blocks(void) {
    buf b = {0};
    put11(&b, 5, "abc", 3, 4);
    buf_zero_to(&b, B);
    put11(&b, 5, "def", 3, 3);
    llog_regions w;
    llog_regions_init(&w, LLOG_DIALECT_ROCKSDB, 1, 0, 0);
    walked k = walk_block(&w, &b, 0, B, 0);
    CHECK_EQ(k.n, 2);
    CHECK_EQ(k.r[1].kind, LLOG_KIND_ZERO);
    k = walk_block(&w, &b, B, b.len - B, 1);
    CHECK_EQ(k.n, 1);
    CHECK_EQ(k.r[0].kind, LLOG_KIND_OTHER_LOG); /* 3, not the 4 learnt */
    llog_region_info r;
    llog_regions_feed(&w, b.p, 0, 1); /* an empty block has no region */
    CHECK(!llog_regions_next(&w, &r));
    buf_free(&b);
}

void suite_regions(void) {
    RUN(test_records_trailer_and_the_end_of_a_full_block);
    RUN(test_zero_fill_ends_the_block);
    RUN(test_a_bad_length_is_garbage_to_the_end_of_a_full_block);
    RUN(test_a_bad_checksum_drops_the_rest_of_the_block);
    RUN(test_torn_tails_cut_header_cut_payload_implausible);
    RUN(test_the_log_number_is_learnt_and_older_logs_records_told);
    RUN(test_pebbles_trailer_ends_the_block);
    RUN(test_the_walk_goes_on_across_blocks);
}
