/*
 * lock.c - the per-object lock of Readers and Writers, fork handling, and
 * the tp_new both types share (it makes the lock).
 *
 * Readers and writers may be shared by threads: each call holds the object's
 * lock. A call made from inside the object's own callbacks (a file object
 * method, on_corruption) on the same thread is refused instead of
 * deadlocking.
 *
 * With the GIL, every look at the lock happens with the GIL held, so a plain
 * flag is enough; only a thread that must wait sleeps on a semaphore, and
 * the uncontended case costs no system call. Without the GIL (free-threaded
 * builds), a PyMutex does the same job.
 *
 * A thread holding the lock when the process forks does not exist in the
 * child: the child handler bumps a generation, and a lock taken in an older
 * generation is known to be stale and taken over.
 */
#include "binding.h"

#include <string.h>
#ifndef _WIN32
#include <pthread.h>
#endif

static unsigned long fork_generation = 1;

#ifndef _WIN32
static void after_fork_in_child(void) { fork_generation++; }
#endif

void llpy_fork_register(void) {
#ifndef _WIN32
    static int registered;
    if (!registered && pthread_atfork(NULL, NULL, after_fork_in_child) == 0)
        registered = 1;
#endif
}

int llpy_lock_init(llpy_lock *l) {
    memset(l, 0, sizeof *l);
#ifndef Py_GIL_DISABLED
    l->wake = PyThread_allocate_lock();
    if (l->wake == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyThread_acquire_lock(l->wake, WAIT_LOCK); /* waiters block on it */
#endif
    return 0;
}

static int lock_reentrant(llpy_lock *l) {
    if (l->owner == PyThread_get_thread_ident() &&
        l->generation == fork_generation) {
        PyErr_SetString(PyExc_RuntimeError,
                        "reentrant call on the same log object");
        return 1;
    }
    return 0;
}

int llpy_lock_acquire(llpy_lock *l) {
#ifdef Py_GIL_DISABLED
    /* owner only ever equals this thread's id if this thread set it. */
    if (lock_reentrant(l))
        return -1;
    PyMutex_Lock(&l->mutex);
#else
    if (l->busy) {
        if (lock_reentrant(l))
            return -1;
        l->waiters++;
        /* A holder from before a fork never releases: take over. */
        while (l->busy && l->generation == fork_generation) {
            Py_BEGIN_ALLOW_THREADS
            PyThread_acquire_lock(l->wake, WAIT_LOCK);
            Py_END_ALLOW_THREADS
        }
        l->waiters--;
    }
    l->busy = 1;
#endif
    l->owner = PyThread_get_thread_ident();
    l->generation = fork_generation;
    return 0;
}

void llpy_lock_release(llpy_lock *l) {
    l->owner = 0;
#ifdef Py_GIL_DISABLED
    PyMutex_Unlock(&l->mutex);
#else
    l->busy = 0;
    if (l->waiters > 0)
        PyThread_release_lock(l->wake); /* each waiter re-checks busy */
#endif
}

void llpy_lock_free(llpy_lock *l) {
#ifndef Py_GIL_DISABLED
    if (l->wake != NULL)
        PyThread_free_lock(l->wake);
    l->wake = NULL;
#else
    (void)l;
#endif
}

PyObject *llpy_new_object(PyTypeObject *type, size_t lock_at, size_t fd_at) {
    PyObject *self = type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    char *base = (char *)self;
    *(int *)(base + fd_at) = -1;
    if (llpy_lock_init((llpy_lock *)(base + lock_at)) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}
