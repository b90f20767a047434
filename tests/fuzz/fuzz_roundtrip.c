/*
 * fuzz_roundtrip.c - the writer, then the reader, on arbitrary record lists.
 *
 * Input:
 *   byte 0      bit 0: verify_checksums off, bit 1: sequential reads
 *   bytes 1-2   where in its block the first list's log should end (the
 *               list gets one or two filler records that end it there, when
 *               a clean writer can end a log there: 0 or 7..32767)
 *   byte 3      how many of the records form the first list
 *   bytes 4-11  a starting log length for the writer alone (any 50-bit value)
 *   byte 12     seed of the growth steps and of the split point
 *   then 2 bytes per record: bits 14-15 choose a size class (tiny, around a
 *   block's payload room, up to 4 blocks, up to 16383), the rest the size;
 *   payload bytes come from a generator seeded by the spec.
 *
 * The first list is written from offset 0 and the second by a new writer
 * resuming at the first one's length (llog_writer_init(w, length)), as
 * appending to an existing log does. Checks:
 * - llog_writer_add and fragment-by-fragment llog_writer_fragment produce
 *   the same bytes and offsets, and llog_writer_encoded_size predicts them;
 *   so does llog_writer_add_run, for the records it takes, with any room;
 * - the bytes follow the format: fragments never cross a block, none starts
 *   in the last 6 bytes of a block (those are zero), each non-final fragment
 *   fills its block, types go FULL or FIRST MIDDLE* LAST, CRCs match;
 *   this also for the writer started at an arbitrary length;
 * - the reader returns every record, in order, at its offset, with no
 *   corruption and no torn tail, read whole, read from the second list's
 *   start, read while the log grows, and read in two ranges cut anywhere.
 */
#include "fuzz_common.h"

#define MAX_RECORDS 64
#define MAX_TOTAL (1u << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    llog_crc32c_init(1);
    return 0;
}

typedef struct {
    uint8_t *data;
    size_t len;
    uint64_t offset; /* where the writer put it */
} record;

static size_t spec_size(uint64_t k) {
    switch (k >> 14) {
    case 0:
        return (size_t)(k & 0xff);
    case 1:
        return LLOG_MAX_FRAGMENT - 7 + (size_t)(k & 15);
    case 2:
        return (size_t)(k & 0x3fff) * 8;
    default:
        return (size_t)(k & 0x3fff);
    }
}

static void fill(record *rec, size_t len, uint64_t seed) {
    rec->len = len;
    rec->data = malloc(len ? len : 1);
    FUZZ_CHECK(rec->data != NULL);
    for (size_t i = 0; i < len; i++)
        rec->data[i] = (uint8_t)(mix(&seed) >> 56);
}

/*
 * Appends recs to buf (at log offset `at`, buf holding `at - base` bytes
 * already) with a writer initialized at `at`, once with llog_writer_add and
 * once fragment by fragment; checks both agree. Returns the new length.
 */
static size_t write_list(uint8_t *buf, uint64_t base, uint64_t at,
                         record *recs, size_t n) {
    llog_writer w, wf;
    llog_writer_init(&w, at);
    llog_writer_init(&wf, at);
    uint8_t *out = buf + (at - base);
    for (size_t i = 0; i < n; i++) {
        uint64_t predicted = llog_writer_encoded_size(&w, recs[i].len);
        size_t got = llog_writer_add(&w, recs[i].data, recs[i].len, out,
                                     &recs[i].offset);
        FUZZ_CHECK(got == predicted);
        FUZZ_CHECK(w.offset == at + got);
        /* The same record, one fragment at a time. */
        const uint8_t *p = recs[i].data;
        size_t left = recs[i].len, k = 0;
        int first = 1;
        do {
            llog_fragment f;
            llog_writer_fragment(&wf, p, left, first, &f);
            if (first)
                FUZZ_CHECK(f.header_offset == recs[i].offset);
            FUZZ_CHECK(f.payload_len <= left);
            FUZZ_CHECK(k + f.prefix_len + f.payload_len <= got);
            FUZZ_CHECK(memcmp(out + k, f.prefix, f.prefix_len) == 0);
            k += f.prefix_len;
            FUZZ_CHECK(f.payload_len == 0 ||
                       memcmp(out + k, p, f.payload_len) == 0);
            k += f.payload_len;
            p += f.payload_len;
            left -= f.payload_len;
            first = 0;
        } while (left > 0);
        FUZZ_CHECK(k == got && wf.offset == w.offset);
        out += got;
        at += got;
    }
    return (size_t)(at - base);
}

/*
 * Encodes recs again from log offset `at`, in runs (llog_writer_add_run,
 * whose room is capped at `cap` bytes, then llog_writer_add for each record
 * it leaves) into an exactly sized buffer: the same `len` bytes as want.
 */
static void check_runs(const uint8_t *want, size_t len, uint64_t at,
                       const record *recs, size_t n, size_t cap) {
    uint8_t *out = malloc(len + 1);
    const uint8_t *data[LLOG_WRITER_RUN];
    size_t lens[LLOG_WRITER_RUN], done = 0;
    FUZZ_CHECK(out != NULL);
    llog_writer w;
    llog_writer_init(&w, at);
    for (size_t i = 0; i < n;) {
        size_t m = n - i < LLOG_WRITER_RUN ? n - i : LLOG_WRITER_RUN;
        for (size_t j = 0; j < m; j++) {
            data[j] = recs[i + j].data;
            lens[j] = recs[i + j].len;
        }
        size_t room = len - done < cap ? len - done : cap, written;
        size_t k =
            llog_writer_add_run(&w, data, lens, m, out + done, room, &written);
        FUZZ_CHECK(k <= m && written <= room);
        done += written;
        if (k == 0) { /* cut in fragments, or no room: the general way */
            FUZZ_CHECK(llog_writer_encoded_size(&w, lens[0]) <= len - done);
            done += llog_writer_add(&w, data[0], lens[0], out + done, NULL);
            k = 1;
        }
        i += k;
    }
    FUZZ_CHECK(done == len && w.offset == at + len);
    FUZZ_CHECK(memcmp(out, want, len) == 0);
    free(out);
}

/* Checks bytes enc (log offsets [at, at + len)) encode exactly recs. */
static void check_format(const uint8_t *enc, uint64_t at, size_t len,
                         const record *recs, size_t n) {
    uint64_t pos = at, end = at + len;
    for (size_t i = 0; i < n; i++) {
        size_t done = 0;
        int first = 1;
        for (;;) {
            size_t in = (size_t)(pos % LLOG_BLOCK_SIZE);
            if (LLOG_BLOCK_SIZE - in < LLOG_HEADER_SIZE) { /* trailer */
                for (size_t t = 0; t < LLOG_BLOCK_SIZE - in; t++)
                    FUZZ_CHECK(pos + t < end && enc[pos - at + t] == 0);
                pos += LLOG_BLOCK_SIZE - in;
                continue;
            }
            FUZZ_CHECK(pos + LLOG_HEADER_SIZE <= end);
            const uint8_t *h = enc + (pos - at);
            size_t flen = (size_t)h[4] | (size_t)h[5] << 8;
            unsigned type = h[6];
            FUZZ_CHECK(in + LLOG_HEADER_SIZE + flen <= LLOG_BLOCK_SIZE);
            FUZZ_CHECK(pos + LLOG_HEADER_SIZE + flen <= end);
            FUZZ_CHECK(llog_crc32c_extend(0, h + 6, 1 + flen) ==
                       llog_unmask_crc(llog_load32(h)));
            if (first) {
                FUZZ_CHECK(pos == recs[i].offset);
                FUZZ_CHECK(type == LLOG_FULL || type == LLOG_FIRST);
            } else {
                FUZZ_CHECK(type == LLOG_MIDDLE || type == LLOG_LAST);
            }
            FUZZ_CHECK(done + flen <= recs[i].len);
            FUZZ_CHECK(flen == 0 || memcmp(h + LLOG_HEADER_SIZE,
                                           recs[i].data + done, flen) == 0);
            done += flen;
            pos += LLOG_HEADER_SIZE + flen;
            if (type == LLOG_FULL || type == LLOG_LAST)
                break;
            /* A fragment that does not end the record fills its block. */
            FUZZ_CHECK(pos % LLOG_BLOCK_SIZE == 0);
            first = 0;
        }
        FUZZ_CHECK(done == recs[i].len);
    }
    FUZZ_CHECK(pos == end);
}

/* The reader returned exactly recs[0..n), at their offsets, and nothing else.
 */
static void check_read(const seen_log *s, const record *recs, size_t n) {
    FUZZ_CHECK(s->n == n);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(s->ev[i].is_record);
        FUZZ_CHECK(s->ev[i].offset == recs[i].offset);
        FUZZ_CHECK(s->ev[i].size == recs[i].len);
        FUZZ_CHECK(s->ev[i].hash == hash_bytes(recs[i].data, recs[i].len));
    }
    FUZZ_CHECK(!s->torn);
}

/*
 * Sizes of the records that, written at `at`, make the log end at in-block
 * offset `target` (0 or 7..32767); returns how many (1 or 2).
 */
static int fillers_for(uint64_t at, size_t target, size_t sizes[2]) {
    size_t in = (size_t)(at % LLOG_BLOCK_SIZE);
    if (LLOG_BLOCK_SIZE - in < LLOG_HEADER_SIZE)
        in = 0; /* the writer pads to the next block first */
    size_t room = LLOG_BLOCK_SIZE - in - LLOG_HEADER_SIZE;
    if (target == 0) {
        sizes[0] = room; /* one fragment filling the block */
    } else if (target >= in + LLOG_HEADER_SIZE) {
        sizes[0] = target - in - LLOG_HEADER_SIZE; /* a FULL in this block */
    } else if (target == LLOG_HEADER_SIZE) {
        /* Fill the block, then one empty record: a LAST is never empty. */
        sizes[0] = room;
        sizes[1] = 0;
        return 2;
    } else {
        sizes[0] = room + target - LLOG_HEADER_SIZE; /* FIRST, then LAST */
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cursor c = {data, size};
    unsigned flags = (unsigned)take(&c, 1);
    size_t target = (size_t)(take(&c, 2) % LLOG_BLOCK_SIZE);
    size_t n_first = (size_t)take(&c, 1);
    uint64_t any_start = take(&c, 8) & ((1ull << 50) - 1);
    uint64_t seed = take(&c, 1);

    record recs[MAX_RECORDS + 2];
    size_t n = 0, total = 0;
    while (c.left >= 2 && n < MAX_RECORDS) {
        uint64_t k = take(&c, 2);
        size_t len = spec_size(k);
        if (total + len > MAX_TOTAL)
            break;
        fill(&recs[n], len, k * 0x100000001B3ull + n);
        n++;
        total += len;
    }
    n_first %= n + 1;

    /* The first list, then a filler that ends it where the input says. */
    int with_filler = target == 0 || target >= LLOG_HEADER_SIZE;
    size_t cap = 2 * (total + 2 * LLOG_BLOCK_SIZE) + 1024;
    uint8_t *log = malloc(cap);
    FUZZ_CHECK(log != NULL);
    size_t len1 = write_list(log, 0, 0, recs, n_first);
    if (with_filler) {
        size_t sizes[2];
        int k = fillers_for(len1, target, sizes);
        memmove(&recs[n_first + k], &recs[n_first],
                (n - n_first) * sizeof *recs);
        for (int i = 0; i < k; i++)
            fill(&recs[n_first + i], sizes[i], seed + i);
        len1 = write_list(log, 0, len1, &recs[n_first], k);
        FUZZ_CHECK(len1 % LLOG_BLOCK_SIZE == target);
        n_first += k;
        n += k;
    }
    FUZZ_CHECK(len1 <= cap);
    /* The second list, by a writer resuming at the log's length. */
    size_t len = write_list(log, 0, len1, &recs[n_first], n - n_first);
    FUZZ_CHECK(len <= cap);
    check_format(log, 0, len, recs, n);
    check_runs(log, len, 0, recs, n, 1 + (size_t)(seed * 521) % 70000);

    /* The writer alone, starting at any length. */
    uint8_t *enc = malloc(cap);
    FUZZ_CHECK(enc != NULL);
    record shifted[MAX_RECORDS + 2];
    memcpy(shifted, recs, n * sizeof *recs);
    size_t enc_len = write_list(enc, any_start, any_start, shifted, n);
    check_format(enc, any_start, enc_len, shifted, n);
    check_runs(enc, enc_len, any_start, shifted, n, (size_t)-1);
    free(enc);

    llog_reader_options opt = {.end = LLOG_NO_END,
                               .verify_checksums = !(flags & 1),
                               .sequential = (flags & 2) != 0};
    seen_log s = {0};
    read_all(&opt, log, len, &s);
    check_read(&s, recs, n);
    FUZZ_CHECK(s.clean_end == (n ? len : 0));
    seen_free(&s);

    seen_log g = {0};
    read_growing(&opt, log, len, seed, &g);
    check_read(&g, recs, n);
    seen_free(&g);

    llog_reader_options second = opt;
    second.start = len1;
    seen_log t = {0};
    read_all(&second, log, len, &t);
    check_read(&t, &recs[n_first], n - n_first);
    seen_free(&t);

    uint64_t cut = (seed * 2654435761u + total) % (len + 1);
    size_t k = 0;
    while (k < n && recs[k].offset < cut)
        k++;
    llog_reader_options left = opt, right = opt;
    left.end = cut;
    right.start = cut;
    seen_log a = {0}, b = {0};
    read_all(&left, log, len, &a);
    read_all(&right, log, len, &b);
    check_read(&a, recs, k);
    check_read(&b, &recs[k], n - k);
    seen_free(&a);
    seen_free(&b);

    for (size_t i = 0; i < n; i++)
        free(recs[i].data);
    free(log);
    return 0;
}
