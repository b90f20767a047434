/*
 * writer.c - the Writer type: Writer() (its arguments; the target is opened
 * by writer_open.c, mode "a" resumes where writer_append.c says), close and
 * the finalizer, the other slots, the methods and properties tables and the
 * docstring. Writing records is writer_write.c's.
 */
#include "writer_internal.h"

static PyObject *Writer_tell(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = llpy_writer_check_open(self);
    uint64_t offset = self->core.offset;
    llpy_lock_release(&self->lock);
    return rc < 0 ? NULL : PyLong_FromUnsignedLongLong(offset);
}

/* 1 when the target is a file object that is already closed (nothing to
 * flush into it then), else 0. */
static int target_closed(llpy_writer *self) {
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
static int writer_close_locked(llpy_writer *self) {
    if (self->closed || self->closing)
        return 0;
    int rc = 0;
    if (self->buf != NULL && !target_closed(self))
        rc = llpy_writer_finish(self);
    if (rc == 0 && self->buf != NULL &&
        (self->len > 0 || !target_closed(self)))
        rc = llpy_writer_flush_locked(self);
    PyObject *exc = rc < 0 ? PyErr_GetRaisedException() : NULL;
    /* Threads waiting for a flush get it before the descriptor closes. */
    if (llpy_sync_close(self) < 0 && exc == NULL)
        exc = PyErr_GetRaisedException();
    PyErr_Clear();
    llpy_sync_release(self);
    self->closed = 1;
    self->closing = 0;
    if (self->fd >= 0) {
        llpy_close_fd(self->fd);
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
    llpy_io_free(self->bounce);
    self->bounce = NULL;
    if (exc != NULL) {
        PyErr_SetRaisedException(exc);
        return -1;
    }
    return 0;
}

static PyObject *Writer_close(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = writer_close_locked(self);
    llpy_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Writer_enter(PyObject *op, PyObject *unused) {
    (void)unused;
    if (llpy_writer_check_open((llpy_writer *)op) < 0)
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

static int Writer_init(PyObject *op, PyObject *args, PyObject *kwds) {
    llpy_writer *self = (llpy_writer *)op;
    static char *kwlist[] = {
        "target",          "mode",        "buffering",
        "closefd",         "dialect",     "log_number",
        "recycle",         "compression", "sync_offsets",
        "storage_options", "sync",        "bytes_per_sync",
        "preallocate",     "lock",        NULL};
    PyObject *target, *mode = NULL, *buffering = NULL, *dialect = NULL;
    PyObject *log_number = NULL, *compression = NULL;
    PyObject *storage_options = Py_None, *sync = NULL, *per_sync = NULL;
    PyObject *preallocate = NULL, *lock = Py_True;
    PyObject *flags[3] = {Py_False, Py_False, Py_False};
    int closefd = 0, recycle = 0, sync_offsets = 0;
    if (self->buf != NULL || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "Writer is already initialized");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds, "O|O$OOOOOOOOOOOO!:Writer", kwlist, &target, &mode,
            &buffering, &flags[0], &dialect, &log_number, &flags[1],
            &compression, &flags[2], &storage_options, &sync, &per_sync,
            &preallocate, &PyBool_Type, &lock) ||
        llpy_parse_flag(flags[0], "closefd", &closefd) < 0 ||
        llpy_parse_flag(flags[1], "recycle", &recycle) < 0 ||
        llpy_parse_flag(flags[2], "sync_offsets", &sync_offsets) < 0)
        return -1;
    self->mode = 'w';
    self->use_lock = lock == Py_True;
    if ((mode != NULL && llpy_writer_parse_mode(mode, &self->mode) < 0) ||
        llpy_writer_parse_buffering(buffering, &self->limit) < 0 ||
        llpy_sync_options(self, target, sync, per_sync, preallocate) < 0 ||
        llpy_writer_dialect_options(self, target, dialect, log_number, recycle,
                                    compression, sync_offsets) < 0)
        return -1;
    self->cap =
        self->limit < LLPY_DEFAULT_BUFFER ? LLPY_DEFAULT_BUFFER : self->limit;
    if (llpy_writer_open_target(self, target, mode, closefd, storage_options) <
        0)
        return -1;
    llog_writer_init(&self->core, self->written);
    self->range_start = self->prealloc_end = self->written;
    llpy_sync_after_output(self); /* the first reservation */
    llpy_state *st = llpy_state_of(Py_TYPE(self));
    self->slow_copy_max = st->slow_copy_max;
    self->lend_views =
        self->file != NULL &&
        (Py_IS_TYPE(self->file, (PyTypeObject *)st->bytesio_type) ||
         Py_IS_TYPE(self->file, (PyTypeObject *)st->fileio_type));
    self->buf = PyMem_Malloc(self->cap + LLPY_BUF_SLACK);
    if (self->buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return llpy_writer_start(self);
}

static PyObject *Writer_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    PyObject *self = llpy_new_object(type, offsetof(llpy_writer, lock),
                                     offsetof(llpy_writer, fd));
    if (self != NULL)
        ((llpy_writer *)self)->dir_fd = -1;
    return self;
}

static PyObject *Writer_repr(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
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
    return PyBool_FromLong(((llpy_writer *)op)->closed);
}

static PyObject *Writer_get_bounced(PyObject *op, void *closure) {
    (void)closure;
    llpy_writer *self = (llpy_writer *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    uint64_t n = self->bounced;
    llpy_lock_release(&self->lock);
    return PyLong_FromUnsignedLongLong(n);
}

static PyObject *Writer_get_mode(PyObject *op, void *closure) {
    (void)closure;
    char m[2] = {((llpy_writer *)op)->mode, 0};
    return PyUnicode_FromString(m);
}

static PyObject *Writer_get_name(PyObject *op, void *closure) {
    (void)closure;
    llpy_writer *self = (llpy_writer *)op;
    return Py_NewRef(self->name ? self->name : Py_None);
}

static int Writer_traverse(PyObject *op, visitproc visit, void *arg) {
    llpy_writer *self = (llpy_writer *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->file);
    Py_VISIT(self->group.before_sync);
    return 0;
}

static int Writer_clear(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->file);
    Py_CLEAR(self->group.before_sync);
    return 0;
}

/* Like io's objects, an unclosed writer is flushed and closed when collected
 * (PEP 442 finalizer: safe to run Python code and to report errors here). */
static void Writer_finalize(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    if (self->closed || (self->buf == NULL && self->fd < 0))
        return;
    PyObject *saved = PyErr_GetRaisedException();
    if (self->len > 0 && /* as an unclosed file does */
        PyErr_ResourceWarning(op, 1,
                              "unclosed Writer %R with %zu bytes "
                              "of records not yet written",
                              op, self->len) < 0)
        PyErr_WriteUnraisable(op);
    if (llpy_lock_acquire(&self->lock) == 0) {
        if (writer_close_locked(self) < 0)
            PyErr_WriteUnraisable(op);
        llpy_lock_release(&self->lock);
    } else {
        PyErr_WriteUnraisable(op);
    }
    PyErr_SetRaisedException(saved);
}

static void Writer_dealloc(PyObject *op) {
    llpy_writer *self = (llpy_writer *)op;
    PyTypeObject *tp = Py_TYPE(op);
    if (PyObject_CallFinalizerFromDealloc(op) < 0)
        return; /* resurrected by the finalizer */
    PyObject_GC_UnTrack(op);
    if (self->dir_fd >= 0)
        llpy_close_fd(self->dir_fd);
    if (self->fd >= 0)
        llpy_close_fd(self->fd);
    PyMem_Free(self->buf);
    llpy_io_free(self->bounce);
    Writer_clear(op);
    llpy_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Writer_methods[] = {
    {"write", (PyCFunction)(void (*)(void))llpy_writer_write,
     METH_FASTCALL | METH_KEYWORDS,
     "write($self, data, /, *, sync=None)\n"
     "--\n\n"
     "Append one record.\n\n"
     "Arguments\n"
     "  data: a bytes-like object (bytes, bytearray, memoryview, ...),\n"
     "    empty included.\n"
     "  sync: True returns only once the record is durable (see\n"
     "    \"Durability\"); False may leave it in the buffer; None (the\n"
     "    default) takes the Writer's sync=.\n\n"
     "Returns\n"
     "  The record's offset: where its first header lies in the log.\n\n"
     "Raises\n"
     "  TypeError: data is not bytes-like; sync is not a bool or None.\n"
     "  ValueError: the writer is closed.\n"
     "  OSError, or what the file object raised: the record is not written\n"
     "    (now or later); the records before it are kept.\n"
     "  OSError while making it durable: the record was written, but is\n"
     "    not known to be durable (see sync())."},
    {"write_many", (PyCFunction)(void (*)(void))llpy_writer_write_many,
     METH_FASTCALL | METH_KEYWORDS,
     "write_many($self, records, /, *, sync=None)\n"
     "--\n\n"
     "Append every record of an iterable, in order, under one lock.\n\n"
     "Arguments\n"
     "  records: an iterable of bytes-like objects; or Arrow data: an\n"
     "    object exporting __arrow_c_stream__ (chunked too) or\n"
     "    __arrow_c_array__ of type binary, large_binary, string or\n"
     "    large_string (or their view types), written straight from its\n"
     "    buffers (strings as their UTF-8 bytes).\n"
     "  sync: as for write(): True returns once every record is durable,\n"
     "    for the cost of one flush.\n\n"
     "Returns\n"
     "  How many records were written.\n\n"
     "Raises\n"
     "  As write(), and whatever the iterable raises; the records before\n"
     "  the error are written all the same, and the exception's .written\n"
     "  says how many. A list or a tuple is checked whole first: an item\n"
     "  that is not bytes-like is a TypeError before any is written.\n"
     "  TypeError: Arrow data of another type (the message names it).\n"
     "  ValueError: Arrow data holding a null: nothing is written."},
    {"flush", llpy_writer_flush, METH_NOARGS,
     "flush($self, /)\n"
     "--\n\n"
     "Hand the buffered records to the OS, or to the file object.\n\n"
     "A file object's own flush() is then called, if it has one. After\n"
     "flush() a crash of the process loses no record written so far, and\n"
     "readers of the file see them; a power loss still may lose them (see\n"
     "sync()).\n\n"
     "Returns\n"
     "  None.\n\n"
     "Raises\n"
     "  ValueError: the writer is closed.\n"
     "  OSError, or what the file object raised."},
    {"sync", llpy_writer_sync, METH_NOARGS,
     "sync($self, /)\n"
     "--\n\n"
     "flush(), then make the records written so far durable: they\n"
     "survive a power loss.\n\n"
     "fdatasync on Linux, fcntl(F_FULLFSYNC) on macOS, FlushFileBuffers on\n"
     "Windows, fsync elsewhere; for a file object, through its fileno().\n"
     "The first sync of a log the Writer created syncs its directory too.\n"
     "Threads syncing at once share one flush (see \"Durability\").\n\n"
     "Returns\n"
     "  None.\n\n"
     "Raises\n"
     "  ValueError: the writer is closed.\n"
     "  OSError: the flush or the sync failed. Once a sync failed, every\n"
     "    later one raises: the OS may have dropped what it could not\n"
     "    write, and no later sync can tell.\n"
     "  io.UnsupportedOperation or AttributeError: a file object with no\n"
     "    file descriptor (io.BytesIO, for instance)."},
    {"tell", Writer_tell, METH_NOARGS,
     "tell($self, /)\n"
     "--\n\n"
     "The log's length in bytes, buffered records included.\n\n"
     "Returns\n"
     "  An int: the offset the next record starts at, unless it must go to\n"
     "  the next block (fewer than 7 bytes left in this one).\n\n"
     "Raises\n"
     "  ValueError: the writer is closed."},
    {"close", Writer_close, METH_NOARGS,
     "close($self, /)\n"
     "--\n\n"
     "Flush and close; calling it again does nothing.\n\n"
     "A path the writer opened is closed, and its lock released; a file\n"
     "object only with closefd=True. Threads still waiting for a durable\n"
     "write get one more flush first. Every other method of a closed\n"
     "writer raises ValueError.\n\n"
     "Returns\n"
     "  None.\n\n"
     "Raises\n"
     "  OSError, or what the file object raised while flushing or closing\n"
     "  (the writer is closed all the same)."},
    {"__enter__", Writer_enter, METH_NOARGS,
     "__enter__($self, /)\n"
     "--\n\n"
     "Return the writer itself, for a with statement.\n\n"
     "Raises\n"
     "  ValueError: the writer is closed."},
    {"__exit__", Writer_exit, METH_VARARGS,
     "__exit__($self, exc_type, exc, tb, /)\n"
     "--\n\n"
     "Close the writer (see close()); an exception is not suppressed."},
    {"__reduce__", Writer_reduce, METH_NOARGS,
     "__reduce__($self, /)\n"
     "--\n\n"
     "Refuse to pickle: a Writer's state cannot travel to another process.\n\n"
     "Raises\n"
     "  TypeError: always."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Writer_getset[] = {
    {"closed", Writer_get_closed, NULL, "True once close() was called.", NULL},
    {"_sync_waiters", llpy_sync_get_waiters, NULL,
     "Threads in a group commit: the one flushing and those queued\n"
     "(internal: for tests).",
     NULL},
    {"_sync_flushes", llpy_sync_get_flushes, NULL,
     "fdatasync calls made by group commits (internal: for tests).", NULL},
    {"_range_syncs", llpy_sync_get_range_syncs, NULL,
     "Write-backs started by bytes_per_sync (internal: for tests).", NULL},
    {"_before_sync", llpy_sync_get_hook, llpy_sync_set_hook,
     "A callable the leader of a group commit calls before its fdatasync,\n"
     "without the writer's lock (internal: for tests).",
     NULL},
    {"_blocks_bounced", Writer_get_bounced, NULL,
     "Payloads copied through the bounce buffer before writing, as the\n"
     "kernel would have copied them slowly from the caller's memory\n"
     "(internal: for tests).",
     NULL},
    {"mode", Writer_get_mode, NULL,
     "The mode: 'w', 'a' or 'x' ('w' for a file object).", NULL},
    {"name", Writer_get_name, NULL,
     "The target given: the path, or the file object.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(
    Writer_doc,
    "Writer(target, mode='w', *, buffering=-1, closefd=False, "
    "dialect='leveldb', log_number=None, recycle=False, compression=None, "
    "sync_offsets=False, storage_options=None, sync=False, "
    "bytes_per_sync=0, preallocate=0, lock=True)\n"
    "--\n\n"
    "Write records to a LevelDB log.\n"
    "\n"
    "Arguments\n"
    "  target: a path (str, bytes or os.PathLike), or a binary file object\n"
    "    open for writing, which holds the log from its position now: the\n"
    "    log's offsets and blocks count from there, as a Reader given the\n"
    "    object at that position counts them (one opened for appending to\n"
    "    bytes already there is refused: use mode 'a' with its path).\n"
    "  mode: for a path ('w' only for a file object):\n"
    "    'w'  create the file, or truncate it;\n"
    "    'x'  create it; FileExistsError if it exists;\n"
    "    'a'  append to an existing log (created if missing), resuming\n"
    "         block alignment from its length; see \"Mode 'a'\".\n"
    "  buffering: as for open(): -1 a default buffer (64 KiB); 0 hands\n"
    "    each record to the OS (or the file object) before write()\n"
    "    returns; n > 0 a buffer of about n bytes (n at most 2**30).\n"
    "  closefd: True also closes a file object when the writer closes (a\n"
    "    path the writer opened is always closed). closefd, recycle and\n"
    "    sync_offsets must be bools (TypeError).\n"
    "  dialect: 'leveldb' (the default), 'rocksdb' or 'pebble'; see\n"
    "    \"Dialects\".\n"
    "  log_number: the number recyclable records carry; None takes it\n"
    "    from a path named NNNNNN.log.\n"
    "  recycle: 'rocksdb' only: write recyclable records (types 5-8, with\n"
    "    the log number), as RocksDB does with recycle_log_file_num.\n"
    "  compression: 'rocksdb' only: None, or 'zstd' to write each record\n"
    "    as one zstd frame after a compression record, as RocksDB's\n"
    "    wal_compression does (needs the extra leveldb-log[rocksdb]).\n"
    "  sync_offsets: 'pebble' only: write walSync chunks, which carry the\n"
    "    offset last made durable by sync().\n"
    "  storage_options: for a target given as a URL (scheme://...: s3://,\n"
    "    gcs://, memory://, file://, ...), which fsspec opens (pip install\n"
    "    'leveldb-log[fsspec]'): the file system's options, such as\n"
    "    {'anon': True}; None for none. A local file system's URL is\n"
    "    written as a path. Other stores take 'w' and 'x', not 'a'\n"
    "    (ValueError, before anything is opened); the writer owns the\n"
    "    object it opens there, and close() closes (so commits) it.\n"
    "  sync: the default of write() and write_many(): True makes every\n"
    "    call return only once its records are durable.\n"
    "  bytes_per_sync: a path only: start writing back every N bytes\n"
    "    handed to the OS (sync_file_range on Linux), so that a sync never\n"
    "    finds a huge dirty range; 0 (the default) is off.\n"
    "  preallocate: a path only: reserve N bytes of disk ahead of the log\n"
    "    as it grows, without changing its size (Linux, macOS); 0 is off.\n"
    "  lock: False neither takes nor checks the lock on a path (see \"One\n"
    "    Writer per file\"), for file systems without working locks.\n"
    "\n"
    "Returns\n"
    "  A Writer; write(), write_many(), flush(), sync(), tell(), close().\n"
    "  In a with statement it is closed on exit.\n"
    "\n"
    "Mode 'a'\n"
    "  A crash can leave the end of a log torn: valid fragments of one\n"
    "  unfinished record, one incomplete record, zero fill. 'a' cuts\n"
    "  exactly that back to the end of the last complete record, so the\n"
    "  new records read back cleanly even in 'absolute' mode. Damage in\n"
    "  the middle of the log is left alone (the new records then start at\n"
    "  the next block boundary). If anything else ends the file, or a\n"
    "  non-empty file holds no valid record at all (a file of zeros is\n"
    "  fine), 'a' raises CorruptionError (\"<path> does not end like a log:\n"
    "  <why> at offset N; it was left as it was\") and does not change the\n"
    "  file.\n"
    "\n"
    "Buffering: flush() and sync()\n"
    "  Records wait in the buffer (unless buffering=0) until it fills, or\n"
    "  flush(), sync() or close(). flush() hands them to the OS: a crash\n"
    "  of the process no longer loses them, and readers of the file see\n"
    "  them. sync() is flush() then fsync: only that survives a power\n"
    "  loss. A failed write raises the original exception; the record is\n"
    "  not written later, and no record is ever half returned as valid.\n"
    "\n"
    "Durability\n"
    "  write(..., sync=True) returns once the record survives a power\n"
    "  loss. Threads doing so at once share flushes (group commit): the\n"
    "  first leads one fdatasync without the GIL for every record written\n"
    "  until then; the others queue and return when a flush that began\n"
    "  after their record was written ends. From asyncio: await\n"
    "  asyncio.to_thread(w.write, record, sync=True). A failed fdatasync\n"
    "  fails every waiter and every later sync. See docs/api.md.\n"
    "\n"
    "One Writer per file\n"
    "  A Writer on a path holds an exclusive advisory lock on the file\n"
    "  until it closes; another Writer on it, in any process, raises\n"
    "  LogLockedError before anything is truncated or cut. Readers never\n"
    "  lock. File objects, devices and FIFOs are not locked.\n"
    "\n"
    "Closing\n"
    "  close() flushes and closes; a closed writer raises ValueError. A\n"
    "  Writer never closed is flushed and closed when collected, with a\n"
    "  ResourceWarning if records were still buffered then, as an\n"
    "  unclosed file does.\n"
    "\n"
    "Dialects\n"
    "  'rocksdb' writes what RocksDB replays: LevelDB's layout, or\n"
    "  recyclable records (recycle=True), or a compressed WAL. 'pebble'\n"
    "  always writes recyclable chunks (or walSync ones) and ends the log\n"
    "  with Pebble's trailer when closed. Mode 'a' keeps a compressed\n"
    "  WAL compressed: appending with another compression setting raises\n"
    "  ValueError. See docs/rocksdb.md.\n"
    "\n"
    "Threads and pickling\n"
    "  A Writer may be shared by threads: each call holds its lock. A\n"
    "  call on it from a file object's method it is calling raises\n"
    "  RuntimeError instead of deadlocking. A Writer cannot be pickled\n"
    "  (TypeError).\n"
    "\n"
    "Raises\n"
    "  TypeError: a target that is neither a path nor an object with\n"
    "    write(); a file object whose write() refuses bytes (a text file:\n"
    "    open it with 'wb' or 'ab'); mode or buffering of the wrong type;\n"
    "    sync or lock not a bool; bytes_per_sync or preallocate not an int.\n"
    "  ValueError: a mode other than 'w', 'x' or 'a' (or other than 'w'\n"
    "    for a file object, other than 'w' or 'x' for a URL of a store\n"
    "    other than the local file system); buffering below -1 or above\n"
    "    2**30 (the message names buffering); storage_options with a\n"
    "    target that is no URL; an unknown dialect, or options the\n"
    "    dialect does not have; recyclable records without a log number;\n"
    "    bytes_per_sync or preallocate negative, or given for a file\n"
    "    object or URL.\n"
    "  ImportError (ZstdMissingError): compression='zstd' with no zstd\n"
    "    binding installed; the message names the extra.\n"
    "  FileExistsError ('x'), OSError: the path cannot be opened.\n"
    "  LogLockedError (an OSError): another Writer holds the file.\n"
    "  CorruptionError: mode 'a' on a file that does not end like a log.\n"
    "  ImportError: a URL without fsspec (the message names the extra).");

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

PyType_Spec llpy_writer_spec = {
    .name = "leveldb_log.Writer",
    .basicsize = sizeof(llpy_writer),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Writer_slots,
};
