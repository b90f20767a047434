/*
 * writer_lock.c - one Writer per file: an exclusive advisory lock on the log
 * a Writer opened, held until it closes. Open-file-description locks on
 * Linux (a second open in the same process conflicts too, and closing
 * another descriptor of the file does not drop it), flock() elsewhere on
 * POSIX, LockFileEx on Windows. Readers never lock.
 */
#include "writer_lock.h"
#include "args.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "writer.h"

#include <errno.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#endif

#ifdef _WIN32
/* Windows locks are mandatory for the bytes they cover: the lock covers one
 * byte far past any log, so that readers still read every byte. */
#define LOCK_AT_LOW 0xFFFFFFFEu
#define LOCK_AT_HIGH 0x7FFFFFFFu

static int lock_try(int fd) {
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    OVERLAPPED at = {0};
    at.Offset = LOCK_AT_LOW;
    at.OffsetHigh = LOCK_AT_HIGH;
    if (LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0,
                   1, 0, &at))
        return 0;
    DWORD e = GetLastError();
    errno = e == ERROR_LOCK_VIOLATION || e == ERROR_IO_PENDING ? EAGAIN : EIO;
    return -1;
}

void llpy_file_unlock(int fd) {
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    OVERLAPPED at = {0};
    at.Offset = LOCK_AT_LOW;
    at.OffsetHigh = LOCK_AT_HIGH;
    UnlockFileEx(h, 0, 1, 0, &at);
}
#else
static int lock_try(int fd) {
#ifdef F_OFD_SETLK
    struct flock lk = {0};
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file */
    if (fcntl(fd, F_OFD_SETLK, &lk) == 0)
        return 0;
    if (errno == EACCES)
        errno = EAGAIN;
    if (errno != EINVAL)
        return -1;
        /* A kernel without OFD locks: flock, as on the other systems. */
#endif
    return flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : -1;
}

void llpy_file_unlock(int fd) {
    (void)fd; /* closing the descriptor drops the lock */
}
#endif

static int lock_busy(int e) { return e == EAGAIN || e == EWOULDBLOCK; }

/* LogLockedError from leveldb_log._filelock, which looks for the holder. */
static void raise_locked(llpy_state *st, int fd, PyObject *name) {
    struct stat info;
    unsigned long long dev = 0, ino = 0;
    if (fstat(fd, &info) == 0) {
        dev = (unsigned long long)info.st_dev;
        ino = (unsigned long long)info.st_ino;
    }
    PyObject *exc = PyObject_CallFunction(st->locked_error, "OiKK", name,
                                          EAGAIN, dev, ino);
    if (exc != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
}

#ifndef S_ISREG
#define S_ISREG(m) (((m)&S_IFMT) == S_IFREG)
#endif

int llpy_file_lock(llpy_state *st, int fd, PyObject *name) {
    struct stat info;
    /* Devices and FIFOs are written in place by anyone: no lock. */
    if (fstat(fd, &info) == 0 && !S_ISREG(info.st_mode))
        return 0;
    int rc, e;
    Py_BEGIN_ALLOW_THREADS
    rc = lock_try(fd);
    e = errno;
    Py_END_ALLOW_THREADS
    if (rc == 0)
        return 1;
    if (lock_busy(e))
        raise_locked(st, fd, name);
    else {
        errno = e;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
    }
    return -1;
}

PyObject *llpy_lock_fd(PyObject *module, PyObject *const *args,
                       Py_ssize_t nargs) {
    if (llpy_args_count(LLPY_SIG__lock_fd, nargs) < 0)
        return NULL;
    long fd = PyLong_AsLong(args[0]);
    if (fd == -1 && PyErr_Occurred())
        return NULL;
    if (fd < 0 || fd > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "_lock_fd: not a descriptor");
        return NULL;
    }
    if (llpy_file_lock(PyModule_GetState(module), (int)fd, args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}
