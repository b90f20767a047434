/*
 * reader_pickle.c - a Reader over a path pickles as what reopens it where it
 * stands (leveldb_log._restore.restore_reader unpickles it, then _restore
 * sets its counters); so does one over a URL (its storage_options kept).
 * Readers over buffers or file objects refuse.
 */
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "reader_internal.h"

/* restore_reader and its arguments, for __reduce__. */
static PyObject *reader_pickle(const llpy_reader_state *s) {
    const llpy_progress *p = &s->progress;
    PyObject *mod = PyImport_ImportModule("leveldb_log._restore");
    if (mod == NULL)
        return NULL;
    PyObject *restore = PyObject_GetAttrString(mod, "restore_reader");
    Py_DECREF(mod);
    if (restore == NULL)
        return NULL;
    PyObject *end = s->end == LLOG_NO_END
                        ? Py_NewRef(Py_None)
                        : PyLong_FromUnsignedLongLong(s->end);
    PyObject *last = p->has_last
                         ? PyLong_FromUnsignedLongLong(p->last_record_offset)
                         : Py_NewRef(Py_None);
    PyObject *log_number = p->has_log_number
                               ? PyLong_FromUnsignedLongLong(p->log_number)
                               : Py_NewRef(Py_None);
    PyObject *result = Py_BuildValue(
        "O(O{sssOsKsNsOsssN}(NKO))", restore, s->name, "recovery",
        llog_recovery_name(s->recovery), "verify_checksums",
        s->verify_checksums ? Py_True : Py_False, "start",
        (unsigned long long)p->position, "end", end, "on_corruption",
        s->on_corruption ? s->on_corruption : Py_None, "dialect",
        s->told ? llog_dialect_name(s->dialect) : "auto", "log_number",
        log_number, last, (unsigned long long)p->dropped_bytes,
        p->finished ? Py_True : Py_False);
    Py_DECREF(restore);
    if (result != NULL && s->storage_options != NULL &&
        PyDict_SetItemString(PyTuple_GET_ITEM(PyTuple_GET_ITEM(result, 1), 1),
                             "storage_options", s->storage_options) < 0)
        Py_CLEAR(result);
    return result;
}

/*
 * A reader over a path pickles as what reopens it where it stands:
 * leveldb_log._restore.restore_reader(path, options, progress). Buffers and
 * file objects cannot travel to another process: refuse them.
 */
PyObject *llpy_pickle_reduce(const llpy_reader_state *s) {
    if (s->progress.closed) { /* where it stood went with the file */
        PyErr_SetString(PyExc_ValueError, "I/O operation on closed Reader");
        return NULL;
    }
    if (!s->over_path) {
        PyErr_SetString(PyExc_TypeError,
                        "cannot pickle a Reader over a buffer or file object "
                        "(only paths and URLs)");
        return NULL;
    }
    if (s->progress.in_callback) {
        /* Inside on_corruption, what follows the report is still queued in
         * the core: a copy would not go on exactly as this reader does. */
        PyErr_SetString(PyExc_TypeError,
                        "cannot pickle a Reader from inside its "
                        "on_corruption callback");
        return NULL;
    }
    return reader_pickle(s);
}

/* The progress of a pickled reader: _restore(last, dropped, finished). */
int llpy_pickle_progress(PyObject *args, llpy_progress *out) {
    PyObject *last;
    unsigned long long dropped;
    int finished;
    uint64_t offset = 0;
    if (!PyArg_ParseTuple(args, LLPY_FORMAT_Reader__restore("O", "K", "p"),
                          &last, &dropped, &finished))
        return -1;
    if (last != Py_None &&
        llpy_parse_offset(last, "last_record_offset", &offset) < 0)
        return -1;
    *out = (llpy_progress){.has_last = last != Py_None,
                           .last_record_offset = offset,
                           .dropped_bytes = dropped,
                           .finished = finished};
    return 0;
}
