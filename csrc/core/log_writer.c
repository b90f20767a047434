/*
 * log_writer.c - LevelDB's record splitting (db/log_writer.cc), with no I/O,
 * and the longer headers and metadata records of RocksDB's and Pebble's
 * writers (docs/rocksdb.md).
 */
#include "log_writer.h"

#include <assert.h>
#include <string.h>

#include "crc32c.h"

void llog_writer_init(llog_writer *w, uint64_t log_length) {
    *w = (llog_writer){.offset = log_length, .header_size = LLOG_HEADER_SIZE};
}

void llog_writer_set_header(llog_writer *w, size_t header_size,
                            uint64_t log_number) {
    w->header_size = header_size;
    w->log_number = (uint32_t)log_number;
}

void llog_writer_set_chunk(llog_writer *w, size_t chunk) { w->chunk = chunk; }

/* The payload bytes of the next fragment: what is left of the record, of
 * the block past the header, and of the chunk (chunk_left: updated). */
LLOG_HOT_INLINE size_t fragment_length(size_t chunk, size_t *chunk_left,
                                       int first, uint64_t remaining,
                                       size_t avail) {
    size_t n = remaining < avail ? (size_t)remaining : avail;
    if (chunk == 0)
        return n;
    if (first || *chunk_left == 0)
        *chunk_left = chunk;
    n = n < *chunk_left ? n : *chunk_left;
    *chunk_left -= n;
    return n;
}

/* Writes a header of w->header_size bytes at h, for `type` (types 1-4: the
 * writer's header decides the byte) over n payload bytes at data. */
LLOG_HOT_INLINE void put_header(const llog_writer *w, uint8_t *h, size_t hs,
                                unsigned type, const uint8_t *data, size_t n,
                                int ahead) {
    h[4] = (uint8_t)(n & 0xff);
    h[5] = (uint8_t)(n >> 8);
    h[6] = (uint8_t)type;
    uint32_t crc;
    if (hs == LLOG_HEADER_SIZE && type <= LLOG_MAX_TYPE) {
        crc = llog_type_crc[type];
    } else {
        if (hs > LLOG_HEADER_SIZE)
            llog_store32(h + LLOG_HEADER_SIZE, w->log_number);
        if (hs == LLOG_SYNC_HEADER_SIZE) {
            llog_store32(h + 11, (uint32_t)w->synced);
            llog_store32(h + 15, (uint32_t)(w->synced >> 32));
        }
        crc = llog_crc32c_extend(0, h + 6, hs - 6);
    }
    crc = ahead ? llog_crc32c_extend_ahead(crc, data, n)
                : llog_crc32c_extend(crc, data, n);
    llog_store32(h, llog_mask_crc(crc));
}

/* Bytes left in the current block. */
static size_t block_left(uint64_t offset) {
    return LLOG_BLOCK_SIZE - (size_t)(offset % LLOG_BLOCK_SIZE);
}

/* llog_writer_fragment, checksumming the payload fetching ahead or not. */
LLOG_HOT_INLINE void fragment(llog_writer *w, const uint8_t *data,
                              size_t remaining, int first, int ahead,
                              llog_fragment *out) {
    size_t pad = 0, hs = w->header_size;
    size_t left = block_left(w->offset);
    if (left < hs) {
        /* No header fits: zero-fill the trailer and move to the next block. */
        pad = left;
        memset(out->prefix, 0, pad);
        left = LLOG_BLOCK_SIZE;
    }
    size_t n =
        fragment_length(w->chunk, &w->chunk_left, first, remaining, left - hs);
    int last = (n == remaining);
    unsigned type = first ? (last ? LLOG_FULL : LLOG_FIRST)
                          : (last ? LLOG_LAST : LLOG_MIDDLE);
    type += hs == LLOG_HEADER_SIZE        ? 0
            : hs == LLOG_SYNC_HEADER_SIZE ? LLOG_SYNC_FULL - LLOG_FULL
                                          : LLOG_RECYCLABLE_FULL - LLOG_FULL;
    put_header(w, out->prefix + pad, hs, type, data, n, ahead);

    out->prefix_len = pad + hs;
    out->payload_len = n;
    out->header_offset = w->offset + pad;
    w->offset += pad + hs + n;
    /* A fragment never crosses a block: the next one starts in this block or
     * exactly at the next boundary. */
    assert(w->offset - out->header_offset <= LLOG_BLOCK_SIZE);
}

void llog_writer_fragment(llog_writer *w, const uint8_t *data,
                          size_t remaining, int first, llog_fragment *out) {
    if (first)
        w->ahead = remaining >= LLOG_WRITER_AHEAD;
    fragment(w, data, remaining, first, w->ahead, out);
}

uint64_t llog_writer_payload_offset(const llog_writer *w) {
    size_t left = block_left(w->offset), hs = w->header_size;
    return w->offset + (left < hs ? left : 0) + hs;
}

uint64_t llog_writer_encoded_size(const llog_writer *w, size_t len) {
    uint64_t offset = w->offset;
    uint64_t remaining = len;
    int first = 1;
    size_t hs = w->header_size, chunk_left = w->chunk_left;
    while (first || remaining > 0) {
        size_t left = block_left(offset);
        if (left < hs) {
            offset += left;
            left = LLOG_BLOCK_SIZE;
        }
        uint64_t n = fragment_length(w->chunk, &chunk_left, first, remaining,
                                     left - hs);
        offset += hs + n;
        remaining -= n;
        first = 0;
    }
    return offset - w->offset;
}

size_t llog_writer_add(llog_writer *w, const uint8_t *data, size_t len,
                       uint8_t *dst, uint64_t *record_offset) {
    llog_fragment f;
    uint8_t *out = dst;
    int first = 1;
    do {
        fragment(w, data, len, first, 0, &f); /* (short, most likely) */
        if (first && record_offset != NULL)
            *record_offset = f.header_offset;
        memcpy(out, f.prefix, f.prefix_len);
        out += f.prefix_len;
        if (f.payload_len > 0) { /* data may be NULL for an empty record */
            memcpy(out, data, f.payload_len);
            out += f.payload_len;
            data += f.payload_len;
            len -= f.payload_len;
        }
        first = 0;
    } while (len > 0);
    return (size_t)(out - dst);
}

/* Plans the leading records of a run (see llog_writer_add_run): where
 * each one's header goes in dst (at[i]), zero-filling block tails on the
 * way; returns how many fit whole in their block and in room bytes, and
 * the bytes they take in *used. */
static size_t run_plan(const llog_writer *w, const size_t *len, size_t n,
                       uint8_t *dst, size_t room, size_t *at, size_t *used) {
    uint64_t offset = w->offset;
    size_t k = 0, bytes = 0;
    for (; k < n && k < LLOG_WRITER_RUN; k++) {
        size_t left = block_left(offset), pad = 0;
        if (left < LLOG_HEADER_SIZE) {
            pad = left;
            left = LLOG_BLOCK_SIZE;
        }
        if (len[k] > left - LLOG_HEADER_SIZE || /* it would be cut */
            pad + LLOG_HEADER_SIZE + len[k] > room - bytes)
            break;
        memset(dst + bytes, 0, pad);
        at[k] = bytes + pad;
        bytes += pad + LLOG_HEADER_SIZE + len[k];
        offset += pad + LLOG_HEADER_SIZE + len[k];
    }
    *used = bytes;
    return k;
}

size_t llog_writer_add_run(llog_writer *w, const uint8_t *const *data,
                           const size_t *len, size_t n, uint8_t *dst,
                           size_t room, size_t *written) {
    size_t at[LLOG_WRITER_RUN], k = 0, used = 0;
    if (w->header_size == LLOG_HEADER_SIZE && w->chunk == 0)
        k = run_plan(w, len, n, dst, room, at, &used);
    *written = used;
    if (k == 0)
        return 0;
    uint8_t *payload[LLOG_WRITER_RUN];
    uint32_t crc[LLOG_WRITER_RUN];
    for (size_t i = 0; i < k; i++)
        payload[i] = dst + at[i] + LLOG_HEADER_SIZE;
    llog_crc32c_copy_many(llog_type_crc[LLOG_FULL], crc, payload, data, len,
                          k);
    for (size_t i = 0; i < k; i++) {
        uint8_t *h = dst + at[i];
        llog_store32(h, llog_mask_crc(crc[i]));
        h[4] = (uint8_t)(len[i] & 0xff);
        h[5] = (uint8_t)(len[i] >> 8);
        h[6] = LLOG_FULL;
    }
    w->offset += used;
    return k;
}

uint64_t llog_writer_meta_size(const llog_writer *w, unsigned type,
                               size_t len) {
    size_t hs = llog_type_header_size(LLOG_DIALECT_ROCKSDB, type);
    if (len > LLOG_BLOCK_SIZE - hs)
        return 0;
    size_t left = block_left(w->offset);
    return (left < hs + len ? left : 0) + hs + len;
}

size_t llog_writer_meta(llog_writer *w, unsigned type, const uint8_t *data,
                        size_t len, uint8_t *dst) {
    size_t hs = llog_type_header_size(LLOG_DIALECT_ROCKSDB, type);
    size_t left = block_left(w->offset);
    size_t pad = left < hs + len ? left : 0;
    assert(len <= LLOG_BLOCK_SIZE - hs);
    memset(dst, 0, pad);
    put_header(w, dst + pad, hs, type, data, len, 0);
    if (len > 0)
        memcpy(dst + pad + hs, data, len);
    w->offset += pad + hs + len;
    return pad + hs + len;
}

size_t llog_writer_pebble_trailer(llog_writer *w, uint8_t *dst) {
    size_t left = block_left(w->offset);
    /* the writer pads whenever fewer bytes than its header are left */
    size_t min = w->header_size > LLOG_RECYCLABLE_HEADER_SIZE
                     ? w->header_size
                     : LLOG_RECYCLABLE_HEADER_SIZE;
    size_t pad = left < min ? left : 0;
    memset(dst, 0, pad + LLOG_RECYCLABLE_HEADER_SIZE);
    uint8_t *h = dst + pad;
    h[6] = LLOG_PEBBLE_TRAILER_TYPE; /* empty, checksum 0 */
    llog_store32(h + LLOG_HEADER_SIZE, w->log_number + 1);
    w->offset += pad + LLOG_RECYCLABLE_HEADER_SIZE;
    return pad + LLOG_RECYCLABLE_HEADER_SIZE;
}

size_t llog_writer_compression_record(llog_writer *w, uint8_t *dst) {
    uint8_t zstd[4];
    llog_store32(zstd, LLOG_RDB_ZSTD);
    return llog_writer_meta(w, LLOG_RDB_SET_COMPRESSION, zstd, sizeof zstd,
                            dst);
}

size_t llog_writer_fresh_block(const llog_writer *w) {
    size_t in = (size_t)(w->offset % LLOG_BLOCK_SIZE);
    return in != 0 ? LLOG_BLOCK_SIZE - in : 0;
}

void llog_writer_padded(llog_writer *w, size_t n) { w->offset += n; }
