/*
 * log_detect.h - which dialect wrote a log, told from its first bytes
 * (detect_dialect, docs/api.md).
 *
 * The three share the 7-byte header of types 1-4; RocksDB and Pebble both
 * add recyclable types 5-8; each has types of its own (log_header.h's
 * tables). The physical records are walked from offset 0, each type tried
 * with the header size each dialect gives it, while one checks out:
 * - a type only Pebble writes (walSync, 9-12) or Pebble's trailer: Pebble;
 * - a type only RocksDB writes (its metadata, the compression record only
 *   as the log's first): RocksDB;
 * - recyclable records and nothing more telling: RocksDB, whose reader
 *   reads Pebble's such logs too (LevelDB never writes them);
 * - LevelDB's types only: LevelDB, whose reader reads every dialect's
 *   MANIFESTs;
 * - signs of both RocksDB and Pebble, or no intact record: unknown.
 */
#ifndef LLOG_LOG_DETECT_H
#define LLOG_LOG_DETECT_H

#include "log_header.h"

typedef struct llog_detection {
    llog_dialect dialect; /* LLOG_DIALECT_COUNT: unknown */
    const char *reason;   /* why, in a few words (static text) */
} llog_detection;

/* The dialect of the log whose first len bytes are at p (only the first
 * block is looked at), whose recyclable records carry log_number when
 * has_log_number (else the first one's number is taken). */
llog_detection llog_detect_dialect(const uint8_t *p, size_t len,
                                   int has_log_number, uint64_t log_number);

#endif /* LLOG_LOG_DETECT_H */
