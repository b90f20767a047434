/*
 * crc32c_x86.c - CRC-32C on x86-64: SSE4.2's crc32 in one chain and in three
 * streams merged with PCLMULQDQ, 128-bit PCLMULQDQ folding side by side with
 * crc32, AVX2 and AVX-512 VPCLMULQDQ folding (alone and side by side with
 * crc32), the copying CRCs of llog_crc32c_copy_many, and the CPU probe
 * (CPUID, XGETBV) that says which of them run.
 *
 * Every function carries its own target attribute, so that the file builds
 * with plain -O2 and runs on any x86-64 CPU: crc32c.c calls a path only
 * when the probe found its instructions. Equations (1) to (3) and the
 * sections quoted below ("Folding", "Both at once", "Carried across
 * blocks") are in the comment at the top of crc32c.c; the constants
 * (llog_crc32c_k) are computed there and described in crc32c_paths.h.
 */
#include "crc32c_paths.h"

#if HAVE_X86
#include <assert.h>

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
/* Functions to keep out of line (see crc_avx2_blocks); blocks_y is copied
 * into each caller (LLOG_HOT_INLINE: its `ahead` then a constant). */
#if defined(_MSC_VER)
#define NOINLINE __declspec(noinline)
#else
#define NOINLINE __attribute__((noinline))
#endif
#define TARGET_SSE42 TARGET("sse4.2")
#define TARGET_PCLMUL TARGET("sse4.2,pclmul")
#define TARGET_AVX2 TARGET("sse4.2,pclmul,avx2,vpclmulqdq")
#define TARGET_AVX512 TARGET("sse4.2,pclmul,avx512f,vpclmulqdq")

/* ---------------------------------------------------------------------- */
/* The CPU probe: CPUID, XGETBV                                           */
/* ---------------------------------------------------------------------- */

/* avx512_halved: an AMD family 19h CPU with AVX-512, whose 512-bit units
 * run each instruction as two 256-bit halves. */
static struct { int sse42, pclmul, avx2, avx512, avx512_halved; } x86;

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

void llog_crc32c_detect_x86(void) {
    unsigned r[4] = {0, 0, 0, 0}, r7[4] = {0, 0, 0, 0};
    cpuid(0, 0, r);
    unsigned max_leaf = r[0];
    int amd = r[1] == 0x68747541u &&
              r[3] == 0x69746e65u && /* "AuthenticAMD" */
              r[2] == 0x444d4163u;
    cpuid(1, 0, r);
    unsigned family = (r[0] >> 8) & 0xF;
    if (family == 0xF)
        family += (r[0] >> 20) & 0xFF;
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
    x86.avx512_halved = x86.avx512 && amd && family == 0x19;
}

int llog_crc32c_has_sse42(void) { return x86.sse42; }
int llog_crc32c_has_pclmul(void) { return x86.pclmul; }
int llog_crc32c_has_avx2(void) { return x86.avx2; }
int llog_crc32c_has_avx512(void) { return x86.avx512; }
int llog_crc32c_avx512_halved(void) { return x86.avx512_halved; }

/* ---------------------------------------------------------------------- */
/* SSE4.2 crc32: one chain; three streams merged with PCLMULQDQ           */
/* ---------------------------------------------------------------------- */

/* One chain of crc32: no set-up, the best choice for short inputs. */
TARGET_SSE42 uint32_t llog_crc32c_sse42(uint32_t crc, const uint8_t *p,
                                        size_t len) {
    uint64_t c = crc;
    for (; len >= 8; p += 8, len -= 8)
        c = _mm_crc32_u64(c, llog_load64(p));
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
 * block's first stream waits for the merge, a short wait once a block:
 * starting it from 0 instead and moving the start value over the block
 * costs one more multiply a block and gains no speed. */
TARGET_PCLMUL static uint32_t crc_3way_block(uint32_t crc, const uint8_t *p,
                                             size_t l, const uint64_t k[2]) {
    const uint8_t *b = p + l, *c = p + 2 * l;
    uint64_t ca = crc, cb = 0, cc = 0;
    size_t i = 0;
    for (; i + 64 < l; i += 64) { /* 64 bytes a stream a loop */
        UNROLL(8)
        for (size_t j = i; j < i + 64; j += 8) {
            ca = _mm_crc32_u64(ca, llog_load64(p + j));
            cb = _mm_crc32_u64(cb, llog_load64(b + j));
            cc = _mm_crc32_u64(cc, llog_load64(c + j));
        }
    }
    for (; i < l - 8; i += 8) {
        ca = _mm_crc32_u64(ca, llog_load64(p + i));
        cb = _mm_crc32_u64(cb, llog_load64(b + i));
        cc = _mm_crc32_u64(cc, llog_load64(c + i));
    }
    ca = _mm_crc32_u64(ca,
                       llog_load64(p + i)); /* C's last word waits for them */
    cb = _mm_crc32_u64(cb, llog_load64(b + i));
    __m128i kk = _mm_set_epi64x((long long)k[1], (long long)k[0]);
    __m128i sa =
        _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)ca), kk, 0x00);
    __m128i sb =
        _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)cb), kk, 0x10);
    uint64_t shifted = (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(sa, sb));
    return (uint32_t)_mm_crc32_u64(cc, llog_load64(c + l - 8) ^ shifted);
}

TARGET_PCLMUL uint32_t llog_crc32c_sse42_3way(uint32_t crc, const uint8_t *p,
                                              size_t len) {
    if (len < 3 * stream_bytes[N_STREAM_SIZES - 1]) /* no block: no set-up */
        return llog_crc32c_sse42(crc, p, len);
    for (int s = 0; s < N_STREAM_SIZES; s++) {
        size_t block = 3 * stream_bytes[s];
        for (; len >= block; p += block, len -= block)
            crc = crc_3way_block(crc, p, stream_bytes[s],
                                 llog_crc32c_k.stream_k[s]);
    }
    return llog_crc32c_sse42(crc, p, len);
}

/* Bytes from p to the next multiple of align (a power of two). */
static size_t to_boundary(const uint8_t *p, size_t align) {
    return (size_t)(0u - (uintptr_t)p) & (align - 1);
}

/* Below this many bytes one crc32 chain beats folding's set-up. */
#define FOLD_MIN 128

/* The bytes before the next multiple of align at *p, by one crc32 chain,
 * so that no vector load after them splits a cache line; *p and the
 * returned length move past them. */
TARGET_SSE42 static inline size_t head_to(uint32_t *crc, const uint8_t **p,
                                          size_t len, size_t align) {
    size_t head = to_boundary(*p, align);
    *crc = llog_crc32c_sse42(*crc, *p, head);
    *p += head;
    return len - head;
}

/* ---------------------------------------------------------------------- */
/* PCLMULQDQ: 128-bit folding side by side with crc32                     */
/* ---------------------------------------------------------------------- */

/* crc(0, ...) of the 64-bit product of a (32 bits) and k, xored with c: a
 * value a x^j moved into place by (3) and added to another CRC. */
TARGET_PCLMUL static inline uint32_t shift_add(uint64_t a, uint64_t k,
                                               uint32_t c) {
    __m128i s = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a),
                                     _mm_cvtsi64_si128((long long)k), 0x00);
    return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(s)) ^ c;
}

/* words words of each of the Y_NS streams at a, a + l, a + 2l into cs
 * (inlined where words is a constant, so that the loops unroll). */
TARGET_SSE42 static inline void streams(uint64_t cs[Y_NS], const uint8_t *a,
                                        size_t l, size_t words) {
    UNROLL(16)
    for (size_t i = 0; i < 8 * words; i += 8) {
        UNROLL(8)
        for (int j = 0; j < Y_NS; j++)
            cs[j] = _mm_crc32_u64(cs[j], llog_load64(a + l * (size_t)j + i));
    }
}

/* crc(0, ABC) from the streams' crc(0, A), crc(0, B), crc(0, C), by (2)
 * and (3). */
TARGET_PCLMUL static inline uint32_t
merge_streams(const uint64_t cs[Y_NS], const uint64_t k[Y_NS - 1]) {
    __m128i s = _mm_setzero_si128();
    UNROLL(8)
    for (int i = 0; i < Y_NS - 1; i++)
        s = _mm_xor_si128(
            s, _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)cs[i]),
                                    _mm_cvtsi64_si128((long long)k[i]), 0x00));
    return (uint32_t)(_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(s)) ^
                      cs[Y_NS - 1]);
}

/* The 16 bytes of x moved forward by the distance of k, xored onto next
 * (see "Folding"). */
TARGET_PCLMUL static inline __m128i fold_x(__m128i x, __m128i k,
                                           __m128i next) {
    __m128i h = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i l = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(h, l), next);
}

TARGET_PCLMUL static inline __m128i const_x(const uint64_t k[2]) {
    return _mm_set_epi64x((long long)k[1], (long long)k[0]);
}

/* 16 bytes at p, a multiple of 16 (head_to), so that the load may be the
 * xor's operand. */
TARGET_PCLMUL static inline __m128i load_x(const uint8_t *p) {
    return _mm_load_si128((const __m128i *)(const void *)p);
}

/* x[0 .. X_LANES) folded forward by the distance of k onto the bytes at q
 * (unrolled and inlined so that x stays in registers). */
TARGET_PCLMUL static inline void fold_lanes_x(__m128i x[X_LANES], __m128i k,
                                              const uint8_t *q) {
    UNROLL(8)
    for (int j = 0; j < X_LANES; j++)
        x[j] = fold_x(x[j], k, load_x(q + 16 * j));
}

/* The CRC (from 0) of the 16 * X_LANES consecutive bytes in x: folded
 * pairwise into the last lane (by 16, 32, 64 bytes), whose crc32 is that
 * of the whole. */
TARGET_PCLMUL static inline uint32_t reduce_x(__m128i x[X_LANES]) {
    const uint64_t *k[] = {llog_crc32c_k.fold_lanes[2], llog_crc32c_k.fold_32,
                           llog_crc32c_k.fold_64};
    UNROLL(3)
    for (int level = 0, d = 1; d < X_LANES; level++, d *= 2) {
        UNROLL(4)
        for (int j = d - 1; j + d < X_LANES; j += 2 * d)
            x[j + d] = fold_x(x[j], const_x(k[level]), x[j + d]);
    }
    __m128i v = x[X_LANES - 1];
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
    return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
}

/* Folding alone: the bytes up to a multiple of 16 and what is left after
 * whole folds by one crc32 chain. */
TARGET_PCLMUL static uint32_t fold_alone_x(uint32_t crc, const uint8_t *p,
                                           size_t len) {
    len = head_to(&crc, &p, len, 16);
    size_t n = len & ~(size_t)(16 * X_LANES - 1);
    if (n == 0)
        return llog_crc32c_sse42(crc, p, len);
    __m128i x[X_LANES];
    UNROLL(8)
    for (int j = 0; j < X_LANES; j++)
        x[j] = load_x(p + 16 * j);
    x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)crc));
    __m128i k = const_x(llog_crc32c_k.x_lanes);
    for (size_t i = 16 * X_LANES; i < n; i += 16 * X_LANES)
        fold_lanes_x(x, k, p + i);
    return llog_crc32c_sse42(reduce_x(x), p + n, len - n);
}

/* One block V A B C of shape sh, as block_y but with xmm accumulators x,
 * which stand for everything before V and move onto it by gap; each step
 * folds 16 * X_LANES bytes of V, and when `ahead` asks for the lines
 * X_AHEAD bytes on in V and in each stream. Returns crc(0, ABC). */
TARGET_PCLMUL static inline uint32_t block_x(__m128i x[X_LANES], uint32_t r,
                                             const uint8_t *p,
                                             const y_shape *sh, __m128i gap,
                                             int ahead) {
    const uint8_t *a = p + 16 * X_LANES * sh->steps;
    uint64_t cs[Y_NS] = {0};
    fold_lanes_x(x, gap, p);
    /* after the fold: only this xor waits for the previous block's r */
    x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)r));
    __m128i k = const_x(llog_crc32c_k.x_lanes);
    for (size_t step = 0; step < sh->steps; step++) {
        if (step > 0)
            fold_lanes_x(x, k, p + 16 * X_LANES * step);
        streams(cs, a + 8 * X_WORDS * step, sh->l, X_WORDS);
        if (ahead) { /* the lines of V and of each stream X_AHEAD on */
            const char *v = (const char *)p + 16 * X_LANES * step + X_AHEAD;
            const char *s = (const char *)a + 8 * X_WORDS * step + X_AHEAD;
            for (size_t off = 0; off < 16 * X_LANES; off += 64)
                _mm_prefetch(v + off, _MM_HINT_T0);
            for (size_t j = 0; j < Y_NS; j++)
                _mm_prefetch(s + sh->l * j, _MM_HINT_T0);
        }
    }
    return merge_streams(cs, sh->stream_k);
}

/* Folding and three crc32 chains side by side, carried across blocks (see
 * "Carried across blocks"): huge blocks for long inputs (fetching ahead
 * when `ahead`, a constant where it is copied in), then long and short
 * ones; folding alone for what is left. */
TARGET_PCLMUL LLOG_HOT_INLINE uint32_t blocks_x(uint32_t crc, const uint8_t *p,
                                                size_t len, int ahead) {
    len = head_to(&crc, &p, len, 16);
    __m128i x[X_LANES];
    UNROLL(8)
    for (int j = 0; j < X_LANES; j++) /* folding zeros leaves V as is */
        x[j] = _mm_setzero_si128();
    uint32_t r = crc; /* the start value enters like a previous r */
    const y_shape *shapes[] = {&llog_crc32c_k.x_huge, &llog_crc32c_k.x_long,
                               &llog_crc32c_k.x_short};
    const y_shape *last = &llog_crc32c_k.x_short;
    for (int i = len >= X_HUGE_MIN ? 0 : 1; i < 3; i++) { /* longest first */
        const y_shape *sh = shapes[i];
        for (; len >= sh->block; p += sh->block, len -= sh->block) {
            r = block_x(x, r, p, sh, const_x(last->gap), ahead && i == 0);
            last = sh;
        }
    }
    crc = shift_add(reduce_x(x), last->tail_k, r);
    return fold_alone_x(crc, p, len);
}

/* blocks_x, out of line so that short inputs do not pay for its frame. */
TARGET_PCLMUL NOINLINE static uint32_t
crc_x_blocks(uint32_t crc, const uint8_t *p, size_t len) {
    return blocks_x(crc, p, len, 0);
}

TARGET_PCLMUL NOINLINE static uint32_t
crc_x_blocks_ahead(uint32_t crc, const uint8_t *p, size_t len) {
    return blocks_x(crc, p, len, 1);
}

/* blocks_x, but one crc32 chain for short inputs and folding alone for
 * inputs shorter than a short block (after the bytes that align it). */
TARGET_PCLMUL uint32_t llog_crc32c_pclmul_crc32(uint32_t crc, const uint8_t *p,
                                                size_t len) {
    if (len < FOLD_MIN) /* short: straight to the loop with no set-up */
        return llog_crc32c_sse42(crc, p, len);
    if (len < llog_crc32c_k.x_short.block + 16)
        return fold_alone_x(crc, p, len);
    if (len > X_AHEAD_MIN)
        return crc_x_blocks_ahead(crc, p, len);
    return crc_x_blocks(crc, p, len);
}

/* ---------------------------------------------------------------------- */
/* AVX2 VPCLMULQDQ: folding alone, and side by side with crc32            */
/* ---------------------------------------------------------------------- */

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
    __m128i k = _mm_set_epi64x((long long)llog_crc32c_k.fold_lanes[2][1],
                               (long long)llog_crc32c_k.fold_lanes[2][0]);
    __m128i lo = _mm256_castsi256_si128(x);
    __m128i v = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(lo, k, 0x00),
                                            _mm_clmulepi64_si128(lo, k, 0x11)),
                              _mm256_extracti128_si256(x, 1));
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
    return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
}

/* Eight consecutive 32-byte blocks folded into the last, pairwise. */
TARGET_AVX2 static inline __m256i merge8_y(__m256i x[8]) {
    __m256i k32 = broadcast_y(llog_crc32c_k.fold_32),
            k64 = broadcast_y(llog_crc32c_k.fold_64);
    __m256i a = fold_y(x[0], k32, x[1]), b = fold_y(x[2], k32, x[3]);
    __m256i c = fold_y(x[4], k32, x[5]), d = fold_y(x[6], k32, x[7]);
    return fold_y(fold_y(a, k64, b), broadcast_y(llog_crc32c_k.fold_128),
                  fold_y(c, k64, d));
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
        __m256i k256 = broadcast_y(llog_crc32c_k.fold_256);
        for (p += 224; end - p >= 256; p += 256)
            fold8_y(x, k256, p);
        x[0] = merge8_y(x);
    }
    __m256i k32 = broadcast_y(llog_crc32c_k.fold_32);
    for (; p < end; p += 32)
        x[0] = fold_y(x[0], k32, load_y(p));
    return x[0];
}

/* Folding alone, single crc32 for what is left and for short inputs. */
TARGET_AVX2 uint32_t llog_crc32c_avx2_fold(uint32_t crc, const uint8_t *p,
                                           size_t len) {
    if (len < FOLD_MIN)
        return llog_crc32c_sse42(crc, p, len);
    len = head_to(&crc, &p, len, 32);
    size_t n = len & ~(size_t)31;
    crc = reduce_y(fold_blocks_y(crc, p, n));
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return llog_crc32c_sse42(crc, p + n, len - n);
}

/* How blocks fetch ahead: not at all; short blocks of a long input all
 * their lines Y_PREFETCH on, at their start; or each step its share of
 * the lines Y_AHEAD on (llog_crc32c_extend_ahead, and inputs longer than
 * Y_HUGE_MAX up to Y_SPREAD_MAX). Never faults. */
enum y_fetch { FETCH_NONE, FETCH_SHORT, FETCH_SPREAD };

/* The shape an input of len bytes starts with (0 huge, 1 long, 2 short
 * blocks), and how its blocks fetch ahead (*fetch): by the thresholds
 * Y_HUGE_MIN, Y_HUGE_MAX and Y_SPREAD_MAX, or Y_AHEAD_HUGE_MAX when
 * `ahead`. */
static inline int y_start(size_t len, int ahead, enum y_fetch *fetch) {
    if (ahead) {
        *fetch = FETCH_SPREAD;
        return len > Y_AHEAD_HUGE_MAX ? 2 : len >= Y_HUGE_MIN ? 0 : 1;
    }
    if (len > Y_SPREAD_MAX) {
        *fetch = FETCH_SHORT;
        return 2;
    }
    *fetch = len > Y_HUGE_MAX ? FETCH_SPREAD : FETCH_NONE;
    return len >= Y_HUGE_MIN && len <= Y_HUGE_MAX ? 0 : 1;
}

/* One block V A B C of shape sh: the accumulators x, standing for
 * everything before V, carried onto V by gap (r, the CRC of the previous
 * A B C, xored into its first bytes) and folded through it while three
 * crc32 chains run over A, B, C. Returns crc(0, ABC). */
TARGET_AVX2 static inline uint32_t block_y(__m256i x[8], uint32_t r,
                                           const uint8_t *p, const y_shape *sh,
                                           __m256i gap, enum y_fetch fetch) {
    const uint8_t *a = p + 256 * sh->steps;
    uint64_t cs[Y_NS] = {0};
    if (sh == &llog_crc32c_k.y_short && fetch == FETCH_SHORT)
        for (size_t off = 0; off < sh->block; off += 64)
            _mm_prefetch((const char *)p + Y_PREFETCH + off, _MM_HINT_T0);
    fold8_y(x, gap, p);
    /* after the fold: only this xor waits for the previous block's r */
    x[0] =
        _mm256_xor_si256(x[0], _mm256_setr_epi32((int)r, 0, 0, 0, 0, 0, 0, 0));
    __m256i k256 = broadcast_y(llog_crc32c_k.fold_256);
    for (size_t step = 0; step < sh->steps; step++) {
        if (step > 0)
            fold8_y(x, k256, p + 256 * step);
        streams(cs, a + 8 * Y_WORDS * step, sh->l, Y_WORDS);
        if (fetch == FETCH_SPREAD)
            for (size_t off = 0; off < sh->share; off += Y_AHEAD_STRIDE)
                _mm_prefetch((const char *)p + Y_AHEAD + step * sh->share +
                                 off,
                             _MM_HINT_T0);
    }
    return merge_streams(cs, sh->stream_k);
}

/* Folding and three crc32 chains side by side (see "Carried across
 * blocks"): huge or long blocks, then shorter ones; folding alone for what
 * is left. Every block fetches ahead when `ahead` (a constant where it is
 * copied in, so that llog_crc32c_extend pays nothing for it). */
TARGET_AVX2 LLOG_HOT_INLINE uint32_t blocks_y(uint32_t crc, const uint8_t *p,
                                              size_t len, int ahead) {
    len = head_to(&crc, &p, len, 32);
    __m256i x[8];
    UNROLL(8)
    for (int j = 0; j < 8; j++) /* folding zeros leaves the first V as is */
        x[j] = _mm256_setzero_si256();
    uint32_t r = crc; /* the start value enters like a previous r */
    const y_shape *shapes[] = {&llog_crc32c_k.y_huge, &llog_crc32c_k.y_long,
                               &llog_crc32c_k.y_short};
    const y_shape *last = &llog_crc32c_k.y_short;
    enum y_fetch fetch;
    int first = y_start(len, ahead, &fetch);
    for (int i = first; i < 3; i++) { /* longest first */
        const y_shape *sh = shapes[i];
        for (; len >= sh->block; p += sh->block, len -= sh->block) {
            r = block_y(x, r, p, sh, broadcast_y(last->gap), fetch);
            last = sh;
        }
    }
    uint32_t v = reduce_y(merge8_y(x)); /* everything up to the last V */
    crc = shift_add(v, last->tail_k, r);
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return llog_crc32c_avx2_fold(crc, p, len);
}

/* blocks_y, out of line so that short inputs (llog_crc32c_avx2) do not pay
 * for its frame: saved registers and a stack aligned for x. */
TARGET_AVX2 NOINLINE static uint32_t
crc_avx2_blocks(uint32_t crc, const uint8_t *p, size_t len) {
    return blocks_y(crc, p, len, 0);
}

TARGET_AVX2 NOINLINE static uint32_t
crc_avx2_blocks_ahead(uint32_t crc, const uint8_t *p, size_t len) {
    return blocks_y(crc, p, len, 1);
}

/* crc_avx2_blocks, but one crc32 chain for short inputs and folding alone
 * for inputs shorter than a short block. */
TARGET_AVX2 uint32_t llog_crc32c_avx2(uint32_t crc, const uint8_t *p,
                                      size_t len) {
    if (len < FOLD_MIN) /* short: straight to the loop with no set-up */
        return llog_crc32c_sse42(crc, p, len);
    if (len < llog_crc32c_k.y_short.block + 32)
        return llog_crc32c_avx2_fold(crc, p, len);
    return crc_avx2_blocks(crc, p, len);
}

/* llog_crc32c_avx2 with every block fetching ahead. */
TARGET_AVX2 uint32_t llog_crc32c_avx2_ahead(uint32_t crc, const uint8_t *p,
                                            size_t len) {
    if (len < llog_crc32c_k.y_short.block + 32)
        return llog_crc32c_avx2(crc, p, len);
    return crc_avx2_blocks_ahead(crc, p, len);
}

/* ---------------------------------------------------------------------- */
/* AVX-512 VPCLMULQDQ: folding alone, and side by side with crc32        */
/* ---------------------------------------------------------------------- */

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
    __m512i k64 = broadcast_k(llog_crc32c_k.fold_64);
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
    __m512i k64 = broadcast_k(llog_crc32c_k.fold_64);
    p += 64;
    if (end - p >= 192) { /* four independent chains hide the clmul latency */
        __m512i x1 = _mm512_loadu_si512(p);
        __m512i x2 = _mm512_loadu_si512(p + 64);
        __m512i x3 = _mm512_loadu_si512(p + 128);
        __m512i k256 = broadcast_k(llog_crc32c_k.fold_256);
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
    __m512i k =
        _mm512_setr_epi64((long long)llog_crc32c_k.fold_lanes[0][0],
                          (long long)llog_crc32c_k.fold_lanes[0][1],
                          (long long)llog_crc32c_k.fold_lanes[1][0],
                          (long long)llog_crc32c_k.fold_lanes[1][1],
                          (long long)llog_crc32c_k.fold_lanes[2][0],
                          (long long)llog_crc32c_k.fold_lanes[2][1], 0, 0);
    __m512i lane3 = _mm512_maskz_mov_epi64(0xC0, x);
    __m512i t = fold(x, k, lane3); /* lane 3 of k is 0: lane 3 of x passes */
    __m256i t2 = _mm256_xor_si256(_mm512_castsi512_si256(t),
                                  _mm512_extracti64x4_epi64(t, 1));
    __m128i v = _mm_xor_si128(_mm256_castsi256_si128(t2),
                              _mm256_extracti128_si256(t2, 1));
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
    return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
}

/* Folding alone, one crc32 chain for the head that aligns the loads, for
 * what is left and for short inputs. Where 512-bit instructions run as two
 * halves (avx512_halved) this is the fastest path at every size past 128
 * bytes: one sequential stream keeps the carry-less multiplier busy, from
 * memory too; three crc32 chains beside it only slow it down
 * (docs/performance.md). */
TARGET_AVX512 uint32_t llog_crc32c_avx512_fold(uint32_t crc, const uint8_t *p,
                                               size_t len) {
    if (len < FOLD_MIN)
        return llog_crc32c_sse42(crc, p, len);
    len = head_to(&crc, &p, len, 64); /* leaves at least 65 bytes */
    size_t n = len & ~(size_t)63;
    crc = reduce_block(fold_blocks(crc, p, n));
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return llog_crc32c_sse42(crc, p + n, len - n);
}

/* The start value and crc(0, V), crc(0, A), crc(0, B) shifted into place
 * and added to crc(0, C) (see "Both at once"), by (3). */
TARGET_AVX512 static uint32_t
hybrid_merge(uint32_t start, uint32_t v, uint64_t a, uint64_t b, uint64_t c) {
    __m128i k01 =
        _mm_loadu_si128((const __m128i *)(const void *)llog_crc32c_k.hybrid_k);
    __m128i k23 = _mm_loadu_si128(
        (const __m128i *)(const void *)(llog_crc32c_k.hybrid_k + 2));
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
    __m512i k256 = broadcast_k(llog_crc32c_k.fold_256);
    __m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64);
    __m512i x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
    uint64_t ca = 0, cb = 0, cc = 0;
    for (size_t step = 0; step < HYBRID_STEPS; step++) {
        for (size_t i = 8 * HYBRID_WORDS * step;
             i < 8 * HYBRID_WORDS * (step + 1); i += 8) {
            ca = _mm_crc32_u64(ca, llog_load64(a + i));
            cb = _mm_crc32_u64(cb, llog_load64(b + i));
            cc = _mm_crc32_u64(cc, llog_load64(c + i));
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

TARGET_AVX512 uint32_t llog_crc32c_avx512(uint32_t crc, const uint8_t *p,
                                          size_t len) {
    if (len < FOLD_MIN) /* short: straight to the loop with no set-up */
        return llog_crc32c_sse42(crc, p, len);
    for (; len >= HYBRID_BLOCK; p += HYBRID_BLOCK, len -= HYBRID_BLOCK)
        crc = hybrid_block(crc, p);
    if (len >= FOLD_MIN) {
        size_t n = len & ~(size_t)63;
        crc = reduce_block(fold_blocks(crc, p, n));
        p += n;
        len -= n;
    }
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return llog_crc32c_sse42(crc, p, len);
}

/* ---------------------------------------------------------------------- */
/* Many short buffers: checksummed while copied (llog_crc32c_copy_many)   */
/* ---------------------------------------------------------------------- */

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
        uint64_t v = llog_load64(p + i);
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
        a = _mm_crc32_u64(a, llog_load64(pa + i));
        b = _mm_crc32_u64(b, llog_load64(pb + i));
        c = _mm_crc32_u64(c, llog_load64(pc + i));
        a = _mm_crc32_u64(a, llog_load64(pa + i + 8));
        b = _mm_crc32_u64(b, llog_load64(pb + i + 8));
        c = _mm_crc32_u64(c, llog_load64(pc + i + 8));
    }
    crc[0] = ~crc_copy_one((uint32_t)a, da + m, pa + m, len[0] - m);
    crc[1] = ~crc_copy_one((uint32_t)b, db + m, pb + m, len[1] - m);
    crc[2] = ~crc_copy_one((uint32_t)c, dc + m, pc + m, len[2] - m);
}

/* ---- long buffers folded while copied: each vector loaded is stored
 * too, so that the copy reads nothing again (a separate memcpy after the
 * CRC re-reads the source and competes with it for the cache) ---------- */

TARGET_AVX2 static inline __m256i copy_y(uint8_t *d, const uint8_t *p) {
    __m256i v = load_y(p);
    _mm256_storeu_si256((__m256i *)(void *)d, v);
    return v;
}

/* fold_blocks_y, storing what it loads at d. */
TARGET_AVX2 static __m256i fold_copy_blocks_y(uint32_t crc, uint8_t *d,
                                              const uint8_t *p, size_t n) {
    assert(n >= 32 && n % 32 == 0);
    const uint8_t *end = p + n;
    __m256i x[8];
    x[0] = _mm256_xor_si256(copy_y(d, p),
                            _mm256_setr_epi32((int)crc, 0, 0, 0, 0, 0, 0, 0));
    p += 32;
    d += 32;
    if (end - p >= 224) {
        UNROLL(8)
        for (int j = 1; j < 8; j++)
            x[j] = copy_y(d + 32 * (j - 1), p + 32 * (j - 1));
        __m256i k256 = broadcast_y(llog_crc32c_k.fold_256);
        for (p += 224, d += 224; end - p >= 256; p += 256, d += 256) {
            UNROLL(8)
            for (int j = 0; j < 8; j++)
                x[j] = fold_y(x[j], k256, copy_y(d + 32 * j, p + 32 * j));
        }
        x[0] = merge8_y(x);
    }
    __m256i k32 = broadcast_y(llog_crc32c_k.fold_32);
    for (; p < end; p += 32, d += 32)
        x[0] = fold_y(x[0], k32, copy_y(d, p));
    return x[0];
}

/* llog_crc32c_avx2_fold of p while copying it to d. */
TARGET_AVX2 uint32_t llog_crc32c_avx2_fold_copy(uint32_t crc, uint8_t *d,
                                                const uint8_t *p, size_t len) {
    if (len < FOLD_MIN)
        return crc_copy_one(crc, d, p, len);
    size_t head = to_boundary(p, 32);
    crc = crc_copy_one(crc, d, p, head);
    d += head;
    p += head;
    len -= head;
    size_t n = len & ~(size_t)31;
    crc = reduce_y(fold_copy_blocks_y(crc, d, p, n));
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return crc_copy_one(crc, d + n, p + n, len - n);
}

TARGET_AVX512 static inline __m512i copy_z(uint8_t *d, const uint8_t *p) {
    __m512i v = _mm512_loadu_si512(p);
    _mm512_storeu_si512(d, v);
    return v;
}

/* fold_blocks, storing what it loads at d. */
TARGET_AVX512 static __m512i fold_copy_blocks(uint32_t crc, uint8_t *d,
                                              const uint8_t *p, size_t n) {
    assert(n >= 64 && n % 64 == 0);
    const uint8_t *end = p + n;
    __m512i x0 =
        _mm512_xor_si512(copy_z(d, p), _mm512_maskz_set1_epi32(1, (int)crc));
    __m512i k64 = broadcast_k(llog_crc32c_k.fold_64);
    p += 64;
    d += 64;
    if (end - p >= 192) {
        __m512i x1 = copy_z(d, p), x2 = copy_z(d + 64, p + 64),
                x3 = copy_z(d + 128, p + 128);
        __m512i k256 = broadcast_k(llog_crc32c_k.fold_256);
        for (p += 192, d += 192; end - p >= 256; p += 256, d += 256) {
            x0 = fold(x0, k256, copy_z(d, p));
            x1 = fold(x1, k256, copy_z(d + 64, p + 64));
            x2 = fold(x2, k256, copy_z(d + 128, p + 128));
            x3 = fold(x3, k256, copy_z(d + 192, p + 192));
        }
        x0 = merge4(x0, x1, x2, x3);
    }
    for (; p < end; p += 64, d += 64)
        x0 = fold(x0, k64, copy_z(d, p));
    return x0;
}

/* llog_crc32c_avx512_fold of p while copying it to d. */
TARGET_AVX512 uint32_t llog_crc32c_avx512_fold_copy(uint32_t crc, uint8_t *d,
                                                    const uint8_t *p,
                                                    size_t len) {
    if (len < FOLD_MIN)
        return crc_copy_one(crc, d, p, len);
    size_t head = to_boundary(p, 64);
    crc = crc_copy_one(crc, d, p, head);
    d += head;
    p += head;
    len -= head;
    size_t n = len & ~(size_t)63;
    crc = reduce_block(fold_copy_blocks(crc, d, p, n));
    _mm256_zeroupper(); /* else SSE code after us may pay for the state */
    return crc_copy_one(crc, d + n, p + n, len - n);
}

/* llog_crc32c_copy_many from the inverted seed: three at a time while
 * three short ones follow; long ones by copy, or by update then memcpy. */
TARGET_SSE42 void llog_crc32c_copy_many_x86(uint32_t seed, uint32_t *crc,
                                            uint8_t *const *d,
                                            const uint8_t *const *p,
                                            const size_t *len, size_t n,
                                            crc_fn update, crc_copy_fn copy) {
    size_t i = 0;
    while (i < n) {
        if (n - i >= 3 && (len[i] | len[i + 1] | len[i + 2]) < MANY_LONG) {
            crc_copy_x3(crc + i, seed, d + i, p + i, len + i);
            i += 3;
        } else if (len[i] < MANY_LONG) {
            crc[i] = ~crc_copy_one(seed, d[i], p[i], len[i]);
            i++;
        } else if (copy != NULL) {
            crc[i] = ~copy(seed, d[i], p[i], len[i]);
            i++;
        } else {
            crc[i] = ~update(seed, p[i], len[i]);
            memcpy(d[i], p[i], len[i]);
            i++;
        }
    }
}
#endif /* HAVE_X86 */
