/*
 * writer.h - the Writer as the binding's other files see it: an opaque
 * type, the default buffer size, and the module functions the Writer's
 * files define. Its fields are writer.c's alone; the parts it holds keep
 * theirs in their own files, behind writer_output.h, writer_sync.h,
 * writer_policy.h and writer_dialect.h, and writer.c reaches writer_write.c
 * and writer_open.c through writer_internal.h.
 */
#ifndef LLPY_WRITER_H
#define LLPY_WRITER_H

#include "module.h"

typedef struct llpy_writer llpy_writer;

/* Bytes a Writer buffers unless told otherwise (DEFAULT_BUFFER_SIZE). */
#define LLPY_DEFAULT_BUFFER (64 * 1024)

/* _append_point(path, *, dialect, log_number): where mode "a" would resume
 * and why, nothing cut: (cut, fresh, clean, damage) (writer_append.c). */
PyObject *llpy_append_point(PyObject *module, PyObject *args,
                            PyObject *kwargs);
/* _lock_fd(fd, name): a Writer's file lock on a descriptor, for the CLI
 * (writer_lock.c). */
PyObject *llpy_lock_fd(PyObject *module, PyObject *const *args,
                       Py_ssize_t nargs);

/* ---- for the test hooks (writer_testing.c) ---------------------------- */

typedef enum {
    LLPY_COUNT_SYNC_WAITERS, /* threads in a group commit */
    LLPY_COUNT_SYNC_FLUSHES, /* fdatasync calls group commits made */
    LLPY_COUNT_RANGE_SYNCS,  /* write-backs started by bytes_per_sync */
    LLPY_COUNT_BOUNCED       /* payloads copied through the bounce buffer */
} llpy_writer_counter;

/* One counter of w, read under its lock: 0, or -1 with an exception
 * (writer.c). */
int llpy_writer_count(llpy_writer *w, llpy_writer_counter which,
                      uint64_t *out);
/* The callable a group commit's leader calls before its fdatasync, without
 * the lock (NULL: none); 0, or -1 with an exception (writer.c, into
 * writer_sync.c's group). */
int llpy_writer_set_before_sync(llpy_writer *w, PyObject *hook);
/* The hooks as private module functions _test_<name>. */
extern PyMethodDef llpy_writer_testing_methods[];

#endif /* LLPY_WRITER_H */
