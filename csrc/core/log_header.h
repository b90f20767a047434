/*
 * log_header.h - the physical record's header, read the one way every part
 * of the library reads it: the decoder, the dialect tables (which types each
 * dialect knows, and their header sizes), the region classifier (what the
 * bytes at a position of a block are), the checksum checks, and the two
 * records other dialects give a meaning of their own: Pebble's end-of-log
 * trailer and RocksDB's compression record (docs/format.md, "Reading";
 * docs/rocksdb.md).
 */
#ifndef LLOG_LOG_HEADER_H
#define LLOG_LOG_HEADER_H

#include "crc32c.h"
#include "llog_util.h"
#include "log_format.h"

/* What a type byte is in a dialect. The fragments' roles have the values
 * of LevelDB's types, so LevelDB's type is its own role. */
typedef enum llog_role {
    LLOG_ROLE_UNKNOWN = 0, /* no writer of the dialect writes it (or ZERO) */
    LLOG_ROLE_FULL = LLOG_FULL,
    LLOG_ROLE_FIRST = LLOG_FIRST,
    LLOG_ROLE_MIDDLE = LLOG_MIDDLE,
    LLOG_ROLE_LAST = LLOG_LAST,
    LLOG_ROLE_META /* a RocksDB metadata record: never a user record */
} llog_role;

/*
 * The dialect tables: for each dialect, each type byte's role and header
 * size (7, 11 or 19) packed as role | size << 3 (llog_header_types). A type
 * LevelDB does not know has a 7-byte header everywhere.
 */
extern const uint8_t llog_header_tables[LLOG_DIALECT_COUNT][256];

/* The table of a dialect (LevelDB's for any other value). */
static inline const uint8_t *llog_header_types(llog_dialect dialect) {
    return llog_header_tables[dialect < LLOG_DIALECT_COUNT ? dialect : 0];
}

/* The role of a type byte in a dialect, and its header size there. */
static inline llog_role llog_type_role(llog_dialect dialect, unsigned type) {
    return (llog_role)(llog_header_types(dialect)[type & 255] & 7);
}
static inline size_t llog_type_header_size(llog_dialect dialect,
                                           unsigned type) {
    return (size_t)(llog_header_types(dialect)[type & 255] >> 3);
}

/* CRC-32C (from 0) of each known type byte alone: a physical record's
 * checksum covers its type byte, then its payload, so it starts from here. */
extern const uint32_t llog_type_crc[LLOG_MAX_TYPE + 1];

/* A physical record's header, decoded. */
typedef struct llog_header {
    uint32_t masked_crc; /* as stored (llog_unmask_crc gives the CRC-32C) */
    size_t length;       /* payload bytes */
    unsigned type;       /* the type byte, known or not */
    size_t header_size;  /* LLOG_HEADER_SIZE; more in other dialects */
    /* Set by llog_header_region with a table, for longer headers only: */
    uint32_t log_number; /* recyclable headers: the low 32 bits */
    uint64_t synced;     /* Pebble's walSync chunks: offset synced */
} llog_header;

/*
 * The header's decoder, the only code that reads a header's fields from
 * bytes: the LLOG_HEADER_SIZE bytes at p (any alignment) into the first
 * three fields of *h. Everything else decodes through it (llog_header_decode,
 * llog_header_decode_in, llog_header_region).
 */
LLOG_HOT_INLINE void llog_header_fields(const uint8_t *p, llog_header *h) {
    h->masked_crc = llog_load32(p);
    h->length = (size_t)p[4] | (size_t)p[5] << 8;
    h->type = p[6];
}

/* ... and the longer header's fields, of a header of `size` bytes at p
 * (whole): the log number (11 and 19 bytes), the offset synced (19). */
LLOG_HOT_INLINE void llog_header_long_fields(const uint8_t *p, size_t size,
                                             llog_header *h) {
    if (size > LLOG_HEADER_SIZE)
        h->log_number = llog_load32(p + LLOG_HEADER_SIZE);
    if (size == LLOG_SYNC_HEADER_SIZE)
        h->synced = llog_load64(p + LLOG_RECYCLABLE_HEADER_SIZE);
}

/* Decodes the LLOG_HEADER_SIZE bytes at p as LevelDB's 7-byte header
 * (log_number, synced: not read). */
static inline llog_header llog_header_decode(const uint8_t *p) {
    llog_header h = {0, 0, 0, LLOG_HEADER_SIZE, 0, 0};
    llog_header_fields(p, &h);
    return h;
}

/* Decodes the header at p (at least LLOG_HEADER_SIZE of `have` bytes) in
 * the dialect of `types` (llog_header_types): its size there, and its
 * longer fields when the whole header is among the `have` bytes. */
static inline llog_header
llog_header_decode_in(const uint8_t *types, const uint8_t *p, size_t have) {
    llog_header h = llog_header_decode(p);
    h.header_size = (size_t)(types[h.type] >> 3);
    if (have >= h.header_size)
        llog_header_long_fields(p, h.header_size, &h);
    return h;
}

/* 1 when a payload of `length` bytes that begins `start` bytes into a
 * block ends within its first `end` bytes: the classifier's test of a
 * record, and the batched path's, which asks it of FULL records alone. */
static inline int llog_header_fits(size_t start, size_t length, size_t end) {
    return start + length <= end; /* length < 2^16: no overflow */
}

/* What the bytes at a position of a block are, before any checksum: the
 * reader's first decision about them, shared by every reader of headers. */
typedef enum llog_region {
    LLOG_REGION_RECORD,     /* a physical record whose payload fits */
    LLOG_REGION_ZERO,       /* type 0 and length 0: preallocated space; the
                               rest of the block is skipped */
    LLOG_REGION_TRAILER,    /* too few bytes left in a full block for a
                               header: skipped */
    LLOG_REGION_BAD_LENGTH, /* the payload runs past a full block: damage */
    LLOG_REGION_TRUNCATED   /* the header or payload runs past the end of a
                               short block: the data ends mid-record */
} llog_region;

/*
 * The classifier: what the `left` bytes at p, the rest of a block that is
 * `final` (shorter than LLOG_BLOCK_SIZE: the log ends inside it), are in
 * the dialect of `types` (llog_header_types). Fills *h when a whole header
 * is there; never reads past p + left. A payload that fits is
 * LLOG_REGION_RECORD even when type 0 has a non-zero length (the checksum
 * decides then). A block whose rest is too short for the header its type
 * needs ends there (LLOG_REGION_TRAILER), as RocksDB's reader reads on at
 * the next block.
 *
 * types NULL stands for LevelDB's table, with h->header_size left as the
 * caller set it (LLOG_HEADER_SIZE): LevelDB's reader, the hot path, then
 * stores only the three fields it reads.
 */
LLOG_HOT_INLINE llog_region llog_header_region(const uint8_t *types,
                                               const uint8_t *p, size_t left,
                                               int final, llog_header *h) {
    if (left < LLOG_HEADER_SIZE)
        return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_TRAILER;
    llog_header_fields(p, h);
    size_t size = LLOG_HEADER_SIZE;
    if (types != NULL) {
        size = h->header_size = (size_t)(types[h->type] >> 3);
        if (size > left)
            return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_TRAILER;
        llog_header_long_fields(p, size, h);
    }
    if (!llog_header_fits(size, h->length, left))
        return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_BAD_LENGTH;
    if (h->type == LLOG_ZERO && h->length == 0)
        return LLOG_REGION_ZERO;
    return LLOG_REGION_RECORD;
}

/* 1 when the header at p, at the start of a full block in LevelDB's
 * dialect, is a MIDDLE fragment whose payload fills the block: a block the
 * reader may take in place. Asked of the classifier, so that the in-place
 * path and every other reader of headers judge a block by one rule. */
static inline int llog_header_whole_middle(const uint8_t *p) {
    llog_header h;
    h.header_size = LLOG_HEADER_SIZE;
    return llog_header_region(NULL, p, LLOG_BLOCK_SIZE, 0, &h) ==
               LLOG_REGION_RECORD &&
           h.type == LLOG_MIDDLE && h.length == LLOG_MAX_FRAGMENT;
}

/* 1 when the payload's CRC-32C, from the type byte on, is the one stored in
 * a 7-byte header (h->length bytes at payload). Inline: the hot path. */
static inline int llog_checksum_ok(const llog_header *h,
                                   const uint8_t *payload) {
    uint8_t type = (uint8_t)h->type;
    uint32_t crc = h->type <= LLOG_MAX_TYPE ? llog_type_crc[h->type]
                                            : llog_crc32c_extend(0, &type, 1);
    return llog_crc32c_extend(crc, payload, h->length) ==
           llog_unmask_crc(h->masked_crc);
}

/* 1 when the checksum stored in the header at p (decoded in *h, of any
 * size) covers its bytes from the type byte on, then the payload. */
int llog_checksum_ok_dialect(const uint8_t *p, const llog_header *h,
                             const uint8_t *payload);

/* A torn tail's cut physical record whose whole header (h, `in` bytes into
 * its block) no writer of the dialect writes: a type that is no fragment,
 * or a length that cannot fit its block. No crash leaves that: the file is
 * likely no log. The reader (its warning) and the scan (the region's
 * reason) judge a tail by this one rule. */
static inline int llog_torn_implausible(llog_dialect dialect,
                                        const llog_header *h, size_t in) {
    unsigned role = llog_type_role(dialect, h->type);
    return role < LLOG_ROLE_FULL || role > LLOG_ROLE_LAST ||
           h->header_size + h->length > LLOG_BLOCK_SIZE - in;
}

/*
 * Pebble's end of a closed log (docs/rocksdb.md, "Pebble's trailer"): a
 * longer header (h, whole, from llog_header_region with Pebble's table),
 * at a record start, whose log number is the log's plus one (low 32 bits),
 * as Pebble's Close writes it. When the log's number is not known
 * (has_log_number 0: nothing before carried it, none was given), it is the
 * exact header Close writes: type 5, length 0, a stored checksum of 0; its
 * number is then the log's plus one. Every reader of headers (the reader,
 * the append point, the scan, detection) asks this.
 */
static inline int llog_header_pebble_trailer(llog_dialect dialect,
                                             const llog_header *h,
                                             int has_log_number,
                                             uint64_t log_number) {
    if (dialect != LLOG_DIALECT_PEBBLE || h->header_size == LLOG_HEADER_SIZE)
        return 0;
    if (has_log_number)
        return h->log_number == (uint32_t)(log_number + 1);
    return h->header_size == LLOG_RECYCLABLE_HEADER_SIZE &&
           h->type == LLOG_PEBBLE_TRAILER_TYPE && h->length == 0 &&
           h->masked_crc == 0;
}

/*
 * Learns the log's number from a header (h, whole) when it is not known
 * yet (*has_log_number 0) and h is a longer one: the number it carries, or
 * one less for Pebble's trailer (the next log's number). Returns 1 when it
 * learnt it. The reader, the region walker and detection learn it so.
 */
static inline int llog_header_learn_log_number(llog_dialect dialect,
                                               const llog_header *h,
                                               int *has_log_number,
                                               uint64_t *log_number) {
    if (*has_log_number || h->header_size == LLOG_HEADER_SIZE)
        return 0;
    *log_number = llog_header_pebble_trailer(dialect, h, 0, 0)
                      ? (uint32_t)(h->log_number - 1)
                      : h->log_number;
    *has_log_number = 1;
    return 1;
}

/*
 * RocksDB's compression record (type LLOG_RDB_SET_COMPRESSION, 7-byte
 * header): its payload is the 4-byte compression type of every data record
 * of the log. Returns that type (LLOG_RDB_ZSTD, or LLOG_RDB_NO_COMPRESSION,
 * or another RocksDB refuses), or -1 when the payload (n bytes at p) is no
 * such record's.
 */
static inline int64_t llog_compression_record_type(const uint8_t *p,
                                                   size_t n) {
    return n == 4 ? (int64_t)llog_load32(p) : -1;
}

/* An entry of RocksDB's timestamp-size records (LLOG_RDB_TIMESTAMP_SIZE):
 * a column family and the size of its user-defined timestamps, in
 * LLOG_RDB_TIMESTAMP_ENTRY bytes. */
#define LLOG_RDB_TIMESTAMP_ENTRY 6
typedef struct llog_timestamp_entry {
    uint32_t family;
    unsigned size;
} llog_timestamp_entry;

/* Decodes the entry at p (LLOG_RDB_TIMESTAMP_ENTRY bytes, any alignment). */
static inline llog_timestamp_entry llog_timestamp_entry_at(const uint8_t *p) {
    llog_timestamp_entry e = {llog_load32(p),
                              (unsigned)p[4] | (unsigned)p[5] << 8};
    return e;
}

/* 1 when the log's first bytes (len of them at p) are a whole, intact
 * compression record saying its data records are zstd frames (the only
 * compression RocksDB's WAL writes). */
int llog_header_starts_compressed(const uint8_t *p, size_t len);

#endif /* LLOG_LOG_HEADER_H */
