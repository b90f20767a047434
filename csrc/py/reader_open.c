/*
 * reader_open.c - what makes a Reader (tp_init's arguments): its keyword
 * options, and its source opened by kind (a path, a URL, a buffer, a file
 * object) into the feed that reads it (reader_fill.c), handed to reader.c
 * as an llpy_opened.
 */
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
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

/* A file object's feed: read at any offset when it says it can seek, from
 * where it stands (log offset 0 there). owned: a URL's, closed with the
 * reader. */
static llpy_feed *reader_open_file(llpy_state *st, PyObject *file, int owned) {
    int seekable = 0;
    uint64_t base = 0;
    PyObject *r = PyObject_CallMethod(file, "seekable", NULL);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
    } else {
        seekable = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (seekable < 0)
            return NULL;
    }
    if (seekable) {
        PyObject *pos = PyObject_CallMethod(file, "tell", NULL);
        if (pos == NULL)
            return NULL;
        int rc = llpy_parse_offset(pos, "tell()", &base);
        Py_DECREF(pos);
        if (rc < 0)
            return NULL;
    }
    return llpy_feed_file(st, file, seekable, base, owned);
}

/* Checks the keyword options and fills *opt. */
static int reader_options(PyObject *recovery, int verify, PyObject *start,
                          PyObject *end, PyObject *on_corruption,
                          llog_reader_options *opt) {
    *opt = (llog_reader_options){.end = LLOG_NO_END,
                                 .verify_checksums = verify,
                                 .recovery = LLOG_RECOVER_SKIP};
    if (recovery != NULL && llpy_parse_recovery(recovery, &opt->recovery) < 0)
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
    return 0;
}

/* A path's descriptor, opened for reading (not a directory), into *fd and
 * whether it can seek into *seekable; 0, or -1 with an exception set. */
static int reader_open_path(llpy_state *st, PyObject *path, int *fd,
                            int *seekable) {
    *fd = llpy_open_path(st, path, O_RDONLY);
    if (*fd < 0)
        return -1;
    struct stat info;
    if (fstat(*fd, &info) == 0 && S_ISDIR(info.st_mode)) {
        llpy_close_fd(*fd);
        errno = EISDIR;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
        return -1;
    }
#ifdef _WIN32
    *seekable = _lseeki64(*fd, 0, SEEK_CUR) >= 0;
#else
    *seekable = lseek(*fd, 0, SEEK_CUR) >= 0;
#endif
    return 0;
}

/* A path's feed; abs_path (stolen, may be NULL) names the file to tell
 * whether it was replaced. */
static llpy_feed *reader_feed_path(llpy_state *st, PyObject *path,
                                   PyObject *abs_path) {
    int fd, seekable;
    if (reader_open_path(st, path, &fd, &seekable) < 0) {
        Py_XDECREF(abs_path);
        return NULL;
    }
    llpy_feed *feed = llpy_feed_path(st, fd, seekable, abs_path);
    if (feed == NULL)
        llpy_close_fd(fd);
    return feed;
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
static llpy_feed *reader_open_url(llpy_state *st, PyObject *url,
                                  PyObject *storage_options) {
    PyObject *opened = llpy_open_url(url, "rb", storage_options);
    if (opened == NULL)
        return NULL;
    llpy_feed *feed = PyUnicode_Check(opened)
                          ? reader_feed_path(st, opened, NULL)
                          : reader_open_file(st, opened, 1);
    Py_DECREF(opened);
    return feed;
}

/* Opens the source by its kind into its feed (NULL with an exception set);
 * opt learns whether it is read in order. */
static llpy_feed *reader_open_source(llpy_state *st, PyObject *source,
                                     PyObject *storage_options, int url,
                                     llog_reader_options *opt) {
    llpy_feed *feed;
    if (url) {
        feed = reader_open_url(st, source, storage_options);
    } else if (storage_options != Py_None) {
        PyErr_SetString(PyExc_ValueError,
                        "storage_options applies to URLs (scheme://...)");
        return NULL;
    } else if (llpy_is_path(source)) {
        feed = reader_feed_path(st, source, absolute_path(source));
    } else if (PyObject_CheckBuffer(source)) {
        return llpy_feed_buffer(st, source);
    } else if (PyObject_HasAttrString(source, "readinto")) {
        feed = reader_open_file(st, source, 0);
    } else {
        PyErr_Format(PyExc_TypeError,
                     "Reader source must be a path, a bytes-like object or a "
                     "binary file object, not %.100s",
                     Py_TYPE(source)->tp_name);
        return NULL;
    }
    if (feed != NULL)
        opt->sequential = !llpy_feed_seekable(feed);
    return feed;
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

int llpy_reader_open(llpy_state *st, PyObject *args, PyObject *kwds,
                     llpy_opened *out) {
    static char *kwlist[] = LLPY_KWLIST_Reader;
    PyObject *source, *recovery = NULL, *start = NULL, *end = Py_None;
    PyObject *on_corruption = Py_None, *dialect = NULL, *log_number = NULL;
    PyObject *storage_options = Py_None, *verify_obj = Py_True;
    int verify = 1;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds,
            LLPY_FORMAT_Reader("O", "O", "O", "O", "O", "O", "O", "O", "O"),
            kwlist, &source, &dialect, &log_number, &recovery, &verify_obj,
            &start, &end, &on_corruption, &storage_options) ||
        llpy_parse_flag(verify_obj, "verify_checksums", &verify) < 0)
        return -1;
    llog_reader_options *opt = &out->opt;
    int url;
    if (reader_options(recovery, verify, start, end, on_corruption, opt) < 0 ||
        llpy_reader_dialect_options(dialect, log_number,
                                    llpy_is_path(source) ? source : NULL,
                                    opt) < 0 ||
        (url = llpy_is_url(source)) < 0)
        return -1;
    out->feed = reader_open_source(st, source, storage_options, url, opt);
    if (out->feed == NULL)
        return -1;
    out->name = reader_name(source, llpy_is_path(source));
    if (out->name == NULL) {
        llpy_feed_free(out->feed);
        return -1;
    }
    out->source = source;
    out->on_corruption = on_corruption == Py_None ? NULL : on_corruption;
    out->storage_options = url ? storage_options : NULL;
    return 0;
}
