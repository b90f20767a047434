/*
 * crc32c_arm.c - CRC-32C on AArch64: the ARMv8 CRC32 instructions in one
 * chain (crc32cx) and in three streams merged with PMULL, and what the CPU
 * offers (AT_HWCAP on Linux).
 *
 * Every function carries its own target attribute, so that the file builds
 * without -march flags: crc32c.c calls a path only when the CPU has its
 * instructions. Equations (2) and (3) ("Three streams") are in the comment
 * at the top of crc32c.c; the constants (llog_crc32c_k) are computed there
 * and described in crc32c_paths.h.
 */
#include "crc32c_paths.h"

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

int llog_crc32c_has_arm_crc(void) { return arm_hwcap(7, ARM_CRC_COMPILED_IN); }
int llog_crc32c_has_arm_pmull(void) {
    return llog_crc32c_has_arm_crc() && arm_hwcap(4, ARM_PMULL_COMPILED_IN);
}

TARGET_ARM_CRC uint32_t llog_crc32c_arm(uint32_t crc, const uint8_t *p,
                                        size_t len) {
    for (; len >= 8; p += 8, len -= 8)
        crc = CRC32CX(crc, llog_load64(p));
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
        ca = CRC32CX(ca, llog_load64(p + i));
        cb = CRC32CX(cb, llog_load64(b + i));
        cc = CRC32CX(cc, llog_load64(c + i));
    }
    ca = CRC32CX(ca, llog_load64(p + i)); /* C's last word waits for them */
    cb = CRC32CX(cb, llog_load64(b + i));
    return CRC32CX(cc, llog_load64(c + l - 8) ^ arm_shift2(ca, cb, k));
}

TARGET_ARM_PMULL uint32_t llog_crc32c_arm_3way(uint32_t crc, const uint8_t *p,
                                               size_t len) {
    if (len < 3 * stream_bytes[N_STREAM_SIZES - 1]) /* no block: no set-up */
        return llog_crc32c_arm(crc, p, len);
    for (int s = 0; s < N_STREAM_SIZES; s++) {
        size_t block = 3 * stream_bytes[s];
        for (; len >= block; p += block, len -= block)
            crc = crc_arm_block(crc, p, stream_bytes[s],
                                llog_crc32c_k.stream_k[s]);
    }
    return llog_crc32c_arm(crc, p, len);
}
#endif /* HAVE_ARM */
