/*
 * log_writer.h - splitting user records into physical records.
 *
 * The writer does no I/O and allocates nothing: it tells the caller which
 * bytes to append, either a whole encoded record into a caller buffer, or one
 * fragment at a time (a small prefix to copy, then a slice of the caller's
 * own payload), so large payloads can go to the OS without being copied.
 */
#ifndef LLOG_LOG_WRITER_H
#define LLOG_LOG_WRITER_H

#include "log_header.h"

typedef struct llog_writer {
    uint64_t offset;     /* log length: where the next byte goes */
    size_t header_size;  /* LLOG_HEADER_SIZE, or a longer header's */
    uint32_t log_number; /* recyclable headers: its low 32 bits */
    uint64_t synced;     /* walSync headers: the offset synced before */
    size_t chunk;        /* 0, or a record is cut in chunks this long */
    size_t chunk_left;   /* of the current chunk */
    int ahead; /* llog_writer_fragment's record: checksummed fetching ahead */
} llog_writer;

/* Records at least this long are checksummed by llog_crc32c_extend_ahead:
 * longer than most CPUs' L2 cache, they are seldom all in it, and fetching
 * ahead reads them from memory much faster (docs/performance.md, "Large
 * records"; bench/README.md, "Writing to a path"). */
#define LLOG_WRITER_AHEAD ((size_t)256 << 10)

/* Starts a writer that appends to a log of log_length bytes (0: a new log),
 * with LevelDB's headers. */
void llog_writer_init(llog_writer *w, uint64_t log_length);

/*
 * Switches the writer to the headers of other dialects (docs/rocksdb.md):
 * LLOG_RECYCLABLE_HEADER_SIZE writes types 5-8 carrying log_number (RocksDB
 * with recycling, Pebble), LLOG_SYNC_HEADER_SIZE Pebble's walSync types
 * 9-12, which also carry w->synced; LLOG_HEADER_SIZE LevelDB's types 1-4.
 * A block's tail shorter than the header is zero-filled.
 */
void llog_writer_set_header(llog_writer *w, size_t header_size,
                            uint64_t log_number);

/*
 * RocksDB's compressed WALs: a record (a zstd frame) is cut into chunks of
 * `chunk` bytes (LLOG_BLOCK_SIZE minus the header size), then each chunk
 * into fragments at block ends, so a fragment may end before its block
 * does. RocksDB 7 reads compressed records only so cut. 0: no chunks.
 */
void llog_writer_set_chunk(llog_writer *w, size_t chunk);

/*
 * What to append for the next fragment of a record: `prefix` (zero trailer
 * filling the old block, if any, then the header) followed by the
 * first `payload_len` bytes of the record data not yet written.
 */
typedef struct llog_fragment {
    uint8_t prefix[LLOG_MAX_HEADER_SIZE - 1 + LLOG_MAX_HEADER_SIZE];
    size_t prefix_len;
    size_t payload_len;
    uint64_t header_offset; /* log offset of this fragment's header */
} llog_fragment;

/*
 * Plans the next fragment of a record whose unwritten data is
 * data[0..remaining), `first` being 1 for the record's first fragment, and
 * advances the writer past it. Call until remaining reaches 0, and at least
 * once (an empty record is one empty FULL fragment). Reads data, never
 * writes it. A record of LLOG_WRITER_AHEAD bytes or more is checksummed by
 * llog_crc32c_extend_ahead (llog_writer_add, for records copied whole into
 * a buffer, never does so).
 */
void llog_writer_fragment(llog_writer *w, const uint8_t *data,
                          size_t remaining, int first, llog_fragment *out);

/* The log offset where the next fragment's payload starts: after the zero
 * fill of a block's tail too short for a header, and the header. */
uint64_t llog_writer_payload_offset(const llog_writer *w);

/*
 * Bytes that appending a record of len bytes at the writer's current offset
 * adds to the log (padding, headers, payload). Does not change the writer.
 */
uint64_t llog_writer_encoded_size(const llog_writer *w, size_t len);

/*
 * Encodes a whole record into dst, which must hold
 * llog_writer_encoded_size(w, len) bytes; never writes past them. Returns the
 * number of bytes written and stores the record's offset (its first header)
 * in *record_offset when that is not NULL.
 */
size_t llog_writer_add(llog_writer *w, const uint8_t *data, size_t len,
                       uint8_t *dst, uint64_t *record_offset);

/* Most records llog_writer_add_run takes in one call. */
#define LLOG_WRITER_RUN 48

/*
 * The fast path for many short records: encodes the leading records of
 * data[0..n) (len[i] bytes each) that lie whole as FULL records in their
 * block, LevelDB's headers only, into dst, which holds room bytes; their
 * checksums are computed side by side while the payloads are copied. Takes
 * at most LLOG_WRITER_RUN, stops at the first that does not fit in room.
 * Returns how many it took (0 for another dialect's headers or chunked
 * records: use llog_writer_add) and the bytes written in *written, exactly
 * those llog_writer_add would write for them.
 */
size_t llog_writer_add_run(llog_writer *w, const uint8_t *const *data,
                           const size_t *len, size_t n, uint8_t *dst,
                           size_t room, size_t *written);

/*
 * RocksDB's metadata records (docs/rocksdb.md): `type` is one of
 * LLOG_RDB_*, with its own header size, and the record is never split: the
 * rest of the block is zero-filled first when it does not fit there.
 * llog_writer_meta_size is what it adds to the log (0 when the payload
 * cannot fit a block); llog_writer_meta writes that many bytes to dst.
 */
uint64_t llog_writer_meta_size(const llog_writer *w, unsigned type,
                               size_t len);
size_t llog_writer_meta(llog_writer *w, unsigned type, const uint8_t *data,
                        size_t len, uint8_t *dst);

/*
 * Pebble's end of a log: an empty recyclable FULL header with checksum 0
 * and the next log number. Writes at most LLOG_MAX_HEADER_SIZE - 1 +
 * LLOG_RECYCLABLE_HEADER_SIZE bytes (padding first) to dst; returns them.
 */
size_t llog_writer_pebble_trailer(llog_writer *w, uint8_t *dst);

/* RocksDB's compression record saying every data record of the log is a
 * zstd frame (llog_header_starts_compressed reads it back): the log's first
 * record, LLOG_COMPRESSION_RECORD_SIZE bytes to dst; returns them. */
#define LLOG_COMPRESSION_RECORD_SIZE (LLOG_HEADER_SIZE + 4)
size_t llog_writer_compression_record(llog_writer *w, uint8_t *dst);

/*
 * A resumed log whose damage stays (llog_resume_result.fresh_block) gets
 * its next record at a block boundary, never sharing a block with the
 * damage: llog_writer_fresh_block is the zero fill to write first (0 at a
 * boundary), and llog_writer_padded says it was written.
 */
size_t llog_writer_fresh_block(const llog_writer *w);
void llog_writer_padded(llog_writer *w, size_t n);

#endif /* LLOG_LOG_WRITER_H */
