/*
 * reader_dialect.c - the Reader's RocksDB and Pebble side (docs/rocksdb.md):
 * what metadata records state
 * (compression, timestamp sizes, the predecessor WAL), and decoding the
 * records of a zstd-compressed WAL for the core, one fragment at a time.
 * Its state is an llpy_meta (reader_dialect.h), which the Reader holds:
 * nothing here sees the Reader itself.
 */
#include "reader_dialect.h"
#include "module.h"

#include <string.h>

struct llpy_meta {
    int compression;           /* 1: the records are zstd frames */
    PyObject *timestamp_sizes; /* dict: column family -> size */
    PyObject *predecessor;     /* Predecessor, or NULL */
    PyObject *decompressor;    /* the current record's frame decoder */
    PyObject *decoded;         /* bytes it returned last (the core's) */
};

/* ---- decoding compressed records ------------------------------------- */

/* The core's decode callback (llog_decode_fn): the GIL and the reader's
 * lock are held (the core never releases them for a compressed log). */
static const uint8_t *reader_decode(void *ctx, const uint8_t *in, size_t n,
                                    int first, int last, size_t *out_len) {
    llpy_meta *self = ctx;
    if (first) {
        PyObject *mod = PyImport_ImportModule("leveldb_log._zstd");
        PyObject *d =
            mod ? PyObject_CallMethod(mod, "decompressor", NULL) : NULL;
        Py_XDECREF(mod);
        Py_XSETREF(self->decompressor, d);
    }
    PyObject *view = NULL, *out = NULL;
    if (self->decompressor != NULL)
        view = PyMemoryView_FromMemory((char *)in, (Py_ssize_t)n, PyBUF_READ);
    if (view != NULL)
        out = PyObject_CallMethod(self->decompressor, "decompress", "O", view);
    Py_XDECREF(view);
    if (out != NULL && !PyBytes_Check(out))
        Py_SETREF(out, NULL);
    if (out != NULL && last) { /* the frame must end with the record */
        PyObject *eof = PyObject_GetAttrString(self->decompressor, "eof");
        int ended = eof ? PyObject_IsTrue(eof) : -1;
        Py_XDECREF(eof);
        if (ended != 1)
            Py_SETREF(out, NULL);
    }
    Py_XSETREF(self->decoded, out);
    if (out == NULL) { /* reported as damage by the core */
        PyErr_Clear();
        return NULL;
    }
    *out_len = (size_t)PyBytes_GET_SIZE(out);
    return (const uint8_t *)PyBytes_AS_STRING(out);
}

llpy_meta *llpy_meta_new(void) {
    llpy_meta *m = PyMem_Calloc(1, sizeof *m);
    if (m == NULL)
        PyErr_NoMemory();
    return m;
}

void llpy_meta_free(llpy_meta *m) {
    if (m == NULL)
        return;
    llpy_meta_clear(m);
    PyMem_Free(m);
}

int llpy_meta_init(llpy_meta *m, llog_reader_options *opt) {
    llpy_meta_clear(m);
    m->compression = 0;
    opt->decode = reader_decode;
    opt->decode_ctx = m;
    m->timestamp_sizes = PyDict_New();
    return m->timestamp_sizes ? 0 : -1;
}

int llpy_meta_traverse(llpy_meta *m, visitproc visit, void *arg) {
    Py_VISIT(m->timestamp_sizes);
    Py_VISIT(m->predecessor);
    Py_VISIT(m->decompressor);
    return 0;
}

void llpy_meta_clear(llpy_meta *m) {
    Py_CLEAR(m->timestamp_sizes);
    Py_CLEAR(m->predecessor);
    Py_CLEAR(m->decompressor);
    Py_CLEAR(m->decoded);
}

/* ---- metadata records ------------------------------------------------- */

int llpy_zstd_require(void) {
    PyObject *mod = PyImport_ImportModule("leveldb_log._zstd");
    PyObject *r = mod ? PyObject_CallMethod(mod, "require", NULL) : NULL;
    Py_XDECREF(mod);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* A compressed WAL: the records are zstd frames. Fails with the error that
 * names the extra when no zstd binding is installed. */
static int on_compression(llpy_meta *self) {
    if (llpy_zstd_require() < 0)
        return -1;
    self->compression = 1;
    return 0;
}

static int on_timestamp_sizes(llpy_meta *self, const llog_event *ev) {
    for (size_t i = 0; i + LLOG_RDB_TIMESTAMP_ENTRY <= ev->len;
         i += LLOG_RDB_TIMESTAMP_ENTRY) {
        llog_timestamp_entry e = llog_timestamp_entry_at(ev->data + i);
        PyObject *family = PyLong_FromUnsignedLong(e.family);
        PyObject *size = PyLong_FromUnsignedLong(e.size);
        int rc = family && size
                     ? PyDict_SetItem(self->timestamp_sizes, family, size)
                     : -1;
        Py_XDECREF(family);
        Py_XDECREF(size);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int on_predecessor(llpy_meta *self, const llog_event *ev) {
    PyObject *mod = PyImport_ImportModule("leveldb_log._dialects");
    PyObject *type = mod ? PyObject_GetAttrString(mod, "Predecessor") : NULL;
    Py_XDECREF(mod);
    if (type == NULL)
        return -1;
    PyObject *p = PyObject_CallFunction(
        type, "KKK", (unsigned long long)llog_load64(ev->data),
        (unsigned long long)llog_load64(ev->data + 8),
        (unsigned long long)llog_load64(ev->data + 16));
    Py_DECREF(type);
    if (p == NULL)
        return -1;
    Py_XSETREF(self->predecessor, p);
    return 0;
}

int llpy_meta_on_event(llpy_meta *self, const llog_event *ev) {
    switch (ev->size) { /* the type byte */
    case LLOG_RDB_SET_COMPRESSION:
        return on_compression(self);
    case LLOG_RDB_TIMESTAMP_SIZE:
    case LLOG_RDB_TIMESTAMP_SIZE_RECYCLABLE:
        return on_timestamp_sizes(self, ev);
    default:
        return on_predecessor(self, ev);
    }
}

/* ---- properties ------------------------------------------------------ */

/* The getters take m NULL (a Reader whose __init__ never ran): nothing. */
PyObject *llpy_meta_compression(const llpy_meta *m) {
    if (m == NULL || !m->compression)
        Py_RETURN_NONE;
    return PyUnicode_FromString("zstd");
}

PyObject *llpy_meta_timestamp_sizes(const llpy_meta *m) {
    return m != NULL && m->timestamp_sizes ? PyDict_Copy(m->timestamp_sizes)
                                           : PyDict_New();
}

PyObject *llpy_meta_predecessor(const llpy_meta *m) {
    return Py_NewRef(m != NULL && m->predecessor ? m->predecessor : Py_None);
}
