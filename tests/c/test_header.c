/*
 * test_header.c - the rules of log_header.h and log_detect.h: the dialect
 * tables, the region classifier (with and without a table), Pebble's
 * end-of-log trailer, RocksDB's compression record, and telling the
 * dialects apart.
 */
#include <string.h>

#include "dialect_logs.h"
#include "log_detect.h"

/* A physical record at dst: header of hs bytes (type, log number, synced),
 * payload, checksum over the header's bytes from the type on; returns its
 * size. */
static size_t put_record(uint8_t *dst, size_t hs, unsigned type,
                         uint32_t number, const void *payload, size_t n) {
    memset(dst, 0, hs);
    dst[4] = (uint8_t)n;
    dst[5] = (uint8_t)(n >> 8);
    dst[6] = (uint8_t)type;
    if (hs > H)
        put_u32(dst + H, number);
    memcpy(dst + hs, payload, n);
    uint32_t crc = llog_crc32c_extend(0, dst + 6, hs - 6 + n);
    put_u32(dst, llog_mask_crc(crc));
    return hs + n;
}

/* Pebble's Close: an empty recyclable FULL header of the next number,
 * checksum 0. */
static size_t close_header(uint8_t *dst, uint32_t next) {
    memset(dst, 0, RB);
    dst[6] = 5;
    put_u32(dst + H, next);
    return RB;
}

static void test_tables_give_each_dialects_types(void) {
    static const struct {
        llog_dialect d;
        unsigned type;
        llog_role role;
        size_t size;
    } cases[] = {
        {LLOG_DIALECT_LEVELDB, 0, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_LEVELDB, 1, LLOG_ROLE_FULL, H},
        {LLOG_DIALECT_LEVELDB, 4, LLOG_ROLE_LAST, H},
        {LLOG_DIALECT_LEVELDB, 5, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_LEVELDB, 255, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_ROCKSDB, 6, LLOG_ROLE_FIRST, RB},
        {LLOG_DIALECT_ROCKSDB, 9, LLOG_ROLE_META, H},
        {LLOG_DIALECT_ROCKSDB, 10, LLOG_ROLE_META, H},
        {LLOG_DIALECT_ROCKSDB, 11, LLOG_ROLE_META, RB},
        {LLOG_DIALECT_ROCKSDB, 12, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_ROCKSDB, 129, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_ROCKSDB, 130, LLOG_ROLE_META, H},
        {LLOG_DIALECT_ROCKSDB, 131, LLOG_ROLE_META, RB},
        {LLOG_DIALECT_ROCKSDB, 132, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_ROCKSDB, 255, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_PEBBLE, 8, LLOG_ROLE_LAST, RB},
        {LLOG_DIALECT_PEBBLE, 9, LLOG_ROLE_FULL, SB},
        {LLOG_DIALECT_PEBBLE, 12, LLOG_ROLE_LAST, SB},
        {LLOG_DIALECT_PEBBLE, 13, LLOG_ROLE_UNKNOWN, H},
        {LLOG_DIALECT_PEBBLE, 255, LLOG_ROLE_UNKNOWN, H},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_EQ(llog_type_role(cases[i].d, cases[i].type), cases[i].role);
        CHECK_EQ(llog_type_header_size(cases[i].d, cases[i].type),
                 cases[i].size);
    }
    /* Every type the tables do not list: unknown, with a 7-byte header. */
    size_t known[LLOG_DIALECT_COUNT] = {0};
    for (unsigned d = 0; d < LLOG_DIALECT_COUNT; d++)
        for (unsigned t = 0; t < 256; t++)
            known[d] += llog_type_role((llog_dialect)d, t) != 0 ||
                        llog_type_header_size((llog_dialect)d, t) != H;
    CHECK_EQ(known[LLOG_DIALECT_LEVELDB], 4);
    CHECK_EQ(known[LLOG_DIALECT_ROCKSDB], 13);
    CHECK_EQ(known[LLOG_DIALECT_PEBBLE], 12);
}

/* The classifier without a table (LevelDB's hot path) and with LevelDB's
 * table agree on every region kind. */
static void test_region_leveldb_with_and_without_a_table(void) {
    uint8_t b[64] = {0};
    size_t n = put_record(b, H, LLOG_FULL, 0, "abc", 3);
    struct {
        size_t left;
        int final;
        llog_region want;
    } cases[] = {
        {n, 0, LLOG_REGION_RECORD},         {n - 1, 1, LLOG_REGION_TRUNCATED},
        {n - 1, 0, LLOG_REGION_BAD_LENGTH}, {H - 1, 0, LLOG_REGION_TRAILER},
        {H - 1, 1, LLOG_REGION_TRUNCATED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        llog_header a = {0, 0, 0, H, 0, 0}, t = a;
        CHECK_EQ(
            llog_header_region(NULL, b, cases[i].left, cases[i].final, &a),
            cases[i].want);
        CHECK_EQ(llog_header_region(llog_header_types(LLOG_DIALECT_LEVELDB), b,
                                    cases[i].left, cases[i].final, &t),
                 cases[i].want);
        CHECK_EQ(a.length, t.length);
        CHECK_EQ(a.header_size, t.header_size);
    }
    uint8_t zero[H] = {0};
    llog_header h = {0, 0, 0, H, 0, 0};
    CHECK_EQ(llog_header_region(NULL, zero, H, 0, &h), LLOG_REGION_ZERO);
}

static void test_region_reads_longer_headers(void) {
    uint8_t b[64] = {0};
    size_t n = put_record(b, SB, 9, 42, "xy", 2);
    put_u32(b + RB, 1000); /* the synced offset, low half */
    llog_header h = {0, 0, 0, H, 0, 0};
    CHECK_EQ(llog_header_region(llog_header_types(LLOG_DIALECT_PEBBLE), b, n,
                                0, &h),
             LLOG_REGION_RECORD);
    CHECK_EQ(h.header_size, SB);
    CHECK_EQ(h.log_number, 42);
    CHECK_EQ(h.synced, 1000);
    /* In RocksDB's dialect type 9 has a 7-byte header. */
    CHECK_EQ(llog_header_region(llog_header_types(LLOG_DIALECT_ROCKSDB), b, n,
                                0, &h),
             LLOG_REGION_RECORD);
    CHECK_EQ(h.header_size, H);
    /* A block's rest too short for an 11-byte header: its trailer. */
    n = put_record(b, RB, 5, 7, "", 0);
    CHECK_EQ(llog_header_region(llog_header_types(LLOG_DIALECT_PEBBLE), b,
                                RB - 1, 0, &h),
             LLOG_REGION_TRAILER);
    CHECK_EQ(llog_header_region(llog_header_types(LLOG_DIALECT_PEBBLE), b,
                                RB - 1, 1, &h),
             LLOG_REGION_TRUNCATED);
}

/* The header of the bytes at b, as the Pebble reader classifies them. */
static llog_header pebble_header(const uint8_t *b, size_t n) {
    llog_header h = {0, 0, 0, H, 0, 0};
    CHECK_EQ(llog_header_region(llog_header_types(LLOG_DIALECT_PEBBLE), b, n,
                                0, &h),
             LLOG_REGION_RECORD);
    return h;
}

/* With the log's number known, the trailer is a header of the next number,
 * whatever else it holds (Pebble's reader ends the log at any header of
 * another number); unknown, it is Close's exact header. */
static void test_pebble_trailer_rule(void) {
    uint8_t b[64];
    close_header(b, 8);
    llog_header h = pebble_header(b, RB);
    CHECK(llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 1, 7));
    CHECK(!llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 1, 8));
    CHECK(llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 0, 0));
    CHECK(!llog_header_pebble_trailer(LLOG_DIALECT_ROCKSDB, &h, 1, 7));
    /* The low 32 bits: log 2^32 - 1 is followed by 0. */
    close_header(b, 0);
    h = pebble_header(b, RB);
    CHECK(llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 1, 0xFFFFFFFFu));
    /* A record of the next number, not empty: the trailer when the number
     * is known, not when it is not (then it says the log's number). */
    size_t n = put_record(b, RB, 5, 8, "x", 1);
    h = pebble_header(b, n);
    CHECK(llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 1, 7));
    CHECK(!llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 0, 0));
    /* Close's header with a checksum: not Close's when the number is not
     * known. */
    close_header(b, 8);
    b[0] = 1;
    h = pebble_header(b, RB);
    CHECK(!llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 0, 0));
    /* A 7-byte header is never one. */
    n = put_record(b, H, 1, 0, "", 0);
    h = pebble_header(b, n);
    CHECK(!llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, 0, 0));
}

static void test_compression_record(void) {
    uint8_t b[64], zstd[4], none[4], five[5] = {7, 0, 0, 0, 0};
    put_u32(zstd, LLOG_RDB_ZSTD);
    put_u32(none, LLOG_RDB_NO_COMPRESSION);
    CHECK_EQ(llog_compression_record_type(zstd, 4), LLOG_RDB_ZSTD);
    CHECK_EQ(llog_compression_record_type(none, 4), LLOG_RDB_NO_COMPRESSION);
    CHECK_EQ(llog_compression_record_type(five, 5), -1);
    CHECK_EQ(llog_compression_record_type(zstd, 3), -1);
    size_t n = put_record(b, H, LLOG_RDB_SET_COMPRESSION, 0, zstd, 4);
    CHECK(llog_header_starts_compressed(b, n));
    CHECK(!llog_header_starts_compressed(b, n - 1)); /* cut short */
    b[H] ^= 1;                                       /* damaged */
    CHECK(!llog_header_starts_compressed(b, n));
    n = put_record(b, H, LLOG_RDB_SET_COMPRESSION, 0, none, 4);
    CHECK(!llog_header_starts_compressed(b, n));
    n = put_record(b, H, LLOG_RDB_SET_COMPRESSION, 0, five, 5);
    CHECK(!llog_header_starts_compressed(b, n));
    n = put_record(b, H, LLOG_FULL, 0, zstd, 4);
    CHECK(!llog_header_starts_compressed(b, n));
    /* What the writer writes is what the check reads. */
    llog_writer w;
    llog_writer_init(&w, 0);
    n = llog_writer_compression_record(&w, b);
    CHECK_EQ(n, LLOG_COMPRESSION_RECORD_SIZE);
    CHECK_EQ(w.offset, n);
    CHECK(llog_header_starts_compressed(b, n));
}

/* The detection of bytes at b (n of them), with no log number. */
static llog_detection detect(const uint8_t *b, size_t n) {
    return llog_detect_dialect(b, n, 0, 0);
}

static void test_detect_dialect(void) {
    uint8_t b[256], zstd[4];
    put_u32(zstd, LLOG_RDB_ZSTD);
    CHECK_EQ(detect(b, 0).dialect, LLOG_DIALECT_COUNT); /* nothing */
    size_t n = put_record(b, H, LLOG_FULL, 0, "a", 1);
    CHECK_EQ(detect(b, n).dialect, LLOG_DIALECT_LEVELDB);
    n = put_record(b, H, LLOG_RDB_SET_COMPRESSION, 0, zstd, 4);
    n += put_record(b + n, H, LLOG_FULL, 0, "frame", 5);
    CHECK_EQ(detect(b, n).dialect, LLOG_DIALECT_ROCKSDB);
    /* The compression record anywhere but first: not RocksDB's. */
    n = put_record(b, H, LLOG_FULL, 0, "a", 1);
    n += put_record(b + n, H, LLOG_RDB_SET_COMPRESSION, 0, zstd, 4);
    CHECK_EQ(detect(b, n).dialect, LLOG_DIALECT_LEVELDB);
    n = put_record(b, RB, 5, 7, "rec", 3);
    CHECK_EQ(detect(b, n).dialect, LLOG_DIALECT_ROCKSDB); /* recyclable */
    n = put_record(b, SB, 9, 7, "sync", 4);
    CHECK_EQ(detect(b, n).dialect, LLOG_DIALECT_PEBBLE);
    n += put_record(b + n, H, 10, 0, "\1\0\0\0\10\0", 6);
    CHECK_EQ(detect(b, n).dialect, LLOG_DIALECT_COUNT); /* both */
    /* The trailer, by the one rule: the next number after a record. */
    n = put_record(b, RB, 5, 7, "rec", 3);
    size_t with_trailer = n + close_header(b + n, 8);
    CHECK_EQ(detect(b, with_trailer).dialect, LLOG_DIALECT_PEBBLE);
    close_header(b + n, 9);
    CHECK_EQ(detect(b, with_trailer).dialect, LLOG_DIALECT_ROCKSDB);
    /* ... and a given log number decides for the first one too. */
    close_header(b, 8);
    CHECK_EQ(detect(b, RB).dialect, LLOG_DIALECT_PEBBLE);
    CHECK_EQ(llog_detect_dialect(b, RB, 1, 7).dialect, LLOG_DIALECT_PEBBLE);
    CHECK_EQ(llog_detect_dialect(b, RB, 1, 3).dialect, LLOG_DIALECT_COUNT);
    CHECK(detect(b, RB).reason != NULL);
}

void suite_header(void) {
    RUN(test_tables_give_each_dialects_types);
    RUN(test_region_leveldb_with_and_without_a_table);
    RUN(test_region_reads_longer_headers);
    RUN(test_pebble_trailer_rule);
    RUN(test_compression_record);
    RUN(test_detect_dialect);
}
