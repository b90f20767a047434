/*
 * reader_internal.h - the Reader's fields, for its own files only: reader.c
 * (the type, iteration), reader_open.c (tp_init), reader_damage.c (reports
 * and the verdicts acted on), reader_assembly.c (building fragmented
 * records) and reader_fill.c (feeding blocks). Every other file goes
 * through reader.h.
 */
#ifndef LLPY_READER_INTERNAL_H
#define LLPY_READER_INTERNAL_H

#include "llpy_io.h"
#include "lock.h"
#include "reader.h"
#include "reader_dialect.h"

/* Bytes read from a file at once: fewer system calls than one block each,
 * while a reader still holds about one chunk plus its largest record. */
#define LLPY_READ_CHUNK (4 * LLOG_BLOCK_SIZE)
/* A long record's payload is read from a file straight into the object it
 * is assembled in, up to this many blocks per system call (reader_fill.c).
 */
#if defined(__linux__) || defined(__FreeBSD__)
#define LLPY_IN_PLACE_BLOCKS 16
#endif

enum llpy_source_kind { LLPY_SRC_BUFFER, LLPY_SRC_FD, LLPY_SRC_FILE };

struct llpy_reader {
    PyObject_HEAD llog_reader *core;
    llpy_lock lock;
    enum llpy_source_kind kind;
    llog_recovery recovery;
    int verify_checksums;
    uint64_t start, end;
    PyObject *source; /* the source as given: repr, warnings, pickling */
    PyObject *name;   /* Reader.name: the path, a file's name, or None */
    PyObject *on_corruption; /* callable or NULL */
    Py_buffer view;          /* SRC_BUFFER, while view.obj != NULL */
    int fd;                  /* SRC_FD */
    PyObject *file;          /* SRC_FILE */
    int seekable;            /* SRC_FD, SRC_FILE: can read at any offset */
    uint64_t base;           /* SRC_FILE: object position of log offset 0 */
    uint64_t file_pos;       /* log offset a sequential source is at */
    uint8_t *block;          /* SRC_FD, SRC_FILE: the block fed to core */
    size_t block_len;
    uint64_t block_offset;
    int finished;    /* no more records, ever */
    int warned_tail; /* a torn tail no writer leaves was warned of */
    int warned_gone; /* a followed file shrank or was replaced: warned */
    int arrow_spent; /* an Arrow stream export was read to the end */
    int in_callback; /* on_corruption is running (events still queued) */
    int closed;
    int has_last;
    uint64_t last_record_offset;
    uint64_t dropped_bytes;
    PyObject *assembly; /* bytes a fragmented record is built in, */
    uint8_t *scratch;   /* or this, when in_scratch */
    size_t scratch_cap;
    int in_scratch;
    size_t last_len, prev_len; /* the last two such records' lengths */
    PyThreadState *released;   /* the GIL's saved state while the core runs
                                  without it, else NULL */
    /* While an Arrow batch is filled (reader_arrow.c), fragmented records
     * are assembled through redirect, in the batch's own buffer; in_redirect
     * says the record being assembled is there (llpy_reader_redirect). */
    llog_reserve_fn redirect;
    void *redirect_ctx;
    int in_redirect;
#ifdef LLPY_IN_PLACE_BLOCKS
    /* Blocks read in place (reader_fill.c), waiting to be fed: each one a
     * header here and its payload where its record is assembled. */
    uint8_t in_place_head[LLPY_IN_PLACE_BLOCKS][LLOG_HEADER_SIZE];
    int in_place_next, in_place_left;
    uint64_t in_place_offset; /* file offset of the next one */
    uint8_t *in_place_body;   /* its payload */
#endif
    uint64_t blocks_in_place; /* fed so, for tests (reader_testing.c) */
    uint64_t blocks_bounced;  /* of those, read through the block buffer */
    /* Other dialects */
    llog_dialect dialect;
    int has_log_number, recycled; /* the core's, kept when it is freed */
    uint64_t log_number;
    llpy_meta meta; /* what metadata records said (reader_dialect.c) */
    /* A source given as a URL: its storage_options (None or a mapping), kept
     * for pickling; a file object opened for it is then the reader's own,
     * closed with it. NULL for every other source. */
    PyObject *storage_options;
    /* SRC_FD over a path: the path made absolute (bytes, NULL for a URL), to
     * tell whether another file is there now; and how far into the file
     * data was read, to tell whether it shrank (llpy_reader_source_change). */
    PyObject *abs_path;
    uint64_t seen_end;
};

/* reader.c: no more records, ever (a buffer source is let go). */
void llpy_reader_finish(llpy_reader *self);

/* reader_damage.c: a CORRUPTION event (or a torn EOF whose verdict is to
 * stop or fail) reported and its verdict acted on: 1 to keep reading, 0 to
 * end iteration cleanly, -1 with an exception set. And the end of the data
 * fed so far, once it is believed: a torn tail is reported and acted on
 * when the verdict on it says so; otherwise a buffer, which never grows,
 * is finished (an exception may be set: check PyErr_Occurred). */
int llpy_reader_on_damage(llpy_reader *self, llpy_state *st,
                          const llog_event *ev);
void llpy_reader_on_end(llpy_reader *self, llpy_state *st,
                        const llog_event *ev);

/* reader_open.c: tp_init. */
int llpy_reader_init(PyObject *op, PyObject *args, PyObject *kwds);

/* reader_assembly.c: the core's reserve callback (llog_reserve_fn, ctx the
 * reader); the record it finished assembling as a bytes object (NULL with
 * an exception set); the same left in place for an Arrow batch (ev->data
 * set to where it is); the length of the last fragmented record this
 * reader (or, before its first, any reader) assembled: a guess of the next
 * one's; freeing the assembly buffers. */
uint8_t *llpy_assembly_reserve(void *ctx, size_t len, size_t need,
                               size_t *cap);
PyObject *llpy_assembly_take(llpy_reader *self, size_t len);
void llpy_assembly_view(llpy_reader *self, llog_event *ev);
size_t llpy_reader_assembly_hint(llpy_reader *self);
void llpy_assembly_free(llpy_reader *self);

/* reader_fill.c: feeds the core the block it wants (llog_reader_wanted);
 * 0, or -1 with an exception set. */
int llpy_reader_fill(llpy_reader *self);
/* reader_fill.c: what became of a followed file at its end: the same,
 * shrunk below the reader's position (*size its size now), or replaced by
 * another file at its path. */
enum llpy_source_change {
    LLPY_SOURCE_SAME,
    LLPY_SOURCE_SHRANK,
    LLPY_SOURCE_REPLACED
};
enum llpy_source_change llpy_reader_source_change(llpy_reader *self,
                                                  uint64_t *size);

#endif /* LLPY_READER_INTERNAL_H */
