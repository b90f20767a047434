/*
 * log_reader.c - LevelDB's log reader (db/log_reader.cc) over caller blocks.
 *
 * Two layers, as in LevelDB: step() reads one physical record from the
 * current block (or skips a trailer, zero fill or damage), and on_fragment()
 * joins fragments into records with a single switch. Events are queued by
 * one step and handed out one per llog_reader_next() call.
 */
#include "log_reader.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum phase {
    PHASE_SYNC_START, /* is the block holding `start` entered mid-record? */
    PHASE_SYNC_BACK,  /* walking back over MIDDLE-only blocks */
    PHASE_READ,
    PHASE_DONE,
    PHASE_FAILED
};

enum step_result { STEP_CONTINUE, STEP_NEED_BLOCK, STEP_EOF };

/* One step queues at most a report, a report, a record. */
#define QUEUE_MAX 3

struct llog_reader {
    llog_reader_options opt;
    enum phase phase;
    uint64_t probe; /* SYNC phases: offset of the block examined */
    int resync;     /* skip MIDDLE and LAST until another type shows up */

    const uint8_t *block; /* the block fed by the caller */
    const uint8_t *rest;  /* its bytes past the first header, when fed in
                             two pieces (llog_reader_feed_split); else NULL */
    size_t block_len;
    uint64_t block_offset;
    int have_block;
    uint64_t pos; /* offset of the next unparsed byte */

    int in_record;          /* a fragmented record is open */
    uint64_t record_offset; /* its first header */
    uint64_t open_size;     /* payload bytes of its fragments so far */
    uint8_t *buf;           /* those bytes, when the record is in range: */
    size_t buf_len;         /* the reader's own buffer, or the caller's */
    size_t buf_cap;         /* (opt.reserve) */
    uint64_t clean_end;

    llog_event *out; /* the caller's event, while none was produced */
    llog_event queue[QUEUE_MAX];
    int queue_head;
    int queue_len;
    llog_status failure;
    char reason[32]; /* "unknown record type N" */
};

llog_reader *llog_reader_new(const llog_reader_options *options) {
    llog_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->opt = *options;
    if (r->opt.start >= r->opt.end)
        r->phase = PHASE_DONE;
    else if (r->opt.start < LLOG_BLOCK_SIZE || r->opt.sequential)
        r->phase = PHASE_READ; /* from block 0, where no record is open */
    else {
        r->phase = PHASE_SYNC_START;
        r->probe = r->opt.start - r->opt.start % LLOG_BLOCK_SIZE;
    }
    return r;
}

void llog_reader_free(llog_reader *r) {
    if (r != NULL) {
        if (r->opt.reserve == NULL)
            free(r->buf);
        free(r);
    }
}

uint64_t llog_reader_wanted(const llog_reader *r) {
    if (r->phase == PHASE_SYNC_START || r->phase == PHASE_SYNC_BACK)
        return r->probe;
    return r->pos - r->pos % LLOG_BLOCK_SIZE;
}

void llog_reader_feed(llog_reader *r, const uint8_t *data, size_t len) {
    assert(len <= LLOG_BLOCK_SIZE); /* one block at a time */
    r->block = data;
    r->rest = NULL;
    r->block_len = len;
    r->block_offset = llog_reader_wanted(r);
    r->have_block = 1;
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
    if (r->phase == PHASE_SYNC_START || r->phase == PHASE_SYNC_BACK)
        return r->opt.start;
    uint64_t at = r->in_record ? r->record_offset : r->pos;
    /* Before start, nothing is returned or reported: resume at start. */
    return at < r->opt.start ? r->opt.start : at;
}

uint64_t llog_reader_clean_end(const llog_reader *r) { return r->clean_end; }

size_t llog_reader_next_length(const llog_reader *r) {
    if (r->phase != PHASE_READ || !r->have_block || r->pos < r->block_offset)
        return 0;
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

static int in_range(const llog_reader *r, uint64_t offset) {
    return offset >= r->opt.start && offset < r->opt.end;
}

/* Reports dropped bytes, if they begin inside this reader's range. */
static void report(llog_reader *r, uint64_t offset, uint64_t size,
                   const char *reason) {
    if (!in_range(r, offset))
        return;
    llog_event *ev = push(r, LLOG_EV_CORRUPTION);
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

static int append(llog_reader *r, const uint8_t *data, size_t n) {
    r->open_size += n;
    if (r->record_offset < r->opt.start || n == 0)
        return 1; /* never returned: count it, do not keep it */
    if (!make_room(r, n))
        return 0;
    if (data != r->buf + r->buf_len) /* else read in place */
        memcpy(r->buf + r->buf_len, data, n);
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

uint8_t *llog_reader_append_point(llog_reader *r, size_t more) {
    size_t assembled;
    assert(more > 0 && llog_reader_in_place(r, &assembled));
    (void)assembled;
    return make_room(r, more) ? r->buf + r->buf_len : NULL;
}

/* A FULL or FIRST arrived: an open record can never end now. */
static void drop_unfinished(llog_reader *r) {
    /* An empty open record is what old LevelDB writers left (an empty FIRST
     * at a block's end): not worth a report. */
    if (r->in_record && r->open_size > 0)
        report(r, r->record_offset, r->open_size,
               "partial record without end");
    r->in_record = 0;
}

/* A physical record was damaged, or zero fill was skipped. */
static void bad_physical(llog_reader *r) {
    r->resync = 0;
    if (r->in_record)
        report(r, r->record_offset, r->open_size, "error in middle of record");
    r->in_record = 0;
}

static void on_unknown(llog_reader *r, unsigned type, uint64_t at, size_t n) {
    snprintf(r->reason, sizeof r->reason, "unknown record type %u", type);
    if (r->in_record)
        report(r, r->record_offset, n + r->open_size, r->reason);
    else
        report(r, at, n, r->reason);
    r->in_record = 0;
}

static void on_fragment(llog_reader *r, unsigned type, uint64_t at,
                        const uint8_t *payload, size_t n) {
    if (r->resync) { /* fragments of a record that began before us */
        if (type == LLOG_MIDDLE)
            return;
        r->resync = 0;
        if (type == LLOG_LAST)
            return;
    }
    switch (type) {
    case LLOG_FULL:
        drop_unfinished(r);
        emit_record(r, at, payload, n, 0);
        break;
    case LLOG_FIRST:
        drop_unfinished(r);
        open_record(r, at);
        append(r, payload, n);
        break;
    case LLOG_MIDDLE:
    case LLOG_LAST:
        if (!r->in_record) {
            report(r, at, n, "missing start of fragmented record");
            break;
        }
        if (!append(r, payload, n))
            break;
        if (type == LLOG_LAST) {
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
    if (left == 0 || tail == NULL)
        tail = r->in_record ? "fragmented record open at end of file" : NULL;
    if (tail != NULL && in_range(r, at)) {
        ev->torn = 1;
        ev->offset = at;
        ev->size = data_end > at ? data_end - at : 0;
        ev->reason = tail;
    }
    /* Keep pos and the open record: the same block is asked for again and,
     * once it has grown, parsing goes on where it stopped. */
    r->have_block = 0;
    return ev;
}

/* Skips the rest of the current block. */
static void next_block(llog_reader *r) {
    r->pos = r->block_offset + LLOG_BLOCK_SIZE;
}

/* The data ends inside a physical record: a torn tail, unless its whole
 * header is one no writer writes (flagged: no crash left that). */
static void torn_physical(llog_reader *r, size_t in, size_t left,
                          const llog_header *h) {
    int whole = left >= LLOG_HEADER_SIZE;
    llog_event *ev = end_of_data(r, left,
                                 whole ? "truncated payload at end of file"
                                       : "truncated header at end of file");
    ev->implausible = ev->torn && whole &&
                      (h->type < LLOG_FULL || h->type > LLOG_LAST ||
                       LLOG_HEADER_SIZE + h->length > LLOG_BLOCK_SIZE - in);
}

/* A bad physical record or zero fill: the rest of the block goes. */
static enum step_result drop_rest(llog_reader *r, size_t left,
                                  const char *reason) {
    if (reason != NULL)
        report(r, r->pos, left, reason);
    bad_physical(r);
    next_block(r);
    return STEP_CONTINUE;
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
    llog_header h;
    switch (llog_region_at(p, left, final, &h)) {
    case LLOG_REGION_TRAILER:
        next_block(r);
        return STEP_CONTINUE;
    case LLOG_REGION_TRUNCATED: /* the writer died mid-record */
        torn_physical(r, in, left, &h);
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
    on_fragment(r, h.type, at, payload, h.length);
    return STEP_CONTINUE;
}

/* ---- finding where to begin ------------------------------------------- */

static void begin_at(llog_reader *r, uint64_t block_offset, int resync) {
    r->phase = PHASE_READ;
    r->pos = block_offset;
    r->resync = resync;
}

/* 1 when the block holds only MIDDLE fragments up to its trailer, so the
 * state after it (record open or not) is the state before it. */
static int only_middles(const uint8_t *b, size_t len) {
    size_t at = 0;
    if (len < LLOG_BLOCK_SIZE)
        return 0;
    llog_header h;
    while (llog_region_at(b + at, LLOG_BLOCK_SIZE - at, 0, &h) !=
           LLOG_REGION_TRAILER) {
        if (h.type != LLOG_MIDDLE ||
            LLOG_HEADER_SIZE + h.length > LLOG_BLOCK_SIZE - at)
            return 0;
        at += LLOG_HEADER_SIZE + h.length;
    }
    return 1;
}

/*
 * One probe of the look-back. Beginning at a block with `resync` gives the
 * true state at its end whenever something other than MIDDLE fragments
 * follows its leading fragments: every other physical record (FULL, FIRST,
 * LAST, damage, zero fill, unknown type) leaves a state that does not depend
 * on the state before it. Reports about bytes before `start` are filtered.
 */
/* 1 when what a block begins with is reported the same whether or not a
 * record is open before it (for reports at or after the block's start): a
 * FULL or FIRST that fits (only the open record, before us, is dropped),
 * zero fill, or a bad length in a full block. MIDDLE, LAST, an unknown type
 * and a torn tail depend on it. */
static int starts_fresh(const uint8_t *b, size_t len) {
    llog_header h;
    switch (llog_region_at(b, len, len < LLOG_BLOCK_SIZE, &h)) {
    case LLOG_REGION_BAD_LENGTH:
    case LLOG_REGION_ZERO:
        return 1;
    case LLOG_REGION_RECORD:
        return h.type == LLOG_FULL || h.type == LLOG_FIRST;
    case LLOG_REGION_TRAILER:   /* (an empty block is never probed) */
    case LLOG_REGION_TRUNCATED: /* whose tail it is depends on the state */
        break;
    }
    return 0;
}

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
        if (starts_fresh(b, r->block_len)) {
            begin_at(r, r->probe, 1);
            return;
        }
        r->phase = PHASE_SYNC_BACK;
        r->probe -= LLOG_BLOCK_SIZE;
        return;
    }
    if (!only_middles(b, r->block_len))
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

void llog_reader_next(llog_reader *r, llog_event *ev) {
    if (r->queue_head < r->queue_len) {
        *ev = r->queue[r->queue_head++];
        return;
    }
    r->queue_head = r->queue_len = 0;
    r->out = ev;
    for (;;) {
        if (r->failure != LLOG_OK)
            r->phase = PHASE_FAILED;
        switch (r->phase) {
        case PHASE_SYNC_START:
        case PHASE_SYNC_BACK:
            if (!r->have_block || r->block_offset != r->probe) {
                answer(r, ev, LLOG_EV_NEED_BLOCK);
                return;
            }
            sync_step(r);
            break;
        case PHASE_READ:
            if (range_done(r)) {
                r->phase = PHASE_DONE;
                break;
            }
            if (step(r) == STEP_NEED_BLOCK) {
                answer(r, ev, LLOG_EV_NEED_BLOCK);
                return;
            }
            break;
        case PHASE_DONE:
            answer(r, ev, LLOG_EV_DONE);
            return;
        case PHASE_FAILED:
            answer(r, ev, LLOG_EV_ERROR);
            ev->size = (uint64_t)r->failure;
            return;
        }
        if (r->out == NULL) /* the step produced an event */
            return;
    }
}
