/*
 * reader_open.c - making a Reader (tp_init): its keyword options, and its
 * source opened by kind (a path, a URL, a buffer, a file object), with the
 * block buffer a file needs.
 */
#include "reader_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

static int parse_recovery(PyObject *obj, llog_recovery *out) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "recovery must be a str, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    for (unsigned i = 0; i < LLOG_RECOVERY_COUNT; i++) {
        if (PyUnicode_CompareWithASCIIString(obj, llog_recovery_name(i)) ==
            0) {
            *out = (llog_recovery)i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "recovery must be 'skip', 'tolerate_tail', 'point_in_time' "
                 "or 'absolute', not %R",
                 obj);
    return -1;
}

static int reader_open_file(llpy_reader *self, PyObject *file) {
    self->kind = LLPY_SRC_FILE;
    self->file = Py_NewRef(file);
    PyObject *r = PyObject_CallMethod(file, "seekable", NULL);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    } else {
        self->seekable = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (self->seekable < 0)
            return -1;
    }
    if (self->seekable) {
        PyObject *pos = PyObject_CallMethod(file, "tell", NULL);
        if (pos == NULL)
            return -1;
        int rc = llpy_parse_offset(pos, "tell()", &self->base);
        Py_DECREF(pos);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Checks the keyword options and fills *opt and the reader's copies. */
static int reader_options(llpy_reader *self, PyObject *recovery, int verify,
                          PyObject *start, PyObject *end,
                          PyObject *on_corruption, llog_reader_options *opt) {
    *opt = (llog_reader_options){.end = LLOG_NO_END,
                                 .verify_checksums = verify,
                                 .reserve = llpy_assembly_reserve,
                                 .reserve_ctx = self};
    self->recovery = LLOG_RECOVER_SKIP;
    self->verify_checksums = verify;
    if (recovery != NULL && parse_recovery(recovery, &self->recovery) < 0)
        return -1;
    if (start != NULL && llpy_parse_offset(start, "start", &opt->start) < 0)
        return -1;
    if (end != Py_None && llpy_parse_offset(end, "end", &opt->end) < 0)
        return -1;
    if (opt->end < opt->start) {
        PyErr_Format(
            PyExc_ValueError, "end (%llu) must not be less than start (%llu)",
            (unsigned long long)opt->end, (unsigned long long)opt->start);
        return -1;
    }
    if (on_corruption != Py_None && !PyCallable_Check(on_corruption)) {
        PyErr_SetString(PyExc_TypeError,
                        "on_corruption must be callable or None");
        return -1;
    }
    self->start = opt->start;
    self->end = opt->end;
    return 0;
}

static int reader_open_path(llpy_reader *self, llpy_state *st,
                            PyObject *path) {
    self->kind = LLPY_SRC_FD;
    self->fd = llpy_open_path(st, path, O_RDONLY);
    if (self->fd < 0)
        return -1;
    struct stat info;
    if (fstat(self->fd, &info) == 0 && S_ISDIR(info.st_mode)) {
        errno = EISDIR;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
        return -1;
    }
#ifdef _WIN32
    self->seekable = _lseeki64(self->fd, 0, SEEK_CUR) >= 0;
#else
    self->seekable = lseek(self->fd, 0, SEEK_CUR) >= 0;
#endif
    return 0;
}

/* The path made absolute as bytes, so that a later change of directory
 * does not change which file it names (NULL when that fails: the reader
 * then only misses telling a replaced file). */
static PyObject *absolute_path(PyObject *path) {
#ifdef _WIN32
    (void)path;
    return NULL;
#else
    PyObject *bytes = NULL;
    char cwd[4096];
    if (!PyUnicode_FSConverter(path, &bytes)) {
        PyErr_Clear();
        return NULL;
    }
    if (PyBytes_AS_STRING(bytes)[0] == '/')
        return bytes;
    PyObject *abs =
        getcwd(cwd, sizeof cwd) != NULL
            ? PyBytes_FromFormat("%s/%s", cwd, PyBytes_AS_STRING(bytes))
            : NULL;
    PyErr_Clear();
    Py_DECREF(bytes);
    return abs;
#endif
}

/* A URL, opened by leveldb_log._storage: a local file system's path is read
 * as a path; any other store's file object is the reader's own. */
static int reader_open_url(llpy_reader *self, PyObject *url,
                           PyObject *storage_options) {
    PyObject *opened = llpy_open_url(url, "rb", storage_options);
    if (opened == NULL)
        return -1;
    self->storage_options = Py_NewRef(storage_options);
    int rc = PyUnicode_Check(opened)
                 ? reader_open_path(self, llpy_state_of(Py_TYPE(self)), opened)
                 : reader_open_file(self, opened);
    Py_DECREF(opened);
    return rc;
}

/* Opens the source by its kind, and the block buffer a file needs. */
static int reader_open_source(llpy_reader *self, PyObject *source,
                              PyObject *storage_options,
                              llog_reader_options *opt) {
    self->fd = -1;
    int url = llpy_is_url(source);
    if (url < 0)
        return -1;
    if (url) {
        if (reader_open_url(self, source, storage_options) < 0)
            return -1;
        opt->sequential = !self->seekable;
    } else if (storage_options != Py_None) {
        PyErr_SetString(PyExc_ValueError,
                        "storage_options applies to URLs (scheme://...)");
        return -1;
    } else if (llpy_is_path(source)) {
        if (reader_open_path(self, llpy_state_of(Py_TYPE(self)), source) < 0)
            return -1;
        opt->sequential = !self->seekable;
        self->abs_path = absolute_path(source);
    } else if (PyObject_CheckBuffer(source)) {
        self->kind = LLPY_SRC_BUFFER;
        return PyObject_GetBuffer(source, &self->view, PyBUF_SIMPLE);
    } else if (PyObject_HasAttrString(source, "readinto")) {
        if (reader_open_file(self, source) < 0)
            return -1;
        opt->sequential = !self->seekable;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "Reader source must be a path, a bytes-like object or a "
                     "binary file object, not %.100s",
                     Py_TYPE(source)->tp_name);
        return -1;
    }
    self->block = llpy_io_alloc(self->kind == LLPY_SRC_FD && self->seekable
                                    ? LLPY_READ_CHUNK
                                    : LLOG_BLOCK_SIZE);
    if (self->block == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* A path's os.fspath, as str (a bytes one decoded as os.fsdecode does). */
static PyObject *path_str(PyObject *path) {
    PyObject *s = PyOS_FSPath(path);
    if (s == NULL || PyUnicode_Check(s))
        return s;
    PyObject *text = PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(s),
                                                      PyBytes_GET_SIZE(s));
    Py_DECREF(s);
    return text;
}

/* What Reader.name says: a path or URL as given, a file object's own name
 * when it is a path, else None (a buffer, a file object with no such name,
 * as one opened on a descriptor). */
static PyObject *reader_name(PyObject *source, int is_path) {
    if (is_path)
        return path_str(source);
    PyObject *name = NULL;
    if (PyObject_CheckBuffer(source) ||
        (name = PyObject_GetAttrString(source, "name")) == NULL) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    PyObject *text = llpy_is_path(name) || PyBytes_Check(name)
                         ? path_str(name)
                         : Py_NewRef(Py_None);
    Py_DECREF(name);
    return text;
}

/* The options of other dialects (reader_dialect.c). */
static int reader_dialect(llpy_reader *self, PyObject *dialect,
                          PyObject *log_number, PyObject *source,
                          llog_reader_options *opt) {
    opt->recovery = self->recovery;
    if (llpy_dialect_options(dialect, log_number,
                             llpy_is_path(source) ? source : NULL, opt) < 0)
        return -1;
    self->dialect = opt->dialect;
    return llpy_meta_init(&self->meta, opt);
}

int llpy_reader_init(PyObject *op, PyObject *args, PyObject *kwds) {
    llpy_reader *self = (llpy_reader *)op;
    static char *kwlist[] = {"source",   "dialect",          "log_number",
                             "recovery", "verify_checksums", "start",
                             "end",      "on_corruption",    "storage_options",
                             NULL};
    PyObject *source, *recovery = NULL, *start = NULL, *end = Py_None;
    PyObject *on_corruption = Py_None, *dialect = NULL, *log_number = NULL;
    PyObject *storage_options = Py_None, *verify_obj = Py_True;
    int verify = 1;
    if (self->core != NULL || self->closed) {
        PyErr_SetString(PyExc_RuntimeError, "Reader is already initialized");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOOOOOO:Reader", kwlist,
                                     &source, &dialect, &log_number, &recovery,
                                     &verify_obj, &start, &end, &on_corruption,
                                     &storage_options) ||
        llpy_parse_flag(verify_obj, "verify_checksums", &verify) < 0)
        return -1;
    llog_reader_options opt;
    if (reader_options(self, recovery, verify, start, end, on_corruption,
                       &opt) < 0 ||
        reader_dialect(self, dialect, log_number, source, &opt) < 0 ||
        reader_open_source(self, source, storage_options, &opt) < 0)
        return -1;
    self->name = reader_name(source, llpy_is_path(source));
    if (self->name == NULL)
        return -1;
    self->source = Py_NewRef(source);
    self->on_corruption =
        on_corruption == Py_None ? NULL : Py_NewRef(on_corruption);
    self->core = llog_reader_new(&opt);
    if (self->core == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}
