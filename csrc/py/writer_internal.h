/*
 * writer_internal.h - the Writer's fields and the functions its files share,
 * by file; not the API: included by writer*.c alone. The binding's other
 * files see the Writer through writer.h.
 */
#ifndef LLPY_WRITER_INTERNAL_H
#define LLPY_WRITER_INTERNAL_H

#include "llpy_io.h"
#include "lock.h"
#include "module.h"
#include "writer.h"
#include "writer_append.h"
#include "writer_dialect.h"
#include "writer_lock.h"
#include "writer_policy.h"

#include "log_reader.h"
#include "log_writer.h"

/* buffering= above this is refused. */
#define LLPY_MAX_BUFFER (1 << 30)

/* The group commit of one Writer: writer_sync.c's alone. */
typedef struct llpy_sync_group llpy_sync_group;

struct llpy_writer {
    PyObject_HEAD llog_writer
        core; /* core.offset == written + len between calls */
    llpy_lock lock;
    int fd;         /* a path we opened, or -1 */
    PyObject *file; /* a file object, or NULL */
    int closefd;    /* close the file object too */
    int lend_views; /* file is exactly a BytesIO or FileIO: write() gets a
                       view of the bytes, not a copy (writer_output.c) */
    PyObject *name;
    char mode;
    uint8_t *buf; /* cap + LLPY_BUF_SLACK bytes allocated */
    size_t cap;
    size_t limit; /* flush once this many are buffered (0: every record) */
    size_t len;
    uint64_t written; /* log offset the target has reached */
    int pad_next;     /* a failed write left a torn record: start a block */
    int os_error;     /* errno of a descriptor write made without the GIL */
    /* Durable write() calls queued behind a flush leave their records
     * buffered for its next leader to hand over (writer_sync.c): they
     * begin at deferred_from, with pad_next deferred_pad there. */
    int deferred;
    int deferred_pad;
    uint64_t deferred_from;
    int closed;
    llpy_writer_dialect *dialect; /* other dialects (writer_dialect.c) */
    int compress; /* the dialect's, copied: write() reads it per record */
    /* Payloads the kernel would copy slowly from the caller's memory
     * (llpy_copy_is_slow: 1 to slow_copy_max bytes) are copied through
     * bounce first, and such a buffer moved LLPY_BUF_SLACK bytes on
     * (writer_output.c); bounced counts both, for tests. */
    unsigned slow_copy_max;
    uint8_t *bounce; /* LLPY_PAGE + LLOG_MAX_FRAGMENT bytes, or NULL */
    uint64_t bounced;
    /* Durability (writer_sync.c) and the file lock (writer_lock.c) */
    int sync_default;     /* sync= */
    int closing;          /* close() waits for a group commit */
    int use_lock, locked; /* lock=; the lock is held on fd */
    int dir_fd;           /* a new log's directory, until first synced */
    int regular;          /* fd is a regular file (not a FIFO, a device) */
    llpy_policy *policy;  /* bytes_per_sync=, preallocate= */
    llpy_sync_group *group;
};

/* ---- writing records (writer_write.c) --------------------------------- */

/* The methods write(), write_many(), flush() and sync(). */
PyObject *llpy_writer_write(PyObject *op, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames);
PyObject *llpy_writer_write_many(PyObject *op, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames);
PyObject *llpy_writer_flush(PyObject *op, PyObject *unused);
PyObject *llpy_writer_sync(PyObject *op, PyObject *unused);
/* 0, or -1 with ValueError for a closed or uninitialized writer. */
int llpy_writer_check_open(llpy_writer *self);
/* Hands everything buffered to the target, and a file object's flush()
 * (lock held); 0, or -1 with an exception set. */
int llpy_writer_hand_over(llpy_writer *self);
/* The same, only when queued durable write() calls left records buffered
 * (writer_sync.c): before a record that must not fall with them if that
 * hand-over fails, and by the next leader. 0, or -1 with an exception. */
int llpy_writer_hand_over_queued(llpy_writer *self);

/* ---- the way out (writer_output.c) ------------------------------------ */

/* Bytes past cap in a Writer's buffer: room to move what it holds before
 * writing it, when the kernel would copy it slowly. */
#define LLPY_BUF_SLACK LLPY_COPY_SHIFT

/* Puts one record of any size, encoded, into the buffer or straight to the
 * target; safe without the GIL for descriptors. */
int llpy_writer_put(llpy_writer *self, const uint8_t *data, size_t n,
                    uint64_t *offset);
/* Hands the buffered bytes to the target; keeps what it refused. */
int llpy_writer_hand_over_buffer(llpy_writer *self);
/* Appends n bytes (a dialect's record, small) to the buffer, grown if need
 * be; 0, or -1 with MemoryError. */
int llpy_writer_put_raw(llpy_writer *self, const uint8_t *data, size_t n);

/* ---- the target (writer_open.c, writer_append.c) ---------------------- */

/* The target opened (a path, a file object or a URL) and the Writer's
 * written offset set from it; "w" truncates once locked. 0, or -1 with an
 * exception. */
int llpy_writer_open_target(llpy_writer *self, PyObject *target,
                            PyObject *mode, int closefd,
                            PyObject *storage_options);
/* The mode argument ("w", "a", "x") and the buffering argument (-1, 0 or a
 * size), parsed as Writer() takes them. */
int llpy_writer_parse_mode(PyObject *mode, char *out);
int llpy_writer_parse_buffering(PyObject *obj, size_t *limit);

/* ---- durability (writer_sync.c) ---------------------------------------- */

/* Waits until the log is durable up to `end` (lock not held): leads a
 * group flush or waits for one. 0, or -1 with an exception set. */
int llpy_sync_wait(llpy_writer *self, uint64_t end);
/* The same, with the lock held on entry (given up on return): a record
 * left buffered is then never out of the group's sight. */
int llpy_sync_wait_locked(llpy_writer *self, uint64_t end);
/* Whether a durable write() may leave its record buffered (lock held):
 * a flush is in flight, and the next leader hands over what it finds. */
int llpy_sync_defers(llpy_writer *self);
/* Buffered bytes from log offset `from` on were dropped after a failed
 * hand-off (lock held, its exception set): every durable call waiting
 * for a record among them raises the same error instead. */
void llpy_sync_dropped(llpy_writer *self, uint64_t from);
/* The group of a new Writer; `hand_over_queued` hands over the records
 * queued durable write() calls left buffered (0, or -1 with an exception),
 * for a leader to call before its flush. NULL with MemoryError. */
llpy_sync_group *llpy_sync_group_new(int (*hand_over_queued)(llpy_writer *));
void llpy_sync_group_free(llpy_sync_group *g);
/* tp_traverse and tp_clear of what the group holds (its test hook). */
int llpy_sync_group_traverse(llpy_sync_group *g, visitproc visit, void *arg);
void llpy_sync_group_clear(llpy_sync_group *g);
/* close(): waits for a group commit in flight (lock held on entry and on
 * return, given up while waiting). */
int llpy_sync_close(llpy_writer *self);

#endif /* LLPY_WRITER_INTERNAL_H */
