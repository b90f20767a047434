/*
 * writer_dialect.c - the Writer's RocksDB and Pebble side (docs/rocksdb.md):
 * the options (checked before the target is touched), the header the core
 * writes, RocksDB's compression record and zstd frames, Pebble's trailer.
 */
#include "reader_dialect.h"
#include "writer_internal.h"

#include <string.h>

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

/* The number a rocksdb or pebble writer writes into recyclable headers:
 * given, or the target's file name's. */
static int writer_log_number(llpy_writer *self, PyObject *target,
                             PyObject *dialect, PyObject *log_number) {
    llog_reader_options opt = {0};
    if (llpy_dialect_options(dialect, log_number,
                             llpy_is_path(target) ? target : NULL, &opt) < 0)
        return -1;
    self->dialect = opt.dialect;
    self->has_log_number = opt.has_log_number;
    self->log_number = opt.log_number;
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
static int check_combination(llpy_writer *self, int recycle,
                             int sync_offsets) {
    const char *bad = NULL;
    if (self->dialect == LLOG_DIALECT_LEVELDB &&
        (recycle || self->compress || sync_offsets))
        bad = recycle        ? "recycle=True needs dialect='rocksdb'"
              : sync_offsets ? "sync_offsets=True needs dialect='pebble'"
                             : "compression needs dialect='rocksdb'";
    else if (self->dialect == LLOG_DIALECT_ROCKSDB && sync_offsets)
        bad = "sync_offsets=True is Pebble's: use dialect='pebble'";
    else if (self->dialect == LLOG_DIALECT_PEBBLE && self->compress)
        bad = "Pebble's logs are not compressed";
    else if ((recycle || self->dialect == LLOG_DIALECT_PEBBLE) &&
             !self->has_log_number)
        bad = "recyclable records carry a log number: pass log_number=, or "
              "name the file NNNNNN.log";
    if (bad != NULL) {
        PyErr_SetString(PyExc_ValueError, bad);
        return -1;
    }
    return 0;
}

int llpy_writer_dialect_options(llpy_writer *self, PyObject *target,
                                PyObject *dialect, PyObject *log_number,
                                int recycle, PyObject *compression,
                                int sync_offsets) {
    if (writer_log_number(self, target, dialect, log_number) < 0 ||
        parse_compression(compression, &self->compress) < 0 ||
        check_combination(self, recycle, sync_offsets) < 0)
        return -1;
    self->header_size = sync_offsets ? LLOG_SYNC_HEADER_SIZE
                        : recycle || self->dialect == LLOG_DIALECT_PEBBLE
                            ? LLOG_RECYCLABLE_HEADER_SIZE
                            : LLOG_HEADER_SIZE;
    return self->compress ? llpy_zstd_require() : 0;
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

int llpy_writer_check_append(llpy_writer *self, int fd, uint64_t size) {
    int compressed = 0;
    if (self->dialect != LLOG_DIALECT_ROCKSDB || size == 0)
        return 0;
    if (starts_compressed(fd, &compressed) < 0)
        return -1;
    if (compressed == self->compress)
        return 0;
    PyErr_Format(PyExc_ValueError,
                 compressed ? "%R is a zstd-compressed WAL: append with "
                              "compression='zstd'"
                            : "%R is not a compressed WAL: append without "
                              "compression",
                 self->name);
    return -1;
}

/* Room for n more bytes in the buffer, grown if need be (n is small: a
 * metadata record or a trailer), or NULL with MemoryError set. */
static uint8_t *room(llpy_writer *self, size_t n) {
    if (self->cap - self->len < n) {
        uint8_t *grown =
            PyMem_Realloc(self->buf, self->len + n + LLPY_BUF_SLACK);
        if (grown == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        self->buf = grown;
        self->cap = self->len + n;
    }
    return self->buf + self->len;
}

int llpy_writer_start(llpy_writer *self) {
    llog_writer_set_header(&self->core, self->header_size, self->log_number);
    if (self->compress) /* RocksDB's chunks: RocksDB 7 reads nothing else */
        llog_writer_set_chunk(&self->core,
                              LLOG_BLOCK_SIZE - self->header_size);
    if (!self->compress || self->core.offset != 0)
        return 0;
    uint8_t *dst = room(self, LLOG_COMPRESSION_RECORD_SIZE);
    if (dst == NULL)
        return -1;
    self->len += llog_writer_compression_record(&self->core, dst);
    return 0;
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

int llpy_writer_finish(llpy_writer *self) {
    if (self->dialect != LLOG_DIALECT_PEBBLE)
        return 0;
    uint8_t *dst =
        room(self, LLOG_MAX_HEADER_SIZE - 1 + LLOG_RECYCLABLE_HEADER_SIZE);
    if (dst == NULL)
        return -1;
    self->len += llog_writer_pebble_trailer(&self->core, dst);
    return 0;
}
