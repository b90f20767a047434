/*
 * reader_dialect.c - the Reader's RocksDB and Pebble side (docs/rocksdb.md):
 * the dialect and log_number options, what metadata records state
 * (compression, timestamp sizes, the predecessor WAL), and decoding the
 * records of a zstd-compressed WAL for the core, one fragment at a time.
 * Its state is an llpy_meta (reader_dialect.h), which the Reader holds:
 * nothing here sees the Reader itself.
 */
#include "reader_dialect.h"
#include "module.h"

#include <string.h>

static int parse_dialect(PyObject *obj, llog_dialect *out) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "dialect must be a str, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    for (unsigned i = 0; i < LLOG_DIALECT_COUNT; i++) {
        if (PyUnicode_CompareWithASCIIString(obj, llog_dialect_name(i)) == 0) {
            *out = (llog_dialect)i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "dialect must be 'leveldb', 'rocksdb' or 'pebble', not %R",
                 obj);
    return -1;
}

/* The file name at the end of a path. A slash or a backslash ends a
 * directory on every system: no engine puts a backslash in a WAL's name,
 * and a POSIX file named db\000123.log is a Windows path unpacked as one
 * name (by an unzip, say), whose WAL is 000123.log. */
static const char *base_name(const char *path) {
    const char *base = path;
    for (const char *p = path; *p != '\0'; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    return base;
}

/* The number in a WAL's file name, "000123.log" or Pebble's
 * "000123-001.log" (a segment of log 123); 0 when the name is another. */
static int number_in_name(const char *name, uint64_t *out) {
    const char *base = base_name(name);
    uint64_t n = 0;
    const char *p = base;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > (UINT64_MAX - 9) / 10)
            return 0;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    if (p == base)
        return 0;
    if (*p == '-') { /* a segment index */
        const char *q = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == q)
            return 0;
    }
    if (strcmp(p, ".log") != 0)
        return 0;
    *out = n;
    return 1;
}

/* opt's log number from a path source's file name, when it has one. */
static int log_number_of_path(PyObject *source, llog_reader_options *opt) {
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(source, &bytes))
        return -1;
    opt->has_log_number =
        number_in_name(PyBytes_AS_STRING(bytes), &opt->log_number);
    Py_DECREF(bytes);
    return 0;
}

int llpy_dialect_options(PyObject *dialect, PyObject *log_number,
                         PyObject *path, llog_reader_options *opt) {
    if (dialect != NULL && parse_dialect(dialect, &opt->dialect) < 0)
        return -1;
    if (log_number != NULL && log_number != Py_None) {
        if (opt->dialect == LLOG_DIALECT_LEVELDB) {
            PyErr_SetString(PyExc_ValueError,
                            "log_number needs dialect 'rocksdb' or 'pebble': "
                            "LevelDB's records carry no log number");
            return -1;
        }
        opt->has_log_number = 1;
        return llpy_parse_offset(log_number, "log_number", &opt->log_number);
    }
    if (path != NULL && opt->dialect != LLOG_DIALECT_LEVELDB)
        return log_number_of_path(path, opt);
    return 0;
}

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

int llpy_meta_init(llpy_meta *m, llog_reader_options *opt) {
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
    for (size_t i = 0; i + 6 <= ev->len; i += 6) {
        const uint8_t *e = ev->data + i;
        PyObject *family = PyLong_FromUnsignedLong(llog_load32(e));
        PyObject *size = PyLong_FromUnsignedLong(e[4] | (unsigned)e[5] << 8);
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

PyObject *llpy_meta_compression(const llpy_meta *m) {
    if (!m->compression)
        Py_RETURN_NONE;
    return PyUnicode_FromString("zstd");
}

PyObject *llpy_meta_timestamp_sizes(const llpy_meta *m) {
    return m->timestamp_sizes ? PyDict_Copy(m->timestamp_sizes) : PyDict_New();
}

PyObject *llpy_meta_predecessor(const llpy_meta *m) {
    return Py_NewRef(m->predecessor ? m->predecessor : Py_None);
}
