/*
 * ref_crc32c.h - the reference CRC-32C of every C test, written from the
 * definition in docs/format.md ("Checksums"), never from csrc/core/crc32c.c.
 *
 * ref_crc32c_bitwise is the definition itself, one bit at a time;
 * ref_crc32c is the same CRC a byte at a time with a table built from it
 * (fast enough for megabytes); ref_crc32c_mask is the stored form.
 */
#ifndef LLOG_TESTS_REF_CRC32C_H
#define LLOG_TESTS_REF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C (Castagnoli, reflected) of p[0..n), continuing from crc. */
uint32_t ref_crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n);

/* The same value as ref_crc32c_bitwise, computed with a 256-entry table. */
uint32_t ref_crc32c(uint32_t crc, const uint8_t *p, size_t n);

/* The masked CRC a header stores: rotated right by 15 bits plus a delta. */
uint32_t ref_crc32c_mask(uint32_t crc);

#endif /* LLOG_TESTS_REF_CRC32C_H */
