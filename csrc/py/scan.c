/*
 * scan.c - the core's header rules for the package's Python modules:
 * _core._scan_block, the regions of one block of a log by the reader's own
 * rules (llog_header_region, llog_checksum_ok_dialect,
 * llog_header_pebble_trailer), in any dialect, for leveldb_log.scan; and
 * _core._detect_dialect (llog_detect_dialect) for leveldb_log._detect.
 * Regions and kinds are scan.py's (docs/api.md):
 *
 *   (position in block, kind, type or None, length, checksum_ok or None,
 *    reason or None, header size, log number or None)
 */
#include "log_detect.h"
#include "log_options.h"
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

/* What a scan knows of the log besides the block: its dialect, and its
 * number once a recyclable record has said it (or the caller has). */
typedef struct scan_log {
    llog_dialect dialect;
    int has_log_number;
    uint64_t log_number;
} scan_log;

/* The region of a torn tail at p (`left` bytes), *h decoded when whole. */
static int add_torn(PyObject *list, size_t p, size_t left,
                    const llog_header *h, llog_dialect d) {
    if (left < LLOG_HEADER_SIZE)
        return add_region(list, p, "truncated", -1, left, -1, NULL, NO_HEADER);
    return add_region(
        list, p, "truncated", (long)h->type, left, -1,
        llog_torn_implausible(d, h, p) ? LLOG_REASON_IMPLAUSIBLE_TAIL : NULL,
        NO_HEADER);
}

/* The regions of the `size` bytes at b into list; 0, or -1 on error. */
static int scan(PyObject *list, const uint8_t *b, size_t size, int final,
                int verify, scan_log *log) {
    const uint8_t *types = llog_header_types(log->dialect);
    size_t p = 0;
    while (p < size) {
        size_t left = size - p;
        llog_header h = {0, 0, 0, LLOG_HEADER_SIZE, 0, 0};
        switch (llog_header_region(types, b + p, left, final, &h)) {
        case LLOG_REGION_TRAILER:
            return add_region(list, p, "trailer", -1, left, -1, NULL,
                              NO_HEADER);
        case LLOG_REGION_TRUNCATED: /* a type when a whole header is there */
            return add_torn(list, p, left, &h, log->dialect);
        case LLOG_REGION_BAD_LENGTH:
            return add_region(list, p, "garbage", (long)h.type, left, -1,
                              LLOG_REASON_BAD_LENGTH, NO_HEADER);
        case LLOG_REGION_ZERO:
            return add_region(list, p, "zero", 0, left, -1, NULL, NO_HEADER);
        case LLOG_REGION_RECORD:
            break;
        }
        if (llog_header_pebble_trailer(log->dialect, &h, log->has_log_number,
                                       log->log_number))
            return add_region(list, p, "end", (long)h.type, size - p, -1, NULL,
                              NO_HEADER);
        if (h.header_size > LLOG_HEADER_SIZE && !log->has_log_number) {
            log->has_log_number = 1; /* as the reader learns it */
            log->log_number = h.log_number;
        }
        const uint8_t *payload = b + p + h.header_size;
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

/* view of a bytes-like object; 0, or -1 with TypeError. */
static int get_bytes(PyObject *obj, Py_buffer *view) {
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) == 0)
        return 0;
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "a bytes-like object is required, not '%.100s'",
                     Py_TYPE(obj)->tp_name);
    }
    return -1;
}

PyObject *llpy_scan_block(PyObject *module, PyObject *const *args,
                          Py_ssize_t nargs) {
    (void)module;
    if (nargs < 3 || nargs > 5) {
        PyErr_Format(PyExc_TypeError,
                     "_scan_block() takes 3 to 5 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    llog_reader_options opt = {0};
    if (nargs >= 4 &&
        llpy_dialect_options(args[3], nargs == 5 ? args[4] : NULL, NULL,
                             &opt) < 0)
        return NULL;
    int final = PyObject_IsTrue(args[1]);
    int verify = final < 0 ? -1 : PyObject_IsTrue(args[2]);
    Py_buffer view;
    if (verify < 0 || get_bytes(args[0], &view) < 0)
        return NULL;
    PyObject *list = NULL;
    scan_log log = {opt.dialect, opt.has_log_number, opt.log_number};
    if (view.len > LLOG_BLOCK_SIZE) {
        PyErr_Format(PyExc_ValueError,
                     "a block holds at most %d bytes, not %zd",
                     LLOG_BLOCK_SIZE, view.len);
    } else {
        list = PyList_New(0);
        if (list != NULL &&
            scan(list, view.buf, (size_t)view.len, final, verify, &log) < 0)
            Py_CLEAR(list);
    }
    PyBuffer_Release(&view);
    return list;
}

PyObject *llpy_detect_dialect(PyObject *module, PyObject *const *args,
                              Py_ssize_t nargs) {
    (void)module;
    if (nargs != 1 && nargs != 2) {
        PyErr_Format(PyExc_TypeError,
                     "_detect_dialect() takes 1 or 2 arguments (%zd given)",
                     nargs);
        return NULL;
    }
    uint64_t number = 0;
    int has_number = nargs == 2 && args[1] != Py_None;
    if (has_number && llpy_parse_offset(args[1], "log_number", &number) < 0)
        return NULL;
    Py_buffer view;
    if (get_bytes(args[0], &view) < 0)
        return NULL;
    llog_detection d =
        llog_detect_dialect(view.buf, (size_t)view.len, has_number, number);
    PyBuffer_Release(&view);
    return Py_BuildValue("(zs)", llog_dialect_name(d.dialect), d.reason);
}
