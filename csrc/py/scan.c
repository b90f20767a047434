/*
 * scan.c - _core._scan_block: the regions of one block of a log, by the
 * reader's own rules (llog_region_at_dialect, llog_checksum_ok_dialect),
 * in any dialect, for leveldb_log.scan. Regions and kinds are scan.py's
 * (docs/api.md):
 *
 *   (position in block, kind, type or None, length, checksum_ok or None,
 *    reason or None, header size, log number or None)
 */
#include "module.h"

/* A record's header, for its region: its size, and its log number (the
 * header's 32 bits: int64_t, since a long has only 32 bits on Windows). */
typedef struct region_header {
    size_t size;
    int64_t log_number; /* < 0: none */
} region_header;

static const region_header NO_HEADER = {LLOG_HEADER_SIZE, -1};

/* Appends one region; type < 0 and ok < 0 stand for None. */
static int add_region(PyObject *list, size_t pos, const char *kind, long type,
                      size_t length, int ok, const char *reason,
                      region_header rh) {
    PyObject *type_obj = type < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(type);
    PyObject *ok_obj = ok < 0 ? Py_NewRef(Py_None) : PyBool_FromLong(ok);
    PyObject *number = rh.log_number < 0
                           ? Py_NewRef(Py_None)
                           : PyLong_FromLongLong((long long)rh.log_number);
    PyObject *region = NULL;
    if (type_obj != NULL && ok_obj != NULL && number != NULL)
        region = Py_BuildValue("(nsNnNznN)", (Py_ssize_t)pos, kind, type_obj,
                               (Py_ssize_t)length, ok_obj, reason,
                               (Py_ssize_t)rh.size, number);
    else {
        Py_XDECREF(type_obj);
        Py_XDECREF(ok_obj);
        Py_XDECREF(number);
    }
    if (region == NULL)
        return -1;
    int rc = PyList_Append(list, region);
    Py_DECREF(region);
    return rc;
}

/* The regions of the `size` bytes at b into list; 0, or -1 on error. */
static int scan(PyObject *list, const uint8_t *b, size_t size, int final,
                int verify, llog_dialect d) {
    size_t p = 0;
    while (p < size) {
        size_t left = size - p;
        llog_header h;
        switch (llog_region_at_dialect(d, b + p, left, final, &h)) {
        case LLOG_REGION_TRAILER:
            return add_region(list, p, "trailer", -1, left, -1, NULL,
                              NO_HEADER);
        case LLOG_REGION_TRUNCATED: /* a type when a whole header is there */
            if (left < LLOG_HEADER_SIZE)
                return add_region(list, p, "truncated", -1, left, -1, NULL,
                                  NO_HEADER);
            return add_region(list, p, "truncated", (long)h.type, left, -1,
                              llog_torn_implausible(d, &h, p)
                                  ? LLOG_REASON_IMPLAUSIBLE_TAIL
                                  : NULL,
                              NO_HEADER);
        case LLOG_REGION_BAD_LENGTH:
            return add_region(list, p, "garbage", (long)h.type, left, -1,
                              LLOG_REASON_BAD_LENGTH, NO_HEADER);
        case LLOG_REGION_ZERO:
            return add_region(list, p, "zero", 0, left, -1, NULL, NO_HEADER);
        case LLOG_REGION_RECORD:
            break;
        }
        const uint8_t *payload = b + p + h.header_size;
        if (d == LLOG_DIALECT_PEBBLE && h.type == 5 && h.length == 0 &&
            h.masked_crc == 0) /* Pebble's end of a closed log */
            return add_region(list, p, "end", 5, size - p, -1, NULL,
                              NO_HEADER);
        int ok = verify ? llog_checksum_ok_dialect(b + p, &h, payload) : -1;
        region_header rh = {h.header_size, h.header_size > LLOG_HEADER_SIZE
                                               ? (int64_t)h.log_number
                                               : -1};
        if (add_region(list, p, "record", (long)h.type, h.length, ok, NULL,
                       rh) < 0)
            return -1;
        p += h.header_size + h.length;
        if (ok == 0) {
            /* The length may be what is damaged: the reader drops the rest
             * of the block. */
            return p < size ? add_region(list, p, "garbage", -1, size - p, -1,
                                         LLOG_REASON_CHECKSUM, NO_HEADER)
                            : 0;
        }
    }
    return 0;
}

PyObject *llpy_scan_block(PyObject *module, PyObject *const *args,
                          Py_ssize_t nargs) {
    (void)module;
    if (nargs != 3 && nargs != 4) {
        PyErr_Format(PyExc_TypeError,
                     "_scan_block() takes 3 or 4 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    llog_reader_options opt = {0};
    if (nargs == 4 && llpy_dialect_options(args[3], NULL, NULL, &opt) < 0)
        return NULL;
    int final = PyObject_IsTrue(args[1]);
    int verify = final < 0 ? -1 : PyObject_IsTrue(args[2]);
    if (verify < 0)
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "a bytes-like object is required, not '%.100s'",
                         Py_TYPE(args[0])->tp_name);
        }
        return NULL;
    }
    PyObject *list = NULL;
    if (view.len > LLOG_BLOCK_SIZE) {
        PyErr_Format(PyExc_ValueError,
                     "a block holds at most %d bytes, not %zd",
                     LLOG_BLOCK_SIZE, view.len);
    } else {
        list = PyList_New(0);
        if (list != NULL && scan(list, view.buf, (size_t)view.len, final,
                                 verify, opt.dialect) < 0)
            Py_CLEAR(list);
    }
    PyBuffer_Release(&view);
    return list;
}
