/*
 * test_checksums.c - CRC-32C through every entry point and every
 * implementation this CPU runs (against the golden vectors and
 * ref_crc32c.h), and the mask (docs/format.md, "Checksums").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "harness.h"

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
        if (!CHECK_EQ(ref_crc32c_bitwise(0, v->data, v->len), v->crc) ||
            !CHECK_EQ(ref_crc32c(0, v->data, v->len), v->crc))
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
            if (!harness_keep_crc(len, align))
                continue;
            if (!CHECK_EQ(llog_crc32c_portable(seed, p, len),
                          ref_crc32c(seed, p, len)))
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
            if (!harness_keep_crc(len, align))
                continue;
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
    /* (A reduced run takes one length in 29 of these, and fewer offsets.) */
    for (size_t len = 4097; len <= 20000; len += harness_pick(7, 7 * 29))
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
            for (size_t align = 0; align < 64;
                 align += d % 4 ? 21 : harness_pick(1, 9))
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
        uint32_t want = ref_crc32c(0, m, n),
                 want1 = ref_crc32c(0, m + 1, n - 1);
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
    CHECK_STR(llog_crc32c_implementation(),
              llog_crc32c_impl_name(llog_crc32c_impl_default()));
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
        /* The fastest that runs here: the last usable one in the list, or
         * (a CPU passing it over) the one before it. */
        int last = 0, best = llog_crc32c_impl_default();
        for (int i = 0; i < llog_crc32c_impl_count(); i++)
            if (llog_crc32c_impl_usable(i))
                last = i;
        CHECK(llog_crc32c_impl_usable(best) &&
              (best == last || best == last - 1));
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
            !CHECK_EQ(ref_crc32c_mask(v->crc), v->masked))
            note("mask vector %zu", i);
    }
    for (int i = 0; i < 100000; i++) {
        uint32_t x = (uint32_t)rnd();
        if (!CHECK_EQ(llog_unmask_crc(llog_mask_crc(x)), x) ||
            !CHECK_EQ(llog_mask_crc(llog_unmask_crc(x)), x) ||
            !CHECK_EQ(llog_mask_crc(x), ref_crc32c_mask(x)))
            note("x = 0x%08x", (unsigned)x);
    }
}

void suite_checksums(void) {
    list_crc_impls();
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
}
