/*
 * writer_output.c - the Writer's way out: records encoded by the core into
 * the buffer (or handed to writev straight from the caller's memory when
 * large), a record whole or not at all (rolled back on failure), and the
 * buffer handed to a descriptor or a file object. Its state is this file's
 * own (struct llpy_output), reached through writer_output.h; the calls and
 * their arguments are writer_write.c's, the type is writer.c.
 */
#include "writer_output.h"
#include "llpy_io.h"
#include "writer.h"
#include "writer_lock.h"

#include "log_writer.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <sys/uio.h>
#include <unistd.h>
#endif

/* Bytes past cap in the buffer: room to move what it holds before writing
 * it, when the kernel would copy it slowly. */
#define BUF_SLACK LLPY_COPY_SHIFT

struct llpy_output {
    llog_writer core; /* core.offset == written + len between calls */
    int fd;           /* a path's descriptor, or -1 */
    PyObject *file;   /* a file object, or NULL */
    int closefd;      /* close the file object too */
    int lend_views;   /* file is exactly a BytesIO or FileIO: write() gets a
                         view of the bytes, not a copy (call_write) */
    int locked;       /* the file lock is held on fd */
    int regular;      /* fd is a regular file (not a FIFO, a device) */
    int closing;      /* close() waits for a group commit */
    int closed;
    uint8_t *buf; /* cap + BUF_SLACK bytes allocated; NULL until started */
    size_t cap;
    size_t limit; /* hand over once this many are buffered (0: every record) */
    size_t len;
    uint64_t written; /* log offset the target has reached */
    int pad_next;     /* a failed write left a torn record: start a block */
    int os_error;     /* errno of a descriptor write made without the GIL */
    /* Durable write() calls queued behind a flush leave their records
     * buffered for its next leader to hand over (writer_sync.c): they
     * begin at deferred_from, with pad_next deferred_pad there. A failed
     * hand-over drops them: dropped, from dropped_from on. */
    int deferred;
    int deferred_pad;
    uint64_t deferred_from;
    int dropped;
    uint64_t dropped_from;
    /* Payloads the kernel would copy slowly from the caller's memory
     * (llpy_copy_is_slow: 1 to slow_copy_max bytes) are copied through
     * bounce first, and such a buffer moved BUF_SLACK bytes on; bounced
     * counts both, for tests. */
    unsigned slow_copy_max;
    uint8_t *bounce; /* LLPY_PAGE + LLOG_MAX_FRAGMENT bytes, or NULL */
    uint64_t bounced;
    llpy_policy *policy; /* bytes_per_sync=, preallocate= (borrowed) */
};

static const uint8_t zero_block[LLOG_BLOCK_SIZE];

/* file.write() of n bytes at p, as llpy_call_for_size returns. A file
 * object may keep what it is given, so it gets a bytes copy; a BytesIO or
 * FileIO (lend_views), which copies what it is given, gets a view instead,
 * saving the copy and its allocation (bench/README.md), released after the
 * call, so that a reference kept anyway would fail rather than see the
 * buffer change. */
static Py_ssize_t call_write(llpy_output *self, const uint8_t *p, size_t n) {
    PyObject *chunk =
        self->lend_views
            ? PyMemoryView_FromMemory((char *)p, (Py_ssize_t)n, PyBUF_READ)
            : PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
    if (chunk == NULL)
        return -2;
    Py_ssize_t got = llpy_call_for_size(self->file, "write", chunk);
    if (self->lend_views) {
        PyObject *exc = got == -2 ? PyErr_GetRaisedException() : NULL;
        PyObject *r = PyObject_CallMethod(chunk, "release", NULL);
        Py_XDECREF(r);
        if (exc != NULL) /* the write's error, not the release's */
            PyErr_SetRaisedException(exc);
        else if (r == NULL)
            got = -2;
    }
    Py_DECREF(chunk);
    return got;
}

/* One file.write(); the count it took (> 0), or -1 with an exception set
 * (what a refusing buffered stream took is counted in `written`). */
static Py_ssize_t file_write_some(llpy_output *self, const uint8_t *p,
                                  size_t n) {
    Py_ssize_t got = call_write(self, p, n);
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
    return got;
}

/*
 * Hands n bytes to the target. Counts what was written even on failure, so
 * `written` always matches the target. Returns 0, or -1 with an exception
 * set (file objects) or os_error set (descriptors, callable without the GIL).
 */
static int target_write(llpy_output *self, const uint8_t *p, size_t n) {
    while (n > 0) {
        Py_ssize_t got;
        if (self->file == NULL) {
            got = llpy_write_some(self->fd, p, n);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                self->os_error = got < 0 ? errno : ENOSPC;
                return -1;
            }
        } else {
            got = file_write_some(self, p, n);
            if (got < 0)
                return -1;
        }
        p += got;
        n -= (size_t)got;
        self->written += (uint64_t)got;
    }
    return 0;
}

/* Where the buffered bytes are written to a descriptor from: the buffer,
 * or, when the kernel would copy them slowly from there to the file
 * (llpy_copy_is_slow), BUF_SLACK bytes on, where they are moved. */
static uint8_t *buffer_out(llpy_output *self) {
    uint8_t *from = self->buf;
    if (self->file == NULL && self->len > 0 &&
        llpy_copy_is_slow(self->written, (uintptr_t)from,
                          self->slow_copy_max)) {
        from += BUF_SLACK;
        memmove(from, self->buf, self->len);
        self->bounced++;
    }
    return from;
}

/* Writes the buffer out; on failure keeps the unwritten rest at its front. */
static int hand_over_buffer(llpy_output *self) {
    uint8_t *from = buffer_out(self);
    uint64_t before = self->written;
    int rc = target_write(self, from, self->len);
    size_t done = (size_t)(self->written - before);
    memmove(self->buf, from + done, self->len - done);
    self->len -= done;
    return rc;
}

/* Appends bytes to the log: through the buffer, or straight to the target
 * when they are too large for it. */
static int emit(llpy_output *self, const uint8_t *p, size_t n) {
    if (n <= self->cap - self->len) {
        memcpy(self->buf + self->len, p, n);
        self->len += n;
        return 0;
    }
    if (hand_over_buffer(self) < 0)
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
static int writev_all(llpy_output *self, struct iovec *iov, int count) {
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

/* n payload bytes at data, to be written at log offset `at`, copied to the
 * bounce buffer LLPY_COPY_SHIFT bytes before their place modulo the page:
 * both that copy and the kernel's are then fast. Where they are written
 * from: there, or data when out of memory. */
static const uint8_t *writev_bounce(llpy_output *self, const uint8_t *data,
                                    size_t n, uint64_t at) {
    if (self->bounce == NULL)
        self->bounce = llpy_io_alloc(LLPY_PAGE + LLOG_MAX_FRAGMENT);
    if (self->bounce == NULL)
        return data; /* (slow, but written) */
    uint8_t *b = self->bounce + (size_t)((at - LLPY_COPY_SHIFT) % LLPY_PAGE);
    memcpy(b, data, n);
    self->bounced++;
    return b;
}

/*
 * A record too large for the buffer, to a descriptor: the buffered bytes,
 * then every fragment's prefix and payload in writev calls, the payload
 * straight from the caller's memory (no copy). A payload the kernel would
 * copy slowly from there ends a call before it, or, first, is copied
 * through the bounce buffer.
 */
static int encode_record_writev(llpy_output *self, const uint8_t *data,
                                size_t n, uint64_t *offset) {
    uint8_t prefix[WRITEV_FRAGMENTS][sizeof(((llog_fragment *)0)->prefix)];
    struct iovec iov[2 * WRITEV_FRAGMENTS + 1];
    int first = 1;
    do {
        int count = 0;
        size_t buffered = self->len;
        uint64_t before = self->written;
        uint8_t *held = buffer_out(self);
        if (buffered > 0)
            iov[count++] = (struct iovec){held, buffered};
        for (int i = 0, slow = 0;
             i < WRITEV_FRAGMENTS && (first || n > 0) && !slow; i++) {
            uint64_t at = llog_writer_payload_offset(&self->core);
            slow = n > 0 &&
                   llpy_copy_is_slow(at, (uintptr_t)data, self->slow_copy_max);
            if (slow && i > 0)
                break; /* it starts the next call */
            llog_fragment f;
            llog_writer_fragment(&self->core, data, n, first, &f);
            if (first)
                *offset = f.header_offset;
            memcpy(prefix[i], f.prefix, f.prefix_len);
            iov[count++] = (struct iovec){prefix[i], f.prefix_len};
            const uint8_t *from =
                slow ? writev_bounce(self, data, f.payload_len, at) : data;
            if (f.payload_len > 0)
                iov[count++] = (struct iovec){(void *)from, f.payload_len};
            data += f.payload_len;
            n -= f.payload_len;
            first = 0;
        }
        int rc = writev_all(self, iov, count);
        /* Keep the buffered bytes that did not reach the target at its front,
         * as hand_over_buffer does, so the caller can roll back.
         */
        size_t done = (size_t)(self->written - before);
        done = done < buffered ? done : buffered;
        memmove(self->buf, held + done, buffered - done);
        self->len = buffered - done;
        if (rc < 0)
            return -1;
    } while (n > 0);
    return 0;
}
#endif

/* Puts one record of any size; safe without the GIL for descriptors. */
static int put(llpy_output *self, const uint8_t *data, size_t n,
               uint64_t *offset) {
    if (self->pad_next) { /* never share a block with a torn record */
        size_t pad = llog_writer_fresh_block(&self->core);
        if (pad != 0 && emit(self, zero_block, pad) < 0)
            return -1;
        llog_writer_padded(&self->core, pad);
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

/* Appends n bytes (a dialect's record, small) to the buffer, grown if need
 * be; 0, or -1 with MemoryError. */
static int put_raw(llpy_output *self, const uint8_t *data, size_t n) {
    if (self->cap - self->len < n) {
        uint8_t *grown = PyMem_Realloc(self->buf, self->len + n + BUF_SLACK);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->buf = grown;
        self->cap = self->len + n;
    }
    if (n > 0)
        memcpy(self->buf + self->len, data, n);
    self->len += n;
    return 0;
}

/* ---- life --------------------------------------------------------------- */

llpy_output *llpy_output_new(llpy_policy *p) {
    llpy_output *self = PyMem_Calloc(1, sizeof *self);
    if (self == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    self->fd = -1; /* no descriptor yet */
    self->policy = p;
    return self;
}

void llpy_output_free(llpy_output *self) {
    if (self == NULL)
        return;
    if (self->fd >= 0)
        llpy_close_fd(self->fd);
    Py_CLEAR(self->file);
    PyMem_Free(self->buf);
    llpy_io_free(self->bounce);
    PyMem_Free(self);
}

int llpy_output_traverse(llpy_output *self, visitproc visit, void *arg) {
    if (self != NULL)
        Py_VISIT(self->file);
    return 0;
}

void llpy_output_clear(llpy_output *self) {
    if (self != NULL)
        Py_CLEAR(self->file);
}

/* ---- the target --------------------------------------------------------- */

void llpy_output_adopt_fd(llpy_output *self, int fd) { self->fd = fd; }

void llpy_output_set_locked(llpy_output *self) { self->locked = 1; }

void llpy_output_adopt_file(llpy_output *self, PyObject *file, int closefd) {
    Py_XSETREF(self->file, Py_NewRef(file));
    self->closefd = closefd;
}

void llpy_output_resume(llpy_output *self, uint64_t written, int pad_next) {
    self->written = written;
    self->pad_next = pad_next;
}

int llpy_output_fd(const llpy_output *self) { return self->fd; }

PyObject *llpy_output_file(const llpy_output *self) { return self->file; }

int llpy_output_start(llpy_output *self, llpy_state *st, size_t limit,
                      const llpy_writer_dialect *d) {
    self->limit = limit;
    self->cap = limit < LLPY_DEFAULT_BUFFER ? LLPY_DEFAULT_BUFFER : limit;
    struct stat info;
    self->regular = self->fd >= 0 && fstat(self->fd, &info) == 0 &&
                    (info.st_mode & S_IFMT) == S_IFREG;
    llog_writer_init(&self->core, self->written);
    llpy_policy_start(self->policy, self->fd, self->written);
    self->slow_copy_max = st->slow_copy_max;
    self->lend_views =
        self->file != NULL &&
        (Py_IS_TYPE(self->file, (PyTypeObject *)st->bytesio_type) ||
         Py_IS_TYPE(self->file, (PyTypeObject *)st->fileio_type));
    self->buf = PyMem_Malloc(self->cap + BUF_SLACK);
    if (self->buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint8_t bytes[LLPY_DIALECT_RECORD_MAX];
    return put_raw(self, bytes,
                   llpy_writer_dialect_start(d, &self->core, bytes));
}

/* ---- state -------------------------------------------------------------- */

int llpy_output_check_open(const llpy_output *self) {
    if (self->closed || self->closing || self->buf == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        self->closed || self->closing
                            ? "I/O operation on closed Writer"
                            : "Writer is not initialized");
        return -1;
    }
    return 0;
}

int llpy_output_started(const llpy_output *self) {
    return self->buf != NULL || self->closed;
}

int llpy_output_closed(const llpy_output *self) { return self->closed; }

void llpy_output_set_closing(llpy_output *self, int closing) {
    self->closing = closing;
}

uint64_t llpy_output_offset(const llpy_output *self) {
    return self->core.offset;
}

uint64_t llpy_output_written(const llpy_output *self) { return self->written; }

size_t llpy_output_buffered(const llpy_output *self) { return self->len; }

size_t llpy_output_limit(const llpy_output *self) { return self->limit; }

uint64_t llpy_output_bounced(const llpy_output *self) { return self->bounced; }

void llpy_output_synced(llpy_output *self, uint64_t at) {
    self->core.synced = at;
}

/* ---- records ------------------------------------------------------------ */

llpy_output_mark llpy_output_mark_now(const llpy_output *self) {
    llpy_output_mark mark = {self->core.offset, self->pad_next};
    return mark;
}

void llpy_output_rollback(llpy_output *self, llpy_output_mark mark) {
    if (self->written <= mark.offset) {
        self->len = (size_t)(mark.offset - self->written);
        self->pad_next = mark.pad_next;
    } else {
        self->len = 0;
        self->pad_next = 1;
    }
    self->core.offset = self->written + self->len;
}

/* The error of a descriptor write made without the GIL, raised. */
static int raise_pending(llpy_output *self) {
    if (self->os_error == 0)
        return 0;
    errno = self->os_error;
    self->os_error = 0;
    PyErr_SetFromErrno(PyExc_OSError);
    return -1;
}

/* put(), the GIL given up around a large record to a descriptor, and
 * rolled back on failure (its error raised). */
static int put_slow(llpy_output *self, const uint8_t *data, size_t n,
                    uint64_t *offset) {
    llpy_output_mark mark = llpy_output_mark_now(self);
    int rc;
    if (self->file == NULL && n >= LLPY_GIL_THRESHOLD) {
        /* The caller pins the memory while the GIL is released. */
        Py_BEGIN_ALLOW_THREADS
        rc = put(self, data, n, offset);
        Py_END_ALLOW_THREADS
    } else {
        rc = put(self, data, n, offset);
    }
    if (rc < 0) {
        llpy_output_rollback(self, mark);
        raise_pending(self);
        return -1;
    }
    return 0;
}

/* The same, with the common case here, for the callers to inline: no block
 * to start, a record short enough to keep the GIL, room in the buffer. */
static inline int put_whole(llpy_output *self, const uint8_t *data, size_t n,
                            uint64_t *offset) {
    if (!self->pad_next && n < LLPY_GIL_THRESHOLD &&
        llog_writer_encoded_size(&self->core, n) <= self->cap - self->len) {
        self->len += llog_writer_add(&self->core, data, n,
                                     self->buf + self->len, offset);
        return 0;
    }
    return put_slow(self, data, n, offset);
}

int llpy_output_put(llpy_output *self, const uint8_t *data, size_t n,
                    uint64_t *offset, uint64_t *end) {
    int rc = put_whole(self, data, n, offset);
    *end = self->core.offset;
    return rc;
}

/* Whether a record just put is handed over now: a sync asks for it, or
 * the buffer is full (a limit of 0 hands over every record). */
static inline int hand_over_due(const llpy_output *self, int sync) {
    return sync || (self->len > 0 && self->len >= self->limit);
}

int llpy_output_write(llpy_output *self, const uint8_t *data, size_t n,
                      int sync, uint64_t *offset) {
    llpy_output_mark mark = llpy_output_mark_now(self);
    if (put_whole(self, data, n, offset) < 0)
        return -1;
    if (hand_over_due(self, sync) && llpy_output_hand_over(self) < 0) {
        /* Records before it stay buffered. */
        llpy_output_rollback(self, mark);
        return -1;
    }
    return 0;
}

size_t llpy_output_put_run(llpy_output *self, const uint8_t *const *data,
                           const size_t *len, size_t n) {
    if (self->pad_next)
        return 0;
    size_t written = 0;
    size_t k =
        llog_writer_add_run(&self->core, data, len, n, self->buf + self->len,
                            self->cap - self->len, &written);
    self->len += written;
    return k;
}

/* ---- handing over ------------------------------------------------------- */

/* hand_over_buffer, then what follows a hand-over: the policy's for a
 * descriptor, a file object's flush(). */
static int hand_over_all(llpy_output *self) {
    int rc;
    if (self->file == NULL && self->regular && self->len <= LLPY_PAGE) {
        /* A page into the page cache: giving the GIL up and taking it back
         * costs more, and while it is given up the threads that want this
         * writer only wake to wait for its lock. */
        rc = hand_over_buffer(self);
        if (rc == 0)
            llpy_policy_after_output(self->policy, self->fd, self->written);
        return rc < 0 ? raise_pending(self) : 0;
    }
    if (self->file == NULL) {
        Py_BEGIN_ALLOW_THREADS
        rc = hand_over_buffer(self);
        if (rc == 0)
            llpy_policy_after_output(self->policy, self->fd, self->written);
        Py_END_ALLOW_THREADS
        return rc < 0 ? raise_pending(self) : 0;
    }
    if (hand_over_buffer(self) < 0)
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

/* A failed hand-off with the records of queued durable write() calls still
 * buffered: they are dropped (the group commit makes each of those calls
 * raise the same error). Records buffered before them stay, as after any
 * failed flush. */
static void drop_deferred(llpy_output *self) {
    if (!self->deferred)
        return;
    llpy_output_mark mark = {self->deferred_from, self->deferred_pad};
    llpy_output_rollback(self, mark);
    self->deferred = 0;
    self->dropped = 1;
    self->dropped_from = self->core.offset;
}

int llpy_output_hand_over(llpy_output *self) {
    int rc = hand_over_all(self);
    if (self->len == 0)
        self->deferred = 0; /* every record queued for a flush handed over */
    if (rc < 0)
        drop_deferred(self);
    return rc;
}

int llpy_output_hand_over_for(llpy_output *self, int sync) {
    if (hand_over_due(self, sync))
        return llpy_output_hand_over(self);
    return 0;
}

int llpy_output_queued(const llpy_output *self) { return self->deferred; }

/* Records queued before this one are still buffered, unless its put handed
 * the whole buffer over (a full buffer, a large record): the queue starts
 * anew. */
void llpy_output_defer(llpy_output *self, llpy_output_mark mark) {
    if (self->deferred && self->written <= self->deferred_from)
        return;
    self->deferred = 1;
    self->deferred_from = mark.offset;
    self->deferred_pad = mark.pad_next;
}

int llpy_output_dropped(llpy_output *self, uint64_t *from) {
    if (!self->dropped)
        return 0;
    self->dropped = 0;
    *from = self->dropped_from;
    return 1;
}

/* ---- the end ------------------------------------------------------------ */

/* 1 when the target is a file object that is already closed (nothing to
 * flush into it then), else 0. */
static int target_closed(llpy_output *self) {
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

int llpy_output_finish(llpy_output *self, const llpy_writer_dialect *d) {
    if (self->closed || self->closing)
        return 1;
    if (self->buf == NULL)
        return 0;
    int gone = target_closed(self);
    if (!gone) {
        uint8_t bytes[LLPY_DIALECT_RECORD_MAX];
        size_t n = llpy_writer_dialect_finish(d, &self->core, bytes);
        if (put_raw(self, bytes, n) < 0)
            return -1;
    }
    return self->len > 0 || !gone ? llpy_output_hand_over(self) : 0;
}

int llpy_output_close(llpy_output *self) {
    if (self->fd >= 0) {
        /* The reservation and the file lock go before the descriptor. */
        llpy_policy_release(self->policy, self->fd, self->locked);
        if (self->locked)
            llpy_file_unlock(self->fd);
        self->locked = 0;
        llpy_close_fd(self->fd);
        self->fd = -1;
    }
    self->closed = 1;
    self->closing = 0;
    int rc = 0;
    if (self->file != NULL && self->closefd) {
        PyObject *r = PyObject_CallMethod(self->file, "close", NULL);
        rc = r == NULL ? -1 : 0;
        Py_XDECREF(r);
    }
    Py_CLEAR(self->file);
    PyMem_Free(self->buf);
    self->buf = NULL;
    llpy_io_free(self->bounce);
    self->bounce = NULL;
    return rc;
}
