/* log_header.c - the dialect tables, the type bytes' checksums, and the
 * checks of log_header.h that are not inline. */
#include "log_header.h"

/* The C tests check these against llog_crc32c_extend of each byte. */
const uint32_t llog_type_crc[LLOG_MAX_TYPE + 1] = {
    0x527D5351u, 0xA016D052u, 0xB34623A6u, 0x412DA0A5u, 0x95E7C44Eu};

/* An entry: a role and a header size. U: a type the dialect does not know
 * (7-byte header); F7..L7, F11..L11, F19..L19: the fragments' four roles
 * (FULL, FIRST, MIDDLE, LAST) with 7-, 11- and 19-byte headers. */
#define ENTRY(role, size) ((uint8_t)((role) | (size) << 3))
#define U ENTRY(LLOG_ROLE_UNKNOWN, LLOG_HEADER_SIZE)
#define FRAGMENTS(size)                                                       \
    ENTRY(LLOG_ROLE_FULL, size), ENTRY(LLOG_ROLE_FIRST, size),                \
        ENTRY(LLOG_ROLE_MIDDLE, size), ENTRY(LLOG_ROLE_LAST, size)
#define META7 ENTRY(LLOG_ROLE_META, LLOG_HEADER_SIZE)
#define META11 ENTRY(LLOG_ROLE_META, LLOG_RECYCLABLE_HEADER_SIZE)
#define U2 U, U
#define U4 U2, U2
#define U8 U4, U4
#define U16 U8, U8
#define U32 U16, U16
#define U64 U32, U32
#define U128 U64, U64

/* Indexed by llog_dialect; each row is 256 entries (the C tests count). */
const uint8_t llog_header_tables[LLOG_DIALECT_COUNT][256] = {
    /* LevelDB: types 1-4. */
    {U, FRAGMENTS(LLOG_HEADER_SIZE), U128, U64, U32, U16, U8, U2, U},
    /* RocksDB: 1-4; recyclable 5-8; metadata 9 (compression), 10 and 11
     * (timestamp sizes), 130 and 131 (the predecessor WAL). */
    {U, FRAGMENTS(LLOG_HEADER_SIZE), FRAGMENTS(LLOG_RECYCLABLE_HEADER_SIZE),
     META7, META7, META11, U64, U32, U16, U4, U2, META7, META11, U64, U32, U16,
     U8, U4},
    /* Pebble: 1-4; recyclable 5-8; walSync 9-12. */
    {U, FRAGMENTS(LLOG_HEADER_SIZE), FRAGMENTS(LLOG_RECYCLABLE_HEADER_SIZE),
     FRAGMENTS(LLOG_SYNC_HEADER_SIZE), U128, U64, U32, U16, U2, U},
};

int llog_checksum_ok_dialect(const uint8_t *p, const llog_header *h,
                             const uint8_t *payload) {
    if (h->header_size == LLOG_HEADER_SIZE)
        return llog_checksum_ok(h, payload);
    uint32_t crc = llog_crc32c_extend(0, p + 6, h->header_size - 6);
    return llog_crc32c_extend(crc, payload, h->length) ==
           llog_unmask_crc(h->masked_crc);
}

int llog_header_starts_compressed(const uint8_t *p, size_t len) {
    llog_header h = {0, 0, 0, LLOG_HEADER_SIZE, 0, 0};
    return llog_header_region(NULL, p, len, 1, &h) == LLOG_REGION_RECORD &&
           h.type == LLOG_RDB_SET_COMPRESSION &&
           llog_checksum_ok(&h, p + LLOG_HEADER_SIZE) &&
           llog_compression_record_type(p + LLOG_HEADER_SIZE, h.length) ==
               LLOG_RDB_ZSTD;
}
