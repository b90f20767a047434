/*
 * ref_crc32c.c - the reference CRC-32C (see ref_crc32c.h).
 */
#include "ref_crc32c.h"

uint32_t ref_crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

static uint32_t ref_table[256];
static int ref_table_ready;

/* Entry i is the raw 8-step update of byte i, taken from the definition. */
static void ref_table_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint8_t byte = (uint8_t)i;
        ref_table[i] = ~ref_crc32c_bitwise(0xFFFFFFFFu, &byte, 1);
    }
    ref_table_ready = 1;
}

uint32_t ref_crc32c(uint32_t crc, const uint8_t *p, size_t n) {
    if (!ref_table_ready)
        ref_table_init();
    crc = ~crc;
    for (size_t i = 0; i < n; i++)
        crc = ref_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t ref_crc32c_mask(uint32_t crc) {
    return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}
