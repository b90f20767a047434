/*
 * reading.c - driving the core reader in the C unit tests (see reading.h).
 */
#include "reading.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_writer.h"

const char CHECKSUM[] = "checksum mismatch";
const char BAD_LENGTH[] = "bad record length";
const char PARTIAL[] = "partial record without end";
const char MISSING[] = "missing start of fragmented record";
const char MIDDLE_ERR[] = "error in middle of record";
const char TORN_HEADER[] = "truncated header at end of file";
const char TORN_PAYLOAD[] = "truncated payload at end of file";
const char TORN_OPEN[] = "fragmented record open at end of file";

/* ---- events ------------------------------------------------------------- */

static void tevs_add(tevs *l, llog_event_kind kind, uint64_t offset,
                     uint64_t size, const void *data, size_t len,
                     const char *reason, int torn) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    tev *e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->offset = offset;
    e->size = size;
    e->len = len;
    e->torn = torn;
    e->data = xmalloc(len);
    if (len > 0)
        memcpy(e->data, data, len);
    if (reason != NULL)
        snprintf(e->reason, sizeof e->reason, "%s", reason);
}

void tevs_add_copy(tevs *l, const tev *e) {
    tevs_add(l, e->kind, e->offset, e->size, e->data, e->len, e->reason,
             e->torn);
}

void tevs_add_event(tevs *l, const llog_event *ev) {
    tevs_add(l, ev->kind, ev->offset, ev->size, ev->data, ev->len, ev->reason,
             ev->torn);
}

void tevs_free(tevs *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].data);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- expected events ---------------------------------------------------- */

void want_rec(tevs *l, uint64_t offset, const void *data, size_t len) {
    tevs_add(l, LLOG_EV_RECORD, offset, 0, data, len, NULL, 0);
}

void want_bad(tevs *l, uint64_t offset, uint64_t size, const char *reason) {
    tevs_add(l, LLOG_EV_CORRUPTION, offset, size, NULL, 0, reason, 0);
}

void want_eof(tevs *l) { tevs_add(l, LLOG_EV_EOF, 0, 0, NULL, 0, NULL, 0); }

void want_torn(tevs *l, uint64_t offset, uint64_t size, const char *reason) {
    tevs_add(l, LLOG_EV_EOF, offset, size, NULL, 0, reason, 1);
}

void want_meta(tevs *l, uint64_t offset, unsigned type, const void *data,
               size_t len) {
    tevs_add(l, LLOG_EV_META, offset, type, data, len, NULL, 0);
}

static const char *kind_name(llog_event_kind k) {
    switch (k) {
    case LLOG_EV_RECORD:
        return "RECORD";
    case LLOG_EV_CORRUPTION:
        return "CORRUPTION";
    case LLOG_EV_NEED_BLOCK:
        return "NEED_BLOCK";
    case LLOG_EV_EOF:
        return "EOF";
    case LLOG_EV_DONE:
        return "DONE";
    case LLOG_EV_ERROR:
        return "ERROR";
    case LLOG_EV_META:
        return "META";
    }
    return "?";
}

static const char *describe(const tev *e) {
    static char s[2][200];
    static int which;
    char *out = s[which ^= 1];
    switch (e->kind) {
    case LLOG_EV_RECORD:
        snprintf(out, 200, "RECORD @%llu, %zu bytes",
                 (unsigned long long)e->offset, e->len);
        break;
    case LLOG_EV_META:
        snprintf(out, 200, "META type %llu @%llu, %zu bytes",
                 (unsigned long long)e->size, (unsigned long long)e->offset,
                 e->len);
        break;
    case LLOG_EV_CORRUPTION:
        snprintf(out, 200, "CORRUPTION @%llu, %llu bytes, \"%s\"",
                 (unsigned long long)e->offset, (unsigned long long)e->size,
                 e->reason);
        break;
    case LLOG_EV_EOF:
        if (e->torn)
            snprintf(out, 200, "EOF torn @%llu, %llu bytes, \"%s\"",
                     (unsigned long long)e->offset,
                     (unsigned long long)e->size, e->reason);
        else
            snprintf(out, 200, "EOF");
        break;
    default:
        snprintf(out, 200, "%s (size %llu)", kind_name(e->kind),
                 (unsigned long long)e->size);
        break;
    }
    return out;
}

static int same_event(const tev *a, const tev *b) {
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case LLOG_EV_RECORD:
        return a->offset == b->offset && a->len == b->len &&
               (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
    case LLOG_EV_CORRUPTION:
        return a->offset == b->offset && a->size == b->size &&
               strcmp(a->reason, b->reason) == 0;
    case LLOG_EV_META:
        return a->offset == b->offset && a->size == b->size &&
               a->len == b->len &&
               (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
    case LLOG_EV_EOF:
        return a->torn == b->torn &&
               (!a->torn || (a->offset == b->offset && a->size == b->size &&
                             strcmp(a->reason, b->reason) == 0));
    default:
        return 1;
    }
}

static void print_events(const char *title, const tevs *l) {
    note("%s (%zu events):", title, l->n);
    for (size_t i = 0; i < l->n && i < 12; i++)
        note("  %s", describe(&l->v[i]));
    if (l->n > 12)
        note("  ...");
}

/* Checks that got and want hold the same events in the same order. */
int check_events_at(const tevs *got, const tevs *want, const char *what,
                    const char *file, int line) {
    size_t i = 0;
    while (i < got->n && i < want->n && same_event(&got->v[i], &want->v[i]))
        i++;
    if (i == got->n && i == want->n)
        return pass();
    failure(file, line, "%s: event %zu differs: got %s, want %s", what, i,
            i < got->n ? describe(&got->v[i]) : "nothing",
            i < want->n ? describe(&want->v[i]) : "nothing");
    print_events("got", got);
    print_events("want", want);
    return 0;
}

const uint8_t nothing[1];

/* The caller's assembly buffers of an in-place read: every one handed to
 * the reader lives until the read is over (a block fed in two pieces may
 * still be read from one the reader has moved on from). */
typedef struct assembly {
    uint8_t **all;
    size_t n;
    uint8_t *current;
    size_t calls;
} assembly;

static uint8_t *assembly_reserve(void *ctx, size_t len, size_t need,
                                 size_t *cap) {
    assembly *a = ctx;
    CHECK(need > len && (len == 0 || a->current != NULL));
    uint8_t *fresh = xmalloc(need + 100);
    memset(fresh, 0xA5, need + 100); /* not what any log holds there */
    if (len > 0)
        memcpy(fresh, a->current, len);
    a->all = xrealloc(a->all, (a->n + 1) * sizeof *a->all);
    a->all[a->n++] = fresh;
    a->current = fresh;
    a->calls++;
    *cap = need + 100;
    return fresh;
}

static void assembly_free(assembly *a) {
    for (size_t i = 0; i < a->n; i++)
        free(a->all[i]);
    free(a->all);
}

/* When the reader would go on with a record at the wanted block, feeds the
 * block split, its payload copied first to where the record goes on (what
 * the extension does with preadv); returns 1 if it did. */
static int feed_in_place(llog_reader *r, feeder *f, uint64_t want, size_t n) {
    size_t assembled;
    if (n <= H || !llog_reader_in_place(r, &assembled))
        return 0;
    uint8_t *at = llog_reader_append_point(r, B - H);
    if (!CHECK(at != NULL))
        return 0;
    memcpy(at, f->log + want + H, n - H);
    llog_reader_feed_split(r, f->log + want, at, n);
    f->in_place++;
    return 1;
}

/*
 * Runs r until EOF, DONE or ERROR, appending every event but NEED_BLOCK to
 * out; returns the last kind (LLOG_EV_ERROR also when the reader misbehaves).
 */
llog_event_kind drive(llog_reader *r, feeder *f, int in_place, tevs *out) {
    int fresh = 0; /* a block was just fed and nothing came out of it yet */
    uint64_t fresh_offset = 0;
    for (long guard = 0; guard < 50000000; guard++) {
        llog_event ev;
        llog_reader_next(r, &ev);
        if (ev.kind == LLOG_EV_NEED_BLOCK) {
            uint64_t want = llog_reader_wanted(r);
            if (!CHECK_EQ(want % B, 0))
                return LLOG_EV_ERROR;
            if (fresh && !CHECK(want != fresh_offset)) {
                note("asked again for block %llu right after it was fed",
                     (unsigned long long)want);
                return LLOG_EV_ERROR;
            }
            if (f->sequential && f->fed_any && !CHECK(want >= f->last_fed)) {
                note("sequential reader went back from block %llu to %llu",
                     (unsigned long long)f->last_fed,
                     (unsigned long long)want);
                return LLOG_EV_ERROR;
            }
            size_t n = 0;
            if (want < f->len)
                n = f->len - want < B ? (size_t)(f->len - want) : B;
            if (!in_place || !feed_in_place(r, f, want, n))
                llog_reader_feed(r, n ? f->log + want : nothing, n);
            f->last_fed = want;
            f->fed_any = 1;
            f->blocks_fed++;
            fresh = 1;
            fresh_offset = want;
            continue;
        }
        fresh = 0;
        const char *reason = ev.reason;
        if (ev.kind == LLOG_EV_CORRUPTION ||
            (ev.kind == LLOG_EV_EOF && ev.torn))
            CHECK(reason != NULL);
        tevs_add(out, ev.kind, ev.offset, ev.size, ev.data, ev.len, reason,
                 ev.torn);
        if (ev.kind == LLOG_EV_EOF || ev.kind == LLOG_EV_DONE ||
            ev.kind == LLOG_EV_ERROR)
            return ev.kind;
    }
    CHECK(!"the reader never reached EOF or DONE");
    return LLOG_EV_ERROR;
}

const read_opts WHOLE = {.end = LLOG_NO_END, .verify = 1};

read_info read_log(const uint8_t *log, size_t len, read_opts o, tevs *out) {
    assembly a = {0};
    llog_reader_options opt = {.start = o.start,
                               .end = o.end,
                               .verify_checksums = o.verify,
                               .sequential = o.sequential,
                               .reserve = o.in_place ? assembly_reserve : NULL,
                               .reserve_ctx = &a,
                               .dialect = o.dialect,
                               .recovery = o.recovery,
                               .has_log_number = o.has_log_number,
                               .log_number = o.log_number,
                               .decode = o.decode,
                               .decode_ctx = o.decode_ctx,
                               .detect = o.detect};
    llog_reader *r = llog_reader_new(&opt);
    read_info info = {LLOG_EV_ERROR, 0, 0, 0, 0};
    if (!CHECK(r != NULL))
        return info;
    feeder f = {.log = log, .len = len, .sequential = o.sequential};
    info.last = drive(r, &f, o.in_place, out);
    info.clean_end = llog_reader_clean_end(r);
    info.position = llog_reader_position(r);
    info.blocks_fed = f.blocks_fed;
    info.in_place = f.in_place;
    llog_reader_free(r);
    assembly_free(&a);
    return info;
}

/* Records, corruptions, the torn tail and metadata but the compression
 * record (handed to every range): what a caller acts on. */
static int significant(const tev *e) {
    return e->kind == LLOG_EV_RECORD || e->kind == LLOG_EV_CORRUPTION ||
           (e->kind == LLOG_EV_EOF && e->torn) ||
           (e->kind == LLOG_EV_META && e->size != LLOG_RDB_SET_COMPRESSION);
}

static int event_order(const void *pa, const void *pb) {
    const tev *a = pa, *b = pb;
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return strcmp(a->reason, b->reason);
}

/* The significant events of l, sorted by offset: ranges find events in
 * range order, a whole read in discovery order (a report about an open
 * record can follow a report about a later header). */
static void canonical(const tevs *l, tevs *out) {
    for (size_t i = 0; i < l->n; i++)
        if (significant(&l->v[i]))
            tevs_add_copy(out, &l->v[i]);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, event_order);
}

/*
 * Reads log in the ranges [cuts[i], cuts[i+1]) and a last one from the last
 * cut to LLOG_NO_END, appending every range's significant events to all.
 * Checks that each range reports only what begins inside it.
 */
static void read_in_ranges(const uint8_t *log, size_t len,
                           const uint64_t *cuts, size_t ncuts, read_opts base,
                           int expect_done, tevs *all) {
    int sequential = base.sequential;
    for (size_t i = 0; i < ncuts; i++) {
        read_opts o = base;
        o.start = cuts[i];
        o.end = i + 1 < ncuts ? cuts[i + 1] : LLOG_NO_END;
        tevs one = {0};
        read_info info = read_log(log, len, o, &one);
        int ok = CHECK(info.last == LLOG_EV_DONE || info.last == LLOG_EV_EOF);
        if (expect_done && o.end != LLOG_NO_END)
            ok &= CHECK_EQ(info.last, LLOG_EV_DONE);
        for (size_t k = 0; k < one.n; k++) {
            const tev *e = &one.v[k];
            if (!significant(e))
                continue;
            ok &= CHECK(e->offset >= o.start && e->offset < o.end);
            tevs_add_copy(all, e);
        }
        if (!ok) {
            note("range [%llu, %llu)%s", (unsigned long long)o.start,
                 (unsigned long long)o.end, sequential ? " sequential" : "");
            print_events("range events", &one);
        }
        tevs_free(&one);
    }
}

/* Reading in the given ranges sees exactly what a whole read sees. */
static void ranges_match_whole(const uint8_t *log, size_t len,
                               const uint64_t *cuts, size_t ncuts,
                               read_opts base, int expect_done,
                               const char *what) {
    tevs whole = {0}, parts = {0}, a = {0}, b = {0};
    read_opts all = base;
    all.start = 0;
    all.end = LLOG_NO_END;
    all.sequential = 0;
    read_log(log, len, all, &whole);
    read_in_ranges(log, len, cuts, ncuts, base, expect_done, &parts);
    canonical(&whole, &a);
    canonical(&parts, &b);
    check_events(&b, &a, what);
    tevs_free(&whole);
    tevs_free(&parts);
    tevs_free(&a);
    tevs_free(&b);
}

void check_ranges_match_whole(const uint8_t *log, size_t len,
                              const uint64_t *cuts, size_t ncuts,
                              int sequential, int expect_done,
                              const char *what) {
    read_opts base = WHOLE;
    base.sequential = sequential;
    ranges_match_whole(log, len, cuts, ncuts, base, expect_done, what);
}

void check_dialect_ranges_match_whole(const uint8_t *log, size_t len,
                                      const uint64_t *cuts, size_t ncuts,
                                      read_opts base, const char *what) {
    ranges_match_whole(log, len, cuts, ncuts, base, 0, what);
}

/*
 * The log reads as want: whole, sequentially, and split in two anywhere
 * (every byte for short logs; otherwise a sample and the block edges).
 */
void expect_log(const char *what, const buf *log, int verify,
                const tevs *want) {
    tevs got = {0};
    read_opts o = WHOLE;
    o.verify = verify;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(whole log of %zu bytes)", log->len);
    tevs_free(&got);
    o.sequential = 1;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(whole log, sequential)");
    tevs_free(&got);
    o.sequential = 0;
    o.in_place = 1;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(whole log, payloads read in place)");
    tevs_free(&got);
    o.in_place = 0;
    if (!verify)
        return;
    size_t step = log->len <= 600 ? 1 : harness_pick(97, 997);
    for (size_t cut = 1; cut < log->len; cut++) {
        size_t in = cut % B;
        if (cut % step != 0 && in > 8 && in < B - 8)
            continue;
        uint64_t cuts[2] = {0, cut};
        tevs parts = {0}, a = {0}, b = {0};
        read_in_ranges(log->p, log->len, cuts, 2, WHOLE, 0, &parts);
        canonical(want, &a);
        canonical(&parts, &b);
        if (!check_events(&b, &a, what)) {
            note("(ranges [0, %zu) and [%zu, end))", cut, cut);
            cut = log->len; /* one report per log is enough */
        }
        tevs_free(&parts);
        tevs_free(&a);
        tevs_free(&b);
    }
}

/* ---- logs made by the writer -------------------------------------------- */

void wlog_add(wlog *L, const uint8_t *data, size_t len) {
    llog_writer w;
    llog_writer_init(&w, L->log.len);
    L->rc = xrealloc(L->rc, (L->nrc + 1) * sizeof *L->rc);
    rec *r = &L->rc[L->nrc];
    r->data = xmalloc(len);
    if (len > 0)
        memcpy(r->data, data, len);
    r->len = len;
    size_t done = 0;
    int first = 1;
    do {
        llog_fragment f;
        llog_writer_fragment(&w, data + done, len - done, first, &f);
        if (first)
            r->offset = f.header_offset;
        L->ph = xrealloc(L->ph, (L->nph + 1) * sizeof *L->ph);
        phys *p = &L->ph[L->nph++];
        p->header = f.header_offset;
        p->len = f.payload_len;
        p->type = f.prefix[f.prefix_len - 1];
        p->rec = L->nrc;
        buf_put(&L->log, f.prefix, f.prefix_len);
        buf_put(&L->log, data + done, f.payload_len);
        done += f.payload_len;
        first = 0;
    } while (done < len);
    r->end = L->log.len;
    L->nrc++;
}

void wlog_free(wlog *L) {
    for (size_t i = 0; i < L->nrc; i++)
        free(L->rc[i].data);
    free(L->rc);
    free(L->ph);
    buf_free(&L->log);
    memset(L, 0, sizeof *L);
}

/* A log of records of mixed sizes, some spanning several blocks, some
 * ending in the last 7 bytes of a block. */
void make_mixed_log(wlog *L, uint64_t seed, size_t nrecords,
                    size_t max_large) {
    rng = seed;
    uint8_t *data = xmalloc(max_large);
    for (size_t i = 0; i < nrecords; i++) {
        size_t len;
        switch (rnd_below(10)) {
        case 0:
            len = rnd_below(3);
            break;
        case 1:
        case 2:
            len = rnd_below(200);
            break;
        case 3:
        case 4:
            len = rnd_below(5000);
            break;
        case 5:
            len = 1000 + rnd_below(30000);
            break;
        case 6: /* end in the last few bytes of the block, or exactly fill */
            len = B - L->log.len % B;
            len = len > H + 8 ? len - H - rnd_below(8) : rnd_below(20);
            break;
        case 7:
            len = 32750 + rnd_below(20);
            break;
        default:
            len = 33000 + rnd_below(max_large - 33000);
            break;
        }
        if (len > max_large)
            len = max_large;
        rnd_fill(data, len);
        wlog_add(L, data, len);
    }
    free(data);
}

/* The events of a clean read of the whole log L. */
void want_all_records(const wlog *L, tevs *want) {
    for (size_t i = 0; i < L->nrc; i++)
        want_rec(want, L->rc[i].offset, L->rc[i].data, L->rc[i].len);
}
