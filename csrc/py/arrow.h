/*
 * arrow.h - the Arrow C data interface and C stream interface (the ABI
 * structs exactly as the Arrow specification defines them), and what the
 * binding's Arrow files share: reader_arrow.c exports a Reader's records as
 * batches and streams, writer_arrow.c imports binary and string arrays for
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

/* ---- export (reader_arrow.c) ------------------------------------------ */

/* Registers the batch types on the module (state in st); 0, or -1. */
int llpy_arrow_add_types(PyObject *module, llpy_state *st);
/* Lets go of the module's kept batch buffers (module clearing). */
void llpy_arrow_clear(llpy_state *st);
/* Reader.iter_batches(max_records=65536, max_bytes=4 MiB). */
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
