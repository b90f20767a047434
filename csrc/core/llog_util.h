/*
 * llog_util.h - the core's small helpers, shared by the CRC-32C and log
 * files: unaligned little-endian loads and stores, and the attribute that
 * copies a hot helper into each caller. Not part of the API.
 */
#ifndef LLOG_UTIL_H
#define LLOG_UTIL_H

#include <stdint.h>
#include <string.h>

/* For the few helpers of a hot path that two callers share: inlined into
 * both, so that neither pays for a call (the instruction budget,
 * bench/callgrind, shows it). */
#if defined(__GNUC__) || defined(__clang__)
#define LLOG_HOT_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define LLOG_HOT_INLINE static __forceinline
#else
#define LLOG_HOT_INLINE static inline
#endif

/* Loads and stores need no alignment and do not depend on the host's byte
 * order: one move on a little-endian host (gcc does not always fuse the
 * byte loads), byte by byte elsewhere. */
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || \
    defined(_M_X64) || defined(_M_ARM64) || defined(_M_IX86)
#define LLOG_LITTLE_ENDIAN_HOST 1
#else
#define LLOG_LITTLE_ENDIAN_HOST 0
#endif

static inline uint32_t llog_load32(const uint8_t *p) {
#if LLOG_LITTLE_ENDIAN_HOST
    uint32_t v;
    memcpy(&v, p, 4); /* well defined at any alignment */
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
#endif
}

static inline uint64_t llog_load64(const uint8_t *p) {
#if LLOG_LITTLE_ENDIAN_HOST
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    return (uint64_t)llog_load32(p) | (uint64_t)llog_load32(p + 4) << 32;
#endif
}

static inline void llog_store32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif /* LLOG_UTIL_H */
