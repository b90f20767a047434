/*
 * test_writer.c - the core writer (log_writer.h): llog_writer_add,
 * llog_writer_fragment and llog_writer_encoded_size against the golden
 * record vectors and the record encoder of harness.h, at every position in
 * a block.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log_writer.h"

/* The writer's output for one record at `offset`, through llog_writer_add
 * into an exactly sized buffer (or one with a guard zone without ASan). */
static size_t add_at(uint64_t offset, const uint8_t *data, size_t len,
                     buf *out, uint64_t *record_offset) {
    llog_writer w;
    llog_writer_init(&w, offset);
    uint64_t size = llog_writer_encoded_size(&w, len);
    CHECK_EQ(w.offset, offset); /* encoded_size does not move the writer */
#if defined(__SANITIZE_ADDRESS__)
    const size_t guard = 0;
#else
    const size_t guard = 32;
#endif
    uint8_t *dst = xmalloc((size_t)size + guard);
    memset(dst + size, 0xCD, guard);
    size_t n = llog_writer_add(&w, data, len, dst, record_offset);
    CHECK_EQ(n, size);
    CHECK_EQ(w.offset, offset + n);
    for (size_t i = 0; i < guard; i++)
        if (!CHECK_EQ(dst[size + i], 0xCD))
            break;
    buf_put(out, dst, n < size ? n : (size_t)size);
    free(dst);
    return n;
}

/* The same record through llog_writer_fragment, checking each fragment. */
static void fragments_at(uint64_t offset, const uint8_t *data, size_t len,
                         buf *out) {
    llog_writer w;
    llog_writer_init(&w, offset);
    size_t done = 0;
    int first = 1;
    for (int guard = 0; guard < 100000; guard++) {
        llog_fragment f;
        uint64_t before = w.offset,
                 payload_at = llog_writer_payload_offset(&w);
        llog_writer_fragment(&w, data + done, len - done, first, &f);
        CHECK_EQ(payload_at, f.header_offset + H);
        CHECK(f.prefix_len >= H && f.prefix_len <= H + H - 1);
        CHECK(f.payload_len <= len - done);
        CHECK_EQ(f.header_offset, before + f.prefix_len - H);
        CHECK_EQ(w.offset, before + f.prefix_len + f.payload_len);
        buf_put(out, f.prefix, f.prefix_len);
        buf_put(out, data + done, f.payload_len);
        done += f.payload_len;
        first = 0;
        if (done >= len)
            return;
    }
    CHECK(!"llog_writer_fragment made no progress");
}

/* add and fragment both produce what docs/format.md says, at this offset. */
static void check_encoding_at(uint64_t offset, const uint8_t *data,
                              size_t len) {
    buf want = {0}, got = {0}, frag = {0};
    uint64_t want_offset = 0, got_offset = UINT64_MAX;
    ref_encode(offset, data, len, &want, &want_offset);
    add_at(offset, data, len, &got, &got_offset);
    fragments_at(offset, data, len, &frag);
    if (!CHECK_MEM(got.p, got.len, want.p, want.len) ||
        !CHECK_EQ(got_offset, want_offset) ||
        !CHECK_MEM(frag.p, frag.len, want.p, want.len))
        note("log length %llu, record of %zu bytes",
             (unsigned long long)offset, len);
    buf_free(&want);
    buf_free(&got);
    buf_free(&frag);
}

static void test_writer_reproduces_record_vectors(void) {
    CHECK(V.nrec >= 4);
    for (size_t i = 0; i < V.nrec; i++) {
        const rec_vec *v = &V.rec[i];
        buf model = {0};
        put_phys(&model, v->type, v->payload, v->plen);
        if (!CHECK_MEM(model.p, model.len, v->rec, v->rlen)) /* the model */
            note("record vector %zu", i);
        buf_free(&model);
        if (v->type < LLOG_FULL || v->type > LLOG_LAST)
            continue;
        /* Data one byte longer than the payload makes FIRST and MIDDLE come
         * out at a block end with exactly plen bytes of room. */
        uint8_t *data = xmalloc(v->plen + 1);
        if (v->plen > 0)
            memcpy(data, v->payload, v->plen);
        data[v->plen] = 'z';
        buf got = {0};
        uint64_t at = 0;
        llog_writer w;
        llog_fragment f;
        switch (v->type) {
        case LLOG_FULL:
            add_at(0, v->payload, v->plen, &got, &at);
            CHECK_EQ(at, 0);
            break;
        case LLOG_LAST:
            llog_writer_init(&w, 0);
            llog_writer_fragment(&w, data, v->plen, 0, &f);
            buf_put(&got, f.prefix, f.prefix_len);
            buf_put(&got, data, f.payload_len);
            break;
        default: /* FIRST, MIDDLE */
            llog_writer_init(&w, 5 * (uint64_t)B - H - v->plen);
            llog_writer_fragment(&w, data, v->plen + 1, v->type == LLOG_FIRST,
                                 &f);
            buf_put(&got, f.prefix, f.prefix_len);
            buf_put(&got, data, f.payload_len);
            break;
        }
        if (!CHECK_MEM(got.p, got.len, v->rec, v->rlen))
            note("record vector %zu (type %u)", i, v->type);
        buf_free(&got);
        free(data);
    }
}

static void test_writer_format_md_worked_example(void) {
    static const size_t sizes[3] = {1000, 97270, 8000};
    static const uint64_t offsets[3] = {0, 1007, 98304};
    uint8_t *data = xmalloc(97270);
    rnd_fill(data, 97270);
    llog_writer w;
    llog_writer_init(&w, 0);
    buf log = {0};
    for (int i = 0; i < 3; i++) {
        uint64_t size = llog_writer_encoded_size(&w, sizes[i]);
        uint8_t *dst = buf_grow(&log, (size_t)size);
        uint64_t at = UINT64_MAX;
        CHECK_EQ(llog_writer_add(&w, data, sizes[i], dst, &at), size);
        CHECK_EQ(at, offsets[i]);
    }
    CHECK_EQ(log.len, 106311);
    CHECK_EQ(w.offset, 106311);
    static const struct {
        size_t offset;
        unsigned type;
        size_t len;
    } phys[] = {{0, LLOG_FULL, 1000},
                {1007, LLOG_FIRST, 31754},
                {32768, LLOG_MIDDLE, 32761},
                {65536, LLOG_LAST, 32755},
                {98304, LLOG_FULL, 8000}};
    for (size_t i = 0; i < 5 && log.len == 106311; i++) {
        const uint8_t *h = log.p + phys[i].offset;
        CHECK_EQ(h[6], phys[i].type);
        CHECK_EQ(h[4] | h[5] << 8, phys[i].len);
        uint32_t crc = ref_crc32c(0, h + 6, 1 + phys[i].len);
        CHECK_EQ(llog_load32(h), ref_crc32c_mask(crc));
    }
    for (size_t i = 98298; i < 98304 && log.len == 106311; i++)
        CHECK_EQ(log.p[i], 0); /* the 6-byte trailer */
    buf want = {0};
    uint64_t ignored;
    uint64_t at = 0;
    for (int i = 0; i < 3; i++)
        at += ref_encode(at, data, sizes[i], &want, &ignored);
    CHECK_MEM(log.p, log.len, want.p, want.len);
    buf_free(&want);
    buf_free(&log);
    free(data);
}

static void test_writer_seven_bytes_left(void) {
    static const uint8_t full_empty[] = {0x05, 0x2b, 0x28, 0x43, 0, 0, 1};
    static const uint8_t first_empty[] = {0x64, 0x51, 0xd0, 0xe9, 0, 0, 2};
    for (uint64_t base = 0; base <= 10 * (uint64_t)B; base += 10 * B) {
        /* An empty record: a FULL header with no payload fills the block. */
        buf got = {0};
        uint64_t at = 0;
        CHECK_EQ(add_at(base + B - H, (const uint8_t *)"", 0, &got, &at), H);
        CHECK_MEM(got.p, got.len, full_empty, sizeof full_empty);
        CHECK_EQ(at, base + B - H);
        buf_free(&got);

        /* A non-empty record: an empty FIRST there, the data after it. */
        buf want = {0};
        buf_put(&want, first_empty, sizeof first_empty);
        put_phys(&want, LLOG_LAST, "abc", 3);
        CHECK_EQ(add_at(base + B - H, (const uint8_t *)"abc", 3, &got, &at),
                 H + H + 3);
        CHECK_MEM(got.p, got.len, want.p, want.len);
        CHECK_EQ(at, base + B - H);
        buf_free(&got);
        buf_free(&want);

        /* Six bytes left: zeros, then the record in the next block. */
        buf_bytes(&want, 0, 6);
        put_phys(&want, LLOG_FULL, "", 0);
        CHECK_EQ(add_at(base + B - 6, (const uint8_t *)"", 0, &got, &at),
                 6 + H);
        CHECK_MEM(got.p, got.len, want.p, want.len);
        CHECK_EQ(at, base + B);
        buf_free(&got);
        buf_free(&want);
    }
    /* An empty record may come as NULL (the writer's "data may be NULL"). */
    buf got = {0};
    uint64_t at = 0;
    CHECK_EQ(add_at(B - H, NULL, 0, &got, &at), H);
    CHECK_MEM(got.p, got.len, full_empty, sizeof full_empty);
    buf_free(&got);
}

/* Log lengths and record lengths around every block edge a fragment can
 * meet; the last two log lengths lie beyond 32 bits. */
static const uint64_t encoding_offsets[] = {0,
                                            1,
                                            7,
                                            1000,
                                            B - 14,
                                            B - 8,
                                            B - 7,
                                            B - 6,
                                            B - 5,
                                            B - 4,
                                            B - 3,
                                            B - 2,
                                            B - 1,
                                            B,
                                            B + 1,
                                            3 * (uint64_t)B + B - 7,
                                            (5ull << 32) + B - 3,
                                            (5ull << 32) + 12345};
static const size_t encoding_lens[] = {
    0, 1, 2, 6, 7, 8, 100, 1000, 32747, 32748, 32753, 32754, 32755, 32756,
    32760, 32761, 32762, 32763, 32767, 32768, 32769, 65521, 65522, 65523,
    65529, 65535, 65536, 100000, 3 * 32761 + 1,
    /* either side of LLOG_WRITER_AHEAD */
    262143, 262144};

/* Appending record after record: offsets chain. */
static void check_records_chain(const uint8_t *data) {
    llog_writer w;
    llog_writer_init(&w, 0);
    buf log = {0};
    buf want = {0};
    for (int i = 0; i < 200; i++) {
        size_t len = rnd_below(i % 5 == 0 ? 3 * B : 300);
        uint64_t size = llog_writer_encoded_size(&w, len);
        uint64_t at, want_at;
        size_t n = llog_writer_add(&w, data, len, buf_grow(&log, size), &at);
        CHECK_EQ(n, size);
        ref_encode(want.len, data, len, &want, &want_at);
        CHECK_EQ(at, want_at);
    }
    CHECK_MEM(log.p, log.len, want.p, want.len);
    buf_free(&log);
    buf_free(&want);
}

static void test_writer_encoded_size_equals_bytes_added(void) {
    size_t max_len = 262144;
    uint8_t *data = xmalloc(max_len);
    rnd_fill(data, max_len);
    /* (A reduced run: records longer than a block at a quarter of the
     * offsets, in turn, and fewer random pairs.) */
    for (size_t oi = 0;
         oi < sizeof encoding_offsets / sizeof encoding_offsets[0]; oi++)
        for (size_t li = 0;
             li < sizeof encoding_lens / sizeof encoding_lens[0]; li++)
            if (encoding_lens[li] <= B || harness_keep(oi + li, 4))
                check_encoding_at(encoding_offsets[oi], data,
                                  encoding_lens[li]);
    for (size_t i = 0; i < harness_pick(300, 30); i++) { /* random pairs */
        uint64_t offset = rnd_below(8 * B);
        if (i % 3 == 0)
            offset = offset - offset % B + B - rnd_below(H + 1) - 1;
        size_t len = i % 2 ? rnd_below(2 * B) : rnd_below(max_len);
        check_encoding_at(offset, data, len);
    }
    check_records_chain(data);
    free(data);
}

/* One llog_writer_add_run call from offset over up to 60 records of
 * random lengths (short ones, some a block long), with room bytes: the
 * records it takes are exactly what llog_writer_add writes for them, it
 * writes nothing past what it reports, and it stops only where it must. */
static void check_add_run_at(uint64_t offset, const uint8_t *data,
                             size_t room) {
    enum { MOST = 60 };
    const uint8_t *src[MOST];
    size_t len[MOST], n = 1 + rnd_below(MOST);
    for (size_t i = 0; i < n; i++) {
        len[i] = rnd_below(8) == 0 ? rnd_below(B) : rnd_below(200);
        src[i] = data + rnd_below(1000);
    }
    llog_writer w, ref;
    llog_writer_init(&w, offset);
    llog_writer_init(&ref, offset);
    uint8_t *dst = xmalloc(room + 64), *want = xmalloc(MOST * (2 * B));
    memset(dst, 0xCD, room + 64);
    size_t written,
        k = llog_writer_add_run(&w, src, len, n, dst, room, &written),
        want_len = 0;
    for (size_t i = 0; i < k; i++)
        want_len +=
            llog_writer_add(&ref, src[i], len[i], want + want_len, NULL);
    CHECK(k <= n && k <= LLOG_WRITER_RUN);
    CHECK_EQ(w.offset, ref.offset);
    CHECK_MEM(dst, written, want, want_len);
    CHECK(dst[written] == 0xCD);
    if (k < n && k < LLOG_WRITER_RUN) { /* why it stopped: cut, or room */
        size_t left = B - (size_t)(w.offset % B);
        size_t pad = left < H ? left : 0;
        left = left < H ? B : left;
        CHECK(len[k] > left - H || written + pad + H + len[k] > room);
    }
    free(dst);
    free(want);
}

static void test_writer_add_run_matches_add(void) {
    uint8_t *data = xmalloc(1000 + B);
    rnd_fill(data, 1000 + B);
    for (size_t i = 0; i < harness_pick(3000, 1100); i++) {
        uint64_t offset = rnd_below(4 * B);
        if (i % 3 == 0) /* near a block's end: padding and cut records */
            offset = offset - offset % B + B - rnd_below(2 * H + 100);
        size_t room = i % 4 == 0 ? rnd_below(3000) : 64 * B;
        check_add_run_at(offset, data, room);
    }
    llog_writer w; /* another dialect's headers: none taken, none written */
    llog_writer_init(&w, 0);
    llog_writer_set_header(&w, LLOG_RECYCLABLE_HEADER_SIZE, 5);
    const uint8_t *src[1] = {data};
    size_t len[1] = {10}, written = 1;
    uint8_t dst[64];
    CHECK_EQ(llog_writer_add_run(&w, src, len, 1, dst, sizeof dst, &written),
             0);
    CHECK_EQ(written, 0);
    CHECK_EQ(w.offset, 0);
    free(data);
}

void suite_writer(void) {
    RUN(test_writer_reproduces_record_vectors);
    RUN(test_writer_format_md_worked_example);
    RUN(test_writer_seven_bytes_left);
    RUN(test_writer_encoded_size_equals_bytes_added);
    RUN(test_writer_add_run_matches_add);
}
