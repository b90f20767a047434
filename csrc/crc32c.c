/*
 * crc32c.c - CRC-32C, portable and hardware-accelerated.
 *
 * The mathematics, once. A reflected CRC processes input bit by bit, least
 * significant bit first: crc = (crc >> 1) ^ (POLY if the bit shifted out is 1).
 * Eight such steps for one input byte depend only on the low byte of
 * (crc ^ byte), so table0[i] holds the effect of 8 steps on i, and
 * crc = table0[(crc ^ b) & 0xff] ^ (crc >> 8).
 *
 * Slice-by-8 takes 8 bytes at once. Because the CRC is linear over GF(2), the
 * contribution of each of the 8 bytes can be looked up separately and xored:
 * table_k[i] is the effect of byte i followed by k zero bytes, which is one
 * more byte step applied to table_{k-1}[i]. Eight independent loads per 8
 * bytes instead of a chain of eight dependent ones.
 *
 * SSE4.2 has a crc32 instruction for exactly this polynomial (without the
 * initial and final inversion), 8 bytes per instruction.
 */
#include "crc32c.h"

#include <assert.h>
#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static int tables_ready;

typedef uint32_t (*crc_fn)(uint32_t, const uint8_t *, size_t);
static crc_fn chosen;
static const char *chosen_name = "portable";

static void build_tables(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int bit = 0; bit < 8; bit++)
            c = (c >> 1) ^ (POLY & (0u - (c & 1u)));
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            table[k][i] = table[0][table[k - 1][i] & 0xff] ^
                          (table[k - 1][i] >> 8);
    tables_ready = 1;
}

/* Raw CRC update (no inversion) with slice-by-8. */
static uint32_t update_portable(uint32_t crc, const uint8_t *p, size_t len) {
    while (len >= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                             (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
              table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
              table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^
              table[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if (defined(__x86_64__) || defined(__i386__)) &&                              \
    (defined(__GNUC__) || defined(__clang__))
#define HAVE_SSE42_PATH 1
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t
update_sse42(uint32_t crc, const uint8_t *p, size_t len) {
    /* Byte steps up to 8-byte alignment so the wide loads do not straddle
     * cache lines; memcpy keeps unaligned access well defined. */
    while (len > 0 && ((uintptr_t)p & 7) != 0) {
        crc = _mm_crc32_u8(crc, *p++);
        len--;
    }
#if defined(__x86_64__)
    uint64_t c64 = crc;
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c64 = _mm_crc32_u64(c64, v);
        p += 8;
        len -= 8;
    }
    crc = (uint32_t)c64;
#endif
    while (len >= 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        crc = _mm_crc32_u32(crc, v);
        p += 4;
        len -= 4;
    }
    while (len--)
        crc = _mm_crc32_u8(crc, *p++);
    return crc;
}

static int cpu_has_sse42(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#else
#define HAVE_SSE42_PATH 0
#endif

void llog_crc32c_init(int allow_hardware) {
    if (!tables_ready)
        build_tables();
    chosen = update_portable;
    chosen_name = "portable";
#if HAVE_SSE42_PATH
    if (allow_hardware && cpu_has_sse42()) {
        chosen = update_sse42;
        chosen_name = "sse4.2";
    }
#else
    (void)allow_hardware;
#endif
}

const char *llog_crc32c_implementation(void) { return chosen_name; }

int llog_crc32c_hardware_available(void) {
#if HAVE_SSE42_PATH
    return cpu_has_sse42();
#else
    return 0;
#endif
}

uint32_t llog_crc32c_extend(uint32_t crc, const void *data, size_t len) {
    /* chosen is set by llog_crc32c_init, which the contract requires first. */
    assert(chosen != NULL);
    if (len == 0)
        return crc;
    return ~chosen(~crc, (const uint8_t *)data, len);
}

uint32_t llog_crc32c_portable(uint32_t crc, const void *data, size_t len) {
    assert(tables_ready); /* built by llog_crc32c_init */
    if (len == 0)
        return crc;
    return ~update_portable(~crc, (const uint8_t *)data, len);
}

uint32_t llog_crc32c_hardware(uint32_t crc, const void *data, size_t len) {
#if HAVE_SSE42_PATH
    if (len == 0)
        return crc;
    return ~update_sse42(~crc, (const uint8_t *)data, len);
#else
    return llog_crc32c_portable(crc, data, len);
#endif
}
