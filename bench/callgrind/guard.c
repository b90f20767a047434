/*
 * guard.c - a fixed workload whose instruction counts are budgeted.
 *
 * Builds with the C core (every .c file of csrc/core) and runs one phase,
 * chosen by argv[1]:
 *
 *   encode     encode the log into memory (what Writer.write does per record)
 *   decode     decode it again, feeding 32 KiB blocks from memory (Reader)
 *   encode-runs   encode it as write_many from Arrow does: runs of short
 *                 records at once (llog_writer_add_run)
 *   decode-runs   decode it as Reader.iter_batches does: runs of records
 *                 read in bulk (llog_reader_next_run)
 *   verify     encode both ways (the logs must agree), decode both ways and
 *              compare every record and offset (not timed; check.py runs
 *              it natively first, so the budget is known to cover a
 *              correct round trip)
 *
 * A "-hw" suffix (encode-hw, decode-hw) uses the fastest instruction-based
 * CRC-32C the CPU offers (llog_crc32c_init(1)); it exits with status 3 when
 * there is none. Under valgrind that is the fastest one valgrind's CPU offers:
 * valgrind 3.19 has no AVX-512, so on this project's x86-64 machines it is
 * "sse4.2+pclmul" there while a native run uses "avx512+vpclmulqdq". The
 * line printed at the end names it; check.py keeps the name with the budget.
 *
 * check.py runs each phase under callgrind with --toggle-collect=phase_encode
 * (phase_decode, phase_encode_runs, phase_decode_runs), so only the
 * instructions executed inside that function and its callees are counted:
 * generating the records, building the CRC tables and, in decode mode,
 * encoding the log beforehand are not.
 *
 * The workload: 20,000 records from a xorshift PRNG, mostly 64..135 bytes,
 * every 50th 4 KiB, every 2000th 100 KiB (about 4.6 MB of payload).
 *
 * The counts must not depend on the machine:
 *
 * - The CRC is forced to the portable table-driven code
 *   (llog_crc32c_init(0)): the hardware path exists only on some CPUs and
 *   executes a different number of instructions, so a budget measured with
 *   it would not hold on CI's machine. The -hw phases have their own budget,
 *   checked only where the hardware path exists.
 * - glibc picks memcpy/memmove/memset/memcmp at run time (ifunc) by CPU
 *   features (SSE2, AVX2, EVEX, ERMS...), each variant executing a different
 *   number of instructions. This file defines its own plain versions, which
 *   the linker binds the core's calls to instead: copies are still counted
 *   (an extra copy in the core shows up in the budget) but the same way on
 *   every x86-64 CPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "log_reader.h"
#include "log_writer.h"

/* ---- CPU-independent string functions ----------------------------------- */

/* The loops below must not be turned back into calls to these very
 * functions; check.py also passes -fno-tree-loop-distribute-patterns. */
#define NO_PATTERNS                                                           \
    __attribute__((optimize("no-tree-loop-distribute-patterns")))

NO_PATTERNS void *memcpy(void *restrict dst, const void *restrict src,
                         size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, s, 8);
        __builtin_memcpy(d, &v, 8);
        d += 8;
        s += 8;
        n -= 8;
    }
    while (n--)
        *d++ = *s++;
    return dst;
}

NO_PATTERNS void *memmove(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d <= s || d >= s + n) {
        while (n--)
            *d++ = *s++;
    } else {
        while (n--)
            d[n] = s[n];
    }
    return dst;
}

NO_PATTERNS void *memset(void *dst, int c, size_t n) {
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

NO_PATTERNS int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *p = a, *q = b;
    for (; n > 0; n--, p++, q++)
        if (*p != *q)
            return *p < *q ? -1 : 1;
    return 0;
}

/* ---- the workload --------------------------------------------------------
 */

#define N_RECORDS 20000
#define WRITER_BUFFER 65536 /* the binding's default buffer */

static uint32_t rng_state = 0x2545F491u;

static uint32_t rng(void) { /* xorshift32 */
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return rng_state = x;
}

static size_t record_len(uint32_t i) {
    if (i % 2000 == 1999)
        return 100 * 1024;
    if (i % 50 == 49)
        return 4096;
    return 64 + rng() % 72;
}

typedef struct {
    uint8_t *data; /* all payloads, back to back */
    size_t *start; /* record i is data[start[i] .. start[i] + len[i]) */
    size_t *len;
    uint64_t *offsets; /* what the writer reported */
    uint8_t *log;      /* the encoded log */
    size_t log_len;
    size_t log_cap;
    uint8_t *runs_log; /* the same, encoded in runs */
    size_t runs_len;
    size_t total; /* payload bytes */
} workload;

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "guard: out of memory\n");
        exit(2);
    }
    return p;
}

static void generate(workload *w) {
    w->start = xmalloc(N_RECORDS * sizeof *w->start);
    w->len = xmalloc(N_RECORDS * sizeof *w->len);
    w->offsets = xmalloc(N_RECORDS * sizeof *w->offsets);
    size_t total = 0;
    for (uint32_t i = 0; i < N_RECORDS; i++) {
        w->start[i] = total;
        w->len[i] = record_len(i);
        total += w->len[i];
    }
    w->data = xmalloc(total);
    for (size_t k = 0; k < total; k++)
        w->data[k] = (uint8_t)(rng() >> 24);
    /* Headers and trailers add well under 1%; be generous. */
    w->log_cap = total + total / 16 + 65536;
    w->log = xmalloc(w->log_cap);
    w->runs_log = xmalloc(w->log_cap);
    w->total = total;
}

/* A record larger than the binding's buffer, fragment by fragment, prefix
 * and payload copied separately. Returns where the next record goes. */
__attribute__((always_inline)) static inline uint8_t *
encode_fragments(llog_writer *wr, const uint8_t *p, size_t n, uint8_t *out,
                 uint64_t *offset) {
    llog_fragment f;
    int first = 1;
    do {
        llog_writer_fragment(wr, p, n, first, &f);
        if (first)
            *offset = f.header_offset;
        memcpy(out, f.prefix, f.prefix_len);
        out += f.prefix_len;
        memcpy(out, p, f.payload_len);
        out += f.payload_len;
        p += f.payload_len;
        n -= f.payload_len;
        first = 0;
    } while (n > 0);
    return out;
}

/* The writer as Writer.write drives it, a record at a time: one
 * llog_writer_add when the encoding fits the buffer, else fragments. */
__attribute__((noinline)) size_t phase_encode(workload *w) {
    llog_writer wr;
    llog_writer_init(&wr, 0);
    uint8_t *out = w->log;
    for (uint32_t i = 0; i < N_RECORDS; i++) {
        const uint8_t *p = w->data + w->start[i];
        size_t n = w->len[i];
        if (llog_writer_encoded_size(&wr, n) <= WRITER_BUFFER) {
            out += llog_writer_add(&wr, p, n, out, &w->offsets[i]);
            continue;
        }
        out = encode_fragments(&wr, p, n, out, &w->offsets[i]);
    }
    w->log_len = (size_t)(out - w->log);
    return w->log_len;
}

/* The writer as write_many from Arrow drives it: records in groups, runs
 * of whole short ones encoded at once (llog_writer_add_run), any other
 * alone; into w->runs_log. */
__attribute__((noinline)) size_t phase_encode_runs(workload *w) {
    const uint8_t *data[LLOG_WRITER_RUN];
    size_t len[LLOG_WRITER_RUN], used = 0;
    llog_writer wr;
    llog_writer_init(&wr, 0);
    for (uint32_t i = 0; i < N_RECORDS;) {
        size_t m =
            N_RECORDS - i < LLOG_WRITER_RUN ? N_RECORDS - i : LLOG_WRITER_RUN;
        for (size_t j = 0; j < m; j++) {
            data[j] = w->data + w->start[i + j];
            len[j] = w->len[i + j];
        }
        size_t written, room = w->log_cap - used;
        size_t k = llog_writer_add_run(&wr, data, len, m, w->runs_log + used,
                                       room, &written);
        used += written;
        if (k == 0) { /* cut at a block's end: alone, as Writer.write */
            uint64_t offset;
            uint8_t *at = w->runs_log + used;
            if (llog_writer_encoded_size(&wr, len[0]) <= WRITER_BUFFER)
                used += llog_writer_add(&wr, data[0], len[0], at, &offset);
            else
                used = (size_t)(encode_fragments(&wr, data[0], len[0], at,
                                                 &offset) -
                                w->runs_log);
            k = 1;
        }
        i += (uint32_t)k;
    }
    w->runs_len = used;
    return used;
}

typedef struct {
    uint64_t records, bytes, offset_sum, byte_sum, corruptions;
} tally;

/* Counts one record (the binding's per-record work); with check set,
 * compares it with what was written. 0, or -1 when it differs. */
static inline int take_record(const workload *w, tally *t, int check,
                              uint64_t offset, const uint8_t *data,
                              size_t len) {
    uint64_t i = t->records++;
    t->bytes += len;
    t->offset_sum += offset;
    t->byte_sum += len ? data[0] + data[len - 1] : 0;
    if (check &&
        (i >= N_RECORDS || len != w->len[i] || offset != w->offsets[i] ||
         memcmp(data, w->data + w->start[i], len) != 0)) {
        fprintf(stderr, "guard: record %llu differs\n", (unsigned long long)i);
        return -1;
    }
    return 0;
}

/* Feeds the block the reader wants, from the log in memory. */
static inline void feed(llog_reader *r, const workload *w) {
    uint64_t at = llog_reader_wanted(r);
    size_t len = 0;
    if (at < w->log_len)
        len = w->log_len - at < LLOG_BLOCK_SIZE ? w->log_len - at
                                                : LLOG_BLOCK_SIZE;
    llog_reader_feed(r, len ? w->log + at : NULL, len);
}

/* One event of the general path: 1 to go on, 0 at the end (ok set when it
 * is a clean EOF), -1 when a record differs. */
static inline int take_event(llog_reader *r, const workload *w, tally *t,
                             int check, int *ok) {
    llog_event ev;
    llog_reader_next(r, &ev);
    if (ev.kind == LLOG_EV_NEED_BLOCK)
        feed(r, w);
    else if (ev.kind == LLOG_EV_RECORD)
        return take_record(w, t, check, ev.offset, ev.data, ev.len) < 0 ? -1
                                                                        : 1;
    else if (ev.kind == LLOG_EV_CORRUPTION)
        t->corruptions++;
    else { /* EOF, DONE or ERROR */
        *ok = ev.kind == LLOG_EV_EOF && !ev.torn;
        return 0;
    }
    return 1;
}

/* The reader as the binding drives it over a buffer, a record at a time
 * (for rec in Reader). With check set, every record is compared with what
 * was written (verify mode only). */
__attribute__((noinline)) int phase_decode(const workload *w, tally *t,
                                           int check) {
    llog_reader_options opt = {.end = LLOG_NO_END, .verify_checksums = 1};
    llog_reader *r = llog_reader_new(&opt);
    if (r == NULL)
        return -1;
    int ok = 0, rc;
    while ((rc = take_event(r, w, t, check, &ok)) > 0)
        ;
    llog_reader_free(r);
    return rc == 0 && ok ? 0 : -1;
}

/* The reader as Reader.iter_batches drives it: runs of whole records read
 * in bulk into Arrow-like columns (llog_reader_next_run), the general path
 * for the rest. */
__attribute__((noinline)) int phase_decode_runs(const workload *w, tally *t,
                                                int check, llog_run *run) {
    llog_reader_options opt = {.end = LLOG_NO_END, .verify_checksums = 1};
    llog_reader *r = llog_reader_new(&opt);
    if (r == NULL)
        return -1;
    int ok = 0, rc = 1;
    while (rc > 0) {
        run->n = run->data_len = 0;
        size_t k = llog_reader_next_run(r, run);
        for (size_t i = 0; i < k && rc > 0; i++)
            if (take_record(w, t, check, run->offsets[i],
                            run->data + run->ends[i],
                            (size_t)(run->ends[i + 1] - run->ends[i])) < 0)
                rc = -1;
        if (k == 0)
            rc = take_event(r, w, t, check, &ok);
    }
    llog_reader_free(r);
    return rc == 0 && ok ? 0 : -1;
}

/* The decoding phase of mode (by records or in runs); 0, or 1 (reported). */
static int decode(const workload *w, int runs, int check, tally *t) {
    enum { MOST = LLOG_BLOCK_SIZE / LLOG_HEADER_SIZE + 1 };
    static uint64_t offsets[MOST];
    static int64_t ends[MOST + 1];
    static uint8_t data[LLOG_BLOCK_SIZE];
    llog_run run = {offsets, ends, data, 0, MOST, 0, SIZE_MAX};
    *t = (tally){0, 0, 0, 0, 0};
    int rc = runs ? phase_decode_runs(w, t, check, &run)
                  : phase_decode(w, t, check);
    if (rc != 0 || t->records != N_RECORDS || t->corruptions != 0) {
        fprintf(stderr,
                "guard: decoding failed (%llu records, %llu corruptions)\n",
                (unsigned long long)t->records,
                (unsigned long long)t->corruptions);
        return 1;
    }
    return 0;
}

/* verify: both encodings agree and both decodings read back every record.
 * 0, or 1 (reported). */
static int verify_all(workload *w, tally *t) {
    if (phase_encode_runs(w) != w->log_len ||
        memcmp(w->runs_log, w->log, w->log_len) != 0) {
        fprintf(stderr, "guard: encoding in runs differs\n");
        return 1;
    }
    return decode(w, 1, 1, t) || decode(w, 0, 1, t);
}

int main(int argc, char **argv) {
    static const char *const modes[] = {"encode", "decode", "verify",
                                        "encode-runs", "decode-runs"};
    const char *mode = argc > 1 ? argv[1] : "";
    size_t mlen = strlen(mode);
    int hw = mlen > 3 && strcmp(mode + mlen - 3, "-hw") == 0;
    int m = 0;
    while (m < 5 && (strlen(modes[m]) != mlen - (hw ? 3 : 0) ||
                     strncmp(mode, modes[m], strlen(modes[m])) != 0))
        m++;
    if (m == 5) {
        fprintf(stderr, "usage: guard encode|decode|verify|encode-runs|"
                        "decode-runs[-hw]\n");
        return 2;
    }
    if (hw && !llog_crc32c_hardware_available()) {
        printf("guard: no hardware CRC-32C here\n");
        return 3;
    }
    llog_crc32c_init(hw);

    workload w;
    generate(&w);
    size_t log_len = m == 3 ? phase_encode_runs(&w) : phase_encode(&w);
    if (m == 0 || m == 3) {
        printf("guard %s: %d records, %zu log bytes, crc %s\n", mode,
               N_RECORDS, log_len, llog_crc32c_implementation());
        return 0;
    }
    tally t;
    if (m == 2 ? verify_all(&w, &t) : decode(&w, m == 4, 0, &t))
        return 1;
    printf("guard %s: %llu records, %llu payload bytes, %zu log bytes, digest "
           "%llx, crc %s\n",
           mode, (unsigned long long)t.records, (unsigned long long)t.bytes,
           log_len, (unsigned long long)(t.offset_sum ^ t.byte_sum),
           llog_crc32c_implementation());
    return 0;
}
