/* log_format.c - status texts, type, recovery-mode and dialect names, from
 * the lists in log_format.h; the checksums of the type bytes; what a type
 * byte means in each dialect (docs/rocksdb.md). */
#include "log_format.h"

/* The C tests check these against llog_crc32c_extend of each byte. */
const uint32_t llog_type_crc[LLOG_MAX_TYPE + 1] = {
    0x527D5351u, 0xA016D052u, 0xB34623A6u, 0x412DA0A5u, 0x95E7C44Eu};

const char *llog_status_text(llog_status status) {
    switch (status) {
#define LLOG_STATUS_CASE(name, text)                                          \
    case name:                                                                \
        return text;
        LLOG_STATUS_LIST(LLOG_STATUS_CASE)
#undef LLOG_STATUS_CASE
    }
    return "unknown status";
}

const char *llog_type_name(unsigned type) {
    switch (type) {
#define LLOG_TYPE_CASE(name, value, text)                                     \
    case value:                                                               \
        return text;
        LLOG_TYPE_LIST(LLOG_TYPE_CASE)
#undef LLOG_TYPE_CASE
    }
    return NULL;
}

const char *llog_recovery_name(unsigned mode) {
    static const char *const names[] = {
#define LLOG_RECOVERY_TEXT(name, text) text,
        LLOG_RECOVERY_LIST(LLOG_RECOVERY_TEXT)
#undef LLOG_RECOVERY_TEXT
    };
    return mode < LLOG_RECOVERY_COUNT ? names[mode] : NULL;
}

const char *llog_dialect_name(unsigned dialect) {
    static const char *const names[] = {
#define LLOG_DIALECT_TEXT(name, text) text,
        LLOG_DIALECT_LIST(LLOG_DIALECT_TEXT)
#undef LLOG_DIALECT_TEXT
    };
    return dialect < LLOG_DIALECT_COUNT ? names[dialect] : NULL;
}

/* The fragment roles of types 1-4, and of each later group of four that a
 * dialect numbers the same way (recyclable 5-8; Pebble's walSync 9-12). */
static llog_role fragment_role(unsigned type) {
    return (llog_role)(LLOG_ROLE_FULL + (type - 1) % 4);
}

llog_role llog_type_role(llog_dialect dialect, unsigned type) {
    if (type >= LLOG_FULL && type <= LLOG_LAST)
        return fragment_role(type);
    switch (dialect) {
    case LLOG_DIALECT_ROCKSDB:
        if (type >= 5 && type <= 8)
            return fragment_role(type);
        if (type == LLOG_RDB_SET_COMPRESSION ||
            type == LLOG_RDB_TIMESTAMP_SIZE ||
            type == LLOG_RDB_TIMESTAMP_SIZE_RECYCLABLE ||
            type == LLOG_RDB_PREDECESSOR ||
            type == LLOG_RDB_PREDECESSOR_RECYCLABLE)
            return LLOG_ROLE_META;
        return LLOG_ROLE_UNKNOWN;
    case LLOG_DIALECT_PEBBLE:
        return type >= 5 && type <= 12 ? fragment_role(type)
                                       : LLOG_ROLE_UNKNOWN;
    default:
        return LLOG_ROLE_UNKNOWN;
    }
}

size_t llog_type_header_size(llog_dialect dialect, unsigned type) {
    switch (dialect) {
    case LLOG_DIALECT_ROCKSDB:
        if ((type >= 5 && type <= 8) ||
            type == LLOG_RDB_TIMESTAMP_SIZE_RECYCLABLE ||
            type == LLOG_RDB_PREDECESSOR_RECYCLABLE)
            return LLOG_RECYCLABLE_HEADER_SIZE;
        return LLOG_HEADER_SIZE;
    case LLOG_DIALECT_PEBBLE:
        if (type >= 5 && type <= 8)
            return LLOG_RECYCLABLE_HEADER_SIZE;
        return type >= 9 && type <= 12 ? LLOG_SYNC_HEADER_SIZE
                                       : LLOG_HEADER_SIZE;
    default:
        return LLOG_HEADER_SIZE;
    }
}

static uint64_t load64(const uint8_t *p) {
    return (uint64_t)llog_load32(p) | (uint64_t)llog_load32(p + 4) << 32;
}

llog_region llog_region_at_dialect(llog_dialect dialect, const uint8_t *p,
                                   size_t left, int final, llog_header *h) {
    if (left < LLOG_HEADER_SIZE)
        return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_TRAILER;
    *h = llog_header_decode(p);
    h->header_size = llog_type_header_size(dialect, h->type);
    if (h->header_size > left)
        return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_TRAILER;
    h->log_number = h->header_size > LLOG_HEADER_SIZE
                        ? llog_load32(p + LLOG_HEADER_SIZE)
                        : 0;
    h->synced = h->header_size == LLOG_SYNC_HEADER_SIZE
                    ? load64(p + LLOG_RECYCLABLE_HEADER_SIZE)
                    : 0;
    if (h->header_size + h->length > left)
        return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_BAD_LENGTH;
    if (h->type == LLOG_ZERO && h->length == 0)
        return LLOG_REGION_ZERO;
    return LLOG_REGION_RECORD;
}

int llog_checksum_ok_dialect(const uint8_t *p, const llog_header *h,
                             const uint8_t *payload) {
    if (h->header_size == LLOG_HEADER_SIZE)
        return llog_checksum_ok(h, payload);
    uint32_t crc = llog_crc32c_extend(0, p + 6, h->header_size - 6);
    return llog_crc32c_extend(crc, payload, h->length) ==
           llog_unmask_crc(h->masked_crc);
}
