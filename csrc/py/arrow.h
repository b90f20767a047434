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

/* The columns of one batch, in a struct of arrow_cols.c's own. Released
 * from any thread (an Arrow consumer's). */
typedef struct arrow_cols arrow_cols;

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
/* Rows held; bytes of data held; the batch's size as pyarrow counts it
 * (its payloads, and llpy_cols_row_bytes a row); the column types it was
 * finished in (LLPY_COLS_*). */
size_t llpy_cols_rows(const arrow_cols *c);
size_t llpy_cols_data_len(const arrow_cols *c);
size_t llpy_cols_nbytes(const arrow_cols *c);
unsigned llpy_cols_types(const arrow_cols *c);
/* Limits a batch being filled: at most max_records rows (as many as
 * max_bytes leaves room for, at per_row bytes each, and one past it), its
 * data grown no further than max_bytes and a block unless a record needs
 * it. */
void llpy_cols_limit(arrow_cols *c, size_t max_records, size_t max_bytes,
                     size_t per_row);
/* 1 while a batch has room for another record under those limits. */
int llpy_cols_room(const arrow_cols *c, size_t max_records, size_t max_bytes,
                   size_t per_row);
/* A run of up to `rows` whole records read straight into the columns:
 * room made (rows more, and a block of data) and *run set up for
 * llog_reader_next_run with `budget` payload bytes; 0, or -1 (no
 * exception; nothing changed). Then the run's records counted in. */
int llpy_cols_run_start(arrow_cols *c, size_t rows, size_t budget,
                        llog_run *run);
void llpy_cols_run_end(arrow_cols *c, const llog_run *run);
/* The reader's redirect (llpy_records_redirect, ctx: the columns): a
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

/* The types Batch and BatchIterator, which module.c registers. */
extern PyType_Spec llpy_batch_spec;
extern PyType_Spec llpy_batches_spec;

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
