/*
 * log_format.h - the LevelDB log format in one page: its constants and
 * the lists of names (types, recovery modes, dialects, statuses).
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
 *   log_header.h  reading a header: decoder, dialect tables, classifier,
 *                 checksums, Pebble's trailer, RocksDB's compression record
 *   log_regions.h the regions of a block: records, trailer, zero fill,
 *                 garbage, torn tail, another log's records, Pebble's end
 *   log_detect.h  which dialect wrote a log, from its first bytes
 *   log_writer.h  splitting records into physical records (no I/O)
 *   log_reader.h  LevelDB's reader as a state machine over caller buffers
 *   log_resume.h  where an append resumes (what a crash left at the end)
 *   log_tail.h    where a growing log's last complete record ends
 *   llog_util.h  loads, stores, the hot-inline attribute (internal)
 * The CPython binding lives in ../py/: nothing here knows of Python.
 *
 * Every exported symbol starts with llog_ / LLOG_.
 */
#ifndef LLOG_LOG_FORMAT_H
#define LLOG_LOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>

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

/* The fragments' types with the longer headers: a recyclable fragment's
 * type is LevelDB's plus LLOG_RECYCLABLE_FULL - LLOG_FULL (RocksDB and
 * Pebble), a walSync chunk's plus LLOG_SYNC_FULL - LLOG_FULL (Pebble). */
#define LLOG_RECYCLABLE_FULL 5
#define LLOG_RECYCLABLE_LAST 8
#define LLOG_SYNC_FULL 9

/* Pebble's end of a closed log is an empty record of this type (a
 * recyclable FULL), llog_header_pebble_trailer. */
#define LLOG_PEBBLE_TRAILER_TYPE LLOG_RECYCLABLE_FULL

/* RocksDB's metadata types, and the bit that lets a reader skip a type it
 * does not know. */
#define LLOG_RDB_SET_COMPRESSION 9
#define LLOG_RDB_TIMESTAMP_SIZE 10
#define LLOG_RDB_TIMESTAMP_SIZE_RECYCLABLE 11
#define LLOG_RDB_PREDECESSOR 130
#define LLOG_RDB_PREDECESSOR_RECYCLABLE 131
#define LLOG_RDB_SAFE_IGNORE 0x80

/* The compression record's types: none, and zstd (the only compression
 * RocksDB's WAL writes). */
#define LLOG_RDB_NO_COMPRESSION 0
#define LLOG_RDB_ZSTD 7

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

/* The reasons for dropping a region, whatever reads it (the reader, the
 * scan): LevelDB's texts. */
#define LLOG_REASON_BAD_LENGTH "bad record length"
#define LLOG_REASON_CHECKSUM "checksum mismatch"

/* ... and for a torn tail no writer leaves (llog_torn_implausible). */
#define LLOG_REASON_IMPLAUSIBLE_TAIL                                          \
    "a torn tail no writer leaves (not a log?)"

#endif /* LLOG_LOG_FORMAT_H */
