/*
 * log_reader.h - LevelDB's log reader as a state machine over caller blocks.
 *
 * The reader does no I/O. It asks for one block at a time, by file offset,
 * and the caller feeds that block's bytes (32768, or fewer when the log ends
 * inside it). It produces events in file order: complete records, corruptions
 * (offset, bytes dropped, LevelDB's reason), the end of the data fed so far
 * (with the torn tail, if one is left), and the end of the range.
 *
 * Semantics are LevelDB's log::Reader (db/log_reader.cc) with two additions:
 *
 * - A range [start, end): only records whose first header lies in it are
 *   returned, and only corruptions whose dropped bytes begin in it are
 *   reported. Before reading the block holding `start`, the reader looks back
 *   as far as needed (over blocks made of MIDDLE fragments only) to know
 *   whether a fragmented record is open there, so a range sees exactly what a
 *   read of the whole log sees inside it: cutting a log anywhere neither loses
 *   nor duplicates a record or a report.
 * - At the end of the data it keeps the incomplete tail unconsumed: feeding
 *   the same block again once it has grown continues from where it stopped.
 *
 * Other dialects (options.dialect) follow RocksDB's and Pebble's readers
 * (docs/rocksdb.md): longer headers, the log number of recyclable records
 * (a record of another number is old data: the log ends before it, except
 * in "skip" mode, which skips it), metadata records handed out as META
 * events, RocksDB's reason texts, and endings that depend on the recovery
 * mode. A reader of a range past the first block reads block 0 first, for
 * what a log states at its start (compression, log number).
 *
 * The recovery mode (options.recovery) is decided here: each report of
 * damage says whether reading goes on past it, ends cleanly before it, or
 * fails (llog_verdict below).
 *
 * Where dropped bytes begin: at the bad physical record's header for
 * "checksum mismatch", "bad record length", "missing start of fragmented
 * record" and an unknown type outside a record; at the open record's first
 * header for "partial record without end", "error in middle of record" and
 * an unknown type inside a record.
 */
#ifndef LLOG_LOG_READER_H
#define LLOG_LOG_READER_H

#include "log_header.h"

#define LLOG_NO_END UINT64_MAX

typedef enum llog_event_kind {
    LLOG_EV_RECORD,     /* a complete record: offset, data, len */
    LLOG_EV_CORRUPTION, /* dropped bytes: offset, size, reason */
    LLOG_EV_NEED_BLOCK, /* feed the block at llog_reader_wanted() */
    LLOG_EV_EOF,        /* end of the data fed so far; torn tail if torn */
    LLOG_EV_DONE,       /* the range is finished: nothing more, ever */
    LLOG_EV_ERROR,      /* out of memory or a record too large: size holds
                           the llog_status; the reader cannot go on */
    LLOG_EV_META        /* a RocksDB metadata record, checked: offset, data,
                           len; size holds its type byte */
} llog_event_kind;

/*
 * What the recovery mode (options.recovery, docs/recovery.md) decides about
 * a piece of damage: each CORRUPTION event, and each torn EOF, carries it.
 *
 *   mode            corruption        torn tail
 *   skip            LLOG_READ_ON      LLOG_READ_ON
 *   tolerate_tail   LLOG_FAIL         LLOG_READ_ON
 *   point_in_time   LLOG_STOP         LLOG_READ_ON (RocksDB's dialect:
 *                                     LLOG_STOP, as RocksDB reports it)
 *   absolute        LLOG_FAIL         LLOG_FAIL
 *
 * LLOG_STOP and LLOG_FAIL also mean the damage is reported (a torn tail
 * with LLOG_READ_ON ends the log quietly). A caller applying the mode reads
 * no further after LLOG_STOP or LLOG_FAIL; the reader itself would go on
 * as it always reads (where the log ends still depends on the mode: an
 * older log's record), which is what a caller mapping the damage wants.
 * A torn EOF is the end of the data fed so far: its verdict holds once the
 * caller believes that the log ends there (it may still grow).
 */
typedef enum llog_verdict {
    LLOG_READ_ON, /* skipped and reading goes on; a quiet end of the log */
    LLOG_STOP,    /* the log ends cleanly before this damage */
    LLOG_FAIL     /* the read fails at this damage: an error */
} llog_verdict;

typedef struct llog_event {
    llog_event_kind kind;
    /* Flags, small so that the event stays six words (the reader clears one
     * per event: its size shows in the per-record cost). */
    uint8_t verdict;     /* CORRUPTION, torn EOF: an llog_verdict */
    uint8_t torn;        /* EOF: 1 when an incomplete tail is left */
    uint8_t implausible; /* torn EOF: the cut physical record's header is whole
                            but has a type no writer writes or a length that
                            cannot fit its block: no crash leaves that */
    uint8_t assembled;   /* RECORD: data is in the caller's assembly buffer
                            (llog_reader_options.reserve), now the caller's */
    uint64_t offset;     /* RECORD: first header; CORRUPTION/EOF: dropped bytes
                            (a torn EOF in RocksDB's dialect: what RocksDB
                            reports; llog_reader_position is where it begins) */
    uint64_t size;       /* CORRUPTION/torn EOF: bytes dropped */
    const uint8_t *data; /* RECORD: payload, valid until the next call */
    size_t len;          /* RECORD: payload length */
    const char *reason;  /* CORRUPTION/torn EOF: static or reader-owned text */
} llog_event;

typedef struct llog_reader llog_reader;

/*
 * Where a fragmented record is assembled, when the caller wants it built
 * straight into memory of its own (say, the object it will return) rather
 * than copied out of the reader's buffer. Called as the record grows: `len`
 * bytes of it are assembled so far, at the buffer this function last
 * returned (len is 0 for a new record: no buffer is held then). It returns
 * a buffer of *cap >= need bytes that begins with those `len` bytes (moved
 * or grown in place), or NULL when out of memory. The reader writes into it
 * until the record ends: the RECORD event then points at it, with
 * `assembled` set, and the reader forgets it. A record dropped before its
 * end leaves the buffer with the caller, who may hand it out again.
 */
typedef uint8_t *(*llog_reserve_fn)(void *ctx, size_t len, size_t need,
                                    size_t *cap);

/*
 * Decodes one data fragment of a compressed log (RocksDB's zstd WALs: a
 * record is one frame, cut into fragments). `first` is 1 for a record's
 * first fragment (a new frame starts), `last` 1 for its last (the frame
 * must end there). Returns the decoded bytes, valid until the next call,
 * with their count in *out_len; NULL when the fragment does not decode
 * (the record is dropped and reported).
 */
typedef const uint8_t *(*llog_decode_fn)(void *ctx, const uint8_t *in,
                                         size_t n, int first, int last,
                                         size_t *out_len);

typedef struct llog_reader_options {
    uint64_t start;       /* first offset of the range (0: whole log) */
    uint64_t end;         /* end of the range, exclusive, or LLOG_NO_END */
    int verify_checksums; /* LevelDB's checksum flag */
    int sequential;       /* the source cannot go back: never ask for a block
                             before one already fed (reads from block 0) */
    llog_reserve_fn reserve; /* NULL: the reader's own buffer */
    void *reserve_ctx;
    /* The dialects (docs/rocksdb.md); all zero: LevelDB's reader. */
    llog_dialect dialect;
    llog_recovery recovery; /* the verdicts on damage (llog_verdict), and
                               where other dialects' logs end */
    int has_log_number;     /* else learnt from the first recyclable record */
    uint64_t log_number;    /* recyclable records of another number are old */
    llog_decode_fn decode;  /* for compressed logs; NULL: records as stored */
    void *decode_ctx;
    /* Tell the dialect from block 0 (llog_detect_dialect, with the log
     * number when given) instead of taking `dialect`: the reader asks for
     * block 0 first, whatever the range, and then reads as a reader made in
     * that dialect does (LevelDB's when block 0 tells none: a log number
     * given is then not used). A block 0 shorter than a block that tells
     * none (an empty log, a first record cut short) is told again each time
     * it is fed again while nothing of it was consumed (the log grew); a
     * range past block 0 finds the end of the data meanwhile. */
    int detect;
} llog_reader_options;

/* Returns a new reader, or NULL when out of memory. */
llog_reader *llog_reader_new(const llog_reader_options *options);

void llog_reader_free(llog_reader *r);

/*
 * Produces the next event. NEED_BLOCK asks for llog_reader_wanted(r); EOF
 * means nothing more can be had from the data fed so far (call again after
 * the log grows: it asks for the last block again). Pointers in the event
 * stay valid until the next call to a function of this reader.
 */
void llog_reader_next(llog_reader *r, llog_event *ev);

/* The log number the reader holds recyclable records to (learnt or given),
 * and whether it has one. */
int llog_reader_log_number(const llog_reader *r, uint64_t *log_number);

/* The dialect the reader reads in; *told is 0 while options.detect has not
 * told it for good (before block 0 is fed, or while it tells nothing). */
llog_dialect llog_reader_dialect(const llog_reader *r, int *told);

/* 1 once a recyclable record (one with a log number) was read. */
int llog_reader_recycled(const llog_reader *r);

/*
 * Where llog_reader_next_run puts the records it reads: their offsets and
 * payloads side by side (Arrow's layout of a binary column). The caller
 * makes room for `max` more records and for the block's bytes.
 */
typedef struct llog_run {
    uint64_t *offsets; /* offsets[n] for each record read */
    int64_t *ends;     /* ends[n + 1]: where its payload ends in data */
    uint8_t *data;     /* payloads, appended at data_len */
    size_t n, max;     /* records so far, and the most to hold */
    size_t data_len;   /* payload bytes so far */
    size_t budget;     /* read no record once data_len reached this */
} llog_run;

/*
 * The fast path for callers that take records in bulk: reads the FULL
 * records that follow in the block fed, in LevelDB's dialect, while their
 * checksums hold, they lie in range and nothing else is pending, into run
 * (up to run->max records, or the one that reaches run->budget bytes).
 * Returns how many it read; 0 means call llog_reader_next, which handles
 * whatever comes next (a fragment, damage, a new block, the end). The
 * records are exactly those llog_reader_next would return, in order.
 */
size_t llog_reader_next_run(llog_reader *r, llog_run *run);

/* File offset of the block the reader wants; always a multiple of 32768. */
uint64_t llog_reader_wanted(const llog_reader *r);

/*
 * Feeds the wanted block: len <= 32768 bytes, fewer meaning the log ends
 * there for now. The reader keeps the pointer, so the bytes must stay valid
 * and unchanged until the reader asks for another block or is freed.
 */
void llog_reader_feed(llog_reader *r, const uint8_t *data, size_t len);

/*
 * Reading a record's payload in place. llog_reader_in_place returns 1 when
 * the wanted block would continue a record being assembled in the caller's
 * buffer (options.reserve: the reader is inside such a record, in range, and
 * wants the next block from its start), with the record's length so far in
 * *assembled; else 0. llog_reader_append_point then makes room for `more`
 * (> 0) further payload bytes and returns where the wanted block's first
 * payload byte would be appended (NULL when out of memory: the next event is
 * then ERROR). The caller may read the block's payload straight there and
 * feed the block with llog_reader_feed_split: the reader checks it as any
 * block and, when it does continue the record, appends it where it already
 * is instead of copying it.
 */
int llog_reader_in_place(const llog_reader *r, size_t *assembled);
uint8_t *llog_reader_append_point(llog_reader *r, size_t more);

/*
 * Moving a record being assembled to another buffer of the caller's, for a
 * caller that must give the one it is in away before the record ends (it
 * hands out what it assembles records in, say). llog_reader_assembly
 * returns 1 when the reader is inside a record assembled in the caller's
 * buffer (options.reserve), with where it begins in *buf and its length so
 * far in *len; else 0. The caller copies those bytes to a buffer with room
 * for cap >= *len bytes and calls llog_reader_assembly_moved: the reader
 * goes on there, and never touches the old buffer again.
 */
int llog_reader_assembly(const llog_reader *r, uint8_t **buf, size_t *len);
void llog_reader_assembly_moved(llog_reader *r, uint8_t *buf, size_t cap);

/*
 * Feeds the wanted block in two pieces: its header (the first
 * LLOG_HEADER_SIZE bytes) at `head` and the rest, len - LLOG_HEADER_SIZE
 * bytes, at `rest`. Only while reading (after the reader has asked for a
 * block at or after `start`'s): see llog_reader_append_point. Both pieces
 * stay valid and unchanged as for llog_reader_feed.
 */
void llog_reader_feed_split(llog_reader *r, const uint8_t *head,
                            const uint8_t *rest, size_t len);

/*
 * File offset where reading would go on: past every byte consumed (never
 * before `start`). After EOF, the start of the incomplete tail (or of the
 * open record). Events still queued are not accounted for: ask between
 * events (the queue is empty once a RECORD has been handed out).
 */
uint64_t llog_reader_position(const llog_reader *r);

/*
 * Payload length of the physical record the next call will parse, when its
 * header is in the block fed; else 0. Lets a caller decide whether the work
 * (a checksum over that many bytes) is worth releasing a lock around.
 */
size_t llog_reader_next_length(const llog_reader *r);

/*
 * A second report for the torn EOF `torn` just returned, as RocksDB's reader
 * makes it: in RocksDB's dialect, a header cut short while a fragmented
 * record is open is reported ("truncated header"), then the open record
 * ("error reading trailing data due to encountering EOF", its payload
 * bytes, at its first header). Returns 1 and fills *also with that report
 * (kind EOF, torn, the same verdict) when there is one in this reader's
 * range, else 0. Both are reported before the verdict is acted on.
 */
int llog_reader_torn_also(const llog_reader *r, const llog_event *torn,
                          llog_event *also);

/*
 * Offset just past the last physical record that completed a record
 * (0 if none): where a log can be cut back to drop a torn tail.
 */
uint64_t llog_reader_clean_end(const llog_reader *r);

#endif /* LLOG_LOG_READER_H */
