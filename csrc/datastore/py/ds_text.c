/*
 * ds_text.c - what every decoding file of the binding needs from a field:
 * its text, which must be UTF-8, and the ValueError that says an
 * EntityProto is bad. Below ds_keys.c and ds_values.c, which both use it.
 */
#include "ds_binding.h"

PyObject *llds_py_fail(int status) {
    PyErr_Format(PyExc_ValueError, "not an EntityProto: %s",
                 llds_error_text(status));
    return NULL;
}

PyObject *llds_py_text(llds_span s) {
    PyObject *r =
        PyUnicode_DecodeUTF8((const char *)s.p, (Py_ssize_t)s.n, NULL);
    if (r == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError,
                        "not an EntityProto: a name or key that is not UTF-8");
    }
    return r;
}
