/*
 * lock.h - the lock every Reader and Writer holds through each call, which
 * survives a fork, and the tp_new both types share (lock.c).
 */
#ifndef LLPY_LOCK_H
#define LLPY_LOCK_H

#include "module.h"

#include <pythread.h>

typedef struct llpy_lock {
    PyThread_type_lock wake; /* held while nobody waits; released to wake */
#ifndef Py_GIL_DISABLED
    int busy; /* without the GIL, generation is 0 while free instead */
#endif
    int waiters;
    unsigned long owner;
    unsigned long generation; /* fork generation it was taken in */
} llpy_lock;

void llpy_fork_register(void);
/* Which process this is: bumped in a child after fork. */
unsigned long llpy_fork_generation(void);
int llpy_lock_init(llpy_lock *l);
/* 0, or -1 with RuntimeError for a call from the holder's own thread. */
int llpy_lock_acquire(llpy_lock *l);
void llpy_lock_release(llpy_lock *l);
void llpy_lock_free(llpy_lock *l);
/* The start of Reader's and Writer's tp_new: a zeroed object with a fresh
 * lock at lock_at. */
PyObject *llpy_lock_new_object(PyTypeObject *type, size_t lock_at);

#endif /* LLPY_LOCK_H */
