/*
 * writer_testing.c - the Writer's test hooks, kept off the type: private
 * module functions _core._test_<name>, which the test suite calls as
 * leveldb_log._testing.<name>(writer, ...). They reach the Writer only
 * through writer.h.
 */
#include "args.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "writer.h"

/* The Writer given, or NULL with TypeError. */
static llpy_writer *writer_arg(PyObject *module, PyObject *obj) {
    llpy_state *st = PyModule_GetState(module);
    if (PyObject_TypeCheck(obj, st->writer_type))
        return (llpy_writer *)obj;
    PyErr_Format(PyExc_TypeError, "a Writer is needed, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
}

/* One of the Writer's counters, read under its lock. */
static PyObject *counter(PyObject *module, PyObject *obj,
                         llpy_writer_counter which) {
    llpy_writer *w = writer_arg(module, obj);
    uint64_t n;
    if (w == NULL || llpy_writer_count(w, which, &n) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(n);
}

static PyObject *test_sync_waiters(PyObject *module, PyObject *obj) {
    return counter(module, obj, LLPY_COUNT_SYNC_WAITERS);
}

static PyObject *test_sync_flushes(PyObject *module, PyObject *obj) {
    return counter(module, obj, LLPY_COUNT_SYNC_FLUSHES);
}

static PyObject *test_range_syncs(PyObject *module, PyObject *obj) {
    return counter(module, obj, LLPY_COUNT_RANGE_SYNCS);
}

static PyObject *test_writer_bounced(PyObject *module, PyObject *obj) {
    return counter(module, obj, LLPY_COUNT_BOUNCED);
}

static PyObject *test_before_sync(PyObject *module, PyObject *const *args,
                                  Py_ssize_t nargs) {
    if (llpy_args_count(LLPY_SIG__test_before_sync, nargs) < 0)
        return NULL;
    llpy_writer *w = writer_arg(module, args[0]);
    if (w == NULL)
        return NULL;
    if (args[1] != Py_None && !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "the hook must be callable or None");
        return NULL;
    }
    if (llpy_writer_set_before_sync(w, args[1] == Py_None ? NULL : args[1]) <
        0)
        return NULL;
    Py_RETURN_NONE;
}

PyMethodDef llpy_writer_testing_methods[] = {
    {"_test_sync_waiters", test_sync_waiters, METH_O,
     LLPY_DOC__test_sync_waiters},
    {"_test_sync_flushes", test_sync_flushes, METH_O,
     LLPY_DOC__test_sync_flushes},
    {"_test_range_syncs", test_range_syncs, METH_O,
     LLPY_DOC__test_range_syncs},
    {"_test_writer_bounced", test_writer_bounced, METH_O,
     LLPY_DOC__test_writer_bounced},
    {"_test_before_sync", (PyCFunction)(void (*)(void))test_before_sync,
     METH_FASTCALL, LLPY_DOC__test_before_sync},
    {NULL, NULL, 0, NULL}};
