/*
 * writer_policy.c - the durability options of a Writer on a path besides
 * group commit (writer_sync.c): sync=, the default of every write;
 * bytes_per_sync=, write-back started every so many bytes so that a sync
 * never finds a huge dirty range; preallocate=, space reserved ahead of the
 * log without changing its size; and the directory of a newly created log,
 * synced with the first flush so that the file's name survives a power loss.
 */
#include "writer_policy.h"

#include "llpy_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

struct llpy_policy {
    uint64_t bytes_per_sync; /* 0: off */
    uint64_t range_start;    /* write-back was started up to here */
    uint64_t range_syncs;    /* write-backs started, for tests */
    uint64_t preallocate;    /* 0: off */
    uint64_t prealloc_end;   /* space is reserved up to here */
};

llpy_policy *llpy_policy_new(void) {
    llpy_policy *p = PyMem_Calloc(1, sizeof *p);
    if (p == NULL)
        PyErr_NoMemory();
    return p;
}

void llpy_policy_free(llpy_policy *p) { PyMem_Free(p); }

uint64_t llpy_policy_bytes_per_sync(const llpy_policy *p) {
    return p->bytes_per_sync;
}

uint64_t llpy_policy_preallocate(const llpy_policy *p) {
    return p->preallocate;
}

uint64_t llpy_policy_range_syncs(const llpy_policy *p) {
    return p->range_syncs;
}

/* A size option: None or a non-negative int (not a bool); 0 is off. */
static int parse_size(PyObject *obj, const char *what, uint64_t *out) {
    *out = 0;
    if (obj == NULL || obj == Py_None)
        return 0;
    if (PyBool_Check(obj) || !PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    return llpy_parse_offset(obj, what, out);
}

int llpy_policy_options(llpy_policy *p, PyObject *target, PyObject *sync,
                        PyObject *bytes_per_sync, PyObject *preallocate,
                        int *sync_default) {
    if (sync != NULL && !PyBool_Check(sync)) {
        PyErr_Format(PyExc_TypeError, "sync must be a bool, not %.100s",
                     Py_TYPE(sync)->tp_name);
        return -1;
    }
    *sync_default = sync == Py_True;
    if (parse_size(bytes_per_sync, "bytes_per_sync", &p->bytes_per_sync) < 0 ||
        parse_size(preallocate, "preallocate", &p->preallocate) < 0)
        return -1;
    int url = llpy_is_url(target);
    if (url < 0)
        return -1;
    if ((p->bytes_per_sync || p->preallocate) &&
        (url || !llpy_is_path(target))) {
        PyErr_SetString(PyExc_ValueError,
                        "bytes_per_sync and preallocate apply to a path the "
                        "Writer opens, not to a file object or URL");
        return -1;
    }
    return 0;
}

/* Starts writing back [from, to) without waiting (Linux), or syncs. */
static void range_sync(int fd, uint64_t from, uint64_t to) {
#if defined(__linux__)
    sync_file_range(fd, (off_t)from, (off_t)(to - from),
                    SYNC_FILE_RANGE_WRITE);
#elif defined(_WIN32)
    (void)from;
    (void)to;
    _commit(fd);
#else
    (void)from;
    (void)to;
    fsync(fd);
#endif
}

/* Reserves [from, to) of the file without changing its size, where the
 * system can; a file system that cannot just grows as it is written. */
static void reserve(int fd, uint64_t from, uint64_t to) {
#if defined(__linux__)
    (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from));
#elif defined(__APPLE__)
    (void)from;
    fstore_t store = {F_ALLOCATEALL, F_PEOFPOSMODE, 0, (off_t)(to - from), 0};
    (void)fcntl(fd, F_PREALLOCATE, &store);
#else
    (void)fd;
    (void)from;
    (void)to;
#endif
}

void llpy_policy_after_output(llpy_policy *p, int fd, uint64_t at) {
    if (fd < 0)
        return;
    if (p->bytes_per_sync && at - p->range_start >= p->bytes_per_sync) {
        range_sync(fd, p->range_start, at);
        p->range_start = at;
        p->range_syncs++;
    }
    if (p->preallocate && at + p->preallocate / 2 >= p->prealloc_end) {
        uint64_t from = at > p->prealloc_end ? at : p->prealloc_end;
        reserve(fd, from, at + p->preallocate);
        p->prealloc_end = at + p->preallocate;
    }
}

void llpy_policy_start(llpy_policy *p, int fd, uint64_t at) {
    p->range_start = p->prealloc_end = at;
    llpy_policy_after_output(p, fd, at);
}

int llpy_policy_open(llpy_state *st, PyObject *path, int flags, int *created) {
    *created = 1;
    if (flags & O_EXCL)
        return llpy_open_path(st, path, flags | O_CREAT);
    int fd = llpy_open_path(st, path, flags | O_CREAT | O_EXCL);
    if (fd >= 0 || !PyErr_ExceptionMatches(PyExc_FileExistsError))
        return fd;
    PyErr_Clear(); /* it exists: open it as it is, to lock it first */
    *created = 0;
    fd = llpy_open_path(st, path, flags);
    if (fd >= 0 || !PyErr_ExceptionMatches(PyExc_FileNotFoundError))
        return fd;
    PyErr_Clear(); /* a dangling symbolic link, or removed meanwhile */
    *created = 1;
    return llpy_open_path(st, path, flags | O_CREAT);
}

int llpy_policy_open_dir(PyObject *path, int *dir_fd) {
    *dir_fd = -1;
#ifdef _WIN32
    (void)path;
    return 0;
#else
    PyObject *os_path = PyImport_ImportModule("os.path");
    if (os_path == NULL)
        return -1;
    PyObject *full = PyObject_CallMethod(os_path, "abspath", "O", path);
    PyObject *dir =
        full ? PyObject_CallMethod(os_path, "dirname", "O", full) : NULL;
    Py_XDECREF(full);
    Py_DECREF(os_path);
    if (dir == NULL)
        return -1;
    PyObject *bytes = NULL;
    int ok = PyUnicode_FSConverter(dir, &bytes);
    Py_DECREF(dir);
    if (!ok)
        return -1;
    int fd;
    Py_BEGIN_ALLOW_THREADS
    fd = open(PyBytes_AS_STRING(bytes), O_RDONLY | O_CLOEXEC);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    *dir_fd = fd; /* a directory that cannot be opened cannot be synced */
    return 0;
#endif
}

void llpy_policy_release(llpy_policy *p, int fd, int locked) {
#ifdef _WIN32
    (void)p;
    (void)fd;
    (void)locked;
#else
    struct stat info;
    /* Only while the lock keeps other writers out: their records could lie
     * past our fstat. */
    if (fd >= 0 && p->preallocate && locked && fstat(fd, &info) == 0)
        (void)ftruncate(fd, info.st_size);
#endif
}
