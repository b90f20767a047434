/*
 * io.c - the I/O the core leaves to its caller: opening paths, reading and
 * writing descriptors, and calling file object methods for a size.
 */
#include "llpy_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#ifdef _WIN32
#include <io.h>
#include <malloc.h>
#else
#include <unistd.h>
#endif

int llpy_is_path(PyObject *obj) {
    return PyUnicode_Check(obj) ||
           PyObject_HasAttrString((PyObject *)Py_TYPE(obj), "__fspath__");
}

/* Opens with os.open, so that errors carry the file name. */
int llpy_open_path(llpy_state *st, PyObject *path, int flags) {
#ifdef O_BINARY
    flags |= O_BINARY;
#endif
#ifdef O_CLOEXEC
    flags |= O_CLOEXEC;
#endif
    PyObject *fd_obj =
        PyObject_CallFunction(st->os_open, "Oii", path, flags, 0666);
    if (fd_obj == NULL)
        return -1;
    long fd = PyLong_AsLong(fd_obj);
    Py_DECREF(fd_obj);
    if (fd < 0 || fd > INT_MAX) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_OSError,
                            "os.open returned a bad descriptor");
        return -1;
    }
    return (int)fd;
}

void *llpy_io_alloc(size_t n) {
#ifdef _WIN32
    return _aligned_malloc(n, LLPY_PAGE);
#else
    void *p = NULL;
    return posix_memalign(&p, LLPY_PAGE, n) == 0 ? p : NULL;
#endif
}

void llpy_io_free(void *p) {
#ifdef _WIN32
    _aligned_free(p);
#else
    free(p);
#endif
}

void llpy_close_fd(int fd) {
#ifdef _WIN32
    _close(fd);
#else
    close(fd);
#endif
}

/* Reads up to n bytes at offset; returns the count (0 at end) or -1 with
 * errno set. Called without the GIL. */
static Py_ssize_t pread_some(int fd, uint8_t *buf, size_t n, uint64_t offset) {
    if (offset > (uint64_t)INT64_MAX - n)
        return 0; /* no file reaches offsets its off_t cannot hold */
#ifdef _WIN32
    if (_lseeki64(fd, (__int64)offset, SEEK_SET) < 0)
        return -1;
    return _read(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
#else
    return pread(fd, buf, n, (off_t)offset);
#endif
}

Py_ssize_t llpy_write_some(int fd, const uint8_t *buf, size_t n) {
#ifdef _WIN32
    return _write(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
#else
    return write(fd, buf, n);
#endif
}

Py_ssize_t llpy_call_for_size(PyObject *obj, const char *method,
                              PyObject *arg) {
    PyObject *res = PyObject_CallMethod(obj, method, "O", arg);
    if (res == NULL)
        return -2;
    if (res == Py_None) {
        Py_DECREF(res);
        return -1;
    }
    Py_ssize_t n = PyLong_AsSsize_t(res);
    Py_DECREF(res);
    if (n == -1 && PyErr_Occurred())
        return -2;
    if (n < 0) {
        PyErr_Format(PyExc_OSError, "%s() returned a negative count", method);
        return -2;
    }
    return n;
}

/* One read of up to n bytes at `at` (or at the current position of a
 * descriptor that cannot seek), without the GIL. */
static Py_ssize_t fd_read_once(int fd, int seekable, uint8_t *buf, size_t n,
                               uint64_t at) {
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    if (seekable)
        got = pread_some(fd, buf, n, at);
    else
#ifdef _WIN32
        got = _read(fd, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
#else
        got = read(fd, buf, n);
#endif
    Py_END_ALLOW_THREADS
    return got;
}

Py_ssize_t llpy_fd_read_full(int fd, int seekable, uint8_t *buf, size_t n,
                             uint64_t at) {
    size_t total = 0;
    while (total < n) {
        Py_ssize_t got =
            fd_read_once(fd, seekable, buf + total, n - total, at + total);
        if (got < 0 && errno == EINTR) {
            if (PyErr_CheckSignals() < 0)
                return -1;
            continue;
        }
        if (got < 0) {
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        if (got == 0)
            break;
        total += (size_t)got;
    }
    return (Py_ssize_t)total;
}

/* A str naming a URL: a scheme (a letter, then letters, digits, '+', '-'
 * or '.') followed by "://". Windows drive letters ("C:\\") are no URL. */
static int str_is_url(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ_CHAR(s, i);
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!(alpha || (i > 0 && ((c >= '0' && c <= '9') || c == '+' ||
                                  c == '-' || c == '.'))))
            break;
        i++;
    }
    return i > 0 && i + 3 <= n && PyUnicode_READ_CHAR(s, i) == ':' &&
           PyUnicode_READ_CHAR(s, i + 1) == '/' &&
           PyUnicode_READ_CHAR(s, i + 2) == '/';
}

int llpy_is_url(PyObject *obj) {
    if (PyUnicode_Check(obj))
        return str_is_url(obj);
    if (!PyObject_HasAttrString((PyObject *)Py_TYPE(obj), "__fspath__"))
        return 0;
    PyObject *s = PyOS_FSPath(obj);
    if (s == NULL)
        return -1;
    int rc = PyUnicode_Check(s) ? str_is_url(s) : 0;
    Py_DECREF(s);
    return rc;
}

/* leveldb_log._storage.open_url(url, mode, storage_options): imported only
 * here, so that plain paths never import it (nor fsspec). */
PyObject *llpy_open_url(PyObject *url, const char *mode,
                        PyObject *storage_options) {
    PyObject *mod = PyImport_ImportModule("leveldb_log._storage");
    if (mod == NULL)
        return NULL;
    PyObject *opened =
        PyObject_CallMethod(mod, "open_url", "OsO", url, mode,
                            storage_options ? storage_options : Py_None);
    Py_DECREF(mod);
    return opened;
}
