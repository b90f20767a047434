/*
 * harness.c - the checks, utilities, record encoder and golden vectors every
 * C unit test shares (see harness.h).
 */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checks ------------------------------------------------------------- */

#define MAX_PRINTED 20 /* failures printed per test; the rest are counted */

static unsigned long long n_passed, n_failed;
static unsigned long long test_failures;
const char *test_name = "";

int pass(void) {
    n_passed++;
    return 1;
}

int failure(const char *file, int line, const char *fmt, ...) {
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

void note(const char *fmt, ...) {
    if (test_failures > MAX_PRINTED)
        return;
    va_list ap;
    printf("    ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

int check_true(int ok, const char *expr, const char *file, int line) {
    return ok ? pass() : failure(file, line, "CHECK(%s) failed", expr);
}

int check_eq(unsigned long long a, unsigned long long b, const char *ea,
             const char *eb, const char *file, int line) {
    if (a == b)
        return pass();
    return failure(file, line,
                   "CHECK_EQ(%s, %s): %llu (0x%llx) != %llu (0x%llx)", ea, eb,
                   a, a, b, b);
}

int check_str(const char *a, const char *b, const char *ea, const char *eb,
              const char *file, int line) {
    if (a != NULL && b != NULL && strcmp(a, b) == 0)
        return pass();
    return failure(file, line, "CHECK_STR(%s, %s): \"%s\" != \"%s\"", ea, eb,
                   a ? a : "(null)", b ? b : "(null)");
}

int check_mem(const void *a, size_t alen, const void *b, size_t blen,
              const char *ea, const char *eb, const char *file, int line) {
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

static int tests_failed, tests_passed;

void run_test(const char *name, void (*fn)(void)) {
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

int harness_summary(void) {
    printf("%d tests passed, %d tests failed\n", tests_passed, tests_failed);
    printf("%llu passed, %llu failed\n", n_passed, n_failed);
    return n_failed == 0 ? 0 : 1;
}

/* ---- the reduced input set ---------------------------------------------- */

int harness_reduced;

void harness_read_reduced(void) {
    const char *v = getenv("LLOG_TEST_REDUCED");
    harness_reduced = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
    if (harness_reduced)
        printf("reduced input set (LLOG_TEST_REDUCED): the full matrix "
               "runs without it\n");
}

size_t harness_pick(size_t full, size_t reduced) {
    return harness_reduced ? reduced : full;
}

int harness_keep(size_t i, size_t every) {
    return !harness_reduced || i % every == 0;
}

int harness_keep_crc(size_t len, size_t align) {
    /* three-stream blocks of 3 x 256 and 3 x 1024 bytes, AVX2 short blocks
     * (800, from 832 on) and long ones, AVX-512 hybrid blocks */
    static const size_t edges[] = {768, 800, 832, 3072, 3200, 3584};
    if (!harness_reduced || len <= 320)
        return 1;
    int kept = len % 13 == 0;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        kept |= len + 8 >= edges[i] && len <= edges[i] + 8;
    return kept && (len + align) % 8 == 0;
}

/* ---- small utilities ---------------------------------------------------- */

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

uint64_t rng = 0x9E3779B97F4A7C15ull;

uint64_t rnd(void) { /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

void rnd_fill(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rnd() >> 56);
}

uint8_t *buf_grow(buf *b, size_t n) {
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

void buf_put(buf *b, const void *data, size_t n) {
    if (n > 0)
        memcpy(buf_grow(b, n), data, n);
}

void buf_bytes(buf *b, int byte, size_t n) {
    if (n > 0)
        memset(buf_grow(b, n), byte, n);
}

void buf_zero_to(buf *b, size_t offset) {
    if (!CHECK(offset >= b->len))
        return;
    buf_bytes(b, 0, offset - b->len);
}

void buf_free(buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- the record encoder ------------------------------------------------- */

size_t put_header(buf *b, uint32_t masked, size_t length, unsigned type) {
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

size_t put_phys(buf *b, unsigned type, const void *payload, size_t n) {
    uint8_t t = (uint8_t)type;
    uint32_t crc = ref_crc32c(ref_crc32c(0, &t, 1), payload, n);
    size_t at = put_header(b, ref_crc32c_mask(crc), n, type);
    buf_put(b, payload, n);
    return at;
}

/* What a LevelDB writer appends for one record when the log holds `offset`
 * bytes (docs/format.md, "Blocks and physical records"). */
size_t ref_encode(uint64_t offset, const uint8_t *data, size_t len, buf *out,
                  uint64_t *first_header) {
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

golden_vectors V;

static int hex_value(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int unhex(const char *s, uint8_t **out, size_t *len) {
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

int load_vectors(const char *path) {
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

void free_vectors(void) {
    for (size_t i = 0; i < V.ncrc; i++)
        free(V.crc[i].data);
    for (size_t i = 0; i < V.nrec; i++) {
        free(V.rec[i].payload);
        free(V.rec[i].rec);
    }
}
