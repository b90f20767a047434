/*
 * binding.h - what the files of the CPython binding (leveldb_log._core)
 * share. Only this folder includes Python.h; the core (../core/) does the
 * format, this folder the I/O and the Python objects:
 *
 *   module.c       module init and state, CRC functions, constants, and
 *                  the one place that raises (status codes, corruptions)
 *   lock.c         the per-object lock and fork handling
 *   io.c           paths, descriptors and file objects: open, read, write
 *   reader.c       the Reader's iteration (the per-record hot path),
 *                  recovery modes and reports, and opening it (tp_init)
 *   reader_type.c  the Reader type's other slots, properties, methods and
 *                  docstring
 *   reader_fill.c  feeding the Reader's core one block, per source kind
 *   reader_dialect.c  the Reader's RocksDB and Pebble options, metadata
 *                  and the decoding of compressed records
 *   reader_arrow.c the Reader's records as Arrow batches and streams
 *   writer_arrow.c Writer.write_many from Arrow arrays and streams
 *                  (arrow.h: the Arrow C data and stream interfaces)
 *   writer.c       the Writer type
 *   writer_dialect.c  the Writer's RocksDB and Pebble options, compression
 *                  and trailer
 *   writer_append.c  where mode "a" resumes, and the cut back to there
 *   writer_sync.c  durable writes: group commit of fdatasync
 *   writer_policy.c  sync=, bytes_per_sync=, preallocate=, a new log's
 *                  directory
 *   writer_lock.c  one Writer per file: the advisory lock on a path
 *   scan.c         _scan_block: the regions of a block, for scan.py
 *
 * Every non-static symbol of the binding starts with llpy_ / LLPY_.
 */
#ifndef LLPY_BINDING_H
#define LLPY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <stdint.h>

#include "log_reader.h"
#include "log_writer.h"

#if PY_VERSION_HEX < 0x030C0000
/* The 3.12 exception API, for older interpreters. */
static inline PyObject *PyErr_GetRaisedException(void) {
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

static inline void PyErr_SetRaisedException(PyObject *exc) {
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
#define LLPY_GIL_THRESHOLD (64 * 1024)
#define LLPY_DEFAULT_BUFFER (64 * 1024)
#define LLPY_MAX_BUFFER (1 << 30) /* buffering= above this is refused */

/* ---- module state (module.c) ------------------------------------------ */

typedef struct llpy_state {
    PyTypeObject *writer_type;
    PyTypeObject *reader_type;
    PyTypeObject *batch_type;   /* Arrow batches (reader_arrow.c) */
    PyTypeObject *batches_type; /* their iterator */
    PyObject *corruption_type;  /* leveldb_log._errors.Corruption */
    PyObject *corruption_error;
    PyObject *truncated_error;
    PyObject *corruption_warning; /* a UserWarning subclass */
    PyObject *os_open;
    /* io.BytesIO and io.FileIO: their write() copies or writes what it is
     * given at once and keeps no reference (writer_output.c lends them
     * views of its buffer) */
    PyObject *bytesio_type, *fileio_type;
    PyObject *locked_error;     /* leveldb_log._filelock.locked_error */
    Py_ssize_t assembly_hint;   /* the last fragmented record's length */
    Py_ssize_t assembly_expect; /* the next one's, when the last two agree */
    struct cols_spare *arrow_spare; /* a released batch's buffers, for the
                                       next iterator's (reader_arrow.c) */
    unsigned slow_copy_max; /* llpy_copy_is_slow's window: 1 to this many
                               bytes (LLPY_SLOW_COPY_MAX; tests change it) */
} llpy_state;

static inline llpy_state *llpy_state_of(PyTypeObject *type) {
    return (llpy_state *)PyType_GetModuleState(type);
}

/* The one place that raises: MemoryError or OverflowError for a core
 * status; CorruptionError or TruncatedRecordError from a Corruption. */
void llpy_raise_status(llog_status status);
void llpy_raise_corruption(llpy_state *st, int truncated, PyObject *c);
/* Issues a Warning instance through warnings.warn (None, or NULL with the
 * exception a filter turned it into). */
PyObject *llpy_warn(PyObject *warning);
/* CorruptionError for a file mode "a" refuses: it stops being a log at
 * `at` (of `size` bytes) for the reason `why`. */
void llpy_raise_not_a_log(llpy_state *st, PyObject *name, uint64_t at,
                          uint64_t size, const char *why);

/* Converts a non-negative Python int to uint64_t (TypeError, ValueError
 * naming `what`). */
int llpy_parse_offset(PyObject *obj, const char *what, uint64_t *out);
/* A flag argument, True or False only: TypeError naming `what` for anything
 * else (a string such as "no" would be true). 0, or -1. */
int llpy_parse_flag(PyObject *obj, const char *what, int *out);

/* The types (reader_type.c, writer.c) and _scan_block (scan.c). */
extern PyType_Spec llpy_reader_spec;
extern PyType_Spec llpy_writer_spec;
PyObject *llpy_detect_dialect(PyObject *m, PyObject *const *a, Py_ssize_t n);
PyObject *llpy_scan_block(PyObject *module, PyObject *const *args,
                          Py_ssize_t nargs);

/* ---- the per-object lock (lock.c) ------------------------------------- */

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
/* tp_new of Reader and Writer: an object with a fresh lock (at lock_at) and
 * no descriptor yet (the int at fd_at is -1). */
PyObject *llpy_new_object(PyTypeObject *type, size_t lock_at, size_t fd_at);

/* ---- sources and targets (io.c) --------------------------------------- */

/* 1 for str and os.PathLike, which name files; 0 otherwise. */
int llpy_is_path(PyObject *obj);
/* A Writer's target path: a str, an os.PathLike, or bytes (which a Reader
 * reads as a log's data, but a Writer cannot write into). */
int llpy_is_target_path(PyObject *obj);
/* 1 for a str (or os.PathLike giving one) of the form scheme://...: a URL
 * for leveldb_log._storage; 0 otherwise; -1 with an exception set. */
int llpy_is_url(PyObject *obj);
/* leveldb_log._storage.open_url(url, mode, storage_options or None): a
 * binary file object, or for a local file system its plain path (a str);
 * NULL with an exception set. */
PyObject *llpy_open_url(PyObject *url, const char *mode,
                        PyObject *storage_options);
/* os.open(path, flags | O_BINARY | O_CLOEXEC, 0o666): a descriptor, or -1
 * with an exception set (naming the file). */
int llpy_open_path(llpy_state *st, PyObject *path, int flags);
void llpy_close_fd(int fd);
/* One write(2); -1 with errno set. Called without the GIL. */
Py_ssize_t llpy_write_some(int fd, const uint8_t *buf, size_t n);
/* Reads from a descriptor at `at` (or where it stands, when not seekable)
 * until n bytes or the end; the count, or -1 with an exception set. */
Py_ssize_t llpy_fd_read_full(int fd, int seekable, uint8_t *buf, size_t n,
                             uint64_t at);
/* obj.method(arg) as a non-negative size, -1 for None, or -2 with an
 * exception set. */
Py_ssize_t llpy_call_for_size(PyObject *obj, const char *method,
                              PyObject *arg);
/* Buffers the kernel copies file data into: page-aligned (LLPY_PAGE), so
 * that a read at a block boundary copies between equally aligned addresses.
 * NULL when out of memory (no exception); free with llpy_io_free. */
void *llpy_io_alloc(size_t n);
void llpy_io_free(void *p);

#define LLPY_PAGE 4096
/* Some CPUs copy strings (rep movsb: the kernel's copy to and from user
 * memory, memcpy of large sizes) many times slower when the destination
 * lies 1 to 31 bytes past the source modulo the page size
 * (docs/performance.md has the figures; bench/copy_window.c measures it). */
#define LLPY_SLOW_COPY_MAX 31
/* 1 when copying the byte at src (an address, or a file offset read at a
 * page boundary) to dst is such a copy: 1 to max bytes past it. */
static inline int llpy_copy_is_slow(uint64_t dst, uint64_t src, unsigned max) {
    uint64_t d = (dst - src) % LLPY_PAGE;
    return d >= 1 && d <= max;
}
/* How far such a copy is moved by going through a buffer placed this many
 * bytes past its source (and so before its place): both copies are then
 * fast, the first at this distance, the second at d - LLPY_COPY_SHIFT
 * (33 to 63 bytes before its place). Larger than LLPY_SLOW_COPY_MAX. */
#define LLPY_COPY_SHIFT 64

/* Buffers of LLPY_PAGES_MIN bytes or more are mapped on their own, in huge
 * pages where the system has them (pages.c); smaller ones are malloc's.
 * Resize is realloc's contract with the old size given (p NULL and old 0
 * for a new buffer; never smaller); free needs the size too. */
#define LLPY_PAGES_MIN ((size_t)4 << 20)
void *llpy_pages_resize(void *p, size_t old, size_t size);
void llpy_pages_free(void *p, size_t size);

/* ---- the Reader (reader*.c) ------------------------------------------- */

/* Bytes read from a file at once: fewer system calls than one block each,
 * while a reader still holds about one chunk plus its largest record. */
#define LLPY_READ_CHUNK (4 * LLOG_BLOCK_SIZE)
/* A long record's payload is read from a file straight into the object it
 * is assembled in, up to this many blocks per system call (reader_fill.c).
 */
#if defined(__linux__) || defined(__FreeBSD__)
#define LLPY_IN_PLACE_BLOCKS 16
#endif

enum llpy_source_kind { LLPY_SRC_BUFFER, LLPY_SRC_FD, LLPY_SRC_FILE };

typedef struct llpy_reader {
    PyObject_HEAD llog_reader *core;
    llpy_lock lock;
    enum llpy_source_kind kind;
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
    int warned_tail; /* a torn tail no writer leaves was warned of */
    int arrow_spent; /* an Arrow stream export was read to the end */
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
    /* While an Arrow batch is filled (reader_arrow.c), fragmented records
     * are assembled through redirect, in the batch's own buffer; in_redirect
     * says the record being assembled is there (llpy_reader_redirect). */
    llog_reserve_fn redirect;
    void *redirect_ctx;
    int in_redirect;
#ifdef LLPY_IN_PLACE_BLOCKS
    /* Blocks read in place (reader_fill.c), waiting to be fed: each one a
     * header here and its payload where its record is assembled. */
    uint8_t in_place_head[LLPY_IN_PLACE_BLOCKS][LLOG_HEADER_SIZE];
    int in_place_next, in_place_left;
    uint64_t in_place_offset; /* file offset of the next one */
    uint8_t *in_place_body;   /* its payload */
#endif
    uint64_t blocks_in_place; /* fed so, for tests (_blocks_in_place) */
    uint64_t blocks_bounced;  /* of those, read through the block buffer */
    /* Other dialects (reader_dialect.c) */
    llog_dialect dialect;
    int has_log_number, recycled; /* the core's, kept when it is freed */
    uint64_t log_number;
    int compression;           /* 1: the records are zstd frames */
    PyObject *timestamp_sizes; /* dict: column family -> size */
    PyObject *predecessor;     /* Predecessor, or NULL */
    PyObject *decompressor;    /* the current record's frame decoder */
    PyObject *decoded;         /* bytes it returned last (the core's) */
    /* A source given as a URL: its storage_options (None or a mapping), kept
     * for pickling; a file object opened for it is then the reader's own,
     * closed with it. NULL for every other source. */
    PyObject *storage_options;
} llpy_reader;

/* tp_init and tp_iternext of the Reader (reader.c), for its slots
 * (reader_type.c). */
int llpy_reader_init(PyObject *op, PyObject *args, PyObject *kwds);
PyObject *llpy_reader_iternext(PyObject *op);
/* 0, or -1 with ValueError for a closed reader. */
static inline int llpy_reader_check_open(llpy_reader *self) {
    if (self->closed) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on closed reader");
        return -1;
    }
    return 0;
}
/* Feeds the core the block it wants (llog_reader_wanted); 0, or -1 with an
 * exception set (reader_fill.c). */
int llpy_reader_fill(llpy_reader *self);
/* The length of the last fragmented record this reader (or, before its
 * first, any reader) assembled: a guess of the next one's. */
size_t llpy_reader_assembly_hint(llpy_reader *self);
/*
 * Fragmented records assembled through fn (with ctx: the Arrow batch being
 * filled makes room in its data, reader_arrow.c) instead of in a bytes
 * object, from the next record on, until llpy_reader_redirect_end. The end
 * moves a record still being assembled there (and payloads read in place
 * for it) to the scratch buffer, as the batch is about to be handed out;
 * so does giving up the lock for a callback, which takes the redirect up
 * again after it. Both with the lock held. End returns 0, or -1 with
 * MemoryError (the reader is then finished).
 */
void llpy_reader_redirect(llpy_reader *self, llog_reserve_fn fn, void *ctx);
int llpy_reader_redirect_end(llpy_reader *self);

/* ---- mode "a" (writer_append.c) --------------------------------------- */

/*
 * Prepares the log open on fd (read and write) for appending: cuts a torn
 * tail back and seeks to where the next record goes. Sets *offset to that
 * log offset and *damaged when other damage is left (the next record then
 * starts a fresh block). 0, or -1 with an exception set (naming `name`).
 */
/* reader_dialect.c: fills opt's dialect and log number from the options
 * (either may be NULL) and a path source's file name (path, or NULL). */
int llpy_dialect_options(PyObject *dialect, PyObject *log_number,
                         PyObject *path, llog_reader_options *opt);
/* Sets the core's decoder of compressed records to this reader's. */
void llpy_dialect_decoder(llpy_reader *self, llog_reader_options *opt);
/* Loads a zstd binding (leveldb_log._zstd.require); 0, or -1 with the
 * error that names the extra to install. */
int llpy_zstd_require(void);
/* Takes in what a META event states; 0, or -1 with an exception set. */
int llpy_reader_on_meta(llpy_reader *self, const llog_event *ev);
PyObject *llpy_reader_get_dialect(PyObject *op, void *closure);
PyObject *llpy_reader_get_log_number(PyObject *op, void *closure);
PyObject *llpy_reader_get_compression(PyObject *op, void *closure);
PyObject *llpy_reader_get_timestamp_sizes(PyObject *op, void *closure);
PyObject *llpy_reader_get_predecessor(PyObject *op, void *closure);
PyObject *llpy_reader_get_recycled(PyObject *op, void *closure);

/* Reader.__reduce__ and Reader._restore (reader_pickle.c). */
PyObject *llpy_reader_reduce(PyObject *op, PyObject *unused);
PyObject *llpy_reader_restore(PyObject *op, PyObject *args);

/* ---- the Writer (writer.c, writer_output.c) -------------------------- */

/* A thread waiting in a group commit (writer_sync.c), on its own stack. */
typedef struct llpy_sync_waiter {
    struct llpy_sync_waiter *next;
    PyThread_type_lock wake; /* released by whoever settles its wait */
    uint64_t end;            /* log offset its records end at */
    int state;               /* waiting, done, failed or retry */
    int error;               /* failed: the flush's errno */
} llpy_sync_waiter;

/* The group commit of one Writer; every field under the Writer's lock. */
typedef struct llpy_sync_group {
    int active;             /* flushes leaders run without the lock */
    uint64_t cover;         /* the offset the last flush started covers */
    uint64_t durable;       /* the offset the last good flush covered */
    int failed;             /* errno of a failed fdatasync: no later */
    llpy_sync_waiter *head; /* sync can prove anything */
    Py_ssize_t queued;
    unsigned long generation; /* the fork generation it was used in */
    uint64_t flushes;         /* fdatasync calls made, for tests */
    PyObject *before_sync;    /* _before_sync hook, for tests */
} llpy_sync_group;

typedef struct llpy_writer {
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
    int closed;
    /* Other dialects (writer_dialect.c) */
    llog_dialect dialect;
    size_t header_size;
    int has_log_number;
    uint64_t log_number;
    int compress; /* each record is written as one zstd frame */
    /* Payloads the kernel would copy slowly from the caller's memory
     * (llpy_copy_is_slow: 1 to slow_copy_max bytes) are copied through
     * bounce first, and such a buffer moved LLPY_BUF_SLACK bytes on
     * (writer_output.c); bounced counts both, for tests. */
    unsigned slow_copy_max;
    uint8_t *bounce; /* LLPY_PAGE + LLOG_MAX_FRAGMENT bytes, or NULL */
    uint64_t bounced;
    /* Durability (writer_sync.c) and the file lock (writer_lock.c) */
    int sync_default;        /* sync= */
    int closing;             /* close() waits for a group commit */
    int use_lock, locked;    /* lock=; the lock is held on fd */
    int dir_fd;              /* a new log's directory, until first synced */
    int regular;             /* fd is a regular file (not a FIFO, a device) */
    uint64_t bytes_per_sync; /* 0: off */
    uint64_t range_start;    /* write-back was started up to here */
    uint64_t range_syncs;    /* write-backs started, for tests */
    uint64_t preallocate;    /* 0: off */
    uint64_t prealloc_end;   /* space is reserved up to here */
    llpy_sync_group group;
} llpy_writer;

/* Bytes past cap in a Writer's buffer: room to move what it holds before
 * writing it, when the kernel would copy it slowly (writer_output.c). */
#define LLPY_BUF_SLACK LLPY_COPY_SHIFT

/* Encodes one record of any size into the buffer or straight to the
 * target; safe without the GIL for descriptors (writer_output.c). */
int llpy_writer_encode(llpy_writer *self, const uint8_t *data, size_t n,
                       uint64_t *offset);
/* Hands the buffered bytes to the target; keeps what it refused. */
int llpy_writer_flush_buffer(llpy_writer *self);

/* writer_dialect.c: checks the options of other dialects before the
 * target is touched; 0, or -1 with an exception set. */
int llpy_writer_dialect_options(llpy_writer *self, PyObject *target,
                                PyObject *dialect, PyObject *log_number,
                                int recycle, PyObject *compression,
                                int sync_offsets);
/* Mode "a" of a rocksdb writer: refuses to mix compressed and plain
 * records in one log (the log on fd, size bytes long). */
int llpy_writer_check_append(llpy_writer *self, int fd, uint64_t size);
/* Once the target is open: the core's header, RocksDB's compression record
 * at the start of a new log. */
int llpy_writer_start(llpy_writer *self);
/* A record's bytes as one zstd frame (a new bytes object), or NULL. */
PyObject *llpy_writer_compress(const uint8_t *data, size_t n);
/* Before closing: Pebble's end-of-log trailer. */
int llpy_writer_finish(llpy_writer *self);

/* writer_open.c: the target opened (a path, a file object or a URL) and
 * the Writer's written offset set from it; "w" truncates once locked. 0, or
 * -1 with an exception. */
int llpy_writer_open_target(llpy_writer *self, PyObject *target,
                            PyObject *mode, int closefd,
                            PyObject *storage_options);
/* The mode argument ("w", "a", "x") and the buffering argument (-1, 0 or a
 * size), parsed as Writer() takes them. */
int llpy_writer_parse_mode(PyObject *mode, char *out);
int llpy_writer_parse_buffering(PyObject *obj, size_t *limit);

/* Mode "a" on an open path (writer_append.c): where the log resumes and
 * whether a block must be started; the log cut back to *offset. `dialect`
 * holds the log's dialect and log number (llpy_dialect_options). 0, or -1
 * with an exception (CorruptionError when the file is no log to append to,
 * which is then left as it was). */
int llpy_append_open(llpy_state *st, int fd, PyObject *name,
                     const llog_reader_options *dialect, uint64_t *offset,
                     int *fresh_block);
/* _append_point(path, *, dialect, log_number): the same decision, nothing
 * cut: (cut, fresh, clean, damage). */
PyObject *llpy_append_point(PyObject *module, PyObject *args,
                            PyObject *kwargs);

/* writer_sync.c, writer_policy.c: the parts of a durable write. */
/* Waits until the log is durable up to `end` (lock not held): leads a
 * group flush or waits for one. 0, or -1 with an exception set. */
int llpy_sync_wait(llpy_writer *self, uint64_t end);
/* sync=, bytes_per_sync= and preallocate= of Writer(); before opening. */
int llpy_sync_options(llpy_writer *self, PyObject *target, PyObject *sync,
                      PyObject *bytes_per_sync, PyObject *preallocate);
/* After bytes reached the descriptor (lock held, safe without the GIL):
 * starts write-back every bytes_per_sync bytes, reserves space ahead. */
void llpy_sync_after_output(llpy_writer *self);
/* Opens a path for the Writer without truncating it: *created says
 * whether this call made the file; -1 with an exception set. */
int llpy_sync_open(llpy_state *st, PyObject *path, int flags, int *created);
/* Keeps the new log's directory open, to be synced with the first flush. */
int llpy_sync_remember_dir(llpy_writer *self, PyObject *path);
/* close(): waits for a group commit in flight (lock held on entry and on
 * return, given up while waiting); frees what the policy holds. */
int llpy_sync_close(llpy_writer *self);
void llpy_sync_release(llpy_writer *self);
PyObject *llpy_sync_get_waiters(PyObject *op, void *closure);
PyObject *llpy_sync_get_flushes(PyObject *op, void *closure);
PyObject *llpy_sync_get_range_syncs(PyObject *op, void *closure);
PyObject *llpy_sync_get_hook(PyObject *op, void *closure);
int llpy_sync_set_hook(PyObject *op, PyObject *value, void *closure);

/* writer_lock.c: the exclusive advisory lock on a log file, taken before
 * anything is cut: 1, or 0 for a file that is no regular file (not
 * locked), or -1 with LogLockedError (or OSError) naming `name`. */
int llpy_file_lock(llpy_state *st, int fd, PyObject *name);
void llpy_file_unlock(int fd);
/* _lock_fd(fd, name): the same lock on a descriptor, for the CLI. */
PyObject *llpy_lock_fd(PyObject *module, PyObject *const *args,
                       Py_ssize_t nargs);

#endif /* LLPY_BINDING_H */
