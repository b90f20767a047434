/*
 * writer_append.c - what mode "a" does on open: ask the core's append module
 * (csrc/core/log_resume.h, which holds the policy) where the log resumes,
 * reading the spans it asks for, then cut back what lies after that point;
 * or refuse, leaving the file as it was. Also _append_point, the same
 * decision without the cut, for the command line.
 */
#include "writer_append.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "llpy_io.h"
#include "log_options.h"
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

#include "log_resume.h"

/* Feeds the append module from fd; 0 and *out, or -1 with an exception. */
static int decide(int fd, uint64_t size, const llog_reader_options *dialect,
                  llog_resume_result *out) {
    llog_resume *t = llog_resume_new(
        size, dialect->dialect, dialect->has_log_number, dialect->log_number);
    if (t == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t at;
    size_t len;
    uint8_t *into;
    int rc = 0;
    while (rc == 0 && llog_resume_want(t, &at, &len, &into)) {
        Py_ssize_t got = llpy_fd_read_full(fd, 1, into, len, at);
        if (got < 0)
            rc = -1;
        else
            llog_resume_got(t, (size_t)got);
    }
    llog_status status = rc == 0 ? llog_resume_decision(t, out) : LLOG_OK;
    llog_resume_free(t);
    if (status != LLOG_OK) {
        llpy_raise_status(status);
        rc = -1;
    }
    return rc;
}

/* The decision for the log open at fd, `size` bytes long; a refusal raises
 * CorruptionError naming `name`. */
static int resume_point(llpy_state *st, int fd, PyObject *name, uint64_t size,
                        const llog_reader_options *dialect,
                        llog_resume_result *out) {
    if (decide(fd, size, dialect, out) < 0)
        return -1;
    if (out->refusal == NULL)
        return 0;
    llpy_raise_not_a_log(st, name, out->refused_at, size, out->refusal);
    return -1;
}

/* Sets the no_log attribute of the CorruptionError being raised: the file
 * holds no valid record at all (verify says "not a log"), rather than
 * ending in bytes no crash leaves. */
static void mark_no_log(int no_log) {
    PyObject *exc = PyErr_GetRaisedException();
    if (exc != NULL && PyObject_SetAttrString(
                           exc, "no_log", no_log ? Py_True : Py_False) < 0) {
        Py_DECREF(exc);
        return;
    }
    PyErr_SetRaisedException(exc);
}

static int64_t file_size(int fd) {
#ifdef _WIN32
    return _lseeki64(fd, 0, SEEK_END);
#else
    return (int64_t)lseek(fd, 0, SEEK_END);
#endif
}

/* Truncates the log to `cut` and seeks there. */
static int cut_back(int fd, PyObject *name, uint64_t cut) {
    int rc;
#ifdef _WIN32
    rc = _chsize_s(fd, (__int64)cut);
#else
    rc = ftruncate(fd, (off_t)cut);
#endif
    if (rc != 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
        return -1;
    }
#ifdef _WIN32
    _lseeki64(fd, (__int64)cut, SEEK_SET);
#else
    lseek(fd, (off_t)cut, SEEK_SET);
#endif
    return 0;
}

int llpy_append_open(llpy_state *st, int fd, PyObject *name,
                     const llog_reader_options *dialect, uint64_t *offset,
                     int *fresh_block) {
    int64_t size = file_size(fd);
    if (size < 0) { /* not seekable (a pipe, a terminal): nothing to resume */
        size = 0;
        errno = 0;
    }
    llog_resume_result r = {.cut = (uint64_t)size};
    if (size > 0 &&
        resume_point(st, fd, name, (uint64_t)size, dialect, &r) < 0)
        return -1;
    if (r.cut < (uint64_t)size && cut_back(fd, name, r.cut) < 0)
        return -1;
    *offset = r.cut;
    *fresh_block = r.fresh_block;
    return 0;
}

/* (damaged_at, intact_at) when the decision found a torn-looking record
 * before intact ones, else None. */
static PyObject *damage_of(const llog_resume_result *r) {
    if (r->intact_at == 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(KK)", (unsigned long long)r->damaged_at,
                         (unsigned long long)r->intact_at);
}

PyObject *llpy_append_point(PyObject *module, PyObject *args,
                            PyObject *kwargs) {
    static char *kwlist[] = LLPY_KWLIST__append_point;
    PyObject *path, *dialect = NULL, *log_number = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs,
                                     LLPY_FORMAT__append_point("O", "O", "O"),
                                     kwlist, &path, &dialect, &log_number))
        return NULL;
    if (dialect == NULL) { /* the rule differs by dialect: always say which */
        PyErr_SetString(PyExc_TypeError, "_append_point() missing required "
                                         "keyword argument 'dialect'");
        return NULL;
    }
    llog_reader_options opt = {0};
    if (llpy_dialect_options(dialect, log_number, path, &opt) < 0)
        return NULL;
    llpy_state *st = PyModule_GetState(module);
    int fd = llpy_open_path(st, path, O_RDONLY);
    if (fd < 0)
        return NULL;
    int64_t size = file_size(fd);
    llog_resume_result r = {0};
    int rc = size < 0 ? -1 : 0;
    if (rc < 0)
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
    else if (size > 0)
        rc = resume_point(st, fd, path, (uint64_t)size, &opt, &r);
    llpy_close_fd(fd);
    if (rc < 0 && r.refusal != NULL)
        mark_no_log(r.no_log);
    if (rc < 0)
        return NULL;
    PyObject *damage = damage_of(&r);
    if (damage == NULL)
        return NULL;
    return Py_BuildValue("(KOKN)", (unsigned long long)r.cut,
                         r.fresh_block ? Py_True : Py_False,
                         (unsigned long long)r.clean_end, damage);
}
