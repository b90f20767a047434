/*
 * crc32c.h - CRC-32C (Castagnoli) and LevelDB's checksum mask.
 *
 * The CRC is the reflected polynomial 0x82F63B78 with initial value and final
 * xor 0xFFFFFFFF, so llog_crc32c_extend(0, "123456789", 9) == 0xE3069283.
 * Values chain like zlib's crc32: extend(extend(0, a), b) == CRC of a||b.
 *
 * Several implementations may be compiled in (a portable table-driven one
 * always, plus x86-64 or AArch64 instruction-based ones); llog_crc32c_init
 * picks the fastest one this CPU runs and llog_crc32c_implementation names it.
 * Every implementation returns the same value for the same input.
 */
#ifndef LLOG_CRC32C_H
#define LLOG_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * Builds the portable tables, probes the CPU and picks the fastest
 * implementation it offers (allow_hardware = 0 forces the portable one). Must
 * run once, from one thread, before any other function of this library;
 * calling it again from the same thread (to change the choice) is allowed.
 */
void llog_crc32c_init(int allow_hardware);

/*
 * Like llog_crc32c_init, but chooses the implementation called name (one of
 * llog_crc32c_impl_name). Returns 1 on success; returns 0 when no
 * implementation has that name or it cannot run on this CPU, and then leaves
 * the choice as it was ("portable" if none had been made). Same threading
 * rules as llog_crc32c_init, which it may replace.
 */
int llog_crc32c_init_named(const char *name);

/* Name of the chosen implementation, e.g. "avx2+vpclmulqdq+crc32" or
 * "portable"; static storage, never NULL. */
const char *llog_crc32c_implementation(void);

/*
 * CRC-32C of data[0..len) continuing from crc (0 to start). Reads exactly len
 * bytes at any alignment; never writes. data may be NULL when len is 0.
 */
uint32_t llog_crc32c_extend(uint32_t crc, const void *data, size_t len);

/*
 * The same value as llog_crc32c_extend, for data that is likely not in the
 * CPU's caches (a large record coming from memory): paths that can fetch
 * ahead of themselves do so, which is much faster from memory and a little
 * slower from cache (docs/performance.md, "Large records"); the others
 * compute it as llog_crc32c_extend does. It may fetch (never read) up to a
 * few KiB past the end of data: harmless, and it readies what usually
 * follows.
 */
uint32_t llog_crc32c_extend_ahead(uint32_t crc, const void *data, size_t len);

/*
 * llog_crc32c_extend over n separate buffers while copying them:
 * crc[i] = llog_crc32c_extend(seed, src[i], len[i]), and the len[i] bytes
 * at src[i] are copied to dst[i] (i < n; no dst range may overlap a src
 * range). Several run side by side where the CPU can, which is what many
 * short records need: one pass over each.
 */
void llog_crc32c_copy_many(uint32_t seed, uint32_t *crc, uint8_t *const *dst,
                           const uint8_t *const *src, const size_t *len,
                           size_t n);

/* 1 when llog_crc32c_copy_many runs several checksums side by side on the
 * chosen path; 0 when it takes them one at a time, then copies. */
int llog_crc32c_copy_many_interleaves(void);

/* The same, always with the portable table-driven code (used by tests). */
uint32_t llog_crc32c_portable(uint32_t crc, const void *data, size_t len);

/* 1 when some instruction-based implementation runs on this CPU and build,
 * else 0. */
int llog_crc32c_hardware_available(void);

/* The same as llog_crc32c_extend with the fastest instruction-based
 * implementation; the portable code when llog_crc32c_hardware_available() is
 * 0. */
uint32_t llog_crc32c_hardware(uint32_t crc, const void *data, size_t len);

/*
 * Every implementation by number, so that tests and benchmarks can reach each
 * path. The numbers are 0 .. llog_crc32c_impl_count() - 1, fixed for a build,
 * ordered from slowest to fastest on most CPUs; 0 is "portable" and always
 * usable. All of these are valid only after llog_crc32c_init (or
 * _init_named).
 */
int llog_crc32c_impl_count(void);

/* The number of the implementation llog_crc32c_init(1) chooses: the last
 * usable one, unless this CPU runs it slower than an earlier one (an AMD
 * family 19h CPU with AVX-512 passes over "avx512+vpclmulqdq+crc32" for
 * "avx512+vpclmulqdq"). */
int llog_crc32c_impl_default(void);

/* Name of implementation i, static storage; NULL when i is out of range. */
const char *llog_crc32c_impl_name(int i);

/* 1 when implementation i runs on this CPU and OS; 0 otherwise, including
 * when i is out of range. */
int llog_crc32c_impl_usable(int i);

/* llog_crc32c_extend computed by implementation i; same contract. Only valid
 * when llog_crc32c_impl_usable(i) (running it otherwise may fault). */
uint32_t llog_crc32c_impl_extend(int i, uint32_t crc, const void *data,
                                 size_t len);

/*
 * LevelDB stores masked CRCs: a CRC computed over data that itself contains
 * CRCs (a log inside a log) would otherwise be degenerate. Rotate right by 15
 * bits and add a constant; unmask inverts it exactly.
 */
#define LLOG_MASK_DELTA 0xA282EAD8u

static inline uint32_t llog_mask_crc(uint32_t crc) {
    return ((crc >> 15) | (crc << 17)) + LLOG_MASK_DELTA;
}

static inline uint32_t llog_unmask_crc(uint32_t masked) {
    uint32_t rot = masked - LLOG_MASK_DELTA;
    return (rot >> 17) | (rot << 15);
}

#endif /* LLOG_CRC32C_H */
