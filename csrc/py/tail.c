/*
 * tail.c - _core._tail_end: where the last complete record of a log open
 * at a descriptor ends, from its last blocks (the core's log_tail.h; this
 * file reads the spans it asks for). For leveldb_log.spark's stream reader.
 */
#include "args.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "llpy_io.h"
#include "log_tail.h"
#include "reader_dialect.h"

/* Feeds the walk from fd; 0 and *end, or -1 with an exception set. */
static int tail_end(int fd, uint64_t size, const llog_reader_options *opt,
                    uint64_t *end) {
    uint8_t *buf = PyMem_Malloc(LLOG_BLOCK_SIZE);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    llog_tail t;
    llog_tail_init(&t, size, opt->dialect, opt->has_log_number,
                   opt->log_number, opt->verify_checksums);
    uint64_t at;
    size_t len;
    int rc = 0;
    while (rc == 0 && llog_tail_want(&t, &at, &len)) {
        Py_ssize_t got = llpy_fd_read_full(fd, 1, buf, len, at);
        if (got < 0)
            rc = -1;
        else
            llog_tail_got(&t, buf, (size_t)got);
    }
    PyMem_Free(buf);
    *end = llog_tail_end(&t);
    return rc;
}

PyObject *llpy_tail_end(PyObject *module, PyObject *const *args,
                        Py_ssize_t nargs) {
    (void)module;
    if (llpy_args_count(LLPY_SIG__tail_end, nargs) < 0)
        return NULL;
    int fd = PyObject_AsFileDescriptor(args[0]);
    if (fd < 0)
        return NULL;
    uint64_t size, end;
    llog_reader_options opt = {0};
    PyObject *number = nargs >= 4 && args[3] != Py_None ? args[3] : NULL;
    PyObject *path = nargs >= 5 && args[4] != Py_None ? args[4] : NULL;
    int verify = 1;
    /* The log number as a Reader of that path takes it: given, else in
     * the file's name, else (log_tail) in its first header. */
    if (llpy_parse_offset(args[1], "size", &size) < 0 ||
        llpy_dialect_options(args[2], number, path, &opt) < 0 ||
        (nargs == 6 &&
         llpy_parse_flag(args[5], "verify_checksums", &verify) < 0))
        return NULL;
    opt.verify_checksums = verify;
    if (tail_end(fd, size, &opt, &end) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong((unsigned long long)end);
}
