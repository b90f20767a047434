/*
 * log_reader_dialect.c - the reader's other dialects (docs/rocksdb.md):
 * RocksDB's and Pebble's physical records (recyclable records and their log
 * number, old records, metadata records, compressed records, Pebble's
 * trailer), and the prologue a range reader of those dialects walks first.
 * LevelDB's reading, which this builds on, is log_reader.c's; what the two
 * share is log_reader_internal.h.
 */
#include "log_detect.h"
#include "log_reader_internal.h"

#include <stdlib.h>
/* ---- recyclable records: the log number, old records -------------------- */

/* Sets the log number recyclable records must carry, and the checksums of
 * their headers' covered bytes (type, log number) for the recyclable
 * fragments' types. */
void llog_reader_learn_log_number(llog_reader *r, uint64_t number) {
    uint8_t covered[5];
    llog_store32(covered + 1, (uint32_t)number);
    for (unsigned i = 0; i < RECYCLABLE_TYPES; i++) {
        covered[0] = (uint8_t)(LLOG_RECYCLABLE_FULL + i);
        r->recyclable_crc[i] = llog_crc32c_extend(0, covered, sizeof covered);
    }
    r->have_log_number = 1;
    r->log_number = number;
}

/* The log ends before the record at pos: nothing is consumed, so a log
 * that is rewritten there (a recycled file) reads on once it has been. */
static enum step_result end_of_log(llog_reader *r) {
    r->in_record = 0;
    if (r->pos >= r->opt.end) { /* and the range is over */
        r->phase = PHASE_DONE;
        return STEP_CONTINUE;
    }
    llog_reader_end_of_data(r, 0, NULL);
    return STEP_EOF;
}

/* RocksDB ends a recycled log at damage in "tolerate_tail" mode: a
 * recycled file holds an older log's bytes after the current one's end. */
static int damage_ends_log(const llog_reader *r) {
    return r->rocksdb && r->recycled &&
           r->opt.recovery == LLOG_RECOVER_TOLERATE_TAIL &&
           r->pos >= r->opt.start; /* an end before a range ends nothing */
}

/*
 * A recyclable record of another log number: an older log's bytes, left in
 * a recycled file. Pebble's writer ends a log with an empty record of the
 * next number. "skip" reads on past old records (RocksDB's
 * kSkipAnyCorruptedRecords); every other mode ends the log there, reporting
 * a record it cuts short where RocksDB does ("absolute", "point_in_time").
 */
static enum step_result old_record(llog_reader *r, const llog_header *h) {
    /* (a record it cut short made it no trailer, for good: ended_at) */
    int trailer =
        !r->in_record &&
        llog_header_pebble_trailer(r->opt.dialect, h, 1, r->log_number) &&
        r->ended_at != r->pos + 1;
    if ((r->opt.recovery == LLOG_RECOVER_SKIP && !trailer) ||
        r->pos < r->opt.start) { /* (an end before a range ends nothing) */
        llog_reader_bad_physical(r);
        r->pos += h->header_size + h->length;
        return STEP_CONTINUE;
    }
    if (trailer) { /* a closed log: consumed, the end for good */
        r->pos += h->header_size + h->length;
        r->phase = PHASE_DONE;
        return STEP_CONTINUE;
    }
    if (r->in_record && (r->opt.recovery == LLOG_RECOVER_ABSOLUTE ||
                         r->opt.recovery == LLOG_RECOVER_POINT_IN_TIME))
        llog_reader_report(
            r, r->record_offset, r->open_size,
            "error reading trailing data due to encountering old record");
    r->ended_at = r->pos + 1;
    return end_of_log(r);
}

/* The recyclable-header checks, before the checksum: STEP_CONTINUE when
 * the record is the current log's. */
static void mark_recycled(llog_reader *r, uint64_t at) {
    if (!r->recycled)
        r->recycled_at = at;
    r->recycled = 1;
}

static int is_old(llog_reader *r, const llog_header *h, uint64_t at) {
    if (llog_header_learn_log_number(r->opt.dialect, h, &r->have_log_number,
                                     &r->log_number)) {
        llog_reader_learn_log_number(r, r->log_number);
        r->number_at = at;
    }
    mark_recycled(r, at);
    return h->log_number != (uint32_t)r->log_number;
}

/* ---- metadata records --------------------------------------------------- */

/* RocksDB's first_record_read: a record was completed (a compression
 * record after one is damage), or a range's prologue saw one. */
static int records_read(const llog_reader *r) {
    return r->first_record_read || r->clean_end > 0;
}

/* Hands out a checked metadata record. */
static void emit_meta(llog_reader *r, unsigned type, uint64_t at,
                      const uint8_t *payload, size_t n) {
    llog_event *ev = llog_reader_push(r, LLOG_EV_META);
    ev->offset = at;
    ev->size = type;
    ev->data = payload;
    ev->len = n;
}

/* RocksDB's compression record: the first record of a log, saying that
 * every data record is a zstd frame (the only kind RocksDB writes: 7). */
static void on_compression(llog_reader *r, uint64_t at, const uint8_t *p,
                           size_t n) {
    size_t size = n; /* RocksDB counts the payload */
    if (r->compression_seen)
        llog_reader_report(r, at, size,
                           "read multiple SetCompressionType records");
    if (records_read(r))
        llog_reader_report(r, at, size,
                           "SetCompressionType not the first record");
    int64_t kind = llog_compression_record_type(p, n);
    if (kind != LLOG_RDB_ZSTD) { /* none, or one RocksDB refuses */
        if (kind != LLOG_RDB_NO_COMPRESSION)
            llog_reader_report(r, at, size,
                               "could not decode SetCompressionType record");
        else
            r->compression_seen = 1; /* "no compression", decoded */
        return;
    }
    r->compression_seen = 1;
    r->compressed = 1;
    emit_meta(r, LLOG_RDB_SET_COMPRESSION, at, p, n); /* whatever the range */
}

/* 1 when the column family's timestamp size was recorded before. */
static int family_known(const llog_reader *r, uint32_t family) {
    for (size_t i = 0; i < r->ts_count; i++)
        if (r->ts_families[i] == family)
            return 1;
    return 0;
}

/* The text of what is wrong with the entry at p, or NULL. */
static const char *timestamp_size_error(const llog_reader *r,
                                        const uint8_t *p) {
    llog_timestamp_entry e = llog_timestamp_entry_at(p);
    if (e.size == 0)
        return "User-defined timestamp size record contains zero "
               "timestamp size.";
    if (family_known(r, e.family))
        return "User-defined timestamp size record contains update to "
               "recorded column family.";
    return NULL;
}

/* Records the column families of the entries at p (n bytes, whole ones);
 * 0 when out of memory. */
static int record_families(llog_reader *r, const uint8_t *p, size_t n) {
    if (r->ts_count + n / LLOG_RDB_TIMESTAMP_ENTRY > r->ts_cap) {
        size_t cap = r->ts_cap * 2 + n / LLOG_RDB_TIMESTAMP_ENTRY;
        uint32_t *grown = realloc(r->ts_families, cap * sizeof *grown);
        if (grown == NULL) {
            r->failure = LLOG_ERR_NOMEM;
            return 0;
        }
        r->ts_families = grown;
        r->ts_cap = cap;
    }
    for (size_t i = 0; i < n; i += LLOG_RDB_TIMESTAMP_ENTRY)
        r->ts_families[r->ts_count++] = llog_timestamp_entry_at(p + i).family;
    return 1;
}

/* The entries before a bad one hold, as RocksDB records them one by one. */
static void on_timestamp_sizes(llog_reader *r, unsigned type, uint64_t at,
                               const uint8_t *p, size_t n) {
    if (r->in_record && r->open_size > 0) /* (an empty one is no loss) */
        llog_reader_report(
            r, r->record_offset, r->open_size,
            "user-defined timestamp size record interspersed partial "
            "record");
    r->in_record = 0;
    const char *error = n % LLOG_RDB_TIMESTAMP_ENTRY != 0
                            ? "could not decode user-defined "
                              "timestamp size record"
                            : NULL;
    size_t good = 0;
    while (error == NULL && good < n &&
           (error = timestamp_size_error(r, p + good)) == NULL) {
        if (!record_families(r, p + good, LLOG_RDB_TIMESTAMP_ENTRY))
            return;
        good += LLOG_RDB_TIMESTAMP_ENTRY;
    }
    if (good > 0 && in_range(r, at))
        emit_meta(r, type, at, p, good);
    if (error != NULL)
        llog_reader_report(r, at, n, error);
}

/* A RocksDB metadata record (llog_type_role: LLOG_ROLE_META). */
static void on_meta(llog_reader *r, unsigned type, uint64_t at,
                    const uint8_t *p, size_t n) {
    r->meta_end = r->pos; /* a log may be cut back to just after it */
    if (type != LLOG_RDB_TIMESTAMP_SIZE &&
        type != LLOG_RDB_TIMESTAMP_SIZE_RECYCLABLE)
        llog_reader_bad_physical(
            r); /* not a fragment: the open record cannot go on */
    switch (type) {
    case LLOG_RDB_SET_COMPRESSION:
        on_compression(r, at, p, n);
        break;
    case LLOG_RDB_TIMESTAMP_SIZE:
    case LLOG_RDB_TIMESTAMP_SIZE_RECYCLABLE:
        on_timestamp_sizes(r, type, at, p, n);
        break;
    default: /* the predecessor WAL's number, size and last sequence */
        if (n != 24)
            llog_reader_report(
                r, at, n, "could not decode PredecessorWALInfoType record");
        else if (in_range(r, at))
            emit_meta(r, type, at, p, n);
        break;
    }
}

/* ---- compressed records ------------------------------------------------- */

/*
 * A data fragment of a compressed log, decoded when its record is returned
 * (*n becomes the decoded length). Returns NULL when it does not decode:
 * the record is dropped and reported.
 */
static const uint8_t *decode(llog_reader *r, unsigned role, uint64_t at,
                             const uint8_t *payload, size_t *n) {
    int first = role == LLOG_ROLE_FULL || role == LLOG_ROLE_FIRST;
    int last = role == LLOG_ROLE_FULL || role == LLOG_ROLE_LAST;
    uint64_t begin = first ? at : r->record_offset;
    if (r->opt.decode == NULL || (first ? !in_range(r, at) : !kept(r)))
        return payload; /* returned as stored, or never returned */
    if (role == LLOG_ROLE_FULL && *n == 0)
        return payload; /* an empty record has no frame */
    size_t raw = *n;
    const uint8_t *out =
        r->opt.decode(r->opt.decode_ctx, payload, raw, first, last, n);
    if (out == NULL) {
        llog_reader_report(r, begin, raw + (first ? 0 : r->open_size),
                           "could not decompress record");
        r->in_record = 0;
    }
    return out;
}

/* on_fragment, with a compressed log's data fragments decoded first. */
static void on_fragment_dialect(llog_reader *r, unsigned role, unsigned type,
                                uint64_t at, const uint8_t *payload,
                                size_t raw) {
    size_t n = raw;
    int data = role == LLOG_ROLE_FULL || role == LLOG_ROLE_FIRST ||
               ((role == LLOG_ROLE_MIDDLE || role == LLOG_ROLE_LAST) &&
                r->in_record && !r->resync);
    if (r->compressed && data) {
        if (role == LLOG_ROLE_FULL || role == LLOG_ROLE_FIRST) {
            r->resync = 0;
            llog_reader_drop_unfinished(r, role);
        }
        payload = decode(r, role, at, payload, &n);
        if (payload == NULL)
            return;
    }
    llog_reader_on_fragment(r, role, type, at, payload, n, raw);
}

/* ---- one physical record ------------------------------------------------ */

/* llog_checksum_ok_dialect, starting from the cached checksum of a
 * recyclable fragment's type and (matching) log number. */
LLOG_HOT_INLINE int checksum_ok(const llog_reader *r, const uint8_t *p,
                                const llog_header *h, const uint8_t *payload) {
    if (h->header_size != LLOG_RECYCLABLE_HEADER_SIZE ||
        h->type < LLOG_RECYCLABLE_FULL || h->type > LLOG_RECYCLABLE_LAST)
        return llog_checksum_ok_dialect(p, h, payload);
    return llog_crc32c_extend(
               r->recyclable_crc[h->type - LLOG_RECYCLABLE_FULL], payload,
               h->length) == llog_unmask_crc(h->masked_crc);
}

enum step_result llog_reader_step_dialect(llog_reader *r) {
    uint64_t block_offset = r->pos - r->pos % LLOG_BLOCK_SIZE;
    if (!r->have_block || r->block_offset != block_offset)
        return STEP_NEED_BLOCK;
    size_t in = (size_t)(r->pos - block_offset);
    size_t left = r->block_len > in ? r->block_len - in : 0;
    int final = r->block_len < LLOG_BLOCK_SIZE;
    const uint8_t *p = left > 0 ? r->block + in : NULL;
    llog_header h = {0, 0, 0, LLOG_HEADER_SIZE, 0, 0};
    llog_region region = llog_header_region(r->types, p, left, final, &h);
    if (!r->recycled && h.header_size > LLOG_HEADER_SIZE) {
        /* RocksDB checks this first: a recyclable record after legacy
         * ones is damage (RocksDB drops it silently) */
        if (r->rocksdb && records_read(r))
            return llog_reader_drop_rest(
                r, left, "recyclable record after legacy records");
        mark_recycled(r, r->pos);
    }
    switch (region) {
    case LLOG_REGION_TRAILER:
        next_block(r);
        return STEP_CONTINUE;
    case LLOG_REGION_TRUNCATED:
        llog_reader_torn_physical(r, in, left, h);
        return STEP_EOF;
    case LLOG_REGION_BAD_LENGTH:
        if (damage_ends_log(r))
            return end_of_log(r);
        return llog_reader_drop_rest(r, left, LLOG_REASON_BAD_LENGTH);
    case LLOG_REGION_ZERO:
        if (final && !r->in_record)
            return end_of_log(r);
        return llog_reader_drop_rest(r, left, NULL);
    case LLOG_REGION_RECORD:
        break;
    }
    if (h.header_size > LLOG_HEADER_SIZE && is_old(r, &h, r->pos))
        return old_record(r, &h);
    const uint8_t *payload = p + h.header_size;
    if (r->opt.verify_checksums && !checksum_ok(r, p, &h, payload))
        return damage_ends_log(r)
                   ? end_of_log(r)
                   : llog_reader_drop_rest(r, left, LLOG_REASON_CHECKSUM);
    uint64_t at = r->pos;
    r->pos += h.header_size + h.length;
    unsigned role = r->types[h.type] & 7;
    if (role == LLOG_ROLE_META)
        on_meta(r, h.type, at, payload, h.length);
    else
        on_fragment_dialect(r, role, h.type, at, payload, h.length);
    return STEP_CONTINUE;
}

/* ---- a range's prologue ------------------------------------------------- */

/*
 * A range reader of another dialect first walks the log from block 0 as a
 * whole read would, physical record by physical record, for what holds for
 * the whole log: the log number of the first recyclable header, and the
 * compression record. It stops at the first data record of LevelDB's
 * layout in RocksDB's dialect (no recyclable record counts after it) or at
 * the range's block.
 * Returns 1 when done, 0 to be fed the next block.
 */
static int prologue_walk(llog_reader *r) {
    const uint8_t *b = r->block;
    size_t at = 0;
    llog_header h;
    while (b != NULL) {
        h.header_size = LLOG_HEADER_SIZE;
        llog_region k = llog_header_region(r->types, b + at, r->block_len - at,
                                           r->block_len < LLOG_BLOCK_SIZE, &h);
        if (h.header_size > LLOG_HEADER_SIZE)
            mark_recycled(r, r->block_offset + at); /* as a whole read does */
        if (k != LLOG_REGION_RECORD)
            return 0; /* the rest of the block is skipped */
        unsigned role = r->types[h.type] & 7;
        if (h.header_size > LLOG_HEADER_SIZE) {
            (void)is_old(r, &h, r->block_offset + at); /* learns the number */
            return 1;
        }
        if (r->opt.verify_checksums &&
            !llog_checksum_ok_dialect(b + at, &h, b + at + h.header_size))
            return 0;
        if (role == LLOG_ROLE_META && h.type == LLOG_RDB_SET_COMPRESSION)
            on_compression(r, at, b + at + h.header_size, h.length);
        else if (r->rocksdb && role >= LLOG_ROLE_FULL &&
                 role <= LLOG_ROLE_LAST) {
            r->first_record_read = 1; /* no recyclable record counts now */
            return 1;
        }
        at += h.header_size + h.length;
    }
    return 0;
}

void llog_reader_prologue_step(llog_reader *r) {
    int done = prologue_walk(r);
    if (r->block_len < LLOG_BLOCK_SIZE) {
        /* The range lies past the data: wait until there is some (the
         * same block is asked for again, and walked again) */
        llog_reader_push(r, LLOG_EV_EOF);
        r->have_block = 0;
        return;
    }
    uint64_t next = r->block_offset + LLOG_BLOCK_SIZE;
    if (done || next >= r->probe)
        r->phase = PHASE_SYNC_START;
    else
        r->prologue_at = next;
}

/* ---- the dialect told from block 0 (options.detect) --------------------- */

/*
 * Block 0 was fed: llog_detect_dialect tells the dialect, and the reader
 * begins as one made in it would, with block 0 at hand. A short block 0
 * that tells nothing (an empty log, a first record still being written) is
 * read as LevelDB's, as detection's verdict is, but told again when it is
 * fed again (the log grew) while nothing of it was consumed; for a range
 * past block 0 it is the end of the data until it tells.
 */
void llog_reader_detect(llog_reader *r) {
    if (r->block_offset != 0 ||
        (r->phase != PHASE_DETECT && (r->pos != 0 || r->in_record))) {
        r->detecting = 0; /* something was read: the dialect holds */
        return;
    }
    llog_detection d = llog_detect_dialect(
        r->block, r->block_len, r->opt.has_log_number, r->opt.log_number);
    int told =
        d.dialect != LLOG_DIALECT_COUNT || r->block_len == LLOG_BLOCK_SIZE;
    if (!told && r->opt.start >= LLOG_BLOCK_SIZE && !r->opt.sequential) {
        r->phase = PHASE_DETECT; /* (other_phase answers EOF) */
        return;
    }
    llog_reader_set_dialect(
        r, d.dialect == LLOG_DIALECT_COUNT ? LLOG_DIALECT_LEVELDB : d.dialect);
    llog_reader_begin(r);
    r->detecting = !told;
}

llog_dialect llog_reader_dialect(const llog_reader *r, int *told) {
    *told = !r->detecting;
    return r->opt.dialect;
}
