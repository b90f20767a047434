/* detect.c - _core._detect_dialect: which dialect wrote a log, told by the
 * core (llog_detect_dialect), for leveldb_log._detect. */
#include "args.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "log_detect.h"
#include "module.h"

PyObject *llpy_detect_dialect(PyObject *module, PyObject *const *args,
                              Py_ssize_t nargs) {
    (void)module;
    if (llpy_args_count(LLPY_SIG__detect_dialect, nargs) < 0)
        return NULL;
    uint64_t number = 0;
    int has_number = nargs == 2 && args[1] != Py_None;
    if (has_number && llpy_parse_offset(args[1], "log_number", &number) < 0)
        return NULL;
    Py_buffer view;
    if (llpy_get_bytes(args[0], &view) < 0)
        return NULL;
    llog_detection d =
        llog_detect_dialect(view.buf, (size_t)view.len, has_number, number);
    PyBuffer_Release(&view);
    return Py_BuildValue("(zs)", llog_dialect_name(d.dialect), d.reason);
}
