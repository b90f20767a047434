/*
 * writer_sync.c - durable writes: group commit of fdatasync, fdatasync
 * itself on each system, and the group's hook and counters for tests
 * (writer_testing.c). The other options of durability are writer_policy.c's.
 *
 * Group commit: a durable write hands its records to the OS under the
 * Writer's lock, then asks for the log to be durable up to where they end;
 * a durable write() arriving while a flush is in flight leaves its record in
 * the Writer's buffer instead (llpy_sync_defers), and begins its wait under
 * the same hold of the lock, so that the group always knows of it. (A
 * write() call made while an fdatasync runs waits behind it in the file
 * system, with the GIL held; one write by the next leader serves them all.)
 * A thread whose records no flush in flight covers leads one when none is
 * in flight (group_room): it hands over every record left buffered in one
 * write (group_hand_over), notes the offset written so far (what the flush
 * covers), gives the lock up, and issues one fdatasync without the GIL. Other
 * threads queue, each on its own semaphore. When a flush ends its leader,
 * under the lock again, settles every waiter whose records end within the
 * offset it covered, and wakes the first one no flush in flight covers to lead
 * the next: since that one begins after their records were written, it covers
 * every such thread still queued. So no thread is acknowledged by a flush that
 * began before its record was written, and none waits behind flushes that do
 * not cover it for longer than one.
 *
 * A failed hand-off drops the records left buffered, and each call waiting
 * for one raises its error (group_dropped): a call that raised must not
 * see its record reach the log later.
 *
 * A failed fdatasync fails every waiter and every later sync: the OS may
 * have dropped the dirty pages it could not write, so a later fdatasync
 * that succeeds proves nothing. A leader failing before its fdatasync (an
 * exception) leaves its waiters to lead again.
 */
#include "writer_sync.h"
#include "llpy_io.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

/* A thread waiting in a group commit, on its own stack. */
typedef struct llpy_sync_waiter {
    struct llpy_sync_waiter *next;  /* in the group's queue */
    struct llpy_sync_waiter *chain; /* settled after it: it wakes them */
    PyThread_type_lock wake;        /* released by whoever settles its wait */
    uint64_t end;                   /* log offset its records end at */
    int state;                      /* waiting, done, failed, dropped... */
    int error;                      /* failed or dropped: the errno */
} llpy_sync_waiter;

/* The group commit of one Writer; every field under the Writer's lock. */
struct llpy_sync_group {
    int active;              /* 1 while a leader's flush is in flight */
    uint64_t cover;          /* the offset the last flush started covers */
    uint64_t durable;        /* the offset the last good flush covered */
    int failed;              /* errno of a failed fdatasync: no later */
    llpy_sync_waiter *head;  /* sync can prove anything */
    llpy_sync_waiter *retry; /* woken to lead, not yet running: by next */
    Py_ssize_t queued;
    unsigned long generation; /* the fork generation it was used in */
    uint64_t flushes;         /* fdatasync calls made, for tests */
    PyObject *before_sync;    /* the test hook (writer_testing.c) */
    llpy_lock *lock;          /* the Writer's (borrowed) */
    llpy_output *out;         /* the Writer's way out (borrowed) */
    PyObject *name;           /* the log's, for errors (or NULL) */
    int dir_fd; /* a new log's directory, until first synced, or -1 */
};

enum { WAITING, DONE, FAILED, RETRY, DROPPED };

llpy_sync_group *llpy_sync_group_new(llpy_lock *lock, llpy_output *out) {
    llpy_sync_group *g = PyMem_Calloc(1, sizeof *g);
    if (g == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    g->generation = llpy_fork_generation();
    g->lock = lock;
    g->out = out;
    g->dir_fd = -1;
    return g;
}

void llpy_sync_group_free(llpy_sync_group *g) {
    if (g == NULL)
        return;
    if (g->dir_fd >= 0)
        llpy_close_fd(g->dir_fd);
    llpy_sync_group_clear(g);
    PyMem_Free(g);
}

int llpy_sync_group_traverse(llpy_sync_group *g, visitproc visit, void *arg) {
    if (g != NULL) {
        Py_VISIT(g->before_sync);
        Py_VISIT(g->name);
    }
    return 0;
}

void llpy_sync_group_clear(llpy_sync_group *g) {
    if (g != NULL) {
        Py_CLEAR(g->before_sync);
        Py_CLEAR(g->name);
    }
}

void llpy_sync_set_target(llpy_sync_group *g, PyObject *name, int dir_fd) {
    Py_XSETREF(g->name, Py_XNewRef(name));
    if (g->dir_fd >= 0)
        llpy_close_fd(g->dir_fd);
    g->dir_fd = dir_fd;
}

/* Makes the data written to fd durable, and the metadata needed to read it
 * back (its size); not the file's times. Without the GIL; -1 with errno. */
static int data_sync(int fd) {
    int rc;
    do {
#if defined(__APPLE__)
        /* fsync reaches the drive's cache, not its media: F_FULLFSYNC does,
         * where the file system has it. */
        rc = fcntl(fd, F_FULLFSYNC);
        if (rc < 0 && (errno == ENOTSUP || errno == EINVAL))
            rc = fsync(fd);
#elif defined(_WIN32)
        rc = _commit(fd); /* FlushFileBuffers */
#elif defined(__linux__) ||                                                   \
    (defined(_POSIX_SYNCHRONIZED_IO) && _POSIX_SYNCHRONIZED_IO > 0)
        rc = fdatasync(fd);
#else
        rc = fsync(fd);
#endif
    } while (rc < 0 && errno == EINTR);
    return rc;
}

/* A new file's name lives in its directory: fsync it too, once. */
static int dir_sync(int fd) {
#ifdef _WIN32
    (void)fd;
    return 0;
#else
    int rc;
    do
        rc = fsync(fd);
    while (rc < 0 && errno == EINTR);
    /* Some file systems refuse to sync a directory: nothing more to do. */
    return rc < 0 && (errno == EINVAL || errno == EBADF) ? 0 : rc;
#endif
}

/* The descriptor to sync: the path's, or a file object's fileno(). */
static int target_fd(llpy_output *out) {
    PyObject *file = llpy_output_file(out);
    if (file == NULL)
        return llpy_output_fd(out);
    PyObject *fileno = PyObject_CallMethod(file, "fileno", NULL);
    if (fileno == NULL)
        return -1; /* io.UnsupportedOperation or AttributeError */
    long fd = PyLong_AsLong(fileno);
    Py_DECREF(fileno);
    if (fd == -1 && PyErr_Occurred())
        return -1;
    if (fd < 0 || fd > INT_MAX) {
        PyErr_SetString(PyExc_ValueError,
                        "fileno() returned a bad descriptor");
        return -1;
    }
    return (int)fd;
}

/* The threads of the parent process do not exist in a child: a flush they
 * had in flight, or were waiting for, never ends there. */
static void group_check_fork(llpy_sync_group *g) {
    unsigned long now = llpy_fork_generation();
    if (g->generation != now) {
        g->active = 0;
        g->head = NULL;
        g->retry = NULL;
        g->queued = 0;
        g->generation = now;
    }
}

/* Whether a flush may start (lock held): one at a time. A second
 * fdatasync of the same file started beside the first does not end much
 * sooner (on ext4 both wait for the journal), and it splits the threads
 * queued behind the first into two smaller groups, which costs more wake-ups
 * per flush than it saves (bench/DURABLE.md). */
static int group_room(const llpy_sync_group *g) { return g->active == 0; }

int llpy_sync_defers(llpy_sync_group *g) {
    group_check_fork(g);
    return g->active;
}

/* Settles what can be settled (lock held): every waiter after a failed
 * fdatasync, the ones a flush covered, and, where a flush may start, the
 * first of those no flush in flight covers is woken to lead one.
 *
 * Only the first settled waiter is woken here: each one woken wakes the next
 * (chain_wake), without the GIL, so that a leader holding the GIL does not
 * pay for every thread its flush covered while they all wait for it. The one
 * sent to lead goes first. */
static void group_settle(llpy_sync_group *g) {
    llpy_sync_waiter **at = &g->head, *retry = NULL, *first = NULL;
    llpy_sync_waiter **tail = &first;
    int may_lead = group_room(g);
    while (*at != NULL) {
        llpy_sync_waiter *w = *at;
        int covered = g->active && w->end <= g->cover;
        int state = g->failed                        ? FAILED
                    : w->end <= g->durable           ? DONE
                    : may_lead && !retry && !covered ? RETRY
                                                     : WAITING;
        if (state == WAITING) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        g->queued--;
        w->state = state;
        w->error = g->failed;
        if (state == RETRY) {
            retry = w;
        } else {
            *tail = w;
            tail = &w->chain;
        }
    }
    *tail = NULL;
    if (retry != NULL) { /* the next leader is woken first */
        retry->chain = first;
        first = retry;
        retry->next = g->retry; /* out of the queue: next is free */
        g->retry = retry;
    }
    if (first != NULL)
        PyThread_release_lock(first->wake); /* it reads its state under lock */
}

/* A settled waiter, just woken, wakes the next one settled with it. Its
 * chain was set before it was woken, and the next one's waiter outlives
 * this call: it cannot return before it is woken. */
static void chain_wake(llpy_sync_waiter *w) {
    if (w->chain != NULL)
        PyThread_release_lock(w->chain->wake);
}

/* Takes w out of a list linked by next: whether it was there. */
static int waiter_unlink(llpy_sync_waiter **list, llpy_sync_waiter *w) {
    for (llpy_sync_waiter **at = list; *at != NULL; at = &(*at)->next)
        if (*at == w) {
            *at = w->next;
            return 1;
        }
    return 0;
}

static void group_unlink(llpy_sync_group *g, llpy_sync_waiter *w) {
    if (waiter_unlink(&g->head, w))
        g->queued--;
}

/* The leader's fdatasync (and the directory's, the first time), without
 * the lock; the test hook first. 0, or -1 with an exception (and *err the
 * errno of a failed sync). */
static int group_flush(llpy_sync_group *g, int fd, int dir_fd, PyObject *hook,
                       int *err) {
    *err = 0;
    if (hook != NULL) {
        PyObject *r = PyObject_CallNoArgs(hook);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = data_sync(fd);
    if (rc == 0 && dir_fd >= 0)
        rc = dir_sync(dir_fd);
    *err = rc < 0 ? errno : 0;
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        errno = *err;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, g->name);
    }
    return rc;
}

/* Hands over the records queued durable calls left buffered, in one write,
 * for a leader whose own records end at `end` (lock held). If that fails,
 * their calls raise (group_dropped), and so does the leader's if its
 * own were among them: -1 then. */
static int group_hand_over(llpy_sync_group *g, uint64_t end) {
    if (llpy_sync_hand_over_queued(g) == 0)
        return 0;
    if (end > llpy_output_offset(g->out))
        return -1;
    PyErr_Clear(); /* its own were handed over before */
    return 0;
}

/* Leads one flush (lock held on entry and on return, given up around it). */
static int group_lead(llpy_sync_group *g, uint64_t end) {
    int fd = group_hand_over(g, end) < 0 ? -1 : target_fd(g->out);
    if (fd < 0) {
        group_settle(g); /* another waiter may do better */
        return -1;
    }
    g->active++;
    uint64_t cover = llpy_output_written(
        g->out); /* flushes start in order: it only grows */
    g->cover = cover;
    int dir_fd = g->dir_fd, err;
    PyObject *hook = Py_XNewRef(g->before_sync);
    llpy_lock_release(g->lock);
    int rc = group_flush(g, fd, dir_fd, hook, &err);
    Py_XDECREF(hook);
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    while (llpy_lock_acquire(g->lock) < 0) /* not ours: cannot fail */
        PyErr_Clear();
    g->active--;
    if (rc == 0) {
        g->durable = cover; /* flushes run one at a time, in order */
        g->flushes++;
        llpy_output_synced(g->out, g->durable);
        if (dir_fd >= 0 && g->dir_fd == dir_fd) {
            llpy_close_fd(dir_fd);
            g->dir_fd = -1;
        }
    } else if (err != 0) {
        g->failed = err;
    }
    group_settle(g);
    if (exc != NULL)
        PyErr_SetRaisedException(exc);
    return rc;
}

/* A waiter interrupted after it was settled: the one before it in the
 * chain is about to wake it, and so its lock must not be freed before; it
 * then wakes the rest of the chain (lock held on entry and on return). */
static void group_wait_woken(llpy_sync_group *g, llpy_sync_waiter *w) {
    llpy_lock_release(g->lock);
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(w->wake, WAIT_LOCK);
    chain_wake(w);
    Py_END_ALLOW_THREADS
    while (llpy_lock_acquire(g->lock) < 0)
        PyErr_Clear();
}

/* Queues w until a flush settles it (lock held on entry and on return,
 * given up while waiting). Its state, or -1 when a signal handler raised
 * (KeyboardInterrupt; only when interruptible): it then leaves the queue. */
static int group_wait_settled(llpy_sync_group *g, llpy_sync_waiter *w,
                              uint64_t end, int interruptible) {
    w->wake = PyThread_allocate_lock();
    if (w->wake == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyThread_acquire_lock(w->wake, WAIT_LOCK); /* so the wait below sleeps */
    w->end = end;
    w->state = WAITING;
    w->next = NULL;
    w->chain = NULL;
    llpy_sync_waiter **at = &g->head;
    while (*at != NULL)
        at = &(*at)->next;
    *at = w;
    g->queued++;
    llpy_lock_release(g->lock);
    int interrupted = 0;
    for (;;) {
        PyLockStatus r;
        Py_BEGIN_ALLOW_THREADS
        r = PyThread_acquire_lock_timed(w->wake, -1, interruptible);
        if (r == PY_LOCK_ACQUIRED)
            chain_wake(w);
        Py_END_ALLOW_THREADS
        if (r == PY_LOCK_ACQUIRED)
            break;
        if (PyErr_CheckSignals() < 0) {
            interrupted = 1;
            break;
        }
    }
    PyObject *exc = interrupted ? PyErr_GetRaisedException() : NULL;
    while (llpy_lock_acquire(g->lock) < 0)
        PyErr_Clear();
    int state = w->state;
    waiter_unlink(&g->retry, w); /* it leads now, or gives the lead on */
    if (interrupted) {
        if (state == WAITING)
            group_unlink(g, w);
        else
            group_wait_woken(g, w); /* settled: its wake is on the way */
        group_settle(g); /* a retry meant for it goes to the next one */
        PyErr_SetRaisedException(exc);
        state = -1;
    }
    PyThread_free_lock(w->wake);
    return state;
}

/* OSError(error, the message, the log's name). */
static void raise_os_error(llpy_sync_group *g, int error, const char *what) {
    PyObject *msg = PyUnicode_FromFormat("%s (%s)", what, strerror(error));
    if (msg == NULL)
        return;
    PyObject *exc = PyObject_CallFunction(PyExc_OSError, "iOO", error, msg,
                                          g->name ? g->name : Py_None);
    Py_DECREF(msg);
    if (exc != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
}

static void raise_failed(llpy_sync_group *g, int error) {
    raise_os_error(g, error,
                   "an fdatasync of this log failed: records handed to the OS "
                   "since the last good sync may be lost, and no later sync "
                   "can tell");
}

static void raise_dropped(llpy_sync_group *g, int error) {
    raise_os_error(g, error,
                   "the record was not written: handing the records queued "
                   "for a group commit to the OS failed");
}

/* The errno of the exception being raised: EIO for one without. */
static int raised_errno(void) {
    PyObject *exc = PyErr_GetRaisedException();
    int error = EIO;
    if (exc != NULL && PyErr_GivenExceptionMatches(exc, PyExc_OSError)) {
        PyObject *n = PyObject_GetAttrString(exc, "errno");
        long v = n != NULL && PyLong_Check(n) ? PyLong_AsLong(n) : 0;
        if (v > 0 && v < INT_MAX)
            error = (int)v;
        Py_XDECREF(n);
        PyErr_Clear();
    }
    PyErr_SetRaisedException(exc);
    return error;
}

/* Buffered bytes from log offset `from` on were dropped after a failed
 * hand-off (lock held, its exception set): every durable call waiting for
 * a record among them raises the same error instead. */
static void group_dropped(llpy_sync_group *g, uint64_t from) {
    int error = raised_errno();
    llpy_sync_waiter **at = &g->head, *first = NULL, **tail = &first;
    while (*at != NULL) {
        llpy_sync_waiter *w = *at;
        if (w->end <= from) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        g->queued--;
        w->state = DROPPED;
        w->error = error;
        *tail = w;
        tail = &w->chain;
    }
    *tail = NULL;
    for (at = &g->retry; *at != NULL;) { /* woken already: they read */
        llpy_sync_waiter *w = *at;       /* their state under the lock */
        if (w->end <= from) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        w->state = DROPPED;
        w->error = error;
    }
    if (first != NULL)
        PyThread_release_lock(first->wake);
    group_settle(g); /* the ones left may need a leader */
}

/* The wait of llpy_sync_wait, lock held on entry, given up on return;
 * close() waits without being interrupted, so that it never closes the
 * descriptor under a flush in flight. */
static int sync_wait_held(llpy_sync_group *g, uint64_t end,
                          int interruptible) {
    group_check_fork(g);
    int rc = 0;
    for (;;) {
        if (g->failed) {
            raise_failed(g, g->failed);
            rc = -1;
            break;
        }
        if (g->durable >= end && g->dir_fd < 0)
            break;
        if (llpy_output_closed(g->out)) { /* its descriptor is gone */
            PyErr_SetString(PyExc_ValueError,
                            "the writer was closed before these records "
                            "were made durable");
            group_settle(g); /* the others learn it too, in turn */
            rc = -1;
            break;
        }
        if (group_room(g) && !(g->active && end <= g->cover)) {
            rc = group_lead(g, end); /* covers end: written before */
            break;
        }
        llpy_sync_waiter w;
        int state = group_wait_settled(g, &w, end, interruptible);
        if (state == DROPPED)
            raise_dropped(g, w.error);
        if (state < 0 || state == DROPPED) {
            rc = -1;
            break;
        }
        /* settled: done, failed, or woken to lead: look again */
    }
    llpy_lock_release(g->lock);
    return rc;
}

static int sync_wait(llpy_sync_group *g, uint64_t end, int interruptible) {
    if (llpy_lock_acquire(g->lock) < 0)
        return -1;
    return sync_wait_held(g, end, interruptible);
}

int llpy_sync_wait(llpy_sync_group *g, uint64_t end) {
    return sync_wait(g, end, 1);
}

int llpy_sync_wait_locked(llpy_sync_group *g, uint64_t end) {
    return sync_wait_held(g, end, 1);
}

int llpy_sync_after_hand_over(llpy_sync_group *g, int rc) {
    uint64_t from;
    if (rc < 0 && llpy_output_dropped(g->out, &from))
        group_dropped(g, from);
    return rc;
}

int llpy_sync_hand_over(llpy_sync_group *g) {
    return llpy_sync_after_hand_over(g, llpy_output_hand_over(g->out));
}

int llpy_sync_hand_over_queued(llpy_sync_group *g) {
    return llpy_output_queued(g->out) ? llpy_sync_hand_over(g) : 0;
}

/* Threads are waiting: the records they wait for are made durable by one
 * more flush before the descriptor goes away. */
static int close_wait(llpy_sync_group *g) {
    llpy_output_set_closing(g->out, 1);
    uint64_t end = llpy_output_written(g->out);
    llpy_lock_release(g->lock);
    int rc = sync_wait(g, end, 0);
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    while (llpy_lock_acquire(g->lock) < 0)
        PyErr_Clear();
    llpy_output_set_closing(g->out, 0);
    if (exc != NULL)
        PyErr_SetRaisedException(exc);
    return rc;
}

int llpy_sync_close(llpy_sync_group *g) {
    group_check_fork(g);
    int rc = g->active || g->head != NULL ? close_wait(g) : 0;
    if (g->dir_fd >= 0) {
        llpy_close_fd(g->dir_fd);
        g->dir_fd = -1;
    }
    return rc;
}

void llpy_sync_counts(llpy_sync_group *g, uint64_t *waiters,
                      uint64_t *flushes) {
    group_check_fork(g);
    *waiters = (uint64_t)(g->queued + g->active);
    *flushes = g->flushes;
}

PyObject *llpy_sync_swap_hook(llpy_sync_group *g, PyObject *hook) {
    PyObject *old = g->before_sync;
    g->before_sync = Py_XNewRef(hook);
    return old;
}
