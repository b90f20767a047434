/*
 * crc32c.c - CRC-32C: the mathematics, the portable tables, the constants
 * of the instruction-based paths, and the run-time choice among them; every
 * function of crc32c.h. The paths are in crc32c_x86.c and crc32c_arm.c,
 * what the three files share in crc32c_paths.h.
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
 * Folding (AVX-512, AVX2, PCLMULQDQ). Hold a 16-byte block as V = H x^64 + L
 * (H its first 8 bytes, the higher powers). Moved D bytes later, V x^(8D) is
 * congruent to H (x^(8D+31) mod P) x^33 + L (x^(8D-33) mod P) x^33, and
 * clmul(h, k) read as a reflected 128-bit value is h*k*x^33: two carry-less
 * multiplies give a 16-byte value that may be xored onto the block D bytes
 * later without changing the message mod P. Folding blocks onto later ones
 * leaves 16 bytes that stand for everything read so far; their crc32 from 0 is
 * the CRC. The start value c is xored into the first 4 bytes first, as (1)
 * shows crc(c, M) = crc(0, M + c x^(8n-32)).
 *
 * Both at once. The vector unit folds and the crc32 unit runs its streams in
 * parallel: a block V A B C, V folded and A, B, C three crc32 streams of L
 * bytes, is (2) with one more term, and the block's start value c enters as
 * crc(c, VABC) = c x^(8|VABC|) + crc(0, VABC), so blocks do not wait for
 * each other.
 *
 * Carried across blocks (AVX2, PCLMULQDQ). Instead of reducing the folded V of
 * every block, the accumulators move on over A B C to the next block's V: that
 * is a fold by |V's last 256 (AVX2) or 128 bytes| + |ABC| bytes, only another
 * constant. And r = crc(0, ABC), which stands for A B C at the end of C,
 * enters the next V like a start value, xored into its first 4 bytes (by (1)
 * as above); the very first V takes the caller's start value the same way.
 * Only the last block is reduced: its accumulators give v = crc(0, everything
 * up to the end of its V), and the CRC is v x^(8|ABC|) + r, by (3).
 */
#include "crc32c.h"
#include "crc32c_paths.h"

#include <assert.h>
#include <string.h>

#define POLY 0x82F63B78u
#define X_POW_0 0x80000000u /* the polynomial 1, reflected */

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

/* The constants every path reads (described in crc32c_paths.h). */
struct llog_crc32c_constants llog_crc32c_k;

/* Fold constants {x^(8D+31), x^(8D-33)} mod P for a distance of D bytes. */
static void fold_constants(uint64_t k[2], size_t d) {
    k[0] = x_pow_mod_p(8 * (uint64_t)d + 31);
    k[1] = x_pow_mod_p(8 * (uint64_t)d - 33);
}

/* A shape of blocks V A B C (see "Carried across blocks"): steps steps,
 * each folding v_step bytes of V and feeding words words to each stream,
 * with accumulators that hold the last `lanes` bytes of V. */
static void shape_constants(y_shape *sh, size_t steps, size_t v_step,
                            size_t lanes, size_t words) {
    sh->steps = steps;
    sh->l = 8 * words * steps;
    sh->block = v_step * steps + Y_NS * sh->l;
    sh->share = sh->block / steps;
    fold_constants(sh->gap, lanes + Y_NS * sh->l);
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
        llog_crc32c_k.stream_k[s][0] = x_pow_mod_p(16 * l - 33);
        llog_crc32c_k.stream_k[s][1] = x_pow_mod_p(8 * l - 33);
    }
    fold_constants(llog_crc32c_k.fold_256, 256);
    fold_constants(llog_crc32c_k.fold_64, 64);
    for (int j = 0; j < 4; j++) /* shifts by |VABC|, 3L, 2L, L bytes */
        llog_crc32c_k.hybrid_k[j] = x_pow_mod_p(
            8 * (uint64_t)(j == 0 ? HYBRID_BLOCK : (4 - j) * HYBRID_L) - 33);
    for (int lane = 0; lane < 3; lane++)
        fold_constants(llog_crc32c_k.fold_lanes[lane], 48 - 16 * (size_t)lane);
    fold_constants(llog_crc32c_k.fold_32, 32);
    fold_constants(llog_crc32c_k.fold_128, 128);
    shape_constants(&llog_crc32c_k.y_huge, 64, 256, 256, Y_WORDS);
    shape_constants(&llog_crc32c_k.y_long, 8, 256, 256, Y_WORDS);
    shape_constants(&llog_crc32c_k.y_short, 2, 256, 256, Y_WORDS);
    const size_t x_v = 16 * X_LANES; /* a step folds every lane once */
    fold_constants(llog_crc32c_k.x_lanes, x_v);
    shape_constants(&llog_crc32c_k.x_huge, X_HUGE_STEPS, x_v, x_v, X_WORDS);
    shape_constants(&llog_crc32c_k.x_long, X_LONG_STEPS, x_v, x_v, X_WORDS);
    shape_constants(&llog_crc32c_k.x_short, X_SHORT_STEPS, x_v, x_v, X_WORDS);
    assert(llog_crc32c_k.x_short.block % 16 == 0); /* see X_WORDS */
}
#endif /* HAVE_X86 || HAVE_ARM */

/* ---------------------------------------------------------------------- */
/* The list, the choice, the public API                                   */
/* ---------------------------------------------------------------------- */

typedef struct impl {
    const char *name;
    crc_fn update;
    int (*supported)(void); /* asked once, in prepare(), after probing */
    crc_fn ahead; /* update fetching ahead (extend_ahead), or NULL: update */
    int (*passed_over)(void); /* NULL, or: usable, but not chosen here */
    crc_copy_fn copy;         /* update while copying (copy_many), or NULL */
} impl;

/*
 * Slowest first: the last usable one is the best, unless it is passed over
 * on this CPU. Where 512-bit instructions run as two halves, folding alone
 * (avx512+vpclmulqdq) is faster than with three crc32 chains beside it, at
 * every size; the side-by-side path suits CPUs that run them whole
 * (docs/performance.md has the figures).
 */
static const impl impls[] = {
    {"portable", update_portable, always, NULL, NULL, NULL},
#if HAVE_X86
    {"sse4.2", llog_crc32c_sse42, llog_crc32c_has_sse42, NULL, NULL, NULL},
    {"sse4.2+pclmul", llog_crc32c_sse42_3way, llog_crc32c_has_pclmul, NULL,
     NULL, NULL},
    {"pclmul+crc32", llog_crc32c_pclmul_crc32, llog_crc32c_has_pclmul, NULL,
     NULL, NULL},
    {"avx2+vpclmulqdq", llog_crc32c_avx2_fold, llog_crc32c_has_avx2, NULL,
     NULL, llog_crc32c_avx2_fold_copy},
    {"avx2+vpclmulqdq+crc32", llog_crc32c_avx2, llog_crc32c_has_avx2,
     llog_crc32c_avx2_ahead, NULL, llog_crc32c_avx2_fold_copy},
    {"avx512+vpclmulqdq", llog_crc32c_avx512_fold, llog_crc32c_has_avx512,
     NULL, NULL, llog_crc32c_avx512_fold_copy},
    {"avx512+vpclmulqdq+crc32", llog_crc32c_avx512, llog_crc32c_has_avx512,
     NULL, llog_crc32c_avx512_halved, llog_crc32c_avx512_fold_copy},
#endif
#if HAVE_ARM
    {"armv8-crc", llog_crc32c_arm, llog_crc32c_has_arm_crc, NULL, NULL, NULL},
    {"armv8-crc+pmull", llog_crc32c_arm_3way, llog_crc32c_has_arm_pmull, NULL,
     NULL, NULL},
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
    llog_crc32c_detect_x86();
#endif
    for (int i = 0; i < N_IMPLS; i++) {
        usable[i] = impls[i].supported();
        if (i > 0 && usable[i] &&
            !(impls[i].passed_over != NULL && impls[i].passed_over()))
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

uint32_t llog_crc32c_extend_ahead(uint32_t crc, const void *data, size_t len) {
    assert(ready);
    if (impls[chosen].ahead == NULL || len == 0)
        return run(chosen, crc, data, len);
    return ~impls[chosen].ahead(~crc, (const uint8_t *)data, len);
}

void llog_crc32c_copy_many(uint32_t seed, uint32_t *crc, uint8_t *const *dst,
                           const uint8_t *const *src, const size_t *len,
                           size_t n) {
    assert(ready);
#if HAVE_X86
    if (chosen > 0) { /* every x86 instruction path has SSE4.2's crc32 */
        llog_crc32c_copy_many_x86(~seed, crc, dst, src, len, n,
                                  impls[chosen].update, impls[chosen].copy);
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

int llog_crc32c_copy_many_interleaves(void) {
    assert(ready);
#if HAVE_X86
    return chosen > 0;
#else
    return 0;
#endif
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

int llog_crc32c_impl_default(void) {
    assert(ready);
    return best_hw;
}

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