/*
 * crc32c.c - CRC-32C: portable tables and instruction-based paths, one of
 * them picked at run time.
 *
 * The mathematics, once.
 *
 * A CRC reads a message as a polynomial over GF(2), one coefficient per bit,
 * and is a remainder modulo P(x) = x^32 + x^28 + x^27 + ... + 1 (Castagnoli).
 * CRC-32C is "reflected": the first bit of the message is the highest power,
 * and a 32-bit word holds the coefficient of x^31 in bit 0 and of x^0 in bit
 * 31 (P less its x^32 term reads 0x82F63B78). Leaving out the initial and
 * final inversion, the register after an n-byte message M, started at c, is
 *
 *     crc(c, M) = c * x^(8n) + M * x^32   (mod P).                      (1)
 *
 * Multiplying by x is a right shift, adding P when a coefficient leaves the
 * word (times_x). Products mod P follow by shift-and-add and x^k mod P by
 * square-and-multiply; every constant below is made that way at init.
 *
 * Tables (portable). Eight times_x steps for one byte depend only on the low
 * byte of crc ^ byte, so table[0][i] holds them and
 * crc = table[0][(crc ^ b) & 0xff] ^ (crc >> 8). As (1) is linear, 16 bytes
 * may be looked up independently and xored: table[k][i] is the effect of byte
 * i followed by k zero bytes, one more byte step applied to table[k-1][i].
 * Sixteen independent loads replace a chain of sixteen dependent ones.
 *
 * Instructions. x86's crc32 and ARMv8's crc32cx compute (1) for 8 bytes. Their
 * latency (3 cycles) is three times their issue interval, so a single chain
 * uses a third of what the core can do.
 *
 * Three streams. By (1), for adjacent pieces A, B, C of L bytes each,
 *
 *     crc(c, ABC) = crc(c, A) x^(16L) + crc(0, B) x^(8L) + crc(0, C)     (2)
 *
 * (mod P), so three independent chains run side by side and merge after. A
 * carry-less multiply (PCLMULQDQ, PMULL) of reflected 32-bit a and k, read as
 * a reflected 64-bit value, is a*k*x: the product's top term x^62 lands in
 * bit 0, which stands for x^63 at that width. crc32 of a 64-bit value from 0
 * multiplies it by x^32 and reduces, by (1). Hence
 *
 *     crc32_u64(0, clmul(a, x^(j-33) mod P)) = a * x^j   (mod P),         (3)
 *
 * and the two shifted terms of (2) are xored into the last 8 bytes of C, whose
 * own crc32 does the reduction for them.
 *
 * Folding (AVX-512, AVX2). Hold a 16-byte block as V = H x^64 + L (H its first
 * 8 bytes, the higher powers). Moved D bytes later, V x^(8D) is congruent to
 * H (x^(8D+31) mod P) x^33 + L (x^(8D-33) mod P) x^33, and clmul(h, k) read
 * as a reflected 128-bit value is h*k*x^33: two carry-less multiplies give a
 * 16-byte value that may be xored onto the block D bytes later without
 * changing the message mod P. Folding blocks onto later ones leaves 16 bytes
 * that stand for everything read so far; their crc32 from 0 is the CRC. The
 * start value c is xored into the first 4 bytes first, as (1) shows
 * crc(c, M) = crc(0, M + c x^(8n-32)).
 *
 * Both at once. The vector unit folds and the crc32 unit runs its streams in
 * parallel: a block V A B C, V folded and A, B, C three crc32 streams of L
 * bytes, is (2) with one more term, and the block's start value c enters as
 * crc(c, VABC) = c x^(8|VABC|) + crc(0, VABC), so blocks do not wait for
 * each other.
 *
 * Carried across blocks (AVX2). Instead of reducing the folded V of every
 * block, the accumulators move on over A B C to the next block's V: that is
 * a fold by |V's last 256 bytes| + |ABC| bytes, only another constant. And
 * r = crc(0, ABC), which stands for A B C at the end of C, enters the next
 * V like a start value, xored into its first 4 bytes (by (1) as above); the
 * very first V takes the caller's start value the same way. Only the last
 * block is reduced: its accumulators give v = crc(0, everything up to the
 * end of its V), and the CRC is v x^(8|ABC|) + r, by (3).
 */
#include "crc32c.h"

#include <assert.h>
#include <string.h>

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

#define POLY 0x82F63B78u
#define X_POW_0 0x80000000u /* the polynomial 1, reflected */

/* Raw CRC update (no inversion): the signature every implementation has. */
typedef uint32_t (*crc_fn)(uint32_t crc, const uint8_t *p, size_t len);

/* v * x mod P: the step that tables and constants are made of. */
static uint32_t times_x(uint32_t v) {
    return (v >> 1) ^ (POLY & (0u - (v & 1u)));
}

/* ---------------------------------------------------------------------- */
/* Portable: slice-by-16                                                  */
/* ---------------------------------------------------------------------- */

static uint32_t table[16][256];

static void build_tables(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int bit = 0; bit < 8; bit++)
            c = times_x(c);
        table[0][i] = c;
    }
    for (int k = 1; k < 16; k++)
        for (uint32_t i = 0; i < 256; i++)
            table[k][i] =
                table[0][table[k - 1][i] & 0xff] ^ (table[k - 1][i] >> 8);
}

/* The sixteen lookups for 16 bytes whose first four are already xored with
 * the CRC (in w); byte j of 16 goes through table[15 - j]. Single-byte loads
 * need no alignment and no host byte order. */
static uint32_t slice16(uint32_t w, const uint8_t *p) {
    return table[15][w & 0xff] ^ table[14][(w >> 8) & 0xff] ^
           table[13][(w >> 16) & 0xff] ^ table[12][w >> 24] ^ table[11][p[4]] ^
           table[10][p[5]] ^ table[9][p[6]] ^ table[8][p[7]] ^ table[7][p[8]] ^
           table[6][p[9]] ^ table[5][p[10]] ^ table[4][p[11]] ^
           table[3][p[12]] ^ table[2][p[13]] ^ table[1][p[14]] ^
           table[0][p[15]];
}

static uint32_t update_portable(uint32_t crc, const uint8_t *p, size_t len) {
    for (; len >= 16; p += 16, len -= 16) {
        uint32_t w = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                            (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = slice16(w, p);
    }
    while (len--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

static int always(void) { return 1; }

/* ---------------------------------------------------------------------- */
/* Constants for the instruction-based paths, computed at init           */
/* ---------------------------------------------------------------------- */

#if HAVE_X86 || HAVE_ARM

/* a * b mod P: b * x^i is added for every term x^i of a. */
static uint32_t mul_mod_p(uint32_t a, uint32_t b) {
    uint32_t product = 0;
    for (int i = 0; i < 32; i++) {
        if (a & (X_POW_0 >> i))
            product ^= b;
        b = times_x(b);
    }
    return product;
}

/* x^(2^i) mod P, filled once by build_constants, so that each x^n below
 * costs one product per set bit of n. */
static uint32_t x_pow_2i[40];

/* x^n mod P (n < 2^40) as the product of x^(2^i) over the bits i of n. */
static uint32_t x_pow_mod_p(uint64_t n) {
    assert(n < ((uint64_t)1 << 40) && x_pow_2i[0] != 0);
    uint32_t result = X_POW_0;
    for (int i = 0; n != 0; n >>= 1, i++)
        if (n & 1)
            result = mul_mod_p(result, x_pow_2i[i]);
    return result;
}

/*
 * Three-stream blocks, longest first: each stream of a block has
 * stream_bytes[s] bytes, and stream_k[s] = {x^(16L-33), x^(8L-33)} mod P
 * shift streams A and B into place by (2) and (3). Long first streams matter
 * from memory: three streams of 16 KiB read a 16 MiB buffer half as fast again
 * as 2 KiB ones; 5440-byte ones take 32 KiB in two blocks (fewer merges and
 * less left over than 2 KiB ones). Measured on Zen 3; the shorter ones are
 * for what the longer leave.
 */
#define N_STREAM_SIZES 5
static const size_t stream_bytes[N_STREAM_SIZES] = {16384, 5440, 1024, 256,
                                                    64};
static uint64_t stream_k[N_STREAM_SIZES][2];

/* Fold constants {x^(8D+31), x^(8D-33)} mod P for a distance of D bytes. */
static void fold_constants(uint64_t k[2], size_t d) {
    k[0] = x_pow_mod_p(8 * (uint64_t)d + 31);
    k[1] = x_pow_mod_p(8 * (uint64_t)d - 33);
}

/* AVX-512 folding distances: 4 x 64 bytes per loop, 64 bytes, and the
 * lanes 0..2 of a 64-byte block onto lane 3 (48, 32, 16 bytes; lane 3 0). */
static uint64_t fold_256[2], fold_64[2], fold_lanes[4][2];

/*
 * Hybrid blocks: HYBRID_STEPS steps, each folding 256 bytes of V and feeding
 * HYBRID_WORDS words to each of the streams A, B, C (ratio tuned on Zen 5,
 * where the two units then run near their peaks together). hybrid_k shifts
 * c, crc(0, V), crc(0, A), crc(0, B) by |VABC|, 3L, 2L and L bytes.
 */
#define HYBRID_STEPS 8
#define HYBRID_WORDS 8
#define HYBRID_V (256 * HYBRID_STEPS)
#define HYBRID_L (8 * HYBRID_WORDS * HYBRID_STEPS)
#define HYBRID_BLOCK (HYBRID_V + 3 * HYBRID_L)
static uint64_t hybrid_k[4];

/*
 * AVX2 paths (256-bit VPCLMULQDQ). Folding alone: eight ymm accumulators, 256
 * bytes a loop, reduced by 32, 64 and 128 bytes (fold_32, fold_64, fold_128)
 * and then lane 0 onto lane 1 (fold_lanes[2]). Side by side with crc32 (see
 * "Carried across blocks"), blocks V A B C of a shape: each of its steps folds
 * 256 bytes of V and feeds Y_WORDS words to each of A, B, C (3 x 6 words per
 * 256 bytes: measured on Zen 3, where more crc32 words slow the folds down).
 * gap carries the accumulators over A B C onto the next block's V, stream_k
 * merges A and B into C, tail_k moves the folded value over the last A B C.
 */
#define Y_WORDS 6
#define Y_NS 3 /* crc32 streams */
typedef struct y_shape {
    size_t steps, l, block; /* l = 8 * Y_WORDS * steps bytes a stream */
    uint64_t gap[2], stream_k[Y_NS - 1], tail_k;
} y_shape;
/* Long blocks have less merging per byte; short ones, prefetching ahead,
 * are faster from memory (16 MiB), and do what long ones leave. Both
 * measured on Zen 3, where inputs up to 2 MiB (1 MiB from the L3 cache
 * included) go faster in long blocks. */
static y_shape y_long, y_short;
#define Y_LONG_MAX (2u << 20) /* longer inputs use short blocks only */
/* How far ahead short blocks prefetch: from memory (16 MiB) 1.4 times as
 * fast as without, on Zen 3. */
#define Y_PREFETCH 4096
static uint64_t fold_32[2], fold_128[2];

static void shape_constants(y_shape *sh, size_t steps) {
    sh->steps = steps;
    sh->l = 8 * Y_WORDS * steps;
    sh->block = 256 * steps + Y_NS * sh->l;
    fold_constants(sh->gap, 256 + Y_NS * sh->l);
    for (int i = 0; i < Y_NS - 1; i++) /* stream i moves Y_NS - 1 - i L's */
        sh->stream_k[i] =
            x_pow_mod_p(8 * (uint64_t)sh->l * (Y_NS - 1 - i) - 33);
    sh->tail_k = x_pow_mod_p(8 * Y_NS * (uint64_t)sh->l - 33);
}

static void build_constants(void) {
    x_pow_2i[0] = times_x(X_POW_0);
    for (int i = 1; i < 40; i++)
        x_pow_2i[i] = mul_mod_p(x_pow_2i[i - 1], x_pow_2i[i - 1]);
    for (int s = 0; s < N_STREAM_SIZES; s++) {
        uint64_t l = stream_bytes[s];
        stream_k[s][0] = x_pow_mod_p(16 * l - 33);
        stream_k[s][1] = x_pow_mod_p(8 * l - 33);
    }
    fold_constants(fold_256, 256);
    fold_constants(fold_64, 64);
    for (int j = 0; j < 4; j++) /* shifts by |VABC|, 3L, 2L, L bytes */
        hybrid_k[j] = x_pow_mod_p(
            8 * (uint64_t)(j == 0 ? HYBRID_BLOCK : (4 - j) * HYBRID_L) - 33);
    for (int lane = 0; lane < 3; lane++)
        fold_constants(fold_lanes[lane], 48 - 16 * (size_t)lane);
    fold_constants(fold_32, 32);
    fold_constants(fold_128, 128);
    shape_constants(&y_long, 8);
    shape_constants(&y_short, 2);
}

static uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8); /* well defined at any alignment */
    return v;
}
#endif /* HAVE_X86 || HAVE_ARM */

/* ---------------------------------------------------------------------- */
/* x86-64: SSE4.2 crc32, PCLMULQDQ, AVX-512 VPCLMULQDQ                    */
/* ---------------------------------------------------------------------- */

#if HAVE_X86
#if defined(_MSC_VER)
#include <immintrin.h>
#include <intrin.h>
#define TARGET(s) /* MSVC compiles any intrinsic without flags */
#else
#include <cpuid.h>
#include <immintrin.h>
#define TARGET(s) __attribute__((target(s)))
#endif
/* Loops to unroll fully, so that arrays of vectors stay in registers. */
#if defined(__GNUC__) || defined(__clang__)
#define UNROLL_(n) _Pragma(#n)
#define UNROLL(n) UNROLL_(GCC unroll n)
#else
#define UNROLL(n)
#endif
#define TARGET_SSE42 TARGET("sse4.2")
#define TARGET_PCLMUL TARGET("sse4.2,pclmul")
#define TARGET_AVX2 TARGET("sse4.2,pclmul,avx2,vpclmulqdq")
#define TARGET_AVX512 TARGET("sse4.2,pclmul,avx512f,vpclmulqdq")

static struct { int sse42, pclmul, avx2, avx512; } x86;

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
#if defined(_MSC_VER)
    int regs[4];
    __cpuidex(regs, (int)leaf, (int)sub);
    for (int i = 0; i < 4; i++)
        r[i] = (unsigned)regs[i];
#else
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
#endif
}

/* XCR0: which register states the OS saves on a context switch. */
static uint64_t xgetbv0(void) {
#if defined(_MSC_VER)
    return _xgetbv(0);
#else
    uint32_t lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
#endif
}

static void detect_x86(void) {
    unsigned r[4] = {0, 0, 0, 0}, r7[4] = {0, 0, 0, 0};
    cpuid(0, 0, r);
    unsigned max_leaf = r[0];
    cpuid(1, 0, r);
    if (max_leaf >= 7)
        cpuid(7, 0, r7);
    x86.sse42 = (r[2] >> 20) & 1;
    x86.pclmul = x86.sse42 && ((r[2] >> 1) & 1);
    int osxsave = (r[2] >> 27) & 1, avx = (r[2] >> 28) & 1;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    /* XMM and YMM saved by the OS (XCR0 bits 1, 2); for AVX-512 also the
     * opmask and both ZMM halves (bits 5..7). */
    int ymm_state = avx && (xcr0 & 0x06) == 0x06;
    int zmm_state = ymm_state && (xcr0 & 0xE6) == 0xE6;
    int avx2 = (r7[1] >> 5) & 1, avx512f = (r7[1] >> 16) & 1;
    int vpclmulqdq = (r7[2] >> 10) & 1;
    x86.avx2 = x86.pclmul && ymm_state && avx2 && vpclmulqdq;
    x86.avx512 = x86.pclmul && zmm_state && avx512f && vpclmulqdq;
}

static int has_sse42(void) { return x86.sse42; }
static int has_pclmul(void) { return x86.pclmul; }
static int has_avx2(void) { return x86.avx2; }
static int has_avx512(void) { return x86.avx512; }

/* One chain of crc32: no set-up, the best choice for short inputs. */
TARGET_SSE42 static uint32_t crc_sse42(uint32_t crc, const uint8_t *p,
                                       size_t len) {
    uint64_t c = crc;
    for (; len >= 8; p += 8, len -= 8)
        c = _mm_crc32_u64(c, load64(p));
    crc = (uint32_t)c;
    if (len & 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        crc = _mm_crc32_u32(crc, v);
        p += 4;
    }
    if (len & 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        crc = _mm_crc32_u16(crc, v);
        p += 2;
    }
    if (len & 1)
        crc = _mm_crc32_u8(crc, *p);
    return crc;
}

/* One block of three l-byte streams, merged by (2) and (3). The next
 * block's first stream waits for the merge, but only about ten cycles once
 * a block; starting it from 0 and moving the start value over the block
 * (one more multiply) measured no faster and costs instructions. */
TARGET_PCLMUL static uint32_t crc_3way_block(uint32_t crc, const uint8_t *p,
                                             size_t l, const uint64_t k[2]) {
    const uint8_t *b = p + l, *c = p + 2 * l;
    uint64_t ca = crc, cb = 0, cc = 0;
    size_t i = 0;
    for (; i + 64 < l; i += 64) { /* 64 bytes a stream a loop */
        UNROLL(8)
        for (size_t j = i; j < i + 64; j += 8) {
            ca = _mm_crc32_u64(ca, load64(p + j));
            cb = _mm_crc32_u64(cb, load64(b + j));
            cc = _mm_crc32_u64(cc, load64(c + j));
        }
    }
    for (; i < l - 8; i += 8) {
        ca = _mm_crc32_u64(ca, load64(p + i));
        cb = _mm_crc32_u64(cb, load64(b + i));
        cc = _mm_crc32_u64(cc, load64(c + i));
    }
    ca = _mm_crc32_u64(ca, load64(p + i)); /* C's last word waits for them */
    cb = _mm_crc32_u64(cb, load64(b + i));
    __m128i kk = _mm_set_epi64x((long long)k[1], (long long)k[0]);
    __m128i sa =
        _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)ca), kk, 0x00);
    __m128i sb =
        _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)cb), kk, 0x10);
    uint64_t shifted = (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(sa, sb));
    return (uint32_t)_mm_crc32_u64(cc, load64(c + l - 8) ^ shifted);
}

TARGET_PCLMUL static uint32_t crc_sse42_3way(uint32_t crc, const uint8_t *p,
                                             size_t len) {
    if (len < 3 * stream_bytes[N_STREAM_SIZES - 1]) /* no block: no set-up */
        return crc_sse42(crc, p, len);
    for (int s = 0; s < N_STREAM_SIZES; s++) {
        size_t block = 3 * stream_bytes[s];
        for (; len >= block; p += block, len -= block)
            crc = crc_3way_block(crc, p, stream_bytes[s], stream_k[s]);
    }
    return crc_sse42(crc, p, len);
}

/* Bytes from p to the next multiple of align (a power of two). */
static size_t to_boundary(const uint8_t *p, size_t align) {
    return (size_t)(0u - (uintptr_t)p) & (align - 1);
}

/* Below this many bytes one crc32 chain beats folding's set-up. */
#define FOLD_MIN 128

/* Both 128-bit lanes of x moved forward by the distance of k, xored onto
 * next (see "Folding"). */
TARGET_AVX2 static __m256i fold_y(__m256i x, __m256i k, __m256i next) {
    __m256i h = _mm256_clmulepi64_epi128(x, k, 0x00);
    __m256i l = _mm256_clmulepi64_epi128(x, k, 0x11);
    return _mm256_xor_si256(_mm256_xor_si256(h, l), next);
}

TARGET_AVX2 static __m256i broadcast_y(const uint64_t k[2]) {
    return _mm256_broadcastsi128_si256(
        _mm_set_epi64x((long long)k[1], (long long)k[0]));
}

TARGET_AVX2 static __m256i load_y(const uint8_t *p) {
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

/* The CRC (from 0) of the 32 bytes in x: lane 0 folded onto lane 1, whose
 * crc32 is that of the whole. */
TARGET_AVX2 static uint32_t reduce_y(__m256i x) {
    __m128i k = _mm_set_epi64x((long long)fold_lanes[2][1],
                               (long long)fold_lanes[2][0]);
    __m128i lo = _mm256_castsi256_si128(x);
    __m128i v = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(lo, k, 0x00),
                                            _mm_clmulepi64_si128(lo, k, 0x11)),
                              _mm256_extracti128_si256(x, 1));
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
    return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
}

/* Eight consecutive 32-byte blocks folded into the last, pairwise. */
TARGET_AVX2 static inline __m256i merge8_y(__m256i x[8]) {
    __m256i k32 = broadcast_y(fold_32), k64 = broadcast_y(fold_64);
    __m256i a = fold_y(x[0], k32, x[1]), b = fold_y(x[2], k32, x[3]);
    __m256i c = fold_y(x[4], k32, x[5]), d = fold_y(x[6], k32, x[7]);
    return fold_y(fold_y(a, k64, b), broadcast_y(fold_128), fold_y(c, k64, d));
}

/* x[0..7] folded forward by the distance of k onto the 256 bytes at q
 * (unrolled and inlined so that x stays in registers). */
TARGET_AVX2 static inline void fold8_y(__m256i x[8], __m256i k,
                                       const uint8_t *q) {
    UNROLL(8)
    for (int j = 0; j < 8; j++)
        x[j] = fold_y(x[j], k, load_y(q + 32 * j));
}

/* Folds n bytes (n a multiple of 32, at least 32) from start value crc
 * into one 32-byte block that stands for them all. */
TARGET_AVX2 static __m256i fold_blocks_y(uint32_t crc, const uint8_t *p,
                                         size_t n) {
    assert(n >= 32 && n % 32 == 0); /* the caller hands whole blocks */
    const uint8_t *end = p + n;
    __m256i x[8];
    x[0] = _mm256_xor_si256(load_y(p),
                            _mm256_setr_epi32((int)crc, 0, 0, 0, 0, 0, 0, 0));
    p += 32;
    if (end - p >= 224) { /* eight independent chains hide the latency */
        UNROLL(8)
        for (int j = 1; j < 8; j++)
            x[j] = load_y(p + 32 * (j - 1));
        __m256i k256 = broadcast_y(fold_256);
        for (p += 224; end - p >= 256; p += 256)
            fold8_y(x, k256, p);
        x[0] = merge8_y(x);
    }
    __m256i k32 = broadcast_y(fold_32);
    for (; p < end; p += 32)
        x[0] = fold_y(x[0], k32, load_y(p));
    return x[0];
}

/* Folding alone, single crc32 for what is left and for short inputs. */
TARGET_AVX2 static uint32_t crc_avx2_fold(uint32_t crc, const uint8_t *p,
                                          size_t len) {
    if (len < FOLD_MIN)
        return crc_sse42(crc, p, len);
    size_t head = to_boundary(p, 32); /* no load splits a cache line */
    crc = crc_sse42(crc, p, head);
    p += head;
    len -= head;
    size_t n = len & ~(size_t)31;
    crc = reduce_y(fold_blocks_y(crc, p, n));
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return crc_sse42(crc, p + n, len - n);
}

/* Y_WORDS words of each of the streams at a, a + l, a + 2l ... into cs. */
TARGET_AVX2 static inline void streams_y(uint64_t cs[Y_NS], const uint8_t *a,
                                         size_t l) {
    UNROLL(16)
    for (size_t i = 0; i < 8 * Y_WORDS; i += 8) {
        UNROLL(8)
        for (int j = 0; j < Y_NS; j++)
            cs[j] = _mm_crc32_u64(cs[j], load64(a + l * (size_t)j + i));
    }
}

/* crc(0, ABC) from the streams' crc(0, A), crc(0, B), crc(0, C), by (2)
 * and (3). */
TARGET_AVX2 static uint32_t merge_streams_y(const uint64_t cs[Y_NS],
                                            const uint64_t k[Y_NS - 1]) {
    __m128i s = _mm_setzero_si128();
    UNROLL(8)
    for (int i = 0; i < Y_NS - 1; i++)
        s = _mm_xor_si128(
            s, _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)cs[i]),
                                    _mm_cvtsi64_si128((long long)k[i]), 0x00));
    return (uint32_t)(_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(s)) ^
                      cs[Y_NS - 1]);
}

/* One block V A B C of shape sh: the accumulators x, standing for
 * everything before V, carried onto V by gap (r, the CRC of the previous
 * A B C, xored into its first bytes) and folded through it while three
 * crc32 chains run over A, B, C. Returns crc(0, ABC). */
TARGET_AVX2 static inline uint32_t block_y(__m256i x[8], uint32_t r,
                                           const uint8_t *p, const y_shape *sh,
                                           __m256i gap) {
    const uint8_t *a = p + 256 * sh->steps;
    uint64_t cs[Y_NS] = {0};
    if (sh == &y_short) /* long inputs: fetch ahead (never faults) */
        for (size_t off = 0; off < sh->block; off += 64)
            _mm_prefetch((const char *)p + Y_PREFETCH + off, _MM_HINT_T0);
    fold8_y(x, gap, p);
    /* after the fold: only this xor waits for the previous block's r */
    x[0] =
        _mm256_xor_si256(x[0], _mm256_setr_epi32((int)r, 0, 0, 0, 0, 0, 0, 0));
    __m256i k256 = broadcast_y(fold_256);
    for (size_t step = 0; step < sh->steps; step++) {
        if (step > 0)
            fold8_y(x, k256, p + 256 * step);
        streams_y(cs, a + 8 * Y_WORDS * step, sh->l);
    }
    return merge_streams_y(cs, sh->stream_k);
}

/* Folding and three crc32 chains side by side (see "Carried across
 * blocks"): long blocks, then short ones; folding alone for what is left
 * and for inputs shorter than a short block. */
TARGET_AVX2 static uint32_t crc_avx2(uint32_t crc, const uint8_t *p,
                                     size_t len) {
    if (len < FOLD_MIN) /* short: straight to the loop with no set-up */
        return crc_sse42(crc, p, len);
    if (len < y_short.block + 32)
        return crc_avx2_fold(crc, p, len);
    size_t head = to_boundary(p, 32); /* no load splits a cache line */
    crc = crc_sse42(crc, p, head);
    p += head;
    len -= head;
    __m256i x[8];
    UNROLL(8)
    for (int j = 0; j < 8; j++) /* folding zeros leaves the first V as is */
        x[j] = _mm256_setzero_si256();
    uint32_t r = crc; /* the start value enters like a previous r */
    const y_shape *last = &y_short;
    for (const y_shape *sh = len <= Y_LONG_MAX ? &y_long : &y_short;;
         sh = &y_short) {
        for (; len >= sh->block; p += sh->block, len -= sh->block) {
            r = block_y(x, r, p, sh, broadcast_y(last->gap));
            last = sh;
        }
        if (sh == &y_short)
            break;
    }
    uint32_t v = reduce_y(merge8_y(x)); /* everything up to the last V */
    __m128i s =
        _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)v),
                             _mm_cvtsi64_si128((long long)last->tail_k), 0x00);
    crc = (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(s)) ^ r;
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return crc_avx2_fold(crc, p, len);
}

/* Every 128-bit lane of x moved forward by the distance of k, xored onto
 * next (see "Folding"). */
TARGET_AVX512 static __m512i fold(__m512i x, __m512i k, __m512i next) {
    __m512i h = _mm512_clmulepi64_epi128(x, k, 0x00);
    __m512i l = _mm512_clmulepi64_epi128(x, k, 0x11);
    return _mm512_ternarylogic_epi64(h, l, next, 0x96); /* h ^ l ^ next */
}

TARGET_AVX512 static __m512i broadcast_k(const uint64_t k[2]) {
    return _mm512_broadcast_i32x4(
        _mm_set_epi64x((long long)k[1], (long long)k[0]));
}

/* Four consecutive 64-byte blocks folded into the last. */
TARGET_AVX512 static __m512i merge4(__m512i x0, __m512i x1, __m512i x2,
                                    __m512i x3) {
    __m512i k64 = broadcast_k(fold_64);
    return fold(fold(fold(x0, k64, x1), k64, x2), k64, x3);
}

/* Folds n bytes (n a multiple of 64, at least 64) from start value crc into
 * one 64-byte block that stands for them all. */
TARGET_AVX512 static __m512i fold_blocks(uint32_t crc, const uint8_t *p,
                                         size_t n) {
    assert(n >= 64 && n % 64 == 0); /* the caller hands whole blocks */
    const uint8_t *end = p + n;
    __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p),
                                  _mm512_maskz_set1_epi32(1, (int)crc));
    __m512i k64 = broadcast_k(fold_64);
    p += 64;
    if (end - p >= 192) { /* four independent chains hide the clmul latency */
        __m512i x1 = _mm512_loadu_si512(p);
        __m512i x2 = _mm512_loadu_si512(p + 64);
        __m512i x3 = _mm512_loadu_si512(p + 128);
        __m512i k256 = broadcast_k(fold_256);
        for (p += 192; end - p >= 256; p += 256) {
            x0 = fold(x0, k256, _mm512_loadu_si512(p));
            x1 = fold(x1, k256, _mm512_loadu_si512(p + 64));
            x2 = fold(x2, k256, _mm512_loadu_si512(p + 128));
            x3 = fold(x3, k256, _mm512_loadu_si512(p + 192));
        }
        x0 = merge4(x0, x1, x2, x3);
    }
    for (; p < end; p += 64)
        x0 = fold(x0, k64, _mm512_loadu_si512(p));
    return x0;
}

/* The CRC (from 0) of the 64 bytes in x: lanes 0..2 folded onto lane 3,
 * whose crc32 is that of the whole. */
TARGET_AVX512 static uint32_t reduce_block(__m512i x) {
    __m512i k = _mm512_setr_epi64(
        (long long)fold_lanes[0][0], (long long)fold_lanes[0][1],
        (long long)fold_lanes[1][0], (long long)fold_lanes[1][1],
        (long long)fold_lanes[2][0], (long long)fold_lanes[2][1], 0, 0);
    __m512i lane3 = _mm512_maskz_mov_epi64(0xC0, x);
    __m512i t = fold(x, k, lane3); /* lane 3 of k is 0: lane 3 of x passes */
    __m256i t2 = _mm256_xor_si256(_mm512_castsi512_si256(t),
                                  _mm512_extracti64x4_epi64(t, 1));
    __m128i v = _mm_xor_si128(_mm256_castsi256_si128(t2),
                              _mm256_extracti128_si256(t2, 1));
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
    return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
}

/* The start value and crc(0, V), crc(0, A), crc(0, B) shifted into place
 * and added to crc(0, C) (see "Both at once"), by (3). */
TARGET_AVX512 static uint32_t
hybrid_merge(uint32_t start, uint32_t v, uint64_t a, uint64_t b, uint64_t c) {
    __m128i k01 = _mm_loadu_si128((const __m128i *)(const void *)hybrid_k);
    __m128i k23 =
        _mm_loadu_si128((const __m128i *)(const void *)(hybrid_k + 2));
    __m128i sv = _mm_set_epi64x((long long)v, (long long)start);
    __m128i ab = _mm_set_epi64x((long long)b, (long long)a);
    __m128i s = _mm_xor_si128(_mm_clmulepi64_si128(sv, k01, 0x00),
                              _mm_clmulepi64_si128(sv, k01, 0x11));
    s = _mm_xor_si128(s, _mm_clmulepi64_si128(ab, k23, 0x00));
    s = _mm_xor_si128(s, _mm_clmulepi64_si128(ab, k23, 0x11));
    return (uint32_t)(_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(s)) ^ c);
}

/* One HYBRID_BLOCK from start value start: the zmm folds and the three
 * crc32 chains interleave in one loop so that both units stay busy. */
TARGET_AVX512 static uint32_t hybrid_block(uint32_t start, const uint8_t *p) {
    const uint8_t *a = p + HYBRID_V, *b = a + HYBRID_L, *c = b + HYBRID_L;
    __m512i k256 = broadcast_k(fold_256);
    __m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64);
    __m512i x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
    uint64_t ca = 0, cb = 0, cc = 0;
    for (size_t step = 0; step < HYBRID_STEPS; step++) {
        for (size_t i = 8 * HYBRID_WORDS * step;
             i < 8 * HYBRID_WORDS * (step + 1); i += 8) {
            ca = _mm_crc32_u64(ca, load64(a + i));
            cb = _mm_crc32_u64(cb, load64(b + i));
            cc = _mm_crc32_u64(cc, load64(c + i));
        }
        if (step + 1 < HYBRID_STEPS) { /* the first 256 bytes are in x0..x3 */
            const uint8_t *q = p + 256 * (step + 1);
            x0 = fold(x0, k256, _mm512_loadu_si512(q));
            x1 = fold(x1, k256, _mm512_loadu_si512(q + 64));
            x2 = fold(x2, k256, _mm512_loadu_si512(q + 128));
            x3 = fold(x3, k256, _mm512_loadu_si512(q + 192));
        }
    }
    uint32_t v = reduce_block(merge4(x0, x1, x2, x3));
    return hybrid_merge(start, v, ca, cb, cc);
}

TARGET_AVX512 static uint32_t crc_avx512(uint32_t crc, const uint8_t *p,
                                         size_t len) {
    if (len < FOLD_MIN) /* short: straight to the loop with no set-up */
        return crc_sse42(crc, p, len);
    for (; len >= HYBRID_BLOCK; p += HYBRID_BLOCK, len -= HYBRID_BLOCK)
        crc = hybrid_block(crc, p);
    if (len >= FOLD_MIN) {
        size_t n = len & ~(size_t)63;
        crc = reduce_block(fold_blocks(crc, p, n));
        p += n;
        len -= n;
    }
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return crc_sse42(crc, p, len);
}
#endif /* HAVE_X86 */

/* ---------------------------------------------------------------------- */
/* AArch64: ARMv8 CRC32 instructions, PMULL                               */
/* ---------------------------------------------------------------------- */

#if HAVE_ARM
#include <arm_neon.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(__clang__)
#define TARGET_ARM_CRC __attribute__((target("crc")))
#define TARGET_ARM_PMULL __attribute__((target("crc,aes")))
#define CRC32CX(c, v) __builtin_arm_crc32cd((c), (v))
#define CRC32CB(c, v) __builtin_arm_crc32cb((c), (v))
#else
#define TARGET_ARM_CRC __attribute__((target("+crc")))
#define TARGET_ARM_PMULL __attribute__((target("+crc+crypto")))
#define CRC32CX(c, v) __builtin_aarch64_crc32cx((c), (v))
#define CRC32CB(c, v) __builtin_aarch64_crc32cb((c), (v))
#endif

/* Linux reports the features in AT_HWCAP; elsewhere trust the compiler's
 * target (Apple's arm64 always has both). */
static int arm_hwcap(unsigned bit, int compiled_in) {
#if defined(__APPLE__)
    (void)bit;
    (void)compiled_in;
    return 1;
#elif defined(__linux__)
    (void)compiled_in;
    return (getauxval(AT_HWCAP) >> bit) & 1;
#else
    (void)bit;
    return compiled_in;
#endif
}

#if defined(__ARM_FEATURE_CRC32)
#define ARM_CRC_COMPILED_IN 1
#else
#define ARM_CRC_COMPILED_IN 0
#endif
#if defined(__ARM_FEATURE_CRYPTO) || defined(__ARM_FEATURE_AES)
#define ARM_PMULL_COMPILED_IN 1
#else
#define ARM_PMULL_COMPILED_IN 0
#endif

static int has_arm_crc(void) { return arm_hwcap(7, ARM_CRC_COMPILED_IN); }
static int has_arm_pmull(void) {
    return has_arm_crc() && arm_hwcap(4, ARM_PMULL_COMPILED_IN);
}

TARGET_ARM_CRC static uint32_t crc_arm(uint32_t crc, const uint8_t *p,
                                       size_t len) {
    for (; len >= 8; p += 8, len -= 8)
        crc = CRC32CX(crc, load64(p));
    while (len--)
        crc = CRC32CB(crc, *p++);
    return crc;
}

/* clmul(a, k[0]) ^ clmul(b, k[1]): the shifted terms of (2), by (3). */
TARGET_ARM_PMULL static uint64_t arm_shift2(uint32_t a, uint32_t b,
                                            const uint64_t k[2]) {
    poly128_t sa = vmull_p64((poly64_t)a, (poly64_t)k[0]);
    poly128_t sb = vmull_p64((poly64_t)b, (poly64_t)k[1]);
    return vgetq_lane_u64(vreinterpretq_u64_p128(sa), 0) ^
           vgetq_lane_u64(vreinterpretq_u64_p128(sb), 0);
}

/* One block of three l-byte streams, merged by (2) and (3). */
TARGET_ARM_PMULL static uint32_t crc_arm_block(uint32_t crc, const uint8_t *p,
                                               size_t l, const uint64_t k[2]) {
    const uint8_t *b = p + l, *c = p + 2 * l;
    uint32_t ca = crc, cb = 0, cc = 0;
    size_t i = 0;
    for (; i < l - 8; i += 8) {
        ca = CRC32CX(ca, load64(p + i));
        cb = CRC32CX(cb, load64(b + i));
        cc = CRC32CX(cc, load64(c + i));
    }
    ca = CRC32CX(ca, load64(p + i)); /* C's last word waits for them */
    cb = CRC32CX(cb, load64(b + i));
    return CRC32CX(cc, load64(c + l - 8) ^ arm_shift2(ca, cb, k));
}

TARGET_ARM_PMULL static uint32_t crc_arm_3way(uint32_t crc, const uint8_t *p,
                                              size_t len) {
    if (len < 3 * stream_bytes[N_STREAM_SIZES - 1]) /* no block: no set-up */
        return crc_arm(crc, p, len);
    for (int s = 0; s < N_STREAM_SIZES; s++) {
        size_t block = 3 * stream_bytes[s];
        for (; len >= block; p += block, len -= block)
            crc = crc_arm_block(crc, p, stream_bytes[s], stream_k[s]);
    }
    return crc_arm(crc, p, len);
}
#endif /* HAVE_ARM */

/* ---------------------------------------------------------------------- */
/* The list, the choice, the public API                                   */
/* ---------------------------------------------------------------------- */

typedef struct impl {
    const char *name;
    crc_fn update;
    int (*supported)(void); /* asked once, in prepare(), after probing */
} impl;

/* Slowest first: the last usable one is the best. */
static const impl impls[] = {
    {"portable", update_portable, always},
#if HAVE_X86
    {"sse4.2", crc_sse42, has_sse42},
    {"sse4.2+pclmul", crc_sse42_3way, has_pclmul},
    {"avx2+vpclmulqdq", crc_avx2_fold, has_avx2},
    {"avx2+vpclmulqdq+crc32", crc_avx2, has_avx2},
    {"avx512+vpclmulqdq", crc_avx512, has_avx512},
#endif
#if HAVE_ARM
    {"armv8-crc", crc_arm, has_arm_crc},
    {"armv8-crc+pmull", crc_arm_3way, has_arm_pmull},
#endif
};
#define N_IMPLS ((int)(sizeof impls / sizeof impls[0]))

static int usable[N_IMPLS];
static int ready;   /* tables, constants and usable[] are filled in */
static int chosen;  /* index into impls */
static int best_hw; /* best usable instruction-based impl, 0 when none */

static void prepare(void) {
    if (ready)
        return;
    build_tables();
#if HAVE_X86 || HAVE_ARM
    build_constants();
#endif
#if HAVE_X86
    detect_x86();
#endif
    for (int i = 0; i < N_IMPLS; i++) {
        usable[i] = impls[i].supported();
        if (i > 0 && usable[i])
            best_hw = i;
    }
    ready = 1;
}

void llog_crc32c_init(int allow_hardware) {
    prepare();
    chosen = allow_hardware ? best_hw : 0;
}

int llog_crc32c_init_named(const char *name) {
    prepare();
    for (int i = 0; name != NULL && i < N_IMPLS; i++) {
        if (strcmp(name, impls[i].name) == 0 && usable[i]) {
            chosen = i;
            return 1;
        }
    }
    return 0;
}

const char *llog_crc32c_implementation(void) { return impls[chosen].name; }

/* Runs implementation i with the inversions of the public contract. */
static uint32_t run(int i, uint32_t crc, const void *data, size_t len) {
    assert(ready);     /* the contract requires llog_crc32c_init first */
    assert(usable[i]); /* running an unsupported one could fault */
    if (len == 0)
        return crc;
    return ~impls[i].update(~crc, (const uint8_t *)data, len);
}

uint32_t llog_crc32c_extend(uint32_t crc, const void *data, size_t len) {
    return run(chosen, crc, data, len);
}

#if HAVE_X86
/* Buffers this long are checksummed alone on the chosen path (folding),
 * then copied, rather than in threes. */
#define MANY_LONG 512

/* The last len (< 8) bytes of a buffer, checksummed and copied. */
TARGET_SSE42 static inline uint32_t
crc_copy_tail(uint32_t crc, uint8_t *d, const uint8_t *p, size_t len) {
    if (len & 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        memcpy(d, &v, 4);
        crc = _mm_crc32_u32(crc, v);
        p += 4;
        d += 4;
    }
    if (len & 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        memcpy(d, &v, 2);
        crc = _mm_crc32_u16(crc, v);
        p += 2;
        d += 2;
    }
    if (len & 1) {
        *d = *p;
        crc = _mm_crc32_u8(crc, *p);
    }
    return crc;
}

/* 16 bytes copied in one move (SSE2's unaligned load and store). */
TARGET_SSE42 static inline void copy16(uint8_t *d, const uint8_t *p) {
    _mm_storeu_si128((__m128i *)(void *)d,
                     _mm_loadu_si128((const __m128i *)(const void *)p));
}

/* One buffer, checksummed and copied a word at a time. */
TARGET_SSE42 static inline uint32_t
crc_copy_one(uint32_t crc, uint8_t *d, const uint8_t *p, size_t len) {
    uint64_t c = crc;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = load64(p + i);
        memcpy(d + i, &v, 8);
        c = _mm_crc32_u64(c, v);
    }
    return crc_copy_tail((uint32_t)c, d + i, p + i, len - i);
}

/* Three buffers from the inverted seed side by side (three crc32 chains
 * hide each other's latency) while all are as long, then each finished
 * alone; their CRCs (inverted back) in crc. */
TARGET_SSE42 static inline void crc_copy_x3(uint32_t *crc, uint32_t seed,
                                            uint8_t *const *d,
                                            const uint8_t *const *p,
                                            const size_t *len) {
    size_t m = len[0] < len[1] ? len[0] : len[1];
    m = (m < len[2] ? m : len[2]) & ~(size_t)15;
    /* in locals: the stores below could alias the arrays */
    const uint8_t *pa = p[0], *pb = p[1], *pc = p[2];
    uint8_t *da = d[0], *db = d[1], *dc = d[2];
    uint64_t a = seed, b = seed, c = seed;
    for (size_t i = 0; i < m; i += 16) { /* moves of 16, crc32 of 8 */
        copy16(da + i, pa + i);
        copy16(db + i, pb + i);
        copy16(dc + i, pc + i);
        a = _mm_crc32_u64(a, load64(pa + i));
        b = _mm_crc32_u64(b, load64(pb + i));
        c = _mm_crc32_u64(c, load64(pc + i));
        a = _mm_crc32_u64(a, load64(pa + i + 8));
        b = _mm_crc32_u64(b, load64(pb + i + 8));
        c = _mm_crc32_u64(c, load64(pc + i + 8));
    }
    crc[0] = ~crc_copy_one((uint32_t)a, da + m, pa + m, len[0] - m);
    crc[1] = ~crc_copy_one((uint32_t)b, db + m, pb + m, len[1] - m);
    crc[2] = ~crc_copy_one((uint32_t)c, dc + m, pc + m, len[2] - m);
}

/* llog_crc32c_copy_many from the inverted seed: three at a time while
 * three short ones follow. */
TARGET_SSE42 static void crc_copy_many_x86(uint32_t seed, uint32_t *crc,
                                           uint8_t *const *d,
                                           const uint8_t *const *p,
                                           const size_t *len, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (n - i >= 3 && (len[i] | len[i + 1] | len[i + 2]) < MANY_LONG) {
            crc_copy_x3(crc + i, seed, d + i, p + i, len + i);
            i += 3;
        } else if (len[i] < MANY_LONG) {
            crc[i] = ~crc_copy_one(seed, d[i], p[i], len[i]);
            i++;
        } else {
            crc[i] = ~impls[chosen].update(seed, p[i], len[i]);
            memcpy(d[i], p[i], len[i]);
            i++;
        }
    }
}
#endif

void llog_crc32c_copy_many(uint32_t seed, uint32_t *crc, uint8_t *const *dst,
                           const uint8_t *const *src, const size_t *len,
                           size_t n) {
    assert(ready);
#if HAVE_X86
    if (chosen > 0) { /* every x86 instruction path has SSE4.2's crc32 */
        crc_copy_many_x86(~seed, crc, dst, src, len, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) {
        crc[i] = seed;
        if (len[i] == 0)
            continue; /* src may be NULL */
        crc[i] = ~impls[chosen].update(~seed, src[i], len[i]);
        memcpy(dst[i], src[i], len[i]);
    }
}

uint32_t llog_crc32c_portable(uint32_t crc, const void *data, size_t len) {
    return run(0, crc, data, len);
}

int llog_crc32c_hardware_available(void) {
    prepare();
    return best_hw != 0;
}

uint32_t llog_crc32c_hardware(uint32_t crc, const void *data, size_t len) {
    return run(best_hw, crc, data, len);
}

int llog_crc32c_impl_count(void) { return N_IMPLS; }

const char *llog_crc32c_impl_name(int i) {
    return i >= 0 && i < N_IMPLS ? impls[i].name : NULL;
}

int llog_crc32c_impl_usable(int i) {
    assert(ready); /* usable[] is filled by llog_crc32c_init */
    return i >= 0 && i < N_IMPLS && usable[i];
}

uint32_t llog_crc32c_impl_extend(int i, uint32_t crc, const void *data,
                                 size_t len) {
    assert(i >= 0 && i < N_IMPLS); /* numbers come from llog_crc32c_impl_* */
    return run(i, crc, data, len);
}
