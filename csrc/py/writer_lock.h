/*
 * writer_lock.h - one Writer per file (writer_lock.c): the exclusive
 * advisory lock on a log file. Holds no Writer state.
 */
#ifndef LLPY_WRITER_LOCK_H
#define LLPY_WRITER_LOCK_H

#include "module.h"

/* The exclusive advisory lock on a log file, taken before anything is cut:
 * 1, or 0 for a file that is no regular file (not locked), or -1 with
 * LogLockedError (or OSError) naming `name`. */
int llpy_file_lock(llpy_state *st, int fd, PyObject *name);
void llpy_file_unlock(int fd);

#endif /* LLPY_WRITER_LOCK_H */
