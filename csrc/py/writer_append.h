/*
 * writer_append.h - mode "a" on an open path (writer_append.c): where the
 * log resumes. Holds no Writer state.
 */
#ifndef LLPY_WRITER_APPEND_H
#define LLPY_WRITER_APPEND_H

#include "module.h"

#include "log_reader.h"

/* Where the log on fd resumes and whether a block must be started; the log
 * cut back to *offset. `dialect` holds the log's dialect and log number
 * (llpy_dialect_options). 0, or -1 with an exception (CorruptionError when
 * the file is no log to append to, which is then left as it was). */
int llpy_append_open(llpy_state *st, int fd, PyObject *name,
                     const llog_reader_options *dialect, uint64_t *offset,
                     int *fresh_block);

#endif /* LLPY_WRITER_APPEND_H */
