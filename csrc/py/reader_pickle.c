/*
 * reader_pickle.c - a Reader over a path pickles as what reopens it where it
 * stands (leveldb_log._restore.restore_reader unpickles it, then _restore
 * sets its counters); so does one over a URL (its storage_options kept).
 * Readers over buffers or file objects refuse.
 */
#include "binding.h"
#include "module.h"

/* restore_reader and its arguments, for __reduce__ (lock held). */
static PyObject *reader_pickle(llpy_reader *self) {
    uint64_t position = llog_reader_position(self->core);
    if (position > self->end) /* read past its range: an empty one is left */
        position = self->end;
    PyObject *mod = PyImport_ImportModule("leveldb_log._restore");
    if (mod == NULL)
        return NULL;
    PyObject *restore = PyObject_GetAttrString(mod, "restore_reader");
    Py_DECREF(mod);
    if (restore == NULL)
        return NULL;
    PyObject *end = self->end == LLOG_NO_END
                        ? Py_NewRef(Py_None)
                        : PyLong_FromUnsignedLongLong(self->end);
    PyObject *last =
        self->has_last ? PyLong_FromUnsignedLongLong(self->last_record_offset)
                       : Py_NewRef(Py_None);
    uint64_t number = 0;
    PyObject *log_number = llog_reader_log_number(self->core, &number)
                               ? PyLong_FromUnsignedLongLong(number)
                               : Py_NewRef(Py_None);
    PyObject *result = Py_BuildValue(
        "O(O{sssOsKsNsOsssN}(NKO))", restore, self->name, "recovery",
        llog_recovery_name(self->recovery), "verify_checksums",
        self->verify_checksums ? Py_True : Py_False, "start",
        (unsigned long long)position, "end", end, "on_corruption",
        self->on_corruption ? self->on_corruption : Py_None, "dialect",
        llog_dialect_name(self->dialect), "log_number", log_number, last,
        (unsigned long long)self->dropped_bytes,
        self->finished ? Py_True : Py_False);
    Py_DECREF(restore);
    if (result != NULL && self->storage_options != NULL &&
        PyDict_SetItemString(PyTuple_GET_ITEM(PyTuple_GET_ITEM(result, 1), 1),
                             "storage_options", self->storage_options) < 0)
        Py_CLEAR(result);
    return result;
}

/*
 * A reader over a path pickles as what reopens it where it stands:
 * leveldb_log._restore.restore_reader(path, options, progress). Buffers and
 * file objects cannot travel to another process: refuse them.
 */
PyObject *llpy_reader_reduce(PyObject *op, PyObject *unused) {
    (void)unused;
    llpy_reader *self = (llpy_reader *)op;
    if ((self->kind != LLPY_SRC_FD && self->storage_options == NULL) ||
        self->closed) {
        PyErr_Format(PyExc_TypeError, "cannot pickle a Reader over %s",
                     self->closed
                         ? "a closed source"
                         : "a buffer or file object (only paths and URLs)");
        return NULL;
    }
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    if (self->in_callback || self->closed) {
        /* Inside on_corruption, what follows the report is still queued in
         * the core: a copy would not go on exactly as this reader does. */
        llpy_lock_release(&self->lock);
        PyErr_SetString(PyExc_TypeError,
                        self->closed
                            ? "cannot pickle a closed Reader"
                            : "cannot pickle a Reader from inside its "
                              "on_corruption callback");
        return NULL;
    }
    PyObject *result = reader_pickle(self);
    llpy_lock_release(&self->lock);
    return result;
}

/* Restores the progress of a pickled reader: _restore(last, dropped,
 * finished). */
PyObject *llpy_reader_restore(PyObject *op, PyObject *args) {
    llpy_reader *self = (llpy_reader *)op;
    PyObject *last;
    unsigned long long dropped;
    int finished;
    if (!PyArg_ParseTuple(args, "OKp:_restore", &last, &dropped, &finished))
        return NULL;
    if (llpy_lock_acquire(&self->lock) < 0)
        return NULL;
    int rc = 0;
    if (last != Py_None)
        rc = llpy_parse_offset(last, "last_record_offset",
                               &self->last_record_offset);
    if (rc == 0) {
        self->has_last = last != Py_None;
        self->dropped_bytes = dropped;
        if (finished)
            self->finished = 1;
    }
    llpy_lock_release(&self->lock);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}
