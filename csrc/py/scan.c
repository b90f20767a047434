/*
 * scan.c - _core._scan_block: the regions of one block of a log, by the
 * core's walker (log_regions.h), in any dialect, for leveldb_log.scan.
 * Regions and kinds are _scan.py's (docs/api.md):
 *
 *   (position in block, kind, type or None, length, checksum_ok or None,
 *    reason or None, header size, log number or None)
 *
 * with the log's number after the block (given, or learnt by the walker),
 * to be passed with the next block.
 */
#include "args.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "log_options.h"
#include "log_regions.h"
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

/* The kinds' names (_scan.py's), by llog_region_kind; another log's record
 * is listed as a record, with its log number. */
static const char *const KIND_NAMES[] = {
    [LLOG_KIND_RECORD] = "record",   [LLOG_KIND_OTHER_LOG] = "record",
    [LLOG_KIND_TRAILER] = "trailer", [LLOG_KIND_ZERO] = "zero",
    [LLOG_KIND_GARBAGE] = "garbage", [LLOG_KIND_TORN] = "truncated",
    [LLOG_KIND_END] = "end"};

/* Appends the walker's region to list; 0, or -1 on error. */
static int add(PyObject *list, const llog_region_info *r) {
    int record = r->kind == LLOG_KIND_RECORD || r->kind == LLOG_KIND_OTHER_LOG;
    region_header rh = NO_HEADER;
    if (record)
        rh.size = r->h.header_size;
    if (record && r->h.header_size > LLOG_HEADER_SIZE)
        rh.log_number = (int64_t)r->h.log_number;
    return add_region(
        list, r->at, KIND_NAMES[r->kind], r->has_header ? (long)r->h.type : -1,
        record ? r->h.length : r->size, r->checksum, r->reason, rh);
}

/* The regions of the `size` bytes at b into list (the walker w walks
 * them); 0, or -1 on error. */
static int scan(PyObject *list, llog_regions *w, const uint8_t *b, size_t size,
                int final) {
    llog_region_info r;
    llog_regions_feed(w, b, size, final);
    while (llog_regions_next(w, &r))
        if (add(list, &r) < 0)
            return -1;
    return 0;
}

PyObject *llpy_scan_block(PyObject *module, PyObject *const *args,
                          Py_ssize_t nargs) {
    (void)module;
    if (llpy_args_count(LLPY_SIG__scan_block, nargs) < 0)
        return NULL;
    llog_reader_options opt = {0};
    if (nargs >= 4 &&
        llpy_dialect_options(args[3], nargs == 5 ? args[4] : NULL, NULL,
                             &opt) < 0)
        return NULL;
    int final = PyObject_IsTrue(args[1]);
    int verify = final < 0 ? -1 : PyObject_IsTrue(args[2]);
    Py_buffer view;
    if (verify < 0 || llpy_get_bytes(args[0], &view) < 0)
        return NULL;
    PyObject *list = NULL;
    llog_regions w;
    llog_regions_init(&w, opt.dialect, verify, opt.has_log_number,
                      opt.log_number);
    if (view.len > LLOG_BLOCK_SIZE) {
        PyErr_Format(PyExc_ValueError,
                     "a block holds at most %d bytes, not %zd",
                     LLOG_BLOCK_SIZE, view.len);
    } else {
        list = PyList_New(0);
        if (list != NULL &&
            scan(list, &w, view.buf, (size_t)view.len, final) < 0)
            Py_CLEAR(list);
    }
    PyBuffer_Release(&view);
    if (list == NULL)
        return NULL;
    if (!w.has_log_number)
        return Py_BuildValue("(NO)", list, Py_None);
    return Py_BuildValue("(NK)", list, (unsigned long long)w.log_number);
}
