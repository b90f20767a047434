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
 * builds), the same scheme runs on atomics, with the generation below as the
 * lock word.
 *
 * A thread holding the lock when the process forks does not exist in the
 * child: the child handler bumps a generation, and a lock taken in an older
 * generation is known to be stale and taken over. Without the GIL, taking
 * the lock and recording the generation are one compare-and-swap: a PyMutex
 * is held for a while before anything can say in which process, and one
 * locked before a fork would stay locked in the child for good.
 */
#include "lock.h"

#include <string.h>
#ifndef _WIN32
#include <pthread.h>
#endif

static unsigned long fork_generation = 1;

#ifndef _WIN32
static void after_fork_in_child(void) { fork_generation++; }
#endif

unsigned long llpy_fork_generation(void) { return fork_generation; }

void llpy_fork_register(void) {
#ifndef _WIN32
    static int registered;
    if (!registered && pthread_atfork(NULL, NULL, after_fork_in_child) == 0)
        registered = 1;
#endif
}

/* Without the GIL, threads that do not hold the lock read owner and
 * generation; the lock word's loads are sequentially consistent for the
 * waiters' handshake in llpy_lock_release. */
#ifdef Py_GIL_DISABLED
#define OWNER_LOAD(l) _Py_atomic_load_ulong_relaxed(&(l)->owner)
#define OWNER_STORE(l, v) _Py_atomic_store_ulong_relaxed(&(l)->owner, (v))
#define GENERATION_LOAD(l) _Py_atomic_load_ulong(&(l)->generation)
#else
#define OWNER_LOAD(l) ((l)->owner)
#define OWNER_STORE(l, v) ((l)->owner = (v))
#define GENERATION_LOAD(l) ((l)->generation)
#endif

int llpy_lock_init(llpy_lock *l) {
    memset(l, 0, sizeof *l);
    l->wake = PyThread_allocate_lock();
    if (l->wake == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyThread_acquire_lock(l->wake, WAIT_LOCK); /* waiters block on it */
    return 0;
}

static int lock_reentrant(llpy_lock *l) {
    if (OWNER_LOAD(l) == PyThread_get_thread_ident() &&
        GENERATION_LOAD(l) == fork_generation) {
        PyErr_SetString(PyExc_RuntimeError,
                        "reentrant call on the same log object");
        return 1;
    }
    return 0;
}

#ifdef Py_GIL_DISABLED
/* Takes the lock if it is free (generation 0) or was taken before a fork (an
 * older generation, whose holder does not exist here). Taking it and saying
 * in which generation are one compare-and-swap, so no thread can see it held
 * by nobody known, nor two threads take over the same stale lock. */
static int lock_take(llpy_lock *l) {
    unsigned long seen = GENERATION_LOAD(l);
    if (seen == fork_generation)
        return 0;
#if SIZEOF_LONG == 8
    uint64_t expected = seen;
    return _Py_atomic_compare_exchange_uint64((uint64_t *)&l->generation,
                                              &expected, fork_generation);
#else
    uint32_t expected = seen;
    return _Py_atomic_compare_exchange_uint32((uint32_t *)&l->generation,
                                              &expected, fork_generation);
#endif
}

static int lock_acquire_atomic(llpy_lock *l) {
    if (!lock_take(l)) {
        if (lock_reentrant(l))
            return -1;
        /* Counted before looking again: see llpy_lock_release. */
        _Py_atomic_add_int(&l->waiters, 1);
        while (!lock_take(l)) {
            Py_BEGIN_ALLOW_THREADS
            PyThread_acquire_lock(l->wake, WAIT_LOCK);
            Py_END_ALLOW_THREADS
        }
        _Py_atomic_add_int(&l->waiters, -1);
    }
    OWNER_STORE(l, PyThread_get_thread_ident());
    return 0;
}
#endif

int llpy_lock_acquire(llpy_lock *l) {
#ifdef Py_GIL_DISABLED
    return lock_acquire_atomic(l);
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
    l->owner = PyThread_get_thread_ident();
    l->generation = fork_generation;
    return 0;
#endif
}

void llpy_lock_release(llpy_lock *l) {
    OWNER_STORE(l, 0);
#ifdef Py_GIL_DISABLED
    /* Freed, then the waiters counted, both sequentially consistent: a
     * waiter counted too late to be woken sees the lock free instead. */
    _Py_atomic_store_ulong(&l->generation, 0);
    if (_Py_atomic_load_int(&l->waiters) > 0)
        PyThread_release_lock(l->wake); /* each waiter tries again */
#else
    l->busy = 0;
    if (l->waiters > 0)
        PyThread_release_lock(l->wake); /* each waiter re-checks busy */
#endif
}

void llpy_lock_free(llpy_lock *l) {
    if (l->wake != NULL)
        PyThread_free_lock(l->wake);
    l->wake = NULL;
}

PyObject *llpy_lock_new_object(PyTypeObject *type, size_t lock_at) {
    PyObject *self = type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    if (llpy_lock_init((llpy_lock *)((char *)self + lock_at)) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}
