/*
 * test_crc32c.c - every CRC-32C implementation this CPU runs, against the
 * bit-at-a-time reference of ref_crc32c.h, written from the definition.
 *
 * Usage: test_crc32c [tests/golden/vectors.txt]
 * With LLOG_TEST_REDUCED=1 in the environment it takes a reduced input set,
 * for valgrind (harness.h).
 * Prints one line per failure and finally "N passed, M failed"; exits 1 on
 * any failure. Data sits at the very end of an exactly sized allocation, so
 * an AddressSanitizer build catches any read past it.
 */
#define _POSIX_C_SOURCE 200112L

#include "crc32c.h"
#include "harness.h"
#include "ref_crc32c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long passed, failed;

static void check(int ok, const char *what, const char *impl, size_t len,
                  size_t align) {
    if (ok) {
        passed++;
        return;
    }
    if (failed++ < 50)
        printf("FAIL %s: impl %s, len %zu, align %zu\n", what, impl, len,
               align);
}

/* Deterministic noise (harness.h's generator, seeded), so failures
 * reproduce. */
static void fill_random(uint8_t *p, size_t len, uint64_t seed) {
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    rnd_fill(p, len);
}

/* A copy of src at address alignment align (mod 64) that ends exactly where
 * its allocation ends; free with free(*block). */
static const uint8_t *placed_copy(const uint8_t *src, size_t len, size_t align,
                                  void **block) {
    if (posix_memalign(block, 64, align + len + (align + len == 0)) != 0) {
        perror("posix_memalign");
        exit(2);
    }
    uint8_t *dst = (uint8_t *)*block + align;
    if (len)
        memcpy(dst, src, len);
    return dst;
}

static void check_all_impls(const uint8_t *data, size_t len, size_t align,
                            uint32_t start, uint32_t want, const char *what) {
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_impl_usable(i))
            continue;
        uint32_t got = llog_crc32c_impl_extend(i, start, data, len);
        check(got == want, what, llog_crc32c_impl_name(i), len, align);
    }
}

static void test_known_vectors(void) {
    uint8_t zeros[32], ones[32], up[32], down[32];
    for (int i = 0; i < 32; i++) {
        zeros[i] = 0;
        ones[i] = 0xFF;
        up[i] = (uint8_t)i;
        down[i] = (uint8_t)(31 - i);
    }
    check_all_impls((const uint8_t *)"123456789", 9, 0, 0, 0xE3069283u,
                    "check value 123456789");
    check_all_impls(zeros, 32, 0, 0, 0x8A9136AAu, "32 zero bytes");
    check_all_impls(ones, 32, 0, 0, 0x62A8AB43u, "32 0xFF bytes");
    check_all_impls(up, 32, 0, 0, 0x46DD794Eu, "bytes 0..31");
    check_all_impls(down, 32, 0, 0, 0x113FDB5Cu, "bytes 31..0");
    check_all_impls(NULL, 0, 0, 0x12345678u, 0x12345678u,
                    "empty input keeps the crc");
    check(ref_crc32c_bitwise(0, (const uint8_t *)"123456789", 9) ==
              0xE3069283u,
          "reference check value", "reference", 9, 0);
}

/* Golden "crc" and "mask" lines: whole, byte by byte, at every alignment. */
static void check_golden_line(const char *line) {
    static char hex[4096];
    uint8_t *bytes = NULL;
    unsigned want, crc, masked;
    size_t len = 0;
    if (sscanf(line, "mask %8x %8x", &crc, &masked) == 2) {
        check(llog_mask_crc(crc) == masked, "golden mask", "-", 0, 0);
        check(llog_unmask_crc(masked) == crc, "golden unmask", "-", 0, 0);
        return;
    }
    if (sscanf(line, "crc %4095s %8x", hex, &want) != 2)
        return;
    int parsed = unhex(hex, &bytes, &len);
    check(parsed, "golden hex parses", hex, 0, 0);
    if (!parsed)
        return;
    for (size_t align = 0; align < 64; align++) {
        void *block;
        const uint8_t *p = placed_copy(bytes, len, align, &block);
        check_all_impls(p, len, align, 0, want, "golden vector");
        free(block);
    }
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        uint32_t c = 0;
        for (size_t j = 0; llog_crc32c_impl_usable(i) && j < len; j++)
            c = llog_crc32c_impl_extend(i, c, bytes + j, 1);
        if (llog_crc32c_impl_usable(i))
            check(c == want, "golden vector byte by byte",
                  llog_crc32c_impl_name(i), len, 0);
    }
    free(bytes);
}

static void test_golden_file(const char *path) {
    FILE *f = fopen(path, "r");
    check(f != NULL, "golden vectors file opens", path, 0, 0);
    if (f == NULL)
        return;
    char line[8192];
    while (fgets(line, sizeof line, f) != NULL)
        check_golden_line(line);
    fclose(f);
}

/* Whether any alignment of len bytes is checked (harness_keep_crc): the
 * reference is slow, so a reduced run skips it for the lengths it skips. */
static int any_alignment(size_t len) {
    for (size_t align = 0; align < 64; align++)
        if (harness_keep_crc(len, align))
            return 1;
    return 0;
}

/* Every length 0..4096 at every alignment 0..63. */
static void test_every_length_and_alignment(void) {
    enum { MAX_LEN = 4096 };
    static uint8_t src[MAX_LEN];
    fill_random(src, MAX_LEN, 1);
    for (size_t len = 0; len <= MAX_LEN; len++) {
        if (!any_alignment(len))
            continue;
        uint32_t start = (uint32_t)len * 0x01000193u;
        uint32_t want = ref_crc32c_bitwise(start, src, len);
        for (size_t align = 0; align < 64; align++) {
            if (!harness_keep_crc(len, align))
                continue;
            void *block;
            const uint8_t *p = placed_copy(src, len, align, &block);
            check_all_impls(p, len, align, start, want, "length x alignment");
            free(block);
        }
    }
}

/* Long inputs, and lengths just around every block size the fast paths
 * switch on (64-byte folds, 256-byte fold loop, 3 x 64/256/2048 streams,
 * AVX2 blocks of 800, 3200 and 25600 bytes from 128 KiB on, 128-bit
 * blocks of 544, 2176 and 34816 bytes from 64 KiB on, fetching ahead
 * past 512 KiB). */
static void test_long_inputs(void) {
    static const size_t sizes[] = {
        1u << 20, 3u * (1u << 20) + 7, 6144, 12288, 18432, 16384, 32768,
        32768 + 6144 + 768 + 192 + 64 + 7, 65536, 100000,
        /* AVX2: where huge blocks begin, and
         * huge, long and short ones in turn */
        131072, 5 * 25600 + 3 * 3200 + 800 + 40,
        /* 128-bit: a huge block and what is left below where huge
         * blocks begin (long ones then); huge, long, short ones and
         * folding alone in turn */
        34816 + 16, 2 * 34816 + 3 * 2176 + 544 + 128 + 16,
        3 * 34816 + 2176 + 2 * 544 + 200,
        /* 128-bit: where huge blocks start fetching ahead */
        512u << 10};
    size_t max = 3u * (1u << 20) + 7 + 16;
    uint8_t *src = malloc(max);
    if (src == NULL)
        exit(2);
    fill_random(src, max, 2);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (size_t d = 0; d < 17; d++) {
            size_t len = sizes[s] + d - 8;
            if (sizes[s] >= (1u << 20) && d != 8 && d != 9)
                continue; /* the megabyte ones once or twice is enough */
            if (!harness_keep(d + s, 3))
                continue; /* a reduced run: a third, turning with s */
            void *block;
            const uint8_t *p = placed_copy(src, len, d % 64, &block);
            check_all_impls(p, len, d, 0, ref_crc32c_bitwise(0, src, len),
                            "long input");
            free(block);
        }
    }
    free(src);
}

/* llog_crc32c_extend_ahead under every implementation on the len bytes at
 * p, whole and chained at a third, against the table-driven path; the
 * default implementation is chosen again after. */
static void check_extend_ahead(const uint8_t *p, size_t len, size_t align) {
    uint32_t want = llog_crc32c_portable(0, p, len);
    uint32_t want_seeded = llog_crc32c_portable(0x1234u, p, len);
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_init_named(llog_crc32c_impl_name(i)))
            continue;
        uint32_t got = llog_crc32c_extend_ahead(0, p, len);
        uint32_t half = llog_crc32c_extend_ahead(0x1234u, p, len / 3);
        half = llog_crc32c_extend_ahead(half, p + len / 3, len - len / 3);
        check(got == want && half == want_seeded, "extend_ahead",
              llog_crc32c_impl_name(i), len, align);
    }
    llog_crc32c_init(1);
}

/* Whether the AVX2 path with the thresholds below runs here. */
static int avx2_blocks_usable(void) {
    for (int i = 0; i < llog_crc32c_impl_count(); i++)
        if (strcmp(llog_crc32c_impl_name(i), "avx2+vpclmulqdq+crc32") == 0)
            return llog_crc32c_impl_usable(i);
    return 0;
}

/* Inputs around the AVX2 path's last thresholds (long blocks fetching
 * ahead past 8 MiB, short ones prefetching at their start past 32 MiB),
 * against the table-driven path (test_long_inputs checks that one against
 * the bitwise reference, which would take seconds here). Where that path
 * does not run (valgrind's CPU) they take the paths of test_long_inputs, so
 * a reduced run skips them there. */
static void test_very_long_inputs(void) {
    if (harness_reduced && !avx2_blocks_usable())
        return;
    static const size_t sizes[] = {(8u << 20) + 801, (32u << 20) + 7,
                                   (32u << 20) - 40,
                                   (33u << 20) + 3 * 3200 + 801};
    size_t max = (33u << 20) + 3 * 3200 + 801 + 64;
    uint8_t *src = malloc(max);
    if (src == NULL)
        exit(2);
    fill_random(src, max, 8);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t len = sizes[s], align = 1 + 21 * s;
        uint32_t want = llog_crc32c_portable(0x5EEDu, src + align, len);
        check_all_impls(src + align, len, align, 0x5EEDu, want,
                        "very long input");
        check_extend_ahead(src + align, len, align);
    }
    free(src);
}

/* extend(extend(c, a), b) == crc(a || b), with a and b done by any two
 * implementations. */
static void test_chaining_across_impls(void) {
    enum { LEN = 10000 };
    static uint8_t src[LEN];
    static const size_t splits[] = {0,   1,   7,    63,   64,   100,
                                    129, 777, 4095, 5000, 9999, LEN};
    fill_random(src, LEN, 3);
    uint32_t want = ref_crc32c_bitwise(0xDEADBEEFu, src, LEN);
    int n = llog_crc32c_impl_count();
    for (size_t s = 0; s < sizeof splits / sizeof splits[0]; s++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                if (!llog_crc32c_impl_usable(i) || !llog_crc32c_impl_usable(j))
                    continue;
                size_t k = splits[s];
                uint32_t c = llog_crc32c_impl_extend(i, 0xDEADBEEFu, src, k);
                c = llog_crc32c_impl_extend(j, c, src + k, LEN - k);
                check(c == want, "chained across implementations",
                      llog_crc32c_impl_name(j), k, 0);
            }
}

/* The numbering, the names and init_named agree with each other. */
static void test_names_and_init_named(void) {
    static uint8_t src[1000];
    fill_random(src, sizeof src, 4);
    uint32_t want = ref_crc32c_bitwise(0, src, sizeof src);
    check(strcmp(llog_crc32c_impl_name(0), "portable") == 0 &&
              llog_crc32c_impl_usable(0),
          "implementation 0 is the usable portable one", "-", 0, 0);
    check(llog_crc32c_impl_name(-1) == NULL &&
              llog_crc32c_impl_name(llog_crc32c_impl_count()) == NULL &&
              !llog_crc32c_impl_usable(llog_crc32c_impl_count()),
          "out-of-range numbers have no name and are unusable", "-", 0, 0);
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        const char *name = llog_crc32c_impl_name(i);
        int ok = llog_crc32c_init_named(name);
        check(ok == llog_crc32c_impl_usable(i), "init_named follows usable",
              name, 0, 0);
        if (ok)
            check(strcmp(llog_crc32c_implementation(), name) == 0 &&
                      llog_crc32c_extend(0, src, sizeof src) == want,
                  "init_named chooses that implementation", name, 0, 0);
    }
    llog_crc32c_init(0);
    check(!llog_crc32c_init_named("no such implementation") &&
              !llog_crc32c_init_named(NULL) &&
              strcmp(llog_crc32c_implementation(), "portable") == 0,
          "unknown name fails and leaves the choice", "-", 0, 0);
}

/* init(0/1), portable, hardware and the mask keep their old contracts. */
/* One llog_crc32c_copy_many call over n buffers cut from src at seed's
 * lengths (0 to about 5000, so that short ones and long ones, folded while
 * copied, mix), each in its own exact allocation: every checksum and every
 * copy as the reference says. */
static void check_copy_many(const uint8_t *src, size_t n, uint64_t seed64) {
    enum { MOST = 9 };
    const uint8_t *from[MOST] = {0};
    uint8_t *to[MOST] = {0};
    size_t len[MOST] = {0};
    uint32_t crc[MOST] = {0};
    void *blocks[MOST] = {0};
    rng = seed64;
    for (size_t i = 0; i < n; i++) {
        size_t most = rnd() % 8 == 0 ? 5000 : rnd() % 3 == 0 ? 1100 : 140;
        len[i] = (size_t)(rnd() % most);
        from[i] = placed_copy(src + 37 * i, len[i], i * 13 % 64, &blocks[i]);
        to[i] = malloc(len[i] + 1);
        if (to[i] == NULL)
            exit(2);
    }
    uint32_t seed = (uint32_t)(seed64 * 0x9E3779B9u);
    llog_crc32c_copy_many(seed, crc, to, from, len, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t want = ref_crc32c_bitwise(seed, src + 37 * i, len[i]);
        check(crc[i] == want && memcmp(to[i], src + 37 * i, len[i]) == 0,
              "copy_many", llog_crc32c_implementation(), len[i], n);
        free(blocks[i]);
        free(to[i]);
    }
}

/* llog_crc32c_copy_many under every implementation, for 0 to 9 buffers. */
static void test_copy_many(void) {
    static uint8_t src[9 * 37 + 5000];
    fill_random(src, sizeof src, 6);
    for (int i = 0; i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_init_named(llog_crc32c_impl_name(i)))
            continue;
        for (uint64_t seed = 1; seed <= 300; seed++)
            check_copy_many(src, (size_t)(seed % 10), seed);
    }
    llog_crc32c_init(1);
}

/* llog_crc32c_extend_ahead under every implementation: lengths around the
 * AVX2 block sizes, every alignment of a few, chained at splits, and the
 * same value as llog_crc32c_extend. */
static void test_extend_ahead(void) {
    static const size_t sizes[] = {
        0,     1,      63,     831,    832,      3231,
        32761, 131072, 131071, 200000, 1u << 20, 3u * (1u << 20) + 7};
    size_t max = 3u * (1u << 20) + 7 + 64;
    uint8_t *src = malloc(max);
    if (src == NULL)
        exit(2);
    fill_random(src, max, 7);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t align = (s * 13) % 64;
        check_extend_ahead(src + align, sizes[s], align);
    }
    free(src);
}

static void test_original_entry_points(void) {
    static uint8_t src[1000];
    fill_random(src, sizeof src, 5);
    uint32_t want = ref_crc32c_bitwise(0, src, sizeof src);
    llog_crc32c_init(0);
    check(strcmp(llog_crc32c_implementation(), "portable") == 0 &&
              llog_crc32c_portable(0, src, sizeof src) == want &&
              llog_crc32c_hardware(0, src, sizeof src) == want,
          "init(0) is portable; portable and hardware agree", "-", 0, 0);
    llog_crc32c_init(1);
    int last = llog_crc32c_impl_count() - 1, best = llog_crc32c_impl_default();
    while (!llog_crc32c_impl_usable(last))
        last--;
    /* the last usable one, or on Zen 4 AVX-512 folding before the
     * side-by-side path */
    int passed_over =
        best == last - 1 &&
        strcmp(llog_crc32c_impl_name(last), "avx512+vpclmulqdq+crc32") == 0 &&
        strcmp(llog_crc32c_impl_name(best), "avx512+vpclmulqdq") == 0;
    check(strcmp(llog_crc32c_implementation(), llog_crc32c_impl_name(best)) ==
                  0 &&
              llog_crc32c_impl_usable(best) && (best == last || passed_over) &&
              llog_crc32c_hardware_available() == (best > 0),
          "init(1) picks the default: the last usable implementation, or "
          "the one it passes over for",
          llog_crc32c_implementation(), 0, 0);
    check(llog_crc32c_extend(0, src, sizeof src) == want, "llog_crc32c_extend",
          llog_crc32c_implementation(), sizeof src, 0);
    int round_trips = 1;
    for (uint64_t v = 0; v <= 0xFFFFFFFFu; v += 0x00010001u)
        round_trips &= llog_unmask_crc(llog_mask_crc((uint32_t)v)) == v;
    check(round_trips, "unmask inverts mask", "-", 0, 0);
}

int main(int argc, char **argv) {
    harness_read_reduced();
    llog_crc32c_init(1);
    printf("implementations:");
    for (int i = 0; i < llog_crc32c_impl_count(); i++)
        printf(" %s%s", llog_crc32c_impl_name(i),
               llog_crc32c_impl_usable(i) ? "" : "(unusable here)");
    printf("; chosen: %s (default %s)\n", llog_crc32c_implementation(),
           llog_crc32c_impl_name(llog_crc32c_impl_default()));
    test_known_vectors();
    if (argc > 1)
        test_golden_file(argv[1]);
    test_every_length_and_alignment();
    test_long_inputs();
    test_very_long_inputs();
    test_chaining_across_impls();
    test_names_and_init_named();
    test_copy_many();
    test_extend_ahead();
    test_original_entry_points();
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed != 0;
}
