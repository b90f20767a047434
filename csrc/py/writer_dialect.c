/*
 * writer_dialect.c - the Writer's RocksDB and Pebble side (docs/rocksdb.md):
 * the options (checked before the target is touched), the header the core
 * writes, RocksDB's compression record and zstd frames, Pebble's trailer.
 */
#include "writer_dialect.h"
#include "llpy_io.h"
#include "reader_dialect.h"

#include <string.h>

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

struct llpy_writer_dialect {
    llog_dialect dialect;
    size_t header_size;
    int has_log_number;
    uint64_t log_number;
    int compress; /* each record is written as one zstd frame */
};

llpy_writer_dialect *llpy_writer_dialect_new(void) {
    llpy_writer_dialect *d = PyMem_Calloc(1, sizeof *d);
    if (d == NULL)
        return (llpy_writer_dialect *)PyErr_NoMemory();
    d->dialect = LLOG_DIALECT_LEVELDB;
    d->header_size = LLOG_HEADER_SIZE;
    return d;
}

void llpy_writer_dialect_free(llpy_writer_dialect *d) { PyMem_Free(d); }

llog_reader_options llpy_writer_dialect_of(const llpy_writer_dialect *d) {
    llog_reader_options opt = {.dialect = d->dialect,
                               .has_log_number = d->has_log_number,
                               .log_number = d->log_number};
    return opt;
}

int llpy_writer_dialect_compressed(const llpy_writer_dialect *d) {
    return d->compress;
}

size_t llpy_writer_dialect_header_size(const llpy_writer_dialect *d) {
    return d->header_size;
}

/* The number a rocksdb or pebble writer writes into recyclable headers:
 * given, or the target's file name's. */
static int writer_log_number(llpy_writer_dialect *d, PyObject *target,
                             PyObject *dialect, PyObject *log_number) {
    llog_reader_options opt = {0};
    if (llpy_dialect_options(dialect, log_number,
                             llpy_is_path(target) ? target : NULL, &opt) < 0)
        return -1;
    d->dialect = opt.dialect;
    d->has_log_number = opt.has_log_number;
    d->log_number = opt.log_number;
    return 0;
}

static int parse_compression(PyObject *obj, int *zstd) {
    *zstd = 0;
    if (obj == NULL || obj == Py_None)
        return 0;
    if (PyUnicode_Check(obj) &&
        PyUnicode_CompareWithASCIIString(obj, "zstd") == 0) {
        *zstd = 1;
        return 0;
    }
    PyErr_Format(PyUnicode_Check(obj) ? PyExc_ValueError : PyExc_TypeError,
                 "compression must be None or 'zstd' (the only one RocksDB "
                 "writes WALs with), not %R",
                 obj);
    return -1;
}

/* Refuses options the dialect does not have (ValueError naming them). */
static int check_combination(llpy_writer_dialect *d, int recycle,
                             int sync_offsets) {
    const char *bad = NULL;
    if (d->dialect == LLOG_DIALECT_LEVELDB &&
        (recycle || d->compress || sync_offsets))
        bad = recycle        ? "recycle=True needs dialect='rocksdb'"
              : sync_offsets ? "sync_offsets=True needs dialect='pebble'"
                             : "compression needs dialect='rocksdb'";
    else if (d->dialect == LLOG_DIALECT_ROCKSDB && sync_offsets)
        bad = "sync_offsets=True is Pebble's: use dialect='pebble'";
    else if (d->dialect == LLOG_DIALECT_PEBBLE && d->compress)
        bad = "Pebble's logs are not compressed";
    else if ((recycle || d->dialect == LLOG_DIALECT_PEBBLE) &&
             !d->has_log_number)
        bad = "recyclable records carry a log number: pass log_number=, or "
              "name the file NNNNNN.log";
    if (bad != NULL) {
        PyErr_SetString(PyExc_ValueError, bad);
        return -1;
    }
    return 0;
}

int llpy_writer_dialect_options(llpy_writer_dialect *d, PyObject *target,
                                PyObject *dialect, PyObject *log_number,
                                int recycle, PyObject *compression,
                                int sync_offsets) {
    if (writer_log_number(d, target, dialect, log_number) < 0 ||
        parse_compression(compression, &d->compress) < 0 ||
        check_combination(d, recycle, sync_offsets) < 0)
        return -1;
    d->header_size = sync_offsets ? LLOG_SYNC_HEADER_SIZE
                     : recycle || d->dialect == LLOG_DIALECT_PEBBLE
                         ? LLOG_RECYCLABLE_HEADER_SIZE
                         : LLOG_HEADER_SIZE;
    return d->compress ? llpy_zstd_require() : 0;
}

/* 1 when the log on fd begins with RocksDB's zstd compression record. */
static int starts_compressed(int fd, int *yes) {
    uint8_t head[LLOG_COMPRESSION_RECORD_SIZE];
    Py_ssize_t got;
#ifdef _WIN32
    got = _lseeki64(fd, 0, SEEK_SET) < 0 ? -1 : _read(fd, head, sizeof head);
#else
    got = pread(fd, head, sizeof head, 0);
#endif
    if (got < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    *yes = llog_header_starts_compressed(head, (size_t)got);
    return 0;
}

int llpy_writer_dialect_check_append(const llpy_writer_dialect *d, int fd,
                                     uint64_t size, PyObject *name) {
    int compressed = 0;
    if (d->dialect != LLOG_DIALECT_ROCKSDB || size == 0)
        return 0;
    if (starts_compressed(fd, &compressed) < 0)
        return -1;
    if (compressed == d->compress)
        return 0;
    PyErr_Format(PyExc_ValueError,
                 compressed ? "%R is a zstd-compressed WAL: append with "
                              "compression='zstd'"
                            : "%R is not a compressed WAL: append without "
                              "compression",
                 name);
    return -1;
}

_Static_assert(LLOG_COMPRESSION_RECORD_SIZE <= LLPY_DIALECT_RECORD_MAX,
               "a compression record fits LLPY_DIALECT_RECORD_MAX");

size_t llpy_writer_dialect_start(const llpy_writer_dialect *d,
                                 llog_writer *core, uint8_t *dst) {
    llog_writer_set_header(core, d->header_size, d->log_number);
    if (d->compress) /* RocksDB's chunks: RocksDB 7 reads nothing else */
        llog_writer_set_chunk(core, LLOG_BLOCK_SIZE - d->header_size);
    if (!d->compress || core->offset != 0)
        return 0;
    return llog_writer_compression_record(core, dst);
}

PyObject *llpy_writer_compress(const uint8_t *data, size_t n) {
    PyObject *mod = PyImport_ImportModule("leveldb_log._zstd");
    if (mod == NULL)
        return NULL;
    PyObject *view =
        PyMemoryView_FromMemory((char *)data, (Py_ssize_t)n, PyBUF_READ);
    PyObject *frame =
        view ? PyObject_CallMethod(mod, "compress", "O", view) : NULL;
    Py_XDECREF(view);
    Py_DECREF(mod);
    if (frame != NULL && !PyBytes_Check(frame)) {
        Py_SETREF(frame, NULL);
        PyErr_SetString(PyExc_TypeError, "zstd compress did not return bytes");
    }
    return frame;
}

size_t llpy_writer_dialect_finish(const llpy_writer_dialect *d,
                                  llog_writer *core, uint8_t *dst) {
    if (d->dialect != LLOG_DIALECT_PEBBLE)
        return 0;
    return llog_writer_pebble_trailer(core, dst);
}
