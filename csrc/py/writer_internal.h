/*
 * writer_internal.h - what writer.c (the type, which keeps the Writer's
 * fields) asks of the Writer's other files, as functions: the calls that
 * write records (writer_write.c) and the opening of the target
 * (writer_open.c). They get the parts of the Writer they work on as
 * arguments and never see the Writer; each part keeps its state in its own
 * .c file: the way out in writer_output.c, the group commit in
 * writer_sync.c, the policy in writer_policy.c, the dialect in
 * writer_dialect.c. Every other file goes through writer.h.
 */
#ifndef LLPY_WRITER_INTERNAL_H
#define LLPY_WRITER_INTERNAL_H

#include "lock.h"
#include "module.h"
#include "writer.h"
#include "writer_dialect.h"
#include "writer_output.h"
#include "writer_sync.h"

/* ---- writing records (writer_write.c) --------------------------------- */

/* The Writer's options its calls go by (`opts`). */
#define LLPY_WRITE_SYNC 1     /* sync=True: a call is durable unless told */
#define LLPY_WRITE_COMPRESS 2 /* records are stored as zstd frames */

/* The methods write(), write_many(), flush() and sync(), on the Writer's
 * lock, output and group commit (op: the Writer, for its module state). */
PyObject *llpy_writer_write(llpy_lock *lock, llpy_output *out,
                            llpy_sync_group *g, int opts,
                            PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
PyObject *llpy_writer_write_many(PyObject *op, llpy_lock *lock,
                                 llpy_output *out, llpy_sync_group *g,
                                 int opts, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames);
PyObject *llpy_writer_flush(llpy_lock *lock, llpy_output *out,
                            llpy_sync_group *g);
PyObject *llpy_writer_sync(llpy_lock *lock, llpy_output *out,
                           llpy_sync_group *g);

/* ---- the target (writer_open.c) --------------------------------------- */

#define LLPY_OPEN_LOCK 1    /* lock=True: the file lock on a path */
#define LLPY_OPEN_CLOSEFD 2 /* closefd=True: a file object closed with it */

/* The target (a path, a file object or a URL) opened in `mode` ('w', 'a',
 * 'x') and handed to out, where the log goes on from ("w" truncates once
 * locked; "a" resumes as writer_append.c says, in the dialect). *name is
 * the target as given (a new reference, or NULL), *dir_fd a new log's
 * directory (-1: none), both set even on failure. 0, or -1 with an
 * exception. */
int llpy_writer_open_target(llpy_output *out, llpy_writer_dialect *dialect,
                            llpy_state *st, PyObject *target, char mode,
                            int flags, PyObject *storage_options,
                            PyObject **name, int *dir_fd);
/* The mode argument ("w", "a", "x") and the buffering argument (-1, 0 or a
 * size up to LLPY_MAX_BUFFER), parsed as Writer() takes them. */
#define LLPY_MAX_BUFFER (1 << 30)
int llpy_writer_parse_mode(PyObject *mode, char *out);
int llpy_writer_parse_buffering(PyObject *obj, size_t *limit);

#endif /* LLPY_WRITER_INTERNAL_H */
