/*
 * reader_type.c - the Reader type as Python sees it: its slots (new,
 * close, the context manager, repr, the garbage collector's), properties
 * and methods tables, and its docstring. Iterating and opening a Reader,
 * the slots tp_iternext and tp_init, are reader.c's.
 */
#include "arrow.h"
#include "binding.h"
#include "llpy_io.h"
#include "lock.h"
#include "module.h"

/* Lets the source go: a buffer is released, a descriptor or a URL's file
 * object the reader opened is closed, the block buffer freed. */
static void reader_release_source(llpy_reader *self) {
    if (self->view.obj != NULL)
        PyBuffer_Release(&self->view);
    if (self->kind == LLPY_SRC_FD && self->fd >= 0) {
        llpy_close_fd(self->fd);
        self->fd = -1;
    }
    if (self->file != NULL && self->storage_options != NULL) {
        /* a URL's file object is the reader's own */
        PyObject *r = PyObject_CallMethod(self->file, "close", NULL);
        if (r == NULL)
            PyErr_WriteUnraisable(self->file);
        Py_XDECREF(r);
    }
    Py_CLEAR(self->file);
    llpy_io_free(self->block);
    self->block = NULL;
}

static PyObject *Reader_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
    (void)args;
    (void)kwds;
    return llpy_new_object(type, offsetof(llpy_reader, lock),
                           offsetof(llpy_reader, fd));
}

static void reader_close_locked(llpy_reader *self) {
    if (self->closed)
        return;
    self->closed = 1;
    reader_release_source(self);
    if (self->core != NULL) { /* what the getters still say */
        self->has_log_number =
            llog_reader_log_number(self->core, &self->log_number);
        self->recycled = llog_reader_recycled(self->core);
    }
    llog_reader_free(self->core);
    self->core = NULL;
#ifdef LLPY_IN_PLACE_BLOCKS
    self->in_place_left = 0; /* their payloads were in what goes now */
#endif
    Py_CLEAR(self->assembly);
    PyMem_RawFree(self->scratch);
    self->scratch = NULL;
    self->scratch_cap = 0;
}

static PyObject *Reader_close(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    reader_close_locked(self);
    llpy_lock_release(&self->lock);
    Py_RETURN_NONE;
}

static PyObject *Reader_enter(PyObject *op, PyObject *unused) {
    (void)unused;
    if (llpy_reader_check_open((llpy_reader *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_exit(PyObject *op, PyObject *args) {
    (void)args;
    return Reader_close(op, NULL);
}

static PyObject *Reader_iter(PyObject *op) {
    if (llpy_reader_check_open((llpy_reader *)op) < 0)
        return NULL;
    return Py_NewRef(op);
}

static PyObject *Reader_repr(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    const char *state = self->closed ? " closed" : "";
    if (self->name == NULL)
        return PyUnicode_FromFormat("<%s uninitialized>",
                                    Py_TYPE(op)->tp_name);
    if (self->kind == LLPY_SRC_BUFFER)
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
    uint64_t last, dropped, in_place, bounced;
} reader_counts;

static int reader_counters(PyObject *op, reader_counts *out) {
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return -1;
    out->has_last = self->has_last;
    out->last = self->last_record_offset;
    out->dropped = self->dropped_bytes;
    out->in_place = self->blocks_in_place;
    out->bounced = self->blocks_bounced;
    llpy_lock_release(&self->lock);
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

static PyObject *Reader_get_bounced(PyObject *op, void *closure) {
    (void)closure;
    reader_counts c;
    if (reader_counters(op, &c) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(c.bounced);
}

static PyObject *Reader_get_closed(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((llpy_reader *)op)->closed);
}

static PyObject *Reader_get_recovery(PyObject *op, void *closure) {
    (void)closure;
    return PyUnicode_FromString(
        llog_recovery_name(((llpy_reader *)op)->recovery));
}

static PyObject *Reader_get_verify(PyObject *op, void *closure) {
    (void)closure;
    return PyBool_FromLong(((llpy_reader *)op)->verify_checksums);
}

static PyObject *Reader_get_start(PyObject *op, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(((llpy_reader *)op)->start);
}

static PyObject *Reader_get_end(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    if (self->end == LLOG_NO_END)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(self->end);
}

static PyObject *Reader_get_position(PyObject *op, void *closure) {
    (void)closure;
    llpy_reader *self = (llpy_reader *)op;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int known = self->core != NULL; /* close() frees the core */
    uint64_t position = known ? llog_reader_position(self->core) : 0;
    llpy_lock_release(&self->lock);
    if (!known)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(position);
}

static int Reader_traverse(PyObject *op, visitproc visit, void *arg) {
    llpy_reader *self = (llpy_reader *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->on_corruption);
    Py_VISIT(self->file);
    Py_VISIT(self->storage_options);
    Py_VISIT(self->view.obj);
    Py_VISIT(self->timestamp_sizes);
    Py_VISIT(self->predecessor);
    Py_VISIT(self->decompressor);
    return 0;
}

static int Reader_clear(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->on_corruption);
    Py_CLEAR(self->file);
    Py_CLEAR(self->timestamp_sizes);
    Py_CLEAR(self->predecessor);
    Py_CLEAR(self->decompressor);
    Py_CLEAR(self->decoded);
    Py_CLEAR(self->storage_options);
    return 0;
}

static void Reader_dealloc(PyObject *op) {
    llpy_reader *self = (llpy_reader *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    reader_close_locked(self);
    Reader_clear(op);
    llpy_lock_free(&self->lock);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMethodDef Reader_methods[] = {
    {"close", Reader_close, METH_NOARGS,
     "close($self, /)\n"
     "--\n\n"
     "Release the source; calling it again does nothing.\n\n"
     "A path or URL the reader opened is closed; a buffer is released; a\n"
     "file object is left open. Iterating a closed reader raises\n"
     "ValueError.\n\n"
     "Returns\n"
     "  None."},
    {"__enter__", Reader_enter, METH_NOARGS,
     "__enter__($self, /)\n"
     "--\n\n"
     "Return the reader itself, for a with statement.\n\n"
     "Raises\n"
     "  ValueError: the reader is closed."},
    {"__exit__", Reader_exit, METH_VARARGS,
     "__exit__($self, exc_type, exc, tb, /)\n"
     "--\n\n"
     "Close the reader (see close()); an exception is not suppressed."},
    {"__reduce__", llpy_reader_reduce, METH_NOARGS,
     "__reduce__($self, /)\n"
     "--\n\n"
     "Pickle a reader over a path as what reopens it where it stands.\n\n"
     "Returns\n"
     "  (leveldb_log._restore.restore_reader, (path, options, progress)).\n\n"
     "Raises\n"
     "  TypeError: the reader is over a buffer or a file object, is\n"
     "    closed, or is inside its on_corruption callback."},
    {"iter_batches", (PyCFunction)(void (*)(void))llpy_reader_iter_batches,
     METH_VARARGS | METH_KEYWORDS,
     "iter_batches($self, /, *, max_records=65536, max_bytes=4194304)\n"
     "--\n\n"
     "Iterate over the records as Arrow batches (leveldb_log.Batch).\n\n"
     "Each batch has the columns offset (uint64) and data (large_binary)\n"
     "and exports __arrow_c_array__: pyarrow.record_batch(batch) takes it.\n"
     "The records, reports and errors are those of iterating the reader\n"
     "itself (which it advances): an exception comes after a batch of the\n"
     "records before it. Following a growing log, the iterator stops at\n"
     "the current end and can be resumed later.\n\n"
     "Arguments\n"
     "  max_records: at most this many records a batch (>= 1).\n"
     "  max_bytes: a batch ends with the record that brings its size\n"
     "    (Batch.nbytes: payloads and 16 bytes a record) to this many\n"
     "    bytes or more (>= 1): it is smaller than max_bytes plus its last\n"
     "    record's payload and 16.\n\n"
     "Returns\n"
     "  An iterator of Batch objects.\n\n"
     "Raises\n"
     "  ValueError: a limit below 1; the reader is closed (from next()).\n"
     "  As iteration does: CorruptionError and the rest."},
    {"__arrow_c_stream__",
     (PyCFunction)(void (*)(void))llpy_reader_arrow_stream,
     METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_stream__($self, /, requested_schema=None)\n"
     "--\n\n"
     "Export the records as an Arrow C stream of iter_batches() batches.\n\n"
     "pyarrow.table(reader), polars.DataFrame(reader) and DuckDB's\n"
     "FROM reader read the log through it. Reading the stream advances\n"
     "the reader, so a reader partly read exports the rest; one whose\n"
     "export was read to the end refuses another (ValueError), as a\n"
     "spent pyarrow reader does. An exception raised while reading ends\n"
     "the stream with an error whose text (get_last_error) is\n"
     "'Type: message'.\n\n"
     "Arguments\n"
     "  requested_schema: ignored (the protocol's best effort).\n\n"
     "Returns\n"
     "  A PyCapsule named \"arrow_array_stream\".\n\n"
     "Raises\n"
     "  ValueError: an earlier export was read to the end."},
    {"_restore", llpy_reader_restore, METH_VARARGS,
     "_restore($self, last, dropped, finished, /)\n"
     "--\n\n"
     "Set the progress counters of an unpickled reader (internal).\n\n"
     "Arguments\n"
     "  last: last_record_offset, or None; dropped: dropped_bytes;\n"
     "  finished: whether the original had reached the end of a buffer.\n\n"
     "Returns\n"
     "  None."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Reader_getset[] = {
    {"dialect", llpy_reader_get_dialect, NULL,
     "The dialect read: 'leveldb', 'rocksdb' or 'pebble'.", NULL},
    {"log_number", llpy_reader_get_log_number, NULL,
     "The log number recyclable records are held to (given, from the\n"
     "file name, or the first recyclable record's), or None.",
     NULL},
    {"compression", llpy_reader_get_compression, NULL,
     "'zstd' once the log said its records are compressed, else None.", NULL},
    {"timestamp_sizes", llpy_reader_get_timestamp_sizes, NULL,
     "Column family id -> user-defined timestamp size, as the log's\n"
     "records stated them so far (a copy).",
     NULL},
    {"predecessor", llpy_reader_get_predecessor, NULL,
     "The previous WAL as the log recorded it: Predecessor(log_number,\n"
     "size, last_sequence), or None.",
     NULL},
    {"recycled", llpy_reader_get_recycled, NULL,
     "True once a recyclable record (one with a log number) was read.", NULL},
    {"last_record_offset", Reader_get_last, NULL,
     "Offset of the first header of the record returned last (None\n"
     "before the first).",
     NULL},
    {"dropped_bytes", Reader_get_dropped, NULL,
     "Total bytes of the corruptions reported so far.", NULL},
    {"closed", Reader_get_closed, NULL, "True once close() was called.", NULL},
    {"recovery", Reader_get_recovery, NULL,
     "The recovery mode: 'skip', 'tolerate_tail', 'point_in_time'\n"
     "or 'absolute'.",
     NULL},
    {"verify_checksums", Reader_get_verify, NULL, "Whether CRCs are checked.",
     NULL},
    {"start", Reader_get_start, NULL,
     "First offset of the range read: records whose first header lies\n"
     "before it are not returned.",
     NULL},
    {"end", Reader_get_end, NULL,
     "End of the range read: records whose first header lies at or\n"
     "after it are not returned (None: no end).",
     NULL},
    {"position", Reader_get_position, NULL,
     "Offset where reading goes on: Reader(source, start=position)\n"
     "returns exactly the records this reader has yet to return. None\n"
     "once closed.",
     NULL},
    {"_blocks_in_place", Reader_get_in_place, NULL,
     "Blocks whose payload was read from the file straight into a\n"
     "record (internal: for tests and benchmarks).",
     NULL},
    {"_blocks_bounced", Reader_get_bounced, NULL,
     "Of those, blocks read through the block buffer instead, as the\n"
     "kernel would have copied them slowly in place (internal: for tests).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(
    Reader_doc,
    "Reader(source, *, dialect='leveldb', log_number=None, recovery='skip', "
    "verify_checksums=True, start=0, end=None, on_corruption=None, "
    "storage_options=None)\n"
    "--\n\n"
    "Iterate over the records of a LevelDB log, as bytes, in write order.\n"
    "\n"
    "Arguments\n"
    "  source: the log, opened here (a missing path raises at the call):\n"
    "    - a path (str or os.PathLike);\n"
    "    - a URL (scheme://...), opened with fsspec: see storage_options;\n"
    "    - a bytes-like object (bytes, bytearray, memoryview, mmap, ...),\n"
    "      read in place, never copied whole, and released when the\n"
    "      reader is closed or exhausted;\n"
    "    - a binary file object with readinto(), holding the log from its\n"
    "      position when the reader is made.\n"
    "  recovery: what damage does: 'skip' (the default), 'tolerate_tail',\n"
    "    'point_in_time' or 'absolute'; see \"Recovery modes\".\n"
    "  verify_checksums: False skips CRC checks (LevelDB's\n"
    "    checksum=false): a damaged payload is then returned as data.\n"
    "  start, end: only the records whose first header lies in\n"
    "    [start, end); end=None reads to the end. See \"Ranges\".\n"
    "  on_corruption: None, or a callable given a Corruption(offset,\n"
    "    size, reason) for each damage reported; see \"Reports\".\n"
    "  dialect: 'leveldb' (the default), 'rocksdb' or 'pebble'; see\n"
    "    \"Dialects\".\n"
    "  log_number: the number recyclable records must carry (RocksDB,\n"
    "    Pebble); None takes it from a path named NNNNNN.log, else from\n"
    "    the first recyclable record.\n"
    "  storage_options: for a source given as a URL (s3://, gcs://,\n"
    "    memory://, file://, ...), which fsspec opens (pip install\n"
    "    'leveldb-log[fsspec]'): the file system's options, such as\n"
    "    {'anon': True}; None for none. A local file system's URL is read\n"
    "    as a path; any other store's object through a file object the\n"
    "    reader owns and closes.\n"
    "\n"
    "Returns\n"
    "  An iterator: next() gives the next record's payload (bytes).\n"
    "  Properties: last_record_offset, dropped_bytes, position, closed and\n"
    "  the options. close(), or a with statement, releases the source.\n"
    "\n"
    "Dialects\n"
    "  'rocksdb' reads RocksDB's WALs and MANIFESTs: recyclable records\n"
    "  (11-byte headers with the log number), metadata records (never\n"
    "  returned: see compression, timestamp_sizes, predecessor), unknown\n"
    "  types with bit 0x80 skipped, RocksDB's reason texts. A recyclable\n"
    "  record of another log number is an older log's data: the log ends\n"
    "  before it, except in 'skip' mode, which skips it. In a recycled log\n"
    "  'tolerate_tail' ends at damage; 'point_in_time' reports a torn tail.\n"
    "  A zstd-compressed WAL is decompressed record by record (this needs\n"
    "  the extra leveldb-log[rocksdb]). 'pebble' reads Pebble's WALs:\n"
    "  recyclable and walSync chunks (19-byte headers), ending at its\n"
    "  end-of-log trailer. See docs/rocksdb.md.\n"
    "\n"
    "Recovery modes\n"
    "  A torn tail is what a crash leaves at the end of a log: a partial\n"
    "  header, a payload cut short, or a fragmented record without its\n"
    "  last fragment. Any other damage is corruption.\n"
    "\n"
    "  recovery         corruption mid-file           torn tail\n"
    "  'skip'           reported and skipped;         stops before it,\n"
    "                   reading goes on (LevelDB's)   unreported\n"
    "  'tolerate_tail'  raises CorruptionError        stops before it,\n"
    "                                                 unreported\n"
    "  'point_in_time'  reported; iteration ends      stops before it,\n"
    "                   cleanly before it             unreported\n"
    "  'absolute'       raises CorruptionError        raises\n"
    "                                                 TruncatedRecordError\n"
    "\n"
    "  In every mode the records before the damage are returned first.\n"
    "\n"
    "Reports\n"
    "  Without on_corruption, 'skip' and 'point_in_time' issue a\n"
    "  leveldb_log.CorruptionWarning (a UserWarning) through warnings for\n"
    "  each corruption they skip or stop before: shown once per place by\n"
    "  default, an exception under -W error, silenced by a filter. The\n"
    "  raising modes raise instead. A given on_corruption replaces the\n"
    "  warning: it is called for every corruption (in 'absolute', for the\n"
    "  torn tail too) before the mode acts on it, without the reader's\n"
    "  lock held, so it may use the reader; what it raises propagates\n"
    "  from next(). A file that ends in bytes no writer of the format\n"
    "  leaves (not a log?) warns once in every mode, with or without\n"
    "  on_corruption: LevelDB's reader reports no corruption there.\n"
    "\n"
    "Ranges\n"
    "  A record belongs to the range that holds its first header: the\n"
    "  reader returns exactly the records whose first header lies in\n"
    "  [start, end), reading past end to finish the last of them. Readers\n"
    "  over consecutive ranges (see splits()) together return every\n"
    "  record and report every corruption exactly once, wherever the cuts\n"
    "  fall (a corruption by the range its dropped bytes begin in).\n"
    "\n"
    "Following a growing log\n"
    "  Over a path or a file object, iteration stops at the current end\n"
    "  of the log; iterate again later for the records appended since. An\n"
    "  incomplete record at the end is not consumed until it is complete.\n"
    "  A buffer does not grow: the reader is finished at its end. Do not\n"
    "  follow a live log in 'absolute' mode: its torn tail raises.\n"
    "  Reader(source, start=position) resumes where a reader stood, after\n"
    "  a restart too.\n"
    "\n"
    "Pickling\n"
    "  A reader over a path or a URL pickles as what reopens it: the\n"
    "  path or URL, its options (on_corruption and storage_options must\n"
    "  be picklable) and its progress.\n"
    "  Unpickled (or copied with copy.copy or copy.deepcopy) it goes on\n"
    "  exactly where the original stood; a file that is gone by then\n"
    "  raises FileNotFoundError. A reader over a buffer or a file object,\n"
    "  or a closed one, refuses with TypeError.\n"
    "\n"
    "Threads\n"
    "  A reader may be shared by threads: each call holds its lock. A\n"
    "  call on it from a file object's method it is calling raises\n"
    "  RuntimeError instead of deadlocking.\n"
    "\n"
    "Raises\n"
    "  FileNotFoundError, OSError: the path cannot be opened (at the\n"
    "    call); reading fails (from next(): the original OSError).\n"
    "  TypeError: a source of another kind; an argument of the wrong\n"
    "    type; on_corruption not callable.\n"
    "  ValueError: an unknown recovery mode or dialect; start or end\n"
    "    negative or above 2**64 - 1 (the message names which); end <\n"
    "    start; log_number with dialect 'leveldb'; next() on a closed\n"
    "    reader; storage_options with a source that is no URL.\n"
    "  CorruptionError, TruncatedRecordError: from next(), as the\n"
    "    recovery mode says.\n"
    "  ImportError: a URL without fsspec (the message names the extra);\n"
    "    ZstdMissingError, from next(): a compressed WAL with no zstd\n"
    "    binding installed (the message names the extra).");

static PyType_Slot Reader_slots[] = {
    {Py_tp_doc, (void *)Reader_doc},   {Py_tp_new, Reader_new},
    {Py_tp_init, llpy_reader_init},    {Py_tp_dealloc, Reader_dealloc},
    {Py_tp_traverse, Reader_traverse}, {Py_tp_clear, Reader_clear},
    {Py_tp_iter, Reader_iter},         {Py_tp_iternext, llpy_reader_iternext},
    {Py_tp_repr, Reader_repr},         {Py_tp_methods, Reader_methods},
    {Py_tp_getset, Reader_getset},     {0, NULL}};

PyType_Spec llpy_reader_spec = {
    .name = "leveldb_log.Reader",
    .basicsize = sizeof(llpy_reader),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Reader_slots,
};
