/*
 * writer.h - the Writer as the binding's other files see it: an opaque
 * type, the default buffer size, and the module functions the Writer's
 * files define. Its fields are writer_internal.h's, for writer*.c alone.
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

#endif /* LLPY_WRITER_H */
