/*
 * log_resume.c - where an append resumes (the rule is in log_resume.h).
 *
 * Three steps, each fed by the caller:
 * 1. A scan of the log's end with a reader: from the last block, going
 *    further back (doubling the span) only while no complete record is
 *    found. It gives the end of the last complete record, the start of a
 *    torn tail, and whether damage follows that record.
 * 2. Only when damage follows: the last non-zero byte at or after that
 *    record, read backwards a block at a time.
 * 3. Only when zeros follow that byte: step 1 again, as if the log ended
 *    there.
 * Then the part to be cut is checked: step 2 over it, a walk over its
 * physical records up to its last non-zero byte (walk_one), and a search of
 * what follows the record the walk stopped at, at every offset, for a valid
 * physical record (search_got): a crashed writer leaves none after a torn
 * one, so finding one means the "torn" record is damage instead. Then the
 * records from there on are stepped over (resync_got) and what follows them
 * is checked in the same way.
 */
#include "log_resume.h"

#include <assert.h>
#include <stdlib.h>

#include "log_reader.h"
#include "log_regions.h"

enum tail_phase {
    PHASE_SCAN,
    PHASE_LAST_WRITTEN,
    PHASE_WALK,
    PHASE_SEARCH,
    PHASE_RESYNC,
    PHASE_DONE,
    PHASE_FAILED
};

/* What a scan found after the last complete record. */
typedef struct scan_result {
    uint64_t clean_end; /* end of the last complete record */
    uint64_t torn_at;   /* start of the torn tail, or the end of the data */
    int damaged;        /* damage other than a torn tail after clean_end */
} scan_result;

struct llog_resume {
    uint64_t size;
    enum tail_phase phase;
    llog_status status;
    uint64_t want_at; /* the span asked for, while one is */
    size_t want_len;
    /* PHASE_SCAN: a reader over [start, end), the log taken to end at end */
    llog_reader *reader;
    uint64_t start, end;
    uint64_t last_bad; /* the last report's offset, or LLOG_NO_END */
    uint64_t torn_at;
    int rescan; /* step 3 */
    scan_result first;
    /* PHASE_LAST_WRITTEN: bytes in [above, size) are zero or absent; the
     * search stops at floor. Once `checking`, it is the check's. */
    uint64_t above, floor;
    int checking;
    /* PHASE_WALK: the part to be cut, [walk_at, written) still to see */
    uint64_t walk_at, written;
    int walk_open;       /* valid FIRST (and MIDDLE) fragments seen */
    int walk_valid;      /* a physical record with a matching checksum seen */
    uint64_t stopped_at; /* where the walk met the last thing written */
    int stopped_at_trailer; /* ... and that was Pebble's end-of-log trailer */
    /* PHASE_SEARCH: [search_at, written) still to search for a record;
     * refusing: the refusal to make if none is found */
    uint64_t search_at, refusing_at;
    int refusing;
    const char *refusing_why;
    /* PHASE_RESYNC: the pass over the records after damage is at skip_at,
     * searching for the next record or stepping over them; open_at is
     * where the record the last of them left open began (or LLOG_NO_END),
     * last_stop where the last run of records ended */
    uint64_t skip_at, open_at, last_stop;
    int searching;
    uint64_t resync_at; /* where the last pass began */
    /* Other dialects */
    llog_dialect dialect;
    int has_log_number;
    uint64_t log_number;
    llog_resume_result result;
    uint8_t buf[LLOG_BLOCK_SIZE];
};

/* Asks for the bytes from `at` to the end of its block, or to `limit` if
 * that comes first: returns 1 (for the *_step functions). */
static int want_rest_of_block(llog_resume *t, uint64_t at, uint64_t limit) {
    uint64_t block_end = at - at % LLOG_BLOCK_SIZE + LLOG_BLOCK_SIZE;
    uint64_t end = block_end < limit ? block_end : limit;
    t->want_at = at;
    t->want_len = (size_t)(end - at);
    return 1;
}

static void fail(llog_resume *t, llog_status status) {
    llog_reader_free(t->reader);
    t->reader = NULL;
    t->status = status;
    t->phase = PHASE_FAILED;
}

/* Looks for the last non-zero byte in [floor, size), from the end. */
static void find_last_written(llog_resume *t, uint64_t floor, int checking) {
    t->above = t->size;
    t->floor = floor;
    t->checking = checking;
    t->phase = PHASE_LAST_WRITTEN;
}

/* The cut is decided; check what it would remove before saying so. */
static void finish(llog_resume *t, uint64_t cut, int fresh, uint64_t clean) {
    t->result = (llog_resume_result){cut, fresh, clean, 0, NULL, 0, 0, 0};
    find_last_written(t, cut, 1);
}

static const char no_record[] = "no valid record in a file that is not empty";

/* The part to be cut is not what a crashed writer leaves: refuse. With no
 * valid record seen at all, the file is no log, whatever else is wrong. */
static void refuse_for_good(llog_resume *t, uint64_t at, const char *why) {
    int no_log = t->result.clean_end == 0 && !t->walk_valid;
    t->result.refused_at = no_log ? 0 : at;
    t->result.refusal = no_log ? no_record : why;
    t->result.no_log = no_log || why == no_record;
    t->phase = PHASE_DONE;
}

static void search_from(llog_resume *t, uint64_t at);
static void damage_found(llog_resume *t, uint64_t intact_at);

/* What would be cut is not what a crashed writer leaves: unless a valid
 * record of the log follows (then it is damage, and the log goes on: a
 * write lost before one that persisted leaves such a hole), refuse. */
static void refuse(llog_resume *t, uint64_t at, const char *why) {
    t->refusing = 1;
    t->refusing_at = at;
    t->refusing_why = why;
    search_from(t, at + 1);
}

/* Starts a scan of the log as if it ended at `end`, from `start` (a block
 * boundary) on. */
static void scan_from(llog_resume *t, uint64_t start, uint64_t end) {
    /* Other dialects: an older log's record ends the log, as in RocksDB's
     * point-in-time recovery; damage is reported all the same. */
    llog_reader_options opt = {.start = start,
                               .end = LLOG_NO_END,
                               .verify_checksums = 1,
                               .dialect = t->dialect,
                               .recovery = LLOG_RECOVER_POINT_IN_TIME,
                               .has_log_number = t->has_log_number,
                               .log_number = t->log_number};
    llog_reader_free(t->reader);
    t->reader = llog_reader_new(&opt);
    if (t->reader == NULL) {
        fail(t, LLOG_ERR_NOMEM);
        return;
    }
    t->start = start;
    t->end = end;
    t->last_bad = LLOG_NO_END;
    t->torn_at = end;
    t->phase = PHASE_SCAN;
}

/* Scans the log as if it ended at `end`, from its last block. */
static void scan_end(llog_resume *t, uint64_t end) {
    uint64_t last = end > 0 ? end - 1 : 0;
    scan_from(t, last - last % LLOG_BLOCK_SIZE, end);
}

static void decide(llog_resume *t, scan_result scan);

/* The reader reached the end of the data: was it far enough back? */
static void scan_finished(llog_resume *t) {
    uint64_t clean_end = llog_reader_clean_end(t->reader);
    if (!t->has_log_number) /* learnt from the first recyclable record */
        t->has_log_number = llog_reader_log_number(t->reader, &t->log_number);
    if (clean_end < t->start && t->start > 0) {
        /* No complete record from start on: double the span read (at
         * least a block: the file may have shrunk to end before start). */
        uint64_t back =
            t->end > t->start ? t->end - t->start : LLOG_BLOCK_SIZE;
        uint64_t start = t->start > back ? t->start - back : 0;
        scan_from(t, start - start % LLOG_BLOCK_SIZE, t->end);
        return;
    }
    /* Every report at or after clean_end was seen: it is >= start. Reports
     * come in file order, so the last one says whether any is. */
    scan_result scan = {clean_end, t->torn_at,
                        t->last_bad != LLOG_NO_END &&
                            t->last_bad >= clean_end};
    llog_reader_free(t->reader);
    t->reader = NULL;
    decide(t, scan);
}

/* Runs the reader until it needs bytes (1) or the scan is over (0). */
static int scan_step(llog_resume *t) {
    llog_event ev;
    for (;;) {
        llog_reader_next(t->reader, &ev);
        switch (ev.kind) {
        case LLOG_EV_NEED_BLOCK:
            t->want_at = llog_reader_wanted(t->reader);
            t->want_len = t->want_at >= t->end ? 0
                          : t->end - t->want_at < LLOG_BLOCK_SIZE
                              ? (size_t)(t->end - t->want_at)
                              : LLOG_BLOCK_SIZE;
            if (t->want_len > 0)
                return 1;
            llog_reader_feed(t->reader, t->buf, 0); /* past the end */
            break;
        case LLOG_EV_CORRUPTION:
            t->last_bad = ev.offset;
            break;
        case LLOG_EV_RECORD:
        case LLOG_EV_META:
            break;
        case LLOG_EV_EOF:
        case LLOG_EV_DONE:
            /* Where a torn tail begins, or where another log's record (or
             * Pebble's trailer) ended this one. */
            if ((ev.kind == LLOG_EV_EOF && ev.torn) ||
                llog_reader_position(t->reader) < t->torn_at)
                t->torn_at = llog_reader_position(t->reader);
            scan_finished(t);
            return 0;
        case LLOG_EV_ERROR:
            fail(t, (llog_status)ev.size);
            return 0;
        }
    }
}

/* Steps 2 and 3, after a scan. */
static void decide(llog_resume *t, scan_result scan) {
    if (t->rescan) { /* step 3: cut there if only a torn tail is left */
        if (scan.damaged)
            finish(t, t->first.torn_at, 1, t->first.clean_end);
        else
            finish(t, scan.clean_end, 0, scan.clean_end);
    } else if (!scan.damaged) {
        finish(t, scan.clean_end, 0, scan.clean_end);
    } else {
        t->first = scan;
        find_last_written(t, scan.clean_end, 0);
    }
}

static void walk_from(llog_resume *t, uint64_t written);

/* Step 2 found the last non-zero byte just before `written`. */
static void written_up_to(llog_resume *t, uint64_t written) {
    if (t->checking) {
        walk_from(t, written);
    } else if (written < t->size) {
        t->rescan = 1;
        scan_end(t, written);
    } else {
        finish(t, t->first.torn_at, 1, t->first.clean_end);
    }
}

/* Asks for the block-sized span below `above`, or ends step 2. */
static int last_written_step(llog_resume *t) {
    uint64_t floor = t->floor;
    if (t->above <= floor) {
        written_up_to(t, floor);
        return 0;
    }
    t->want_len = t->above - floor < LLOG_BLOCK_SIZE
                      ? (size_t)(t->above - floor)
                      : LLOG_BLOCK_SIZE;
    t->want_at = t->above - t->want_len;
    return 1;
}

static void last_written_got(llog_resume *t, size_t got) {
    size_t i = got;
    while (i > 0 && t->buf[i - 1] == 0)
        i--;
    if (i > 0)
        written_up_to(t, t->want_at + i);
    else
        t->above = t->want_at;
}

/* ---- the check of what is cut ---------------------------------------- */

/* The writer pads a block's end with zeros; anything else there is not a
 * crash's leftover. The walker says where padding may be; this says whether
 * it holds only what the writer pads with. */
static int all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* The region walker's first region of b[0..have), the rest of a block of
 * `room` bytes (have <= room): a shorter `have` ends the data there. */
static void region_at(const llog_resume *t, const uint8_t *b, size_t have,
                      size_t room, llog_region_info *r) {
    llog_regions w;
    llog_regions_init(&w, t->dialect, 1, t->has_log_number, t->log_number);
    llog_regions_feed(&w, b, have, have < room);
    if (!llog_regions_next(&w, r)) /* no bytes: nothing is there */
        *r = (llog_region_info){.kind = LLOG_KIND_TORN, .checksum = -1};
}

/* A header of a fragment a writer of one record can have written next
 * (role: the type's, llog_type_role). */
static int in_sequence(const llog_resume *t, unsigned role) {
    if (t->walk_open)
        return role == LLOG_ROLE_MIDDLE || role == LLOG_ROLE_LAST;
    return role == LLOG_ROLE_FULL || role == LLOG_ROLE_FIRST;
}

/* The header at b (at least LLOG_HEADER_SIZE of `have` bytes) in the
 * log's dialect; its log number when the longer header is whole. */
static llog_header header_at(const llog_resume *t, const uint8_t *b,
                             size_t have) {
    return llog_header_decode_in(llog_header_types(t->dialect), b, have);
}

/* 1 when a recyclable header (whole, in h; `have` bytes at it) belongs to
 * another log: an older log's record in a recycled file, or Pebble's
 * trailer. The log ends before it; it is cut with what follows. */
static int older_log(const llog_resume *t, size_t have, const llog_header *h) {
    if (h->header_size == LLOG_HEADER_SIZE || have < h->header_size)
        return 0;
    return t->has_log_number && h->log_number != (uint32_t)t->log_number;
}

/* 1 when b[0..have) starts Pebble's end-of-log trailer
 * (llog_header_pebble_trailer) outside an open record. */
static int pebble_trailer(const llog_resume *t, const uint8_t *b, size_t have,
                          int open) {
    if (open || have < LLOG_HEADER_SIZE)
        return 0;
    llog_header h = header_at(t, b, have);
    return have >= h.header_size &&
           llog_header_pebble_trailer(t->dialect, &h, t->has_log_number,
                                      t->log_number);
}

/* Padding at walk_at (`have` bytes at b): covered when all zero, else
 * refused for `why`. */
static size_t padding(llog_resume *t, const uint8_t *b, size_t have,
                      const char *why) {
    if (all_zero(b, have))
        return have;
    refuse(t, t->walk_at, why);
    return 0;
}

/* The fragment r (whole header, not padding) at walk_at, `have` bytes of
 * its block's `room` there: see walk_one. */
static size_t walk_fragment(llog_resume *t, const uint8_t *b, size_t have,
                            size_t room, const llog_region_info *r) {
    uint64_t p = t->walk_at;
    const llog_header *h = &r->h;
    if (older_log(t, have, h)) { /* the log ends: cut with what follows */
        t->stopped_at_trailer = pebble_trailer(t, b, have, t->walk_open);
        return 0;
    }
    unsigned role = llog_type_role(t->dialect, h->type);
    int fragment = role >= LLOG_ROLE_FULL && role <= LLOG_ROLE_LAST;
    if (fragment && !in_sequence(t, role)) {
        refuse(t, p, "a fragment out of sequence");
        return 0;
    }
    if (llog_torn_implausible(t->dialect, h, LLOG_BLOCK_SIZE - room)) {
        refuse(t, p,
               fragment ? "a record length that cannot fit its block"
                        : "a record type no writer writes");
        return 0;
    }
    size_t size = h->header_size + h->length;
    if (r->checksum == 1) {
        /* Whole and intact: a fragment of the record being written, which
         * fills its block (were it FULL or LAST, it would be complete). */
        if ((role != LLOG_ROLE_FIRST && role != LLOG_ROLE_MIDDLE) ||
            size != room) { /* not a crash's: never cut a valid record */
            damage_found(t, p);
            return 0;
        }
        t->walk_open = t->walk_valid = 1;
        return t->phase == PHASE_WALK ? size : 0;
    }
    /* Incomplete, or zeros stand for bytes never written: the last thing
     * written, or else damage. */
    if (p + size < t->written)
        refuse(t, p, "a damaged record followed by more data");
    return 0;
}

/*
 * Checks the physical record (or trailer) at walk_at, whose bytes up to the
 * end of its block or of the written bytes are b[0..have): returns how many
 * bytes it covers, or 0 when the walk is over (refused, or the last thing
 * written reached). What the bytes are is the region walker's call.
 */
static size_t walk_one(llog_resume *t, const uint8_t *b, size_t have) {
    size_t room = LLOG_BLOCK_SIZE - (size_t)(t->walk_at % LLOG_BLOCK_SIZE);
    llog_region_info r;
    region_at(t, b, have, room, &r);
    if (have < LLOG_HEADER_SIZE) { /* the walker's trailer, or a torn one */
        if (r.kind == LLOG_KIND_TORN && room >= LLOG_HEADER_SIZE)
            return 0; /* a header cut short by the end */
        return padding(t, b, have,
                       "non-zero bytes where a block's trailer belongs");
    }
    if (r.kind == LLOG_KIND_ZERO) {
        if (room < LLOG_MAX_HEADER_SIZE) /* a longer header's trailer */
            return padding(t, b, have, "zero fill followed by more data");
        refuse(t, t->walk_at, "zero fill followed by more data");
        return 0;
    }
    return walk_fragment(t, b, have, room, &r);
}

/* The bytes [want_at, want_at + got) of the part to be cut arrived. */
static void walk_got(llog_resume *t, size_t got) {
    size_t i = 0, step = 1;
    while (i < got && step > 0) {
        step = walk_one(t, t->buf + i, got - i);
        t->walk_at += step;
        i += step;
    }
    if (step == 0 && t->phase == PHASE_WALK) {
        t->stopped_at =
            t->walk_at; /* the last thing written, or so it seems */
        t->walk_at = t->written;
    }
}

/* ---- the search after the record the walk stopped at ----------------- */

/* The size of the walker's region r if it is a physical record of this log,
 * whole, of a known type, with a matching checksum; else 0. *role is its
 * type's. */
static size_t valid_record(const llog_resume *t, const llog_region_info *r,
                           unsigned *role) {
    if (r->kind != LLOG_KIND_RECORD || r->checksum != 1)
        return 0;
    *role = llog_type_role(t->dialect, r->h.type);
    return *role == LLOG_ROLE_UNKNOWN ? 0 : r->size;
}

/* ... of the record b[0..have) starts, in the `room` left in its block. */
static size_t valid_record_at(const llog_resume *t, const uint8_t *b,
                              size_t have, size_t room, unsigned *role) {
    llog_region_info r;
    region_at(t, b, have < room ? have : room, room, &r);
    return valid_record(t, &r, role);
}

static void search_from(llog_resume *t, uint64_t at) {
    t->search_at = at;
    t->phase = PHASE_SEARCH;
}

/* Asks for the rest of the block holding search_at: records start before
 * the last written byte but may end in zeros after it. */
static int search_step(llog_resume *t) {
    if (t->search_at >= t->written) {
        if (t->refusing)
            refuse_for_good(t, t->refusing_at, t->refusing_why);
        else
            t->phase = PHASE_DONE;
        return 0;
    }
    return want_rest_of_block(t, t->search_at, t->size);
}

/* A valid record follows the one the walk took for the last thing written:
 * that one is damage, not a torn tail, and the log goes on. The records from
 * intact_at on are stepped over, and any damage between them (resync_got);
 * what follows the last of them is checked as the part to be cut, as
 * before. New records start a fresh block, never sharing one with the
 * damage. */
static void damage_found(llog_resume *t, uint64_t intact_at) {
    if (t->stopped_at_trailer) { /* every reader stops at the trailer */
        refuse_for_good(t, t->stopped_at,
                        "records of the log after its trailer");
        return;
    }
    t->refusing = 0;
    if (t->result.intact_at != 0 && intact_at <= t->resync_at) {
        /* Back where the last pass began: what follows it cannot be cut
         * (a valid record, which no crash leaves, opens it). Keep it all. */
        t->result.cut = t->skip_at > t->written ? t->skip_at : t->written;
        t->phase = PHASE_DONE;
        return;
    }
    t->resync_at = intact_at;
    if (t->result.intact_at == 0) {
        t->result.damaged_at = t->result.cut;
        t->result.intact_at = intact_at;
    }
    t->result.fresh_block = 1;
    t->walk_valid = 1;
    t->skip_at = intact_at;
    t->open_at = LLOG_NO_END;
    t->searching = 0;
    t->phase = PHASE_RESYNC;
}

static void search_got(llog_resume *t, size_t got) {
    size_t room = LLOG_BLOCK_SIZE - (size_t)(t->want_at % LLOG_BLOCK_SIZE);
    size_t starts = t->written - t->want_at < got
                        ? (size_t)(t->written - t->want_at)
                        : got;
    unsigned role;
    for (size_t i = 0; i < starts; i++) {
        if (valid_record_at(t, t->buf + i, got - i, room - i, &role)) {
            damage_found(t, t->want_at + i);
            return;
        }
    }
    /* Fewer bytes than asked: the file ended early, so nothing follows. */
    t->search_at = got < t->want_len ? t->written : t->want_at + t->want_len;
}

/* ---- stepping over the intact records after damage -------------------- */

/* The records of the log end at `at` (or the one open there began at
 * open_at): the part to be cut starts there. */
static uint64_t records_end(const llog_resume *t, uint64_t at) {
    return t->open_at != LLOG_NO_END ? t->open_at : at;
}

/* The pass is over: check what follows the last record as before. */
static void resync_done(llog_resume *t) {
    t->result.cut = t->searching ? t->last_stop : records_end(t, t->skip_at);
    t->walk_open = 0;
    if (t->result.cut >= t->written)
        t->phase = PHASE_DONE;
    else
        walk_from(t, t->written);
}

static int resync_step(llog_resume *t) {
    if (t->skip_at >= t->size || (t->searching && t->skip_at >= t->written)) {
        resync_done(t);
        return 0;
    }
    return want_rest_of_block(t, t->skip_at, t->size);
}

/* 1 when the walker's region r (the n bytes at b, to its block's end) is
 * what a writer pads a block's end with: a trailer, or zero fill where no
 * header of the dialect fits, all zero. */
static int padded_end(const llog_region_info *r, const uint8_t *b, size_t n) {
    return (r->kind == LLOG_KIND_TRAILER || r->kind == LLOG_KIND_ZERO) &&
           n < LLOG_MAX_HEADER_SIZE && all_zero(b, n);
}

/* Steps over the span's records of the log (and zero trailers) from i, as
 * the writer laid them out: returns where that stops. */
static size_t step_over(llog_resume *t, size_t i, size_t got, size_t room) {
    size_t size;
    unsigned role;
    llog_region_info r;
    while (i < got) {
        region_at(t, t->buf + i, got - i, room - i, &r);
        if (got == room && padded_end(&r, t->buf + i, got - i))
            return got;
        size = valid_record(t, &r, &role);
        if (size == 0)
            return i;
        if (role == LLOG_ROLE_FIRST)
            t->open_at = t->want_at + i;
        else if (role == LLOG_ROLE_FULL || role == LLOG_ROLE_LAST)
            t->open_at = LLOG_NO_END;
        i += size;
    }
    return i;
}

/* One pass over the rest of the log, a span at a time: records are stepped
 * over; where they stop, the offsets after are searched for the next valid
 * one (a record cannot start in the zeros after the last written byte). */
static void resync_got(llog_resume *t, size_t got) {
    size_t room = LLOG_BLOCK_SIZE - (size_t)(t->want_at % LLOG_BLOCK_SIZE);
    size_t i = 0;
    unsigned role;
    while (i < got) {
        if (!t->searching) {
            i = step_over(t, i, got, room);
            if (i == got)
                break;
            t->last_stop = records_end(t, t->want_at + i);
            if (pebble_trailer(t, t->buf + i, got - i,
                               t->open_at != LLOG_NO_END)) {
                t->searching = 1; /* the end of the log: cut from there */
                resync_done(t);
                return;
            }
            t->searching = 1;
            i++;
        } else if (t->want_at + i >= t->written) {
            break;
        } else if (valid_record_at(t, t->buf + i, got - i, room - i, &role)) {
            t->searching = 0;
            t->open_at = LLOG_NO_END;
        } else {
            i++;
        }
    }
    t->skip_at = t->want_at + i;
    if (got < t->want_len) /* the file ended early */
        resync_done(t);
}

static void walk_done(llog_resume *t) {
    const llog_resume_result *r = &t->result;
    /* A log holds a record, or a valid fragment of one; zeros alone are a
     * preallocated log never written. */
    if (r->clean_end == 0 && !t->walk_valid && (r->cut > 0 || t->written > 0))
        refuse(t, 0, no_record);
    else if (t->stopped_at != LLOG_NO_END && t->stopped_at + 1 < t->written)
        search_from(t, t->stopped_at + 1);
    else
        t->phase = PHASE_DONE;
}

/* Asks for the rest of the walk's block, up to the last written byte. */
static int walk_step(llog_resume *t) {
    if (t->walk_at >= t->written) {
        walk_done(t);
        return 0;
    }
    return want_rest_of_block(t, t->walk_at, t->written);
}

static void walk_from(llog_resume *t, uint64_t written) {
    t->written = written;
    t->walk_at = t->result.cut;
    t->stopped_at = LLOG_NO_END;
    t->stopped_at_trailer = 0;
    t->phase = PHASE_WALK;
}

llog_resume *llog_resume_new(uint64_t size, llog_dialect dialect,
                             int has_log_number, uint64_t log_number) {
    llog_resume *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->size = size;
    t->dialect = dialect;
    t->has_log_number = has_log_number;
    t->log_number = log_number;
    scan_end(t, size);
    return t;
}

void llog_resume_free(llog_resume *t) {
    if (t != NULL) {
        llog_reader_free(t->reader);
        free(t);
    }
}

int llog_resume_want(llog_resume *t, uint64_t *offset, size_t *len,
                     uint8_t **into) {
    int want = 0;
    while (!want && t->phase != PHASE_DONE && t->phase != PHASE_FAILED)
        want = t->phase == PHASE_SCAN           ? scan_step(t)
               : t->phase == PHASE_LAST_WRITTEN ? last_written_step(t)
               : t->phase == PHASE_WALK         ? walk_step(t)
               : t->phase == PHASE_SEARCH       ? search_step(t)
                                                : resync_step(t);
    if (want) {
        assert(t->want_len > 0 && t->want_len <= LLOG_BLOCK_SIZE);
        *offset = t->want_at;
        *len = t->want_len;
        *into = t->buf;
    }
    return want;
}

void llog_resume_got(llog_resume *t, size_t got) {
    if (got > t->want_len)
        got = t->want_len; /* a caller bug; never read past the buffer */
    if (t->phase == PHASE_LAST_WRITTEN) {
        last_written_got(t, got);
        return;
    }
    if (t->phase == PHASE_SEARCH) {
        search_got(t, got);
        return;
    }
    if (t->phase == PHASE_RESYNC) {
        resync_got(t, got);
        return;
    }
    if (t->phase == PHASE_WALK) {
        if (got < t->want_len) /* the file ended early */
            t->written = t->want_at + got;
        walk_got(t, got);
        return;
    }
    if (t->phase != PHASE_SCAN)
        return;
    if (got < t->want_len) /* the file ended early: it ends there now */
        t->end = t->torn_at = t->want_at + got;
    llog_reader_feed(t->reader, t->buf, got);
}

llog_status llog_resume_decision(const llog_resume *t,
                                 llog_resume_result *out) {
    if (t->phase == PHASE_FAILED)
        return t->status;
    if (t->phase != PHASE_DONE)
        return LLOG_ERR_ARG;
    *out = t->result;
    return LLOG_OK;
}
