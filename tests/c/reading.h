/*
 * reading.h - driving the core reader in the C unit tests: events copied
 * out of it, expected events written as in docs/format.md ("Reading") and
 * docs/recovery.md ("Corruption reasons"), whole, sequential, in-place and
 * ranged reads of a log held in memory, and logs made by the core writer
 * with a map of their records and fragments.
 */
#ifndef LLOG_TESTS_READING_H
#define LLOG_TESTS_READING_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "log_reader.h"

/* LevelDB's reason texts, and this reader's for the torn tail. */
extern const char CHECKSUM[], BAD_LENGTH[], PARTIAL[], MISSING[], MIDDLE_ERR[],
    TORN_HEADER[], TORN_PAYLOAD[], TORN_OPEN[];

/* ---- events ------------------------------------------------------------- */

/* One event, copied out of the reader. */
typedef struct tev {
    llog_event_kind kind;
    uint64_t offset, size;
    uint8_t *data;
    size_t len;
    char reason[64];
    int torn;
} tev;

typedef struct tevs {
    tev *v;
    size_t n, cap;
} tevs;

void tevs_add_copy(tevs *l, const tev *e);
/* A copy of an event the reader handed out. */
void tevs_add_event(tevs *l, const llog_event *ev);
void tevs_free(tevs *l);

/* Expected events. */
void want_rec(tevs *l, uint64_t offset, const void *data, size_t len);
void want_bad(tevs *l, uint64_t offset, uint64_t size, const char *reason);
void want_eof(tevs *l);
void want_torn(tevs *l, uint64_t offset, uint64_t size, const char *reason);
void want_meta(tevs *l, uint64_t offset, unsigned type, const void *data,
               size_t len);

/* Checks that got and want hold the same events in the same order. */
int check_events_at(const tevs *got, const tevs *want, const char *what,
                    const char *file, int line);
#define check_events(got, want, what)                                         \
    check_events_at((got), (want), (what), __FILE__, __LINE__)

/* ---- reading ------------------------------------------------------------ */

/* Feeds a reader the blocks of log[0..len) it asks for. */
typedef struct feeder {
    const uint8_t *log;
    size_t len;
    int sequential; /* check it never asks for a block before one fed */
    uint64_t last_fed;
    int fed_any;
    size_t blocks_fed;
    size_t in_place; /* blocks fed in two pieces, payload in place */
} feeder;

extern const uint8_t nothing[1]; /* what an empty block is fed as */

/* Runs r until EOF, DONE or ERROR, appending every event but NEED_BLOCK to
 * out; returns the last kind (LLOG_EV_ERROR also when the reader
 * misbehaves). */
llog_event_kind drive(llog_reader *r, feeder *f, int in_place, tevs *out);

typedef struct read_opts {
    uint64_t start, end;
    int verify, sequential;
    int in_place; /* read payloads where their record goes on (see feed) */
    /* other dialects (zero: LevelDB's) */
    llog_dialect dialect;
    llog_recovery recovery;
    int has_log_number;
    uint64_t log_number;
    llog_decode_fn decode; /* compressed logs: NULL, records as stored */
    void *decode_ctx;
    int detect; /* the dialect told from block 0 (dialect ignored) */
} read_opts;

extern const read_opts WHOLE; /* the whole log, checksums verified */

typedef struct read_info {
    llog_event_kind last;
    uint64_t clean_end, position;
    size_t blocks_fed;
    size_t in_place; /* of which fed split, payload in place */
} read_info;

/* Reads log[0..len) with a new reader, appending its events to out. */
read_info read_log(const uint8_t *log, size_t len, read_opts o, tevs *out);

/* Reading in the ranges [cuts[i], cuts[i+1]) (the last to LLOG_NO_END)
 * sees exactly what a whole read sees. */
void check_ranges_match_whole(const uint8_t *log, size_t len,
                              const uint64_t *cuts, size_t ncuts,
                              int sequential, int expect_done,
                              const char *what);

/* The same over a log of another dialect: every range is read with base's
 * options (its start and end replaced), and so is the whole log. Metadata
 * events count too, but for the compression record, which every range is
 * handed. */
void check_dialect_ranges_match_whole(const uint8_t *log, size_t len,
                                      const uint64_t *cuts, size_t ncuts,
                                      read_opts base, const char *what);

/* The log reads as want: whole, sequentially, in place, and split in two
 * anywhere (every byte for short logs; otherwise a sample and the block
 * edges). */
void expect_log(const char *what, const buf *log, int verify,
                const tevs *want);

/* ---- logs made by the writer -------------------------------------------- */

typedef struct phys {
    uint64_t header;
    size_t len;
    unsigned type;
    size_t rec; /* index of its record */
} phys;

typedef struct rec {
    uint64_t offset, end; /* first header; just past the last fragment */
    uint8_t *data;
    size_t len;
} rec;

typedef struct wlog {
    buf log;
    phys *ph;
    size_t nph;
    rec *rc;
    size_t nrc;
} wlog;

/* Appends one record to L through llog_writer_fragment. */
void wlog_add(wlog *L, const uint8_t *data, size_t len);
void wlog_free(wlog *L);

/* A log of records of mixed sizes, some spanning several blocks, some
 * ending in the last 7 bytes of a block (reseeds rng with seed). */
void make_mixed_log(wlog *L, uint64_t seed, size_t nrecords, size_t max_large);

/* The events of a clean read of the whole log L. */
void want_all_records(const wlog *L, tevs *want);

#endif /* LLOG_TESTS_READING_H */
