/*
 * reader_fill.c - feeding a Reader's core the block it asks for, one
 * function per source kind (buffer, path, file object), plus the in-place
 * path that reads a long record's payload straight into its bytes object.
 * The feed (what the source is and where reading stands in it) is this
 * file's own; llpy_feed_fill() is the one entry, called when the core
 * needs a block.
 */
#include "llpy_io.h"
#include "module.h"
#include "reader_internal.h"

#include <errno.h>
#include <string.h>
#ifndef _WIN32
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#endif

/* Bytes read from a file at once: fewer system calls than one block each,
 * while a reader still holds about one chunk plus its largest record. */
#define LLPY_READ_CHUNK (4 * LLOG_BLOCK_SIZE)
/* A long record's payload is read from a file straight into the object it
 * is assembled in, up to this many blocks per system call. */
#if defined(__linux__) || defined(__FreeBSD__)
#define LLPY_IN_PLACE_BLOCKS 16
#endif

struct llpy_feed {
    enum llpy_source_kind kind;
    llpy_state *st;          /* the module's (slow_copy_max) */
    llog_reader *core;       /* fed; NULL once the reader is closed */
    llpy_assembly *assembly; /* its guess of a record's length */
    Py_buffer view;          /* SRC_BUFFER, while view.obj != NULL */
    int fd;                  /* SRC_FD */
    PyObject *file;          /* SRC_FILE */
    int owns_file;           /* SRC_FILE: a URL's, closed with the reader */
    int seekable;            /* SRC_FD, SRC_FILE: can read at any offset */
    uint64_t base;           /* SRC_FILE: object position of log offset 0 */
    uint64_t file_pos;       /* log offset a sequential source is at */
    uint8_t *block;          /* SRC_FD, SRC_FILE: the block fed to core */
    size_t block_len;
    uint64_t block_offset;
#ifdef LLPY_IN_PLACE_BLOCKS
    /* Blocks read in place, waiting to be fed: each one a header here and
     * its payload where its record is assembled. */
    uint8_t in_place_head[LLPY_IN_PLACE_BLOCKS][LLOG_HEADER_SIZE];
    int in_place_next, in_place_left;
    uint64_t in_place_offset; /* file offset of the next one */
    uint8_t *in_place_body;   /* its payload */
#endif
    uint64_t blocks_in_place; /* fed so, for tests (reader_testing.c) */
    uint64_t blocks_bounced;  /* of those, read through the block buffer */
    /* SRC_FD over a path: the path made absolute (bytes, or NULL), to tell
     * whether another file is there now; and how far into the file data
     * was read, to tell whether it shrank (llpy_feed_change). */
    PyObject *abs_path;
    uint64_t seen_end;
};

/* ---- buffers ----------------------------------------------------------- */

static int fill_buffer(llpy_feed *self, uint64_t want) {
    size_t size = (size_t)self->view.len;
    size_t len = 0;
    if (want < size)
        len = size - (size_t)want < LLOG_BLOCK_SIZE ? size - (size_t)want
                                                    : LLOG_BLOCK_SIZE;
    llog_reader_feed(self->core,
                     len ? (const uint8_t *)self->view.buf + want : NULL, len);
    return 0;
}

/* ---- sources read a block at a time ------------------------------------ */

typedef Py_ssize_t (*read_at_fn)(llpy_feed *self, uint8_t *buf, size_t n,
                                 uint64_t at);

/* A seek to log offset `at`, or the read there, failed: past the end of the
 * file (a file system may refuse offsets beyond its largest file on either),
 * it is the end, 0; else the error stands, -1. Asking the size moves the
 * file, so the next read seeks again. */
static int failed_past_end(llpy_feed *self, uint64_t at) {
    if (!PyErr_ExceptionMatches(PyExc_OSError) &&
        !PyErr_ExceptionMatches(PyExc_OverflowError) &&
        !PyErr_ExceptionMatches(PyExc_ValueError))
        return -1;
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *end = PyObject_CallMethod(self->file, "seek", "ii", 0, 2);
    self->file_pos = UINT64_MAX; /* where the file stands is unknown */
    uint64_t size = 0;
    int past = end != NULL && llpy_parse_offset(end, "seek()", &size) == 0 &&
               self->base + at >= size;
    Py_XDECREF(end);
    if (past) {
        PyErr_Clear();
        Py_DECREF(exc);
        return 0;
    }
    PyErr_Clear();
    PyErr_SetRaisedException(exc); /* the seek's own error */
    return -1;
}

/* Brings a file object to log offset `at`: a seek, or for a stream, which
 * only goes forward, reading and discarding. 1 when there, 0 when the
 * stream ended first, -1 with an exception set. */
static int file_seek_to(llpy_feed *self, uint64_t at) {
    if (self->seekable) {
        if (at > (uint64_t)INT64_MAX - self->base)
            return 0; /* past any file: no offset type holds it */
        PyObject *r = PyObject_CallMethod(
            self->file, "seek", "K", (unsigned long long)(self->base + at));
        if (r == NULL)
            return failed_past_end(self, at);
        Py_DECREF(r);
        return 1;
    }
    /* The core reads such sources from block 0 on and never asks for an
     * earlier byte. */
    assert(self->file_pos < at);
    while (self->file_pos < at) {
        size_t skip = (size_t)(at - self->file_pos);
        PyObject *chunk =
            PyObject_CallMethod(self->file, "read", "n",
                                (Py_ssize_t)(skip > 65536 ? 65536 : skip));
        if (chunk == NULL)
            return -1;
        Py_ssize_t len = PyBytes_Check(chunk) ? PyBytes_GET_SIZE(chunk) : 0;
        Py_DECREF(chunk);
        if (len == 0)
            return 0;
        self->file_pos += (uint64_t)len;
    }
    return 1;
}

/* file.readinto(buf[:n]); the count, or -1 with an exception set. */
static Py_ssize_t file_readinto(llpy_feed *self, uint8_t *buf, size_t n) {
    PyObject *mv =
        PyMemoryView_FromMemory((char *)buf, (Py_ssize_t)n, PyBUF_WRITE);
    if (mv == NULL)
        return -1;
    Py_ssize_t got = llpy_call_for_size(self->file, "readinto", mv);
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
    return got;
}

/* Reads from a file object at log offset `at` into buf, up to n bytes. */
static Py_ssize_t file_read_at(llpy_feed *self, uint8_t *buf, size_t n,
                               uint64_t at) {
    if (self->file_pos != at) {
        int there = file_seek_to(self, at);
        if (there <= 0)
            return there;
        self->file_pos = at;
    }
    if (n == 0)
        return 0;
    Py_ssize_t got = file_readinto(self, buf, n);
    if (got < 0 && self->seekable)
        return failed_past_end(self, at);
    if (got > 0)
        self->file_pos += (uint64_t)got;
    return got;
}

/* Reads a path source at log offset `at`. A descriptor that cannot seek (a
 * FIFO, a terminal) is read in order: the core asks for no earlier byte, and
 * later ones are reached by reading and discarding. */
static Py_ssize_t path_read_at(llpy_feed *self, uint8_t *buf, size_t n,
                               uint64_t at) {
    if (self->seekable)
        return llpy_fd_read_full(self->fd, 1, buf, n, at);
    assert(at >= self->file_pos); /* sequential sources never go back */
    while (self->file_pos < at) {
        size_t skip = (size_t)(at - self->file_pos);
        Py_ssize_t got =
            llpy_fd_read_full(self->fd, 0, buf, skip < n ? skip : n, 0);
        if (got <= 0)
            return got;
        self->file_pos += (uint64_t)got;
    }
    Py_ssize_t got = llpy_fd_read_full(self->fd, 0, buf, n, 0);
    if (got > 0)
        self->file_pos += (uint64_t)got;
    return got;
}

/* Feeds the block at `want`, read whole through read_at. */
static int fill_block(llpy_feed *self, uint64_t want, read_at_fn read_at) {
    if (self->block_offset != want || self->seekable > 0) {
        /* A block asked for again was short: read it whole, since an append
         * may have cut a torn tail or zero fill back and rewritten it. Only
         * a stream, which cannot be rewritten, keeps what it has. */
        self->block_offset = want;
        self->block_len = 0;
    }
    while (self->block_len < LLOG_BLOCK_SIZE) {
        uint8_t *dst = self->block + self->block_len;
        size_t n = LLOG_BLOCK_SIZE - self->block_len;
        Py_ssize_t got = read_at(self, dst, n, want + self->block_len);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        self->block_len += (size_t)got;
    }
    llog_reader_feed(self->core, self->block, self->block_len);
    return 0;
}

/* ---- reading in place -------------------------------------------------- */

#ifdef LLPY_IN_PLACE_BLOCKS
/* Feeds the next block read in place (a header and its payload). */
static void in_place_feed(llpy_feed *self) {
    llog_reader_feed_split(self->core,
                           self->in_place_head[self->in_place_next],
                           self->in_place_body, LLOG_BLOCK_SIZE);
    self->in_place_next++;
    self->in_place_left--;
    self->in_place_offset += LLOG_BLOCK_SIZE;
    self->in_place_body += LLOG_MAX_FRAGMENT;
    self->blocks_in_place++;
}

/* How many blocks to read in place (*n), and whether the block expected to
 * end the record comes too (*tail), from `assembled` bytes so far. */
static void in_place_plan(llpy_feed *self, size_t assembled, size_t *n,
                          int *tail) {
    size_t hint = llpy_assembly_hint(self->assembly);
    size_t expect = hint > assembled ? hint - assembled : 0;
    size_t count = expect == 0 ? 3 : (expect - 1) / LLOG_MAX_FRAGMENT;
    size_t most = assembled / LLOG_MAX_FRAGMENT;
    if (most < 2)
        most = 2;
    if (most > LLPY_IN_PLACE_BLOCKS)
        most = LLPY_IN_PLACE_BLOCKS;
    *tail = expect > 0 && count <= most; /* the next block may end it */
    *n = count > most ? most : count;
}

/* Where a payload the kernel would copy slowly into its place is read
 * instead: in the block buffer, which is page-aligned, LLPY_COPY_SHIFT
 * bytes past its source modulo the page. */
#define IN_PLACE_BOUNCE (LLOG_HEADER_SIZE + LLPY_COPY_SHIFT)

/* How many of the n blocks from `want` can be read in place at dst: those
 * before the first whose payload the kernel would copy slowly there
 * (llpy_copy_is_slow; the tail block is then left out), or, when that is
 * the first, one, through the block buffer (*bounce). */
static size_t in_place_fast(llpy_feed *self, const uint8_t *dst, uint64_t want,
                            size_t n, int *tail, int *bounce) {
    unsigned max = self->st->slow_copy_max;
    *bounce = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t from = want + i * LLOG_BLOCK_SIZE + LLOG_HEADER_SIZE;
        if (llpy_copy_is_slow((uintptr_t)(dst + i * LLOG_MAX_FRAGMENT), from,
                              max)) {
            *tail = 0;
            *bounce = i == 0;
            return i == 0 ? 1 : i;
        }
    }
    return n;
}

/* One preadv at `want`: n blocks split into in_place_head and dst (the
 * payload of one through the block buffer when bounce), then (tail) one
 * whole block into the block buffer. The count, or -1 with an exception
 * set. */
static ssize_t in_place_read(llpy_feed *self, uint64_t want, uint8_t *dst,
                             size_t n, int tail, int bounce) {
    struct iovec iov[2 * LLPY_IN_PLACE_BLOCKS + 1];
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        iov[count].iov_base = self->in_place_head[i];
        iov[count++].iov_len = LLOG_HEADER_SIZE;
        iov[count].iov_base = bounce ? self->block + IN_PLACE_BOUNCE
                                     : dst + i * LLOG_MAX_FRAGMENT;
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
    if (got < 0 && !PyErr_Occurred())
        PyErr_SetFromErrno(PyExc_OSError);
    if (bounce && got > LLOG_HEADER_SIZE) { /* a fast copy from there */
        memcpy(dst, self->block + IN_PLACE_BOUNCE,
               (size_t)got - LLOG_HEADER_SIZE);
        self->blocks_bounced++;
    }
    return got;
}

/* How many of the n blocks read (total bytes) are one full MIDDLE fragment
 * each: those are fed split. */
static size_t in_place_run(llpy_feed *self, size_t n, size_t total) {
    size_t k = 0;
    while (k < n && total >= (k + 1) * LLOG_BLOCK_SIZE &&
           llog_header_whole_middle(self->in_place_head[k]))
        k++;
    return k;
}

/* After a run of k blocks fed split: puts what was read of block k in the
 * block buffer (its pieces copied together when it was read split). */
static void in_place_rest(llpy_feed *self, uint64_t want, const uint8_t *dst,
                          size_t n, int tail, size_t total, size_t k) {
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
}

/*
 * Inside a long record, reads the blocks that carry on with it straight
 * into the buffer the record is assembled in: one preadv puts each block's
 * header in in_place_head and its payload where the core would copy it to.
 * How many blocks: as many as the last such record suggests are MIDDLE
 * fragments (a few when it is already longer), but never more than the
 * record has had so far, so that a wrong guess costs at most about what
 * was read right. When the guess was not cut so, the block expected to end
 * the record comes in the same call, whole, into the block buffer. A
 * payload the kernel would copy slowly into its place (llpy_copy_is_slow)
 * ends the call before it, or, first, is read through the block buffer and
 * copied over (in_place_fast). What was
 * read is then sorted out: blocks that are one full MIDDLE fragment each
 * are fed split (the core still checks everything, and appends them without
 * a copy); at the first that is not, its pieces are copied together into
 * the block buffer and the rest is forgotten (read again when wanted).
 * Returns 1 when a block was fed, 0 when this does not apply, -1 on error.
 */
static int fill_in_place(llpy_feed *self, uint64_t want) {
    size_t assembled, n;
    int tail, bounce = 0;
    if (!llog_reader_in_place(self->core, &assembled))
        return 0;
    in_place_plan(self, assembled, &n, &tail);
    /* Only the block that ends a short record: a chunk read brings the
     * blocks after it too, which short records do not read in place. */
    if (n == 0 && llpy_assembly_hint(self->assembly) < LLOG_BLOCK_SIZE)
        return 0;
    uint8_t *dst = NULL;
    if (n > 0) {
        dst = llog_reader_append_point(self->core, n * LLOG_MAX_FRAGMENT);
        if (dst == NULL)
            return 0; /* out of memory: the core's next event says so */
        n = in_place_fast(self, dst, want, n, &tail, &bounce);
    }
    ssize_t got = in_place_read(self, want, dst, n, tail, bounce);
    if (got < 0)
        return -1;
    if (got > 0 && want + (uint64_t)got > self->seen_end)
        self->seen_end = want + (uint64_t)got;
    size_t k = in_place_run(self, n, (size_t)got);
    in_place_rest(self, want, dst, n, tail, (size_t)got, k);
    if (k == 0) {
        llog_reader_feed(self->core, self->block, self->block_len);
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

/* ---- paths and file objects -------------------------------------------- */

/*
 * A path that can seek: READ_CHUNK bytes read at a time, blocks fed from
 * them; a block not wholly in the chunk (the end of the file, or not read
 * yet) is read again, so a grown or rewritten tail is seen. Inside a long
 * record, blocks are read in place instead.
 */
static int fill_path(llpy_feed *self, uint64_t want) {
    if (!self->seekable)
        return fill_block(self, want, path_read_at);
#ifdef LLPY_IN_PLACE_BLOCKS
    if (self->in_place_left > 0 && want == self->in_place_offset) {
        in_place_feed(self);
        return 0;
    }
    self->in_place_left = 0;
#endif
    uint64_t cached_end = self->block_offset + self->block_len;
    if (want < self->block_offset || want + LLOG_BLOCK_SIZE > cached_end) {
#ifdef LLPY_IN_PLACE_BLOCKS
        int rc = fill_in_place(self, want);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
#endif
        Py_ssize_t got =
            llpy_fd_read_full(self->fd, 1, self->block, LLPY_READ_CHUNK, want);
        if (got < 0)
            return -1;
        if (got > 0 && want + (uint64_t)got > self->seen_end)
            self->seen_end = want + (uint64_t)got;
        self->block_offset = want;
        self->block_len = (size_t)got;
    }
    size_t in = (size_t)(want - self->block_offset);
    size_t avail = self->block_len - in;
    llog_reader_feed(self->core, self->block + in,
                     avail < LLOG_BLOCK_SIZE ? avail : LLOG_BLOCK_SIZE);
    return 0;
}

/*
 * Feeds the core the block it wants. A block asked for again (the log has
 * grown) is read again whole from a source that can seek, where an append
 * may have rewritten its tail; only a stream keeps what it read and reads
 * what is new past its end (fill_block, fill_path).
 */
int llpy_feed_fill(llpy_feed *self) {
    uint64_t want = llog_reader_wanted(self->core);
    switch (self->kind) {
    case LLPY_SRC_BUFFER:
        return fill_buffer(self, want);
    case LLPY_SRC_FD:
        return fill_path(self, want);
    case LLPY_SRC_FILE:
        break;
    }
    return fill_block(self, want, file_read_at);
}

/* ---- a followed file ---------------------------------------------------- */

/* Asked at the end of the data, where a follower waits for more: a file that
 * now ends before the reader's position lost what it read (truncated or
 * rewritten); another file at the path (a new inode) means the log was
 * replaced, as by a rename, and this one will likely not grow again. A
 * file cut back only past the position (an append cutting a torn tail) is
 * the same log. */
enum llpy_source_change llpy_feed_change(const llpy_feed *self,
                                         uint64_t *size) {
#ifndef _WIN32
    struct stat now, there;
    if (self->kind != LLPY_SRC_FD || !self->seekable || self->fd < 0 ||
        self->core == NULL || fstat(self->fd, &now) != 0)
        return LLPY_SOURCE_SAME;
    *size = (uint64_t)now.st_size;
    if (*size < self->seen_end && *size < llog_reader_position(self->core))
        return LLPY_SOURCE_SHRANK;
    if (self->abs_path != NULL &&
        stat(PyBytes_AS_STRING(self->abs_path), &there) == 0 &&
        (there.st_dev != now.st_dev || there.st_ino != now.st_ino))
        return LLPY_SOURCE_REPLACED;
#else
    (void)self;
    (void)size;
#endif
    return LLPY_SOURCE_SAME;
}

/* ---- making and letting go --------------------------------------------- */

/* A feed of the kind, with the block buffer a file needs; NULL with an
 * exception set. */
static llpy_feed *feed_new(llpy_state *st, enum llpy_source_kind kind,
                           int seekable) {
    llpy_feed *self = PyMem_RawCalloc(1, sizeof *self);
    if (self == NULL)
        return (llpy_feed *)PyErr_NoMemory();
    self->kind = kind;
    self->st = st;
    self->fd = -1;
    self->seekable = seekable;
    if (kind != LLPY_SRC_BUFFER) {
        int chunk = kind == LLPY_SRC_FD && seekable;
        self->block = llpy_io_alloc(chunk ? LLPY_READ_CHUNK : LLOG_BLOCK_SIZE);
        if (self->block == NULL) {
            PyMem_RawFree(self);
            return (llpy_feed *)PyErr_NoMemory();
        }
    }
    return self;
}

llpy_feed *llpy_feed_buffer(llpy_state *st, PyObject *source) {
    llpy_feed *self = feed_new(st, LLPY_SRC_BUFFER, 1);
    if (self != NULL &&
        PyObject_GetBuffer(source, &self->view, PyBUF_SIMPLE) < 0) {
        PyMem_RawFree(self);
        return NULL;
    }
    return self;
}

llpy_feed *llpy_feed_path(llpy_state *st, int fd, int seekable,
                          PyObject *abs_path) {
    llpy_feed *self = feed_new(st, LLPY_SRC_FD, seekable);
    if (self == NULL) {
        Py_XDECREF(abs_path);
        return NULL;
    }
    self->fd = fd;
    self->abs_path = abs_path;
    return self;
}

llpy_feed *llpy_feed_file(llpy_state *st, PyObject *file, int seekable,
                          uint64_t base, int owned) {
    llpy_feed *self = feed_new(st, LLPY_SRC_FILE, seekable);
    if (self == NULL)
        return NULL;
    self->file = Py_NewRef(file);
    self->base = base;
    self->owns_file = owned;
    return self;
}

void llpy_feed_attach(llpy_feed *self, llog_reader *core,
                      llpy_assembly *assembly) {
    self->core = core;
    self->assembly = assembly;
}

enum llpy_source_kind llpy_feed_kind(const llpy_feed *self) {
    return self->kind;
}

void llpy_feed_finished(llpy_feed *self) {
    if (self != NULL && self->kind == LLPY_SRC_BUFFER &&
        self->view.obj != NULL)
        PyBuffer_Release(&self->view); /* exhausted: let the buffer go */
}

int llpy_feed_redirect_end(llpy_feed *self) {
    if (self->assembly == NULL)
        return 0; /* never attached: nothing was read for a record */
#ifdef LLPY_IN_PLACE_BLOCKS
    size_t len = self->in_place_left > 0
                     ? (size_t)self->in_place_left * LLOG_MAX_FRAGMENT
                     : 0;
    return llpy_assembly_redirect_end(self->assembly, self->core,
                                      &self->in_place_body, len);
#else
    return llpy_assembly_redirect_end(self->assembly, self->core, NULL, 0);
#endif
}

void llpy_feed_blocks(const llpy_feed *self, uint64_t *in_place,
                      uint64_t *bounced) {
    *in_place = self->blocks_in_place;
    *bounced = self->blocks_bounced;
}

/* Lets the source go: a buffer is released, a descriptor or a URL's file
 * object the reader opened is closed, the block buffer freed; the core is
 * forgotten (it goes with the reader's closing). */
void llpy_feed_close(llpy_feed *self) {
    if (self == NULL)
        return;
    if (self->view.obj != NULL)
        PyBuffer_Release(&self->view);
    if (self->kind == LLPY_SRC_FD && self->fd >= 0) {
        llpy_close_fd(self->fd);
        self->fd = -1;
    }
    if (self->file != NULL && self->owns_file) {
        PyObject *r = PyObject_CallMethod(self->file, "close", NULL);
        if (r == NULL)
            PyErr_WriteUnraisable(self->file);
        Py_XDECREF(r);
    }
    Py_CLEAR(self->file);
    llpy_io_free(self->block);
    self->block = NULL;
    self->core = NULL;
#ifdef LLPY_IN_PLACE_BLOCKS
    self->in_place_left = 0; /* their payloads were in what goes now */
#endif
}

int llpy_feed_traverse(llpy_feed *self, visitproc visit, void *arg) {
    if (self == NULL)
        return 0;
    Py_VISIT(self->file);
    Py_VISIT(self->view.obj);
    return 0;
}

void llpy_feed_clear(llpy_feed *self) {
    if (self == NULL)
        return;
    Py_CLEAR(self->file);
    Py_CLEAR(self->abs_path);
}

void llpy_feed_free(llpy_feed *self) {
    llpy_feed_close(self);
    llpy_feed_clear(self);
    PyMem_RawFree(self);
}

int llpy_feed_seekable(const llpy_feed *self) { return self->seekable; }
