/*
 * test_append.c - where an append resumes (log_resume.h): every ending a
 * crashed or preallocating writer leaves, and damage, on logs built with the
 * record encoder of harness.h. Expected cuts are the offsets the encoder
 * gave, never values computed by the module under test.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_resume.h"

/* Runs the module over log[0..len), as if the file ended at `shrunk` once
 * it is asked for bytes past it (len: it never shrinks). Checks every span
 * asked for. Returns the status; *out the decision. */
static llog_status decide_shrunk(const buf *log, size_t shrunk,
                                 llog_resume_result *out) {
    llog_resume *t = llog_resume_new(log->len, LLOG_DIALECT_LEVELDB, 0, 0);
    CHECK(t != NULL);
    llog_resume_result early;
    CHECK_EQ(llog_resume_decision(t, &early), LLOG_ERR_ARG); /* not yet */
    uint64_t at;
    size_t len, calls = 0;
    uint8_t *into;
    while (llog_resume_want(t, &at, &len, &into)) {
        if (!CHECK(++calls < 1000)) /* a hang */
            break;
        CHECK(len > 0 && len <= B && at + len <= log->len);
        size_t got = at >= shrunk ? 0 : at + len > shrunk ? shrunk - at : len;
        memcpy(into, log->p + at, got);
        llog_resume_got(t, got);
    }
    llog_status st = llog_resume_decision(t, out);
    llog_resume_free(t);
    return st;
}

static llog_resume_result decide(const buf *log) {
    llog_resume_result r = {0};
    CHECK_EQ(decide_shrunk(log, log->len, &r), LLOG_OK);
    return r;
}

#define CHECK_DECISION(log, cut_, fresh_, clean_)                             \
    do {                                                                      \
        llog_resume_result r_ = decide(log);                                  \
        CHECK(r_.refusal == NULL);                                            \
        CHECK_EQ(r_.cut, cut_);                                               \
        CHECK_EQ(r_.fresh_block, fresh_);                                     \
        CHECK_EQ(r_.clean_end, clean_);                                       \
    } while (0)

/* The module refuses at `at`, for this reason. */
#define CHECK_REFUSED(log, at_, why_)                                         \
    do {                                                                      \
        llog_resume_result r_ = decide(log);                                  \
        if (CHECK(r_.refusal != NULL)) {                                      \
            CHECK_STR(r_.refusal, why_);                                      \
            CHECK_EQ(r_.refused_at, at_);                                     \
        }                                                                     \
    } while (0)

/* Appends a record of n pseudo-random bytes; returns its offset. */
static uint64_t add(buf *log, size_t n) {
    uint8_t *data = xmalloc(n ? n : 1);
    rnd_fill(data, n);
    uint64_t at;
    ref_encode(log->len, data, n, log, &at);
    free(data);
    return at;
}

static void test_empty_and_clean_logs_stay_as_they_are(void) {
    buf log = {0};
    CHECK_DECISION(&log, 0, 0, 0);
    add(&log, 10);
    add(&log, 0);
    add(&log, 3 * B); /* FIRST, MIDDLE, MIDDLE, LAST */
    add(&log, B - 20);
    CHECK_DECISION(&log, log.len, 0, log.len);
    buf_free(&log);
}

/* The log is cut where the torn record began, wherever it was torn. */
static void test_a_torn_record_is_cut_back(void) {
    size_t sizes[] = {100, 2 * B + 500};
    for (size_t s = 0; s < 2; s++) {
        buf log = {0};
        add(&log, 1000);
        size_t clean = log.len;
        uint64_t torn = add(&log, sizes[s]);
        CHECK_EQ(torn, clean);
        size_t whole = log.len;
        size_t cuts[] = {clean + 3, clean + H + 1, clean + 50, B,
                         B + 4,     B + 100,       2 * B,      whole - 1};
        for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
            if (cuts[c] <= clean || cuts[c] >= whole)
                continue;
            log.len = cuts[c];
            CHECK_DECISION(&log, clean, 0, clean);
        }
        buf_free(&log);
    }
}

/* Zero fill (preallocation) after the last record, inside its block and
 * over whole blocks, is cut back. */
static void test_zero_fill_is_cut_back(void) {
    size_t fills[] = {1, 6, 7, 100, B, 3 * B + 17};
    for (size_t f = 0; f < sizeof fills / sizeof *fills; f++) {
        buf log = {0};
        add(&log, 500);
        size_t clean = log.len;
        buf_bytes(&log, 0, fills[f]);
        CHECK_DECISION(&log, clean, 0, clean);
        buf_free(&log);
    }
}

/* A torn record then zero fill (a crash inside preallocated space) reads
 * as damage; it is cut back all the same. */
static void test_a_torn_record_then_zero_fill_is_cut_back(void) {
    size_t cuts[] = {3, H + 2, 500, B - 1000}; /* into the torn record */
    size_t fills[] = {10, 1000, 2 * B};
    for (size_t c = 0; c < 4; c++)
        for (size_t f = 0; f < 3; f++) {
            buf log = {0};
            add(&log, 1000);
            size_t clean = log.len;
            add(&log, 100000); /* FIRST at `clean`, then MIDDLE... */
            log.len = clean + cuts[c];
            buf_bytes(&log, 0, fills[f]);
            CHECK_DECISION(&log, clean, 0, clean);
            buf_free(&log);
        }
}

/* Whole fragments (FIRST, MIDDLE) then zeros in place of the rest. */
static void test_whole_fragments_then_zero_fill_are_cut_back(void) {
    for (size_t whole = 1; whole <= 2; whole++) {
        buf log = {0};
        add(&log, 20);
        size_t clean = log.len;
        add(&log, 5 * B);
        log.len = whole * B;
        buf_bytes(&log, 0, 1000);
        CHECK_DECISION(&log, clean, 0, clean);
        buf_free(&log);
    }
}

/* A record whose payload ends in zeros is complete: never cut into it. */
static void test_a_payload_ending_in_zeros_is_kept(void) {
    buf log = {0};
    add(&log, 30);
    uint8_t data[64] = {1, 2, 3}; /* then 61 zero bytes */
    uint64_t at;
    ref_encode(log.len, data, sizeof data, &log, &at);
    size_t clean = log.len;
    CHECK_DECISION(&log, clean, 0, clean);
    buf_bytes(&log, 0, 300);
    CHECK_DECISION(&log, clean, 0, clean);
    buf_free(&log);
}

/* Damage before the last complete record is none of the append's business;
 * damage after it stays, and new records start at the next block. */
static void test_damage_stays_and_new_records_start_a_block(void) {
    buf log = {0};
    add(&log, 100);
    add(&log, 3 * B); /* a MIDDLE-only block at B */
    log.p[B + 100] ^= 0x40;
    add(&log, 10);
    size_t clean = log.len;
    CHECK_DECISION(&log, clean, 0, clean); /* damage in the middle */

    put_phys(&log, LLOG_FULL, "damaged", 7);
    log.p[log.len - 1] ^= 1; /* a bad checksum after the last record */
    size_t end = log.len;
    CHECK_DECISION(&log, end, 1, clean);

    buf_zero_to(&log, (log.len / B + 1) * B);
    uint64_t torn = add(&log, 2 * B); /* then a torn record at a block */
    log.len -= 100;
    CHECK_EQ(torn % B, 0);
    CHECK_DECISION(&log, torn, 1, clean);
    buf_free(&log);
}

/* The decision and where it found damage: a valid record at intact_at after
 * the record at damaged_at that looked torn. */
#define CHECK_DAMAGE(log, cut_, clean_, damaged_, intact_)                    \
    do {                                                                      \
        llog_resume_result r_ = decide(log);                                  \
        CHECK(r_.refusal == NULL);                                            \
        CHECK_EQ(r_.cut, cut_);                                               \
        CHECK_EQ(r_.fresh_block, 1);                                          \
        CHECK_EQ(r_.clean_end, clean_);                                       \
        CHECK_EQ(r_.damaged_at, damaged_);                                    \
        CHECK_EQ(r_.intact_at, intact_);                                      \
    } while (0)

/* A flipped length bit makes a record reach past the end of the file, so
 * the reader takes it for a torn tail; the intact records after it show it
 * is damage. Nothing is cut: new records go after the last byte, at the
 * next block. */
static void test_a_torn_looking_record_before_intact_ones_is_damage(void) {
    buf log = {0};
    add(&log, 1000);
    size_t clean = log.len;
    uint64_t spanning = add(&log, B); /* FIRST, then LAST at B */
    CHECK_EQ(spanning, clean);
    size_t after = log.len;
    for (int i = 0; i < 4; i++)
        add(&log, 100);
    log.p[B + 5] ^= 0x08; /* the LAST's length, + 2048: past the end */
    CHECK_DAMAGE(&log, log.len, clean, clean, after);
    /* Zero fill after the last record is still cut. */
    size_t end = log.len;
    buf_bytes(&log, 0, 3000);
    CHECK_DAMAGE(&log, end, clean, clean, after);
    log.len = end;
    log.p[B + 5] ^= 0x08;
    CHECK_DECISION(&log, end, 0, end); /* undamaged, nothing to do */
    buf_free(&log);

    /* In one block: the second record of a log. */
    buf one = {0};
    add(&one, 10);
    size_t first_end = one.len;
    add(&one, 10);
    size_t third = one.len;
    for (int i = 0; i < 9; i++)
        add(&one, 10);
    one.p[first_end + 5] ^= 0x01; /* 10 + 256 reaches past the end */
    CHECK_DAMAGE(&one, one.len, first_end, first_end, third);
    buf_free(&one);
}

/* A payload cut short may hold what looks like a record only by a checksum
 * match; a torn record whose payload ends in zeros is still cut. */
static void test_a_real_torn_tail_is_still_cut(void) {
    buf log = {0};
    add(&log, 200);
    size_t clean = log.len;
    add(&log, 5000);
    log.len -= 1000;
    CHECK_DECISION(&log, clean, 0, clean);
    buf_free(&log);
}

/* With no complete record at all, the fragments of a torn first record
 * go; a file of zeros (preallocated, never written) is emptied. */
static void test_a_log_with_no_complete_record_is_cut_to_nothing(void) {
    buf log = {0};
    add(&log, 4 * B);
    log.len -= 10;
    CHECK_DECISION(&log, 0, 0, 0);
    log.len = B; /* the FIRST alone */
    CHECK_DECISION(&log, 0, 0, 0);
    buf_free(&log);
    buf zeros = {0};
    buf_bytes(&zeros, 0, 3 * B + 5);
    CHECK_DECISION(&zeros, 0, 0, 0);
    buf_free(&zeros);
}

static const char NO_RECORD[] = "no valid record in a file that is not empty";

/* A file holding no valid physical record is no log: a text file, a torn
 * first record (nothing in it can be told from text), a damaged one. */
static void test_a_file_with_no_valid_record_is_refused(void) {
    const char *texts[] = {"hello world\n", "# notes\n\nsome text here\n"};
    for (size_t i = 0; i < 2; i++) { /* (whatever the reason given) */
        buf text = {0};
        buf_put(&text, texts[i], strlen(texts[i]));
        CHECK(decide(&text).refusal != NULL);
        buf_free(&text); /* and a text of two blocks and more: */
    }
    buf text = {0};
    for (int i = 0; i < 2000; i++)
        buf_put(&text, "a line of a README file\n", 24);
    CHECK(decide(&text).refusal != NULL);
    buf_free(&text);
    buf log = {0};
    add(&log, 300);
    log.len = 100; /* a torn first record */
    CHECK_REFUSED(&log, 0, NO_RECORD);
    log.len = 3;
    CHECK_REFUSED(&log, 0, NO_RECORD);
    log.len = 307;
    log.p[200] ^= 1; /* a damaged one */
    CHECK_REFUSED(&log, 0, NO_RECORD);
    buf_free(&log);
}

/* After the last complete record, only what a crashed writer leaves may be
 * cut: anything else is refused where it stands. */
static void test_a_tail_no_writer_leaves_is_refused(void) {
    buf log = {0};
    add(&log, 100);
    size_t clean = log.len;
    buf_put(&log, "some text\n", 10); /* text appended to a log */
    CHECK_REFUSED(&log, clean, "a record type no writer writes");
    log.len = clean;
    buf_bytes(&log, 0, 300);
    buf_bytes(&log, 0xAB, 4); /* bytes after zero fill */
    CHECK_REFUSED(&log, clean, "zero fill followed by more data");
    log.len = clean;
    put_header(&log, 0x12345678, B, LLOG_FULL); /* cannot fit its block */
    CHECK_REFUSED(&log, clean, "a record length that cannot fit its block");
    log.len = clean;
    put_phys(&log, LLOG_LAST, "xyz", 3);
    log.len -= 1; /* a torn LAST with no FIRST before it */
    CHECK_REFUSED(&log, clean, "a fragment out of sequence");
    buf_free(&log);
}

/* A valid record that no crash leaves where the cut would begin (a FIRST
 * short of its block), or after a hole (a write lost before one that
 * persisted, after a power loss): it is kept, with all that follows, and
 * new records start at the next block. */
static void test_valid_records_where_a_cut_would_go_are_kept(void) {
    buf log = {0};
    add(&log, 100);
    size_t clean = log.len;
    put_phys(&log, LLOG_FIRST, "abc", 3); /* a FIRST short of its block */
    put_phys(&log, LLOG_MIDDLE, "def", 3);
    log.len -= 1;
    CHECK_DAMAGE(&log, log.len, clean, clean, clean);
    log.len = clean;
    buf_bytes(&log, 0, 300); /* a lost write, then one that persisted */
    size_t after_hole = log.len;
    add(&log, 50);
    add(&log, 60);
    CHECK_DAMAGE(&log, log.len, clean, clean, after_hole);
    buf_free(&log);
    buf hole = {0}; /* the same at the start of the file */
    buf_bytes(&hole, 0, 512);
    add(&hole, 50);
    CHECK_DAMAGE(&hole, hole.len, 0, 0, 512);
    buf_free(&hole);
}

/* The trailer a writer leaves at a block's end is zeros. */
static void test_a_non_zero_trailer_is_refused(void) {
    buf log = {0};
    add(&log, B - H - 3); /* ends 3 bytes before the block's end */
    size_t clean = log.len;
    buf_bytes(&log, 0xFF, 3);
    CHECK_REFUSED(&log, clean,
                  "non-zero bytes where a block's trailer belongs");
    buf_free(&log);
}

/* The last complete record lies many blocks back: the module reads further
 * back until it finds it, and never asks for a span twice in a row. */
static void test_the_last_complete_record_far_back_is_found(void) {
    buf log = {0};
    for (int i = 0; i < 50; i++)
        add(&log, 40);
    size_t clean = log.len;
    add(&log, 9 * B);
    log.len -= 5;
    CHECK_DECISION(&log, clean, 0, clean);
    buf_free(&log);
}

/* A file that shrinks while the module reads it is decided on as it is. */
static void test_a_file_that_shrinks_meanwhile_is_taken_as_it_ends(void) {
    buf log = {0};
    add(&log, 100);
    size_t first = log.len;
    add(&log, 100);
    size_t second = log.len;
    add(&log, B);
    llog_resume_result r;
    CHECK_EQ(decide_shrunk(&log, second + 20, &r), LLOG_OK);
    CHECK_EQ(r.cut, second);
    CHECK_EQ(r.clean_end, second);
    CHECK_EQ(decide_shrunk(&log, first + 3, &r), LLOG_OK);
    CHECK_EQ(r.cut, first);
    buf_free(&log);
}

void suite_append(void) {
    RUN(test_empty_and_clean_logs_stay_as_they_are);
    RUN(test_a_torn_record_is_cut_back);
    RUN(test_zero_fill_is_cut_back);
    RUN(test_a_torn_record_then_zero_fill_is_cut_back);
    RUN(test_whole_fragments_then_zero_fill_are_cut_back);
    RUN(test_a_payload_ending_in_zeros_is_kept);
    RUN(test_damage_stays_and_new_records_start_a_block);
    RUN(test_a_torn_looking_record_before_intact_ones_is_damage);
    RUN(test_a_real_torn_tail_is_still_cut);
    RUN(test_a_log_with_no_complete_record_is_cut_to_nothing);
    RUN(test_a_file_with_no_valid_record_is_refused);
    RUN(test_a_tail_no_writer_leaves_is_refused);
    RUN(test_valid_records_where_a_cut_would_go_are_kept);
    RUN(test_a_non_zero_trailer_is_refused);
    RUN(test_the_last_complete_record_far_back_is_found);
    RUN(test_a_file_that_shrinks_meanwhile_is_taken_as_it_ends);
}
