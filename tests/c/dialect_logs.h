/*
 * dialect_logs.h - what the C unit tests of RocksDB's and Pebble's dialects
 * (docs/rocksdb.md) share: logs built byte by byte with headers of 7, 11 and
 * 19 bytes (the reference CRC, ref_crc32c.h), Pebble's trailer, records
 * appended through the core writer, reading a log in a dialect and recovery
 * mode, and a "compression" for the decode callback.
 *
 * The suites: tests/c/test_dialects_reading.c (whole logs in every recovery
 * mode, Pebble's chunks and trailer, ranges), test_dialects_metadata.c
 * (metadata and compressed records), test_dialects_writer.c (the writer's
 * headers, chunks, metadata and trailer; log_resume in every dialect).
 */
#ifndef LLOG_TESTS_DIALECT_LOGS_H
#define LLOG_TESTS_DIALECT_LOGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness.h"
#include "log_writer.h"
#include "reading.h"

#define RB LLOG_RECYCLABLE_HEADER_SIZE
#define SB LLOG_SYNC_HEADER_SIZE

/* ---- encoding (docs/rocksdb.md, "Headers") ------------------------------ */

/* Appends a physical record with a header of hs bytes (7, 11 or 19): the
 * log number's low 32 bits from byte 7, the synced offset from byte 11;
 * the CRC covers the type byte, the rest of the header, the payload.
 * Returns its offset. */
size_t put_d(buf *b, unsigned type, const void *payload, size_t n, size_t hs,
             uint32_t log_number, uint64_t synced);

/* A legacy (7-byte) and a recyclable (11-byte) record. */
size_t put7(buf *b, unsigned type, const void *p, size_t n);
size_t put11(buf *b, unsigned type, const void *p, size_t n,
             uint32_t log_number);

void put_u32(uint8_t *p, uint32_t v); /* little-endian */

/* Pebble's trailer: an empty recyclable FULL, checksum 0, number + 1. */
size_t put_trailer(buf *b, uint32_t next);

/* Appends a record through llog_writer_add; returns its offset. */
uint64_t wadd(buf *log, llog_writer *w, const void *data, size_t len);

/* ---- reading ------------------------------------------------------------ */

/* The whole log, checksums verified, in a dialect and recovery mode. */
read_opts opts(llog_dialect d, llog_recovery mode);

/* What the test is at, printed with a failure of expect_d. */
extern char dialect_ctx[160];
#define CTX(...) snprintf(dialect_ctx, sizeof dialect_ctx, __VA_ARGS__)

/* Reads log with o, seekable and sequential, and checks the events. */
read_info expect_d(const char *what, const buf *log, read_opts o,
                   const tevs *want);

/* The end of the range or of a closed log: nothing more, ever. */
void want_done(tevs *l);

const char *mode_name(llog_recovery m);

/* ---- compressed records ------------------------------------------------- */

/* The tests' "compression": every byte XORed with 0x5A, fragment by
 * fragment; a fragment whose first byte decodes to '!' fails. Counts the
 * calls and checks first/last against the record's fragments. */
typedef struct xor_ctx {
    uint8_t out[B];
    size_t calls, firsts, lasts;
} xor_ctx;

const uint8_t *xor_decode(void *ctx, const uint8_t *in, size_t n, int first,
                          int last, size_t *out_len);
void xor_bytes(uint8_t *dst, const void *src, size_t n);

#endif /* LLOG_TESTS_DIALECT_LOGS_H */
