/*
 * test_dialects_metadata.c - RocksDB's metadata records (docs/rocksdb.md) in
 * the core: compression, timestamp-size and predecessor records checked and
 * handed out, their reports, and compressed records decoded through the
 * decode callback (the XOR "compression" of dialect_logs.h), fragment by
 * fragment and in RocksDB's chunks across blocks.
 *
 * Expected events are written from docs/rocksdb.md and log_reader.h; the
 * records are encoded here, with the reference CRC (ref_crc32c.h).
 */
#include <stdlib.h>

#include "dialect_logs.h"

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

/* ---- the suite ---------------------------------------------------------- */

void suite_dialects_metadata(void) {
    RUN(test_metadata_records_checked_and_handed_out);
    RUN(test_metadata_compression_kinds);
    RUN(test_metadata_good_entries_before_a_bad_one);
    RUN(test_metadata_records_end_an_open_record);
    RUN(test_metadata_of_an_old_log);
    RUN(test_compressed_records_decoded);
    RUN(test_compressed_chunks_across_blocks);
}
