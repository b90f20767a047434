/*
 * arrow.h - the Arrow C data interface and C stream interface (the ABI
 * structs exactly as the Arrow specification defines them), and what the
 * binding's Arrow files share: arrow_cols.c holds a batch's columns and
 * exports them, reader_arrow.c fills them from a Reader as batches and
 * streams, writer_arrow.c imports binary and string arrays for
 * Writer.write_many. No pyarrow is needed: objects travel as PyCapsules
 * named "arrow_schema", "arrow_array" and "arrow_array_stream".
 */
#ifndef LLPY_ARROW_H
#define LLPY_ARROW_H

#include "log_writer.h" /* LLOG_WRITER_RUN */
#include "module.h"

#include <stdint.h>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ---- a batch's columns (arrow_cols.c) --------------------------------- */

/* The types a batch's columns are exported in (iter_batches' offset_type
 * and data_type): bits of an unsigned. The offsets are the same bits
 * either way (file offsets stay far below 2**63); a binary column's ends
 * are narrowed to 32 bits once the batch is full (llpy_cols_finish). */
#define LLPY_COLS_INT64_OFFSETS 1u /* "l" instead of "L" */
#define LLPY_COLS_BINARY 2u        /* "z" instead of "Z" */
/* What a record adds to a batch besides its payload: its offset and the
 * end of its payload, 8 bytes each (4 for the end in a binary column; see
 * llpy_cols_row_bytes). A batch's size (nbytes, max_bytes) is its payloads
 * plus this for each record, as pyarrow counts it. */
#define LLPY_COLS_ROW_BYTES 16

/* Where the module keeps the columns of released batches for the next
 * batches of any iterator (arrow_cols.c has its fields): their pages are
 * already in memory, where fresh ones cost a page fault and zeroing each.
 * Shared by the module, the iterators and every batch they made (one
 * reference each). */
typedef struct cols_spare cols_spare;

/* The columns of one batch. Released from any thread (an Arrow
 * consumer's), hence the atomic counts and the C allocator. */
typedef struct arrow_cols {
    long refs;
    size_t n, cap_n, cap_off; /* rows: held, and room in ends and offsets */
    uint64_t *offsets;        /* the offset column */
    int64_t *ends;            /* large_binary offsets: n + 1 of them */
    uint8_t *data;
    size_t len, cap_len;
    size_t cap_limit;  /* grow data no further unless a record needs it (a
                          batch's max_bytes and a block), or 0 */
    size_t rows_limit; /* the most rows a batch holds, or 0 */
    unsigned types;    /* LLPY_COLS_*: ends are 32-bit once BINARY is set */
    cols_spare *spare; /* where they go when released, or NULL */
} arrow_cols;

static inline size_t llpy_cols_row_bytes(unsigned types) {
    return types & LLPY_COLS_BINARY ? 12 : LLPY_COLS_ROW_BYTES;
}

/* A keeper with one reference, or NULL with MemoryError; its references. */
cols_spare *llpy_cols_spare_new(void);
void llpy_cols_spare_ref(cols_spare *sp);
void llpy_cols_spare_unref(cols_spare *sp);
/* Empty columns (one reference) that go to sp when released (sp may be
 * NULL): sp's kept ones if any, else new; or NULL with MemoryError. */
arrow_cols *llpy_cols_new(cols_spare *sp);
/* Drops a reference: the last one gives the columns to their keeper, or
 * frees them. */
void llpy_cols_unref(arrow_cols *c);
/* Room for one more row, or for n more bytes of data; 0, or -1 (no
 * exception; nothing changed). */
int llpy_cols_grow_rows(arrow_cols *c);
int llpy_cols_grow_data(arrow_cols *c, size_t n);
/* The reader's redirect (llpy_reader_redirect, ctx: the columns): a
 * fragmented record is assembled at the end of the data. */
uint8_t *llpy_cols_reserve(void *ctx, size_t len, size_t need, size_t *cap);
/* Appends one record (a fragmented one may be in its place already); 0, or
 * -1 with MemoryError. */
int llpy_cols_append(arrow_cols *c, const llog_event *ev);
/* Sets the column types once the batch is full (LLPY_COLS_*). */
void llpy_cols_finish(arrow_cols *c, unsigned types);
/* The batches' schema, and a batch as a struct array (a reference taken);
 * 0, or ENOMEM (no exception). */
int llpy_cols_schema_export(struct ArrowSchema *out, unsigned types);
int llpy_cols_array_export(arrow_cols *c, struct ArrowArray *out);
/* The same in "arrow_schema" and "arrow_array" capsules; NULL with an
 * exception set. */
PyObject *llpy_cols_schema_capsule(unsigned types);
PyObject *llpy_cols_array_capsule(arrow_cols *c);

/* ---- export (reader_arrow.c) ------------------------------------------ */

/* Registers the batch types on the module (state in st); 0, or -1. */
int llpy_arrow_add_types(PyObject *module, llpy_state *st);
/* Lets go of the module's kept batch buffers (module clearing). */
void llpy_arrow_clear(llpy_state *st);
/* Reader.iter_batches(max_records=65536, max_bytes=1 MiB). */
PyObject *llpy_reader_iter_batches(PyObject *reader, PyObject *args,
                                   PyObject *kwds);
/* Reader.__arrow_c_stream__(requested_schema=None). */
PyObject *llpy_reader_arrow_stream(PyObject *reader, PyObject *args,
                                   PyObject *kwds);
/* Reader.to_arrow(offset_type="uint64", data_type="large_binary"). */
PyObject *llpy_reader_to_arrow(PyObject *reader, PyObject *args,
                               PyObject *kwds);

/* ---- import (writer_arrow.c) ------------------------------------------ */

/* 1 when obj exports __arrow_c_array__ or __arrow_c_stream__, else 0. */
int llpy_arrow_exportable(PyObject *obj);

/* Arrow data taken from an object, checked whole: every value can be
 * written (no nulls, a binary or string type, sane offsets). */
typedef struct llpy_arrow_data llpy_arrow_data;

/* Takes obj's Arrow data (its stream read to the end, or its array), or
 * NULL with an exception set: TypeError naming a type that is not binary,
 * large_binary, string or large_string; ValueError for nulls. */
llpy_arrow_data *llpy_arrow_import(PyObject *obj);

/* Values handed to an llpy_arrow_put_fn at a time, at most. */
#define LLPY_ARROW_GROUP LLOG_WRITER_RUN

/* What writes n records (data[i], len[i] bytes): 0, or -1 with an
 * exception set (the records before the failing one are written). */
typedef int (*llpy_arrow_put_fn)(void *ctx, const uint8_t *const *data,
                                 const size_t *len, size_t n);

/* Passes every value to put, in order, in groups: the count, or -1 when
 * put failed (the values before it were passed). */
Py_ssize_t llpy_arrow_write(const llpy_arrow_data *d, llpy_arrow_put_fn put,
                            void *ctx);
void llpy_arrow_free(llpy_arrow_data *d);

#endif /* LLPY_ARROW_H */
