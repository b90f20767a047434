/*
 * test_reader.c - the core reader (log_reader.h) from the start of a log:
 * LevelDB's reader semantics on written and golden records, every row of
 * the corruption table (docs/recovery.md, "Corruption reasons"), torn
 * tails, blocks fed split and payloads read in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_writer.h"
#include "reading.h"

static void test_reader_round_trip_of_written_records(void) {
    wlog L = {0};
    static const size_t sizes[] = {0, 1,      100, 32754, 0, 32761,  32762,
                                   5, 100000, 0,   65536, 7, 200000, 3};
    uint8_t *data = xmalloc(200000);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        rnd_fill(data, sizes[i]);
        wlog_add(&L, data, sizes[i]);
    }
    free(data);
    tevs want = {0}, got = {0};
    want_all_records(&L, &want);
    want_eof(&want);
    read_info info = read_log(L.log.p, L.log.len, WHOLE, &got);
    check_events(&got, &want, "round trip");
    CHECK_EQ(info.last, LLOG_EV_EOF);
    CHECK_EQ(info.clean_end, L.log.len);
    CHECK_EQ(info.position, L.log.len);
    tevs_free(&got);
    read_opts nocheck = WHOLE;
    nocheck.verify = 0;
    read_log(L.log.p, L.log.len, nocheck, &got);
    check_events(&got, &want, "round trip without checksums");
    tevs_free(&got);
    tevs_free(&want);
    wlog_free(&L);

    /* The empty log. */
    buf empty = {0};
    want_eof(&want);
    expect_log("empty log", &empty, 1, &want);
    tevs_free(&want);
}

static void test_reader_golden_records_alone(void) {
    /* Each vector's physical record as a whole log, read as docs/format.md
     * says. */
    for (size_t i = 0; i < V.nrec; i++) {
        const rec_vec *v = &V.rec[i];
        buf log = {0};
        buf_put(&log, v->rec, v->rlen);
        tevs want = {0};
        char reason[40];
        snprintf(reason, sizeof reason, "unknown record type %u", v->type);
        switch (v->type) {
        case LLOG_ZERO:
            if (v->plen > 0)
                want_bad(&want, 0, v->plen, reason);
            break; /* an empty ZERO record: preallocated, skipped silently */
        case LLOG_FULL:
            want_rec(&want, 0, v->payload, v->plen);
            break;
        case LLOG_FIRST:
            break; /* open at the end: see the torn tail below */
        case LLOG_MIDDLE:
        case LLOG_LAST:
            want_bad(&want, 0, v->plen, MISSING);
            break;
        default:
            want_bad(&want, 0, v->plen, reason);
            break;
        }
        if (v->type == LLOG_FIRST)
            want_torn(&want, 0, v->rlen, TORN_OPEN);
        else
            want_eof(&want);
        char what[64];
        snprintf(what, sizeof what, "record vector %zu (type %u)", i, v->type);
        expect_log(what, &log, 1, &want);
        tevs_free(&want);
        buf_free(&log);
    }
}

static void test_reader_checksum_mismatch(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "aaa", 3);               /* @0 */
    size_t bad = put_phys(&log, LLOG_FULL, "bbbb", 4); /* @10 */
    put_phys(&log, LLOG_FULL, "cc", 2);                /* @21 */
    log.p[bad + H + 1] ^= 0x20;                        /* a payload byte */
    /* In the short final block: from the header to the end of the data. */
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, 20, CHECKSUM);
    want_eof(&want);
    expect_log("checksum mismatch in the last block", &log, 1, &want);
    tevs_free(&want);

    /* In a full block: the rest of the block, then the next block. */
    buf_zero_to(&log, B);
    put_phys(&log, LLOG_FULL, "dd", 2);
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, CHECKSUM);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("checksum mismatch in a full block", &log, 1, &want);
    tevs_free(&want);

    /* Without checksums the damaged record is returned as it is. */
    want_rec(&want, 0, "aaa", 3);
    want_rec(&want, 10, "bBbb", 4);
    want_rec(&want, 21, "cc", 2);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("no checksums", &log, 0, &want);
    tevs_free(&want);

    /* A damaged length that still fits the block: the CRC catches it, and
     * the rest of the block is dropped (the length cannot be trusted). */
    log.p[bad + H + 1] ^= 0x20;
    log.p[bad + 4] = 2;
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, CHECKSUM);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("checksum mismatch from a damaged length", &log, 1, &want);
    tevs_free(&want);

    /* A damaged stored checksum. */
    log.p[bad + 4] = 4;
    log.p[bad] ^= 1;
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, CHECKSUM);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("damaged checksum field", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_reader_bad_record_length(void) {
    tevs want = {0};
    buf log = {0};
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    /* Block 0 one FULL record; block 1 a header whose length runs one byte
     * past the block; block 2 a good record. */
    put_phys(&log, LLOG_FULL, big, B - H);
    put_header(&log, 0x12345678, B - H + 1, LLOG_FULL);
    buf_put(&log, big, B - H);
    put_phys(&log, LLOG_FULL, "z", 1);
    want_rec(&want, 0, big, B - H);
    want_bad(&want, B, B, BAD_LENGTH);
    want_rec(&want, 2 * B, "z", 1);
    want_eof(&want);
    expect_log("bad record length in a middle block", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Inside a block, after a good record. */
    put_phys(&log, LLOG_FULL, "aaa", 3);
    put_header(&log, 0, B - 10 - H + 1, LLOG_MIDDLE);
    buf_bytes(&log, 0x5a, B - log.len);
    put_phys(&log, LLOG_FULL, "x", 1);
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, BAD_LENGTH);
    want_rec(&want, B, "x", 1);
    want_eof(&want);
    expect_log("bad record length after a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_bad_length_in_last_full_block_is_corruption(void) {
    /* The log is exactly one block long: the overlong length is damage,
     * not a torn write. */
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "aaa", 3);
    put_header(&log, 0, 40000, LLOG_FULL);
    buf_bytes(&log, 0x77, B - log.len);
    CHECK_EQ(log.len, B);
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, BAD_LENGTH);
    want_eof(&want);
    expect_log("length multiple of the block size", &log, 1, &want);
    tevs_free(&want);

    /* Two blocks, the damage in the second. */
    buf log2 = {0};
    put_phys(&log2, LLOG_FULL, "aaa", 3);
    buf_zero_to(&log2, B);
    put_phys(&log2, LLOG_FULL, "bbb", 3);
    put_header(&log2, 0, 65535, LLOG_FULL);
    buf_bytes(&log2, 0x77, 2 * B - log2.len);
    want_rec(&want, 0, "aaa", 3);
    want_rec(&want, B, "bbb", 3);
    want_bad(&want, B + 10, B - 10, BAD_LENGTH);
    want_eof(&want);
    expect_log("two blocks, bad length in the second", &log2, 1, &want);
    tevs_free(&want);

    /* The same log cut inside its last block: a torn payload instead. */
    log.len = 20000;
    want_rec(&want, 0, "aaa", 3);
    want_torn(&want, 10, 19990, TORN_PAYLOAD);
    expect_log("same, cut short", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    buf_free(&log2);
}

static void test_reader_partial_record_without_end(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @0 */
    put_phys(&log, LLOG_FULL, "xy", 2);   /* @10 */
    want_bad(&want, 0, 3, PARTIAL);
    want_rec(&want, 10, "xy", 2);
    want_eof(&want);
    expect_log("FIRST then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    put_phys(&log, LLOG_FIRST, "ab", 2);   /* @0 */
    put_phys(&log, LLOG_MIDDLE, "cde", 3); /* @9 */
    put_phys(&log, LLOG_FIRST, "ef", 2);   /* @19 */
    put_phys(&log, LLOG_LAST, "g", 1);     /* @28 */
    want_bad(&want, 0, 5, PARTIAL);
    want_rec(&want, 19, "efg", 3);
    want_eof(&want);
    expect_log("FIRST MIDDLE then FIRST LAST", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Across a block: the open record fills block 0. */
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    put_phys(&log, LLOG_FIRST, big, B - H);
    put_phys(&log, LLOG_FULL, "z", 1);
    want_bad(&want, 0, B - H, PARTIAL);
    want_rec(&want, B, "z", 1);
    want_eof(&want);
    expect_log("FIRST filling a block then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_empty_first_dropped_silently(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FIRST, "", 0);  /* @0 */
    put_phys(&log, LLOG_FULL, "xy", 2); /* @7 */
    want_rec(&want, 7, "xy", 2);
    want_eof(&want);
    expect_log("empty FIRST then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    put_phys(&log, LLOG_FIRST, "", 0);   /* @0 */
    put_phys(&log, LLOG_FIRST, "ab", 2); /* @7 */
    put_phys(&log, LLOG_LAST, "c", 1);   /* @16 */
    want_rec(&want, 7, "abc", 3);
    want_eof(&want);
    expect_log("empty FIRST then FIRST LAST", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* What old writers left: an empty FIRST in a block's last 7 bytes. */
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    put_phys(&log, LLOG_FULL, big, B - 2 * H); /* @0, ends at B - 7 */
    put_phys(&log, LLOG_FIRST, "", 0);         /* @B - 7 */
    put_phys(&log, LLOG_FULL, "z", 1);         /* @B */
    want_rec(&want, 0, big, B - 2 * H);
    want_rec(&want, B, "z", 1);
    want_eof(&want);
    expect_log("empty FIRST at a block end then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_missing_start_of_fragmented_record(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_MIDDLE, "abc", 3); /* @0 */
    put_phys(&log, LLOG_LAST, "de", 2);    /* @10 */
    put_phys(&log, LLOG_FULL, "z", 1);     /* @19 */
    put_phys(&log, LLOG_LAST, "qq", 2);    /* @27 */
    want_bad(&want, 0, 3, MISSING);
    want_bad(&want, 10, 2, MISSING);
    want_rec(&want, 19, "z", 1);
    want_bad(&want, 27, 2, MISSING);
    want_eof(&want);
    expect_log("MIDDLE and LAST without FIRST", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* A record whose FIRST was lost to damage in the block before. */
    uint8_t *big = xmalloc(2 * B);
    rnd_fill(big, 2 * B);
    wlog L = {0};
    wlog_add(&L, big, 100);
    wlog_add(&L, big, 2 * B); /* FIRST @107, MIDDLE @B, LAST @2B */
    wlog_add(&L, big, 10);
    L.log.p[L.rc[1].offset + H] ^= 1;
    uint64_t last = L.ph[3].header;
    CHECK_EQ(last, 2 * B);
    want_rec(&want, 0, big, 100);
    want_bad(&want, L.rc[1].offset, B - L.rc[1].offset, CHECKSUM);
    want_bad(&want, B, B - H, MISSING);
    want_bad(&want, 2 * B, L.ph[3].len, MISSING);
    want_rec(&want, L.rc[2].offset, big, 10);
    want_eof(&want);
    expect_log("fragments after a damaged FIRST", &L.log, 1, &want);
    tevs_free(&want);
    wlog_free(&L);
    free(big);
}

static void test_reader_error_in_middle_of_record(void) {
    tevs want = {0};
    buf log = {0};
    /* A damaged fragment inside an open record (short final block). */
    put_phys(&log, LLOG_FIRST, "abc", 3);               /* @0 */
    size_t bad = put_phys(&log, LLOG_MIDDLE, "def", 3); /* @10 */
    put_phys(&log, LLOG_LAST, "g", 1);                  /* @20 */
    log.p[bad + H] ^= 0x40;
    want_bad(&want, 10, 18, CHECKSUM);
    want_bad(&want, 0, 3, MIDDLE_ERR);
    want_eof(&want);
    expect_log("checksum mismatch inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Zero fill inside an open record: only the record is reported. */
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @0 */
    buf_zero_to(&log, B);
    put_phys(&log, LLOG_LAST, "g", 1); /* @B */
    put_phys(&log, LLOG_FULL, "z", 1); /* @B + 8 */
    want_bad(&want, 0, 3, MIDDLE_ERR);
    want_bad(&want, B, 1, MISSING);
    want_rec(&want, B + 8, "z", 1);
    want_eof(&want);
    expect_log("zero fill inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* A bad length in the block after a FIRST that filled its block. */
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    put_phys(&log, LLOG_FIRST, big, B - H);
    put_header(&log, 0, 50000, LLOG_MIDDLE);
    buf_bytes(&log, 0x11, 2 * B - log.len);
    put_phys(&log, LLOG_FULL, "z", 1);
    want_bad(&want, B, B, BAD_LENGTH);
    want_bad(&want, 0, B - H, MIDDLE_ERR);
    want_rec(&want, 2 * B, "z", 1);
    want_eof(&want);
    expect_log("bad length inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_unknown_record_type(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "a", 1); /* @0 */
    put_phys(&log, 9, "hello", 5);     /* @8 */
    put_phys(&log, LLOG_FULL, "b", 1); /* @20 */
    put_phys(&log, 200, "", 0);        /* @28 */
    put_phys(&log, LLOG_ZERO, "q", 1); /* @35: type 0 with a payload */
    put_phys(&log, LLOG_FULL, "c", 1); /* @43 */
    want_rec(&want, 0, "a", 1);
    want_bad(&want, 8, 5, "unknown record type 9");
    want_rec(&want, 20, "b", 1);
    want_bad(&want, 28, 0, "unknown record type 200");
    want_bad(&want, 35, 1, "unknown record type 0");
    want_rec(&want, 43, "c", 1);
    want_eof(&want);
    expect_log("unknown types outside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Inside a record: the open fragments are dropped with it. */
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @0 */
    put_phys(&log, 9, "hello", 5);        /* @10 */
    put_phys(&log, LLOG_LAST, "x", 1);    /* @22 */
    put_phys(&log, LLOG_FULL, "b", 1);    /* @30 */
    want_bad(&want, 0, 8, "unknown record type 9");
    want_bad(&want, 22, 1, MISSING);
    want_rec(&want, 30, "b", 1);
    want_eof(&want);
    expect_log("unknown type inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_reader_zero_fill_skipped_silently(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "a", 1);
    buf_bytes(&log, 0, 100);
    want_rec(&want, 0, "a", 1);
    want_eof(&want);
    expect_log("zero fill at the end", &log, 1, &want);
    tevs_free(&want);

    buf_zero_to(&log, B);
    put_phys(&log, LLOG_FULL, "b", 1);
    want_rec(&want, 0, "a", 1);
    want_rec(&want, B, "b", 1);
    want_eof(&want);
    expect_log("zero fill to the block end", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* After a zero header the rest of the block is not looked at. */
    put_phys(&log, LLOG_FULL, "a", 1);
    buf_bytes(&log, 0, H);
    buf_bytes(&log, 0xff, B - log.len);
    put_phys(&log, LLOG_FULL, "b", 1);
    want_rec(&want, 0, "a", 1);
    want_rec(&want, B, "b", 1);
    want_eof(&want);
    expect_log("junk after a zero header", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* A whole block of zeros, then records. */
    buf_zero_to(&log, B);
    put_phys(&log, LLOG_FULL, "b", 1);
    want_rec(&want, B, "b", 1);
    want_eof(&want);
    expect_log("a block of zeros", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
}

/* log reads as want (then freed) and a whole read stops at clean_end, its
 * position there too. */
static void expect_torn_at(const char *what, const buf *log, tevs *want,
                           uint64_t clean_end) {
    tevs got = {0};
    expect_log(what, log, 1, want);
    read_info info = read_log(log->p, log->len, WHOLE, &got);
    CHECK_EQ(info.clean_end, clean_end);
    CHECK_EQ(info.position, clean_end);
    tevs_free(&got);
    tevs_free(want);
}

/* A fragmented record open at the end as a writer leaves it: a 40000-byte
 * record cut at a block boundary, inside a header, inside a payload. */
static void check_written_record_torn(void) {
    uint8_t *big = xmalloc(40000);
    rnd_fill(big, 40000);
    wlog L = {0};
    wlog_add(&L, (const uint8_t *)"abc", 3); /* @0 */
    wlog_add(&L, big, 40000);                /* FIRST @10, LAST @B */
    static const size_t cuts[] = {B, B + 3, B + 100, B - 1};
    for (size_t i = 0; i < 4; i++) {
        size_t cut = cuts[i];
        const char *reason = cut == B       ? TORN_OPEN
                             : cut == B + 3 ? TORN_HEADER
                                            : TORN_PAYLOAD;
        buf part = {0};
        tevs want = {0};
        buf_put(&part, L.log.p, cut);
        want_rec(&want, 0, "abc", 3);
        want_torn(&want, 10, cut - 10, reason);
        char what[64];
        snprintf(what, sizeof what, "40000-byte record cut at %zu", cut);
        expect_torn_at(what, &part, &want, 10);
        buf_free(&part);
    }
    wlog_free(&L);
    free(big);
}

static void test_reader_torn_tail_cases(void) {
    tevs want = {0}, got = {0};
    buf log = {0};

    /* Truncated header. */
    put_phys(&log, LLOG_FULL, "abc", 3);   /* @0 */
    put_phys(&log, LLOG_FULL, "hello", 5); /* @10 */
    log.len = 14;
    want_rec(&want, 0, "abc", 3);
    want_torn(&want, 10, 4, TORN_HEADER);
    expect_torn_at("truncated header", &log, &want, 10);

    /* Truncated payload. */
    log.len = 19;
    want_rec(&want, 0, "abc", 3);
    want_torn(&want, 10, 9, TORN_PAYLOAD);
    expect_torn_at("truncated payload", &log, &want, 10);
    buf_free(&log);

    /* Fragmented record open at the end, in a short block... */
    put_phys(&log, LLOG_FULL, "x", 1);    /* @0 */
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @8 */
    want_rec(&want, 0, "x", 1);
    want_torn(&want, 8, 10, TORN_OPEN);
    expect_torn_at("FIRST at the end", &log, &want, 8);
    buf_free(&log);

    /* ...and as a writer leaves it. */
    check_written_record_torn();

    /* A checksum mismatch in the last block is corruption, not a tear. */
    put_phys(&log, LLOG_FULL, "abc", 3);
    put_phys(&log, LLOG_FULL, "def", 3);
    log.p[10 + H] ^= 1;
    want_rec(&want, 0, "abc", 3);
    want_bad(&want, 10, 10, CHECKSUM);
    want_eof(&want);
    expect_log("bad checksum in the last record", &log, 1, &want);
    read_info info = read_log(log.p, log.len, WHOLE, &got);
    CHECK_EQ(info.clean_end, 10);
    tevs_free(&got);
    tevs_free(&want);
    buf_free(&log);
}

static void test_reader_clean_end_after_reading(void) {
    wlog L = {0};
    make_mixed_log(&L, 77, 40, 80000);
    tevs got = {0};
    read_info info = read_log(L.log.p, L.log.len, WHOLE, &got);
    CHECK_EQ(info.last, LLOG_EV_EOF);
    CHECK_EQ(info.clean_end, L.log.len);
    tevs_free(&got);

    /* Zero fill after the last record does not move the clean end. */
    buf padded = {0};
    buf_put(&padded, L.log.p, L.log.len);
    buf_bytes(&padded, 0, 3 * B);
    info = read_log(padded.p, padded.len, WHOLE, &got);
    CHECK_EQ(info.clean_end, L.log.len);
    CHECK_EQ(got.n, L.nrc + 1);
    tevs_free(&got);
    buf_free(&padded);
    wlog_free(&L);
}

/* A caller's assembly buffer that the test moves away after every block
 * (freeing the old one, so that ASan sees any later use of it). */
typedef struct moving {
    uint8_t *current;
    size_t cap, moves;
} moving;

static uint8_t *moving_reserve(void *ctx, size_t len, size_t need,
                               size_t *cap) {
    moving *m = ctx;
    uint8_t *fresh = xmalloc(need);
    if (len > 0)
        memcpy(fresh, m->current, len);
    free(m->current);
    m->current = fresh;
    m->cap = *cap = need;
    return fresh;
}

/* Moves the record being assembled, if any, to a new buffer. */
static void move_assembly(llog_reader *r, moving *m) {
    uint8_t *at;
    size_t len;
    if (!llog_reader_assembly(r, &at, &len))
        return;
    CHECK(at == m->current && len <= m->cap);
    uint8_t *fresh = xmalloc(m->cap + 1);
    memcpy(fresh, at, len);
    free(m->current);
    m->current = fresh;
    llog_reader_assembly_moved(r, fresh, m->cap + 1);
    m->moves++;
}

/* A record being assembled in the caller's buffer goes on wherever the
 * caller moves it (llog_reader_assembly_moved) and comes out whole there. */
static void test_reader_assembly_moves_with_the_caller(void) {
    for (uint64_t seed = 1; seed <= harness_pick(10, 5); seed++) {
        wlog L = {0};
        make_mixed_log(&L, seed, 30, 200000);
        moving m = {0};
        llog_reader_options opt = {.end = LLOG_NO_END,
                                   .verify_checksums = 1,
                                   .reserve = moving_reserve,
                                   .reserve_ctx = &m};
        llog_reader *r = llog_reader_new(&opt);
        uint8_t *at;
        size_t len;
        CHECK(!llog_reader_assembly(r, &at, &len)); /* no record yet */
        tevs got = {0}, want = {0};
        llog_event ev;
        for (llog_reader_next(r, &ev); ev.kind != LLOG_EV_EOF;
             llog_reader_next(r, &ev)) {
            if (ev.kind != LLOG_EV_NEED_BLOCK) {
                CHECK(!ev.assembled || ev.data == m.current);
                tevs_add_event(&got, &ev);
                continue;
            }
            move_assembly(r, &m);
            uint64_t want_at = llog_reader_wanted(r);
            size_t n = want_at < L.log.len ? L.log.len - want_at : 0;
            llog_reader_feed(r, L.log.p + want_at, n < B ? n : B);
        }
        want_all_records(&L, &want);
        check_events(&got, &want, "records moved while assembled");
        CHECK(m.moves > 0);
        llog_reader_free(r);
        free(m.current);
        tevs_free(&got);
        tevs_free(&want);
        wlog_free(&L);
    }
}

/* A reduced run reads the first log of each kind of damage below, and
 * every one with rewritten headers (the damage that reaches most paths). */
static int in_place_seed_kept(uint64_t seed) {
    return !harness_reduced || seed <= 5 || seed % 5 == 2;
}

/*
 * Payloads read in place (fed split, straight into the caller's buffer)
 * read as copied ones do, on clean logs of long records and on the same
 * logs damaged inside and around them: flipped bytes, rewritten headers,
 * zeroed blocks, truncation.
 */
static void test_reader_in_place_matches_copying(void) {
    for (uint64_t seed = 1; seed <= 40; seed++) {
        if (!in_place_seed_kept(seed))
            continue;
        wlog L = {0};
        make_mixed_log(&L, seed, 40, 150000);
        buf log = {0};
        buf_put(&log, L.log.p, L.log.len);
        unsigned what = (unsigned)(seed % 5);
        for (int k = 0; k < 3 && what != 0; k++) {
            size_t at = rnd_below(log.len);
            if (what == 1) {
                log.p[at] ^= (uint8_t)(1 + rnd_below(255));
            } else if (what == 2) { /* a header at a block start */
                size_t blk = at - at % B;
                log.p[blk + 4 + rnd_below(3)] ^= (uint8_t)(1 + rnd_below(255));
            } else if (what == 3) {
                size_t blk = at - at % B;
                size_t n = log.len - blk < B ? log.len - blk : B;
                memset(log.p + blk, 0, n);
            } else {
                log.len = at; /* torn at any byte */
            }
        }
        for (int verify = 0; verify <= 1; verify++) {
            tevs copied = {0}, placed = {0};
            read_opts o = WHOLE;
            o.verify = verify;
            read_log(log.p, log.len, o, &copied);
            o.in_place = 1;
            read_info info = read_log(log.p, log.len, o, &placed);
            char what_s[80];
            snprintf(what_s, sizeof what_s, "seed %llu damage %u verify %d",
                     (unsigned long long)seed, what, verify);
            check_events(&placed, &copied, what_s);
            if (what == 0)
                CHECK(info.in_place > 0); /* the path was taken */
            tevs_free(&copied);
            tevs_free(&placed);
        }
        buf_free(&log);
        wlog_free(&L);
    }
}

/* Reads log[0..len) taking records with llog_reader_next_run wherever it
 * takes them (room for `max` records and `budget` bytes a call), and events
 * otherwise: all of them into out, in order. */
static void read_by_runs(const uint8_t *log, size_t len, size_t max,
                         size_t budget, tevs *out) {
    llog_reader_options opt = {.end = LLOG_NO_END, .verify_checksums = 1};
    llog_reader *r = llog_reader_new(&opt);
    uint64_t *offsets = xmalloc(max * sizeof *offsets);
    int64_t *ends = xmalloc((max + 1) * sizeof *ends);
    uint8_t *data = xmalloc(budget + B);
    for (long guard = 0; r != NULL && guard < 10000000; guard++) {
        llog_run run = {offsets, ends, data, 0, max, 0, budget};
        ends[0] = 0;
        size_t k = llog_reader_next_run(r, &run);
        for (size_t i = 0; i < k; i++)
            want_rec(out, offsets[i], data + ends[i],
                     (size_t)(ends[i + 1] - ends[i]));
        if (k > 0)
            continue;
        llog_event ev;
        llog_reader_next(r, &ev);
        if (ev.kind == LLOG_EV_NEED_BLOCK) {
            uint64_t at = llog_reader_wanted(r);
            size_t n = at >= len ? 0 : len - at < B ? (size_t)(len - at) : B;
            llog_reader_feed(r, log + (n ? at : 0), n);
            continue;
        }
        tevs_add_event(out, &ev);
        if (ev.kind == LLOG_EV_EOF || ev.kind == LLOG_EV_DONE ||
            ev.kind == LLOG_EV_ERROR)
            break;
    }
    llog_reader_free(r);
    free(offsets);
    free(ends);
    free(data);
}

/*
 * Records read in runs are those read one by one: records of sizes around
 * the run's batch shapes (RUN_SHORT records of 64 to 256 bytes, else
 * RUN_BATCH), a damaged one among them, and runs cut by their room for
 * records and bytes anywhere.
 */
static void test_reader_runs_match_records(void) {
    static const size_t sizes[] = {0,   1,   20,  63,  64,  65,   100,
                                   200, 255, 256, 257, 300, 1000, 5000};
    static const size_t rooms[][2] = {{65536, 64u << 20}, {12, 64u << 20},
                                      {13, 64u << 20},    {47, 1000},
                                      {100, 1300},        {1, 1}};
    uint8_t *payload = xmalloc(5000 + 8); /* (records start at 0 to 6) */
    rnd_fill(payload, 5000 + 8);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        wlog L = {0};
        for (size_t i = 0; i < 600; i++)
            wlog_add(&L, payload + i % 7, sizes[s] + (i % 3 == 2));
        if (sizes[s] > 0) /* a damaged record among them */
            L.log.p[L.rc[333].offset + H] ^= 0x40;
        tevs want = {0};
        read_log(L.log.p, L.log.len, WHOLE, &want);
        for (size_t k = 0; k < sizeof rooms / sizeof rooms[0]; k++) {
            if (!harness_keep(s + k, 2))
                continue; /* a reduced run: every other room, in turn */
            tevs got = {0};
            read_by_runs(L.log.p, L.log.len, rooms[k][0], rooms[k][1], &got);
            char what[80];
            snprintf(what, sizeof what, "records of %zu bytes, room %zu/%zu",
                     sizes[s], rooms[k][0], rooms[k][1]);
            check_events(&got, &want, what);
            tevs_free(&got);
        }
        tevs_free(&want);
        wlog_free(&L);
    }
    free(payload);
}

void suite_reader(void) {
    RUN(test_reader_round_trip_of_written_records);
    RUN(test_reader_golden_records_alone);
    RUN(test_reader_checksum_mismatch);
    RUN(test_reader_bad_record_length);
    RUN(test_reader_bad_length_in_last_full_block_is_corruption);
    RUN(test_reader_partial_record_without_end);
    RUN(test_reader_empty_first_dropped_silently);
    RUN(test_reader_missing_start_of_fragmented_record);
    RUN(test_reader_error_in_middle_of_record);
    RUN(test_reader_unknown_record_type);
    RUN(test_reader_zero_fill_skipped_silently);
    RUN(test_reader_torn_tail_cases);
    RUN(test_reader_clean_end_after_reading);
    RUN(test_reader_in_place_matches_copying);
    RUN(test_reader_assembly_moves_with_the_caller);
    RUN(test_reader_runs_match_records);
}
