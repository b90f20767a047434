/*
 * writer_sync.h - a Writer's group commit (writer_sync.c): durable calls
 * wait in one group that leads one fdatasync at a time, in a struct only
 * writer_sync.c sees. It works on the Writer's lock and output, given when
 * it is made; it hands the output's buffer over for every other file, so
 * that queued durable records a failed hand-over drops are told to their
 * waiters. It calls no file of the Writer's but writer_output.c.
 */
#ifndef LLPY_WRITER_SYNC_H
#define LLPY_WRITER_SYNC_H

#include "lock.h"
#include "module.h"
#include "writer_output.h"

typedef struct llpy_sync_group llpy_sync_group;

/* The group of a Writer with this lock and output (both borrowed: they
 * outlive it). NULL with MemoryError. */
llpy_sync_group *llpy_sync_group_new(llpy_lock *lock, llpy_output *out);
/* Frees it (a directory still open closed); NULL is a no-op. */
void llpy_sync_group_free(llpy_sync_group *g);
/* tp_traverse and tp_clear of what the group holds. */
int llpy_sync_group_traverse(llpy_sync_group *g, visitproc visit, void *arg);
void llpy_sync_group_clear(llpy_sync_group *g);
/* The log's name (for errors) and, for a new log, its directory's
 * descriptor (-1: none), the group's from now on: synced once with the
 * first flush, then closed. */
void llpy_sync_set_target(llpy_sync_group *g, PyObject *name, int dir_fd);

/* Hands the output's buffer over (lock held); a failure that drops the
 * records of queued durable write() calls makes each of them raise its
 * error. 0, or -1 with an exception set. */
int llpy_sync_hand_over(llpy_sync_group *g);
/* The same, only when queued durable write() calls left records buffered:
 * before a record that must not fall with them if that hand-over fails,
 * and by the next leader. */
int llpy_sync_hand_over_queued(llpy_sync_group *g);
/* What llpy_sync_hand_over does after a hand-over of the output's that
 * returned rc (for one made by llpy_output_write or llpy_output_finish);
 * returns rc. */
int llpy_sync_after_hand_over(llpy_sync_group *g, int rc);

/* Whether a durable write() may leave its record buffered (lock held):
 * a flush is in flight, and the next leader hands over what it finds. */
int llpy_sync_defers(llpy_sync_group *g);
/* Waits until the log is durable up to `end` (lock not held): leads a
 * group flush or waits for one. 0, or -1 with an exception set. */
int llpy_sync_wait(llpy_sync_group *g, uint64_t end);
/* The same, with the lock held on entry (given up on return): a record
 * left buffered is then never out of the group's sight. */
int llpy_sync_wait_locked(llpy_sync_group *g, uint64_t end);
/* close(): waits for a group commit in flight (lock held on entry and on
 * return, given up while waiting), then lets the directory go. */
int llpy_sync_close(llpy_sync_group *g);

/* For the test hooks (lock held): threads in a group commit and the
 * fdatasync calls made; the callable a leader calls before its fdatasync,
 * without the lock (NULL: none), swapped in: the old one is returned. */
void llpy_sync_counts(llpy_sync_group *g, uint64_t *waiters,
                      uint64_t *flushes);
PyObject *llpy_sync_swap_hook(llpy_sync_group *g, PyObject *hook);

#endif /* LLPY_WRITER_SYNC_H */
