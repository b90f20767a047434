/*
 * fuzz_reader.c - the log reader on arbitrary bytes, in every mode and
 * every dialect (docs/rocksdb.md).
 *
 * Input: an 8-byte header choosing the options, then the log itself.
 *
 *   byte 0     bit 0: verify_checksums off, bit 1: sequential,
 *              bit 2: a range end is given,
 *              bits 3-4: the dialect (0 LevelDB, 1 RocksDB, 2 Pebble,
 *              3 RocksDB with the log number given),
 *              bits 5-6: the recovery mode (llog_recovery's order),
 *              bit 7: the log number is given (any dialect but LevelDB)
 *   bytes 1-3  start (little-endian), taken modulo (log length + 2 blocks)
 *   bytes 4-6  end, likewise (only with bit 2)
 *   byte 7     seed of the growth steps; its low 4 bits are the log number
 *              when one is given
 *
 * An all-zero header is the default read: whole log, checksums on, in
 * LevelDB's dialect (whose events depend on bits 5-6 only through their
 * verdicts, and not at all on bit 7).
 *
 * Checks, besides what fuzz_common.h's drive() checks on every event:
 * - reading again at EOF changes nothing;
 * - following the log while it grows (the reader sees ever longer prefixes
 *   and is driven again at each EOF) returns exactly the records of reading
 *   it whole, and the same corruptions, except that a checksum mismatch drops
 *   the bytes to the end of the block as buffered when it was found;
 * - a sequential read and a seekable one see the same thing, and so do
 *   reads in place and reads taking runs of records in bulk;
 * - cutting [start, end) at a point derived from the input and reading both
 *   halves yields the records and the corruptions of the whole range, each
 *   exactly once, by the half in which it begins: in LevelDB's dialect, and
 *   in the others in "skip" mode (in the other modes an end of the log
 *   before a range's start ends nothing for that range, so a later range
 *   may read what a whole read never reaches);
 * - reads of the same range learn the same log number, and see a
 *   recyclable record or not alike (but see the known core bugs below);
 * - every corruption and torn tail carries its recovery mode's verdict
 *   (drive() checks it against docs/recovery.md's table), and in LevelDB's
 *   dialect the mode changes nothing else: a read in each other mode sees
 *   the same events.
 */
#include "fuzz_common.h"
#include "log_detect.h"
#include "log_regions.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    llog_crc32c_init(1);
    return 0;
}

static int same_event(const seen_event *a, const seen_event *b, int exact) {
    if (a->is_record != b->is_record || a->offset != b->offset)
        return 0;
    if (a->is_record)
        return a->size == b->size && a->hash == b->hash;
    if (strcmp(a->reason, b->reason) != 0)
        return 0;
    return !exact || a->size == b->size ||
           strcmp(a->reason, "checksum mismatch") == 0;
}

/* What check_same compares besides the events: exact sizes (else a
 * checksum mismatch may drop fewer bytes), and the log number learnt (and
 * whether a recyclable record was seen). */
#define SAME_SIZES 1
#define SAME_NUMBERS 2

/* The two reads saw the same events; `what` names the comparison. */
static void check_same(const seen_log *a, const seen_log *b, int how,
                       const char *what) {
    int exact = how & SAME_SIZES;
    int same = a->n == b->n && a->torn == b->torn;
    if (how & SAME_NUMBERS)
        same = same && a->has_log_number == b->has_log_number &&
               a->log_number == b->log_number && a->recycled == b->recycled;
    for (size_t i = 0; same && i < a->n; i++)
        same = same_event(&a->ev[i], &b->ev[i], exact);
    if (!same) {
        fprintf(stderr,
                "%s: %zu events (torn tail: %d, log number %d/%llu, "
                "recycled %d) against %zu (%d, %d/%llu, %d)\n",
                what, a->n, a->torn, a->has_log_number,
                (unsigned long long)a->log_number, a->recycled, b->n, b->torn,
                b->has_log_number, (unsigned long long)b->log_number,
                b->recycled);
        for (size_t i = 0; i < a->n || i < b->n; i++) {
            const seen_event *e = i < a->n ? &a->ev[i] : &b->ev[i];
            fprintf(stderr, "  %s %s at %llu, %llu bytes %s\n",
                    i < a->n ? "first: " : "second:",
                    e->is_record ? "record" : "corruption",
                    (unsigned long long)e->offset, (unsigned long long)e->size,
                    e->reason);
            if (i < a->n && i < b->n &&
                !same_event(&a->ev[i], &b->ev[i], exact))
                fprintf(stderr, "  second: %s at %llu, %llu bytes %s\n",
                        b->ev[i].is_record ? "record" : "corruption",
                        (unsigned long long)b->ev[i].offset,
                        (unsigned long long)b->ev[i].size, b->ev[i].reason);
        }
    }
    FUZZ_CHECK(same);
}

/* Checks that `part` is the events of `whole` whose offset lies in [lo, hi),
 * in the same order. */
static void check_part(const seen_log *part, const seen_log *whole,
                       uint64_t lo, uint64_t hi) {
    size_t k = 0;
    for (size_t i = 0; i < whole->n; i++) {
        if (whole->ev[i].offset < lo || whole->ev[i].offset >= hi)
            continue;
        FUZZ_CHECK(k < part->n);
        FUZZ_CHECK(same_event(&part->ev[k], &whole->ev[i], 1));
        k++;
    }
    FUZZ_CHECK(k == part->n);
}

/* Splitting the range at `cut` loses and duplicates nothing: each half sees
 * exactly the records and reports of the whole read that begin in it. */
static void check_split(const llog_reader_options *opt, const uint8_t *log,
                        size_t len, uint64_t cut, const seen_log *whole) {
    llog_reader_options left = *opt, right = *opt;
    left.end = cut;
    right.start = cut;
    seen_log a = {0}, b = {0};
    read_all(&left, log, len, &a);
    read_all(&right, log, len, &b);
    check_part(&a, whole, opt->start, cut);
    check_part(&b, whole, cut, opt->end);
    seen_free(&a);
    seen_free(&b);
}

/* The region walker (log_regions.h) tiles every block: regions follow one
 * another to the block's end, a record covers its header and payload, and
 * only a record (of this log or another) is followed by more. */
static void check_regions(const llog_reader_options *opt, const uint8_t *log,
                          size_t len) {
    llog_regions w;
    llog_regions_init(&w, opt->dialect, opt->verify_checksums,
                      opt->has_log_number, opt->log_number);
    for (size_t at = 0; at < len; at += LLOG_BLOCK_SIZE) {
        size_t n = len - at < LLOG_BLOCK_SIZE ? len - at : LLOG_BLOCK_SIZE;
        llog_regions_feed(&w, log + at, n, n < LLOG_BLOCK_SIZE);
        llog_region_info r;
        size_t next = 0;
        int ended = 0;
        while (llog_regions_next(&w, &r)) {
            FUZZ_CHECK(!ended && r.at == next && r.size > 0 &&
                       r.size <= n - r.at);
            int record =
                r.kind == LLOG_KIND_RECORD || r.kind == LLOG_KIND_OTHER_LOG;
            FUZZ_CHECK(!record || r.size == r.h.header_size + r.h.length);
            FUZZ_CHECK(record || r.at + r.size == n);
            FUZZ_CHECK(r.kind != LLOG_KIND_TORN || n < LLOG_BLOCK_SIZE);
            ended = !record;
            next = r.at + r.size;
        }
        FUZZ_CHECK(next == n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cursor c = {data, size};
    unsigned flags = (unsigned)take(&c, 1);
    uint64_t start_raw = take(&c, 3), end_raw = take(&c, 3);
    uint64_t seed = take(&c, 1);
    const uint8_t *log = c.p;
    size_t len = c.left;

    llog_reader_options opt = {0};
    opt.verify_checksums = !(flags & 1);
    opt.sequential = (flags & 2) != 0;
    opt.start = start_raw % (len + 2 * LLOG_BLOCK_SIZE);
    opt.end =
        (flags & 4) ? end_raw % (len + 2 * LLOG_BLOCK_SIZE) : LLOG_NO_END;
    unsigned dialect = (flags >> 3) & 3;
    opt.dialect = dialect == 3 ? LLOG_DIALECT_ROCKSDB : (llog_dialect)dialect;
    opt.recovery = (llog_recovery)((flags >> 5) & 3);
    opt.has_log_number = dialect == 3 || (flags & 0x80) != 0;
    opt.log_number = opt.has_log_number ? seed & 15 : 0;

    /* Detection reads any bytes, never past them, to a verdict and why. */
    llog_detection det =
        llog_detect_dialect(log, len, opt.has_log_number, opt.log_number);
    FUZZ_CHECK(det.reason != NULL && det.dialect <= LLOG_DIALECT_COUNT);
    check_regions(&opt, log, len);

    seen_log whole = {0};
    read_all(&opt, log, len, &whole);
    /* DONE only at a range's end, or at a Pebble log's trailer */
    FUZZ_CHECK(!whole.done || opt.end != LLOG_NO_END ||
               opt.dialect == LLOG_DIALECT_PEBBLE);

    /* Told the dialect by block 0 (options.detect), the reader reads as
     * one made in the dialect detection names (LevelDB's for none, with no
     * log number: its records carry none). */
    llog_reader_options told = opt, detect = opt;
    told.dialect =
        det.dialect == LLOG_DIALECT_COUNT ? LLOG_DIALECT_LEVELDB : det.dialect;
    told.has_log_number =
        told.dialect != LLOG_DIALECT_LEVELDB && opt.has_log_number;
    detect.detect = 1;
    detect.dialect = told.dialect; /* (ignored by the core: the harness's) */
    seen_log named = {0}, detected = {0};
    read_all(&told, log, len, &named);
    read_all(&detect, log, len, &detected);
    check_same(&named, &detected, SAME_SIZES | SAME_NUMBERS,
               "reading told by block 0 and in the dialect told differ");
    seen_free(&named);
    seen_free(&detected);

    /* The other way of reaching blocks gives the same answer. */
    llog_reader_options other = opt;
    other.sequential = !opt.sequential;
    seen_log alt = {0};
    read_all(&other, log, len, &alt);
    /* A known limitation (docs/rocksdb.md, "Ranges"): a seekable range of
     * another dialect past block 0 learns what the log states (its log
     * number, whether records were read before it) from a walk of the
     * blocks before it; in crafted logs mixing LevelDB-layout and
     * recyclable records with damage (no writer makes them), that walk can
     * learn otherwise than a read from block 0 (tests/fuzz: 33 inputs, 32
     * with checksums off). Such ranges are not compared with it. */
    int prologue =
        opt.dialect != LLOG_DIALECT_LEVELDB && opt.start >= LLOG_BLOCK_SIZE;
    if (!prologue)
        check_same(&whole, &alt, SAME_SIZES | SAME_NUMBERS,
                   "reading sequentially and reading by seeking differ");
    seen_free(&alt);

    /* Reading records' payloads in place (as the extension does from
     * files) gives the same answer too. */
    seen_log placed = {0};
    read_in_place(&opt, log, len, &placed);
    check_same(&whole, &placed, SAME_SIZES | SAME_NUMBERS,
               "reading in place and reading by copying differ");
    seen_free(&placed);

    /* Reading records in bulk where the reader offers runs of them gives
     * the same answer (the run's limits from the seed). */
    seen_log runs = {0};
    read_runs(&opt, log, len, 1 + seed % 64, 1 + (seed * 997) % 40000, &runs);
    check_same(&whole, &runs, SAME_SIZES | SAME_NUMBERS,
               "reading in runs and reading record by record differ");
    seen_free(&runs);

    /* In LevelDB's dialect a mode decides only its verdicts on damage. */
    for (unsigned m = 0;
         opt.dialect == LLOG_DIALECT_LEVELDB && m < LLOG_RECOVERY_COUNT; m++) {
        if (m == (unsigned)opt.recovery)
            continue;
        llog_reader_options mode = opt;
        mode.recovery = (llog_recovery)m;
        seen_log in_mode = {0};
        read_all(&mode, log, len, &in_mode);
        check_same(&whole, &in_mode, SAME_SIZES | SAME_NUMBERS,
                   "reading in two recovery modes differs");
        seen_free(&in_mode);
    }

    seen_log grown = {0};
    read_growing(&opt, log, len, seed, &grown);
    /* (the known bugs above: a seekable range past block 0, followed) */
    if (!prologue || opt.sequential)
        check_same(&whole, &grown, SAME_NUMBERS,
                   "reading whole and following as it grows differ");
    seen_free(&grown);

    uint64_t hi = opt.end == LLOG_NO_END ? len + 1 : opt.end;
    /* Known core bug (tests/c/test_dialects_reading.c,
     * test_ranges_after_pebble_trailer_match_whole): a Pebble trailer ends
     * the log in every mode, but a range that starts after it reads on. */
    int splits = (opt.dialect == LLOG_DIALECT_LEVELDB ||
                  opt.recovery == LLOG_RECOVER_SKIP) &&
                 !pebble_trailer_possible(&opt, &whole, log, len);
    if (splits && hi > opt.start) {
        uint64_t cut =
            opt.start + (seed * 2654435761u + len) % (hi - opt.start);
        /* (the known bugs above: a seekable range past block 0) */
        if (opt.dialect == LLOG_DIALECT_LEVELDB || opt.sequential ||
            cut < LLOG_BLOCK_SIZE)
            check_split(&opt, log, len, cut, &whole);
    }
    seen_free(&whole);
    return 0;
}
