/*
 * reader_dialect.h - the Reader's RocksDB and Pebble side (reader_dialect.c):
 * what a reader learns from a log's metadata records and needs to decode a
 * compressed WAL, kept in a struct of its own that the Reader points to. The
 * dialect and log_number options are log_options.h's.
 */
#ifndef LLPY_READER_DIALECT_H
#define LLPY_READER_DIALECT_H

#include "log_options.h"
#include "module.h"

/* Loads a zstd binding (leveldb_log._zstd.require); 0, or -1 with the
 * error that names the extra to install. */
int llpy_zstd_require(void);

/* What a Reader learnt from metadata records, and its zstd decoder: a
 * struct only reader_dialect.c sees. */
typedef struct llpy_meta llpy_meta;

/* An empty one (NULL with MemoryError), and its end (NULL: a no-op). */
llpy_meta *llpy_meta_new(void);
void llpy_meta_free(llpy_meta *m);
/* Sets up m afresh for a new log (0, or -1 with an exception set) and the
 * core's decoder of compressed records to m's. */
int llpy_meta_init(llpy_meta *m, llog_reader_options *opt);
int llpy_meta_traverse(llpy_meta *m, visitproc visit, void *arg);
void llpy_meta_clear(llpy_meta *m);
/* Takes in what a META event states; 0, or -1 with an exception set. */
int llpy_meta_on_event(llpy_meta *m, const llog_event *ev);
/* The properties compression, timestamp_sizes and predecessor. */
PyObject *llpy_meta_compression(const llpy_meta *m);
PyObject *llpy_meta_timestamp_sizes(const llpy_meta *m);
PyObject *llpy_meta_predecessor(const llpy_meta *m);

#endif /* LLPY_READER_DIALECT_H */
