/*
 * log_format.h - the LevelDB log format in one page.
 *
 * A log is a sequence of 32768-byte blocks; only the last block may be short.
 * A block holds physical records and possibly a trailer of fewer than 7 zero
 * bytes. A physical record is a 7-byte header followed by its payload:
 *
 *   offset  size  field
 *   ------  ----  ---------------------------------------------------------
 *        0     4  checksum: little-endian, masked CRC-32C of the type byte
 *                 followed by the payload (the length is not covered)
 *        4     2  length: little-endian payload length
 *        6     1  type: 0 ZERO (preallocated space), 1 FULL, 2 FIRST,
 *                 3 MIDDLE, 4 LAST
 *        7   len  payload
 *
 * A user record is one FULL physical record, or FIRST, MIDDLE..., LAST
 * fragments, each as large as the space left in its block allows. A record
 * never starts in the last 6 bytes of a block: the writer zero-fills them.
 *
 * Where things live:
 *   crc32c.h      CRC-32C (hardware and portable) and the mask
 *   log_writer.h  splitting records into physical records (no I/O)
 *   log_reader.h  LevelDB's reader as a state machine over caller buffers
 *   log_tail.h    where an append resumes (what a crash left at the end)
 * The CPython binding lives in ../py/: nothing here knows of Python.
 *
 * Every exported symbol starts with llog_ / LLOG_.
 */
#ifndef LLOG_LOG_FORMAT_H
#define LLOG_LOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "crc32c.h"

#define LLOG_BLOCK_SIZE 32768
#define LLOG_HEADER_SIZE 7

/* Largest payload of one physical record: a whole block minus its header. */
#define LLOG_MAX_FRAGMENT (LLOG_BLOCK_SIZE - LLOG_HEADER_SIZE)

/*
 * The type bytes, one list for the enum and the names (the binding exports
 * the names, and the CLI and the stubs take them from there).
 * X(enum name, value, name)
 */
#define LLOG_TYPE_LIST(X)                                                     \
    X(LLOG_ZERO, 0, "ZERO")                                                   \
    X(LLOG_FULL, 1, "FULL")                                                   \
    X(LLOG_FIRST, 2, "FIRST")                                                 \
    X(LLOG_MIDDLE, 3, "MIDDLE")                                               \
    X(LLOG_LAST, 4, "LAST")

/* The X-macro expansions are not statements: */
// clang-format off
typedef enum llog_type {
#define LLOG_TYPE_ENUM(name, value, text) name = value,
    LLOG_TYPE_LIST(LLOG_TYPE_ENUM)
#undef LLOG_TYPE_ENUM
    LLOG_MAX_TYPE = LLOG_LAST
} llog_type;
// clang-format on

/* Name of a known type byte ("FULL"), or NULL for any other byte. */
const char *llog_type_name(unsigned type);

/*
 * The reader's recovery modes (docs/api.md), one list for the enum and the
 * names users pass. X(enum name, name)
 */
#define LLOG_RECOVERY_LIST(X)                                                 \
    X(LLOG_RECOVER_SKIP, "skip")                                              \
    X(LLOG_RECOVER_TOLERATE_TAIL, "tolerate_tail")                            \
    X(LLOG_RECOVER_POINT_IN_TIME, "point_in_time")                            \
    X(LLOG_RECOVER_ABSOLUTE, "absolute")

// clang-format off
typedef enum llog_recovery {
#define LLOG_RECOVERY_ENUM(name, text) name,
    LLOG_RECOVERY_LIST(LLOG_RECOVERY_ENUM)
#undef LLOG_RECOVERY_ENUM
    LLOG_RECOVERY_COUNT
} llog_recovery;
// clang-format on

/* Name of a recovery mode ("skip"), or NULL when out of range. */
const char *llog_recovery_name(unsigned mode);

/*
 * The dialects: LevelDB's format and the two that extend it
 * (docs/rocksdb.md). X(enum name, name)
 */
#define LLOG_DIALECT_LIST(X)                                                  \
    X(LLOG_DIALECT_LEVELDB, "leveldb")                                        \
    X(LLOG_DIALECT_ROCKSDB, "rocksdb")                                        \
    X(LLOG_DIALECT_PEBBLE, "pebble")

// clang-format off
typedef enum llog_dialect {
#define LLOG_DIALECT_ENUM(name, text) name,
    LLOG_DIALECT_LIST(LLOG_DIALECT_ENUM)
#undef LLOG_DIALECT_ENUM
    LLOG_DIALECT_COUNT
} llog_dialect;
// clang-format on

/* Name of a dialect ("rocksdb"), or NULL when out of range. */
const char *llog_dialect_name(unsigned dialect);

/* Header sizes of the dialects' physical records: LevelDB's, the
 * recyclable one (+ the low 32 bits of the log number) and Pebble's walSync
 * chunk (+ the 64-bit offset synced before it was written). */
#define LLOG_RECYCLABLE_HEADER_SIZE 11
#define LLOG_SYNC_HEADER_SIZE 19
#define LLOG_MAX_HEADER_SIZE LLOG_SYNC_HEADER_SIZE

/* Pebble's end of a closed log: a recyclable header of the next log number
 * (its low 32 bits, as the header holds them) where a record would start.
 * The reader ends the log there; mode "a" cuts it. */
static inline int llog_pebble_trailer(llog_dialect dialect, uint32_t number,
                                      uint64_t log_number) {
    return dialect == LLOG_DIALECT_PEBBLE &&
           number == (uint32_t)(log_number + 1);
}

/* RocksDB's metadata types, and the bit that lets a reader skip a type it
 * does not know. */
#define LLOG_RDB_SET_COMPRESSION 9
#define LLOG_RDB_TIMESTAMP_SIZE 10
#define LLOG_RDB_TIMESTAMP_SIZE_RECYCLABLE 11
#define LLOG_RDB_PREDECESSOR 130
#define LLOG_RDB_PREDECESSOR_RECYCLABLE 131
#define LLOG_RDB_SAFE_IGNORE 0x80

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

/* The role of a type byte in a dialect, and its header size there (7, 11
 * or 19). A type LevelDB does not know has a 7-byte header everywhere. */
llog_role llog_type_role(llog_dialect dialect, unsigned type);
size_t llog_type_header_size(llog_dialect dialect, unsigned type);

/* CRC-32C (from 0) of each known type byte alone: a physical record's
 * checksum covers its type byte, then its payload, so it starts from here. */
extern const uint32_t llog_type_crc[LLOG_MAX_TYPE + 1];

/*
 * Status codes of the whole library, one list for the enum and the strings.
 * X(name, text)
 */
#define LLOG_STATUS_LIST(X)                                                   \
    X(LLOG_OK, "ok")                                                          \
    X(LLOG_ERR_NOMEM, "out of memory")                                        \
    X(LLOG_ERR_ARG, "invalid argument")                                       \
    X(LLOG_ERR_TOO_LARGE, "record too large for this platform")

typedef enum llog_status {
#define LLOG_STATUS_ENUM(name, text) name,
    LLOG_STATUS_LIST(LLOG_STATUS_ENUM)
#undef LLOG_STATUS_ENUM
} llog_status;

/* Returns a static description of a status code; never NULL. */
const char *llog_status_text(llog_status status);

/* For the few helpers of a hot path that two callers share: inlined into
 * both, so that neither pays for a call (the instruction budget,
 * bench/callgrind, shows it). */
#if defined(__GNUC__) || defined(__clang__)
#define LLOG_HOT_INLINE static inline __attribute__((always_inline))
#else
#define LLOG_HOT_INLINE static inline
#endif

/* Little-endian loads and stores: no alignment assumptions and no host
 * byte order dependency. Loads are one move on a little-endian host (gcc
 * does not always fuse the byte loads), byte by byte elsewhere. */
static inline uint32_t llog_load32(const uint8_t *p) {
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || \
    defined(_M_X64) || defined(_M_ARM64)
    uint32_t v;
    memcpy(&v, p, 4); /* well defined at any alignment */
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
#endif
}

static inline void llog_store32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* A physical record's header, decoded (llog_header_decode, llog_region_at,
 * llog_region_at_dialect): what the reader, the scan and the writer's
 * checks of a log's tail read of it. */
typedef struct llog_header {
    uint32_t masked_crc; /* as stored (llog_unmask_crc gives the CRC-32C) */
    size_t length;       /* payload bytes */
    unsigned type;       /* the type byte, known or not */
    size_t header_size;  /* LLOG_HEADER_SIZE; more in other dialects */
    /* Set only by llog_region_at_dialect, and only for longer headers: */
    uint32_t log_number; /* recyclable headers: the low 32 bits */
    uint64_t synced;     /* Pebble's walSync chunks: offset synced */
} llog_header;

/* Decodes the LLOG_HEADER_SIZE bytes at p (any alignment). */
static inline llog_header llog_header_decode(const uint8_t *p) {
    llog_header h;
    h.masked_crc = llog_load32(p);
    h.length = (size_t)p[4] | (size_t)p[5] << 8;
    h.type = p[6];
    h.header_size = LLOG_HEADER_SIZE; /* log_number, synced: not read */
    return h;
}

/*
 * What the bytes at a position of a block are, before any checksum: the
 * reader's first decision about them (docs/format.md, "Reading"), shared by
 * the reader and by the physical-record scan.
 */
typedef enum llog_region {
    LLOG_REGION_RECORD,     /* a physical record whose payload fits */
    LLOG_REGION_ZERO,       /* type 0 and length 0: preallocated space; the
                               rest of the block is skipped */
    LLOG_REGION_TRAILER,    /* under LLOG_HEADER_SIZE bytes left in a full
                               block: skipped */
    LLOG_REGION_BAD_LENGTH, /* the payload runs past a full block: damage */
    LLOG_REGION_TRUNCATED   /* the header or payload runs past the end of a
                               short block: the data ends mid-record */
} llog_region;

/*
 * Classifies the `left` bytes at p, the rest of a block that is `final`
 * (shorter than LLOG_BLOCK_SIZE: the log ends inside it). Fills *h when a
 * whole header is there (left >= LLOG_HEADER_SIZE), but for header_size,
 * log_number and synced, left as they were; never reads past
 * p + left. A payload that fits is LLOG_REGION_RECORD even when type 0 has
 * a non-zero length (the checksum decides then).
 */
static inline llog_region llog_region_at(const uint8_t *p, size_t left,
                                         int final, llog_header *h) {
    if (left < LLOG_HEADER_SIZE)
        return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_TRAILER;
    /* Field by field: a whole-struct copy would store the unset ones too
     * (LevelDB's reader, the one caller, sets header_size once). */
    h->masked_crc = llog_load32(p);
    h->length = (size_t)p[4] | (size_t)p[5] << 8;
    h->type = p[6];
    if (LLOG_HEADER_SIZE + h->length > left)
        return final ? LLOG_REGION_TRUNCATED : LLOG_REGION_BAD_LENGTH;
    if (h->type == LLOG_ZERO && h->length == 0)
        return LLOG_REGION_ZERO;
    return LLOG_REGION_RECORD;
}

/*
 * llog_region_at for any dialect: the header is 7, 11 or 19 bytes by type
 * (llog_type_header_size), and h->log_number and h->synced are filled from
 * the longer ones. A block whose rest is too short for the header its type
 * needs ends there (LLOG_REGION_TRAILER), as RocksDB's reader reads on at
 * the next block. LLOG_DIALECT_LEVELDB gives llog_region_at's answers.
 */
llog_region llog_region_at_dialect(llog_dialect dialect, const uint8_t *p,
                                   size_t left, int final, llog_header *h);

/* 1 when the checksum stored in the header at p (decoded in *h, of any
 * size) covers its bytes from the type byte on, then the payload. */
int llog_checksum_ok_dialect(const uint8_t *p, const llog_header *h,
                             const uint8_t *payload);

/* The reasons for dropping a region, whatever reads it (the reader, the
 * scan): LevelDB's texts. */
#define LLOG_REASON_BAD_LENGTH "bad record length"
#define LLOG_REASON_CHECKSUM "checksum mismatch"

/* A torn tail's cut physical record whose whole header (h, `in` bytes into
 * its block) no writer of the dialect writes: a type that is no fragment,
 * or a length that cannot fit its block. No crash leaves that: the file is
 * likely no log. The reader (its warning) and the scan (the region's
 * reason, LLOG_REASON_IMPLAUSIBLE_TAIL) judge a tail by this one rule. */
static inline int llog_torn_implausible(llog_dialect dialect,
                                        const llog_header *h, size_t in) {
    unsigned role = llog_type_role(dialect, h->type);
    return role < LLOG_ROLE_FULL || role > LLOG_ROLE_LAST ||
           h->header_size + h->length > LLOG_BLOCK_SIZE - in;
}
#define LLOG_REASON_IMPLAUSIBLE_TAIL                                          \
    "a torn tail no writer leaves (not a log?)"

/* 1 when the payload's CRC-32C, from the type byte on, is the one stored in
 * the header (h->length bytes at payload). Inline: the reader's hot path. */
static inline int llog_checksum_ok(const llog_header *h,
                                   const uint8_t *payload) {
    uint8_t type = (uint8_t)h->type;
    uint32_t crc = h->type <= LLOG_MAX_TYPE ? llog_type_crc[h->type]
                                            : llog_crc32c_extend(0, &type, 1);
    return llog_crc32c_extend(crc, payload, h->length) ==
           llog_unmask_crc(h->masked_crc);
}

#endif /* LLOG_LOG_FORMAT_H */
