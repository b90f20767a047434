/*
 * writer_policy.h - a Writer's durability options besides group commit
 * (writer_policy.c): bytes_per_sync= and preallocate= and what they have
 * done so far, in a struct only writer_policy.c sees; and the opening of a
 * path and of a new log's directory.
 */
#ifndef LLPY_WRITER_POLICY_H
#define LLPY_WRITER_POLICY_H

#include "module.h"

typedef struct llpy_policy llpy_policy;

/* A policy with every option off; NULL with MemoryError. */
llpy_policy *llpy_policy_new(void);
void llpy_policy_free(llpy_policy *p);
/* sync=, bytes_per_sync= and preallocate= of Writer(), before opening:
 * the first into *sync_default, the others into p. 0, or -1 with an
 * exception set. */
int llpy_policy_options(llpy_policy *p, PyObject *target, PyObject *sync,
                        PyObject *bytes_per_sync, PyObject *preallocate,
                        int *sync_default);
/* The log on fd (-1: none) starts at `at`: the first reservation. */
void llpy_policy_start(llpy_policy *p, int fd, uint64_t at);
/* After bytes reached fd up to `at` (the Writer's lock held, safe without
 * the GIL): starts write-back every bytes_per_sync bytes, reserves space
 * ahead. */
void llpy_policy_after_output(llpy_policy *p, int fd, uint64_t at);
/* Before fd closes: gives back the space reserved past the end, while the
 * file lock (`locked`) keeps other writers out. */
void llpy_policy_release(llpy_policy *p, int fd, int locked);
/* The options, and the write-backs started (for the test hooks). */
uint64_t llpy_policy_bytes_per_sync(const llpy_policy *p);
uint64_t llpy_policy_preallocate(const llpy_policy *p);
uint64_t llpy_policy_range_syncs(const llpy_policy *p);

/* Opens a path for the Writer without truncating it: *created says
 * whether this call made the file; -1 with an exception set. */
int llpy_policy_open(llpy_state *st, PyObject *path, int flags, int *created);
/* The directory of a new log at `path`, opened to be synced with the first
 * flush: *dir_fd (-1 when it cannot be opened). 0, or -1 with an
 * exception set. */
int llpy_policy_open_dir(PyObject *path, int *dir_fd);

#endif /* LLPY_WRITER_POLICY_H */
