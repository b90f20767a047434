/*
 * log_tail.c - where the last complete record of a growing log ends (the
 * rule is in log_tail.h). Headers are read with log_header.h's classifier
 * and dialect tables, as every reader of headers reads them.
 */
#include "log_tail.h"

#include "log_header.h"

enum tail_phase {
    TAIL_NUMBER, /* the file's first header, for its log number */
    TAIL_WALK,   /* every header of the block at `block` */
    TAIL_HEADER, /* the first header of the block at `block` */
    TAIL_DONE
};

void llog_tail_init(llog_tail *t, uint64_t size, llog_dialect dialect,
                    int has_log_number, uint64_t log_number, int verify) {
    t->size = size;
    t->verify = verify;
    t->end = 0;
    t->dialect = dialect;
    t->has_log_number = has_log_number;
    t->log_number = log_number;
    t->block = size > 0 ? (size - 1) - (size - 1) % LLOG_BLOCK_SIZE : 0;
    t->phase = size == 0 ? TAIL_DONE
               : dialect != LLOG_DIALECT_LEVELDB && !has_log_number
                   ? TAIL_NUMBER
                   : TAIL_WALK;
}

int llog_tail_want(const llog_tail *t, uint64_t *at, size_t *len) {
    if (t->phase == TAIL_DONE)
        return 0;
    uint64_t from = t->phase == TAIL_NUMBER ? 0 : t->block;
    uint64_t most =
        t->phase == TAIL_WALK ? LLOG_BLOCK_SIZE : LLOG_MAX_HEADER_SIZE;
    uint64_t left = t->size - from;
    *at = from;
    *len = (size_t)(left < most ? left : most);
    return 1;
}

uint64_t llog_tail_end(const llog_tail *t) {
    return t->phase == TAIL_DONE ? t->end : 0;
}

/* The header at b (`n` bytes there, `final`: the data ends there), decoded
 * in *h by the classifier; *whole says whether the header was all there. */
static llog_region tail_header(const llog_tail *t, const uint8_t *b, size_t n,
                               int final, llog_header *h, int *whole) {
    *h = (llog_header){0, 0, 0, 0, 0, 0};
    llog_region r =
        llog_header_region(llog_header_types(t->dialect), b, n, final, h);
    *whole = n >= LLOG_HEADER_SIZE && h->header_size <= n;
    return r;
}

/* 1 when the whole header h is Pebble's end-of-log trailer: the log ends
 * after it (a Reader steps over it). */
static int tail_pebble_trailer(const llog_tail *t, const llog_header *h) {
    return llog_header_pebble_trailer(t->dialect, h, t->has_log_number,
                                      t->log_number);
}

/* 1 when the whole header h is a record of another log: an older log's,
 * in a recycled file. The log ends before it. */
static int tail_other_log(const llog_tail *t, const llog_header *h) {
    return t->has_log_number && h->header_size > LLOG_HEADER_SIZE &&
           h->log_number != (uint32_t)t->log_number &&
           !tail_pebble_trailer(t, h);
}

/* Learns the log number from the file's first header, if recyclable (and
 * not Pebble's trailer of an empty log, which carries the number after). */
static void tail_number_got(llog_tail *t, const uint8_t *b, size_t got) {
    llog_header h;
    int whole;
    tail_header(t, b, got, 1, &h, &whole);
    if (whole && h.header_size > LLOG_HEADER_SIZE &&
        !llog_header_pebble_trailer(t->dialect, &h, 0, 0)) {
        t->has_log_number = 1;
        t->log_number = h.log_number;
    }
    t->phase = TAIL_WALK;
}

/* No record ends in the block at `block`: ask about the one before. */
static void tail_back(llog_tail *t) {
    if (t->block == 0) {
        t->end = 0;
        t->phase = TAIL_DONE;
        return;
    }
    t->block -= LLOG_BLOCK_SIZE;
    t->phase = TAIL_HEADER;
}

/* The first header of an earlier block: go on back past a block that holds
 * nothing but a fragment of an open record, zero fill or another log's
 * bytes; walk any other block (Pebble's trailer included). */
static void tail_header_got(llog_tail *t, const uint8_t *b, size_t got) {
    llog_header h;
    int whole;
    llog_region r = tail_header(t, b, got, 1, &h, &whole);
    llog_role role =
        whole ? llog_type_role(t->dialect, h.type) : LLOG_ROLE_UNKNOWN;
    int fills = whole && h.header_size + h.length == LLOG_BLOCK_SIZE;
    if (r == LLOG_REGION_ZERO || (whole && tail_other_log(t, &h)) ||
        (fills && (role == LLOG_ROLE_FIRST || role == LLOG_ROLE_MIDDLE)))
        tail_back(t);
    else
        t->phase = TAIL_WALK;
}

/* 1 when the rest of a whole block from p is the padding a writer leaves
 * after a record whose header took `header_size` bytes: too short for
 * another, zero (a trailer, or a ZERO region in a longer header's dialect).
 * A Reader steps over it; no record can start there. */
static int tail_padding(llog_region r, size_t p, size_t header_size) {
    return LLOG_BLOCK_SIZE - p < header_size &&
           (r == LLOG_REGION_TRAILER || r == LLOG_REGION_ZERO);
}

/* Walks the headers of the block at `block` (b[0..got)): the boundary is
 * the end of its last FULL, LAST or metadata record (or Pebble's trailer,
 * which ends the log), before anything a writer does not leave before its
 * last record (or a checksum that fails, when verifying); past the block's
 * padding when that record is last in it. */
static void tail_walk_got(llog_tail *t, const uint8_t *b, size_t got) {
    int final = got < LLOG_BLOCK_SIZE, found = 0, whole, more = 1;
    size_t p = 0, end = 0, last_header = LLOG_HEADER_SIZE;
    llog_header h;
    llog_region r = LLOG_REGION_RECORD;
    while (more && p < got &&
           (r = tail_header(t, b + p, got - p, final, &h, &whole)) ==
               LLOG_REGION_RECORD) {
        llog_role role = llog_type_role(t->dialect, h.type);
        more = !tail_pebble_trailer(t, &h);
        if (more && (role == LLOG_ROLE_UNKNOWN || tail_other_log(t, &h)))
            break;
        if (more && t->verify && /* Pebble's trailer has no checksum */
            !llog_checksum_ok_dialect(b + p, &h, b + p + h.header_size))
            break; /* damage, or payload bytes not written yet */
        p += h.header_size + h.length;
        last_header = h.header_size;
        if (!more || (role != LLOG_ROLE_FIRST && role != LLOG_ROLE_MIDDLE)) {
            found = 1;
            end = p;
        }
    }
    if (!found) {
        tail_back(t);
        return;
    }
    if (more && end == p && !final && p < got &&
        tail_padding(r, p, last_header))
        end = got;
    t->end = t->block + end;
    t->phase = TAIL_DONE;
}

void llog_tail_got(llog_tail *t, const uint8_t *bytes, size_t got) {
    uint64_t at;
    size_t len;
    if (!llog_tail_want(t, &at, &len))
        return;
    if (got > len)
        got = len; /* a caller bug; never read past what was asked */
    if (t->phase == TAIL_NUMBER)
        tail_number_got(t, bytes, got);
    else if (t->phase == TAIL_HEADER)
        tail_header_got(t, bytes, got);
    else
        tail_walk_got(t, bytes, got);
}
