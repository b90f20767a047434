/*
 * writer_open.c - what the Writer writes to: a path (opened, locked, then
 * truncated for "w" or resumed for "a"), a binary file object (checked to
 * take bytes, counted from its position) or a URL, handed to the Writer's
 * output (writer_output.h); and the mode and buffering arguments. It sees
 * no Writer: writer.c gives it the parts it fills.
 */
#include "llpy_io.h"
#include "writer_append.h"
#include "writer_internal.h"
#include "writer_lock.h"
#include "writer_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

/* What an opening fills, and what it goes by. */
typedef struct {
    llpy_output *out;
    llpy_writer_dialect *dialect;
    llpy_state *st;
    char mode;
    int use_lock;
    PyObject *name; /* the target as given (a new reference once known) */
    int dir_fd;     /* a new log's directory, or -1 */
} opening;

/* Truncates a regular file ("w"), once its lock is held. */
static int truncate_regular(opening *self, int fd) {
    struct stat info;
    if (fstat(fd, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG ||
        info.st_size == 0)
        return 0; /* devices and FIFOs are written to, never truncated */
#ifdef _WIN32
    int rc = _chsize_s(fd, 0);
#else
    int rc = ftruncate(fd, 0);
#endif
    if (rc != 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, self->name);
        return -1;
    }
    return 0;
}

static int writer_open_path(opening *self, PyObject *path) {
    int flags = self->mode == 'a' ? O_RDWR : O_WRONLY; /* "a" reads its tail */
    if (self->mode == 'x')
        flags |= O_EXCL;
    int created;
    int fd = llpy_policy_open(self->st, path, flags, &created);
    if (fd < 0)
        return -1;
    llpy_output_adopt_fd(self->out, fd);
    /* Nothing is cut before the lock is held: a refused Writer changes
     * nothing. */
    int locked = self->use_lock ? llpy_file_lock(self->st, fd, self->name) : 0;
    if (locked < 0)
        return -1;
    if (locked)
        llpy_output_set_locked(self->out);
    if (self->mode == 'w' && truncate_regular(self, fd) < 0)
        return -1;
    if (created && llpy_policy_open_dir(path, &self->dir_fd) < 0)
        return -1;
    if (self->mode != 'a')
        return 0;
    struct stat info;
    if (fstat(fd, &info) == 0 &&
        llpy_writer_dialect_check_append(
            self->dialect, fd, (uint64_t)info.st_size, self->name) < 0)
        return -1;
    llog_reader_options dialect = llpy_writer_dialect_of(self->dialect);
    uint64_t written;
    int pad_next;
    if (llpy_append_open(self->st, fd, self->name, &dialect, &written,
                         &pad_next) < 0)
        return -1;
    llpy_output_resume(self->out, written, pad_next);
    return 0;
}

/* A text file (or anything whose write() refuses bytes) would lose every
 * record at the first flush: refuse it now, with an empty write. Any other
 * failure of that write tells nothing about bytes: it is left to the real
 * writes to report (a target may fail on every write, on purpose). */
static int check_takes_bytes(PyObject *file) {
    PyObject *empty = PyBytes_FromStringAndSize(NULL, 0);
    if (empty == NULL)
        return -1;
    PyObject *r = PyObject_CallMethod(file, "write", "O", empty);
    Py_DECREF(empty);
    Py_XDECREF(r);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        return 0;
    }
    PyObject *cause = PyErr_GetRaisedException();
    PyErr_Format(PyExc_TypeError,
                 "Writer needs a binary file object: %R.write() refused bytes "
                 "(a text file? open it with 'wb' or 'ab')",
                 file);
    PyObject *exc = PyErr_GetRaisedException();
    PyException_SetCause(exc, cause);
    PyErr_SetRaisedException(exc);
    return -1;
}

/* A file object opened for reading would fail at the first flush, losing
 * the records: refused now, as writable() says (an object without one is
 * left to check_takes_bytes and the writes). */
static int check_writable(PyObject *file) {
    PyObject *r = PyObject_CallMethod(file, "writable", NULL);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int writable = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (writable == 0)
        PyErr_Format(PyExc_TypeError,
                     "Writer needs a file object open for writing: %R is not "
                     "writable (open it with 'wb')",
                     file);
    return writable > 0 ? 0 : -1;
}

/* The position of a file object, or 0 for one that cannot tell (a pipe);
 * -1 with an exception set. */
static int file_position(PyObject *file, uint64_t *at) {
    *at = 0;
    PyObject *pos = PyObject_CallMethod(file, "tell", NULL);
    if (pos == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_OSError) &&
            !PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int rc = llpy_parse_offset(pos, "tell()", at);
    Py_DECREF(pos);
    return rc;
}

/* A file object opened for appending ('ab') to bytes already there: the log
 * would start at their end with block alignment of its own, not continue
 * theirs, so it is refused (Writer(path, "a") appends to a log). */
static int check_not_appending(PyObject *file) {
    PyObject *mode = PyObject_GetAttrString(file, "mode");
    if (mode == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int appending = PyUnicode_Check(mode) &&
                    PyUnicode_FindChar(mode, 'a', 0, PY_SSIZE_T_MAX, 1) >= 0;
    Py_DECREF(mode);
    uint64_t at = 0;
    if (!appending || file_position(file, &at) < 0 || at == 0)
        return PyErr_Occurred() ? -1 : 0;
    PyErr_Format(PyExc_ValueError,
                 "%R is opened for appending to %llu bytes: a Writer starts a "
                 "new log at a file object's position, so append to a log "
                 "with Writer(path, 'a')",
                 file, (unsigned long long)at);
    return -1;
}

/* A file object given by the user holds the log from its position: offsets
 * and block alignment count from there, as a Reader given the object at
 * that position counts them. One a store opened for mode "a" (`resume`)
 * holds the log from its offset 0 and continues it at its end. */
static int writer_open_file(opening *self, PyObject *file, int closefd,
                            int resume) {
    if (check_writable(file) < 0 || check_takes_bytes(file) < 0 ||
        (!resume && check_not_appending(file) < 0))
        return -1;
    llpy_output_adopt_file(self->out, file, closefd);
    uint64_t written = 0;
    if (resume && file_position(file, &written) < 0)
        return -1;
    llpy_output_resume(self->out, written, 0);
    return 0;
}

/* buffering: -1 (the default size), 0 (none) or a size up to 1 GiB. */
int llpy_writer_parse_buffering(PyObject *obj, size_t *limit) {
    if (obj == NULL) {
        *limit = LLPY_DEFAULT_BUFFER;
        return 0;
    }
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "buffering must be an int, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || v < -1 || v > LLPY_MAX_BUFFER) {
        PyErr_Format(PyExc_ValueError,
                     "buffering must be -1, 0 or a size up to %d, not %R",
                     LLPY_MAX_BUFFER, obj);
        return -1;
    }
    *limit = v < 0 ? LLPY_DEFAULT_BUFFER : (size_t)v;
    return 0;
}

int llpy_writer_parse_mode(PyObject *mode, char *out) {
    const char *m = PyUnicode_Check(mode) ? PyUnicode_AsUTF8(mode) : NULL;
    if (m == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "mode must be a str, not %.100s",
                         Py_TYPE(mode)->tp_name);
        return -1;
    }
    if (strcmp(m, "w") != 0 && strcmp(m, "a") != 0 && strcmp(m, "x") != 0) {
        PyErr_Format(PyExc_ValueError, "mode must be 'w', 'a' or 'x', not %R",
                     mode);
        return -1;
    }
    *out = m[0];
    return 0;
}

/* A URL, opened by leveldb_log._storage: a local file system's path is
 * written as a path; any other store's file object is the writer's own. */
static int writer_open_url(opening *self, PyObject *url,
                           PyObject *storage_options) {
    PyObject *opened = llpy_open_url(url,
                                     self->mode == 'a'   ? "ab"
                                     : self->mode == 'x' ? "xb"
                                                         : "wb",
                                     storage_options);
    if (opened == NULL)
        return -1;
    self->name = Py_NewRef(url);
    int rc;
    if (PyUnicode_Check(opened))
        rc = writer_open_path(self, opened);
    else
        rc = writer_open_file(self, opened, 1, self->mode == 'a');
    Py_DECREF(opened);
    return rc;
}

/* The target, taken as a path, a URL or a file object. */
static int writer_open(opening *self, PyObject *target, int closefd,
                       PyObject *storage_options) {
    int url = llpy_is_url(target);
    if (url != 0)
        return url < 0 ? -1 : writer_open_url(self, target, storage_options);
    if (storage_options != Py_None) {
        PyErr_SetString(PyExc_ValueError,
                        "storage_options applies to URLs (scheme://...)");
        return -1;
    }
    if (llpy_is_path(target)) {
        self->name = Py_NewRef(target);
        return writer_open_path(self, target);
    }
    if (PyObject_HasAttrString(target, "write")) {
        if (self->mode != 'w') { /* (only given as "a" or "x") */
            PyErr_SetString(
                PyExc_ValueError,
                "mode applies to paths; open the file object yourself");
            return -1;
        }
        self->name = Py_NewRef(target);
        return writer_open_file(self, target, closefd, 0);
    }
    PyErr_Format(
        PyExc_TypeError,
        "Writer target must be a path or a binary file object, not %.100s",
        Py_TYPE(target)->tp_name);
    return -1;
}

int llpy_writer_open_target(llpy_output *out, llpy_writer_dialect *dialect,
                            llpy_state *st, PyObject *target, char mode,
                            int flags, PyObject *storage_options,
                            PyObject **name, int *dir_fd) {
    opening self = {out, dialect, st, mode, flags & LLPY_OPEN_LOCK, NULL, -1};
    int rc = writer_open(&self, target, (flags & LLPY_OPEN_CLOSEFD) != 0,
                         storage_options);
    *name = self.name;
    *dir_fd = self.dir_fd;
    return rc;
}
