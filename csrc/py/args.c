/*
 * args.c - the hand-written fast-call parsers' checks, by the parameter
 * lists generated from the stub (args.h), worded as CPython's own; and the
 * conversions of single arguments every file shares (module.h): offsets,
 * flags, bytes-like objects.
 */
#include "args.h"

int llpy_args_count(const llpy_sig *sig, Py_ssize_t nargs) {
    if (nargs >= sig->required && nargs <= sig->positional)
        return 0;
    if (sig->required == sig->positional)
        PyErr_Format(PyExc_TypeError, "%s() takes %d argument%s (%zd given)",
                     sig->name, sig->positional,
                     sig->positional == 1 ? "" : "s", nargs);
    else
        PyErr_Format(PyExc_TypeError,
                     "%s() takes from %d to %d positional arguments "
                     "(%zd given)",
                     sig->name, sig->required, sig->positional, nargs);
    return -1;
}

/* The parameter a keyword names, or -1 with TypeError. */
static int keyword_index(const llpy_sig *sig, PyObject *name) {
    for (int i = 0; i < sig->count; i++) {
        if (sig->keywords[i][0] != '\0' &&
            PyUnicode_CompareWithASCIIString(name, sig->keywords[i]) == 0)
            return i;
    }
    /* A positional-only parameter has no name to give it by. */
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R",
                 sig->name, name);
    return -1;
}

int llpy_args_fast(const llpy_sig *sig, PyObject *const *args,
                   Py_ssize_t nargs, PyObject *kwnames, PyObject **const *out,
                   int nout) {
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nout != sig->count) { /* a parser shared by two defs that differ */
        PyErr_Format(PyExc_SystemError,
                     "%s(): the parser reads %d parameters, the stub has %d",
                     sig->name, nout, sig->count);
        return -1;
    }
    if (nargs > sig->positional) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes at most %d positional argument%s (%zd given)",
                     sig->name, sig->positional,
                     sig->positional == 1 ? "" : "s", nargs);
        return -1;
    }
    for (int i = 0; i < sig->count; i++)
        *out[i] = i < nargs ? args[i] : NULL;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int i = keyword_index(sig, name);
        if (i < 0)
            return -1;
        if (*out[i] != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got multiple values for argument %R", sig->name,
                         name);
            return -1;
        }
        *out[i] = args[nargs + k];
    }
    for (int i = 0; i < sig->required; i++) {
        if (*out[i] != NULL)
            continue;
        if (i < sig->posonly)
            PyErr_Format(PyExc_TypeError,
                         "%s() takes at least %d positional argument%s "
                         "(%zd given)",
                         sig->name, sig->posonly, sig->posonly == 1 ? "" : "s",
                         nargs);
        else
            PyErr_Format(PyExc_TypeError,
                         "%s() missing required argument '%s' (pos %d)",
                         sig->name, sig->keywords[i], i + 1);
        return -1;
    }
    return 0;
}

/* ---- single arguments (module.h) ------------------------------------- */

/* Converts a non-negative Python int to uint64_t. */
int llpy_parse_offset(PyObject *obj, const char *what, uint64_t *out) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyObject *zero = PyLong_FromLong(0);
        int negative = zero ? PyObject_RichCompareBool(obj, zero, Py_LT) : -1;
        Py_XDECREF(zero);
        if (negative >= 0) { /* negative, or over 2**64 - 1 */
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError,
                         negative ? "%s must not be negative"
                                  : "%s is too large (at most 2**64 - 1)",
                         what);
        }
        return -1;
    }
    *out = v;
    return 0;
}

int llpy_parse_flag(PyObject *obj, const char *what, int *out) {
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be True or False, not %.100s",
                     what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = obj == Py_True;
    return 0;
}

int llpy_get_bytes_for(PyObject *obj, Py_buffer *view, const char *fmt) {
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) == 0)
        return 0;
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, fmt, Py_TYPE(obj)->tp_name);
    }
    return -1;
}

int llpy_get_bytes(PyObject *obj, Py_buffer *view) {
    return llpy_get_bytes_for(obj, view,
                              "a bytes-like object is required, not '%.100s'");
}
