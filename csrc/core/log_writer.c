/*
 * log_writer.c - LevelDB's record splitting (db/log_writer.cc), with no I/O.
 */
#include "log_writer.h"

#include <assert.h>
#include <string.h>

#include "crc32c.h"

void llog_writer_init(llog_writer *w, uint64_t log_length) {
    w->offset = log_length;
}

/* Bytes left in the current block. */
static size_t block_left(uint64_t offset) {
    return LLOG_BLOCK_SIZE - (size_t)(offset % LLOG_BLOCK_SIZE);
}

void llog_writer_fragment(llog_writer *w, const uint8_t *data,
                          size_t remaining, int first, llog_fragment *out) {
    size_t pad = 0;
    size_t left = block_left(w->offset);
    if (left < LLOG_HEADER_SIZE) {
        /* No header fits: zero-fill the trailer and move to the next block. */
        pad = left;
        memset(out->prefix, 0, pad);
        left = LLOG_BLOCK_SIZE;
    }
    size_t avail = left - LLOG_HEADER_SIZE;
    size_t n = remaining < avail ? remaining : avail;
    int last = (n == remaining);
    llog_type type = first ? (last ? LLOG_FULL : LLOG_FIRST)
                           : (last ? LLOG_LAST : LLOG_MIDDLE);

    uint8_t *h = out->prefix + pad;
    uint32_t crc = llog_crc32c_extend(llog_type_crc[type], data, n);
    llog_store32(h, llog_mask_crc(crc));
    h[4] = (uint8_t)(n & 0xff);
    h[5] = (uint8_t)(n >> 8);
    h[6] = (uint8_t)type;

    out->prefix_len = pad + LLOG_HEADER_SIZE;
    out->payload_len = n;
    out->header_offset = w->offset + pad;
    w->offset += pad + LLOG_HEADER_SIZE + n;
    /* A fragment never crosses a block: the next one starts in this block or
     * exactly at the next boundary. */
    assert(w->offset - out->header_offset <= LLOG_BLOCK_SIZE);
}

uint64_t llog_writer_encoded_size(const llog_writer *w, size_t len) {
    uint64_t offset = w->offset;
    uint64_t remaining = len;
    int first = 1;
    while (first || remaining > 0) {
        size_t left = block_left(offset);
        if (left < LLOG_HEADER_SIZE) {
            offset += left;
            left = LLOG_BLOCK_SIZE;
        }
        size_t avail = left - LLOG_HEADER_SIZE;
        uint64_t n = remaining < avail ? remaining : avail;
        offset += LLOG_HEADER_SIZE + n;
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
        llog_writer_fragment(w, data, len, first, &f);
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
