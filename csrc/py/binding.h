/*
 * binding.h - the Reader (reader*.c): its fields and the functions its
 * files share. What the whole binding shares is module.h's.
 */
#ifndef LLPY_BINDING_H
#define LLPY_BINDING_H

#include "lock.h"
#include "module.h"

#include <stdint.h>

#include "log_reader.h"

/* ---- the Reader (reader*.c) ------------------------------------------- */

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

typedef struct llpy_reader {
    PyObject_HEAD llog_reader *core;
    llpy_lock lock;
    enum llpy_source_kind kind;
    llog_recovery recovery;
    int verify_checksums;
    uint64_t start, end;
    PyObject *name;          /* the path or source object, for repr */
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
    uint64_t blocks_in_place; /* fed so, for tests (_blocks_in_place) */
    uint64_t blocks_bounced;  /* of those, read through the block buffer */
    /* Other dialects (reader_dialect.c) */
    llog_dialect dialect;
    int has_log_number, recycled; /* the core's, kept when it is freed */
    uint64_t log_number;
    int compression;           /* 1: the records are zstd frames */
    PyObject *timestamp_sizes; /* dict: column family -> size */
    PyObject *predecessor;     /* Predecessor, or NULL */
    PyObject *decompressor;    /* the current record's frame decoder */
    PyObject *decoded;         /* bytes it returned last (the core's) */
    /* A source given as a URL: its storage_options (None or a mapping), kept
     * for pickling; a file object opened for it is then the reader's own,
     * closed with it. NULL for every other source. */
    PyObject *storage_options;
} llpy_reader;

/* tp_init and tp_iternext of the Reader (reader.c), for its slots
 * (reader_type.c). */
int llpy_reader_init(PyObject *op, PyObject *args, PyObject *kwds);
PyObject *llpy_reader_iternext(PyObject *op);
/* 0, or -1 with ValueError for a closed reader. */
static inline int llpy_reader_check_open(llpy_reader *self) {
    if (self->closed) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on closed reader");
        return -1;
    }
    return 0;
}
/* Feeds the core the block it wants (llog_reader_wanted); 0, or -1 with an
 * exception set (reader_fill.c). */
int llpy_reader_fill(llpy_reader *self);
/* The length of the last fragmented record this reader (or, before its
 * first, any reader) assembled: a guess of the next one's. */
size_t llpy_reader_assembly_hint(llpy_reader *self);
/*
 * Fragmented records assembled through fn (with ctx: the Arrow batch being
 * filled makes room in its data, reader_arrow.c) instead of in a bytes
 * object, from the next record on, until llpy_reader_redirect_end. The end
 * moves a record still being assembled there (and payloads read in place
 * for it) to the scratch buffer, as the batch is about to be handed out;
 * so does giving up the lock for a callback, which takes the redirect up
 * again after it. Both with the lock held. End returns 0, or -1 with
 * MemoryError (the reader is then finished).
 */
void llpy_reader_redirect(llpy_reader *self, llog_reserve_fn fn, void *ctx);
int llpy_reader_redirect_end(llpy_reader *self);

/* reader_dialect.c: sets the core's decoder of compressed records to this
 * reader's. */
void llpy_dialect_decoder(llpy_reader *self, llog_reader_options *opt);
/* Takes in what a META event states; 0, or -1 with an exception set. */
int llpy_reader_on_meta(llpy_reader *self, const llog_event *ev);
PyObject *llpy_reader_get_dialect(PyObject *op, void *closure);
PyObject *llpy_reader_get_log_number(PyObject *op, void *closure);
PyObject *llpy_reader_get_compression(PyObject *op, void *closure);
PyObject *llpy_reader_get_timestamp_sizes(PyObject *op, void *closure);
PyObject *llpy_reader_get_predecessor(PyObject *op, void *closure);
PyObject *llpy_reader_get_recycled(PyObject *op, void *closure);

/* Reader.__reduce__ and Reader._restore (reader_pickle.c). */
PyObject *llpy_reader_reduce(PyObject *op, PyObject *unused);
PyObject *llpy_reader_restore(PyObject *op, PyObject *args);

#endif /* LLPY_BINDING_H */
