/*
 * fuzz_append.c - where an append resumes (log_resume), on arbitrary logs.
 *
 * Input, when bit 7 of byte 0 is clear (any bytes as a log):
 *   byte 0      how many records to append (1 + byte % 3)
 *   byte 1      seed of their sizes (up to about two blocks each)
 *   then        the log
 * and when it is set (a crash: a log made by the writer, cut short):
 *   byte 1      seed of the payload bytes (never zero: see crash_case)
 *   bytes 2-3   where to cut, modulo the log's length + 1
 *   byte 4      zero fill after the cut, in units of 1000 bytes
 *   then        one byte per record: its size, times 401
 *
 * The append module decides on the log, fed from memory; then the records are
 * appended as a writer in mode "a" does (cut, zero-fill to the next block
 * when asked, write), and the new log is read whole. Checks:
 * - the decision is never before the end of the last complete record, and
 *   never past the log; its clean_end is the whole log's;
 * - the new log ends clean (no torn tail: "absolute" reads it);
 * - it holds every record of the old log, then the appended ones, at the
 *   offsets the writer gave them;
 * - every damage it reports was reported at the same offset, for the same
 *   reason, in the old log: appending never creates damage.
 * - nothing cut is a record: past the whole fragments of one unfinished
 *   record (FIRST, then MIDDLEs, each filling its block), no offset of the
 *   part cut starts a valid physical record of this log, in any dialect (a
 *   crashed writer leaves none after a torn one; an older log's recyclable
 *   records, and Pebble's trailer, are not this log's).
 * For a crash: the log is never refused, except a first record cut before
 * its first fragment is whole (no valid record at all), and it is cut back
 * to the end of the last record wholly written.
 * The same bytes are decided on in RocksDB's and Pebble's dialects too
 * (llog_resume_new with a dialect): no hang, and a cut inside the log, never
 * before the last complete record.
 *
 * The same bytes also go to log_tail (where a growing log's last complete
 * record ends), in each dialect: a few spans asked, all inside the log; a
 * boundary inside it, which the log cut there gives again. For a crash cut
 * with nothing after, it is the end of the last record wholly written (past
 * its block's trailer when the cut is past the block).
 */
#include "fuzz_common.h"
#include "log_resume.h"
#include "log_tail.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    llog_crc32c_init(1);
    return 0;
}

static const llog_reader_options whole = {
    .start = 0, .end = LLOG_NO_END, .verify_checksums = 1};

static int all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* log_tail's boundary for log[0..len) in dialect d, checking checksums. */
static uint64_t tail_end(llog_dialect d, const uint8_t *log, size_t len) {
    llog_tail t;
    llog_tail_init(&t, len, d, 0, 0, 1);
    uint64_t at;
    size_t n, calls = 0;
    /* The last block, the first header, then a header or a walk a block. */
    size_t most = 2 * (len / LLOG_BLOCK_SIZE) + 3;
    while (llog_tail_want(&t, &at, &n)) {
        FUZZ_CHECK(++calls <= most);
        FUZZ_CHECK(n > 0 && n <= LLOG_BLOCK_SIZE && at + n <= len);
        llog_tail_got(&t, log + at, n);
    }
    uint64_t end = llog_tail_end(&t);
    FUZZ_CHECK(end <= len);
    return end;
}

/* In every dialect: a boundary the log cut there gives again. */
static void check_tail(const uint8_t *log, size_t len) {
    for (int d = LLOG_DIALECT_LEVELDB; d <= LLOG_DIALECT_PEBBLE; d++) {
        uint64_t end = tail_end((llog_dialect)d, log, len);
        FUZZ_CHECK(tail_end((llog_dialect)d, log, (size_t)end) == end);
    }
}

/* Runs the append module of a dialect over log[0..len). */
static llog_resume_result decide_in(llog_dialect d, const uint8_t *log,
                                    size_t len) {
    llog_resume *t = llog_resume_new(len, d, 0, 0);
    FUZZ_CHECK(t != NULL);
    uint64_t at;
    size_t n, calls = 0;
    uint8_t *into;
    /* Each scan doubles its span back (log2 n scans), reads it and may look
     * back over every block (n each); step 2 reads n; then one rescan. */
    size_t blocks = len / LLOG_BLOCK_SIZE + 2, scans = 2;
    while ((size_t)1 << scans < blocks)
        scans++;
    while (llog_resume_want(t, &at, &n, &into)) {
        FUZZ_CHECK(++calls < 4 * blocks * (scans + 1)); /* no hang */
        FUZZ_CHECK(n > 0 && n <= LLOG_BLOCK_SIZE && at + n <= len);
        memcpy(into, log + at, n);
        llog_resume_got(t, n);
    }
    llog_resume_result res;
    FUZZ_CHECK(llog_resume_decision(t, &res) == LLOG_OK);
    llog_resume_free(t);
    return res;
}

static llog_resume_result decide(const uint8_t *log, size_t len) {
    return decide_in(LLOG_DIALECT_LEVELDB, log, len);
}

/* The physical record of dialect d at log[at..len), checksum valid and
 * within its block: its size, or 0. A recyclable one counts only with the
 * log's number (number_known: else any). */
static size_t valid_at(llog_dialect d, const uint8_t *log, size_t len,
                       size_t at, const seen_log *s) {
    size_t room = LLOG_BLOCK_SIZE - at % LLOG_BLOCK_SIZE;
    if (len - at < LLOG_HEADER_SIZE || room < LLOG_HEADER_SIZE)
        return 0;
    llog_header h = llog_header_decode(log + at);
    h.header_size = llog_type_header_size(d, h.type);
    size_t size = h.header_size + h.length;
    if (llog_type_role(d, h.type) == LLOG_ROLE_UNKNOWN || size > room ||
        size > len - at)
        return 0;
    if (h.header_size > LLOG_HEADER_SIZE && s->has_log_number &&
        llog_load32(log + at + LLOG_HEADER_SIZE) != (uint32_t)s->log_number)
        return 0;
    return llog_checksum_ok_dialect(log + at, &h, log + at + h.header_size)
               ? size
               : 0;
}

/* No valid record of the log starts in the part cut, past the whole
 * fragments (FIRST, MIDDLEs filling their blocks) an unfinished record
 * left, and the zero trailers between them. */
static void check_nothing_valid_cut(llog_dialect d, const uint8_t *log,
                                    size_t len, llog_resume_result res,
                                    const seen_log *s) {
    size_t at = (size_t)res.cut, size;
    int open = 0;
    while (at < len) {
        size_t room = LLOG_BLOCK_SIZE - at % LLOG_BLOCK_SIZE;
        unsigned type = len - at > 6 ? log[at + 6] : 0;
        llog_role role = llog_type_role(d, type);
        if (room < LLOG_MAX_HEADER_SIZE && room <= len - at &&
            all_zero(log + at, room)) {
            at += room; /* a trailer */
        } else if ((size = valid_at(d, log, len, at, s)) == room &&
                   (role == LLOG_ROLE_FIRST ||
                    (open && role == LLOG_ROLE_MIDDLE))) {
            open = 1;
            at += size;
        } else {
            break;
        }
    }
    for (; at < len; at++)
        FUZZ_CHECK(valid_at(d, log, len, at, s) == 0);
}

/* The other dialects' decisions on the same bytes: no hang, no crash, a
 * cut inside the log, never before the last complete record, and nothing
 * valid cut. */
static void decide_other_dialects(const uint8_t *log, size_t len) {
    for (int d = LLOG_DIALECT_ROCKSDB; d <= LLOG_DIALECT_PEBBLE; d++) {
        llog_resume_result res = decide_in((llog_dialect)d, log, len);
        if (res.refusal != NULL) {
            FUZZ_CHECK(res.refused_at <= len);
            continue;
        }
        FUZZ_CHECK(res.clean_end <= res.cut && res.cut <= len);
        llog_reader_options opt = whole;
        opt.dialect = (llog_dialect)d;
        opt.recovery = LLOG_RECOVER_POINT_IN_TIME;
        seen_log s = {0};
        read_all(&opt, log, len, &s);
        check_nothing_valid_cut((llog_dialect)d, log, len, res, &s);
        seen_free(&s);
    }
}

/* old[0..cut), zero fill to a block boundary when asked, then `count`
 * records; their offsets go to offsets[]. Returns the new length. */
static size_t append(uint8_t *out, const uint8_t *old, llog_resume_result res,
                     int count, uint64_t seed, uint64_t *offsets) {
    size_t len = (size_t)res.cut;
    memcpy(out, old, len);
    if (res.fresh_block && len % LLOG_BLOCK_SIZE != 0) {
        size_t pad = LLOG_BLOCK_SIZE - len % LLOG_BLOCK_SIZE;
        memset(out + len, 0, pad);
        len += pad;
    }
    llog_writer w;
    llog_writer_init(&w, len);
    static uint8_t payload[2 * LLOG_BLOCK_SIZE];
    for (int i = 0; i < count; i++) {
        size_t size = (size_t)(mix(&seed) % sizeof payload);
        for (size_t j = 0; j < size; j++)
            payload[j] = (uint8_t)mix(&seed);
        len += llog_writer_add(&w, payload, size, out + len, &offsets[i]);
    }
    return len;
}

/* 1 when the old log reported damage at this offset for this reason. */
static int reported_before(const seen_log *old, const seen_event *e) {
    for (size_t i = 0; i < old->n; i++)
        if (!old->ev[i].is_record && old->ev[i].offset == e->offset &&
            strcmp(old->ev[i].reason, e->reason) == 0)
            return 1;
    return 0;
}

/* The i-th record of a read, or NULL. */
static const seen_event *nth_record(const seen_log *s, size_t i) {
    for (size_t j = 0; j < s->n; j++)
        if (s->ev[j].is_record && i-- == 0)
            return &s->ev[j];
    return NULL;
}

/* 1 when the append module found damage there (a record that looked torn,
 * with a valid one after it): the new log's reader may report it now that
 * records follow. */
static int found_by_tail(llog_resume_result res, const seen_event *e) {
    return res.intact_at > 0 && e->offset >= res.damaged_at &&
           e->offset < res.cut;
}

static void check_new_log(const seen_log *old, const seen_log *now,
                          llog_resume_result res, const uint64_t *offsets,
                          int count) {
    FUZZ_CHECK(!now->torn);
    size_t old_records = 0, records = 0;
    for (size_t i = 0; i < old->n; i++)
        old_records += old->ev[i].is_record;
    for (size_t i = 0; i < now->n; i++) {
        records += now->ev[i].is_record;
        if (!now->ev[i].is_record)
            FUZZ_CHECK(reported_before(old, &now->ev[i]) ||
                       found_by_tail(res, &now->ev[i]));
    }
    FUZZ_CHECK(records == old_records + (size_t)count);
    for (size_t i = 0; i < old_records; i++) { /* unchanged, in order */
        const seen_event *a = nth_record(old, i), *b = nth_record(now, i);
        FUZZ_CHECK(a->offset == b->offset && a->size == b->size &&
                   a->hash == b->hash);
    }
    for (int i = 0; i < count; i++) /* then the new ones, where written */
        FUZZ_CHECK(nth_record(now, old_records + (size_t)i)->offset ==
                   offsets[i]);
}

/* A log of records written whole, cut at some point, then zeros. */
static void crash_case(const uint8_t *data, size_t size) {
    uint64_t seed = data[1];
    size_t n = size - 5, cut_spec = data[2] | (size_t)data[3] << 8;
    uint8_t *log = malloc(n * (255 * 401 + 64) + 1000 * 255 + 1);
    static uint8_t payload[255 * 401];
    FUZZ_CHECK(log != NULL);
    llog_writer w;
    llog_writer_init(&w, 0);
    size_t len = 0, first_whole = 0;
    uint64_t ends[64];
    for (size_t i = 0; i < n && i < 64; i++) {
        size_t rec = (size_t)data[5 + i] * 401;
        for (size_t j = 0; j < rec; j++) /* non-zero: zeros after a cut */
            payload[j] = (uint8_t)(1 + mix(&seed) % 255); /* read as such */
        len += llog_writer_add(&w, payload, rec, log + len, NULL);
        ends[i] = len;
        if (i == 0) /* where the first physical record ends */
            first_whole = LLOG_HEADER_SIZE +
                          (rec < LLOG_MAX_FRAGMENT ? rec : LLOG_MAX_FRAGMENT);
    }
    size_t cut = cut_spec % (len + 1), zeros = (size_t)data[4] * 1000;
    memset(log + cut, 0, zeros);
    llog_resume_result res = decide(log, cut + zeros);
    size_t nonzero = 0;
    for (size_t i = 0; i < cut; i++)
        nonzero |= log[i];
    if (cut > 0 && cut < first_whole && nonzero) {
        FUZZ_CHECK(res.refusal != NULL && res.refused_at == 0);
    } else {
        uint64_t expect = 0;
        for (size_t i = 0; i < n && i < 64 && ends[i] <= cut; i++)
            expect = ends[i];
        FUZZ_CHECK(res.refusal == NULL);
        FUZZ_CHECK(res.cut == expect && !res.fresh_block);
        uint64_t block_end =
            expect - expect % LLOG_BLOCK_SIZE + LLOG_BLOCK_SIZE;
        if (expect % LLOG_BLOCK_SIZE != 0 &&
            block_end - expect < LLOG_HEADER_SIZE && block_end <= cut)
            expect = block_end; /* a trailer */
        if (zeros == 0)
            FUZZ_CHECK(tail_end(LLOG_DIALECT_LEVELDB, log, cut) == expect);
    }
    free(log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || size > 8 * LLOG_BLOCK_SIZE)
        return 0;
    if (data[0] & 0x80) {
        if (size >= 6 && size <= 5 + 64)
            crash_case(data, size);
        return 0;
    }
    int count = 1 + data[0] % 3;
    uint64_t seed = data[1];
    const uint8_t *log = data + 2;
    size_t len = size - 2;

    decide_other_dialects(log, len);
    check_tail(log, len);
    seen_log old = {0};
    read_all(&whole, log, len, &old);
    llog_resume_result res = decide(log, len);
    if (res.refusal != NULL) { /* nothing is cut or appended */
        FUZZ_CHECK(res.refused_at <= len);
        seen_free(&old);
        return 0;
    }
    FUZZ_CHECK(res.cut >= old.clean_end && res.cut <= len);
    FUZZ_CHECK(res.clean_end == old.clean_end);
    check_nothing_valid_cut(LLOG_DIALECT_LEVELDB, log, len, res, &old);

    uint8_t *out = malloc(len + LLOG_BLOCK_SIZE + 3 * 3 * LLOG_BLOCK_SIZE);
    FUZZ_CHECK(out != NULL);
    uint64_t offsets[3];
    size_t out_len = append(out, log, res, count, seed, offsets);
    seen_log now = {0};
    read_all(&whole, out, out_len, &now);
    check_new_log(&old, &now, res, offsets, count);
    seen_free(&now);
    seen_free(&old);
    free(out);
    return 0;
}
