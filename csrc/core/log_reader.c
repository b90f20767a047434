/*
 * log_reader.c - LevelDB's log reader (db/log_reader.cc) over caller blocks.
 *
 * Two layers, as in LevelDB: step() reads one physical record from the
 * current block (or skips a trailer, zero fill or damage), and on_fragment()
 * joins fragments into records with a single switch. Events are queued by
 * one step and handed out one per llog_reader_next() call.
 *
 * RocksDB's and Pebble's reading (PHASE_READ_DIALECT) and a range's
 * prologue in those dialects (PHASE_PROLOGUE) are log_reader_dialect.c's;
 * the state both files share is in log_reader_internal.h.
 */
#include "log_reader_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cold steps of step() kept out of line: inlined into step(), they cost
 * LevelDB's hot path instructions (bench/callgrind's budget shows it). */
#if defined(__GNUC__) || defined(__clang__)
#define COLD_STEP static __attribute__((noinline))
#else
#define COLD_STEP static
#endif

/* The reading phase of the reader's dialect. */
static enum phase read_phase(const llog_reader *r) {
    return r->opt.dialect == LLOG_DIALECT_LEVELDB ? PHASE_READ
                                                  : PHASE_READ_DIALECT;
}

/* The recovery mode's verdicts (the table in log_reader.h): what a
 * corruption, and a torn tail, mean in each mode. RocksDB reports a torn
 * tail in point-in-time recovery, and ends the log there. */
static void decide_verdicts(llog_reader *r) {
    switch (r->opt.recovery) {
    case LLOG_RECOVER_SKIP:
        r->corruption_verdict = LLOG_READ_ON;
        r->torn_verdict = LLOG_READ_ON;
        break;
    case LLOG_RECOVER_TOLERATE_TAIL:
        r->corruption_verdict = LLOG_FAIL;
        r->torn_verdict = LLOG_READ_ON;
        break;
    case LLOG_RECOVER_POINT_IN_TIME:
        r->corruption_verdict = LLOG_STOP;
        r->torn_verdict = r->rocksdb ? LLOG_STOP : LLOG_READ_ON;
        break;
    case LLOG_RECOVER_ABSOLUTE:
    default:
        r->corruption_verdict = LLOG_FAIL;
        r->torn_verdict = LLOG_FAIL;
        break;
    }
}

void llog_reader_set_dialect(llog_reader *r, llog_dialect dialect) {
    r->opt.dialect = dialect;
    r->rocksdb = dialect == LLOG_DIALECT_ROCKSDB;
    decide_verdicts(r);
    memcpy(r->types, llog_header_types(dialect), sizeof r->types);
    r->have_log_number = 0;
    /* (a told LevelDB log ignores the number: its records carry none) */
    if (r->opt.has_log_number &&
        !(r->opt.detect && dialect == LLOG_DIALECT_LEVELDB))
        llog_reader_learn_log_number(r, r->opt.log_number);
}

void llog_reader_begin(llog_reader *r) {
    if (r->opt.start >= r->opt.end)
        r->phase = PHASE_DONE;
    else if (r->opt.start < LLOG_BLOCK_SIZE || r->opt.sequential)
        r->phase = read_phase(r); /* from block 0: no record is open */
    else {
        r->phase = r->opt.dialect == LLOG_DIALECT_LEVELDB ? PHASE_SYNC_START
                                                          : PHASE_PROLOGUE;
        r->probe = r->opt.start - r->opt.start % LLOG_BLOCK_SIZE;
    }
}

llog_reader *llog_reader_new(const llog_reader_options *options) {
    llog_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->opt = *options;
    if (r->opt.detect) { /* block 0 first, whatever the range */
        r->opt.dialect = LLOG_DIALECT_LEVELDB;
        r->phase = PHASE_DETECT;
        r->detecting = 1;
        return r;
    }
    llog_reader_set_dialect(r, r->opt.dialect);
    llog_reader_begin(r);
    return r;
}

void llog_reader_free(llog_reader *r) {
    if (r != NULL) {
        if (r->opt.reserve == NULL)
            free(r->buf);
        free(r->ts_families);
        free(r);
    }
}

int llog_reader_log_number(const llog_reader *r, uint64_t *log_number) {
    *log_number = r->log_number;
    return r->have_log_number &&
           (r->opt.has_log_number || r->number_at < r->opt.end);
}

/* A range that read on past its end to finish an open record does not
 * claim what it learnt there (above too): the same range of a whole read
 * would not. */
int llog_reader_recycled(const llog_reader *r) {
    return r->recycled && r->recycled_at < r->opt.end;
}

uint64_t llog_reader_wanted(const llog_reader *r) {
    if (r->phase == PHASE_DETECT)
        return 0;
    if (r->phase == PHASE_PROLOGUE)
        return r->prologue_at;
    if (r->phase == PHASE_SYNC_START || r->phase == PHASE_SYNC_BACK)
        return r->probe;
    return r->pos - r->pos % LLOG_BLOCK_SIZE;
}

void llog_reader_feed(llog_reader *r, const uint8_t *data, size_t len) {
    assert(len <= LLOG_BLOCK_SIZE); /* one block at a time */
    r->block = data;
    r->rest = NULL;
    r->fast_n = 0; /* what was checked ahead was another block's bytes */
    r->block_len = len;
    r->block_offset = llog_reader_wanted(r);
    r->have_block = 1;
    if (r->detecting) /* (once told, never again: one test a block) */
        llog_reader_detect(r);
}

void llog_reader_feed_split(llog_reader *r, const uint8_t *head,
                            const uint8_t *rest, size_t len) {
    assert(r->phase == PHASE_READ && len > LLOG_HEADER_SIZE);
    llog_reader_feed(r, head, len);
    r->rest = rest;
}

/* The block's bytes from offset `in` on. A block fed in two pieces is read
 * at its start (a header) and from the end of that header on: records
 * begin at offset 0 or past the first header, never inside it. */
static const uint8_t *block_at(const llog_reader *r, size_t in) {
    if (r->rest != NULL && in >= LLOG_HEADER_SIZE)
        return r->rest + (in - LLOG_HEADER_SIZE);
    assert(r->rest == NULL || in == 0);
    return r->block + in;
}

uint64_t llog_reader_position(const llog_reader *r) {
    if (r->phase == PHASE_DETECT || r->phase == PHASE_PROLOGUE ||
        r->phase == PHASE_SYNC_START || r->phase == PHASE_SYNC_BACK)
        return r->opt.start;
    uint64_t at = r->in_record ? r->record_offset : r->pos;
    /* Before start, nothing is returned or reported: resume at start. */
    return at < r->opt.start ? r->opt.start : at;
}

uint64_t llog_reader_clean_end(const llog_reader *r) {
    return r->clean_end > r->meta_end ? r->clean_end : r->meta_end;
}

size_t llog_reader_next_length(const llog_reader *r) {
    if ((r->phase != PHASE_READ && r->phase != PHASE_READ_DIALECT) ||
        !r->have_block || r->pos < r->block_offset)
        return 0;
    if (r->fast_i < r->fast_n && r->pos == r->fast_at)
        return r->fast_len[r->fast_i]; /* checked ahead: short */
    if (r->compressed)
        return 0; /* decoding calls the caller back: keep its lock held */
    size_t in = (size_t)(r->pos - r->block_offset);
    if (in >= r->block_len || r->block_len - in < LLOG_HEADER_SIZE)
        return 0;
    return llog_header_decode(block_at(r, in)).length;
}

/* ---- event queue ---------------------------------------------------- */

/* The first event of a call goes straight to the caller; later ones wait in
 * the queue. */
static llog_event *push(llog_reader *r, llog_event_kind kind) {
    llog_event *ev = r->out;
    if (ev != NULL) {
        r->out = NULL;
    } else {
        assert(r->queue_len < QUEUE_MAX); /* see QUEUE_MAX */
        ev = &r->queue[r->queue_len++];
    }
    *ev = (llog_event){.kind = kind};
    return ev;
}

/* Reports dropped bytes, if they begin inside this reader's range. */
static void report(llog_reader *r, uint64_t offset, uint64_t size,
                   const char *reason) {
    if (!in_range(r, offset))
        return;
    llog_event *ev = push(r, LLOG_EV_CORRUPTION);
    ev->verdict = r->corruption_verdict;
    ev->offset = offset;
    ev->size = size;
    ev->reason = reason;
}

static void emit_record(llog_reader *r, uint64_t offset, const uint8_t *data,
                        size_t len, int assembled) {
    r->clean_end = r->pos;
    if (!in_range(r, offset))
        return;
    llog_event *ev = push(r, LLOG_EV_RECORD);
    ev->offset = offset;
    ev->data = data;
    ev->len = len;
    ev->assembled = assembled; /* the caller's now: see open_record */
}

/* ---- joining fragments ------------------------------------------------ */

static void open_record(llog_reader *r, uint64_t offset) {
    r->in_record = 1;
    r->record_offset = offset;
    r->open_size = 0;
    r->buf_len = 0;
    if (r->opt.reserve != NULL) { /* the caller's buffer may have moved on */
        r->buf = NULL;
        r->buf_cap = 0;
    }
}

/* Makes room for `need` bytes of the record being assembled. */
static int reserve(llog_reader *r, size_t need) {
    if (r->opt.reserve != NULL) {
        size_t cap = 0;
        uint8_t *b =
            r->opt.reserve(r->opt.reserve_ctx, r->buf_len, need, &cap);
        if (b == NULL) {
            r->failure = LLOG_ERR_NOMEM;
            return 0;
        }
        assert(cap >= need);
        r->buf = b;
        r->buf_cap = cap;
        return 1;
    }
    size_t cap = r->buf_cap < 65536 ? 65536 : r->buf_cap;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *grown = realloc(r->buf, cap);
    if (grown == NULL) {
        r->failure = LLOG_ERR_NOMEM;
        return 0;
    }
    r->buf = grown;
    r->buf_cap = cap;
    return 1;
}

/* Makes room for n more bytes after the buf_len assembled. */
static int make_room(llog_reader *r, size_t n) {
    if (n > SIZE_MAX - r->buf_len) {
        r->failure = LLOG_ERR_TOO_LARGE;
        return 0;
    }
    return r->buf_len + n <= r->buf_cap || reserve(r, r->buf_len + n);
}

/* Keeps n more bytes of the open record (a kept one: see kept()). */
static int keep(llog_reader *r, const uint8_t *data, size_t n) {
    if (n == 0)
        return 1;
    if (!make_room(r, n))
        return 0;
    /* Read in place, the payload is where it goes, or a header further
     * on (empty fragments before it in its block): then they overlap. */
    uint8_t *to = r->buf + r->buf_len;
    uintptr_t gap = (uintptr_t)data > (uintptr_t)to
                        ? (uintptr_t)data - (uintptr_t)to
                        : (uintptr_t)to - (uintptr_t)data;
    if (gap >= n)
        memcpy(to, data, n);
    else if (gap > 0)
        memmove(to, data, n);
    r->buf_len += n;
    return 1;
}

int llog_reader_in_place(const llog_reader *r, size_t *assembled) {
    if (r->phase != PHASE_READ || r->opt.reserve == NULL || !r->in_record ||
        r->resync || r->record_offset < r->opt.start ||
        r->failure != LLOG_OK || r->pos % LLOG_BLOCK_SIZE != 0 ||
        (r->have_block && r->block_offset == r->pos))
        return 0;
    *assembled = r->buf_len;
    return 1;
}

int llog_reader_assembly(const llog_reader *r, uint8_t **buf, size_t *len) {
    if (r->opt.reserve == NULL || !r->in_record || r->buf == NULL)
        return 0;
    *buf = r->buf;
    *len = r->buf_len;
    return 1;
}

void llog_reader_assembly_moved(llog_reader *r, uint8_t *buf, size_t cap) {
    assert(r->opt.reserve != NULL && r->in_record && cap >= r->buf_len);
    r->buf = buf;
    r->buf_cap = cap;
}

uint8_t *llog_reader_append_point(llog_reader *r, size_t more) {
    size_t assembled;
    assert(more > 0 && llog_reader_in_place(r, &assembled));
    (void)assembled;
    return make_room(r, more) ? r->buf + r->buf_len : NULL;
}

/* A joining error's text: without a number in the LevelDB dialect, or, in
 * RocksDB's, numbered as LevelDB's own db/log_reader.cc numbers it (and
 * RocksDB kept): 1 for FULL or MIDDLE, 2 for FIRST or LAST. */
static const char *joining_reason(const llog_reader *r, const char *leveldb,
                                  const char *rocksdb1, const char *rocksdb2,
                                  unsigned role) {
    if (!r->rocksdb)
        return leveldb;
    return role == LLOG_ROLE_FULL || role == LLOG_ROLE_MIDDLE ? rocksdb1
                                                              : rocksdb2;
}

static void drop_open_record(llog_reader *r, unsigned role) {
    /* An empty open record is what old LevelDB writers left (an empty FIRST
     * at a block's end): not worth a report. */
    if (r->open_size > 0)
        report(r, r->record_offset, r->open_size,
               joining_reason(r, "partial record without end",
                              "partial record without end(1)",
                              "partial record without end(2)", role));
    r->in_record = 0;
}

/* A FULL or FIRST arrived: an open record can never end now. */
LLOG_HOT_INLINE void drop_unfinished(llog_reader *r, unsigned role) {
    if (r->in_record)
        drop_open_record(r, role);
}

/* A physical record was damaged, or zero fill was skipped. */
static void bad_physical(llog_reader *r) {
    r->resync = 0;
    if (r->in_record)
        report(r, r->record_offset, r->open_size, "error in middle of record");
    r->in_record = 0;
}

static void on_unknown(llog_reader *r, unsigned type, uint64_t at, size_t n) {
    if (r->rocksdb && (type & LLOG_RDB_SAFE_IGNORE)) {
        r->in_record = 0; /* a newer writer's: skipped, as RocksDB does */
        return;
    }
    snprintf(r->reason, sizeof r->reason, "unknown record type %u", type);
    if (r->in_record)
        report(r, r->record_offset, n + r->open_size, r->reason);
    else
        report(r, at, n, r->reason);
    r->in_record = 0;
}

/* Joins a fragment: `role` is the type's role in the dialect (LevelDB's
 * types are their own roles), `type` the byte itself; n payload bytes at
 * `payload`, raw bytes in the file (more when the payload was decoded). */
LLOG_HOT_INLINE void on_fragment(llog_reader *r, unsigned role, unsigned type,
                                 uint64_t at, const uint8_t *payload, size_t n,
                                 size_t raw) {
    if (r->resync) { /* fragments of a record that began before us */
        if (role == LLOG_ROLE_MIDDLE)
            return;
        r->resync = 0;
        if (role == LLOG_ROLE_LAST)
            return;
    }
    switch (role) {
    case LLOG_ROLE_FULL:
        drop_unfinished(r, role);
        emit_record(r, at, payload, n, 0);
        break;
    case LLOG_ROLE_FIRST:
        drop_unfinished(r, role);
        open_record(r, at);
        r->open_size += raw;
        if (kept(r))
            keep(r, payload, n);
        break;
    case LLOG_ROLE_MIDDLE:
    case LLOG_ROLE_LAST:
        if (!r->in_record) {
            report(r, at, n,
                   joining_reason(r, "missing start of fragmented record",
                                  "missing start of fragmented record(1)",
                                  "missing start of fragmented record(2)",
                                  role));
            break;
        }
        r->open_size += raw;
        if (kept(r) && !keep(r, payload, n))
            break;
        if (role == LLOG_ROLE_LAST) {
            r->in_record = 0;
            emit_record(r, r->record_offset, r->buf, r->buf_len,
                        r->opt.reserve != NULL && r->buf != NULL);
        }
        break;
    default:
        on_unknown(r, type, at, n);
        break;
    }
}

/* ---- reading physical records ----------------------------------------- */

/* The end of the data fed so far: describe what is left unconsumed. `tail`
 * names an incomplete physical record of `left` bytes, or is NULL. */
static llog_event *end_of_data(llog_reader *r, size_t left, const char *tail) {
    uint64_t data_end = r->block_offset + r->block_len;
    llog_event *ev = push(r, LLOG_EV_EOF);
    uint64_t at = r->in_record ? r->record_offset : r->pos;
    uint64_t size = data_end > at ? data_end - at : 0;
    if (left == 0 || tail == NULL)
        tail = !r->in_record ? NULL
               : r->rocksdb  ? "error reading trailing data due to "
                               "encountering EOF"
                             : "fragmented record open at end of file";
    if (tail != NULL && r->rocksdb) {
        /* RocksDB's first report: the physical record cut short, else the
         * open record's payload (the start of what is torn is
         * llog_reader_position) */
        at = left > 0 ? r->pos : r->record_offset;
        size = left > 0 ? left : r->open_size;
    }
    if (tail != NULL && in_range(r, at)) {
        ev->torn = 1;
        ev->verdict = r->torn_verdict;
        ev->offset = at;
        ev->size = size;
        ev->reason = tail;
    }
    /* Keep pos and the open record: the same block is asked for again and,
     * once it has grown, parsing goes on where it stopped. */
    r->have_block = 0;
    return ev;
}

static const char ROCKSDB_TRUNCATED_HEADER[] = "truncated header";

int llog_reader_torn_also(const llog_reader *r, const llog_event *torn,
                          llog_event *also) {
    /* RocksDB's reader goes on from a cut header to the end of the file,
     * where it finds the record still open: it reports both. */
    if (!r->rocksdb || torn->kind != LLOG_EV_EOF || !torn->torn ||
        torn->reason != ROCKSDB_TRUNCATED_HEADER || !r->in_record ||
        !in_range(r, r->record_offset))
        return 0;
    *also =
        (llog_event){.kind = LLOG_EV_EOF, .torn = 1, .verdict = torn->verdict};
    also->offset = r->record_offset;
    also->size = r->open_size;
    also->reason = "error reading trailing data due to encountering EOF";
    return 1;
}

/* The data ends inside a physical record: a torn tail, unless its whole
 * header is one no writer writes (flagged: no crash left that). */
COLD_STEP void torn_physical(llog_reader *r, size_t in, size_t left,
                             llog_header h) {
    int whole = left >= LLOG_HEADER_SIZE;
    const char *reason = whole && left >= h.header_size
                             ? "truncated payload at end of file"
                             : "truncated header at end of file";
    if (r->rocksdb) /* RocksDB's texts */
        reason = whole && left >= h.header_size ? "truncated record body"
                                                : ROCKSDB_TRUNCATED_HEADER;
    llog_event *ev = end_of_data(r, left, reason);
    ev->implausible =
        ev->torn && whole && llog_torn_implausible(r->opt.dialect, &h, in);
}

/* A bad physical record or zero fill: the rest of the block goes. */
COLD_STEP enum step_result drop_rest(llog_reader *r, size_t left,
                                     const char *reason) {
    if (reason != NULL)
        report(r, r->pos, left, reason);
    bad_physical(r);
    next_block(r);
    return STEP_CONTINUE;
}

/* ---- checked ahead ------------------------------------------------------ */

/* Records this short are checked ahead, FAST_BYTES of them at most: for
 * them the checksum's latency and the general step cost more than the
 * bytes, and three checksums run side by side (llog_crc32c_copy_many) where
 * one would run alone. */
#define FAST_LEN 512
#define FAST_BYTES 4096

/* How far into the current block records begin in range: 0 when the range
 * ended before the block, as it may while a record open at its end is read
 * on to its last fragment (the difference would wrap around). */
static uint64_t range_end_in_block(const llog_reader *r) {
    return r->opt.end > r->block_offset ? r->opt.end - r->block_offset : 0;
}

/* How many of the k FULL records whose payloads are at p[i] (each after
 * its header) lead with stored checksums equal to crc[i]. */
static size_t checksums_hold(const uint8_t *const *p, const uint32_t *crc,
                             size_t k) {
    size_t n = 0;
    while (n < k &&
           llog_unmask_crc(
               llog_header_decode(p[n] - LLOG_HEADER_SIZE).masked_crc) ==
               crc[n])
        n++;
    return n;
}

/* How many of the k records gathered lead with checksums that hold (all
 * when they are not checked); fills fast_data and fast_len with them. The
 * side-by-side checksums copy as they go: the copies land in scratch. */
static size_t fast_checked(llog_reader *r, const uint8_t *const *p,
                           const size_t *len, size_t k) {
    uint32_t crc[LLOG_FAST_MAX];
    uint8_t scratch[FAST_BYTES]; /* the copies llog_crc32c_copy_many makes */
    uint8_t *dst[LLOG_FAST_MAX];
    size_t at = 0;
    if (r->opt.verify_checksums && llog_crc32c_copy_many_interleaves()) {
        for (size_t i = 0; i < k; i++) {
            dst[i] = scratch + at;
            at += len[i];
        }
        llog_crc32c_copy_many(llog_type_crc[LLOG_FULL], crc, dst, p, len, k);
    } else if (r->opt.verify_checksums) { /* one at a time: no copy */
        for (size_t i = 0; i < k; i++)
            crc[i] =
                llog_crc32c_extend(llog_type_crc[LLOG_FULL], p[i], len[i]);
    }
    /* Past the first that fails, the general step reports it. */
    size_t n = r->opt.verify_checksums ? checksums_hold(p, crc, k) : k;
    for (size_t i = 0; i < n; i++) {
        r->fast_data[i] = p[i];
        r->fast_len[i] = (uint32_t)len[i];
    }
    return n;
}

/* After a FULL record that ends `in` bytes into the block (pos there, no
 * record open): takes the whole FULL records that follow in the block and
 * in range, while their checksums hold, for llog_reader_next to hand out
 * without stepping (fast_at, fast_data, fast_len). */
static void check_ahead(llog_reader *r, size_t in) {
    const uint8_t *p[LLOG_FAST_MAX];
    size_t len[LLOG_FAST_MAX], k = 0, bytes = 0;
    if (r->in_record || r->resync || r->pos < r->opt.start)
        return;
    uint64_t end = range_end_in_block(r); /* in range before it */
    while (k < LLOG_FAST_MAX && in + LLOG_HEADER_SIZE <= r->block_len &&
           in < end) {
        llog_header h = llog_header_decode(r->block + in);
        if (h.type != LLOG_FULL || h.length > FAST_LEN ||
            bytes + h.length > FAST_BYTES ||
            !llog_header_fits(in + LLOG_HEADER_SIZE, h.length, r->block_len))
            break;
        p[k] = r->block + in + LLOG_HEADER_SIZE;
        len[k++] = h.length;
        bytes += h.length;
        in += LLOG_HEADER_SIZE + h.length;
    }
    r->fast_n = r->fast_i = 0;
    if (k == 0)
        return;
    r->fast_n = (unsigned)fast_checked(r, p, len, k);
    r->fast_at = r->pos;
}

static enum step_result step(llog_reader *r) {
    uint64_t block_offset = r->pos - r->pos % LLOG_BLOCK_SIZE;
    if (!r->have_block || r->block_offset != block_offset)
        return STEP_NEED_BLOCK;
    size_t in = (size_t)(r->pos - block_offset);
    size_t left = r->block_len > in ? r->block_len - in : 0;
    int final = r->block_len < LLOG_BLOCK_SIZE; /* the log ends in it */
    const uint8_t *p = NULL, *payload = NULL;   /* (no block: NULL, len 0) */
    if (left >= LLOG_HEADER_SIZE) {
        p = r->block + in;
        payload = p + LLOG_HEADER_SIZE;
        if (r->rest != NULL) { /* fed in two pieces */
            p = block_at(r, in);
            payload = block_at(r, in + LLOG_HEADER_SIZE);
        }
    }
    llog_header h = {0, 0, 0, LLOG_HEADER_SIZE, 0, 0};
    switch (llog_header_region(NULL, p, left, final, &h)) {
    case LLOG_REGION_TRAILER:
        next_block(r);
        return STEP_CONTINUE;
    case LLOG_REGION_TRUNCATED: /* the writer died mid-record */
        torn_physical(r, in, left, h);
        return STEP_EOF;
    case LLOG_REGION_BAD_LENGTH:
        return drop_rest(r, left, LLOG_REASON_BAD_LENGTH);
    case LLOG_REGION_ZERO: /* preallocated, never written */
        if (final && !r->in_record) {
            /* The end of what is written so far: a writer may still fill
             * this block (an append cuts zero fill back), so stop here
             * without consuming it. LevelDB skips it: the same records. */
            end_of_data(r, 0, NULL);
            return STEP_EOF;
        }
        return drop_rest(r, left, NULL);
    case LLOG_REGION_RECORD:
        break;
    }
    /* A bad checksum: the length may be what is damaged, and trusting it
     * could land on bytes that merely look like a record. */
    if (r->opt.verify_checksums && !llog_checksum_ok(&h, payload))
        return drop_rest(r, left, LLOG_REASON_CHECKSUM);
    uint64_t at = r->pos;
    r->pos += LLOG_HEADER_SIZE + h.length;
    on_fragment(r, h.type, h.type, at, payload, h.length, h.length);
    if (h.type == LLOG_FULL && h.length <= FAST_LEN && r->rest == NULL)
        check_ahead(r, in + LLOG_HEADER_SIZE + h.length);
    return STEP_CONTINUE;
}

/* ---- shared with log_reader_dialect.c ---------------------------------- */

/* The steps above stay static, as LevelDB's hot path inlines them; the
 * other dialects call them through these (log_reader_internal.h). */

llog_event *llog_reader_push(llog_reader *r, llog_event_kind kind) {
    return push(r, kind);
}

void llog_reader_report(llog_reader *r, uint64_t offset, uint64_t size,
                        const char *reason) {
    report(r, offset, size, reason);
}

void llog_reader_bad_physical(llog_reader *r) { bad_physical(r); }

void llog_reader_drop_unfinished(llog_reader *r, unsigned role) {
    drop_unfinished(r, role);
}

void llog_reader_on_fragment(llog_reader *r, unsigned role, unsigned type,
                             uint64_t at, const uint8_t *payload, size_t n,
                             size_t raw) {
    on_fragment(r, role, type, at, payload, n, raw);
}

llog_event *llog_reader_end_of_data(llog_reader *r, size_t left,
                                    const char *tail) {
    return end_of_data(r, left, tail);
}

void llog_reader_torn_physical(llog_reader *r, size_t in, size_t left,
                               llog_header h) {
    torn_physical(r, in, left, h);
}

enum step_result llog_reader_drop_rest(llog_reader *r, size_t left,
                                       const char *reason) {
    return drop_rest(r, left, reason);
}

/* ---- finding where to begin ------------------------------------------- */

static void begin_at(llog_reader *r, uint64_t block_offset, int resync) {
    r->phase = read_phase(r);
    r->pos = block_offset;
    r->resync = resync;
    r->fast_n = 0;
}

/* 1 when the block holds only MIDDLE fragments up to its trailer, so the
 * state after it (record open or not) is the state before it. */
static int only_middles(llog_dialect d, const uint8_t *b, size_t len) {
    size_t at = 0;
    if (len < LLOG_BLOCK_SIZE)
        return 0;
    llog_header h;
    llog_region k;
    while ((k = llog_header_region(llog_header_types(d), b + at,
                                   LLOG_BLOCK_SIZE - at, 0, &h)) !=
           LLOG_REGION_TRAILER) {
        if (k != LLOG_REGION_RECORD ||
            llog_type_role(d, h.type) != LLOG_ROLE_MIDDLE)
            return 0;
        at += h.header_size + h.length;
    }
    return 1;
}

/* 1 when what a block begins with is reported the same whether or not a
 * record is open before it (for reports at or after the block's start): a
 * FULL or FIRST that fits (only the open record, before us, is dropped),
 * zero fill, or a bad length in a full block. MIDDLE, LAST, an unknown type
 * and a torn tail depend on it. */
static int starts_fresh(llog_dialect d, const uint8_t *b, size_t len) {
    llog_header h;
    switch (llog_header_region(llog_header_types(d), b, len,
                               len < LLOG_BLOCK_SIZE, &h)) {
    case LLOG_REGION_BAD_LENGTH:
    case LLOG_REGION_ZERO:
        return 1;
    case LLOG_REGION_RECORD: {
        unsigned role = llog_type_role(d, h.type);
        return role == LLOG_ROLE_FULL || role == LLOG_ROLE_FIRST;
    }
    case LLOG_REGION_TRAILER:   /* (an empty block is never probed) */
    case LLOG_REGION_TRUNCATED: /* whose tail it is depends on the state */
        break;
    }
    return 0;
}

/*
 * One probe of the look-back. Beginning at a block with `resync` gives the
 * true state at its end whenever something other than MIDDLE fragments
 * follows its leading fragments: every other physical record (FULL, FIRST,
 * LAST, damage, zero fill, unknown type) leaves a state that does not depend
 * on the state before it. Reports about bytes before `start` are filtered.
 */
static void sync_step(llog_reader *r) {
    const uint8_t *b = r->block;
    if (r->phase == PHASE_SYNC_START) {
        if (r->block_len == 0) {
            /* Nothing of the block holding `start` is written yet: decide
             * once it is (the same block is asked for again). */
            push(r, LLOG_EV_EOF);
            r->have_block = 0;
            return;
        }
        if (starts_fresh(r->opt.dialect, b, r->block_len)) {
            begin_at(r, r->probe, 1);
            return;
        }
        r->phase = PHASE_SYNC_BACK;
        r->probe -= LLOG_BLOCK_SIZE;
        return;
    }
    if (!only_middles(r->opt.dialect, b, r->block_len))
        begin_at(r, r->probe, 1);
    else if (r->probe == 0)
        begin_at(r, 0, 0); /* no record is open at the start of a log */
    else
        r->probe -= LLOG_BLOCK_SIZE;
}

static int range_done(const llog_reader *r) {
    return r->pos >= r->opt.end &&
           (!r->in_record || r->record_offset >= r->opt.end);
}

/* Hands the caller an event of this kind with no other field set. */
static void answer(llog_reader *r, llog_event *ev, llog_event_kind kind) {
    r->out = NULL;
    *ev = (llog_event){.kind = kind};
}

/* One step of the reading phases; 1 when the caller is to be answered
 * now (a block is needed). */
LLOG_HOT_INLINE int read_step(llog_reader *r, llog_event *ev,
                              enum step_result (*step_fn)(llog_reader *)) {
    if (range_done(r)) {
        r->phase = PHASE_DONE;
        return 0;
    }
    if (step_fn(r) == STEP_NEED_BLOCK) {
        answer(r, ev, LLOG_EV_NEED_BLOCK);
        return 1;
    }
    return 0;
}

/* Records a run gathers, checks and copies at a time: RUN_BATCH, or only
 * RUN_SHORT when those hold RUN_SHORT_MIN to RUN_SHORT_MAX bytes. For
 * records of that middling size a short batch's checksums and the chain of
 * loads finding the next batch's headers are in flight together, which
 * beats longer batches (bench/README.md, "The Arrow rows"); shorter records
 * gain from fewer, longer batches, and longer ones from fetching further
 * ahead of the copies. */
#define RUN_BATCH 48
#define RUN_SHORT 12
#define RUN_SHORT_MIN (RUN_SHORT * 64)
#define RUN_SHORT_MAX (RUN_SHORT * 256)

/* How far ahead of a record the run asks for the log's bytes: its headers
 * are a chain of loads, each waiting for the one before. */
#define RUN_PREFETCH 2048

/* The FULL records from pos that the run may take, a batch at most (see
 * RUN_BATCH): their payloads, lengths and places in the run's data into p,
 * len and dst; returns how many, and in *more whether it stopped at the
 * batch's size only. Stops after the record that reaches the run's budget,
 * and at its room for records. */
static size_t run_gather(const llog_reader *r, const llog_run *run,
                         uint64_t pos, const uint8_t **p, size_t *len,
                         uint8_t **dst, int *more) {
    size_t k = 0, most = run->max - run->n, bytes = run->data_len;
    if (most > RUN_BATCH)
        most = RUN_BATCH;
    /* Headers start before end (in the block, and in range); in locals:
     * the stores below could alias the reader and the run. */
    size_t at = (size_t)(pos - r->block_offset), size = r->block_len;
    size_t end = size >= LLOG_HEADER_SIZE ? size - LLOG_HEADER_SIZE + 1 : 0;
    uint64_t in_range = range_end_in_block(r);
    if (in_range < end)
        end = (size_t)in_range;
    const uint8_t *block = r->block;
    size_t budget = run->budget, from = bytes;
    uint8_t *data = run->data;
    size_t lim = most < RUN_SHORT ? most : RUN_SHORT;
    for (;;) { /* RUN_SHORT records, then the batch's size if they ask */
        while (k < lim && bytes < budget && at < end) {
            const uint8_t *q = block + at;
            llog_header h = llog_header_decode(q);
            size_t n = h.length;
            if (h.type != LLOG_FULL ||
                !llog_header_fits(at + LLOG_HEADER_SIZE, n, size))
                break; /* not a whole FULL record in the block */
            __builtin_prefetch(q + RUN_PREFETCH); /* never faults */
            p[k] = q + LLOG_HEADER_SIZE;
            len[k] = n;
            dst[k++] = data + bytes;
            bytes += n;
            at += LLOG_HEADER_SIZE + n;
        }
        if (k < lim || lim == most ||
            (bytes - from >= RUN_SHORT_MIN && bytes - from < RUN_SHORT_MAX))
            break;
        lim = most;
    }
    *more = k == RUN_BATCH || (k == RUN_SHORT && lim < most);
    return k;
}

/* Copies the k gathered records (read from pos on) into the run's data
 * and counts those that lead with checksums that hold (all when the reader
 * does not check them) in the run; returns the position after them. */
static uint64_t run_take(const llog_reader *r, llog_run *run, uint64_t pos,
                         const uint8_t *const *p, const size_t *len,
                         uint8_t *const *dst, size_t k) {
    uint32_t crc[RUN_BATCH];
    int check = r->opt.verify_checksums;
    if (check)
        llog_crc32c_copy_many(llog_type_crc[LLOG_FULL], crc, dst, p, len, k);
    else
        for (size_t i = 0; i < k; i++)
            memcpy(dst[i], p[i], len[i]);
    size_t at = run->data_len, n = run->n;
    size_t ok = check ? checksums_hold(p, crc, k) : k; /* the rest: general */
    for (size_t i = 0; i < ok; i++) {
        at += len[i];
        run->offsets[n] = pos;
        run->ends[++n] = (int64_t)at;
        pos += LLOG_HEADER_SIZE + len[i];
    }
    run->data_len = at;
    run->n = n;
    return pos;
}

size_t llog_reader_next_run(llog_reader *r, llog_run *run) {
    if (r->phase != PHASE_READ || r->queue_head < r->queue_len ||
        r->in_record || r->resync || r->rest != NULL || !r->have_block ||
        r->pos - r->pos % LLOG_BLOCK_SIZE != r->block_offset ||
        r->pos < r->opt.start)
        return 0;
    size_t first = run->n;
    uint64_t pos = r->pos;
    const uint8_t *p[RUN_BATCH];
    size_t len[RUN_BATCH];
    uint8_t *dst[RUN_BATCH];
    for (int more = 1; more;) {
        size_t k = run_gather(r, run, pos, p, len, dst, &more);
        size_t before = run->n;
        pos = run_take(r, run, pos, p, len, dst, k);
        if (run->n - before < k)
            break; /* the general path says what comes next */
    }
    if (run->n > first)
        r->pos = r->clean_end = pos;
    return run->n - first;
}

/* Every phase but LevelDB's reading; 1 when the caller is answered now. */
static int other_phase(llog_reader *r, llog_event *ev) {
    switch (r->phase) {
    case PHASE_DETECT: /* fed block 0, which told nothing (see detect) */
        if (!r->have_block) {
            answer(r, ev, LLOG_EV_NEED_BLOCK);
            return 1;
        }
        llog_reader_push(r, LLOG_EV_EOF);
        r->have_block = 0; /* asked for again, and told again */
        return 0;
    case PHASE_PROLOGUE:
        if (!r->have_block || r->block_offset != r->prologue_at) {
            answer(r, ev, LLOG_EV_NEED_BLOCK);
            return 1;
        }
        llog_reader_prologue_step(r);
        return 0;
    case PHASE_SYNC_START:
    case PHASE_SYNC_BACK:
        if (!r->have_block || r->block_offset != r->probe) {
            answer(r, ev, LLOG_EV_NEED_BLOCK);
            return 1;
        }
        sync_step(r);
        return 0;
    case PHASE_READ: /* (the caller's) */
    case PHASE_READ_DIALECT:
        return read_step(r, ev, llog_reader_step_dialect);
    case PHASE_DONE:
        answer(r, ev, LLOG_EV_DONE);
        return 1;
    case PHASE_FAILED:
        answer(r, ev, LLOG_EV_ERROR);
        ev->size = (uint64_t)r->failure;
        return 1;
    }
    return 1;
}

/* Hands out the next record checked ahead, when pos is where it begins:
 * what step() and emit_record would do for it. 0 when there is none. */
LLOG_HOT_INLINE int fast_next(llog_reader *r, llog_event *ev) {
    if (r->fast_i >= r->fast_n || r->pos != r->fast_at ||
        r->phase != PHASE_READ || r->failure != LLOG_OK)
        return 0;
    size_t n = r->fast_len[r->fast_i];
    *ev = (llog_event){.kind = LLOG_EV_RECORD,
                       .offset = r->pos,
                       .data = r->fast_data[r->fast_i++],
                       .len = n};
    r->pos = r->clean_end = r->fast_at = r->pos + LLOG_HEADER_SIZE + n;
    return 1;
}

void llog_reader_next(llog_reader *r, llog_event *ev) {
    if (r->queue_head < r->queue_len) {
        *ev = r->queue[r->queue_head++];
        return;
    }
    if (fast_next(r, ev))
        return;
    r->queue_head = r->queue_len = 0;
    r->out = ev;
    for (;;) {
        if (r->failure != LLOG_OK)
            r->phase = PHASE_FAILED;
        if (r->phase == PHASE_READ) { /* LevelDB's reading: the hot path */
            if (read_step(r, ev, step))
                return;
        } else if (other_phase(r, ev)) {
            return;
        }
        if (r->out == NULL) /* the step produced an event */
            return;
    }
}
