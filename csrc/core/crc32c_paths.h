/*
 * crc32c_paths.h - what the three files of the CRC-32C share: which
 * instruction-based paths this build compiles, the constants crc32c.c
 * computes at init for them, and the paths and CPU probes of crc32c_x86.c
 * and crc32c_arm.c that crc32c.c lists and chooses from.
 *
 * The mathematics behind every constant and path (equations (1) to (3),
 * "Three streams", "Folding", "Both at once", "Carried across blocks") is
 * the comment at the top of crc32c.c.
 *
 * Internal: not installed and not part of the API (crc32c.h); its functions
 * and constants are hidden from a shared library's exports.
 */
#ifndef LLOG_CRC32C_PATHS_H
#define LLOG_CRC32C_PATHS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "llog_util.h"

#if defined(__GNUC__) || defined(__clang__)
#define LLOG_CRC32C_INTERNAL __attribute__((visibility("hidden")))
#else
#define LLOG_CRC32C_INTERNAL
#endif

/*
 * Which instruction-based paths this compiler and target can build. GCC and
 * clang compile them with target attributes; MSVC compiles any intrinsic.
 * clang-cl is left out: its headers hide AVX-512 unless built with -mavx512f.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) &&       \
    !defined(_MSC_VER)
#define HAVE_X86 1
#elif defined(_M_X64) && defined(_MSC_VER) && !defined(__clang__)
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif
#if defined(__aarch64__) && defined(__AARCH64EL__) &&                         \
    (defined(__GNUC__) || defined(__clang__))
#define HAVE_ARM 1
#else
#define HAVE_ARM 0
#endif

/* Raw CRC update (no inversion): the signature every implementation has. */
typedef uint32_t (*crc_fn)(uint32_t crc, const uint8_t *p, size_t len);
/* The same while copying the len bytes at p to d (no overlap). */
typedef uint32_t (*crc_copy_fn)(uint32_t crc, uint8_t *d, const uint8_t *p,
                                size_t len);

#if HAVE_X86 || HAVE_ARM

/*
 * Three-stream blocks, longest first: each stream of a block has
 * stream_bytes[s] bytes, and stream_k[s] = {x^(16L-33), x^(8L-33)} mod P
 * shift streams A and B into place by (2) and (3). Long first streams read
 * a buffer from memory faster than short ones; 5440-byte ones take 32 KiB in
 * two blocks (fewer merges and less left over than 2 KiB ones); the shorter
 * ones are for what the longer leave (bench/README.md, "The CRC paths'
 * shapes"). (Defined here, not in crc32c.c, so that the paths' loops see the
 * sizes at compile time.)
 */
#define N_STREAM_SIZES 5
static const size_t stream_bytes[N_STREAM_SIZES] = {16384, 5440, 1024, 256,
                                                    64};

/*
 * Hybrid blocks (AVX-512): HYBRID_STEPS steps, each folding 256 bytes of V
 * and feeding HYBRID_WORDS words to each of the streams A, B, C (the ratio
 * at which both units run near their peaks on a CPU that runs whole 512-bit
 * instructions: docs/performance.md).
 * hybrid_k shifts c, crc(0, V), crc(0, A), crc(0, B) by |VABC|, 3L, 2L and
 * L bytes.
 */
#define HYBRID_STEPS 8
#define HYBRID_WORDS 8
#define HYBRID_V (256 * HYBRID_STEPS)
#define HYBRID_L (8 * HYBRID_WORDS * HYBRID_STEPS)
#define HYBRID_BLOCK (HYBRID_V + 3 * HYBRID_L)

/*
 * AVX2 paths (256-bit VPCLMULQDQ). Folding alone: eight ymm accumulators, 256
 * bytes a loop, reduced by 32, 64 and 128 bytes (fold_32, fold_64, fold_128)
 * and then lane 0 onto lane 1 (fold_lanes[2]). Side by side with crc32 (see
 * "Carried across blocks"), blocks V A B C of a shape: each of its steps folds
 * 256 bytes of V and feeds Y_WORDS words to each of A, B, C (3 x 6 words per
 * 256 bytes: more crc32 words slow the folds down; bench/README.md).
 * gap carries the accumulators over A B C onto the next block's V, stream_k
 * merges A and B into C, tail_k moves the folded value over the last A B C.
 */
#define Y_WORDS 6
#define Y_NS 3 /* crc32 streams */
typedef struct y_shape {
    size_t steps, l, block; /* l = 8 * words * steps bytes a stream */
    size_t share;           /* block / steps: a step's lines to fetch ahead */
    uint64_t gap[2], stream_k[Y_NS - 1], tail_k;
} y_shape;
/* Inputs this long start with huge blocks (below it, long ones). */
#define Y_HUGE_MIN ((size_t)128 << 10)
/*
 * Inputs longer than Y_HUGE_MAX, up to Y_SPREAD_MAX, take long blocks
 * fetching ahead as llog_crc32c_extend_ahead does; longer still, short
 * blocks only, fetching Y_PREFETCH bytes ahead. Huge blocks stay fastest
 * up to 8 MiB, long ones fetching ahead from there while the input is
 * mostly in the L3 cache, and short ones prefetching from memory
 * (bench/README.md, "The CRC paths' shapes", has the figures).
 */
#define Y_HUGE_MAX ((size_t)8 << 20)
#define Y_SPREAD_MAX ((size_t)32 << 20)
#define Y_PREFETCH 4096
/* llog_crc32c_extend_ahead: every step of every block asks for its share
 * of the lines Y_AHEAD bytes on, one in Y_AHEAD_STRIDE (the CPU's adjacent
 * line prefetcher brings the other; asking for every line is slower from
 * cache); from memory, it is much faster (docs/performance.md). */
#define Y_AHEAD 8192
#define Y_AHEAD_STRIDE 128
/* Its inputs longer than this take short blocks only: they are expected
 * from memory, where short blocks beat huge ones (bench/README.md). */
#define Y_AHEAD_HUGE_MAX ((size_t)2 << 20)

/*
 * The 128-bit path (PCLMULQDQ without VPCLMULQDQ): blocks V A B C carried
 * across as the AVX2 ones are, with X_LANES xmm accumulators; each step
 * folds 16 * X_LANES bytes of V and feeds X_WORDS words to each of the
 * Y_NS crc32 streams (blocks are then multiples of 16 bytes, so that the
 * aligned loads stay aligned). Inputs from X_HUGE_MIN start with huge
 * blocks (X_HUGE_STEPS steps: 34 KiB), shorter ones with long ones
 * (X_LONG_STEPS); short ones (X_SHORT_STEPS) take what those leave, folding
 * alone what short ones leave. Long streams read a buffer beyond the L2 cache
 * much faster than short ones (bench/README.md, "The 128-bit side-by-side
 * path", has the figures behind every number here).
 */
#define X_LANES 8
#define X_WORDS 6
#define X_HUGE_MIN ((size_t)64 << 10)
#define X_HUGE_STEPS 128
#define X_LONG_STEPS 8
#define X_SHORT_STEPS 2
/* Inputs longer than X_AHEAD_MIN, likely beyond the L2 cache, have their
 * huge blocks ask at every step for the lines X_AHEAD bytes on in V and in
 * each stream (the hardware's prefetchers follow four streams less well).
 * Most of that distance is for the streams, which advance 48 bytes a step:
 * their lines need asking for hundreds of steps before they are read. */
#define X_AHEAD_MIN ((size_t)512 << 10)
#define X_AHEAD ((size_t)24 << 10)

/* Every constant of the instruction-based paths: polynomials mod P (x^n for
 * the n the comments name), filled once by crc32c.c at init. */
struct llog_crc32c_constants {
    uint64_t stream_k[N_STREAM_SIZES][2]; /* three-stream blocks, above */
    /* AVX-512 folding distances: 4 x 64 bytes per loop, 64 bytes, and the
     * lanes 0..2 of a 64-byte block onto lane 3 (48, 32, 16 bytes; lane 3
     * 0). Fold constants are {x^(8D+31), x^(8D-33)} mod P for D bytes. */
    uint64_t fold_256[2], fold_64[2], fold_lanes[4][2];
    uint64_t hybrid_k[4]; /* hybrid blocks, above */
    /* AVX2 block shapes: huge (64 steps, 25 KiB) for inputs from
     * Y_HUGE_MIN to Y_HUGE_MAX, long (8 steps) below and, fetching ahead,
     * above up to Y_SPREAD_MAX, short (2 steps) for what they leave and,
     * prefetching, for longer inputs still. Beyond the L2 cache, huge blocks
     * keep the rate of cache-resident ones up to 8 MiB; beyond, long blocks
     * fetching ahead are faster, and from memory prefetching short ones (see
     * Y_HUGE_MAX); up to 128 KiB long ones are as fast as huge ones and
     * leave less to the short ones (docs/performance.md). */
    y_shape y_huge, y_long, y_short;
    uint64_t fold_32[2], fold_128[2];
    /* The 128-bit path's shapes (X_LANES, above): huge, long, short. */
    y_shape x_huge, x_long, x_short;
    uint64_t x_lanes[2]; /* folds by 16 * X_LANES bytes */
};
LLOG_CRC32C_INTERNAL extern struct llog_crc32c_constants llog_crc32c_k;

#endif /* HAVE_X86 || HAVE_ARM */

#if HAVE_X86
/* crc32c_x86.c: the CPU probe (CPUID, XGETBV), run once by
 * llog_crc32c_init, and what it found. */
LLOG_CRC32C_INTERNAL void llog_crc32c_detect_x86(void);
LLOG_CRC32C_INTERNAL int llog_crc32c_has_sse42(void);
LLOG_CRC32C_INTERNAL int llog_crc32c_has_pclmul(void);
LLOG_CRC32C_INTERNAL int llog_crc32c_has_avx2(void);
LLOG_CRC32C_INTERNAL int llog_crc32c_has_avx512(void);
/* 512-bit instructions run as two 256-bit halves (AMD family 19h). */
LLOG_CRC32C_INTERNAL int llog_crc32c_avx512_halved(void);

/* The x86-64 paths, slowest first (crc_fn: no inversion). */
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_sse42(uint32_t crc, const uint8_t *p,
                                                size_t len);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_sse42_3way(uint32_t crc,
                                                     const uint8_t *p,
                                                     size_t len);
/* 128-bit folding side by side with three crc32 streams. */
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_pclmul_crc32(uint32_t crc,
                                                       const uint8_t *p,
                                                       size_t len);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_avx2_fold(uint32_t crc,
                                                    const uint8_t *p,
                                                    size_t len);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_avx2(uint32_t crc, const uint8_t *p,
                                               size_t len);
/* llog_crc32c_avx2 fetching ahead of itself (llog_crc32c_extend_ahead). */
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_avx2_ahead(uint32_t crc,
                                                     const uint8_t *p,
                                                     size_t len);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_avx512_fold(uint32_t crc,
                                                      const uint8_t *p,
                                                      size_t len);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_avx512(uint32_t crc,
                                                 const uint8_t *p, size_t len);
/* The folding paths' update while copying (llog_crc32c_copy_many). */
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_avx2_fold_copy(uint32_t crc,
                                                         uint8_t *d,
                                                         const uint8_t *p,
                                                         size_t len);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_avx512_fold_copy(uint32_t crc,
                                                           uint8_t *d,
                                                           const uint8_t *p,
                                                           size_t len);

/*
 * llog_crc32c_copy_many on any x86 instruction path (all have SSE4.2's
 * crc32), from the inverted seed: short buffers three at a time, long ones
 * by copy (the chosen path's, folding while copying) or, when it is NULL,
 * by update (the chosen path), then copied.
 */
LLOG_CRC32C_INTERNAL void
llog_crc32c_copy_many_x86(uint32_t seed, uint32_t *crc, uint8_t *const *d,
                          const uint8_t *const *p, const size_t *len, size_t n,
                          crc_fn update, crc_copy_fn copy);
#endif /* HAVE_X86 */

#if HAVE_ARM
/* crc32c_arm.c: what the CPU offers (HWCAP on Linux), and the paths. */
LLOG_CRC32C_INTERNAL int llog_crc32c_has_arm_crc(void);
LLOG_CRC32C_INTERNAL int llog_crc32c_has_arm_pmull(void);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_arm(uint32_t crc, const uint8_t *p,
                                              size_t len);
LLOG_CRC32C_INTERNAL uint32_t llog_crc32c_arm_3way(uint32_t crc,
                                                   const uint8_t *p,
                                                   size_t len);
#endif /* HAVE_ARM */

#endif /* LLOG_CRC32C_PATHS_H */
