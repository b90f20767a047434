/*
 * dialect_logs.c - building and reading logs of RocksDB's and Pebble's
 * dialects in the C unit tests (see dialect_logs.h).
 */
#include "dialect_logs.h"

#include <string.h>

/* ---- encoding (docs/rocksdb.md, "Headers") ------------------------------ */

size_t put_d(buf *b, unsigned type, const void *payload, size_t n, size_t hs,
             uint32_t log_number, uint64_t synced) {
    size_t at = b->len;
    uint8_t *h = buf_grow(b, hs);
    h[4] = (uint8_t)n;
    h[5] = (uint8_t)(n >> 8);
    h[6] = (uint8_t)type;
    if (hs >= RB)
        for (int i = 0; i < 4; i++)
            h[7 + i] = (uint8_t)(log_number >> (8 * i));
    if (hs == SB)
        for (int i = 0; i < 8; i++)
            h[11 + i] = (uint8_t)(synced >> (8 * i));
    uint32_t crc = ref_crc32c(0, h + 6, hs - 6);
    crc = ref_crc32c(crc, payload, n);
    uint32_t masked = ref_crc32c_mask(crc);
    for (int i = 0; i < 4; i++)
        h[i] = (uint8_t)(masked >> (8 * i));
    buf_put(b, payload, n);
    return at;
}

size_t put7(buf *b, unsigned type, const void *p, size_t n) {
    return put_d(b, type, p, n, H, 0, 0);
}

size_t put11(buf *b, unsigned type, const void *p, size_t n,
             uint32_t log_number) {
    return put_d(b, type, p, n, RB, log_number, 0);
}

void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

size_t put_trailer(buf *b, uint32_t next) {
    size_t at = b->len;
    uint8_t *h = buf_grow(b, RB);
    memset(h, 0, RB);
    h[6] = 5;
    put_u32(h + 7, next);
    return at;
}

uint64_t wadd(buf *log, llog_writer *w, const void *data, size_t len) {
    uint64_t size = llog_writer_encoded_size(w, len), at = 0;
    CHECK_EQ(w->offset, log->len);
    uint8_t *dst = buf_grow(log, (size_t)size);
    CHECK_EQ(llog_writer_add(w, data, len, dst, &at), size);
    return at;
}

/* ---- reading ------------------------------------------------------------ */

read_opts opts(llog_dialect d, llog_recovery mode) {
    read_opts o = WHOLE;
    o.dialect = d;
    o.recovery = mode;
    return o;
}

char dialect_ctx[160];

read_info expect_d(const char *what, const buf *log, read_opts o,
                   const tevs *want) {
    tevs got = {0};
    read_info info = read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(%s; dialect %d, recovery %d)", dialect_ctx, (int)o.dialect,
             (int)o.recovery);
    tevs_free(&got);
    o.sequential = 1;
    read_log(log->p, log->len, o, &got);
    if (!check_events(&got, want, what))
        note("(%s; sequential; dialect %d, recovery %d)", dialect_ctx,
             (int)o.dialect, (int)o.recovery);
    tevs_free(&got);
    return info;
}

void want_done(tevs *l) {
    tev done = {.kind = LLOG_EV_DONE};
    tevs_add_copy(l, &done);
}

const char *mode_name(llog_recovery m) {
    return llog_recovery_name((unsigned)m);
}

/* ---- compressed records ------------------------------------------------- */

const uint8_t *xor_decode(void *ctx, const uint8_t *in, size_t n, int first,
                          int last, size_t *out_len) {
    xor_ctx *x = ctx;
    x->calls++;
    x->firsts += first != 0;
    x->lasts += last != 0;
    CHECK(n <= B);
    for (size_t i = 0; i < n; i++)
        x->out[i] = in[i] ^ 0x5A;
    if (n > 0 && x->out[0] == '!')
        return NULL;
    *out_len = n;
    return x->out;
}

void xor_bytes(uint8_t *dst, const void *src, size_t n) {
    const uint8_t *s = src;
    for (size_t i = 0; i < n; i++)
        dst[i] = s[i] ^ 0x5A;
}
