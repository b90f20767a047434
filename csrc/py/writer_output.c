/*
 * writer_output.c - the Writer's way out: records encoded by the core into
 * the buffer (or handed to writev straight from the caller's memory when
 * large), and the buffer handed to a descriptor or a file object. Writing
 * a record whole or not at all is writer_write.c's; the type is writer.c.
 */
#include "writer_internal.h"

#include <errno.h>
#include <string.h>
#ifdef _WIN32
#include <io.h>
#else
#include <sys/uio.h>
#include <unistd.h>
#endif

static const uint8_t zero_block[LLOG_BLOCK_SIZE];

/* file.write() of n bytes at p, as llpy_call_for_size returns. A file
 * object may keep what it is given, so it gets a bytes copy; a BytesIO or
 * FileIO (lend_views), which copies what it is given, gets a view instead,
 * saving the copy and its allocation (bench/README.md), released after the
 * call, so that a reference kept anyway would fail rather than see the
 * buffer change. */
static Py_ssize_t call_write(llpy_writer *self, const uint8_t *p, size_t n) {
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
static Py_ssize_t file_write_some(llpy_writer *self, const uint8_t *p,
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
static int target_write(llpy_writer *self, const uint8_t *p, size_t n) {
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
 * (llpy_copy_is_slow), LLPY_BUF_SLACK bytes on, where they are moved. */
static uint8_t *buffer_out(llpy_writer *self) {
    uint8_t *from = self->buf;
    if (self->file == NULL && self->len > 0 &&
        llpy_copy_is_slow(self->written, (uintptr_t)from,
                          self->slow_copy_max)) {
        from += LLPY_BUF_SLACK;
        memmove(from, self->buf, self->len);
        self->bounced++;
    }
    return from;
}

/* Writes the buffer out; on failure keeps the unwritten rest at its front. */
int llpy_writer_hand_over_buffer(llpy_writer *self) {
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
static int emit(llpy_writer *self, const uint8_t *p, size_t n) {
    if (n <= self->cap - self->len) {
        memcpy(self->buf + self->len, p, n);
        self->len += n;
        return 0;
    }
    if (llpy_writer_hand_over_buffer(self) < 0)
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
static int writev_all(llpy_writer *self, struct iovec *iov, int count) {
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
static const uint8_t *writev_bounce(llpy_writer *self, const uint8_t *data,
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
static int encode_record_writev(llpy_writer *self, const uint8_t *data,
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
         * as llpy_writer_hand_over_buffer does, so the caller can roll back.
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
int llpy_writer_put(llpy_writer *self, const uint8_t *data, size_t n,
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

int llpy_writer_put_raw(llpy_writer *self, const uint8_t *data, size_t n) {
    if (self->cap - self->len < n) {
        uint8_t *grown =
            PyMem_Realloc(self->buf, self->len + n + LLPY_BUF_SLACK);
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
