/*
 * test_core.c - unit tests of the plain-C core: CRC-32C, writer, reader.
 *
 * Usage: test_core path/to/tests/golden/vectors.txt
 *
 * No framework: the CHECK macros count passed and failed checks and print
 * file:line for every failure (the first few of each test); the last line of
 * output is "N passed, M failed" (counting checks) and the exit status is
 * nonzero when any check failed.
 *
 * Expected values come from FORMAT.md, log_reader.h and the golden vectors,
 * or from a small independent model in this file (a CRC built bit by bit and
 * a record encoder written from FORMAT.md), never from the code under test.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "log_format.h"
#include "log_reader.h"
#include "log_writer.h"

#define B LLOG_BLOCK_SIZE
#define H LLOG_HEADER_SIZE

/* ---- checks ------------------------------------------------------------- */

#define MAX_PRINTED 20 /* failures printed per test; the rest are counted */

static unsigned long long n_passed, n_failed;
static unsigned long long test_failures;
static const char *test_name = "";

static int pass(void) {
    n_passed++;
    return 1;
}

static int failure(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int failure(const char *file, int line, const char *fmt, ...) {
    n_failed++;
    test_failures++;
    if (test_failures <= MAX_PRINTED) {
        va_list ap;
        printf("%s:%d: %s: ", file, line, test_name);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    } else if (test_failures == MAX_PRINTED + 1) {
        printf("%s: further failures not shown\n", test_name);
    }
    fflush(stdout);
    return 0;
}

/* Context for the failure just printed (silent once failures are muted). */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...) {
    if (test_failures > MAX_PRINTED)
        return;
    va_list ap;
    printf("    ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static int check_true(int ok, const char *expr, const char *file, int line) {
    return ok ? pass() : failure(file, line, "CHECK(%s) failed", expr);
}

static int check_eq(unsigned long long a, unsigned long long b, const char *ea,
                    const char *eb, const char *file, int line) {
    if (a == b)
        return pass();
    return failure(file, line,
                   "CHECK_EQ(%s, %s): %llu (0x%llx) != %llu (0x%llx)", ea, eb,
                   a, a, b, b);
}

static int check_str(const char *a, const char *b, const char *ea,
                     const char *eb, const char *file, int line) {
    if (a != NULL && b != NULL && strcmp(a, b) == 0)
        return pass();
    return failure(file, line, "CHECK_STR(%s, %s): \"%s\" != \"%s\"", ea, eb,
                   a ? a : "(null)", b ? b : "(null)");
}

static int check_mem(const void *a, size_t alen, const void *b, size_t blen,
                     const char *ea, const char *eb, const char *file,
                     int line) {
    if (alen == blen && (alen == 0 || memcmp(a, b, alen) == 0))
        return pass();
    const uint8_t *x = a, *y = b;
    size_t i = 0;
    while (i < alen && i < blen && x[i] == y[i])
        i++;
    return failure(file, line,
                   "CHECK_MEM(%s, %s): lengths %zu and %zu, first difference "
                   "at byte %zu",
                   ea, eb, alen, blen, i);
}

#define CHECK(c) check_true((c) != 0, #c, __FILE__, __LINE__)
#define CHECK_EQ(a, b)                                                        \
    check_eq((unsigned long long)(a), (unsigned long long)(b), #a, #b,        \
             __FILE__, __LINE__)
#define CHECK_STR(a, b) check_str((a), (b), #a, #b, __FILE__, __LINE__)
#define CHECK_MEM(a, alen, b, blen)                                           \
    check_mem((a), (alen), (b), (blen), #a, #b, __FILE__, __LINE__)

static int tests_failed, tests_passed;

static void run_test(const char *name, void (*fn)(void)) {
    unsigned long long before = n_passed + n_failed;
    test_name = name;
    test_failures = 0;
    fn();
    if (test_failures)
        tests_failed++;
    else
        tests_passed++;
    printf("%s %s (%llu checks, %llu failed)\n",
           test_failures ? "FAIL" : "ok  ", name, n_passed + n_failed - before,
           test_failures);
    fflush(stdout);
}

#define RUN(fn) run_test(#fn, fn)

/* ---- small utilities ---------------------------------------------------- */

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) { /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void rnd_fill(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rnd() >> 56);
}

/* A growable byte buffer: logs are built in these. */
typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf;

static uint8_t *buf_grow(buf *b, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    uint8_t *at = b->p + b->len;
    b->len += n;
    return at;
}

static void buf_put(buf *b, const void *data, size_t n) {
    if (n > 0)
        memcpy(buf_grow(b, n), data, n);
}

static void buf_bytes(buf *b, int byte, size_t n) {
    if (n > 0)
        memset(buf_grow(b, n), byte, n);
}

/* Zero bytes up to the given log offset. */
static void buf_zero_to(buf *b, size_t offset) {
    if (!CHECK(offset >= b->len))
        return;
    buf_bytes(b, 0, offset - b->len);
}

static void buf_free(buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- the independent model ---------------------------------------------- */

static uint32_t ref_table[256];

/* CRC-32C one bit at a time: the definition (FORMAT.md). */
static uint32_t ref_crc_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

static void ref_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint8_t byte = (uint8_t)i;
        /* The table entry is the raw 8-step update of byte i. */
        ref_table[i] = ~ref_crc_bitwise(0xFFFFFFFFu, &byte, 1);
    }
}

/* The same CRC a byte at a time with one table: fast enough for megabytes. */
static uint32_t ref_crc(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++)
        crc = ref_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint32_t ref_mask(uint32_t c) {
    return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

/* Appends a raw header; returns its offset in b. */
static size_t put_header(buf *b, uint32_t masked, size_t length,
                         unsigned type) {
    size_t at = b->len;
    uint8_t *h = buf_grow(b, H);
    h[0] = (uint8_t)masked;
    h[1] = (uint8_t)(masked >> 8);
    h[2] = (uint8_t)(masked >> 16);
    h[3] = (uint8_t)(masked >> 24);
    h[4] = (uint8_t)(length & 0xff);
    h[5] = (uint8_t)((length >> 8) & 0xff);
    h[6] = (uint8_t)type;
    return at;
}

/* Appends a physical record with a correct checksum; returns its offset. */
static size_t put_phys(buf *b, unsigned type, const void *payload, size_t n) {
    uint8_t t = (uint8_t)type;
    uint32_t crc = ref_crc(ref_crc(0, &t, 1), payload, n);
    size_t at = put_header(b, ref_mask(crc), n, type);
    buf_put(b, payload, n);
    return at;
}

/* What a LevelDB writer appends for one record when the log holds `offset`
 * bytes (FORMAT.md, "Writing"); *first_header gets the record's offset. */
static size_t ref_encode(uint64_t offset, const uint8_t *data, size_t len,
                         buf *out, uint64_t *first_header) {
    size_t before = out->len;
    int first = 1;
    do {
        size_t left = B - (size_t)(offset % B);
        if (left < H) {
            buf_bytes(out, 0, left);
            offset += left;
            left = B;
        }
        size_t n = len < left - H ? len : left - H;
        unsigned type = first ? (n == len ? LLOG_FULL : LLOG_FIRST)
                              : (n == len ? LLOG_LAST : LLOG_MIDDLE);
        if (first)
            *first_header = offset;
        put_phys(out, type, data, n);
        offset += H + n;
        data += n;
        len -= n;
        first = 0;
    } while (len > 0);
    return out->len - before;
}

/* ---- golden vectors ----------------------------------------------------- */

typedef struct crc_vec {
    uint8_t *data;
    size_t len;
    uint32_t crc;
} crc_vec;

typedef struct mask_vec {
    uint32_t crc, masked;
} mask_vec;

typedef struct rec_vec {
    unsigned type;
    uint8_t *payload;
    size_t plen;
    uint8_t *rec;
    size_t rlen;
} rec_vec;

#define MAX_VECTORS 512

static struct {
    crc_vec crc[MAX_VECTORS];
    size_t ncrc;
    mask_vec mask[MAX_VECTORS];
    size_t nmask;
    rec_vec rec[MAX_VECTORS];
    size_t nrec;
} V;

static int hex_value(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Lowercase hex or "-" (empty) to bytes; 0 when malformed. */
static int unhex(const char *s, uint8_t **out, size_t *len) {
    size_t n = strlen(s);
    if (strcmp(s, "-") == 0)
        n = 0;
    else if (n == 0 || n % 2 != 0)
        return 0;
    uint8_t *p = xmalloc(n / 2);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(p);
            return 0;
        }
        p[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = p;
    *len = n / 2;
    return 1;
}

static int parse_vector_line(const char *line) {
    static char a[4096], b[4096];
    char kind[16];
    unsigned x, y;
    if (sscanf(line, "%15s", kind) != 1)
        return 0;
    if (strcmp(kind, "crc") == 0 && V.ncrc < MAX_VECTORS) {
        crc_vec *v = &V.crc[V.ncrc];
        if (sscanf(line, "crc %4095s %8x", a, &x) != 2 ||
            !unhex(a, &v->data, &v->len))
            return 0;
        v->crc = x;
        V.ncrc++;
        return 1;
    }
    if (strcmp(kind, "mask") == 0 && V.nmask < MAX_VECTORS) {
        if (sscanf(line, "mask %8x %8x", &x, &y) != 2)
            return 0;
        V.mask[V.nmask].crc = x;
        V.mask[V.nmask++].masked = y;
        return 1;
    }
    if (strcmp(kind, "record") == 0 && V.nrec < MAX_VECTORS) {
        rec_vec *v = &V.rec[V.nrec];
        if (sscanf(line, "record %u %4095s %4095s", &v->type, a, b) != 3 ||
            v->type > 255 || !unhex(a, &v->payload, &v->plen) ||
            !unhex(b, &v->rec, &v->rlen))
            return 0;
        V.nrec++;
        return 1;
    }
    return 0;
}

static int load_vectors(const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return 0;
    }
    char line[4096];
    int lineno = 0, ok = 1;
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        size_t n = strlen(line);
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        else if (!feof(f)) {
            printf("%s:%d: line too long\n", path, lineno);
            ok = 0;
            break;
        }
        if (n == 0 || line[0] == '#')
            continue;
        if (!parse_vector_line(line)) {
            printf("%s:%d: malformed vector: %s\n", path, lineno, line);
            ok = 0;
        }
    }
    fclose(f);
    return ok;
}

static void free_vectors(void) {
    for (size_t i = 0; i < V.ncrc; i++)
        free(V.crc[i].data);
    for (size_t i = 0; i < V.nrec; i++) {
        free(V.rec[i].payload);
        free(V.rec[i].rec);
    }
}

/* ---- CRC-32C ------------------------------------------------------------ */

/*
 * Every way to compute a CRC: the public entry points, then each compiled-in
 * implementation that runs on this CPU (llog_crc32c_impl_*).
 */
#define MAX_IMPLS 32
#define VIA_EXTEND (-1)
#define VIA_PORTABLE (-2)
#define VIA_HARDWARE (-3)

static struct {
    char name[64];
    int index; /* an implementation number, or one of VIA_* */
} crc_impls[MAX_IMPLS];
static size_t n_crc_impls;

static void list_crc_impls(void) {
    static const struct {
        const char *name;
        int index;
    } entry[] = {{"llog_crc32c_extend", VIA_EXTEND},
                 {"llog_crc32c_portable", VIA_PORTABLE},
                 {"llog_crc32c_hardware", VIA_HARDWARE}};
    n_crc_impls = 0;
    for (size_t i = 0; i < 3; i++) {
        snprintf(crc_impls[n_crc_impls].name, 64, "%s", entry[i].name);
        crc_impls[n_crc_impls++].index = entry[i].index;
    }
    for (int i = 0; i < llog_crc32c_impl_count() && n_crc_impls < MAX_IMPLS;
         i++) {
        if (!llog_crc32c_impl_usable(i))
            continue;
        snprintf(crc_impls[n_crc_impls].name, 64, "impl %d (%s)", i,
                 llog_crc32c_impl_name(i));
        crc_impls[n_crc_impls++].index = i;
    }
}

static uint32_t crc_by(size_t k, uint32_t crc, const void *data, size_t len) {
    switch (crc_impls[k].index) {
    case VIA_EXTEND:
        return llog_crc32c_extend(crc, data, len);
    case VIA_PORTABLE:
        return llog_crc32c_portable(crc, data, len);
    case VIA_HARDWARE:
        return llog_crc32c_hardware(crc, data, len);
    default:
        return llog_crc32c_impl_extend(crc_impls[k].index, crc, data, len);
    }
}

static void test_crc32c_vectors_whole(void) {
    CHECK(V.ncrc >= 20);
    for (size_t i = 0; i < V.ncrc; i++) {
        const crc_vec *v = &V.crc[i];
        /* The model itself agrees with the published values. */
        if (!CHECK_EQ(ref_crc_bitwise(0, v->data, v->len), v->crc) ||
            !CHECK_EQ(ref_crc(0, v->data, v->len), v->crc))
            note("vector %zu (%zu bytes)", i, v->len);
        for (size_t k = 0; k < n_crc_impls; k++)
            if (!CHECK_EQ(crc_by(k, 0, v->data, v->len), v->crc))
                note("%s, vector %zu (%zu bytes)", crc_impls[k].name, i,
                     v->len);
    }
    CHECK_EQ(llog_crc32c_extend(0, "123456789", 9), 0xE3069283u);
}

static void test_crc32c_empty_input_returns_crc_unchanged(void) {
    for (size_t k = 0; k < n_crc_impls; k++) {
        CHECK_EQ(crc_by(k, 0, NULL, 0), 0);
        CHECK_EQ(crc_by(k, 0x12345678u, NULL, 0), 0x12345678u);
        CHECK_EQ(crc_by(k, 0xFFFFFFFFu, "x", 0), 0xFFFFFFFFu);
    }
}

static void test_crc32c_vectors_in_chunks(void) {
    for (size_t i = 0; i < V.ncrc; i++) {
        const crc_vec *v = &V.crc[i];
        const uint8_t *d = v->data;
        size_t n = v->len;
        for (size_t k = 0; k < n_crc_impls; k++) {
            for (size_t cut = 0; cut <= n; cut++)
                if (!CHECK_EQ(
                        crc_by(k, crc_by(k, 0, d, cut), d + cut, n - cut),
                        v->crc))
                    note("%s, vector %zu, split at %zu", crc_impls[k].name, i,
                         cut);
            uint32_t c = 0;
            for (size_t j = 0; j < n; j++) /* byte by byte */
                c = crc_by(k, c, d + j, 1);
            CHECK_EQ(c, v->crc);
        }
        if (n > 64)
            continue;
        for (size_t a = 0; a <= n; a++) /* every three-way split */
            for (size_t b = a; b <= n; b++) {
                uint32_t c = llog_crc32c_extend(0, d, a);
                c = llog_crc32c_extend(c, d + a, b - a);
                c = llog_crc32c_extend(c, d + b, n - b);
                if (!CHECK_EQ(c, v->crc))
                    note("vector %zu, splits at %zu and %zu", i, a, b);
            }
    }
}

static void test_crc32c_vectors_at_every_alignment(void) {
    for (size_t i = 0; i < V.ncrc; i++) {
        const crc_vec *v = &V.crc[i];
        for (size_t align = 0; align < 64; align++) {
            /* Exactly sized: a read past the end is an ASan error. */
            uint8_t *m = xmalloc(align + v->len);
            memset(m, 0xA5, align);
            if (v->len > 0)
                memcpy(m + align, v->data, v->len);
            for (size_t k = 0; k < n_crc_impls; k++) {
                size_t half = v->len / 2;
                uint32_t c = crc_by(k, 0, m + align, half);
                if (!CHECK_EQ(crc_by(k, 0, m + align, v->len), v->crc) ||
                    !CHECK_EQ(crc_by(k, c, m + align + half, v->len - half),
                              v->crc))
                    note("%s, vector %zu, alignment %zu", crc_impls[k].name, i,
                         align);
            }
            free(m);
        }
    }
}

static void test_crc32c_portable_matches_model_every_length(void) {
    static const size_t aligns[] = {0, 1, 7, 63};
    for (size_t ai = 0; ai < sizeof aligns / sizeof aligns[0]; ai++) {
        size_t align = aligns[ai];
        uint8_t *m = xmalloc(align + 4096);
        rnd_fill(m, align + 4096);
        for (size_t len = 0; len <= 4096; len++) {
            const uint8_t *p = m + align + 4096 - len; /* ends at the end */
            uint32_t seed = (uint32_t)(len * 0x9E3779B1u);
            if (!CHECK_EQ(llog_crc32c_portable(seed, p, len),
                          ref_crc(seed, p, len)))
                note("length %zu, alignment %zu", len, align);
        }
        free(m);
    }
}

/* Every implementation equals the portable one on p[0..len). */
static int all_paths_agree(const uint8_t *p, size_t len, uint32_t seed) {
    uint32_t want = llog_crc32c_portable(seed, p, len);
    int ok = 1;
    for (size_t k = 0; k < n_crc_impls; k++)
        if (!CHECK_EQ(crc_by(k, seed, p, len), want)) {
            note("%s", crc_impls[k].name);
            ok = 0;
        }
    return ok;
}

static void test_crc32c_all_paths_agree_every_length_alignment(void) {
    if (!llog_crc32c_hardware_available())
        printf("    (no instruction-based CRC-32C on this CPU/build: only "
               "the portable code is compared)\n");
    for (size_t align = 0; align < 64; align++) {
        /* For each length the data ends exactly at the allocation's end, so
         * the start takes every offset mod 64 as align runs over 0..63, and
         * any over-read is caught by ASan. */
        uint8_t *m = xmalloc(align + 4096);
        rnd_fill(m, align + 4096);
        for (size_t len = 0; len <= 4096; len++) {
            const uint8_t *p = m + align + 4096 - len;
            if (!all_paths_agree(p, len,
                                 (uint32_t)(len * 0x9E3779B1u + align)))
                note("length %zu, start offset %zu", len, align + 4096 - len);
        }
        free(m);
    }
}

static void test_crc32c_all_paths_agree_around_block_sizes(void) {
    /* The three-stream paths take blocks of 3 x 2048, 3 x 256 and 3 x 64
     * bytes; folding takes 64-byte blocks, four at a time. */
    size_t max = 8 * 6144 + 64;
    uint8_t *m = xmalloc(max);
    rnd_fill(m, max);
    for (size_t len = 4097; len <= 20000; len += 7)
        if (!all_paths_agree(m + max - len, len, (uint32_t)len))
            note("length %zu", len);
    static const size_t bases[] = {
        64,         128,        192,      256,
        320,        768,        1536,     6144,
        6144 + 768, 6144 + 192, 2 * 6144, 3 * 6144 + 768 + 192 + 64,
        8 * 6144};
    for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++)
        for (size_t d = 0; d < 20; d++) {
            size_t len = bases[bi] + d - 10;
            for (size_t align = 0; align < 64; align += (d % 4 == 0) ? 1 : 21)
                if (len + align <= max &&
                    !all_paths_agree(m + align, len, (uint32_t)d))
                    note("length %zu at offset %zu", len, align);
        }
    free(m);
}

static void test_crc32c_large_buffers_all_paths_agree(void) {
    static const size_t sizes[] = {1u << 20, 3u * (1u << 20) + 7};
    for (size_t si = 0; si < 2; si++) {
        size_t n = sizes[si];
        uint8_t *m = xmalloc(n);
        rnd_fill(m, n);
        uint32_t want = ref_crc(0, m, n), want1 = ref_crc(0, m + 1, n - 1);
        for (size_t k = 0; k < n_crc_impls; k++) {
            if (!CHECK_EQ(crc_by(k, 0, m, n), want))
                note("%s, %zu bytes", crc_impls[k].name, n);
            uint32_t c = 0; /* random chunks, continuing via crc */
            for (size_t at = 0; at < n;) {
                size_t chunk = rnd_below(70000);
                if (chunk > n - at)
                    chunk = n - at;
                c = crc_by(k, c, m + at, chunk);
                at += chunk;
            }
            if (!CHECK_EQ(c, want))
                note("%s, %zu bytes in random chunks", crc_impls[k].name, n);
            if (!CHECK_EQ(crc_by(k, 0, m + 1, n - 1), want1))
                note("%s, %zu bytes at offset 1", crc_impls[k].name, n - 1);
        }
        free(m);
    }
}

static void test_crc32c_implementation_list(void) {
    int count = llog_crc32c_impl_count(), best = 0;
    CHECK(count >= 1);
    CHECK_STR(llog_crc32c_impl_name(0), "portable");
    CHECK(llog_crc32c_impl_usable(0));
    CHECK(llog_crc32c_impl_name(-1) == NULL);
    CHECK(llog_crc32c_impl_name(count) == NULL);
    CHECK(!llog_crc32c_impl_usable(-1));
    CHECK(!llog_crc32c_impl_usable(count));
    for (int i = 0; i < count; i++) {
        const char *name = llog_crc32c_impl_name(i);
        if (!CHECK(name != NULL && name[0] != '\0'))
            continue;
        for (int j = 0; j < i; j++)
            CHECK(strcmp(name, llog_crc32c_impl_name(j)) != 0);
        if (llog_crc32c_impl_usable(i))
            best = i;
        printf("    (implementation %d: %s%s)\n", i, name,
               llog_crc32c_impl_usable(i) ? "" : ", not usable here");
    }
    CHECK_EQ(llog_crc32c_hardware_available(), best > 0);
    /* Choosing by name: exactly the usable ones; a refusal changes
     * nothing. */
    for (int i = 0; i < count; i++) {
        llog_crc32c_init(0);
        const char *name = llog_crc32c_impl_name(i);
        int usable = llog_crc32c_impl_usable(i);
        CHECK_EQ(llog_crc32c_init_named(name), usable);
        CHECK_STR(llog_crc32c_implementation(), usable ? name : "portable");
        if (!CHECK_EQ(llog_crc32c_extend(0, "123456789", 9), 0xE3069283u))
            note("chosen: %s", name);
    }
    llog_crc32c_init(1);
    CHECK_EQ(llog_crc32c_init_named("no such implementation"), 0);
    CHECK_STR(llog_crc32c_implementation(), llog_crc32c_impl_name(best));
    llog_crc32c_init(1);
}

static void test_crc32c_init_selects_implementation(void) {
    llog_crc32c_init(0);
    CHECK_STR(llog_crc32c_implementation(), "portable");
    CHECK_EQ(llog_crc32c_extend(0, "123456789", 9), 0xE3069283u);
    llog_crc32c_init(1);
    const char *name = llog_crc32c_implementation();
    CHECK(name != NULL);
    if (llog_crc32c_hardware_available()) {
        CHECK(name != NULL && name[0] != '\0' &&
              strcmp(name, "portable") != 0);
        /* The fastest that runs here: the last usable one in the list. */
        int best = 0;
        for (int i = 0; i < llog_crc32c_impl_count(); i++)
            if (llog_crc32c_impl_usable(i))
                best = i;
        CHECK_STR(name, llog_crc32c_impl_name(best));
    } else {
        CHECK_STR(name, "portable");
    }
    CHECK_EQ(llog_crc32c_extend(0, "123456789", 9), 0xE3069283u);
    printf("    (implementation with hardware allowed: %s)\n",
           name ? name : "(null)");
}

static void test_mask_vectors_both_ways(void) {
    CHECK(V.nmask >= 5);
    CHECK_EQ(LLOG_MASK_DELTA, 0xA282EAD8u);
    for (size_t i = 0; i < V.nmask; i++) {
        const mask_vec *v = &V.mask[i];
        if (!CHECK_EQ(llog_mask_crc(v->crc), v->masked) ||
            !CHECK_EQ(llog_unmask_crc(v->masked), v->crc) ||
            !CHECK_EQ(ref_mask(v->crc), v->masked))
            note("mask vector %zu", i);
    }
    for (int i = 0; i < 100000; i++) {
        uint32_t x = (uint32_t)rnd();
        if (!CHECK_EQ(llog_unmask_crc(llog_mask_crc(x)), x) ||
            !CHECK_EQ(llog_mask_crc(llog_unmask_crc(x)), x) ||
            !CHECK_EQ(llog_mask_crc(x), ref_mask(x)))
            note("x = 0x%08x", (unsigned)x);
    }
}

static void test_type_crcs_are_the_crcs_of_the_type_bytes(void) {
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_impl_usable(i))
            continue;
        for (uint32_t t = 0; t <= LLOG_MAX_TYPE; t++) {
            uint8_t byte = (uint8_t)t;
            CHECK_EQ(llog_type_crc[t],
                     llog_crc32c_impl_extend(i, 0, &byte, 1));
        }
    }
}

static void test_status_texts(void) {
    CHECK_STR(llog_status_text(LLOG_OK), "ok");
    CHECK_STR(llog_status_text(LLOG_ERR_NOMEM), "out of memory");
    CHECK_STR(llog_status_text(LLOG_ERR_ARG), "invalid argument");
    CHECK_STR(llog_status_text(LLOG_ERR_TOO_LARGE),
              "record too large for this platform");
    CHECK(llog_status_text((llog_status)99) != NULL);
}

/* ---- writer ------------------------------------------------------------- */

/* The writer's output for one record at `offset`, through llog_writer_add
 * into an exactly sized buffer (or one with a guard zone without ASan). */
static size_t add_at(uint64_t offset, const uint8_t *data, size_t len,
                     buf *out, uint64_t *record_offset) {
    llog_writer w;
    llog_writer_init(&w, offset);
    uint64_t size = llog_writer_encoded_size(&w, len);
    CHECK_EQ(w.offset, offset); /* encoded_size does not move the writer */
#if defined(__SANITIZE_ADDRESS__)
    const size_t guard = 0;
#else
    const size_t guard = 32;
#endif
    uint8_t *dst = xmalloc((size_t)size + guard);
    memset(dst + size, 0xCD, guard);
    size_t n = llog_writer_add(&w, data, len, dst, record_offset);
    CHECK_EQ(n, size);
    CHECK_EQ(w.offset, offset + n);
    for (size_t i = 0; i < guard; i++)
        if (!CHECK_EQ(dst[size + i], 0xCD))
            break;
    buf_put(out, dst, n < size ? n : (size_t)size);
    free(dst);
    return n;
}

/* The same record through llog_writer_fragment, checking each fragment. */
static void fragments_at(uint64_t offset, const uint8_t *data, size_t len,
                         buf *out) {
    llog_writer w;
    llog_writer_init(&w, offset);
    size_t done = 0;
    int first = 1;
    for (int guard = 0; guard < 100000; guard++) {
        llog_fragment f;
        uint64_t before = w.offset;
        llog_writer_fragment(&w, data + done, len - done, first, &f);
        CHECK(f.prefix_len >= H && f.prefix_len <= H + H - 1);
        CHECK(f.payload_len <= len - done);
        CHECK_EQ(f.header_offset, before + f.prefix_len - H);
        CHECK_EQ(w.offset, before + f.prefix_len + f.payload_len);
        buf_put(out, f.prefix, f.prefix_len);
        buf_put(out, data + done, f.payload_len);
        done += f.payload_len;
        first = 0;
        if (done >= len)
            return;
    }
    CHECK(!"llog_writer_fragment made no progress");
}

/* add and fragment both produce what FORMAT.md says, at this offset. */
static void check_encoding_at(uint64_t offset, const uint8_t *data,
                              size_t len) {
    buf want = {0}, got = {0}, frag = {0};
    uint64_t want_offset = 0, got_offset = UINT64_MAX;
    ref_encode(offset, data, len, &want, &want_offset);
    add_at(offset, data, len, &got, &got_offset);
    fragments_at(offset, data, len, &frag);
    if (!CHECK_MEM(got.p, got.len, want.p, want.len) ||
        !CHECK_EQ(got_offset, want_offset) ||
        !CHECK_MEM(frag.p, frag.len, want.p, want.len))
        note("log length %llu, record of %zu bytes",
             (unsigned long long)offset, len);
    buf_free(&want);
    buf_free(&got);
    buf_free(&frag);
}

static void test_writer_reproduces_record_vectors(void) {
    CHECK(V.nrec >= 4);
    for (size_t i = 0; i < V.nrec; i++) {
        const rec_vec *v = &V.rec[i];
        buf model = {0};
        put_phys(&model, v->type, v->payload, v->plen);
        if (!CHECK_MEM(model.p, model.len, v->rec, v->rlen)) /* the model */
            note("record vector %zu", i);
        buf_free(&model);
        if (v->type < LLOG_FULL || v->type > LLOG_LAST)
            continue;
        /* Data one byte longer than the payload makes FIRST and MIDDLE come
         * out at a block end with exactly plen bytes of room. */
        uint8_t *data = xmalloc(v->plen + 1);
        if (v->plen > 0)
            memcpy(data, v->payload, v->plen);
        data[v->plen] = 'z';
        buf got = {0};
        uint64_t at = 0;
        llog_writer w;
        llog_fragment f;
        switch (v->type) {
        case LLOG_FULL:
            add_at(0, v->payload, v->plen, &got, &at);
            CHECK_EQ(at, 0);
            break;
        case LLOG_LAST:
            llog_writer_init(&w, 0);
            llog_writer_fragment(&w, data, v->plen, 0, &f);
            buf_put(&got, f.prefix, f.prefix_len);
            buf_put(&got, data, f.payload_len);
            break;
        default: /* FIRST, MIDDLE */
            llog_writer_init(&w, 5 * (uint64_t)B - H - v->plen);
            llog_writer_fragment(&w, data, v->plen + 1, v->type == LLOG_FIRST,
                                 &f);
            buf_put(&got, f.prefix, f.prefix_len);
            buf_put(&got, data, f.payload_len);
            break;
        }
        if (!CHECK_MEM(got.p, got.len, v->rec, v->rlen))
            note("record vector %zu (type %u)", i, v->type);
        buf_free(&got);
        free(data);
    }
}

static void test_writer_format_md_worked_example(void) {
    static const size_t sizes[3] = {1000, 97270, 8000};
    static const uint64_t offsets[3] = {0, 1007, 98304};
    uint8_t *data = xmalloc(97270);
    rnd_fill(data, 97270);
    llog_writer w;
    llog_writer_init(&w, 0);
    buf log = {0};
    for (int i = 0; i < 3; i++) {
        uint64_t size = llog_writer_encoded_size(&w, sizes[i]);
        uint8_t *dst = buf_grow(&log, (size_t)size);
        uint64_t at = UINT64_MAX;
        CHECK_EQ(llog_writer_add(&w, data, sizes[i], dst, &at), size);
        CHECK_EQ(at, offsets[i]);
    }
    CHECK_EQ(log.len, 106311);
    CHECK_EQ(w.offset, 106311);
    static const struct {
        size_t offset;
        unsigned type;
        size_t len;
    } phys[] = {{0, LLOG_FULL, 1000},
                {1007, LLOG_FIRST, 31754},
                {32768, LLOG_MIDDLE, 32761},
                {65536, LLOG_LAST, 32755},
                {98304, LLOG_FULL, 8000}};
    for (size_t i = 0; i < 5 && log.len == 106311; i++) {
        const uint8_t *h = log.p + phys[i].offset;
        CHECK_EQ(h[6], phys[i].type);
        CHECK_EQ(h[4] | h[5] << 8, phys[i].len);
        uint32_t crc = ref_crc(0, h + 6, 1 + phys[i].len);
        CHECK_EQ(llog_load32(h), ref_mask(crc));
    }
    for (size_t i = 98298; i < 98304 && log.len == 106311; i++)
        CHECK_EQ(log.p[i], 0); /* the 6-byte trailer */
    buf want = {0};
    uint64_t ignored;
    uint64_t at = 0;
    for (int i = 0; i < 3; i++)
        at += ref_encode(at, data, sizes[i], &want, &ignored);
    CHECK_MEM(log.p, log.len, want.p, want.len);
    buf_free(&want);
    buf_free(&log);
    free(data);
}

static void test_writer_seven_bytes_left(void) {
    static const uint8_t full_empty[] = {0x05, 0x2b, 0x28, 0x43, 0, 0, 1};
    static const uint8_t first_empty[] = {0x64, 0x51, 0xd0, 0xe9, 0, 0, 2};
    for (uint64_t base = 0; base <= 10 * (uint64_t)B; base += 10 * B) {
        /* An empty record: a FULL header with no payload fills the block. */
        buf got = {0};
        uint64_t at = 0;
        CHECK_EQ(add_at(base + B - H, (const uint8_t *)"", 0, &got, &at), H);
        CHECK_MEM(got.p, got.len, full_empty, sizeof full_empty);
        CHECK_EQ(at, base + B - H);
        buf_free(&got);

        /* A non-empty record: an empty FIRST there, the data after it. */
        buf want = {0};
        buf_put(&want, first_empty, sizeof first_empty);
        put_phys(&want, LLOG_LAST, "abc", 3);
        CHECK_EQ(add_at(base + B - H, (const uint8_t *)"abc", 3, &got, &at),
                 H + H + 3);
        CHECK_MEM(got.p, got.len, want.p, want.len);
        CHECK_EQ(at, base + B - H);
        buf_free(&got);
        buf_free(&want);

        /* Six bytes left: zeros, then the record in the next block. */
        buf_bytes(&want, 0, 6);
        put_phys(&want, LLOG_FULL, "", 0);
        CHECK_EQ(add_at(base + B - 6, (const uint8_t *)"", 0, &got, &at),
                 6 + H);
        CHECK_MEM(got.p, got.len, want.p, want.len);
        CHECK_EQ(at, base + B);
        buf_free(&got);
        buf_free(&want);
    }
    /* An empty record may come as NULL (the writer's "data may be NULL"). */
    buf got = {0};
    uint64_t at = 0;
    CHECK_EQ(add_at(B - H, NULL, 0, &got, &at), H);
    CHECK_MEM(got.p, got.len, full_empty, sizeof full_empty);
    buf_free(&got);
}

static void test_writer_encoded_size_equals_bytes_added(void) {
    static const uint64_t offsets[] = {0,
                                       1,
                                       7,
                                       1000,
                                       B - 14,
                                       B - 8,
                                       B - 7,
                                       B - 6,
                                       B - 5,
                                       B - 4,
                                       B - 3,
                                       B - 2,
                                       B - 1,
                                       B,
                                       B + 1,
                                       3 * (uint64_t)B + B - 7,
                                       (5ull << 32) + B -
                                           3, /* beyond 32 bits */
                                       (5ull << 32) + 12345};
    static const size_t lens[] = {0,
                                  1,
                                  2,
                                  6,
                                  7,
                                  8,
                                  100,
                                  1000,
                                  32747,
                                  32748,
                                  32753,
                                  32754,
                                  32755,
                                  32756,
                                  32760,
                                  32761,
                                  32762,
                                  32763,
                                  32767,
                                  32768,
                                  32769,
                                  65521,
                                  65522,
                                  65523,
                                  65529,
                                  65535,
                                  65536,
                                  100000,
                                  3 * 32761 + 1,
                                  262144};
    size_t max_len = 262144;
    uint8_t *data = xmalloc(max_len);
    rnd_fill(data, max_len);
    for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            check_encoding_at(offsets[oi], data, lens[li]);
    for (int i = 0; i < 300; i++) { /* random pairs */
        uint64_t offset = rnd_below(8 * B);
        if (i % 3 == 0)
            offset = offset - offset % B + B - rnd_below(H + 1) - 1;
        size_t len = i % 2 ? rnd_below(2 * B) : rnd_below(max_len);
        check_encoding_at(offset, data, len);
    }
    /* Appending record after record: offsets chain. */
    llog_writer w;
    llog_writer_init(&w, 0);
    buf log = {0};
    buf want = {0};
    for (int i = 0; i < 200; i++) {
        size_t len = rnd_below(i % 5 == 0 ? 3 * B : 300);
        uint64_t size = llog_writer_encoded_size(&w, len);
        uint64_t at, want_at;
        size_t n = llog_writer_add(&w, data, len, buf_grow(&log, size), &at);
        CHECK_EQ(n, size);
        ref_encode(want.len, data, len, &want, &want_at);
        CHECK_EQ(at, want_at);
    }
    CHECK_MEM(log.p, log.len, want.p, want.len);
    buf_free(&log);
    buf_free(&want);
    free(data);
}

/* ---- reader harness ----------------------------------------------------- */

/* One event, copied out of the reader. */
typedef struct tev {
    llog_event_kind kind;
    uint64_t offset, size;
    uint8_t *data;
    size_t len;
    char reason[64];
    int torn;
} tev;

typedef struct tevs {
    tev *v;
    size_t n, cap;
} tevs;

static void tevs_add(tevs *l, llog_event_kind kind, uint64_t offset,
                     uint64_t size, const void *data, size_t len,
                     const char *reason, int torn) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    tev *e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->offset = offset;
    e->size = size;
    e->len = len;
    e->torn = torn;
    e->data = xmalloc(len);
    if (len > 0)
        memcpy(e->data, data, len);
    if (reason != NULL)
        snprintf(e->reason, sizeof e->reason, "%s", reason);
}

static void tevs_add_copy(tevs *l, const tev *e) {
    tevs_add(l, e->kind, e->offset, e->size, e->data, e->len, e->reason,
             e->torn);
}

static void tevs_free(tevs *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].data);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Expected events, written as in FORMAT.md's tables. */
static void want_rec(tevs *l, uint64_t offset, const void *data, size_t len) {
    tevs_add(l, LLOG_EV_RECORD, offset, 0, data, len, NULL, 0);
}

static void want_bad(tevs *l, uint64_t offset, uint64_t size,
                     const char *reason) {
    tevs_add(l, LLOG_EV_CORRUPTION, offset, size, NULL, 0, reason, 0);
}

static void want_eof(tevs *l) {
    tevs_add(l, LLOG_EV_EOF, 0, 0, NULL, 0, NULL, 0);
}

static void want_torn(tevs *l, uint64_t offset, uint64_t size,
                      const char *reason) {
    tevs_add(l, LLOG_EV_EOF, offset, size, NULL, 0, reason, 1);
}

static const char *kind_name(llog_event_kind k) {
    switch (k) {
    case LLOG_EV_RECORD:
        return "RECORD";
    case LLOG_EV_CORRUPTION:
        return "CORRUPTION";
    case LLOG_EV_NEED_BLOCK:
        return "NEED_BLOCK";
    case LLOG_EV_EOF:
        return "EOF";
    case LLOG_EV_DONE:
        return "DONE";
    case LLOG_EV_ERROR:
        return "ERROR";
    }
    return "?";
}

static const char *describe(const tev *e) {
    static char s[2][200];
    static int which;
    char *out = s[which ^= 1];
    switch (e->kind) {
    case LLOG_EV_RECORD:
        snprintf(out, 200, "RECORD @%llu, %zu bytes",
                 (unsigned long long)e->offset, e->len);
        break;
    case LLOG_EV_CORRUPTION:
        snprintf(out, 200, "CORRUPTION @%llu, %llu bytes, \"%s\"",
                 (unsigned long long)e->offset, (unsigned long long)e->size,
                 e->reason);
        break;
    case LLOG_EV_EOF:
        if (e->torn)
            snprintf(out, 200, "EOF torn @%llu, %llu bytes, \"%s\"",
                     (unsigned long long)e->offset,
                     (unsigned long long)e->size, e->reason);
        else
            snprintf(out, 200, "EOF");
        break;
    default:
        snprintf(out, 200, "%s (size %llu)", kind_name(e->kind),
                 (unsigned long long)e->size);
        break;
    }
    return out;
}

static int same_event(const tev *a, const tev *b) {
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case LLOG_EV_RECORD:
        return a->offset == b->offset && a->len == b->len &&
               (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
    case LLOG_EV_CORRUPTION:
        return a->offset == b->offset && a->size == b->size &&
               strcmp(a->reason, b->reason) == 0;
    case LLOG_EV_EOF:
        return a->torn == b->torn &&
               (!a->torn || (a->offset == b->offset && a->size == b->size &&
                             strcmp(a->reason, b->reason) == 0));
    default:
        return 1;
    }
}

static void print_events(const char *title, const tevs *l) {
    note("%s (%zu events):", title, l->n);
    for (size_t i = 0; i < l->n && i < 12; i++)
        note("  %s", describe(&l->v[i]));
    if (l->n > 12)
        note("  ...");
}

/* Checks that got and want hold the same events in the same order. */
static int check_events_at(const tevs *got, const tevs *want, const char *what,
                           const char *file, int line) {
    size_t i = 0;
    while (i < got->n && i < want->n && same_event(&got->v[i], &want->v[i]))
        i++;
    if (i == got->n && i == want->n)
        return pass();
    failure(file, line, "%s: event %zu differs: got %s, want %s", what, i,
            i < got->n ? describe(&got->v[i]) : "nothing",
            i < want->n ? describe(&want->v[i]) : "nothing");
    print_events("got", got);
    print_events("want", want);
    return 0;
}

#define check_events(got, want, what)                                         \
    check_events_at((got), (want), (what), __FILE__, __LINE__)

/* Feeds a reader the blocks of log[0..len) it asks for. */
typedef struct feeder {
    const uint8_t *log;
    size_t len;
    int sequential; /* check it never asks for a block before one fed */
    uint64_t last_fed;
    int fed_any;
    size_t blocks_fed;
    size_t in_place; /* blocks fed in two pieces, payload in place */
} feeder;

static const uint8_t nothing[1];

/* The caller's assembly buffers of an in-place read: every one handed to
 * the reader lives until the read is over (a block fed in two pieces may
 * still be read from one the reader has moved on from). */
typedef struct assembly {
    uint8_t **all;
    size_t n;
    uint8_t *current;
    size_t calls;
} assembly;

static uint8_t *assembly_reserve(void *ctx, size_t len, size_t need,
                                 size_t *cap) {
    assembly *a = ctx;
    CHECK(need > len && (len == 0 || a->current != NULL));
    uint8_t *fresh = xmalloc(need + 100);
    memset(fresh, 0xA5, need + 100); /* not what any log holds there */
    if (len > 0)
        memcpy(fresh, a->current, len);
    a->all = xrealloc(a->all, (a->n + 1) * sizeof *a->all);
    a->all[a->n++] = fresh;
    a->current = fresh;
    a->calls++;
    *cap = need + 100;
    return fresh;
}

static void assembly_free(assembly *a) {
    for (size_t i = 0; i < a->n; i++)
        free(a->all[i]);
    free(a->all);
}

/* When the reader would go on with a record at the wanted block, feeds the
 * block split, its payload copied first to where the record goes on (what
 * the extension does with preadv); returns 1 if it did. */
static int feed_in_place(llog_reader *r, feeder *f, uint64_t want, size_t n) {
    size_t assembled;
    if (n <= H || !llog_reader_in_place(r, &assembled))
        return 0;
    uint8_t *at = llog_reader_append_point(r, B - H);
    if (!CHECK(at != NULL))
        return 0;
    memcpy(at, f->log + want + H, n - H);
    llog_reader_feed_split(r, f->log + want, at, n);
    f->in_place++;
    return 1;
}

/*
 * Runs r until EOF, DONE or ERROR, appending every event but NEED_BLOCK to
 * out; returns the last kind (LLOG_EV_ERROR also when the reader misbehaves).
 */
static llog_event_kind drive(llog_reader *r, feeder *f, int in_place,
                             tevs *out) {
    int fresh = 0; /* a block was just fed and nothing came out of it yet */
    uint64_t fresh_offset = 0;
    for (long guard = 0; guard < 50000000; guard++) {
        llog_event ev;
        llog_reader_next(r, &ev);
        if (ev.kind == LLOG_EV_NEED_BLOCK) {
            uint64_t want = llog_reader_wanted(r);
            if (!CHECK_EQ(want % B, 0))
                return LLOG_EV_ERROR;
            if (fresh && !CHECK(want != fresh_offset)) {
                note("asked again for block %llu right after it was fed",
                     (unsigned long long)want);
                return LLOG_EV_ERROR;
            }
            if (f->sequential && f->fed_any && !CHECK(want >= f->last_fed)) {
                note("sequential reader went back from block %llu to %llu",
                     (unsigned long long)f->last_fed,
                     (unsigned long long)want);
                return LLOG_EV_ERROR;
            }
            size_t n = 0;
            if (want < f->len)
                n = f->len - want < B ? (size_t)(f->len - want) : B;
            if (!in_place || !feed_in_place(r, f, want, n))
                llog_reader_feed(r, n ? f->log + want : nothing, n);
            f->last_fed = want;
            f->fed_any = 1;
            f->blocks_fed++;
            fresh = 1;
            fresh_offset = want;
            continue;
        }
        fresh = 0;
        const char *reason = ev.reason;
        if (ev.kind == LLOG_EV_CORRUPTION ||
            (ev.kind == LLOG_EV_EOF && ev.torn))
            CHECK(reason != NULL);
        tevs_add(out, ev.kind, ev.offset, ev.size, ev.data, ev.len, reason,
                 ev.torn);
        if (ev.kind == LLOG_EV_EOF || ev.kind == LLOG_EV_DONE ||
            ev.kind == LLOG_EV_ERROR)
            return ev.kind;
    }
    CHECK(!"the reader never reached EOF or DONE");
    return LLOG_EV_ERROR;
}

typedef struct read_opts {
    uint64_t start, end;
    int verify, sequential;
    int in_place; /* read payloads where their record goes on (see feed) */
} read_opts;

static const read_opts WHOLE = {.end = LLOG_NO_END, .verify = 1};

typedef struct read_info {
    llog_event_kind last;
    uint64_t clean_end, position;
    size_t blocks_fed;
    size_t in_place; /* of which fed split, payload in place */
} read_info;

static read_info read_log(const uint8_t *log, size_t len, read_opts o,
                          tevs *out) {
    assembly a = {0};
    llog_reader_options opt = {.start = o.start,
                               .end = o.end,
                               .verify_checksums = o.verify,
                               .sequential = o.sequential,
                               .reserve = o.in_place ? assembly_reserve : NULL,
                               .reserve_ctx = &a};
    llog_reader *r = llog_reader_new(&opt);
    read_info info = {LLOG_EV_ERROR, 0, 0, 0, 0};
    if (!CHECK(r != NULL))
        return info;
    feeder f = {.log = log, .len = len, .sequential = o.sequential};
    info.last = drive(r, &f, o.in_place, out);
    info.clean_end = llog_reader_clean_end(r);
    info.position = llog_reader_position(r);
    info.blocks_fed = f.blocks_fed;
    info.in_place = f.in_place;
    llog_reader_free(r);
    assembly_free(&a);
    return info;
}

/* Records, corruptions and the torn tail: what a caller acts on. */
static int significant(const tev *e) {
    return e->kind == LLOG_EV_RECORD || e->kind == LLOG_EV_CORRUPTION ||
           (e->kind == LLOG_EV_EOF && e->torn);
}

static int event_order(const void *pa, const void *pb) {
    const tev *a = pa, *b = pb;
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return strcmp(a->reason, b->reason);
}

/* The significant events of l, sorted by offset: ranges find events in
 * range order, a whole read in discovery order (a report about an open
 * record can follow a report about a later header). */
static void canonical(const tevs *l, tevs *out) {
    for (size_t i = 0; i < l->n; i++)
        if (significant(&l->v[i]))
            tevs_add_copy(out, &l->v[i]);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, event_order);
}

/*
 * Reads log in the ranges [cuts[i], cuts[i+1]) and a last one from the last
 * cut to LLOG_NO_END, appending every range's significant events to all.
 * Checks that each range reports only what begins inside it.
 */
static void read_in_ranges(const uint8_t *log, size_t len,
                           const uint64_t *cuts, size_t ncuts, int sequential,
                           int expect_done, tevs *all) {
    for (size_t i = 0; i < ncuts; i++) {
        read_opts o = {.start = cuts[i],
                       .end = i + 1 < ncuts ? cuts[i + 1] : LLOG_NO_END,
                       .verify = 1,
                       .sequential = sequential};
        tevs one = {0};
        read_info info = read_log(log, len, o, &one);
        int ok = CHECK(info.last == LLOG_EV_DONE || info.last == LLOG_EV_EOF);
        if (expect_done && o.end != LLOG_NO_END)
            ok &= CHECK_EQ(info.last, LLOG_EV_DONE);
        for (size_t k = 0; k < one.n; k++) {
            const tev *e = &one.v[k];
            if (!significant(e))
                continue;
            ok &= CHECK(e->offset >= o.start && e->offset < o.end);
            tevs_add_copy(all, e);
        }
        if (!ok) {
            note("range [%llu, %llu)%s", (unsigned long long)o.start,
                 (unsigned long long)o.end, sequential ? " sequential" : "");
            print_events("range events", &one);
        }
        tevs_free(&one);
    }
}

/* Reading in the given ranges sees exactly what a whole read sees. */
static void check_ranges_match_whole(const uint8_t *log, size_t len,
                                     const uint64_t *cuts, size_t ncuts,
                                     int sequential, int expect_done,
                                     const char *what) {
    tevs whole = {0}, parts = {0}, a = {0}, b = {0};
    read_log(log, len, WHOLE, &whole);
    read_in_ranges(log, len, cuts, ncuts, sequential, expect_done, &parts);
    canonical(&whole, &a);
    canonical(&parts, &b);
    check_events(&b, &a, what);
    tevs_free(&whole);
    tevs_free(&parts);
    tevs_free(&a);
    tevs_free(&b);
}

/*
 * The log reads as want: whole, sequentially, and split in two anywhere
 * (every byte for short logs; otherwise a sample and the block edges).
 */
static void expect_log(const char *what, const buf *log, int verify,
                       const tevs *want) {
    tevs got = {0};
    read_opts o = WHOLE;
    o.verify = verify;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(whole log of %zu bytes)", log->len);
    tevs_free(&got);
    o.sequential = 1;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(whole log, sequential)");
    tevs_free(&got);
    o.sequential = 0;
    o.in_place = 1;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(whole log, payloads read in place)");
    tevs_free(&got);
    o.in_place = 0;
    if (!verify)
        return;
    size_t step = log->len <= 600 ? 1 : 97;
    for (size_t cut = 1; cut < log->len; cut++) {
        size_t in = cut % B;
        if (cut % step != 0 && in > 8 && in < B - 8)
            continue;
        uint64_t cuts[2] = {0, cut};
        tevs parts = {0}, a = {0}, b = {0};
        read_in_ranges(log->p, log->len, cuts, 2, 0, 0, &parts);
        canonical(want, &a);
        canonical(&parts, &b);
        if (!check_events(&b, &a, what)) {
            note("(ranges [0, %zu) and [%zu, end))", cut, cut);
            cut = log->len; /* one report per log is enough */
        }
        tevs_free(&parts);
        tevs_free(&a);
        tevs_free(&b);
    }
}

/* ---- logs made by the writer -------------------------------------------- */

typedef struct phys {
    uint64_t header;
    size_t len;
    unsigned type;
    size_t rec; /* index of its record */
} phys;

typedef struct rec {
    uint64_t offset, end; /* first header; just past the last fragment */
    uint8_t *data;
    size_t len;
} rec;

typedef struct wlog {
    buf log;
    phys *ph;
    size_t nph;
    rec *rc;
    size_t nrc;
} wlog;

static void wlog_add(wlog *L, const uint8_t *data, size_t len) {
    llog_writer w;
    llog_writer_init(&w, L->log.len);
    L->rc = xrealloc(L->rc, (L->nrc + 1) * sizeof *L->rc);
    rec *r = &L->rc[L->nrc];
    r->data = xmalloc(len);
    if (len > 0)
        memcpy(r->data, data, len);
    r->len = len;
    size_t done = 0;
    int first = 1;
    do {
        llog_fragment f;
        llog_writer_fragment(&w, data + done, len - done, first, &f);
        if (first)
            r->offset = f.header_offset;
        L->ph = xrealloc(L->ph, (L->nph + 1) * sizeof *L->ph);
        phys *p = &L->ph[L->nph++];
        p->header = f.header_offset;
        p->len = f.payload_len;
        p->type = f.prefix[f.prefix_len - 1];
        p->rec = L->nrc;
        buf_put(&L->log, f.prefix, f.prefix_len);
        buf_put(&L->log, data + done, f.payload_len);
        done += f.payload_len;
        first = 0;
    } while (done < len);
    r->end = L->log.len;
    L->nrc++;
}

static void wlog_free(wlog *L) {
    for (size_t i = 0; i < L->nrc; i++)
        free(L->rc[i].data);
    free(L->rc);
    free(L->ph);
    buf_free(&L->log);
    memset(L, 0, sizeof *L);
}

/* A log of records of mixed sizes, some spanning several blocks, some
 * ending in the last 7 bytes of a block. */
static void make_mixed_log(wlog *L, uint64_t seed, size_t nrecords,
                           size_t max_large) {
    rng = seed;
    uint8_t *data = xmalloc(max_large);
    for (size_t i = 0; i < nrecords; i++) {
        size_t len;
        switch (rnd_below(10)) {
        case 0:
            len = rnd_below(3);
            break;
        case 1:
        case 2:
            len = rnd_below(200);
            break;
        case 3:
        case 4:
            len = rnd_below(5000);
            break;
        case 5:
            len = 1000 + rnd_below(30000);
            break;
        case 6: /* end in the last few bytes of the block, or exactly fill */
            len = B - L->log.len % B;
            len = len > H + 8 ? len - H - rnd_below(8) : rnd_below(20);
            break;
        case 7:
            len = 32750 + rnd_below(20);
            break;
        default:
            len = 33000 + rnd_below(max_large - 33000);
            break;
        }
        if (len > max_large)
            len = max_large;
        rnd_fill(data, len);
        wlog_add(L, data, len);
    }
    free(data);
}

/* The events of a clean read of the whole log L. */
static void want_all_records(const wlog *L, tevs *want) {
    for (size_t i = 0; i < L->nrc; i++)
        want_rec(want, L->rc[i].offset, L->rc[i].data, L->rc[i].len);
}

/* ---- reader tests ------------------------------------------------------- */

static const char *CHECKSUM = "checksum mismatch";
static const char *BAD_LENGTH = "bad record length";
static const char *PARTIAL = "partial record without end";
static const char *MISSING = "missing start of fragmented record";
static const char *MIDDLE_ERR = "error in middle of record";
static const char *TORN_HEADER = "truncated header at end of file";
static const char *TORN_PAYLOAD = "truncated payload at end of file";
static const char *TORN_OPEN = "fragmented record open at end of file";

static void test_reader_round_trip_of_written_records(void) {
    wlog L = {0};
    static const size_t sizes[] = {0, 1,      100, 32754, 0, 32761,  32762,
                                   5, 100000, 0,   65536, 7, 200000, 3};
    uint8_t *data = xmalloc(200000);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        rnd_fill(data, sizes[i]);
        wlog_add(&L, data, sizes[i]);
    }
    free(data);
    tevs want = {0}, got = {0};
    want_all_records(&L, &want);
    want_eof(&want);
    read_info info = read_log(L.log.p, L.log.len, WHOLE, &got);
    check_events(&got, &want, "round trip");
    CHECK_EQ(info.last, LLOG_EV_EOF);
    CHECK_EQ(info.clean_end, L.log.len);
    CHECK_EQ(info.position, L.log.len);
    tevs_free(&got);
    read_opts nocheck = WHOLE;
    nocheck.verify = 0;
    read_log(L.log.p, L.log.len, nocheck, &got);
    check_events(&got, &want, "round trip without checksums");
    tevs_free(&got);
    tevs_free(&want);
    wlog_free(&L);

    /* The empty log. */
    buf empty = {0};
    want_eof(&want);
    expect_log("empty log", &empty, 1, &want);
    tevs_free(&want);
}

static void test_reader_golden_records_alone(void) {
    /* Each vector's physical record as a whole log, read as FORMAT.md says. */
    for (size_t i = 0; i < V.nrec; i++) {
        const rec_vec *v = &V.rec[i];
        buf log = {0};
        buf_put(&log, v->rec, v->rlen);
        tevs want = {0};
        char reason[40];
        snprintf(reason, sizeof reason, "unknown record type %u", v->type);
        switch (v->type) {
        case LLOG_ZERO:
            if (v->plen > 0)
                want_bad(&want, 0, v->plen, reason);
            break; /* an empty ZERO record: preallocated, skipped silently */
        case LLOG_FULL:
            want_rec(&want, 0, v->payload, v->plen);
            break;
        case LLOG_FIRST:
            break; /* open at the end: see the torn tail below */
        case LLOG_MIDDLE:
        case LLOG_LAST:
            want_bad(&want, 0, v->plen, MISSING);
            break;
        default:
            want_bad(&want, 0, v->plen, reason);
            break;
        }
        if (v->type == LLOG_FIRST)
            want_torn(&want, 0, v->rlen, TORN_OPEN);
        else
            want_eof(&want);
        char what[64];
        snprintf(what, sizeof what, "record vector %zu (type %u)", i, v->type);
        expect_log(what, &log, 1, &want);
        tevs_free(&want);
        buf_free(&log);
    }
}

static void test_reader_checksum_mismatch(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "aaa", 3);               /* @0 */
    size_t bad = put_phys(&log, LLOG_FULL, "bbbb", 4); /* @10 */
    put_phys(&log, LLOG_FULL, "cc", 2);                /* @21 */
    log.p[bad + H + 1] ^= 0x20;                        /* a payload byte */
    /* In the short final block: from the header to the end of the data. */
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, 20, CHECKSUM);
    want_eof(&want);
    expect_log("checksum mismatch in the last block", &log, 1, &want);
    tevs_free(&want);

    /* In a full block: the rest of the block, then the next block. */
    buf_zero_to(&log, B);
    put_phys(&log, LLOG_FULL, "dd", 2);
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, CHECKSUM);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("checksum mismatch in a full block", &log, 1, &want);
    tevs_free(&want);

    /* Without checksums the damaged record is returned as it is. */
    want_rec(&want, 0, "aaa", 3);
    want_rec(&want, 10, "bBbb", 4);
    want_rec(&want, 21, "cc", 2);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("no checksums", &log, 0, &want);
    tevs_free(&want);

    /* A damaged length that still fits the block: the CRC catches it, and
     * the rest of the block is dropped (the length cannot be trusted). */
    log.p[bad + H + 1] ^= 0x20;
    log.p[bad + 4] = 2;
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, CHECKSUM);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("checksum mismatch from a damaged length", &log, 1, &want);
    tevs_free(&want);

    /* A damaged stored checksum. */
    log.p[bad + 4] = 4;
    log.p[bad] ^= 1;
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, CHECKSUM);
    want_rec(&want, B, "dd", 2);
    want_eof(&want);
    expect_log("damaged checksum field", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_reader_bad_record_length(void) {
    tevs want = {0};
    buf log = {0};
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    /* Block 0 one FULL record; block 1 a header whose length runs one byte
     * past the block; block 2 a good record. */
    put_phys(&log, LLOG_FULL, big, B - H);
    put_header(&log, 0x12345678, B - H + 1, LLOG_FULL);
    buf_put(&log, big, B - H);
    put_phys(&log, LLOG_FULL, "z", 1);
    want_rec(&want, 0, big, B - H);
    want_bad(&want, B, B, BAD_LENGTH);
    want_rec(&want, 2 * B, "z", 1);
    want_eof(&want);
    expect_log("bad record length in a middle block", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Inside a block, after a good record. */
    put_phys(&log, LLOG_FULL, "aaa", 3);
    put_header(&log, 0, B - 10 - H + 1, LLOG_MIDDLE);
    buf_bytes(&log, 0x5a, B - log.len);
    put_phys(&log, LLOG_FULL, "x", 1);
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, BAD_LENGTH);
    want_rec(&want, B, "x", 1);
    want_eof(&want);
    expect_log("bad record length after a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_bad_length_in_last_full_block_is_corruption(void) {
    /* The log is exactly one block long: the overlong length is damage,
     * not a torn write. */
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "aaa", 3);
    put_header(&log, 0, 40000, LLOG_FULL);
    buf_bytes(&log, 0x77, B - log.len);
    CHECK_EQ(log.len, B);
    want_rec(&want, 0, "aaa", 3);
    want_bad(&want, 10, B - 10, BAD_LENGTH);
    want_eof(&want);
    expect_log("length multiple of the block size", &log, 1, &want);
    tevs_free(&want);

    /* Two blocks, the damage in the second. */
    buf log2 = {0};
    put_phys(&log2, LLOG_FULL, "aaa", 3);
    buf_zero_to(&log2, B);
    put_phys(&log2, LLOG_FULL, "bbb", 3);
    put_header(&log2, 0, 65535, LLOG_FULL);
    buf_bytes(&log2, 0x77, 2 * B - log2.len);
    want_rec(&want, 0, "aaa", 3);
    want_rec(&want, B, "bbb", 3);
    want_bad(&want, B + 10, B - 10, BAD_LENGTH);
    want_eof(&want);
    expect_log("two blocks, bad length in the second", &log2, 1, &want);
    tevs_free(&want);

    /* The same log cut inside its last block: a torn payload instead. */
    log.len = 20000;
    want_rec(&want, 0, "aaa", 3);
    want_torn(&want, 10, 19990, TORN_PAYLOAD);
    expect_log("same, cut short", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    buf_free(&log2);
}

static void test_reader_partial_record_without_end(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @0 */
    put_phys(&log, LLOG_FULL, "xy", 2);   /* @10 */
    want_bad(&want, 0, 3, PARTIAL);
    want_rec(&want, 10, "xy", 2);
    want_eof(&want);
    expect_log("FIRST then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    put_phys(&log, LLOG_FIRST, "ab", 2);   /* @0 */
    put_phys(&log, LLOG_MIDDLE, "cde", 3); /* @9 */
    put_phys(&log, LLOG_FIRST, "ef", 2);   /* @19 */
    put_phys(&log, LLOG_LAST, "g", 1);     /* @28 */
    want_bad(&want, 0, 5, PARTIAL);
    want_rec(&want, 19, "efg", 3);
    want_eof(&want);
    expect_log("FIRST MIDDLE then FIRST LAST", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Across a block: the open record fills block 0. */
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    put_phys(&log, LLOG_FIRST, big, B - H);
    put_phys(&log, LLOG_FULL, "z", 1);
    want_bad(&want, 0, B - H, PARTIAL);
    want_rec(&want, B, "z", 1);
    want_eof(&want);
    expect_log("FIRST filling a block then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_empty_first_dropped_silently(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FIRST, "", 0);  /* @0 */
    put_phys(&log, LLOG_FULL, "xy", 2); /* @7 */
    want_rec(&want, 7, "xy", 2);
    want_eof(&want);
    expect_log("empty FIRST then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    put_phys(&log, LLOG_FIRST, "", 0);   /* @0 */
    put_phys(&log, LLOG_FIRST, "ab", 2); /* @7 */
    put_phys(&log, LLOG_LAST, "c", 1);   /* @16 */
    want_rec(&want, 7, "abc", 3);
    want_eof(&want);
    expect_log("empty FIRST then FIRST LAST", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* What old writers left: an empty FIRST in a block's last 7 bytes. */
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    put_phys(&log, LLOG_FULL, big, B - 2 * H); /* @0, ends at B - 7 */
    put_phys(&log, LLOG_FIRST, "", 0);         /* @B - 7 */
    put_phys(&log, LLOG_FULL, "z", 1);         /* @B */
    want_rec(&want, 0, big, B - 2 * H);
    want_rec(&want, B, "z", 1);
    want_eof(&want);
    expect_log("empty FIRST at a block end then FULL", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_missing_start_of_fragmented_record(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_MIDDLE, "abc", 3); /* @0 */
    put_phys(&log, LLOG_LAST, "de", 2);    /* @10 */
    put_phys(&log, LLOG_FULL, "z", 1);     /* @19 */
    put_phys(&log, LLOG_LAST, "qq", 2);    /* @27 */
    want_bad(&want, 0, 3, MISSING);
    want_bad(&want, 10, 2, MISSING);
    want_rec(&want, 19, "z", 1);
    want_bad(&want, 27, 2, MISSING);
    want_eof(&want);
    expect_log("MIDDLE and LAST without FIRST", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* A record whose FIRST was lost to damage in the block before. */
    uint8_t *big = xmalloc(2 * B);
    rnd_fill(big, 2 * B);
    wlog L = {0};
    wlog_add(&L, big, 100);
    wlog_add(&L, big, 2 * B); /* FIRST @107, MIDDLE @B, LAST @2B */
    wlog_add(&L, big, 10);
    L.log.p[L.rc[1].offset + H] ^= 1;
    uint64_t last = L.ph[3].header;
    CHECK_EQ(last, 2 * B);
    want_rec(&want, 0, big, 100);
    want_bad(&want, L.rc[1].offset, B - L.rc[1].offset, CHECKSUM);
    want_bad(&want, B, B - H, MISSING);
    want_bad(&want, 2 * B, L.ph[3].len, MISSING);
    want_rec(&want, L.rc[2].offset, big, 10);
    want_eof(&want);
    expect_log("fragments after a damaged FIRST", &L.log, 1, &want);
    tevs_free(&want);
    wlog_free(&L);
    free(big);
}

static void test_reader_error_in_middle_of_record(void) {
    tevs want = {0};
    buf log = {0};
    /* A damaged fragment inside an open record (short final block). */
    put_phys(&log, LLOG_FIRST, "abc", 3);               /* @0 */
    size_t bad = put_phys(&log, LLOG_MIDDLE, "def", 3); /* @10 */
    put_phys(&log, LLOG_LAST, "g", 1);                  /* @20 */
    log.p[bad + H] ^= 0x40;
    want_bad(&want, 10, 18, CHECKSUM);
    want_bad(&want, 0, 3, MIDDLE_ERR);
    want_eof(&want);
    expect_log("checksum mismatch inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Zero fill inside an open record: only the record is reported. */
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @0 */
    buf_zero_to(&log, B);
    put_phys(&log, LLOG_LAST, "g", 1); /* @B */
    put_phys(&log, LLOG_FULL, "z", 1); /* @B + 8 */
    want_bad(&want, 0, 3, MIDDLE_ERR);
    want_bad(&want, B, 1, MISSING);
    want_rec(&want, B + 8, "z", 1);
    want_eof(&want);
    expect_log("zero fill inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* A bad length in the block after a FIRST that filled its block. */
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    put_phys(&log, LLOG_FIRST, big, B - H);
    put_header(&log, 0, 50000, LLOG_MIDDLE);
    buf_bytes(&log, 0x11, 2 * B - log.len);
    put_phys(&log, LLOG_FULL, "z", 1);
    want_bad(&want, B, B, BAD_LENGTH);
    want_bad(&want, 0, B - H, MIDDLE_ERR);
    want_rec(&want, 2 * B, "z", 1);
    want_eof(&want);
    expect_log("bad length inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
    free(big);
}

static void test_reader_unknown_record_type(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "a", 1); /* @0 */
    put_phys(&log, 9, "hello", 5);     /* @8 */
    put_phys(&log, LLOG_FULL, "b", 1); /* @20 */
    put_phys(&log, 200, "", 0);        /* @28 */
    put_phys(&log, LLOG_ZERO, "q", 1); /* @35: type 0 with a payload */
    put_phys(&log, LLOG_FULL, "c", 1); /* @43 */
    want_rec(&want, 0, "a", 1);
    want_bad(&want, 8, 5, "unknown record type 9");
    want_rec(&want, 20, "b", 1);
    want_bad(&want, 28, 0, "unknown record type 200");
    want_bad(&want, 35, 1, "unknown record type 0");
    want_rec(&want, 43, "c", 1);
    want_eof(&want);
    expect_log("unknown types outside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* Inside a record: the open fragments are dropped with it. */
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @0 */
    put_phys(&log, 9, "hello", 5);        /* @10 */
    put_phys(&log, LLOG_LAST, "x", 1);    /* @22 */
    put_phys(&log, LLOG_FULL, "b", 1);    /* @30 */
    want_bad(&want, 0, 8, "unknown record type 9");
    want_bad(&want, 22, 1, MISSING);
    want_rec(&want, 30, "b", 1);
    want_eof(&want);
    expect_log("unknown type inside a record", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_reader_zero_fill_skipped_silently(void) {
    tevs want = {0};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "a", 1);
    buf_bytes(&log, 0, 100);
    want_rec(&want, 0, "a", 1);
    want_eof(&want);
    expect_log("zero fill at the end", &log, 1, &want);
    tevs_free(&want);

    buf_zero_to(&log, B);
    put_phys(&log, LLOG_FULL, "b", 1);
    want_rec(&want, 0, "a", 1);
    want_rec(&want, B, "b", 1);
    want_eof(&want);
    expect_log("zero fill to the block end", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* After a zero header the rest of the block is not looked at. */
    put_phys(&log, LLOG_FULL, "a", 1);
    buf_bytes(&log, 0, H);
    buf_bytes(&log, 0xff, B - log.len);
    put_phys(&log, LLOG_FULL, "b", 1);
    want_rec(&want, 0, "a", 1);
    want_rec(&want, B, "b", 1);
    want_eof(&want);
    expect_log("junk after a zero header", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);

    /* A whole block of zeros, then records. */
    buf_zero_to(&log, B);
    put_phys(&log, LLOG_FULL, "b", 1);
    want_rec(&want, B, "b", 1);
    want_eof(&want);
    expect_log("a block of zeros", &log, 1, &want);
    tevs_free(&want);
    buf_free(&log);
}

static void test_reader_torn_tail_cases(void) {
    tevs want = {0}, got = {0};
    buf log = {0};
    read_info info;

    /* Truncated header. */
    put_phys(&log, LLOG_FULL, "abc", 3);   /* @0 */
    put_phys(&log, LLOG_FULL, "hello", 5); /* @10 */
    log.len = 14;
    want_rec(&want, 0, "abc", 3);
    want_torn(&want, 10, 4, TORN_HEADER);
    expect_log("truncated header", &log, 1, &want);
    info = read_log(log.p, log.len, WHOLE, &got);
    CHECK_EQ(info.clean_end, 10);
    CHECK_EQ(info.position, 10);
    tevs_free(&got);
    tevs_free(&want);

    /* Truncated payload. */
    log.len = 19;
    want_rec(&want, 0, "abc", 3);
    want_torn(&want, 10, 9, TORN_PAYLOAD);
    expect_log("truncated payload", &log, 1, &want);
    info = read_log(log.p, log.len, WHOLE, &got);
    CHECK_EQ(info.clean_end, 10);
    CHECK_EQ(info.position, 10);
    tevs_free(&got);
    tevs_free(&want);
    buf_free(&log);

    /* Fragmented record open at the end, in a short block... */
    put_phys(&log, LLOG_FULL, "x", 1);    /* @0 */
    put_phys(&log, LLOG_FIRST, "abc", 3); /* @8 */
    want_rec(&want, 0, "x", 1);
    want_torn(&want, 8, 10, TORN_OPEN);
    expect_log("FIRST at the end", &log, 1, &want);
    info = read_log(log.p, log.len, WHOLE, &got);
    CHECK_EQ(info.clean_end, 8);
    CHECK_EQ(info.position, 8);
    tevs_free(&got);
    tevs_free(&want);
    buf_free(&log);

    /* ...and as a writer leaves it: a 40000-byte record cut at a block
     * boundary, inside a header, inside a payload. */
    uint8_t *big = xmalloc(40000);
    rnd_fill(big, 40000);
    wlog L = {0};
    wlog_add(&L, (const uint8_t *)"abc", 3); /* @0 */
    wlog_add(&L, big, 40000);                /* FIRST @10, LAST @B */
    static const size_t cuts[] = {B, B + 3, B + 100, B - 1};
    for (size_t i = 0; i < 4; i++) {
        size_t cut = cuts[i];
        const char *reason = cut == B       ? TORN_OPEN
                             : cut == B + 3 ? TORN_HEADER
                                            : TORN_PAYLOAD;
        buf part = {0};
        buf_put(&part, L.log.p, cut);
        want_rec(&want, 0, "abc", 3);
        want_torn(&want, 10, cut - 10, reason);
        char what[64];
        snprintf(what, sizeof what, "40000-byte record cut at %zu", cut);
        expect_log(what, &part, 1, &want);
        info = read_log(part.p, part.len, WHOLE, &got);
        CHECK_EQ(info.clean_end, 10);
        CHECK_EQ(info.position, 10);
        tevs_free(&got);
        tevs_free(&want);
        buf_free(&part);
    }
    wlog_free(&L);
    free(big);

    /* A checksum mismatch in the last block is corruption, not a tear. */
    put_phys(&log, LLOG_FULL, "abc", 3);
    put_phys(&log, LLOG_FULL, "def", 3);
    log.p[10 + H] ^= 1;
    want_rec(&want, 0, "abc", 3);
    want_bad(&want, 10, 10, CHECKSUM);
    want_eof(&want);
    expect_log("bad checksum in the last record", &log, 1, &want);
    info = read_log(log.p, log.len, WHOLE, &got);
    CHECK_EQ(info.clean_end, 10);
    tevs_free(&got);
    tevs_free(&want);
    buf_free(&log);
}

static void test_reader_clean_end_after_reading(void) {
    wlog L = {0};
    make_mixed_log(&L, 77, 40, 80000);
    tevs got = {0};
    read_info info = read_log(L.log.p, L.log.len, WHOLE, &got);
    CHECK_EQ(info.last, LLOG_EV_EOF);
    CHECK_EQ(info.clean_end, L.log.len);
    tevs_free(&got);

    /* Zero fill after the last record does not move the clean end. */
    buf padded = {0};
    buf_put(&padded, L.log.p, L.log.len);
    buf_bytes(&padded, 0, 3 * B);
    info = read_log(padded.p, padded.len, WHOLE, &got);
    CHECK_EQ(info.clean_end, L.log.len);
    CHECK_EQ(got.n, L.nrc + 1);
    tevs_free(&got);
    buf_free(&padded);
    wlog_free(&L);
}

static void test_reader_empty_range_is_done_at_once(void) {
    static const uint64_t ranges[][2] = {
        {0, 0}, {5, 5}, {B + 3, B + 3}, {100, 7}};
    buf log = {0};
    put_phys(&log, LLOG_FULL, "abc", 3);
    for (size_t i = 0; i < 4; i++) {
        tevs got = {0};
        read_opts o = {
            .start = ranges[i][0], .end = ranges[i][1], .verify = 1};
        read_info info = read_log(log.p, log.len, o, &got);
        CHECK_EQ(info.last, LLOG_EV_DONE);
        CHECK_EQ(got.n, 1);
        CHECK_EQ(info.blocks_fed, 0);
        tevs_free(&got);
    }
    buf_free(&log);
}

/* Cut points: every `step` bytes, block boundaries +-1, 0 and len. */
static size_t make_cuts(size_t len, size_t step, uint64_t **out) {
    size_t cap = len / step + 3 * (len / B + 2) + 4, n = 0;
    uint64_t *c = xmalloc(cap * sizeof *c);
    for (size_t at = 0; at < len; at += step)
        c[n++] = at;
    for (size_t b = B; b <= len + 1; b += B) {
        c[n++] = b - 1;
        if (b <= len)
            c[n++] = b;
        if (b + 1 <= len)
            c[n++] = b + 1;
    }
    c[n++] = len;
    /* sort and dedupe (insertion sort: the list is nearly sorted) */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && c[j - 1] > c[j]; j--) {
            uint64_t t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i] <= len && (m == 0 || c[m - 1] != c[i]))
            c[m++] = c[i];
    *out = c;
    return m;
}

static void test_reader_ranges_return_every_record_once(void) {
    for (uint64_t seed = 1; seed <= 2; seed++) {
        wlog L = {0};
        make_mixed_log(&L, seed * 1000003, 120, 150000);
        tevs want = {0}, got = {0};
        want_all_records(&L, &want);
        want_eof(&want);
        read_log(L.log.p, L.log.len, WHOLE, &got);
        check_events(&got, &want, "whole mixed log");
        tevs_free(&got);
        tevs_free(&want);

        uint64_t *cuts;
        size_t n = make_cuts(L.log.len, 997, &cuts);
        char what[80];
        snprintf(what, sizeof what, "mixed log %llu (%zu bytes) in %zu ranges",
                 (unsigned long long)seed, L.log.len, n);
        check_ranges_match_whole(L.log.p, L.log.len, cuts, n, 0, 1, what);
        free(cuts);

        /* Every record boundary and the bytes next to it. */
        size_t cap = 6 * L.nph + 2, m = 0;
        cuts = xmalloc(cap * sizeof *cuts);
        cuts[m++] = 0;
        for (size_t i = 0; i < L.nph; i++)
            for (uint64_t d = 0; d < 3; d++)
                if (L.ph[i].header + d > cuts[m - 1] &&
                    L.ph[i].header + d < L.log.len)
                    cuts[m++] = L.ph[i].header + d;
        cuts[m++] = L.log.len;
        check_ranges_match_whole(L.log.p, L.log.len, cuts, m, 0, 1,
                                 "cut at every physical record");
        free(cuts);
        wlog_free(&L);
    }
}

static void test_reader_sequential_gives_same_results(void) {
    wlog L = {0};
    make_mixed_log(&L, 4242, 60, 120000);
    tevs a = {0}, b = {0};
    read_opts seq = WHOLE;
    seq.sequential = 1;
    read_log(L.log.p, L.log.len, WHOLE, &a);
    read_log(L.log.p, L.log.len, seq, &b);
    check_events(&b, &a, "sequential whole read");
    tevs_free(&a);
    tevs_free(&b);
    uint64_t *cuts;
    size_t n = make_cuts(L.log.len, 4999, &cuts);
    for (size_t i = 0; i < n; i++) {
        read_opts o = {.start = cuts[i],
                       .end = i + 1 < n ? cuts[i + 1] : LLOG_NO_END,
                       .verify = 1};
        read_log(L.log.p, L.log.len, o, &a);
        o.sequential = 1;
        read_log(L.log.p, L.log.len, o, &b);
        if (!check_events(&b, &a, "sequential range"))
            note("range [%llu, %llu)", (unsigned long long)o.start,
                 (unsigned long long)o.end);
        tevs_free(&a);
        tevs_free(&b);
    }
    check_ranges_match_whole(L.log.p, L.log.len, cuts, n, 1, 1,
                             "sequential ranges");
    free(cuts);
    wlog_free(&L);
}

/* A mixed log with damage of every kind before offset `limit`. */
static void damage(const wlog *L, buf *log, uint64_t limit) {
    for (size_t i = 1; i < L->nph && L->ph[i].header + B < limit; i++) {
        const phys *p = &L->ph[i];
        uint8_t *h = log->p + p->header;
        switch (i % 17) {
        case 1: /* a payload byte: checksum mismatch */
            if (p->len > 0)
                h[H + p->len / 2] ^= 0x10;
            break;
        case 5: /* a length beyond the block */
            h[4] = 0xff;
            h[5] = 0xff;
            break;
        case 9: /* zero fill from this header to the block's end */
            memset(h, 0, B - (size_t)(p->header % B));
            break;
        case 13: /* a FIRST lost: its fragments lose their start */
            if (p->type == LLOG_FIRST)
                h[0] ^= 0x01;
            break;
        default:
            break;
        }
    }
}

static void test_reader_ranges_report_every_corruption_once(void) {
    for (uint64_t seed = 11; seed <= 13; seed++) {
        wlog L = {0};
        make_mixed_log(&L, seed, 150, 120000);
        /* End the log inside a payload, away from a block start. */
        size_t cut = L.log.len - 1;
        for (size_t i = L.nph; i-- > 0;)
            if (L.ph[i].len > 100 && L.ph[i].header % B < B - 200) {
                cut = (size_t)L.ph[i].header + H + 50;
                break;
            }
        buf log = {0};
        buf_put(&log, L.log.p, cut);
        damage(&L, &log, cut - cut % B);
        tevs whole = {0};
        read_log(log.p, log.len, WHOLE, &whole);
        size_t reports = 0;
        for (size_t i = 0; i < whole.n; i++) {
            const tev *e = &whole.v[i];
            if (e->kind == LLOG_EV_CORRUPTION)
                reports++;
            if (e->kind != LLOG_EV_RECORD)
                continue;
            /* Every record returned is one that was written. */
            int found = 0;
            for (size_t k = 0; k < L.nrc && !found; k++)
                found = L.rc[k].offset == e->offset && L.rc[k].len == e->len &&
                        (e->len == 0 ||
                         memcmp(L.rc[k].data, e->data, e->len) == 0);
            if (!CHECK(found))
                note("record @%llu, %zu bytes", (unsigned long long)e->offset,
                     e->len);
        }
        CHECK(reports >= 5);
        CHECK(whole.n > 0 && whole.v[whole.n - 1].torn);
        tevs_free(&whole);

        uint64_t *cuts;
        size_t n = make_cuts(log.len, 997, &cuts);
        char what[80];
        snprintf(what, sizeof what, "damaged log %llu in %zu ranges",
                 (unsigned long long)seed, n);
        check_ranges_match_whole(log.p, log.len, cuts, n, 0, 0, what);
        free(cuts);
        n = make_cuts(log.len, 9973, &cuts);
        check_ranges_match_whole(log.p, log.len, cuts, n, 1, 0,
                                 "damaged log, sequential ranges");
        free(cuts);
        buf_free(&log);
        wlog_free(&L);
    }
}

/*
 * An unknown type at the start of a block, inside a record opened in the
 * block before: the whole read reports it at the open record's header
 * (log_reader.h), so a range starting at that block must not report it.
 */
static void test_reader_range_at_block_with_unknown_type_in_open_record(void) {
    uint8_t *big = xmalloc(B);
    rnd_fill(big, B);
    buf log = {0};
    put_phys(&log, LLOG_FIRST, big, B - H); /* @0, fills block 0 */
    put_phys(&log, 9, "hello", 5);          /* @B */
    put_phys(&log, LLOG_FULL, "x", 1);      /* @B + 12 */
    tevs want = {0}, got = {0};
    want_bad(&want, 0, B - H + 5, "unknown record type 9");
    want_rec(&want, B + 12, "x", 1);
    want_eof(&want);
    read_log(log.p, log.len, WHOLE, &got);
    check_events(&got, &want, "whole log");
    tevs_free(&got);
    tevs_free(&want);

    /* Whatever a whole read reports at offset 0 belongs to [0, B). */
    want_rec(&want, B + 12, "x", 1);
    want_eof(&want);
    read_opts o = {.start = B, .end = LLOG_NO_END, .verify = 1};
    read_log(log.p, log.len, o, &got);
    check_events(&got, &want, "range [32768, end)");
    tevs_free(&got);
    tevs_free(&want);

    uint64_t cuts[2] = {0, B};
    check_ranges_match_whole(log.p, log.len, cuts, 2, 0, 0,
                             "ranges [0, 32768) and [32768, end)");
    buf_free(&log);
    free(big);
}

/*
 * A record torn a few bytes into a block, opened in the block before: the
 * torn tail begins at the record's first header, so a range starting at the
 * torn block must end cleanly.
 */
static void test_reader_range_at_block_with_torn_header_of_open_record(void) {
    uint8_t *big = xmalloc(40000);
    rnd_fill(big, 40000);
    wlog L = {0};
    wlog_add(&L, big, 40000); /* FIRST @0, LAST @B */
    L.log.len = B + 3;        /* the writer died in the LAST header */
    tevs want = {0}, got = {0};
    want_torn(&want, 0, B + 3, TORN_HEADER);
    read_log(L.log.p, L.log.len, WHOLE, &got);
    check_events(&got, &want, "whole log");
    tevs_free(&got);
    tevs_free(&want);

    want_eof(&want);
    read_opts o = {.start = B, .end = LLOG_NO_END, .verify = 1};
    read_log(L.log.p, L.log.len, o, &got);
    check_events(&got, &want, "range [32768, end)");
    tevs_free(&got);
    tevs_free(&want);

    uint64_t cuts[2] = {0, B};
    check_ranges_match_whole(L.log.p, L.log.len, cuts, 2, 0, 0,
                             "ranges [0, 32768) and [32768, end)");
    wlog_free(&L);
    free(big);
}

/* ---- a growing log ------------------------------------------------------ */

typedef struct tail_want {
    size_t nrec;        /* records complete within the prefix */
    uint64_t clean_end; /* end of the last of them */
    int torn;
    uint64_t offset, size;
    const char *reason;
} tail_want;

/* What reading the first p bytes of L must end with (FORMAT.md, "End of
 * file is not corruption"). */
static tail_want expect_tail(const wlog *L, uint64_t p) {
    tail_want t = {0, 0, 0, 0, 0, NULL};
    size_t i = 0;
    while (i < L->nrc && L->rc[i].end <= p)
        i++;
    t.nrec = i;
    t.clean_end = i ? L->rc[i - 1].end : 0;
    if (i == L->nrc)
        return t;
    uint64_t h = L->rc[i].offset;
    if (p <= h) { /* at the clean end or in a trailer after it */
        if (p == t.clean_end || (p == h && p % B == 0))
            return t;
        t.torn = 1;
        t.offset = t.clean_end;
        t.size = p - t.clean_end;
        t.reason = TORN_HEADER;
        return t;
    }
    t.torn = 1;
    t.offset = h;
    t.size = p - h;
    for (size_t j = 0; j < L->nph; j++) {
        const phys *f = &L->ph[j];
        if (f->rec != i || f->header > p)
            continue;
        if (f->header == p && f->header != h)
            t.reason = TORN_OPEN; /* the block before ended a fragment */
        else if (p < f->header + H)
            t.reason = TORN_HEADER;
        else if (p < f->header + H + f->len)
            t.reason = TORN_PAYLOAD;
    }
    return t;
}

static void check_growth(const wlog *L, size_t p, int sequential) {
    uint8_t *prefix = xmalloc(p); /* exactly sized: no peeking past p */
    if (p > 0)
        memcpy(prefix, L->log.p, p);
    llog_reader_options opt = {
        .end = LLOG_NO_END, .verify_checksums = 1, .sequential = sequential};
    llog_reader *r = llog_reader_new(&opt);
    if (!CHECK(r != NULL)) {
        free(prefix);
        return;
    }
    feeder f = {.log = prefix, .len = p, .sequential = sequential};
    tevs got = {0}, want = {0};
    tail_want t = expect_tail(L, p);
    for (size_t i = 0; i < t.nrec; i++)
        want_rec(&want, L->rc[i].offset, L->rc[i].data, L->rc[i].len);
    if (t.torn)
        want_torn(&want, t.offset, t.size, t.reason);
    else
        want_eof(&want);
    int ok = CHECK_EQ(drive(r, &f, 0, &got), LLOG_EV_EOF);
    ok &= check_events(&got, &want, "prefix");
    ok &= CHECK_EQ(llog_reader_clean_end(r), t.clean_end);
    ok &= CHECK_EQ(llog_reader_position(r), t.torn ? t.offset : p);
    tevs_free(&got);
    tevs_free(&want);

    /* The log grows to its full length: the rest, nothing twice. */
    f.log = L->log.p;
    f.len = L->log.len;
    for (size_t i = t.nrec; i < L->nrc; i++)
        want_rec(&want, L->rc[i].offset, L->rc[i].data, L->rc[i].len);
    want_eof(&want);
    ok &= CHECK_EQ(drive(r, &f, 0, &got), LLOG_EV_EOF);
    ok &= check_events(&got, &want, "after growing");
    ok &= CHECK_EQ(llog_reader_clean_end(r), L->log.len);
    ok &= CHECK_EQ(llog_reader_position(r), L->log.len);
    if (!ok)
        note("prefix of %zu bytes of %zu%s", p, L->log.len,
             sequential ? ", sequential" : "");
    tevs_free(&got);
    tevs_free(&want);
    llog_reader_free(r);
    free(prefix);
}

static void test_reader_growing_log_no_duplicates(void) {
    wlog L = {0};
    make_mixed_log(&L, 31337, 40, 70000);
    size_t len = L.log.len;
    for (size_t p = 0; p <= len; p += 997)
        check_growth(&L, p, p % 3 == 0);
    for (size_t i = 0; i < L.nph; i++) { /* around every header */
        static const int deltas[] = {-7, -6, -1, 0, 1, 3, 6, 7, 8, 50};
        for (size_t k = 0; k < sizeof deltas / sizeof deltas[0]; k++) {
            long long p = (long long)L.ph[i].header + deltas[k];
            if (p >= 0 && (size_t)p <= len)
                check_growth(&L, (size_t)p, k % 2);
        }
    }
    for (size_t b = B; b <= len + 1; b += B)
        for (size_t p = b - 1; p <= b + 1 && p <= len; p++)
            check_growth(&L, p, 0);
    check_growth(&L, len, 0);
    check_growth(&L, len, 1);

    /* Growing in several steps, one reader throughout. */
    llog_reader_options opt = {.end = LLOG_NO_END, .verify_checksums = 1};
    llog_reader *r = llog_reader_new(&opt);
    feeder f = {.log = L.log.p};
    tevs got = {0}, records = {0}, want = {0};
    for (size_t p = 0;; p += 1 + rnd_below(9000)) {
        f.len = p < len ? p : len;
        tevs step = {0};
        CHECK_EQ(drive(r, &f, 0, &step), LLOG_EV_EOF);
        for (size_t i = 0; i < step.n; i++)
            tevs_add_copy(&got, &step.v[i]);
        tevs_free(&step);
        if (p >= len)
            break;
    }
    CHECK(got.n > 0 && !got.v[got.n - 1].torn); /* complete at last */
    for (size_t i = 0; i < got.n; i++) {
        CHECK(got.v[i].kind == LLOG_EV_RECORD || got.v[i].kind == LLOG_EV_EOF);
        if (got.v[i].kind == LLOG_EV_RECORD)
            tevs_add_copy(&records, &got.v[i]);
    }
    want_all_records(&L, &want);
    check_events(&records, &want, "growing in steps");
    tevs_free(&got);
    tevs_free(&records);
    tevs_free(&want);
    llog_reader_free(r);
    wlog_free(&L);
}

/* ---- main --------------------------------------------------------------- */

/*
 * Payloads read in place (fed split, straight into the caller's buffer)
 * read as copied ones do, on clean logs of long records and on the same
 * logs damaged inside and around them: flipped bytes, rewritten headers,
 * zeroed blocks, truncation.
 */
static void test_reader_in_place_matches_copying(void) {
    for (uint64_t seed = 1; seed <= 40; seed++) {
        wlog L = {0};
        make_mixed_log(&L, seed, 40, 150000);
        buf log = {0};
        buf_put(&log, L.log.p, L.log.len);
        unsigned what = (unsigned)(seed % 5);
        for (int k = 0; k < 3 && what != 0; k++) {
            size_t at = rnd_below(log.len);
            if (what == 1) {
                log.p[at] ^= (uint8_t)(1 + rnd_below(255));
            } else if (what == 2) { /* a header at a block start */
                size_t blk = at - at % B;
                log.p[blk + 4 + rnd_below(3)] ^= (uint8_t)(1 + rnd_below(255));
            } else if (what == 3) {
                size_t blk = at - at % B;
                size_t n = log.len - blk < B ? log.len - blk : B;
                memset(log.p + blk, 0, n);
            } else {
                log.len = at; /* torn at any byte */
            }
        }
        for (int verify = 0; verify <= 1; verify++) {
            tevs copied = {0}, placed = {0};
            read_opts o = WHOLE;
            o.verify = verify;
            read_log(log.p, log.len, o, &copied);
            o.in_place = 1;
            read_info info = read_log(log.p, log.len, o, &placed);
            char what_s[80];
            snprintf(what_s, sizeof what_s, "seed %llu damage %u verify %d",
                     (unsigned long long)seed, what, verify);
            check_events(&placed, &copied, what_s);
            if (what == 0)
                CHECK(info.in_place > 0); /* the path was taken */
            tevs_free(&copied);
            tevs_free(&placed);
        }
        buf_free(&log);
        wlog_free(&L);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/vectors.txt\n", argv[0]);
        printf("0 passed, 1 failed\n");
        return 2;
    }
    llog_crc32c_init(1);
    ref_init();
    list_crc_impls();
    test_name = "load_vectors";
    if (!CHECK(load_vectors(argv[1]))) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    printf("vectors: %zu crc, %zu mask, %zu record\n", V.ncrc, V.nmask,
           V.nrec);

    RUN(test_crc32c_vectors_whole);
    RUN(test_crc32c_empty_input_returns_crc_unchanged);
    RUN(test_crc32c_vectors_in_chunks);
    RUN(test_crc32c_vectors_at_every_alignment);
    RUN(test_crc32c_portable_matches_model_every_length);
    RUN(test_crc32c_all_paths_agree_every_length_alignment);
    RUN(test_crc32c_all_paths_agree_around_block_sizes);
    RUN(test_crc32c_large_buffers_all_paths_agree);
    RUN(test_crc32c_init_selects_implementation);
    RUN(test_crc32c_implementation_list);
    RUN(test_mask_vectors_both_ways);
    RUN(test_type_crcs_are_the_crcs_of_the_type_bytes);
    RUN(test_status_texts);

    RUN(test_writer_reproduces_record_vectors);
    RUN(test_writer_format_md_worked_example);
    RUN(test_writer_seven_bytes_left);
    RUN(test_writer_encoded_size_equals_bytes_added);

    RUN(test_reader_round_trip_of_written_records);
    RUN(test_reader_golden_records_alone);
    RUN(test_reader_checksum_mismatch);
    RUN(test_reader_bad_record_length);
    RUN(test_reader_bad_length_in_last_full_block_is_corruption);
    RUN(test_reader_partial_record_without_end);
    RUN(test_reader_empty_first_dropped_silently);
    RUN(test_reader_missing_start_of_fragmented_record);
    RUN(test_reader_error_in_middle_of_record);
    RUN(test_reader_unknown_record_type);
    RUN(test_reader_zero_fill_skipped_silently);
    RUN(test_reader_torn_tail_cases);
    RUN(test_reader_clean_end_after_reading);
    RUN(test_reader_empty_range_is_done_at_once);
    RUN(test_reader_ranges_return_every_record_once);
    RUN(test_reader_sequential_gives_same_results);
    RUN(test_reader_ranges_report_every_corruption_once);
    RUN(test_reader_range_at_block_with_unknown_type_in_open_record);
    RUN(test_reader_range_at_block_with_torn_header_of_open_record);
    RUN(test_reader_growing_log_no_duplicates);
    RUN(test_reader_in_place_matches_copying);

    free_vectors();
    printf("%d tests passed, %d tests failed\n", tests_passed, tests_failed);
    printf("%llu passed, %llu failed\n", n_passed, n_failed);
    return n_failed == 0 ? 0 : 1;
}
