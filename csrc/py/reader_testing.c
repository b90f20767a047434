/*
 * reader_testing.c - the Reader's test hooks, kept off the Reader type:
 * private functions of the module (_core._test_*, handed out by
 * leveldb_log._testing) that read what only tests and benchmarks ask, through
 * reader.h like any other file.
 */
#include "module.h"
#include "reader.h"

/* The reader argument, checked (NULL with TypeError for anything else). */
static llpy_reader *testing_reader(PyObject *module, PyObject *arg,
                                   const char *fn) {
    llpy_state *st = PyModule_GetState(module);
    if (!PyObject_TypeCheck(arg, st->reader_type)) {
        PyErr_Format(PyExc_TypeError, "%s() takes a Reader, not %.100s", fn,
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    return (llpy_reader *)arg;
}

/* One of the counters of blocks read in place (bounced: of those, the ones
 * read through the block buffer). */
static PyObject *testing_blocks(PyObject *module, PyObject *arg,
                                const char *fn, int bounced) {
    llpy_reader *r = testing_reader(module, arg, fn);
    llpy_reader_blocks counts;
    if (r == NULL || llpy_reader_blocks_of(r, &counts) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(bounced ? counts.bounced
                                               : counts.in_place);
}

PyObject *llpy_test_blocks_in_place(PyObject *module, PyObject *arg) {
    return testing_blocks(module, arg, "_test_blocks_in_place", 0);
}

PyObject *llpy_test_blocks_bounced(PyObject *module, PyObject *arg) {
    return testing_blocks(module, arg, "_test_blocks_bounced", 1);
}
