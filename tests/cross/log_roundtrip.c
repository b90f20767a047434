/*
 * log_roundtrip.c - the same log on every architecture. .ci/cross.sh builds
 * this natively, for s390x (big-endian) and for AArch64, and checks that
 * every build writes the same bytes and reads every build's log back to
 * exactly the records written.
 *
 * Usage: log_roundtrip write FILE   writes the log of the plan below
 *        log_roundtrip read FILE    reads FILE with the core reader and
 *                                   checks every record against the plan
 *
 * read prints "records R of N, B payload bytes, P problems, digest D": the
 * digest covers each record's offset, length and bytes, so it is the same
 * on every host. The exit status is nonzero on any difference, corruption
 * report or torn tail.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "log_reader.h"
#include "log_writer.h"

/* The three ways into the writer. */
enum api { ADD, RUN, FRAGMENTS };

/*
 * The records, in order: count records of len bytes each, written through
 * api (RUN: short ones of (37 j) % 211 bytes in llog_writer_add_run calls).
 * The lengths put every shape a reader meets into the log.
 */
static const struct step {
    size_t len;
    int count;
    enum api api;
} plan[] = {
    {0, 1, ADD},            /* an empty FULL record at offset 0 */
    {1, 1, ADD},            /* one byte */
    {1000, 1, ADD},         /* in the same block */
    {31736, 1, ADD},        /* leaves 3 bytes: a zero-filled block tail */
    {0, 1, ADD},            /* empty, at a block's start */
    {40000, 1, ADD},        /* FIRST, LAST */
    {100000, 1, ADD},       /* FIRST, MIDDLE, MIDDLE, LAST */
    {0, 2, ADD},            /* two empty ones in a row */
    {0, 24, RUN},           /* the many-short-records path */
    {21190, 1, ADD},        /* leaves exactly one header's 7 bytes */
    {1000, 1, ADD},         /* so it begins with an empty FIRST */
    {31754, 1, ADD},        /* ends exactly at its block's end */
    {300000, 1, FRAGMENTS}, /* over LLOG_WRITER_AHEAD: spans ten blocks */
    {5, 1, ADD},            /* a last short one */
};

#define MAX_RECORDS 64

static size_t n_records, lens[MAX_RECORDS];
static enum api apis[MAX_RECORDS];

static void expand_plan(void) {
    for (size_t s = 0; s < sizeof plan / sizeof plan[0]; s++)
        for (int j = 0; j < plan[s].count && n_records < MAX_RECORDS; j++) {
            lens[n_records] =
                plan[s].api == RUN ? (size_t)(37 * j % 211) : plan[s].len;
            apis[n_records++] = plan[s].api;
        }
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "log_roundtrip: out of memory\n");
        exit(2);
    }
    return p;
}

/* Record k's bytes, from a generator seeded by k: byte by byte, so they do
 * not depend on the host's byte order. Free the result. */
static uint8_t *record(size_t k) {
    uint8_t *p = xmalloc(lens[k]);
    uint32_t s = 0x9E3779B9u * (uint32_t)(k + 1);
    for (size_t i = 0; i < lens[k]; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (uint8_t)(s >> 24);
    }
    return p;
}

/* ---- writing ------------------------------------------------------------ */

/* The log being written, in memory. */
typedef struct out {
    uint8_t *p;
    size_t len, cap;
} out;

/* Room for n more bytes at o->p + o->len. */
static uint8_t *room(out *o, size_t n) {
    if (o->len + n > o->cap) {
        o->cap = 2 * (o->len + n);
        o->p = realloc(o->p, o->cap);
        if (o->p == NULL) {
            fprintf(stderr, "log_roundtrip: out of memory\n");
            exit(2);
        }
    }
    return o->p + o->len;
}

static void write_add(llog_writer *w, out *o, size_t k) {
    uint8_t *data = record(k);
    size_t n = (size_t)llog_writer_encoded_size(w, lens[k]);
    o->len += llog_writer_add(w, data, lens[k], room(o, n), NULL);
    free(data);
}

/* One fragment at a time, as a caller writing large payloads from where
 * they lie does. */
static void write_fragments(llog_writer *w, out *o, size_t k) {
    uint8_t *data = record(k);
    size_t done = 0;
    do {
        llog_fragment f;
        llog_writer_fragment(w, data + done, lens[k] - done, done == 0, &f);
        memcpy(room(o, f.prefix_len), f.prefix, f.prefix_len);
        o->len += f.prefix_len;
        memcpy(room(o, f.payload_len), data + done, f.payload_len);
        o->len += f.payload_len;
        done += f.payload_len;
    } while (done < lens[k]);
    free(data);
}

/* The RUN records from k on, in one llog_writer_add_run call (or one
 * llog_writer_add when it takes none); returns how many were written. */
static size_t write_run(llog_writer *w, out *o, size_t k) {
    uint8_t *data[LLOG_WRITER_RUN];
    size_t m = 0, bytes = 0, written;
    for (; k + m < n_records && apis[k + m] == RUN && m < LLOG_WRITER_RUN; m++)
        bytes += LLOG_HEADER_SIZE + lens[k + m];
    for (size_t i = 0; i < m; i++)
        data[i] = record(k + i);
    size_t took = llog_writer_add_run(
        w, (const uint8_t *const *)data, lens + k, m,
        room(o, bytes + LLOG_BLOCK_SIZE), bytes + LLOG_BLOCK_SIZE, &written);
    o->len += written;
    if (took == 0) {
        write_add(w, o, k);
        took = 1;
    }
    for (size_t i = 0; i < m; i++)
        free(data[i]);
    return took;
}

static int write_log(const char *path) {
    llog_writer w;
    out o = {NULL, 0, 0};
    llog_writer_init(&w, 0);
    for (size_t k = 0; k < n_records;) {
        if (apis[k] == RUN) {
            k += write_run(&w, &o, k);
        } else {
            if (apis[k] == ADD)
                write_add(&w, &o, k);
            else
                write_fragments(&w, &o, k);
            k++;
        }
    }
    FILE *f = fopen(path, "wb");
    int ok = f != NULL && fwrite(o.p, 1, o.len, f) == o.len;
    ok = f != NULL && fclose(f) == 0 && ok;
    if (!ok)
        perror(path);
    else
        printf("wrote %zu records, %zu bytes\n", n_records, o.len);
    free(o.p);
    return ok ? 0 : 1;
}

/* ---- reading ------------------------------------------------------------ */

/* What reading found: records matched, payload bytes, problems, digest. */
typedef struct tally {
    size_t records;
    uint64_t bytes, digest;
    int problems;
} tally;

/* FNV-1a, continuing from h, over n bytes at p. */
static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

/* The same over v's 8 bytes, least significant first, on every host. */
static uint64_t fnv64(uint64_t h, uint64_t v) {
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    return fnv(h, le, 8);
}

/* Checks a record event against the plan's next record. */
static void take_record(tally *t, const llog_event *ev) {
    size_t k = t->records;
    uint8_t *want = k < n_records ? record(k) : NULL;
    if (want == NULL || ev->len != lens[k] ||
        (ev->len > 0 && memcmp(ev->data, want, ev->len) != 0)) {
        if (t->problems++ < 10)
            printf("record %zu at offset %llu (%zu bytes): not the one "
                   "written\n",
                   k, (unsigned long long)ev->offset, ev->len);
    }
    free(want);
    t->digest = fnv64(fnv64(t->digest, ev->offset), ev->len);
    t->digest = fnv(t->digest, ev->data, ev->len);
    t->bytes += ev->len;
    t->records++;
}

/* 1 when the reader has more to say after ev. */
static int take_event(tally *t, const llog_event *ev) {
    switch (ev->kind) {
    case LLOG_EV_RECORD:
        take_record(t, ev);
        return 1;
    case LLOG_EV_CORRUPTION:
        t->problems++;
        printf("corruption at offset %llu: %llu bytes dropped (%s)\n",
               (unsigned long long)ev->offset, (unsigned long long)ev->size,
               ev->reason);
        return 1;
    case LLOG_EV_EOF:
        if (ev->torn) {
            t->problems++;
            printf("torn tail at offset %llu (%s)\n",
                   (unsigned long long)ev->offset, ev->reason);
        }
        return 0;
    case LLOG_EV_DONE:
        return 0;
    default: /* ERROR, and META (RocksDB's), have no place in this log */
        t->problems++;
        printf("unexpected event %d at offset %llu\n", (int)ev->kind,
               (unsigned long long)ev->offset);
        return 0;
    }
}

/* The whole file at path, in memory (*len bytes); NULL when unreadable. */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    out o = {NULL, 0, 0};
    size_t got = 1;
    while (f != NULL && got > 0) {
        got = fread(room(&o, 65536), 1, 65536, f);
        o.len += got;
    }
    if (f == NULL || ferror(f)) {
        perror(path);
        free(o.p);
        o.p = NULL;
    }
    if (f != NULL)
        fclose(f);
    *len = o.len;
    return o.p;
}

static int read_log(const char *path) {
    size_t len;
    uint8_t *log = slurp(path, &len);
    llog_reader_options options = {.end = LLOG_NO_END, .verify_checksums = 1};
    llog_reader *r = log != NULL ? llog_reader_new(&options) : NULL;
    if (r == NULL)
        return 2;
    tally t = {0, 0, 0xCBF29CE484222325ull, 0};
    llog_event ev;
    do {
        llog_reader_next(r, &ev);
        if (ev.kind == LLOG_EV_NEED_BLOCK) {
            uint64_t at = llog_reader_wanted(r);
            size_t n = at < len ? len - (size_t)at : 0;
            llog_reader_feed(r, log + (n > 0 ? at : 0),
                             n < LLOG_BLOCK_SIZE ? n : LLOG_BLOCK_SIZE);
        }
    } while (ev.kind == LLOG_EV_NEED_BLOCK || take_event(&t, &ev));
    t.problems += t.records != n_records;
    printf("records %zu of %zu, %llu payload bytes, %d problems, digest "
           "%016llx\n",
           t.records, n_records, (unsigned long long)t.bytes, t.problems,
           (unsigned long long)t.digest);
    llog_reader_free(r);
    free(log);
    return t.problems == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3 ||
        (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "read") != 0)) {
        fprintf(stderr, "usage: %s write|read FILE\n", argv[0]);
        return 2;
    }
    llog_crc32c_init(1);
    printf("CRC-32C: %s\n", llog_crc32c_implementation());
    expand_plan();
    return strcmp(argv[1], "write") == 0 ? write_log(argv[2])
                                         : read_log(argv[2]);
}
