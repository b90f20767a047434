/*
 * writer_dialect.h - a Writer's dialect (writer_dialect.c): the options of
 * RocksDB's and Pebble's logs, in a struct only writer_dialect.c sees, and
 * the records they add to a log, which the Writer buffers.
 */
#ifndef LLPY_WRITER_DIALECT_H
#define LLPY_WRITER_DIALECT_H

#include "module.h"

#include "log_reader.h"
#include "log_writer.h"

typedef struct llpy_writer_dialect llpy_writer_dialect;

/* The most bytes llpy_writer_dialect_start or _finish writes. */
#define LLPY_DIALECT_RECORD_MAX                                               \
    (LLOG_MAX_HEADER_SIZE - 1 + LLOG_RECYCLABLE_HEADER_SIZE)

/* A LevelDB dialect; NULL with MemoryError. */
llpy_writer_dialect *llpy_writer_dialect_new(void);
void llpy_writer_dialect_free(llpy_writer_dialect *d);
/* Checks the options of other dialects before the target is touched; 0,
 * or -1 with an exception set. */
int llpy_writer_dialect_options(llpy_writer_dialect *d, PyObject *target,
                                PyObject *dialect, PyObject *log_number,
                                int recycle, PyObject *compression,
                                int sync_offsets);
/* Mode "a" of a rocksdb writer: refuses to mix compressed and plain
 * records in one log (the log `name` on fd, size bytes long). */
int llpy_writer_dialect_check_append(const llpy_writer_dialect *d, int fd,
                                     uint64_t size, PyObject *name);
/* Once the target is open: sets the core's header; RocksDB's compression
 * record at the start of a new log into dst (LLPY_DIALECT_RECORD_MAX
 * bytes), returning its size (0: none). */
size_t llpy_writer_dialect_start(const llpy_writer_dialect *d,
                                 llog_writer *core, uint8_t *dst);
/* Before closing: Pebble's end-of-log trailer into dst, as _start. */
size_t llpy_writer_dialect_finish(const llpy_writer_dialect *d,
                                  llog_writer *core, uint8_t *dst);
/* A record's bytes as one zstd frame (a new bytes object), or NULL. */
PyObject *llpy_writer_compress(const uint8_t *data, size_t n);

/* The options as given: the dialect and log number as a Reader takes
 * them; whether records are zstd frames; the header's size. */
llog_reader_options llpy_writer_dialect_of(const llpy_writer_dialect *d);
int llpy_writer_dialect_compressed(const llpy_writer_dialect *d);
size_t llpy_writer_dialect_header_size(const llpy_writer_dialect *d);

#endif /* LLPY_WRITER_DIALECT_H */
