/*
 * crc32c.h - CRC-32C (Castagnoli) and LevelDB's checksum mask.
 *
 * The CRC is the reflected polynomial 0x82F63B78 with initial value and final
 * xor 0xFFFFFFFF, so llog_crc32c_extend(0, "123456789", 9) == 0xE3069283.
 * Values chain like zlib's crc32: extend(extend(0, a), b) == CRC of a||b.
 */
#ifndef LLOG_CRC32C_H
#define LLOG_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * Builds the portable tables and picks the fastest implementation the CPU
 * offers (allow_hardware = 0 forces the portable one). Must run once, from one
 * thread, before any other function of this library; calling it again from
 * the same thread (to change the choice) is allowed.
 */
void llog_crc32c_init(int allow_hardware);

/* Name of the chosen implementation, e.g. "sse4.2" or "portable". */
const char *llog_crc32c_implementation(void);

/*
 * CRC-32C of data[0..len) continuing from crc (0 to start). Reads exactly len
 * bytes at any alignment; never writes. data may be NULL when len is 0.
 */
uint32_t llog_crc32c_extend(uint32_t crc, const void *data, size_t len);

/* The same, always with the portable table-driven code (used by tests). */
uint32_t llog_crc32c_portable(uint32_t crc, const void *data, size_t len);

/* 1 when the hardware path exists on this CPU and build, else 0. */
int llog_crc32c_hardware_available(void);

/* The hardware path; only valid when llog_crc32c_hardware_available(). */
uint32_t llog_crc32c_hardware(uint32_t crc, const void *data, size_t len);

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
