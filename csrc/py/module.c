/*
 * py_module.c - the CPython extension leveldb_log._core.
 *
 * The only file of the project that includes Python.h. It does the I/O the
 * C core leaves to its caller (file descriptors, Python file objects,
 * buffers), turns core events into Python objects, and raises every
 * exception of the package from two functions: raise_status() for core
 * status codes and raise_corruption() for damaged logs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <sys/uio.h>
#include <unistd.h>
#endif

#include "crc32c.h"
#include "log_reader.h"
#include "log_writer.h"

#if PY_VERSION_HEX < 0x030C0000
/* The 3.12 exception API, for older interpreters. */
static PyObject *PyErr_GetRaisedException(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL)
        return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL)
        PyException_SetTraceback(value, tb);
    Py_DECREF(type);
    Py_XDECREF(tb);
    return value;
}

static void PyErr_SetRaisedException(PyObject *exc) {
    if (exc == NULL) {
        PyErr_Clear();
        return;
    }
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc,
                  PyException_GetTraceback(exc));
}
#endif

/* Records and buffers at least this large release the GIL while encoded or
 * checksummed: below it, taking the GIL back costs more than it frees. */
#define GIL_THRESHOLD (64 * 1024)
#define DEFAULT_BUFFER (64 * 1024)
/* Physical records at least this long are checksummed without the GIL. */
#define GIL_FRAGMENT (16 * 1024)
/* Bytes read from a file at once: fewer system calls than one block each,
 * while a reader still holds about one chunk plus its largest record. */
#define READ_CHUNK (4 * LLOG_BLOCK_SIZE)
/* Lengths remembered of fragmented records are capped at this: a guess of
 * the next one's, sizing the bytes object it is assembled in. */
#define ASSEMBLY_HINT_MAX ((size_t)64 << 20)
/* Such a record's payload is read from a file straight into that object,
 * up to this many blocks per system call (see reader_fill_in_place). */
#if defined(__linux__) || defined(__FreeBSD__)
#define IN_PLACE_BLOCKS 16
#endif

typedef struct {
    PyTypeObject *writer_type;
    PyTypeObject *reader_type;
    PyObject *corruption_type; /* leveldb_log._errors.Corruption */
    PyObject *corruption_error;
    PyObject *truncated_error;
    PyObject *os_open;
    Py_ssize_t assembly_hint;   /* the last fragmented record's length */
    Py_ssize_t assembly_expect; /* the next one's, when the last two agree */
} module_state;

static module_state *state_of(PyTypeObject *type) {
    return (module_state *)PyType_GetModuleState(type);
}

/* ---- one place that raises ------------------------------------------- */

static void raise_status(llog_status status) {
    PyObject *exc =
        status == LLOG_ERR_NOMEM ? PyExc_MemoryError : PyExc_OverflowError;
    PyErr_SetString(exc, llog_status_text(status));
}

/* Raises CorruptionError or TruncatedRecordError from a Corruption tuple. */
static void raise_corruption(module_state *st, int truncated, PyObject *c) {
    PyObject *cls = truncated ? st->truncated_error : st->corruption_error;
    PyObject *exc = PyObject_Call(cls, c, NULL); /* Corruption is a tuple */
    if (exc != NULL) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
}

/* ---- per-object lock ------------------------------------------------- */

/*
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
static unsigned long fork_generation = 1;

#ifndef _WIN32
#include <pthread.h>
static void after_fork_in_child(void) { fork_generation++; }
#endif

static void register_fork_handler(void) {
#ifndef _WIN32
    static int registered;
    if (!registered && pthread_atfork(NULL, NULL, after_fork_in_child) == 0)
        registered = 1;
#endif
}

typedef struct {
#ifdef Py_GIL_DISABLED
    PyMutex mutex;
#else
    PyThread_type_lock wake; /* held while nobody waits; released to wake */
    int busy;
    int waiters;
#endif
    unsigned long owner;
    unsigned long generation; /* fork generation it was taken in */
} obj_lock;

static int obj_lock_init(obj_lock *l) {
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

static int obj_lock_reentrant(obj_lock *l) {
    if (l->owner == PyThread_get_thread_ident() &&
        l->generation == fork_generation) {
        PyErr_SetString(PyExc_RuntimeError,
                        "reentrant call on the same log object");
        return 1;
    }
    return 0;
}

static int obj_lock_acquire(obj_lock *l) {
#ifdef Py_GIL_DISABLED
    /* owner only ever equals this thread's id if this thread set it. */
    if (obj_lock_reentrant(l))
        return -1;
    PyMutex_Lock(&l->mutex);
#else
    if (l->busy) {
        if (obj_lock_reentrant(l))
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

static void obj_lock_release(obj_lock *l) {
    l->owner = 0;
#ifdef Py_GIL_DISABLED
    PyMutex_Unlock(&l->mutex);
#else
    l->busy = 0;
    if (l->waiters > 0)
        PyThread_release_lock(l->wake); /* each waiter re-checks busy */
#endif
}

static void obj_lock_free(obj_lock *l) {
#ifndef Py_GIL_DISABLED
    if (l->wake != NULL)
        PyThread_free_lock(l->wake);
    l->wake = NULL;
#else
    (void)l;
#endif
}

/* ---- sources and targets --------------------------------------------- */

/* 1 for str and os.PathLike, which name files; 0 otherwise. */
static int is_path(PyObject *obj) {
    return PyUnicode_Check(obj) ||
           PyObject_HasAttrString((PyObject *)Py_TYPE(obj), "__fspath__");
}

/* Opens a path with os.open (so errors carry the file name) and returns the
 * descriptor, or -1 with an exception set. */
static int open_path(module_state *st, PyObject *path, int flags) {
    PyObject *fd_obj =
        PyObject_CallFunction(st->os_open, "Oii", path, flags, 0666);
    if (fd_obj == NULL)
        return -1;
    long fd = PyLong_AsLong(fd_obj);
    Py_DECREF(fd_obj);
    if (fd < 0 || fd > INT_MAX) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_OSError,
                            "os.open returned a bad descriptor");
        return -1;
    }
    return (int)fd;
}

static void close_fd(int fd) {
#ifdef _WIN32
    _close(fd);
#else
    close(fd);
#endif
}

/* Reads up to n bytes at offset; returns the count (0 at end) or -1 with
 * errno set. Called without the GIL. */
static Py_ssize_t pread_some(int fd, uint8_t *buf, size_t n, uint64_t offset) {
#ifdef _WIN32
    if (_lseeki64(fd, (__int64)offset, SEEK_SET) < 0)
        return -1;
    return _read(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
#else
    return pread(fd, buf, n, (off_t)offset);
#endif
}

static Py_ssize_t write_some(int fd, const uint8_t *buf, size_t n) {
#ifdef _WIN32
    return _write(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
#else
    return write(fd, buf, n);
#endif
}

/* Calls obj.method(*args) and returns the result as a non-negative size, -1
 * for None, or -2 with an exception set. */
static Py_ssize_t call_for_size(PyObject *obj, const char *method,
                                PyObject *arg) {
    PyObject *res = PyObject_CallMethod(obj, method, "O", arg);
    if (res == NULL)
        return -2;
    if (res == Py_None) {
        Py_DECREF(res);
        return -1;
    }
    Py_ssize_t n = PyLong_AsSsize_t(res);
    Py_DECREF(res);
    if (n == -1 && PyErr_Occurred())
        return -2;
    if (n < 0) {
        PyErr_Format(PyExc_OSError, "%s() returned a negative count", method);
        return -2;
    }
    return n;
}

/* ====================================================================== */
/* Reader                                                                 */
/* ====================================================================== */

enum source_kind { SRC_BUFFER, SRC_FD, SRC_FILE };

typedef struct {
    PyObject_HEAD llog_reader *core;
    obj_lock lock;
    enum source_kind kind;
    llog_recovery recovery;
    int verify_checksums;
    uint64_t start, end;
    PyObject *name;          /* the path or source object, for repr */
    PyObject *on_corruption; /* callable or NULL */
    Py_buffer view;          /* SRC_BUFFER, while view.obj != NULL */
    int fd;                  /* SRC_FD */
    PyObject *file;          /* SRC_FILE */
    int seekable;            /* SRC_FD, SRC_FILE: can read at any offset */
    uint64_t base;           /* SRC_FILE: object position of log offset 0 */
    uint64_t file_pos;       /* log offset a sequential source is at */
    uint8_t *block;          /* SRC_FD, SRC_FILE: the block fed to core */
    size_t block_len;
    uint64_t block_offset;
    int finished;    /* no more records, ever */
    int in_callback; /* on_corruption is running (events still queued) */
    int closed;
    int has_last;
    uint64_t last_record_offset;
    uint64_t dropped_bytes;
    PyObject *assembly; /* bytes a fragmented record is built in, */
    uint8_t *scratch;   /* or this, when in_scratch */
    size_t scratch_cap;
    int in_scratch;
    size_t last_len, prev_len; /* the last two such records' lengths */
    PyThreadState *released;   /* the GIL's saved state while the core runs
                                  without it, else NULL */
#ifdef IN_PLACE_BLOCKS
    /* Blocks read in place (reader_fill_in_place), waiting to be fed: each
     * one a header here and its payload where its record is assembled. */
    uint8_t in_place_head[IN_PLACE_BLOCKS][LLOG_HEADER_SIZE];
    int in_place_next, in_place_left;
    uint64_t in_place_offset; /* file offset of the next one */
    uint8_t *in_place_body;   /* its payload */
#endif
    uint64_t blocks_in_place; /* fed so, for tests (_blocks_in_place) */
} ReaderObject;

static void reader_release_source(ReaderObject *self) {
    if (self->view.obj != NULL)
        PyBuffer_Release(&self->view);
    if (self->kind == SRC_FD && self->fd >= 0) {
        close_fd(self->fd);
        self->fd = -1;
    }
    Py_CLEAR(self->file);
    PyMem_Free(self->block);
    self->block = NULL;
}

/* Reads from a file object at log offset `at` into buf, up to n bytes. */
static Py_ssize_t file_read_at(ReaderObject *self, uint8_t *buf, size_t n,
                               uint64_t at) {
    if (self->file_pos != at) {
        if (self->seekable) {
            PyObject *r =
                PyObject_CallMethod(self->file, "seek", "K",
                                    (unsigned long long)(self->base + at));
            if (r == NULL)
                return -1;
            Py_DECREF(r);
        } else {
            /* A stream only goes forward: the core reads such sources from
             * block 0 on and never asks for an earlier byte. */
            assert(self->file_pos < at);
            while (self->file_pos < at) {
                size_t skip = (size_t)(at - self->file_pos);
                PyObject *chunk = PyObject_CallMethod(
                    self->file, "read", "n",
                    (Py_ssize_t)(skip > 65536 ? 65536 : skip));
                if (chunk == NULL)
                    return -1;
                Py_ssize_t len =
                    PyBytes_Check(chunk) ? PyBytes_GET_SIZE(chunk) : 0;
                Py_DECREF(chunk);
                if (len == 0)
                    return 0;
                self->file_pos += (uint64_t)len;
            }
        }
        self->file_pos = at;
    }
    if (n == 0)
        return 0;
    PyObject *mv =
        PyMemoryView_FromMemory((char *)buf, (Py_ssize_t)n, PyBUF_WRITE);
    if (mv == NULL)
        return -1;
    Py_ssize_t got = call_for_size(self->file, "readinto", mv);
    /* The file object must not keep our buffer: release the view now, so a
     * kept reference fails instead of seeing freed memory. */
    PyObject *exc = got == -2 ? PyErr_GetRaisedException() : NULL;
    PyObject *r = PyObject_CallMethod(mv, "release", NULL);
    Py_DECREF(mv);
    if (r == NULL) { /* BufferError: it kept an export of our memory */
        Py_XDECREF(exc);
        return -1;
    }
    Py_DECREF(r);
    if (exc != NULL) {
        PyErr_SetRaisedException(exc); /* readinto's own error */
        return -1;
    }
    if (got == -1) { /* non-blocking stream with no data now */
        got = 0;
    }
    if ((size_t)got > n) {
        PyErr_SetString(PyExc_OSError, "readinto() returned too many bytes");
        return -1;
    }
    self->file_pos += (uint64_t)got;
    return got;
}

/* One read of up to n bytes at `at` (or at the current position of a
 * descriptor that cannot seek), without the GIL. */
static Py_ssize_t fd_read_once(int fd, int seekable, uint8_t *buf, size_t n,
                               uint64_t at) {
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    if (seekable)
        got = pread_some(fd, buf, n, at);
    else
#ifdef _WIN32
        got = _read(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
#else
        got = read(fd, buf, n);
#endif
    Py_END_ALLOW_THREADS
    return got;
}

/* Reads from a descriptor at `at` until n bytes or the end of the file;
 * returns the count, or -1 with an exception set. */
static Py_ssize_t fd_read_full(int fd, int seekable, uint8_t *buf, size_t n,
                               uint64_t at) {
    size_t total = 0;
    while (total < n) {
        Py_ssize_t got =
            fd_read_once(fd, seekable, buf + total, n - total, at + total);
        if (got < 0 && errno == EINTR) {
            if (PyErr_CheckSignals() < 0)
                return -1;
            continue;
        }
        if (got < 0) {
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        if (got == 0)
            break;
        total += (size_t)got;
    }
    return (Py_ssize_t)total;
}

/* Reads a path source at log offset `at`. A descriptor that cannot seek (a
 * FIFO, a terminal) is read in order: the core asks for no earlier byte, and
 * later ones are reached by reading and discarding. */
static Py_ssize_t path_read_at(ReaderObject *self, uint8_t *buf, size_t n,
                               uint64_t at) {
    if (self->seekable)
        return fd_read_full(self->fd, 1, buf, n, at);
    assert(at >= self->file_pos); /* sequential sources never go back */
    while (self->file_pos < at) {
        size_t skip = (size_t)(at - self->file_pos);
        Py_ssize_t got =
            fd_read_full(self->fd, 0, buf, skip < n ? skip : n, 0);
        if (got <= 0)
            return got;
        self->file_pos += (uint64_t)got;
    }
    Py_ssize_t got = fd_read_full(self->fd, 0, buf, n, 0);
    if (got > 0)
        self->file_pos += (uint64_t)got;
    return got;
}

static size_t assembly_hint(ReaderObject *self);

#ifdef IN_PLACE_BLOCKS
/* Feeds the next block read in place (a header and its payload). */
static void in_place_feed(ReaderObject *self) {
    llog_reader_feed_split(self->core,
                           self->in_place_head[self->in_place_next],
                           self->in_place_body, LLOG_BLOCK_SIZE);
    self->in_place_next++;
    self->in_place_left--;
    self->in_place_offset += LLOG_BLOCK_SIZE;
    self->in_place_body += LLOG_MAX_FRAGMENT;
    self->blocks_in_place++;
}

/*
 * Inside a long record, reads the blocks that carry on with it straight
 * into the buffer the record is assembled in: one preadv puts each block's
 * header in in_place_head and its payload where the core would copy it to.
 * How many blocks: as many as the last such record suggests are MIDDLE
 * fragments (a few when it is already longer), but never more than the
 * record has had so far, so that a wrong guess costs at most about what
 * was read right. When the guess was not cut so, the block expected to end
 * the record comes in the same call, whole, into the block buffer. What was
 * read is then sorted out: blocks that are one full MIDDLE fragment each
 * are fed split (the core still checks everything, and appends them without
 * a copy); at the first that is not, its pieces are copied together into
 * the block buffer and the rest is forgotten (read again when wanted).
 * Returns 1 when a block was fed, 0 when this does not apply, -1 on error.
 */
static int reader_fill_in_place(ReaderObject *self, uint64_t want) {
    size_t assembled;
    if (!llog_reader_in_place(self->core, &assembled))
        return 0;
    size_t hint = assembly_hint(self);
    size_t expect = hint > assembled ? hint - assembled : 0;
    size_t n = expect == 0 ? 3 : (expect - 1) / LLOG_MAX_FRAGMENT;
    size_t most = assembled / LLOG_MAX_FRAGMENT;
    if (most < 2)
        most = 2;
    if (most > IN_PLACE_BLOCKS)
        most = IN_PLACE_BLOCKS;
    int tail = expect > 0 && n <= most; /* the next block may end it */
    if (n > most)
        n = most;
    uint8_t *dst = NULL;
    if (n > 0) {
        dst = llog_reader_append_point(self->core, n * LLOG_MAX_FRAGMENT);
        if (dst == NULL)
            return 0; /* out of memory: the core's next event says so */
    }
    struct iovec iov[2 * IN_PLACE_BLOCKS + 1];
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        iov[count].iov_base = self->in_place_head[i];
        iov[count++].iov_len = LLOG_HEADER_SIZE;
        iov[count].iov_base = dst + i * LLOG_MAX_FRAGMENT;
        iov[count++].iov_len = LLOG_MAX_FRAGMENT;
    }
    if (tail) {
        iov[count].iov_base = self->block;
        iov[count++].iov_len = LLOG_BLOCK_SIZE;
    }
    ssize_t got;
    do {
        Py_BEGIN_ALLOW_THREADS
        got = preadv(self->fd, iov, count, (off_t)want);
        Py_END_ALLOW_THREADS
    } while (got < 0 && errno == EINTR && PyErr_CheckSignals() == 0);
    if (got < 0) {
        if (!PyErr_Occurred())
            PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    size_t total = (size_t)got, k = 0;
    while (k < n && total >= (k + 1) * LLOG_BLOCK_SIZE) {
        const uint8_t *h = self->in_place_head[k];
        if (h[6] != LLOG_MIDDLE ||
            ((size_t)h[4] | (size_t)h[5] << 8) != LLOG_MAX_FRAGMENT)
            break;
        k++;
    }
    /* What the block buffer now holds: block k, from its bytes read. */
    self->block_offset = want + k * LLOG_BLOCK_SIZE;
    size_t past =
        total > k * LLOG_BLOCK_SIZE ? total - k * LLOG_BLOCK_SIZE : 0;
    if (past > LLOG_BLOCK_SIZE)
        past = LLOG_BLOCK_SIZE;
    if (k < n) { /* block k ends the run: put its pieces together */
        size_t head = past < LLOG_HEADER_SIZE ? past : LLOG_HEADER_SIZE;
        memcpy(self->block, self->in_place_head[k], head);
        if (past > head)
            memcpy(self->block + head, dst + k * LLOG_MAX_FRAGMENT,
                   past - head);
    } else if (!tail) {
        past = 0; /* nothing read past the run */
    }
    self->block_len = past; /* a short block is read again when wanted */
    if (k == 0) {
        llog_reader_feed(self->core, self->block, past);
        return 1;
    }
    self->in_place_next = 0;
    self->in_place_left = (int)k;
    self->in_place_offset = want;
    self->in_place_body = dst;
    in_place_feed(self);
    return 1;
}
#endif

/*
 * Feeds the core the block it wants. The last block read is kept: asking for
 * it again (the log has grown) only reads what is new past its end.
 */
static int reader_fill(ReaderObject *self) {
    uint64_t want = llog_reader_wanted(self->core);
    if (self->kind == SRC_BUFFER) {
        size_t size = (size_t)self->view.len;
        size_t len = 0;
        if (want < size)
            len = size - (size_t)want < LLOG_BLOCK_SIZE ? size - (size_t)want
                                                        : LLOG_BLOCK_SIZE;
        llog_reader_feed(self->core,
                         len ? (const uint8_t *)self->view.buf + want : NULL,
                         len);
        return 0;
    }
    if (self->kind == SRC_FD && self->seekable) {
#ifdef IN_PLACE_BLOCKS
        if (self->in_place_left > 0 && want == self->in_place_offset) {
            in_place_feed(self);
            return 0;
        }
        self->in_place_left = 0;
#endif
        /* Read READ_CHUNK bytes at a time and feed blocks from them; a block
         * not wholly in the chunk (the end of the file, or not read yet) is
         * read again, so a grown or rewritten tail is seen. */
        uint64_t cached_end = self->block_offset + self->block_len;
        if (want < self->block_offset || want + LLOG_BLOCK_SIZE > cached_end) {
#ifdef IN_PLACE_BLOCKS
            int rc = reader_fill_in_place(self, want);
            if (rc != 0)
                return rc < 0 ? -1 : 0;
#endif
            Py_ssize_t got =
                fd_read_full(self->fd, 1, self->block, READ_CHUNK, want);
            if (got < 0)
                return -1;
            self->block_offset = want;
            self->block_len = (size_t)got;
        }
        size_t in = (size_t)(want - self->block_offset);
        size_t avail = self->block_len - in;
        llog_reader_feed(self->core, self->block + in,
                         avail < LLOG_BLOCK_SIZE ? avail : LLOG_BLOCK_SIZE);
        return 0;
    }
    int seekable = self->seekable > 0;
    if (self->block_offset != want || seekable) {
        /* A block asked for again was short: read it whole, since an append
         * may have cut a torn tail or zero fill back and rewritten it. Only
         * a stream, which cannot be rewritten, keeps what it has. */
        self->block_offset = want;
        self->block_len = 0;
    }
    while (self->block_len < LLOG_BLOCK_SIZE) {
        uint8_t *dst = self->block + self->block_len;
        size_t n = LLOG_BLOCK_SIZE - self->block_len;
        uint64_t at = want + self->block_len;
        Py_ssize_t got = self->kind == SRC_FD ? path_read_at(self, dst, n, at)
                                              : file_read_at(self, dst, n, at);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        self->block_len += (size_t)got;
    }
    llog_reader_feed(self->core, self->block, self->block_len);
    return 0;
}

/* Passes a corruption to on_corruption (without holding the lock, so the
 * callback may use the reader) and counts it. */
static int reader_notify(ReaderObject *self, PyObject *c) {
    if (self->on_corruption == NULL)
        return 0;
    PyObject *cb = Py_NewRef(self->on_corruption);
    self->in_callback++; /* events may still be queued in the core */
    obj_lock_release(&self->lock);
    PyObject *r = PyObject_CallOneArg(cb, c);
    Py_DECREF(cb);
    /* Cannot fail: this thread no longer owns the lock. */
    (void)obj_lock_acquire(&self->lock);
    self->in_callback--;
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

static void reader_finish(ReaderObject *self) {
    self->finished = 1;
    if (self->kind == SRC_BUFFER && self->view.obj != NULL)
        PyBuffer_Release(&self->view); /* exhausted: let the buffer go */
}

/* Applies the recovery mode to a corruption; returns 1 to keep reading,
 * 0 to end iteration cleanly, -1 with an exception set. The event's reason
 * is copied first: the core may be used by another thread during the
 * callback, or closed by it. */
static int reader_on_corruption(ReaderObject *self, module_state *st,
                                const llog_event *ev, int torn) {
    PyObject *c = PyObject_CallFunction(
        st->corruption_type, "KKs", (unsigned long long)ev->offset,
        (unsigned long long)ev->size, ev->reason);
    if (c == NULL)
        return -1;
    self->dropped_bytes += ev->size;
    int rc = reader_notify(self, c);
    if (rc == 0 && self->recovery == LLOG_RECOVER_SKIP) {
        rc = !self->closed; /* the callback may have closed the reader */
    } else if (rc == 0) {
        reader_finish(self);
        if (self->recovery != LLOG_RECOVER_POINT_IN_TIME) {
            raise_corruption(st, torn, c);
            rc = -1;
        }
    }
    Py_DECREF(c);
    return rc;
}

/* The larger of a and b when they are within 1/16 of each other, else 0. */
static size_t agreeing(size_t a, size_t b) {
    size_t hi = a > b ? a : b, lo = a > b ? b : a;
    return hi - lo <= hi / 16 ? hi : 0;
}

/* Module state that readers in several threads read and write: sizes
 * remembered as guesses, where a stale value is harmless but a torn one
 * must not happen (free-threaded builds have no GIL to prevent it). */
static size_t shared_size(const Py_ssize_t *at) {
#ifdef Py_GIL_DISABLED
    return (size_t)_Py_atomic_load_ssize_relaxed(at);
#else
    return (size_t)*at;
#endif
}

static void shared_size_set(Py_ssize_t *at, size_t value) {
#ifdef Py_GIL_DISABLED
    _Py_atomic_store_ssize_relaxed(at, (Py_ssize_t)value);
#else
    *at = (Py_ssize_t)value;
#endif
}

/* The length of the last fragmented record this reader (or, before its
 * first, any reader) assembled: a guess of the next one's. */
static size_t assembly_hint(ReaderObject *self) {
    if (self->last_len > 0)
        return self->last_len;
    return shared_size(&state_of(Py_TYPE(self))->assembly_hint);
}

/* The length the next fragmented record can be expected to have, when the
 * last two agree (else 0): it is then built in a bytes object that long. */
static size_t assembly_expect(ReaderObject *self) {
    if (self->prev_len > 0)
        return agreeing(self->last_len, self->prev_len);
    return shared_size(&state_of(Py_TYPE(self))->assembly_expect);
}

static void assembly_learn(ReaderObject *self, size_t len) {
    if (len > ASSEMBLY_HINT_MAX)
        len = ASSEMBLY_HINT_MAX;
    module_state *st = state_of(Py_TYPE(self));
    size_t expect = agreeing(len, assembly_hint(self));
    self->prev_len = self->last_len;
    self->last_len = len;
    shared_size_set(&st->assembly_hint, len);
    shared_size_set(&st->assembly_expect, expect);
}

/* Room for `need` bytes in the scratch buffer, what it holds kept. */
static uint8_t *scratch_reserve(ReaderObject *self, size_t need, size_t *cap) {
    if (need > self->scratch_cap) {
        size_t size = self->scratch_cap < 65536 ? 65536 : self->scratch_cap;
        while (size < need)
            size = size > (size_t)PY_SSIZE_T_MAX / 2 ? need : 2 * size;
        uint8_t *grown = PyMem_RawRealloc(self->scratch, size);
        if (grown == NULL)
            return NULL;
        self->scratch = grown;
        self->scratch_cap = size;
    }
    *cap = self->scratch_cap;
    return self->scratch;
}

/* Room for `need` bytes in self->assembly, a bytes object. NULL when out of
 * memory (an exception set), or when a record being built outgrows it
 * (`len` > 0: no exception; it then goes on in the scratch buffer). */
static uint8_t *bytes_reserve(ReaderObject *self, size_t len, size_t need,
                              size_t *cap) {
    size_t have =
        self->assembly ? (size_t)PyBytes_GET_SIZE(self->assembly) : 0;
    if (have < need && len > 0)
        return NULL; /* longer than expected */
    if (have < need) {
        size_t expect = assembly_expect(self);
        size_t size = expect > need ? expect : need;
        Py_CLEAR(self->assembly);
        self->assembly = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
        if (self->assembly == NULL && size > need) {
            PyErr_Clear();
            self->assembly = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)need);
        }
        if (self->assembly == NULL)
            return NULL;
    }
    *cap = (size_t)PyBytes_GET_SIZE(self->assembly);
    return (uint8_t *)PyBytes_AS_STRING(self->assembly);
}

/*
 * The core's reserve callback. When the last fragmented records had about
 * the same length (most logs repeat their sizes), the next one is built
 * straight in a bytes object of that length and cut to its own at the end
 * (realloc shrinks in place): returning it costs no copy. Otherwise, or
 * once a record outgrows that object, it is built in the reader's scratch
 * buffer and copied into a bytes object of its exact length at the end:
 * growing a bytes object would copy as well, and sizing them by guesses
 * that miss makes malloc map and unmap memory, whose pages must fault in
 * again each time. The core may call this without the GIL (see
 * reader_next_locked): take it back meanwhile.
 */
static uint8_t *assembly_reserve(void *ctx, size_t len, size_t need,
                                 size_t *cap) {
    ReaderObject *self = ctx;
    PyThreadState *released = self->released;
    if (released != NULL)
        PyEval_RestoreThread(released);
    uint8_t *buf = NULL;
    if (len == 0) { /* a new record */
        self->in_scratch = assembly_expect(self) == 0;
        if (self->in_scratch)
            Py_CLEAR(self->assembly); /* what a dropped record left */
    }
    if (need > (size_t)PY_SSIZE_T_MAX) {
        /* no buffer that large */
    } else if (!self->in_scratch) {
        buf = bytes_reserve(self, len, need, cap);
        if (buf == NULL && len > 0) {       /* outgrown */
            assert(self->assembly != NULL); /* it holds the first len */
            self->in_scratch = 1;
            buf = scratch_reserve(self, need, cap);
            if (buf != NULL)
                memcpy(buf, PyBytes_AS_STRING(self->assembly), len);
            Py_CLEAR(self->assembly);
        }
    } else {
        buf = scratch_reserve(self, need, cap);
    }
    PyErr_Clear(); /* out of memory: the core reports LLOG_ERR_NOMEM */
    if (released != NULL)
        self->released = PyEval_SaveThread();
    return buf;
}

/* The record the core finished assembling, as a bytes object. */
static PyObject *assembly_take(ReaderObject *self, size_t len) {
    assembly_learn(self, len);
    if (self->in_scratch) {
        assert(len <= self->scratch_cap);
        return PyBytes_FromStringAndSize((const char *)self->scratch,
                                         (Py_ssize_t)len);
    }
    PyObject *rec = self->assembly;
    self->assembly = NULL;
    assert(rec != NULL && (size_t)PyBytes_GET_SIZE(rec) >= len && len > 0);
    if ((size_t)PyBytes_GET_SIZE(rec) != len &&
        _PyBytes_Resize(&rec, (Py_ssize_t)len) < 0)
        return NULL;
    return rec;
}

/* The next record as bytes, NULL at the end (no exception) or on error. */
static PyObject *reader_next_locked(ReaderObject *self, module_state *st) {
    llog_event ev;
    for (;;) {
        if (self->finished || self->closed)
            return NULL;
        if (llog_reader_next_length(self->core) >= GIL_FRAGMENT) {
            /* A long checksum: let other threads run. The object lock keeps
             * the core to this thread; a buffer source stays exported. */
            self->released = PyEval_SaveThread();
            llog_reader_next(self->core, &ev);
            PyEval_RestoreThread(self->released);
            self->released = NULL;
        } else {
            llog_reader_next(self->core, &ev);
        }
        switch (ev.kind) {
        case LLOG_EV_RECORD: {
            PyObject *rec;
            if (ev.assembled) {
                rec = assembly_take(self, ev.len);
            } else {
                rec = PyBytes_FromStringAndSize((const char *)ev.data,
                                                (Py_ssize_t)ev.len);
            }
            if (rec == NULL)
                return NULL;
            self->has_last = 1;
            self->last_record_offset = ev.offset;
            return rec;
        }
        case LLOG_EV_CORRUPTION: {
            int go_on = reader_on_corruption(self, st, &ev, 0);
            if (go_on <= 0)
                return NULL;
            break;
        }
        case LLOG_EV_NEED_BLOCK:
            if (reader_fill(self) < 0)
                return NULL;
            break;
        case LLOG_EV_EOF:
            if (ev.torn && self->recovery == LLOG_RECOVER_ABSOLUTE) {
                reader_on_corruption(self, st, &ev, 1);
                return NULL;
            }
            if (self->kind == SRC_BUFFER)
                reader_finish(self); /* a buffer never grows */
            return NULL;
        case LLOG_EV_DONE:
            reader_finish(self);
            return NULL;
        case LLOG_EV_ERROR:
            reader_finish(self);
            raise_status((llog_status)ev.size);
            return NULL;
        }
    }
}

static int reader_check_open(ReaderObject *self) {
    if (self->closed) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on closed reader");
        return -1;
    }
    return 0;
}

static PyObject *Reader_iternext(PyObject *op) {
    ReaderObject *self = (ReaderObject *)op;
    module_state *st = state_of(Py_TYPE(op));
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    PyObject *rec = NULL;
    if (reader_check_open(self) == 0)
        rec = reader_next_locked(self, st);
    obj_lock_release(&self->lock);
    return rec;
}

static int parse_recovery(PyObject *obj, llog_recovery *out) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "recovery must be a str, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    for (unsigned i = 0; i < LLOG_RECOVERY_COUNT; i++) {
        if (PyUnicode_CompareWithASCIIString(obj, llog_recovery_name(i)) == 0) {
            *out = (llog_recovery)i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "recovery must be 'skip', 'tolerate_tail', 'point_in_time' "
                 "or 'absolute', not %R",
                 obj);
    return -1;
}

/* Converts a non-negative Python int to uint64_t. */
static int parse_offset(PyObject *obj, const char *what, uint64_t *out) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyObject *zero = PyLong_FromLong(0);
        int negative = zero ? PyObject_RichCompareBool(obj, zero, Py_LT) : -1;
        Py_XDECREF(zero);
        if (negative == 1) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must not be negative", what);
        }
        return -1;
    }
    *out = v;
    return 0;
}

static int reader_open_file(ReaderObject *self, PyObject *file) {
    self->kind = SRC_FILE;
    self->file = Py_NewRef(file);
    PyObject *r = PyObject_CallMethod(file, "seekable", NULL);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    } else {
        self->seekable = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (self->seekable < 0)
            return -1;
    }
    if (self->seekable) {
        PyObject *pos = PyObject_CallMethod(file, "tell", NULL);
        if (pos == NULL)
            return -1;
        int rc = parse_offset(pos, "tell()", &self->base);
        Py_DECREF(pos);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int Reader_init(PyObject *op, PyObject *args, PyObject *kwds) {
    ReaderObject *self = (ReaderObject *)op;
    static char *kwlist[] = {"source", "recovery", "verify_checksums",
                             "start",  "end",      "on_corruption",
                             NULL};
    PyObject *source, *recovery = NULL, *start = NULL, *end = Py_None;
    PyObject *on_corruption = Py_None;
    int verify = 1;
    if (self->core != NULL || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "Reader is already initialized");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OpOOO:Reader", kwlist,
                                     &source, &recovery, &verify, &start, &end,
                                     &on_corruption))
        return -1;
    llog_reader_options opt = {.end = LLOG_NO_END,
                               .verify_checksums = verify,
                               .reserve = assembly_reserve,
                               .reserve_ctx = self};
    self->recovery = LLOG_RECOVER_SKIP;
    self->verify_checksums = verify;
    if (recovery != NULL && parse_recovery(recovery, &self->recovery) < 0)
        return -1;
    if (start != NULL && parse_offset(start, "start", &opt.start) < 0)
        return -1;
    if (end != Py_None && parse_offset(end, "end", &opt.end) < 0)
        return -1;
    if (on_corruption != Py_None && !PyCallable_Check(on_corruption)) {
        PyErr_SetString(PyExc_TypeError,
                        "on_corruption must be callable or None");
        return -1;
    }
    self->start = opt.start;
    self->end = opt.end;
    module_state *st = state_of(Py_TYPE(op));
    self->fd = -1;
    if (is_path(source)) {
        self->kind = SRC_FD;
        int flags = O_RDONLY;
#ifdef O_BINARY
        flags |= O_BINARY;
#endif
#ifdef O_CLOEXEC
        flags |= O_CLOEXEC;
#endif
        self->fd = open_path(st, source, flags);
        if (self->fd < 0)
            return -1;
        struct stat info;
        if (fstat(self->fd, &info) == 0 && S_ISDIR(info.st_mode)) {
            errno = EISDIR;
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, source);
            return -1;
        }
#ifdef _WIN32
        self->seekable = _lseeki64(self->fd, 0, SEEK_CUR) >= 0;
#else
        self->seekable = lseek(self->fd, 0, SEEK_CUR) >= 0;
#endif
        opt.sequential = !self->seekable;
    } else if (PyObject_CheckBuffer(source)) {
        self->kind = SRC_BUFFER;
        if (PyObject_GetBuffer(source, &self->view, PyBUF_SIMPLE) < 0)
            return -1;
    } else if (PyObject_HasAttrString(source, "readinto")) {
        if (reader_open_file(self, source) < 0)
            return -1;
        opt.sequential = !self->seekable;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "Reader source must be a path, a bytes-like object or a "
                     "binary file object, not %.100s",
                     Py_TYPE(source)->tp_name);
        return -1;
    }
    if (self->kind != SRC_BUFFER) {
        self->block = PyMem_Malloc(self->kind == SRC_FD && self->seekable
                                       ? READ_CHUNK
                                       : LLOG_BLOCK_SIZE);
        if (self->block == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    self->name = Py_NewRef(source);
    self->on_corruption =
        on_corruption == Py_None ? NULL : Py_NewRef(on_corruption);
    self->core = llog_reader_new(&opt);
    if (self->core == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *Reader_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    ReaderObject *self = (ReaderObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->fd = -1;
    if (obj_lock_init(&self->lock) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void reader_close_locked(ReaderObject *self) {
    if (self->closed)
        return;
    self->closed = 1;
    reader_release_source(self);
    llog_reader_free(self->core);
    self->core = NULL;
#ifdef IN_PLACE_BLOCKS
    self->in_place_left = 0; /* their payloads were in what goes now */
#endif
    Py_CLEAR(self->assembly);
    PyMem_RawFree(self->scratch);
    self->scratch = NULL;
    self->scratch_cap = 0;
}

static PyObject *Reader_close(PyObject *op, PyObject *unused) {
    (void)unused;
    ReaderObject *self = (ReaderObject *)op;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    reader_close_locked(self);
    obj_lock_release(&self->lock);
    Py_RETURN_NONE;
}

static PyObject *Reader_enter(PyObject *op, PyObject *unused) {
    (void)unused;
    if (reader_check_open((ReaderObject *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_exit(PyObject *op, PyObject *args) {
    (void)args;
    return Reader_close(op, NULL);
}

static PyObject *Reader_iter(PyObject *op) {
    if (reader_check_open((ReaderObject *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

/*
 * A reader over a path pickles as what reopens it where it stands:
 * leveldb_log._restore.restore_reader(path, options, progress). Buffers and
 * file objects cannot travel to another process: refuse them.
 */
static PyObject *Reader_reduce(PyObject *op, PyObject *unused) {
    (void)unused;
    ReaderObject *self = (ReaderObject *)op;
    if (self->kind != SRC_FD || self->closed) {
        PyErr_Format(PyExc_TypeError, "cannot pickle a Reader over %s",
                     self->closed ? "a closed source"
                                  : "a buffer or file object (only paths)");
        return NULL;
    }
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    if (self->in_callback || self->closed) {
        /* Inside on_corruption, what follows the report is still queued in
         * the core: a copy would not go on exactly as this reader does. */
        obj_lock_release(&self->lock);
        PyErr_SetString(PyExc_TypeError,
                        self->closed
                            ? "cannot pickle a closed Reader"
                            : "cannot pickle a Reader from inside its "
                              "on_corruption callback");
        return NULL;
    }
    uint64_t position = llog_reader_position(self->core);
    PyObject *restore = NULL, *result = NULL;
    PyObject *mod = PyImport_ImportModule("leveldb_log._restore");
    if (mod != NULL) {
        restore = PyObject_GetAttrString(mod, "restore_reader");
        Py_DECREF(mod);
    }
    if (restore != NULL) {
        PyObject *end = self->end == LLOG_NO_END
                            ? Py_NewRef(Py_None)
                            : PyLong_FromUnsignedLongLong(self->end);
        PyObject *last =
            self->has_last
                ? PyLong_FromUnsignedLongLong(self->last_record_offset)
                : Py_NewRef(Py_None);
        result = Py_BuildValue(
            "O(O{sssOsKsNsO}(NKO))", restore, self->name, "recovery",
            llog_recovery_name(self->recovery), "verify_checksums",
            self->verify_checksums ? Py_True : Py_False, "start",
            (unsigned long long)position, "end", end, "on_corruption",
            self->on_corruption ? self->on_corruption : Py_None, last,
            (unsigned long long)self->dropped_bytes,
            self->finished ? Py_True : Py_False);
        Py_DECREF(restore);
    }
    obj_lock_release(&self->lock);
    return result;
}

/* Restores the progress of a pickled reader: _restore(last, dropped,
 * finished). */
static PyObject *Reader_restore(PyObject *op, PyObject *args) {
    ReaderObject *self = (ReaderObject *)op;
    PyObject *last;
    unsigned long long dropped;
    int finished;
    if (!PyArg_ParseTuple(args, "OKp:_restore", &last, &dropped, &finished))
        return NULL;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = 0;
    if (last != Py_None)
        rc = parse_offset(last, "last_record_offset",
                          &self->last_record_offset);
    if (rc == 0) {
        self->has_last = last != Py_None;
        self->dropped_bytes = dropped;
        if (finished)
            self->finished = 1;
    }
    obj_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Reader_repr(PyObject *op) {
    ReaderObject *self = (ReaderObject *)op;
    const char *state = self->closed ? " closed" : "";
    if (self->name == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (self->kind == SRC_BUFFER)
        return PyUnicode_FromFormat(
            "<leveldb_log.Reader over %.100s recovery='%s'%s>",
            Py_TYPE(self->name)->tp_name, llog_recovery_name(self->recovery),
            state);
    return PyUnicode_FromFormat("<leveldb_log.Reader %R recovery='%s'%s>",
                                self->name, llog_recovery_name(self->recovery),
                                state);
}

/* Counters change while another thread iterates: read them under the lock
 * (free-threaded builds have no GIL to make a plain read safe). */
typedef struct {
    int has_last;
    uint64_t last, dropped, in_place;
} reader_counts;

static int reader_counters(PyObject *op, reader_counts *out) {
    ReaderObject *self = (ReaderObject *)op;
    if (obj_lock_acquire(&self->lock) < 0)
        return -1;
    out->has_last = self->has_last;
    out->last = self->last_record_offset;
    out->dropped = self->dropped_bytes;
    out->in_place = self->blocks_in_place;
    obj_lock_release(&self->lock);
    return 0;
}

static PyObject *Reader_get_last(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    if (!c.has_last)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(c.last);
}

static PyObject *Reader_get_dropped(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(c.dropped);
}

static PyObject *Reader_get_in_place(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(c.in_place);
}

static PyObject *Reader_get_closed(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((ReaderObject *)op)->closed);
}

static PyObject *Reader_get_recovery(PyObject *op, void *closure) {
    (void)closure;
    return PyUnicode_FromString(
        llog_recovery_name(((ReaderObject *)op)->recovery));
}

static PyObject *Reader_get_verify(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((ReaderObject *)op)->verify_checksums);
}

static PyObject *Reader_get_start(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(((ReaderObject *)op)->start);
}

static PyObject *Reader_get_end(PyObject *op, void *closure) {
    (void)closure;
    ReaderObject *self = (ReaderObject *)op;
    if (self->end == LLOG_NO_END)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(self->end);
}

static PyObject *Reader_get_position(PyObject *op, void *closure) {
    (void)closure;
    ReaderObject *self = (ReaderObject *)op;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    int known = self->core != NULL; /* close() frees the core */
    uint64_t position = known ? llog_reader_position(self->core) : 0;
    obj_lock_release(&self->lock);
    if (!known)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(position);
}

static int Reader_traverse(PyObject *op, visitproc visit, void *arg) {
    ReaderObject *self = (ReaderObject *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->on_corruption);
    Py_VISIT(self->file);
    Py_VISIT(self->view.obj);
    return 0;
}

static int Reader_clear(PyObject *op) {
    ReaderObject *self = (ReaderObject *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->on_corruption);
    Py_CLEAR(self->file);
    return 0;
}

static void Reader_dealloc(PyObject *op) {
    ReaderObject *self = (ReaderObject *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    reader_close_locked(self);
    Reader_clear(op);
    obj_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Reader_methods[] = {
    {"close", Reader_close, METH_NOARGS,
     "Release the source; idempotent. Iterating afterwards raises "
     "ValueError."},
    {"__enter__", Reader_enter, METH_NOARGS, NULL},
    {"__exit__", Reader_exit, METH_VARARGS, NULL},
    {"__reduce__", Reader_reduce, METH_NOARGS, NULL},
    {"_restore", Reader_restore, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Reader_getset[] = {
    {"last_record_offset", Reader_get_last, NULL,
     "Offset of the first header of the record returned last (None before).",
     NULL},
    {"dropped_bytes", Reader_get_dropped, NULL,
     "Total bytes dropped by the corruptions reported so far.", NULL},
    {"closed", Reader_get_closed, NULL, "True once close() was called.", NULL},
    {"recovery", Reader_get_recovery, NULL, "The recovery mode.", NULL},
    {"verify_checksums", Reader_get_verify, NULL, "Whether CRCs are checked.",
     NULL},
    {"start", Reader_get_start, NULL, "First offset of the range read.", NULL},
    {"end", Reader_get_end, NULL, "End of the range read (None: no end).",
     NULL},
    {"position", Reader_get_position, NULL,
     "Offset where reading goes on: Reader(start=position) resumes here.",
     NULL},
    {"_blocks_in_place", Reader_get_in_place, NULL,
     "Blocks whose payload was read from the file straight into a record "
     "(internal: for tests and benchmarks).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(
    Reader_doc,
    "Reader(source, *, recovery='skip', verify_checksums=True, start=0, "
    "end=None,\n"
    "       on_corruption=None)\n"
    "--\n\n"
    "Iterate over the records of a LevelDB log.\n\n"
    "source is a path (str or os.PathLike), a bytes-like object holding the "
    "log,\n"
    "or a binary file object. Each item is the record's payload as bytes.");

static PyType_Slot Reader_slots[] = {
    {Py_tp_doc, (void *)Reader_doc},   {Py_tp_new, Reader_new},
    {Py_tp_init, Reader_init},         {Py_tp_dealloc, Reader_dealloc},
    {Py_tp_traverse, Reader_traverse}, {Py_tp_clear, Reader_clear},
    {Py_tp_iter, Reader_iter},         {Py_tp_iternext, Reader_iternext},
    {Py_tp_repr, Reader_repr},         {Py_tp_methods, Reader_methods},
    {Py_tp_getset, Reader_getset},     {0, NULL}};

static PyType_Spec Reader_spec = {
    .name = "leveldb_log.Reader",
    .basicsize = sizeof(ReaderObject),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Reader_slots,
};

/* ====================================================================== */
/* Writer                                                                 */
/* ====================================================================== */

static const uint8_t zero_block[LLOG_BLOCK_SIZE];

typedef struct {
    PyObject_HEAD llog_writer
        core; /* core.offset == written + len between calls */
    obj_lock lock;
    int fd;         /* a path we opened, or -1 */
    PyObject *file; /* a file object, or NULL */
    int closefd;    /* close the file object too */
    PyObject *name;
    char mode;
    uint8_t *buf;
    size_t cap;   /* bytes allocated */
    size_t limit; /* flush once this many are buffered (0: every record) */
    size_t len;
    uint64_t written; /* log offset the target has reached */
    int pad_next;     /* a failed write left a torn record: start a block */
    int os_error;     /* errno of a descriptor write made without the GIL */
    int closed;
} WriterObject;

/*
 * Hands n bytes to the target. Counts what was written even on failure, so
 * `written` always matches the target. Returns 0, or -1 with an exception
 * set (file objects) or os_error set (descriptors, callable without the GIL).
 */
static int target_write(WriterObject *self, const uint8_t *p, size_t n) {
    while (n > 0) {
        if (self->file == NULL) {
            Py_ssize_t got = write_some(self->fd, p, n);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                self->os_error = got < 0 ? errno : ENOSPC;
                return -1;
            }
            p += got;
            n -= (size_t)got;
            self->written += (uint64_t)got;
            continue;
        }
        PyObject *chunk =
            PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
        if (chunk == NULL)
            return -1;
        Py_ssize_t got = call_for_size(self->file, "write", chunk);
        Py_DECREF(chunk);
        if (got == -2 && PyErr_ExceptionMatches(PyExc_BlockingIOError)) {
            /* A buffered stream reports how much it took before refusing. */
            PyObject *exc = PyErr_GetRaisedException();
            PyObject *done = PyObject_GetAttrString(exc, "characters_written");
            Py_ssize_t k = done ? PyLong_AsSsize_t(done) : 0;
            Py_XDECREF(done);
            PyErr_Clear();
            if (k > 0 && (size_t)k <= n)
                self->written += (uint64_t)k;
            PyErr_SetRaisedException(exc);
            return -1;
        }
        if (got == -2)
            return -1;
        if (got <= 0 || (size_t)got > n) {
            PyErr_SetString(PyExc_OSError,
                            got > 0 ? "write() returned too large a count"
                                    : "write() accepted no bytes");
            return -1;
        }
        p += got;
        n -= (size_t)got;
        self->written += (uint64_t)got;
    }
    return 0;
}

/* Writes the buffer out; on failure keeps the unwritten rest at its front. */
static int flush_buffer(WriterObject *self) {
    uint64_t before = self->written;
    int rc = target_write(self, self->buf, self->len);
    size_t done = (size_t)(self->written - before);
    memmove(self->buf, self->buf + done, self->len - done);
    self->len -= done;
    return rc;
}

/* Appends bytes to the log: through the buffer, or straight to the target
 * when they are too large for it. */
static int emit(WriterObject *self, const uint8_t *p, size_t n) {
    if (n <= self->cap - self->len) {
        memcpy(self->buf + self->len, p, n);
        self->len += n;
        return 0;
    }
    if (flush_buffer(self) < 0)
        return -1;
    if (n <= self->cap / 2) {
        memcpy(self->buf, p, n);
        self->len = n;
        return 0;
    }
    return target_write(self, p, n);
}

#ifndef _WIN32
#define WRITEV_FRAGMENTS 64 /* fragments per writev call */

/* Writes iov[0..count) completely, counting progress in `written`; returns
 * 0, or -1 with os_error set. Safe without the GIL. */
static int writev_all(WriterObject *self, struct iovec *iov, int count) {
    while (count > 0) {
        ssize_t got = writev(self->fd, iov, count);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            self->os_error = got < 0 ? errno : ENOSPC;
            return -1;
        }
        self->written += (uint64_t)got;
        size_t done = (size_t)got;
        while (count > 0 && done >= iov->iov_len) {
            done -= iov->iov_len;
            iov++;
            count--;
        }
        if (count > 0) { /* a partial vector: go on inside it */
            iov->iov_base = (uint8_t *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return 0;
}

/*
 * A record too large for the buffer, to a descriptor: the buffered bytes,
 * then every fragment's prefix and payload in writev calls, the payload
 * straight from the caller's memory (no copy).
 */
static int encode_record_writev(WriterObject *self, const uint8_t *data,
                                size_t n, uint64_t *offset) {
    uint8_t prefix[WRITEV_FRAGMENTS][LLOG_HEADER_SIZE * 2];
    struct iovec iov[2 * WRITEV_FRAGMENTS + 1];
    int first = 1;
    do {
        int count = 0;
        size_t buffered = self->len;
        uint64_t before = self->written;
        if (buffered > 0)
            iov[count++] = (struct iovec){self->buf, buffered};
        for (int i = 0; i < WRITEV_FRAGMENTS && (first || n > 0); i++) {
            llog_fragment f;
            llog_writer_fragment(&self->core, data, n, first, &f);
            if (first)
                *offset = f.header_offset;
            memcpy(prefix[i], f.prefix, f.prefix_len);
            iov[count++] = (struct iovec){prefix[i], f.prefix_len};
            if (f.payload_len > 0)
                iov[count++] = (struct iovec){(void *)data, f.payload_len};
            data += f.payload_len;
            n -= f.payload_len;
            first = 0;
        }
        int rc = writev_all(self, iov, count);
        /* Keep the buffered bytes that did not reach the target at its front,
         * as flush_buffer does, so the caller can roll back. */
        size_t done = (size_t)(self->written - before);
        done = done < buffered ? done : buffered;
        memmove(self->buf, self->buf + done, buffered - done);
        self->len = buffered - done;
        if (rc < 0)
            return -1;
    } while (n > 0);
    return 0;
}
#endif

/* Encodes one record of any size; safe without the GIL for descriptors. */
static int encode_record(WriterObject *self, const uint8_t *data, size_t n,
                         uint64_t *offset) {
    if (self->pad_next) { /* never share a block with a torn record */
        size_t in = (size_t)(self->core.offset % LLOG_BLOCK_SIZE);
        if (in != 0 && emit(self, zero_block, LLOG_BLOCK_SIZE - in) < 0)
            return -1;
        self->core.offset += in ? LLOG_BLOCK_SIZE - in : 0;
        self->pad_next = 0;
    }
    uint64_t size = llog_writer_encoded_size(&self->core, n);
    if (size <= self->cap - self->len) { /* the common case: one copy */
        self->len += llog_writer_add(&self->core, data, n,
                                     self->buf + self->len, offset);
        return 0;
    }
#ifndef _WIN32
    if (self->file == NULL && n >= self->cap / 2)
        return encode_record_writev(self, data, n, offset);
#endif
    llog_fragment f;
    int first = 1;
    do {
        llog_writer_fragment(&self->core, data, n, first, &f);
        if (first)
            *offset = f.header_offset;
        if (emit(self, f.prefix, f.prefix_len) < 0 ||
            emit(self, data, f.payload_len) < 0)
            return -1;
        data += f.payload_len;
        n -= f.payload_len;
        first = 0;
    } while (n > 0);
    return 0;
}

/*
 * After a failed write: drop this record's bytes that are still buffered. If
 * the target already has some of them, the log holds a torn record; the next
 * record then starts in a fresh block so readers resynchronize before it.
 */
typedef struct {
    uint64_t offset; /* log offset where the record's bytes begin */
    int pad_next;    /* whether it was to start a fresh block */
} writer_mark;

static writer_mark writer_mark_now(const WriterObject *self) {
    writer_mark mark = {self->core.offset, self->pad_next};
    return mark;
}

static void writer_rollback(WriterObject *self, writer_mark mark) {
    if (self->written <= mark.offset) {
        self->len = (size_t)(mark.offset - self->written);
        self->pad_next = mark.pad_next;
    } else {
        self->len = 0;
        self->pad_next = 1;
    }
    self->core.offset = self->written + self->len;
}

static int writer_raise_pending(WriterObject *self) {
    if (self->os_error == 0)
        return 0;
    errno = self->os_error;
    self->os_error = 0;
    PyErr_SetFromErrno(PyExc_OSError);
    return -1;
}

static int writer_check_open(WriterObject *self) {
    if (self->closed || self->buf == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        self->closed ? "I/O operation on closed writer"
                                     : "Writer is not initialized");
        return -1;
    }
    return 0;
}

/* Writes one record (lock held); returns its offset in *offset. */
static int writer_put(WriterObject *self, PyObject *obj, uint64_t *offset) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "a record must be a bytes-like object, not %.100s",
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    writer_mark mark = writer_mark_now(self);
    int rc;
    if (self->file == NULL && view.len >= GIL_THRESHOLD) {
        /* The export pins the memory while the GIL is released. */
        Py_BEGIN_ALLOW_THREADS
        rc = encode_record(self, view.buf, (size_t)view.len, offset);
        Py_END_ALLOW_THREADS
    } else {
        rc = encode_record(self, view.buf, (size_t)view.len, offset);
    }
    PyBuffer_Release(&view);
    if (rc < 0) {
        writer_rollback(self, mark);
        writer_raise_pending(self);
        return -1;
    }
    return 0;
}

static int writer_flush_locked(WriterObject *self) {
    int rc;
    if (self->file == NULL) {
        Py_BEGIN_ALLOW_THREADS
        rc = flush_buffer(self);
        Py_END_ALLOW_THREADS
        return rc < 0 ? writer_raise_pending(self) : 0;
    }
    if (flush_buffer(self) < 0)
        return -1;
    PyObject *r = PyObject_CallMethod(self->file, "flush", NULL);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    }
    Py_XDECREF(r);
    return 0;
}

/* Flushes when the buffer reached its limit (every call when unbuffered). */
static int writer_maybe_flush(WriterObject *self) {
    if (self->len > 0 && self->len >= self->limit)
        return writer_flush_locked(self);
    return 0;
}

static PyObject *Writer_write(PyObject *op, PyObject *data) {
    WriterObject *self = (WriterObject *)op;
    uint64_t offset = 0;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    writer_mark mark = writer_mark_now(self);
    if (rc == 0)
        rc = writer_put(self, data, &offset);
    if (rc == 0 && writer_maybe_flush(self) < 0) {
        /* write() raised: its record must not reach the log later (a retry
         * would write it twice). Records before it stay buffered. */
        writer_rollback(self, mark);
        rc = -1;
    }
    obj_lock_release(&self->lock);
    return rc < 0 ? NULL : PyLong_FromUnsignedLongLong(offset);
}

static PyObject *Writer_write_many(PyObject *op, PyObject *iterable) {
    WriterObject *self = (WriterObject *)op;
    PyObject *it = PyObject_GetIter(iterable);
    if (it == NULL)
        return NULL;
    if (obj_lock_acquire(&self->lock) < 0) {
        Py_DECREF(it);
        return NULL;
    }
    Py_ssize_t count = 0;
    int rc = writer_check_open(self);
    PyObject *item;
    while (rc == 0 && (item = PyIter_Next(it)) != NULL) {
        uint64_t offset;
        rc = writer_put(self, item, &offset);
        Py_DECREF(item);
        if (rc == 0)
            count++;
    }
    if (rc == 0 && PyErr_Occurred())
        rc = -1; /* the iterator raised */
    /* Records written before an error still reach the target. */
    int flushed = self->closed ? 0 : writer_maybe_flush(self);
    obj_lock_release(&self->lock);
    Py_DECREF(it);
    if (rc < 0 || flushed < 0)
        return NULL;
    return PyLong_FromSsize_t(count);
}

static PyObject *Writer_flush(PyObject *op, PyObject *unused) {
    (void)unused;
    WriterObject *self = (WriterObject *)op;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    if (rc == 0)
        rc = writer_flush_locked(self);
    obj_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int fsync_fd(int fd) {
    int rc;
    Py_BEGIN_ALLOW_THREADS
#ifdef _WIN32
    rc = _commit(fd);
#else
    rc = fsync(fd);
#endif
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    return 0;
}

static int writer_sync_locked(WriterObject *self) {
    if (writer_flush_locked(self) < 0)
        return -1;
    if (self->file == NULL)
        return fsync_fd(self->fd);
    PyObject *fileno = PyObject_CallMethod(self->file, "fileno", NULL);
    if (fileno == NULL)
        return -1; /* no descriptor: io.UnsupportedOperation or AttributeError
                    */
    long fd = PyLong_AsLong(fileno);
    Py_DECREF(fileno);
    if (fd == -1 && PyErr_Occurred())
        return -1;
    return fsync_fd((int)fd);
}

static PyObject *Writer_sync(PyObject *op, PyObject *unused) {
    (void)unused;
    WriterObject *self = (WriterObject *)op;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    if (rc == 0)
        rc = writer_sync_locked(self);
    obj_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Writer_tell(PyObject *op, PyObject *unused) {
    (void)unused;
    WriterObject *self = (WriterObject *)op;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_check_open(self);
    uint64_t offset = self->core.offset;
    obj_lock_release(&self->lock);
    return rc < 0 ? NULL : PyLong_FromUnsignedLongLong(offset);
}

/* 1 when the target is a file object that is already closed (nothing to
 * flush into it then), else 0. */
static int target_closed(WriterObject *self) {
    if (self->file == NULL)
        return 0;
    PyObject *closed = PyObject_GetAttrString(self->file, "closed");
    if (closed == NULL) {
        PyErr_Clear();
        return 0;
    }
    int yes = PyObject_IsTrue(closed) > 0;
    Py_DECREF(closed);
    PyErr_Clear();
    return yes;
}

/* Closes the target; the first error is raised, after everything is released.
 */
static int writer_close_locked(WriterObject *self) {
    if (self->closed)
        return 0;
    int rc = 0;
    if (self->buf != NULL && (self->len > 0 || !target_closed(self)))
        rc = writer_flush_locked(self);
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    self->closed = 1;
    if (self->fd >= 0) {
        close_fd(self->fd);
        self->fd = -1;
    }
    if (self->file != NULL && self->closefd) {
        PyObject *r = PyObject_CallMethod(self->file, "close", NULL);
        if (r == NULL && exc == NULL)
            exc = PyErr_GetRaisedException();
        PyErr_Clear();
        Py_XDECREF(r);
    }
    Py_CLEAR(self->file);
    PyMem_Free(self->buf);
    self->buf = NULL;
    if (exc != NULL) {
        PyErr_SetRaisedException(exc);
        return -1;
    }
    return 0;
}

static PyObject *Writer_close(PyObject *op, PyObject *unused) {
    (void)unused;
    WriterObject *self = (WriterObject *)op;
    if (obj_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_close_locked(self);
    obj_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Writer_enter(PyObject *op, PyObject *unused) {
    (void)unused;
    if (writer_check_open((WriterObject *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Writer_exit(PyObject *op, PyObject *args) {
    (void)args;
    return Writer_close(op, NULL);
}

static PyObject *Writer_reduce(PyObject *op, PyObject *unused) {
    (void)op;
    (void)unused;
    PyErr_SetString(PyExc_TypeError, "cannot pickle a Writer");
    return NULL;
}

/* What a scan of a log's tail found. */
typedef struct {
    uint64_t clean_end; /* end of the last complete record */
    uint64_t torn_at;   /* start of the torn tail, or the end of the log */
    int damaged;        /* damage other than a torn tail after clean_end */
} tail_scan;

/*
 * Scans the log as if it ended at `size`: reads its end (going further back
 * only while no complete record is found) and reports what lies after the
 * last complete record.
 */
static int scan_tail(int fd, uint64_t size, tail_scan *out) {
    uint8_t *block = PyMem_Malloc(LLOG_BLOCK_SIZE);
    if (block == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t last = size > 0 ? size - 1 : 0;
    uint64_t start = last - last % LLOG_BLOCK_SIZE;
    int rc = 0;
    for (;;) {
        llog_reader_options opt = {
            .start = start, .end = LLOG_NO_END, .verify_checksums = 1};
        llog_reader *r = llog_reader_new(&opt);
        if (r == NULL) {
            PyErr_NoMemory();
            rc = -1;
            break;
        }
        uint64_t first_bad = LLOG_NO_END, torn_at = size;
        llog_event ev;
        do {
            llog_reader_next(r, &ev);
            if (ev.kind == LLOG_EV_NEED_BLOCK) {
                uint64_t at = llog_reader_wanted(r);
                size_t n = at >= size                    ? 0
                           : size - at < LLOG_BLOCK_SIZE ? (size_t)(size - at)
                                                         : LLOG_BLOCK_SIZE;
                Py_ssize_t got = fd_read_full(fd, 1, block, n, at);
                if (got < 0)
                    break;
                llog_reader_feed(r, block, (size_t)got);
            } else if (ev.kind == LLOG_EV_CORRUPTION &&
                       ev.offset < first_bad) {
                first_bad = ev.offset;
            } else if (ev.kind == LLOG_EV_EOF && ev.torn) {
                torn_at = ev.offset;
            } else if (ev.kind == LLOG_EV_ERROR) {
                raise_status((llog_status)ev.size);
            }
        } while (!PyErr_Occurred() && ev.kind != LLOG_EV_EOF &&
                 ev.kind != LLOG_EV_ERROR);
        uint64_t clean_end = llog_reader_clean_end(r);
        llog_reader_free(r);
        if (PyErr_Occurred()) {
            rc = -1;
            break;
        }
        if (clean_end >= start || start == 0) {
            /* Every report at or after clean_end was seen: it is >= start. */
            out->clean_end = clean_end;
            out->torn_at = torn_at;
            out->damaged = first_bad != LLOG_NO_END && first_bad >= clean_end;
            break;
        }
        uint64_t back = size - start; /* double the span read */
        start = start > back ? start - back : 0;
        start -= start % LLOG_BLOCK_SIZE;
    }
    PyMem_Free(block);
    return rc;
}

/* Offset just past the last non-zero byte in [floor, size), or floor. */
static int last_written(int fd, uint64_t floor, uint64_t size, uint64_t *out) {
    uint8_t *buf = PyMem_Malloc(LLOG_BLOCK_SIZE);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t end = size;
    *out = floor;
    while (end > floor) {
        size_t n = end - floor < LLOG_BLOCK_SIZE ? (size_t)(end - floor)
                                                 : LLOG_BLOCK_SIZE;
        Py_ssize_t got = fd_read_full(fd, 1, buf, n, end - n);
        if (got < 0) {
            PyMem_Free(buf);
            return -1;
        }
        size_t i = (size_t)got;
        while (i > 0 && buf[i - 1] == 0)
            i--;
        if (i > 0) {
            *out = end - n + i;
            break;
        }
        end -= n;
    }
    PyMem_Free(buf);
    return 0;
}

/*
 * Where "a" resumes. A log ending in a torn tail or zero fill (what a crash
 * or preallocation leaves) is cut back to the end of its last complete
 * record. A crash inside preallocated space leaves both, a torn record then
 * zeros, which read as damage: if the log, taken to end at its last non-zero
 * byte (never before the last complete record: payloads may end in zeros),
 * has only a torn tail after that record, it is cut back there too. Other
 * damage is left alone: only a torn tail is cut, and the new records start
 * at the next block boundary.
 */
static int resume_point(int fd, uint64_t size, uint64_t *cut, int *damaged) {
    tail_scan scan;
    if (scan_tail(fd, size, &scan) < 0)
        return -1;
    *cut = scan.damaged ? scan.torn_at : scan.clean_end;
    *damaged = scan.damaged;
    if (!scan.damaged)
        return 0;
    uint64_t written;
    if (last_written(fd, scan.clean_end, size, &written) < 0)
        return -1;
    tail_scan trimmed;
    if (written < size && scan_tail(fd, written, &trimmed) < 0)
        return -1;
    if (written < size && !trimmed.damaged) {
        *cut = trimmed.clean_end;
        *damaged = 0;
    }
    return 0;
}

static int writer_open_append(WriterObject *self) {
#ifdef _WIN32
    __int64 size = _lseeki64(self->fd, 0, SEEK_END);
#else
    off_t size = lseek(self->fd, 0, SEEK_END);
#endif
    if (size < 0) { /* not seekable (a pipe, a terminal): nothing to resume */
        size = 0;
        errno = 0;
    }
    uint64_t cut = (uint64_t)size;
    int damaged = 0;
    if (size > 0 && resume_point(self->fd, (uint64_t)size, &cut, &damaged) < 0)
        return -1;
    if (cut < (uint64_t)size) {
        int rc;
#ifdef _WIN32
        rc = _chsize_s(self->fd, (__int64)cut);
#else
        rc = ftruncate(self->fd, (off_t)cut);
#endif
        if (rc != 0) {
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, self->name);
            return -1;
        }
#ifdef _WIN32
        _lseeki64(self->fd, (__int64)cut, SEEK_SET);
#else
        lseek(self->fd, (off_t)cut, SEEK_SET);
#endif
    }
    self->written = cut;
    self->pad_next = damaged;
    return 0;
}

static int writer_open_path(WriterObject *self, module_state *st,
                            PyObject *path) {
    int flags = O_WRONLY | O_CREAT;
#ifdef O_BINARY
    flags |= O_BINARY;
#endif
#ifdef O_CLOEXEC
    flags |= O_CLOEXEC;
#endif
    if (self->mode == 'w')
        flags |= O_TRUNC;
    else if (self->mode == 'x')
        flags |= O_EXCL;
    else
        flags = (flags & ~O_WRONLY) | O_RDWR; /* "a" reads its tail first */
    self->fd = open_path(st, path, flags);
    if (self->fd < 0)
        return -1;
    return self->mode == 'a' ? writer_open_append(self) : 0;
}

/* The log starts at the object's offset 0: resume alignment at tell(). */
static int writer_open_file(WriterObject *self, PyObject *file) {
    self->file = Py_NewRef(file);
    self->written = 0;
    PyObject *pos = PyObject_CallMethod(file, "tell", NULL);
    if (pos == NULL) { /* pipes and other streams cannot tell */
        if (!PyErr_ExceptionMatches(PyExc_OSError) &&
            !PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int rc = parse_offset(pos, "tell()", &self->written);
    Py_DECREF(pos);
    return rc;
}

static int parse_mode(PyObject *mode, char *out) {
    const char *m = PyUnicode_Check(mode) ? PyUnicode_AsUTF8(mode) : NULL;
    if (m == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "mode must be a str, not %.100s",
                         Py_TYPE(mode)->tp_name);
        return -1;
    }
    if (strcmp(m, "w") != 0 && strcmp(m, "a") != 0 && strcmp(m, "x") != 0) {
        PyErr_Format(PyExc_ValueError, "mode must be 'w', 'a' or 'x', not %R",
                     mode);
        return -1;
    }
    *out = m[0];
    return 0;
}

static int Writer_init(PyObject *op, PyObject *args, PyObject *kwds) {
    WriterObject *self = (WriterObject *)op;
    static char *kwlist[] = {"target", "mode", "buffering", "closefd", NULL};
    PyObject *target, *mode = NULL;
    Py_ssize_t buffering = -1;
    int closefd = 0;
    if (self->buf != NULL || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "Writer is already initialized");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O$np:Writer", kwlist,
                                     &target, &mode, &buffering, &closefd))
        return -1;
    self->mode = 'w';
    if (mode != NULL && parse_mode(mode, &self->mode) < 0)
        return -1;
    if (buffering < -1) {
        PyErr_SetString(PyExc_ValueError,
                        "buffering must be -1, 0 or positive");
        return -1;
    }
    self->limit = buffering < 0 ? DEFAULT_BUFFER : (size_t)buffering;
    self->cap = self->limit < DEFAULT_BUFFER ? DEFAULT_BUFFER : self->limit;
    module_state *st = state_of(Py_TYPE(op));
    if (is_path(target)) {
        self->name = Py_NewRef(target);
        if (writer_open_path(self, st, target) < 0)
            return -1;
    } else if (PyObject_HasAttrString(target, "write")) {
        if (mode != NULL && self->mode != 'w') {
            PyErr_SetString(
                PyExc_ValueError,
                "mode applies to paths; open the file object yourself");
            return -1;
        }
        self->name = Py_NewRef(target);
        self->closefd = closefd;
        if (writer_open_file(self, target) < 0)
            return -1;
    } else {
        PyErr_Format(
            PyExc_TypeError,
            "Writer target must be a path or a binary file object, not %.100s",
            Py_TYPE(target)->tp_name);
        return -1;
    }
    llog_writer_init(&self->core, self->written);
    self->buf = PyMem_Malloc(self->cap);
    if (self->buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *Writer_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    WriterObject *self = (WriterObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->fd = -1;
    if (obj_lock_init(&self->lock) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *Writer_repr(PyObject *op) {
    WriterObject *self = (WriterObject *)op;
    if (self->name == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (self->closed)
        return PyUnicode_FromFormat("<leveldb_log.Writer %R closed>",
                                    self->name);
    return PyUnicode_FromFormat(
        "<leveldb_log.Writer %R mode='%c' offset=%llu>", self->name,
        self->mode, (unsigned long long)self->core.offset);
}

static PyObject *Writer_get_closed(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((WriterObject *)op)->closed);
}

static PyObject *Writer_get_mode(PyObject *op, void *closure) {
    (void)closure;
    char m[2] = {((WriterObject *)op)->mode, 0};
    return PyUnicode_FromString(m);
}

static PyObject *Writer_get_name(PyObject *op, void *closure) {
    (void)closure;
    WriterObject *self = (WriterObject *)op;
    return Py_NewRef(self->name ? self->name : Py_None);
}

static int Writer_traverse(PyObject *op, visitproc visit, void *arg) {
    WriterObject *self = (WriterObject *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->file);
    return 0;
}

static int Writer_clear(PyObject *op) {
    WriterObject *self = (WriterObject *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->file);
    return 0;
}

/* Like io's objects, an unclosed writer is flushed and closed when collected
 * (PEP 442 finalizer: safe to run Python code and to report errors here). */
static void Writer_finalize(PyObject *op) {
    WriterObject *self = (WriterObject *)op;
    if (self->closed || (self->buf == NULL && self->fd < 0))
        return;
    PyObject *saved = PyErr_GetRaisedException();
    if (obj_lock_acquire(&self->lock) == 0) {
        if (writer_close_locked(self) < 0)
            PyErr_WriteUnraisable(op);
        obj_lock_release(&self->lock);
    } else {
        PyErr_WriteUnraisable(op);
    }
    PyErr_SetRaisedException(saved);
}

static void Writer_dealloc(PyObject *op) {
    WriterObject *self = (WriterObject *)op;
    PyTypeObject *tp = Py_TYPE(op);
    if (PyObject_CallFinalizerFromDealloc(op) < 0)
        return; /* resurrected by the finalizer */
    PyObject_GC_UnTrack(op);
    if (self->fd >= 0)
        close_fd(self->fd);
    PyMem_Free(self->buf);
    Writer_clear(op);
    obj_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Writer_methods[] = {
    {"write", Writer_write, METH_O,
     "write(data) -> int\n--\n\nAppend one record; return its offset."},
    {"write_many", Writer_write_many, METH_O,
     "write_many(records) -> int\n--\n\nAppend every record of an iterable; "
     "return how many were written."},
    {"flush", Writer_flush, METH_NOARGS,
     "flush()\n--\n\nHand buffered bytes to the OS or the file object."},
    {"sync", Writer_sync, METH_NOARGS, "sync()\n--\n\nFlush, then fsync."},
    {"tell", Writer_tell, METH_NOARGS,
     "tell() -> int\n--\n\nLog length in bytes, buffered bytes included."},
    {"close", Writer_close, METH_NOARGS,
     "close()\n--\n\nFlush and close what the writer opened; idempotent."},
    {"__enter__", Writer_enter, METH_NOARGS, NULL},
    {"__exit__", Writer_exit, METH_VARARGS, NULL},
    {"__reduce__", Writer_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Writer_getset[] = {
    {"closed", Writer_get_closed, NULL, "True once close() was called.", NULL},
    {"mode", Writer_get_mode, NULL, "'w', 'a' or 'x'.", NULL},
    {"name", Writer_get_name, NULL, "The path or file object written to.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(
    Writer_doc,
    "Writer(target, mode='w', *, buffering=-1, closefd=False)\n"
    "--\n\n"
    "Write records to a LevelDB log.\n\n"
    "target is a path (str or os.PathLike) or a binary file object. mode, "
    "for\n"
    "paths: 'w' create or truncate, 'x' create new, 'a' append (cutting a "
    "torn\n"
    "tail back first). buffering: 0 hands every record to the OS before "
    "write()\n"
    "returns, -1 uses the default buffer, n > 0 a buffer of about n bytes.\n"
    "closefd=True also closes a file object when the writer closes.");

static PyType_Slot Writer_slots[] = {{Py_tp_doc, (void *)Writer_doc},
                                     {Py_tp_new, Writer_new},
                                     {Py_tp_init, Writer_init},
                                     {Py_tp_dealloc, Writer_dealloc},
                                     {Py_tp_finalize, Writer_finalize},
                                     {Py_tp_traverse, Writer_traverse},
                                     {Py_tp_clear, Writer_clear},
                                     {Py_tp_repr, Writer_repr},
                                     {Py_tp_methods, Writer_methods},
                                     {Py_tp_getset, Writer_getset},
                                     {0, NULL}};

static PyType_Spec Writer_spec = {
    .name = "leveldb_log.Writer",
    .basicsize = sizeof(WriterObject),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Writer_slots,
};

/* ====================================================================== */
/* Module functions                                                       */
/* ====================================================================== */

/* Converts an int in [0, 2**32) for the CRC functions: TypeError for
 * non-ints, ValueError out of range (never a silent wrap). */
static int parse_u32(PyObject *arg, uint32_t *out) {
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "expected an int, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || v < 0 || v > 0xFFFFFFFFLL) {
        PyErr_SetString(PyExc_ValueError, "expected an unsigned 32-bit value");
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* Sorts crc32c's fast-call arguments into data and value. */
static int crc32c_args(PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, PyObject **data, PyObject **value) {
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > 2 || nargs + nkw > 2) {
        PyErr_SetString(PyExc_TypeError, "crc32c() takes at most 2 arguments");
        return -1;
    }
    *data = nargs > 0 ? args[0] : NULL;
    *value = nargs > 1 ? args[1] : NULL;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        PyObject **slot = NULL;
        if (PyUnicode_CompareWithASCIIString(name, "data") == 0)
            slot = data;
        else if (PyUnicode_CompareWithASCIIString(name, "value") == 0)
            slot = value;
        if (slot == NULL || *slot != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "crc32c() got an unexpected or repeated argument %R",
                         name);
            return -1;
        }
        *slot = args[nargs + i];
    }
    if (*data == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "crc32c() missing required argument 'data'");
        return -1;
    }
    return 0;
}

static PyObject *mod_crc32c(PyObject *module, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    PyObject *data, *value;
    Py_buffer view;
    uint32_t crc = 0;
    if (crc32c_args(args, nargs, kwnames, &data, &value) < 0)
        return NULL;
    if (value != NULL && parse_u32(value, &crc) < 0)
        return NULL;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "a bytes-like object is required, not '%.100s'",
                         Py_TYPE(data)->tp_name);
        }
        return NULL;
    }
    if (view.len >= GIL_THRESHOLD) {
        /* The export pins the buffer's memory while the GIL is released. */
        Py_BEGIN_ALLOW_THREADS
        crc = llog_crc32c_extend(crc, view.buf, (size_t)view.len);
        Py_END_ALLOW_THREADS
    } else {
        crc = llog_crc32c_extend(crc, view.buf, (size_t)view.len);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

static PyObject *mod_mask_crc(PyObject *module, PyObject *arg) {
    (void)module;
    uint32_t v;
    if (parse_u32(arg, &v) < 0)
        return NULL;
    return PyLong_FromUnsignedLong(llog_mask_crc(v));
}

static PyObject *mod_unmask_crc(PyObject *module, PyObject *arg) {
    (void)module;
    uint32_t v;
    if (parse_u32(arg, &v) < 0)
        return NULL;
    return PyLong_FromUnsignedLong(llog_unmask_crc(v));
}

static PyMethodDef module_methods[] = {
    {"crc32c", (PyCFunction)(void (*)(void))mod_crc32c,
     METH_FASTCALL | METH_KEYWORDS,
     "crc32c(data, value=0) -> int\n--\n\n"
     "CRC-32C of a bytes-like object, continuing from value (like "
     "zlib.crc32)."},
    {"mask_crc", mod_mask_crc, METH_O,
     "mask_crc(crc) -> int\n--\n\nLevelDB's masked form of a CRC, as stored "
     "in logs."},
    {"unmask_crc", mod_unmask_crc, METH_O,
     "unmask_crc(masked) -> int\n--\n\nThe CRC a masked value stands for."},
    {NULL, NULL, 0, NULL}};

/* The usable CRC-32C implementations, slowest to fastest. */
static PyObject *crc32c_implementations(void) {
    PyObject *names = PyList_New(0);
    for (int i = 0; names != NULL && i < llog_crc32c_impl_count(); i++) {
        if (!llog_crc32c_impl_usable(i))
            continue;
        PyObject *name = PyUnicode_FromString(llog_crc32c_impl_name(i));
        if (name == NULL || PyList_Append(names, name) < 0)
            Py_CLEAR(names);
        Py_XDECREF(name);
    }
    if (names == NULL)
        return NULL;
    PyObject *tuple = PyList_AsTuple(names);
    Py_DECREF(names);
    return tuple;
}

/* The fastest implementation, or the one LEVELDB_LOG_CRC32C names (with a
 * warning, and the fastest, when that one is unknown or unusable here). */
static int select_crc32c(void) {
    llog_crc32c_init(1);
    const char *wanted = Py_GETENV("LEVELDB_LOG_CRC32C");
    if (wanted == NULL || *wanted == '\0' || llog_crc32c_init_named(wanted))
        return 0;
    PyObject *usable = crc32c_implementations();
    if (usable == NULL)
        return -1;
    int rc = PyErr_WarnFormat(
        PyExc_RuntimeWarning, 1,
        "LEVELDB_LOG_CRC32C=%s is not usable here (usable: %R); "
        "using %s",
        wanted, usable, llog_crc32c_implementation());
    Py_DECREF(usable);
    return rc;
}

/* PyModule_Add (3.13): adds value, stealing the reference; NULL fails. */
static int add_stolen(PyObject *module, const char *name, PyObject *value) {
    int rc = value ? PyModule_AddObjectRef(module, name, value) : -1;
    Py_XDECREF(value);
    return rc;
}

/* RECORD_TYPES (type byte -> name) and RECOVERY_MODES (names, in order),
 * from the core's lists: the one source of those names. */
static int add_names(PyObject *module) {
    PyObject *types = PyDict_New();
    for (unsigned t = 0; types != NULL && t < 256; t++) {
        const char *name = llog_type_name(t);
        PyObject *key = name ? PyLong_FromUnsignedLong(t) : NULL;
        PyObject *value = name ? PyUnicode_FromString(name) : NULL;
        if (name && (!key || !value || PyDict_SetItem(types, key, value) < 0))
            Py_CLEAR(types);
        Py_XDECREF(key);
        Py_XDECREF(value);
    }
    if (add_stolen(module, "RECORD_TYPES", types) < 0)
        return -1;
    PyObject *modes = PyTuple_New(LLOG_RECOVERY_COUNT);
    for (unsigned m = 0; modes != NULL && m < LLOG_RECOVERY_COUNT; m++) {
        PyObject *name = PyUnicode_FromString(llog_recovery_name(m));
        if (name == NULL)
            Py_CLEAR(modes);
        else
            PyTuple_SET_ITEM(modes, m, name);
    }
    return add_stolen(module, "RECOVERY_MODES", modes);
}

static int module_exec(PyObject *module) {
    module_state *st = PyModule_GetState(module);
    if (select_crc32c() < 0)
        return -1;
    register_fork_handler();

    PyObject *errors = PyImport_ImportModule("leveldb_log._errors");
    if (errors == NULL)
        return -1;
    st->corruption_type = PyObject_GetAttrString(errors, "Corruption");
    st->corruption_error = PyObject_GetAttrString(errors, "CorruptionError");
    st->truncated_error =
        PyObject_GetAttrString(errors, "TruncatedRecordError");
    Py_DECREF(errors);
    if (!st->corruption_type || !st->corruption_error || !st->truncated_error)
        return -1;
    PyObject *os = PyImport_ImportModule("os");
    if (os == NULL)
        return -1;
    st->os_open = PyObject_GetAttrString(os, "open");
    Py_DECREF(os);
    if (!st->os_open)
        return -1;

    st->reader_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &Reader_spec, NULL);
    if (st->reader_type == NULL ||
        PyModule_AddType(module, st->reader_type) < 0)
        return -1;
    st->writer_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &Writer_spec, NULL);
    if (st->writer_type == NULL ||
        PyModule_AddType(module, st->writer_type) < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "BLOCK_SIZE", LLOG_BLOCK_SIZE) < 0 ||
        PyModule_AddIntConstant(module, "HEADER_SIZE", LLOG_HEADER_SIZE) < 0 ||
        PyModule_AddIntConstant(module, "DEFAULT_BUFFER_SIZE",
                                DEFAULT_BUFFER) < 0 ||
        PyModule_AddStringConstant(module, "crc32c_implementation",
                                   llog_crc32c_implementation()) < 0)
        return -1;
    if (add_names(module) < 0)
        return -1;
    PyObject *impls = crc32c_implementations();
    if (impls == NULL ||
        PyModule_AddObject(module, "crc32c_implementations", impls) < 0) {
        Py_XDECREF(impls);
        return -1;
    }
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg) {
    module_state *st = PyModule_GetState(module);
    Py_VISIT(st->writer_type);
    Py_VISIT(st->reader_type);
    Py_VISIT(st->corruption_type);
    Py_VISIT(st->corruption_error);
    Py_VISIT(st->truncated_error);
    Py_VISIT(st->os_open);
    return 0;
}

static int module_clear(PyObject *module) {
    module_state *st = PyModule_GetState(module);
    Py_CLEAR(st->writer_type);
    Py_CLEAR(st->reader_type);
    Py_CLEAR(st->corruption_type);
    Py_CLEAR(st->corruption_error);
    Py_CLEAR(st->truncated_error);
    Py_CLEAR(st->os_open);
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030D0000
                                          {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
                                          {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "leveldb_log._core",
    .m_doc = "C core of leveldb_log: CRC-32C, Writer and Reader.",
    .m_size = sizeof(module_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&module_def); }
