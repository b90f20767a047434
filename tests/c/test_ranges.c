/*
 * test_ranges.c - the core reader over part of a log (log_reader.h): empty
 * ranges, start/end ranges that together see exactly what a whole read
 * sees (the look-back at a range's first block), and a log read while it
 * grows, as when following a log being written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect_logs.h"
#include "harness.h"
#include "log_writer.h"
#include "reading.h"

static void test_reader_empty_range_is_done_at_once(void) {
    static const uint64_t ranges[][2] = {
        {0, 0}, {5, 5}, {B + 3, B + 3}, {100, 7}};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "abc", 3);
    for (size_t i = 0; i < 4; i++) {
        tevs got = {0};
        read_opts o = {
            .start = ranges[i][0], .end = ranges[i][1], .verify = 1};
        read_info info = read_log(log.p, log.len, o, &got);
        CHECK_EQ(info.last, LLOG_EV_DONE);
        CHECK_EQ(got.n, 1);
        CHECK_EQ(info.blocks_fed, 0);
        tevs_free(&got);
    }
    buf_free(&log);
}

/* Cut points: every `step` bytes, block boundaries +-1, 0 and len (a
 * reduced run takes one of the three at each boundary, in turn). */
static size_t make_cuts(size_t len, size_t step, uint64_t **out) {
    size_t cap = len / step + 3 * (len / B + 2) + 4, n = 0;
    uint64_t *c = xmalloc(cap * sizeof *c);
    for (size_t at = 0; at < len; at += step)
        c[n++] = at;
    for (size_t b = B; b <= len + 1; b += B) {
        if (harness_keep(b / B, 3))
            c[n++] = b - 1;
        if (b <= len && harness_keep(b / B + 2, 3))
            c[n++] = b;
        if (b + 1 <= len && harness_keep(b / B + 1, 3))
            c[n++] = b + 1;
    }
    c[n++] = len;
    /* sort and dedupe (insertion sort: the list is nearly sorted) */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && c[j - 1] > c[j]; j--) {
            uint64_t t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i] <= len && (m == 0 || c[m - 1] != c[i]))
            c[m++] = c[i];
    *out = c;
    return m;
}

static void test_reader_ranges_return_every_record_once(void) {
    /* (A reduced run: the first log, in fewer ranges.) */
    for (uint64_t seed = 1; seed <= harness_pick(2, 1); seed++) {
        wlog L = {0};
        make_mixed_log(&L, seed * 1000003, 120, 150000);
        tevs want = {0}, got = {0};
        want_all_records(&L, &want);
        want_eof(&want);
        read_log(L.log.p, L.log.len, WHOLE, &got);
        check_events(&got, &want, "whole mixed log");
        tevs_free(&got);
        tevs_free(&want);

        uint64_t *cuts;
        size_t n = make_cuts(L.log.len, harness_pick(997, 9973), &cuts);
        char what[80];
        snprintf(what, sizeof what, "mixed log %llu (%zu bytes) in %zu ranges",
                 (unsigned long long)seed, L.log.len, n);
        check_ranges_match_whole(L.log.p, L.log.len, cuts, n, 0, 1, what);
        free(cuts);

        /* Every record boundary and the bytes next to it (a reduced run:
         * one of the three at each, in turn). */
        size_t cap = 6 * L.nph + 2, m = 0;
        cuts = xmalloc(cap * sizeof *cuts);
        cuts[m++] = 0;
        for (size_t i = 0; i < L.nph; i++)
            for (uint64_t d = 0; d < 3; d++)
                if (harness_keep(i + d, 3) &&
                    L.ph[i].header + d > cuts[m - 1] &&
                    L.ph[i].header + d < L.log.len)
                    cuts[m++] = L.ph[i].header + d;
        cuts[m++] = L.log.len;
        check_ranges_match_whole(L.log.p, L.log.len, cuts, m, 0, 1,
                                 "cut at every physical record");
        free(cuts);
        wlog_free(&L);
    }
}

static void test_reader_sequential_gives_same_results(void) {
    wlog L = {0};
    make_mixed_log(&L, 4242, 60, 120000);
    tevs a = {0}, b = {0};
    read_opts seq = WHOLE;
    seq.sequential = 1;
    read_log(L.log.p, L.log.len, WHOLE, &a);
    read_log(L.log.p, L.log.len, seq, &b);
    check_events(&b, &a, "sequential whole read");
    tevs_free(&a);
    tevs_free(&b);
    uint64_t *cuts;
    size_t n = make_cuts(L.log.len, harness_pick(4999, 20 * 4999), &cuts);
    for (size_t i = 0; i < n; i++) {
        read_opts o = {.start = cuts[i],
                       .end = i + 1 < n ? cuts[i + 1] : LLOG_NO_END,
                       .verify = 1};
        read_log(L.log.p, L.log.len, o, &a);
        o.sequential = 1;
        read_log(L.log.p, L.log.len, o, &b);
        if (!check_events(&b, &a, "sequential range"))
            note("range [%llu, %llu)", (unsigned long long)o.start,
                 (unsigned long long)o.end);
        tevs_free(&a);
        tevs_free(&b);
    }
    check_ranges_match_whole(L.log.p, L.log.len, cuts, n, 1, 1,
                             "sequential ranges");
    free(cuts);
    wlog_free(&L);
}

/* A mixed log with damage of every kind before offset `limit`. */
static void damage(const wlog *L, buf *log, uint64_t limit) {
    for (size_t i = 1; i < L->nph && L->ph[i].header + B < limit; i++) {
        const phys *p = &L->ph[i];
        uint8_t *h = log->p + p->header;
        switch (i % 17) {
        case 1: /* a payload byte: checksum mismatch */
            if (p->len > 0)
                h[H + p->len / 2] ^= 0x10;
            break;
        case 5: /* a length beyond the block */
            h[4] = 0xff;
            h[5] = 0xff;
            break;
        case 9: /* zero fill from this header to the block's end */
            memset(h, 0, B - (size_t)(p->header % B));
            break;
        case 13: /* a FIRST lost: its fragments lose their start */
            if (p->type == LLOG_FIRST)
                h[0] ^= 0x01;
            break;
        default:
            break;
        }
    }
}

static void test_reader_ranges_report_every_corruption_once(void) {
    /* (A reduced run: shorter logs, in fewer ranges.) */
    for (uint64_t seed = 11; seed <= 13; seed++) {
        wlog L = {0};
        make_mixed_log(&L, seed, harness_pick(150, 50), 120000);
        /* End the log inside a payload, away from a block start. */
        size_t cut = L.log.len - 1;
        for (size_t i = L.nph; i-- > 0;)
            if (L.ph[i].len > 100 && L.ph[i].header % B < B - 200) {
                cut = (size_t)L.ph[i].header + H + 50;
                break;
            }
        buf log = {0};
        buf_put(&log, L.log.p, cut);
        damage(&L, &log, cut - cut % B);
        tevs whole = {0};
        read_log(log.p, log.len, WHOLE, &whole);
        size_t reports = 0;
        for (size_t i = 0; i < whole.n; i++) {
            const tev *e = &whole.v[i];
            if (e->kind == LLOG_EV_CORRUPTION)
                reports++;
            if (e->kind != LLOG_EV_RECORD)
                continue;
            /* Every record returned is one that was written. */
            int found = 0;
            for (size_t k = 0; k < L.nrc && !found; k++)
                found = L.rc[k].offset == e->offset && L.rc[k].len == e->len &&
                        (e->len == 0 ||
                         memcmp(L.rc[k].data, e->data, e->len) == 0);
            if (!CHECK(found))
                note("record @%llu, %zu bytes", (unsigned long long)e->offset,
                     e->len);
        }
        CHECK(reports >= 5);
        CHECK(whole.n > 0 && whole.v[whole.n - 1].torn);
        tevs_free(&whole);

        uint64_t *cuts;
        size_t n = make_cuts(log.len, harness_pick(997, 9973), &cuts);
        char what[80];
        snprintf(what, sizeof what, "damaged log %llu in %zu ranges",
                 (unsigned long long)seed, n);
        check_ranges_match_whole(log.p, log.len, cuts, n, 0, 0, what);
        free(cuts);
        n = make_cuts(log.len, harness_pick(9973, 49999), &cuts);
        check_ranges_match_whole(log.p, log.len, cuts, n, 1, 0,
                                 "damaged log, sequential ranges");
        free(cuts);
        buf_free(&log);
        wlog_free(&L);
    }
}

/*
 * An unknown type at the start of a block, inside a record opened in the
 * block before: the whole read reports it at the open record's header
 * (log_reader.h), so a range starting at that block must not report it.
 */
static void test_reader_range_at_block_with_unknown_type_in_open_record(void) {
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    buf log = {0};
    put_phys(&log, LLOG_FIRST, big, B - H); /* @0, fills block 0 */
    put_phys(&log, 9, "hello", 5);          /* @B */
    put_phys(&log, LLOG_FULL, "x", 1);      /* @B + 12 */
    tevs want = {0}, got = {0};
    want_bad(&want, 0, B - H + 5, "unknown record type 9");
    want_rec(&want, B + 12, "x", 1);
    want_eof(&want);
    read_log(log.p, log.len, WHOLE, &got);
    check_events(&got, &want, "whole log");
    tevs_free(&got);
    tevs_free(&want);

    /* Whatever a whole read reports at offset 0 belongs to [0, B). */
    want_rec(&want, B + 12, "x", 1);
    want_eof(&want);
    read_opts o = {.start = B, .end = LLOG_NO_END, .verify = 1};
    read_log(log.p, log.len, o, &got);
    check_events(&got, &want, "range [32768, end)");
    tevs_free(&got);
    tevs_free(&want);

    uint64_t cuts[2] = {0, B};
    check_ranges_match_whole(log.p, log.len, cuts, 2, 0, 0,
                             "ranges [0, 32768) and [32768, end)");
    buf_free(&log);
    free(big);
}

/*
 * A range that ends inside block 0 reads on into block 1 to finish a record
 * begun in range; there short FULL records drop it, and those past the
 * first are checked ahead (log_reader.c): none of them is the range's.
 */
static void
test_reader_range_read_on_past_its_end_returns_nothing_there(void) {
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    buf log = {0};
    put_phys(&log, LLOG_FULL, "a", 1);              /* @0 */
    put_phys(&log, LLOG_FIRST, big, B - 2 * H - 1); /* @8, fills block 0 */
    put_phys(&log, LLOG_FULL, "x", 1);              /* @B */
    put_phys(&log, LLOG_FULL, "yz", 2);             /* @B + 8 */
    put_phys(&log, LLOG_FULL, "w", 1);              /* @B + 17 */
    static const uint64_t ends[] = {9, 100, B - 1};
    for (int sequential = 0; sequential <= 1; sequential++)
        for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
            tevs want = {0}, got = {0};
            want_rec(&want, 0, "a", 1);
            want_bad(&want, 8, B - 2 * H - 1, PARTIAL);
            want_done(&want);
            read_opts o = {.end = ends[i], .verify = 1};
            o.sequential = sequential;
            read_log(log.p, log.len, o, &got);
            if (!check_events(&got, &want, "range [0, end) in block 0"))
                note("end %llu%s", (unsigned long long)ends[i],
                     sequential ? ", sequential" : "");
            tevs_free(&got);
            tevs_free(&want);
            uint64_t cuts[2] = {0, ends[i]};
            check_ranges_match_whole(log.p, log.len, cuts, 2, sequential, 1,
                                     "ranges [0, end) and [end, the end)");
        }
    buf_free(&log);
    free(big);
}

/*
 * A record torn a few bytes into a block, opened in the block before: the
 * torn tail begins at the record's first header, so a range starting at the
 * torn block must end cleanly.
 */
static void test_reader_range_at_block_with_torn_header_of_open_record(void) {
    uint8_t *big = xmalloc(40000);
    rnd_fill(big, 40000);
    wlog L = {0};
    wlog_add(&L, big, 40000); /* FIRST @0, LAST @B */
    L.log.len = B + 3;        /* the writer died in the LAST header */
    tevs want = {0}, got = {0};
    want_torn(&want, 0, B + 3, TORN_HEADER);
    read_log(L.log.p, L.log.len, WHOLE, &got);
    check_events(&got, &want, "whole log");
    tevs_free(&got);
    tevs_free(&want);

    want_eof(&want);
    read_opts o = {.start = B, .end = LLOG_NO_END, .verify = 1};
    read_log(L.log.p, L.log.len, o, &got);
    check_events(&got, &want, "range [32768, end)");
    tevs_free(&got);
    tevs_free(&want);

    uint64_t cuts[2] = {0, B};
    check_ranges_match_whole(L.log.p, L.log.len, cuts, 2, 0, 0,
                             "ranges [0, 32768) and [32768, end)");
    wlog_free(&L);
    free(big);
}

/* ---- a growing log ------------------------------------------------------ */

typedef struct tail_want {
    size_t nrec;        /* records complete within the prefix */
    uint64_t clean_end; /* end of the last of them */
    int torn;
    uint64_t offset, size;
    const char *reason;
} tail_want;

/* What reading the first p bytes of L must end with (docs/format.md,
 * "Reading": the end of the file is not corruption). */
static tail_want expect_tail(const wlog *L, uint64_t p) {
    tail_want t = {0, 0, 0, 0, 0, NULL};
    size_t i = 0;
    while (i < L->nrc && L->rc[i].end <= p)
        i++;
    t.nrec = i;
    t.clean_end = i ? L->rc[i - 1].end : 0;
    if (i == L->nrc)
        return t;
    uint64_t h = L->rc[i].offset;
    if (p <= h) { /* at the clean end or in a trailer after it */
        if (p == t.clean_end || (p == h && p % B == 0))
            return t;
        t.torn = 1;
        t.offset = t.clean_end;
        t.size = p - t.clean_end;
        t.reason = TORN_HEADER;
        return t;
    }
    t.torn = 1;
    t.offset = h;
    t.size = p - h;
    for (size_t j = 0; j < L->nph; j++) {
        const phys *f = &L->ph[j];
        if (f->rec != i || f->header > p)
            continue;
        if (f->header == p && f->header != h)
            t.reason = TORN_OPEN; /* the block before ended a fragment */
        else if (p < f->header + H)
            t.reason = TORN_HEADER;
        else if (p < f->header + H + f->len)
            t.reason = TORN_PAYLOAD;
    }
    return t;
}

static void check_growth(const wlog *L, size_t p, int sequential) {
    uint8_t *prefix = xmalloc(p); /* exactly sized: no peeking past p */
    if (p > 0)
        memcpy(prefix, L->log.p, p);
    llog_reader_options opt = {
        .end = LLOG_NO_END, .verify_checksums = 1, .sequential = sequential};
    llog_reader *r = llog_reader_new(&opt);
    if (!CHECK(r != NULL)) {
        free(prefix);
        return;
    }
    feeder f = {.log = prefix, .len = p, .sequential = sequential};
    tevs got = {0}, want = {0};
    tail_want t = expect_tail(L, p);
    for (size_t i = 0; i < t.nrec; i++)
        want_rec(&want, L->rc[i].offset, L->rc[i].data, L->rc[i].len);
    if (t.torn)
        want_torn(&want, t.offset, t.size, t.reason);
    else
        want_eof(&want);
    int ok = CHECK_EQ(drive(r, &f, 0, &got), LLOG_EV_EOF);
    ok &= check_events(&got, &want, "prefix");
    ok &= CHECK_EQ(llog_reader_clean_end(r), t.clean_end);
    ok &= CHECK_EQ(llog_reader_position(r), t.torn ? t.offset : p);
    tevs_free(&got);
    tevs_free(&want);

    /* The log grows to its full length: the rest, nothing twice. */
    f.log = L->log.p;
    f.len = L->log.len;
    for (size_t i = t.nrec; i < L->nrc; i++)
        want_rec(&want, L->rc[i].offset, L->rc[i].data, L->rc[i].len);
    want_eof(&want);
    ok &= CHECK_EQ(drive(r, &f, 0, &got), LLOG_EV_EOF);
    ok &= check_events(&got, &want, "after growing");
    ok &= CHECK_EQ(llog_reader_clean_end(r), L->log.len);
    ok &= CHECK_EQ(llog_reader_position(r), L->log.len);
    if (!ok)
        note("prefix of %zu bytes of %zu%s", p, L->log.len,
             sequential ? ", sequential" : "");
    tevs_free(&got);
    tevs_free(&want);
    llog_reader_free(r);
    free(prefix);
}

static void test_reader_growing_log_no_duplicates(void) {
    wlog L = {0};
    make_mixed_log(&L, 31337, 40, 70000);
    size_t len = L.log.len;
    /* (A reduced run: fewer prefixes, some near each header and boundary.) */
    for (size_t p = 0; p <= len; p += harness_pick(997, 8 * 9973))
        check_growth(&L, p, p % 3 == 0);
    for (size_t i = 0; i < L.nph; i++) { /* around every header */
        static const int deltas[] = {-7, -6, -1, 0, 1, 3, 6, 7, 8, 50};
        for (size_t k = 0; k < sizeof deltas / sizeof deltas[0]; k++) {
            long long p = (long long)L.ph[i].header + deltas[k];
            if (p >= 0 && (size_t)p <= len && harness_keep(i + k, 20))
                check_growth(&L, (size_t)p, k % 2);
        }
    }
    for (size_t b = B; b <= len + 1; b += B)
        for (size_t p = b - 1; p <= b + 1 && p <= len; p++)
            if (harness_keep(b / B + (p + 1 - b), 3))
                check_growth(&L, p, 0);
    check_growth(&L, len, 0);
    check_growth(&L, len, 1);

    /* Growing in several steps, one reader throughout. */
    llog_reader_options opt = {.end = LLOG_NO_END, .verify_checksums = 1};
    llog_reader *r = llog_reader_new(&opt);
    feeder f = {.log = L.log.p};
    tevs got = {0}, records = {0}, want = {0};
    for (size_t p = 0;; p += 1 + rnd_below(9000)) {
        f.len = p < len ? p : len;
        tevs step = {0};
        CHECK_EQ(drive(r, &f, 0, &step), LLOG_EV_EOF);
        for (size_t i = 0; i < step.n; i++)
            tevs_add_copy(&got, &step.v[i]);
        tevs_free(&step);
        if (p >= len)
            break;
    }
    CHECK(got.n > 0 && !got.v[got.n - 1].torn); /* complete at last */
    for (size_t i = 0; i < got.n; i++) {
        CHECK(got.v[i].kind == LLOG_EV_RECORD || got.v[i].kind == LLOG_EV_EOF);
        if (got.v[i].kind == LLOG_EV_RECORD)
            tevs_add_copy(&records, &got.v[i]);
    }
    want_all_records(&L, &want);
    check_events(&records, &want, "growing in steps");
    tevs_free(&got);
    tevs_free(&records);
    tevs_free(&want);
    llog_reader_free(r);
    wlog_free(&L);
}

void suite_ranges(void) {
    RUN(test_reader_empty_range_is_done_at_once);
    RUN(test_reader_ranges_return_every_record_once);
    RUN(test_reader_sequential_gives_same_results);
    RUN(test_reader_ranges_report_every_corruption_once);
    RUN(test_reader_range_at_block_with_unknown_type_in_open_record);
    RUN(test_reader_range_at_block_with_torn_header_of_open_record);
    RUN(test_reader_range_read_on_past_its_end_returns_nothing_there);
    RUN(test_reader_growing_log_no_duplicates);
}
