/* log_regions.c - the walker of a block's physical regions (log_regions.h). */
#include "log_regions.h"

void llog_regions_init(llog_regions *w, llog_dialect dialect, int verify,
                       int has_log_number, uint64_t log_number) {
    *w = (llog_regions){.dialect = dialect,
                        .types = llog_header_types(dialect),
                        .verify = verify,
                        .has_log_number = has_log_number,
                        .log_number = log_number,
                        .done = 1};
}

void llog_regions_feed(llog_regions *w, const uint8_t *block, size_t len,
                       int final) {
    w->block = block;
    w->len = len;
    w->final = final;
    w->at = 0;
    w->done = len == 0;
}

/* A region that ends the block's walk: the rest of the block from `at`. */
static int last(llog_regions *w, llog_region_info *out, llog_region_kind kind,
                const char *reason) {
    out->kind = kind;
    out->size = w->len - out->at;
    out->reason = reason;
    w->done = 1;
    return 1;
}

/* The whole header at out->at, in a region that ends the walk. */
static int last_with_header(llog_regions *w, llog_region_info *out,
                            llog_region_kind kind, const char *reason) {
    out->has_header = 1;
    return last(w, out, kind, reason);
}

/* A torn tail: its type is known when a whole 7-byte header is there. */
static int torn(llog_regions *w, llog_region_info *out) {
    if (w->len - out->at < LLOG_HEADER_SIZE)
        return last(w, out, LLOG_KIND_TORN, NULL);
    return last_with_header(w, out, LLOG_KIND_TORN,
                            llog_torn_implausible(w->dialect, &out->h, out->at)
                                ? LLOG_REASON_IMPLAUSIBLE_TAIL
                                : NULL);
}

/* A whole record: the log's or another's; after a bad checksum, the rest
 * of the block is garbage (the next call says so). */
static int record(llog_regions *w, llog_region_info *out) {
    const llog_header *h = &out->h;
    const uint8_t *p = w->block + out->at;
    llog_header_learn_log_number(w->dialect, h, &w->has_log_number,
                                 &w->log_number);
    out->kind = h->header_size > LLOG_HEADER_SIZE &&
                        h->log_number != (uint32_t)w->log_number
                    ? LLOG_KIND_OTHER_LOG
                    : LLOG_KIND_RECORD;
    out->has_header = 1;
    out->size = h->header_size + h->length;
    out->checksum =
        w->verify ? llog_checksum_ok_dialect(p, h, p + h->header_size) : -1;
    w->at += out->size;
    w->bad_checksum = out->checksum == 0;
    w->done = w->at >= w->len;
    return 1;
}

int llog_regions_next(llog_regions *w, llog_region_info *out) {
    if (w->done)
        return 0;
    *out = (llog_region_info){.at = w->at, .checksum = -1};
    out->h = (llog_header){0, 0, 0, LLOG_HEADER_SIZE, 0, 0};
    if (w->bad_checksum) { /* the length may be what is damaged */
        w->bad_checksum = 0;
        return last(w, out, LLOG_KIND_GARBAGE, LLOG_REASON_CHECKSUM);
    }
    switch (llog_header_region(w->types, w->block + w->at, w->len - w->at,
                               w->final, &out->h)) {
    case LLOG_REGION_TRAILER:
        return last(w, out, LLOG_KIND_TRAILER, NULL);
    case LLOG_REGION_TRUNCATED:
        return torn(w, out);
    case LLOG_REGION_BAD_LENGTH:
        return last_with_header(w, out, LLOG_KIND_GARBAGE,
                                LLOG_REASON_BAD_LENGTH);
    case LLOG_REGION_ZERO:
        return last_with_header(w, out, LLOG_KIND_ZERO, NULL);
    case LLOG_REGION_RECORD:
        break;
    }
    if (llog_header_pebble_trailer(w->dialect, &out->h, w->has_log_number,
                                   w->log_number))
        return last_with_header(w, out, LLOG_KIND_END, NULL);
    return record(w, out);
}
