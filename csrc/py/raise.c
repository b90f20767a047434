/*
 * raise.c - the one place that raises: core status codes
 * (llpy_raise_status) and damaged logs (llpy_raise_corruption,
 * llpy_raise_not_a_log) become Python exceptions here and nowhere else, and
 * warnings go out through warnings.warn (llpy_warn).
 */
#include "module.h"

void llpy_raise_status(llog_status status) {
    PyObject *exc =
        status == LLOG_ERR_NOMEM ? PyExc_MemoryError : PyExc_OverflowError;
    PyErr_SetString(exc, llog_status_text(status));
}

/* Raises CorruptionError or TruncatedRecordError from a Corruption tuple. */
void llpy_raise_corruption(llpy_state *st, int truncated, PyObject *c) {
    PyObject *cls = truncated ? st->truncated_error : st->corruption_error;
    PyObject *exc = PyObject_Call(cls, c, NULL); /* Corruption is a tuple */
    if (exc != NULL) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
}

void llpy_raise_not_a_log(llpy_state *st, PyObject *name, uint64_t at,
                          uint64_t size, const char *why) {
    PyObject *message = PyUnicode_FromFormat(
        "%R does not end like a log: %s at offset %llu; it was left as it was",
        name, why, (unsigned long long)at);
    PyObject *kwargs =
        message ? Py_BuildValue("{sO}", "message", message) : NULL;
    PyObject *args = Py_BuildValue("(KKs)", (unsigned long long)at,
                                   (unsigned long long)(size - at), why);
    PyObject *exc = kwargs && args
                        ? PyObject_Call(st->corruption_error, args, kwargs)
                        : NULL;
    if (exc != NULL)
        PyErr_SetObject(st->corruption_error, exc);
    Py_XDECREF(exc);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    Py_XDECREF(message);
}

PyObject *llpy_warn(PyObject *warning) {
    PyObject *warnings = PyImport_ImportModule("warnings");
    if (warnings == NULL)
        return NULL;
    /* stacklevel 1: the Python line that asked for the next record. */
    PyObject *r =
        PyObject_CallMethod(warnings, "warn", "OOi", warning, Py_None, 1);
    Py_DECREF(warnings);
    return r;
}
