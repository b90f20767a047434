/*
 * module.h - what every file of the binding (leveldb_log._core) shares: the
 * module state, raising and warning, argument parsing, and the types and
 * functions module.c registers. Only this folder includes Python.h; the
 * format is the core's (../core/), the I/O and the Python objects are this
 * folder's. Its headers, by job (README.md's Layout maps every file):
 *
 *   module.h           this (module.c at the top: init, registering every
 *                      type; raise.c: raising and warning; args.c:
 *                      single arguments)
 *   args.h             the stub's parameter lists, for fast-call parsers
 *                      (args.c)
 *   lock.h             the per-object lock and fork handling (lock.c)
 *   llpy_io.h          sources and targets: paths, descriptors, file
 *                      objects, aligned and page-mapped buffers (io.c,
 *                      pages.c)
 *   arrow.h            the Arrow C interfaces (arrow_cols.c, whose struct
 *                      the columns are; reader_arrow.c, writer_arrow.c)
 *   reader.h           the Reader as other files see it: opaque
 *   reader_internal.h  what reader.c asks of its parts (reader_open.c,
 *                      reader_records.c, reader_arrow.c, reader_pickle.c)
 *                      and they of the ones below them (reader_damage.c,
 *                      reader_fill.c, reader_assembly.c): functions and
 *                      values; each keeps its fields in its .c file
 *   log_options.h      the options every reader and writer takes alike:
 *                      dialect, log number, recovery mode (log_options.c)
 *   reader_dialect.h   the Reader's metadata state
 *   writer.h           the Writer as other files see it
 *   writer_internal.h  what writer.c asks of writer_write.c and
 *                      writer_open.c (functions; the fields are writer.c's)
 *   writer_output.h    the encoder, buffer and target, in a struct of
 *                      writer_output.c's own
 *   writer_sync.h      group commit, in a struct of writer_sync.c's own
 *   writer_policy.h    bytes_per_sync= and preallocate=, in a struct of
 *                      writer_policy.c's own
 *   writer_dialect.h   RocksDB's and Pebble's options, in a struct of
 *                      writer_dialect.c's own
 *   writer_append.h    mode "a": where a log resumes
 *   writer_lock.h      the advisory lock on a log file
 *
 * Every non-static symbol of the binding starts with llpy_ / LLPY_.
 */
#ifndef LLPY_MODULE_H
#define LLPY_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "log_reader.h"

#if PY_VERSION_HEX < 0x030C0000
/* The 3.12 exception API, for older interpreters. */
static inline PyObject *PyErr_GetRaisedException(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL)
        return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL)
        PyException_SetTraceback(value, tb);
    Py_DECREF(type);
    Py_XDECREF(tb);
    return value;
}

static inline void PyErr_SetRaisedException(PyObject *exc) {
    if (exc == NULL) {
        PyErr_Clear();
        return;
    }
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc,
                  PyException_GetTraceback(exc));
}
#endif

/* Records and buffers at least this large release the GIL while encoded or
 * checksummed (crc32c(), Writer): below it, taking the GIL back costs more
 * than it frees. The Reader checksums one physical record at a time, never
 * longer than a block and so below this: it has its own threshold
 * (reader_records.c). */
#define LLPY_GIL_THRESHOLD (64 * 1024)

/* ---- module state ----------------------------------------------------- */

typedef struct llpy_state {
    PyTypeObject *writer_type;
    PyTypeObject *reader_type;
    PyTypeObject *batch_type;   /* Arrow batches (reader_arrow.c) */
    PyTypeObject *batches_type; /* their iterator */
    PyObject *corruption_type;  /* leveldb_log._errors.Corruption */
    PyObject *corruption_error;
    PyObject *truncated_error;
    PyObject *corruption_warning; /* a UserWarning subclass */
    PyObject *os_open;
    /* io.BytesIO and io.FileIO: their write() copies or writes what it is
     * given at once and keeps no reference (writer_output.c lends them
     * views of its buffer) */
    PyObject *bytesio_type, *fileio_type;
    PyObject *locked_error;     /* leveldb_log._filelock.locked_error */
    Py_ssize_t assembly_hint;   /* the last fragmented record's length */
    Py_ssize_t assembly_expect; /* the next one's, when the last two agree */
    struct cols_spare *arrow_spare; /* a released batch's buffers, for the
                                       next iterator's (arrow_cols.c) */
    unsigned slow_copy_max; /* llpy_copy_is_slow's window: 1 to this many
                               bytes (LLPY_SLOW_COPY_MAX; tests change it) */
} llpy_state;

static inline llpy_state *llpy_state_of(PyTypeObject *type) {
    return (llpy_state *)PyType_GetModuleState(type);
}

/* ---- raising and warning (raise.c) ----------------------------------- */

/* The one place that raises: MemoryError or OverflowError for a core
 * status; CorruptionError or TruncatedRecordError from a Corruption. */
void llpy_raise_status(llog_status status);
void llpy_raise_corruption(llpy_state *st, int truncated, PyObject *c);
/* Issues a Warning instance through warnings.warn (None, or NULL with the
 * exception a filter turned it into). */
PyObject *llpy_warn(PyObject *warning);
/* CorruptionError for a file mode "a" refuses: it stops being a log at
 * `at` (of `size` bytes) for the reason `why`. */
void llpy_raise_not_a_log(llpy_state *st, PyObject *name, uint64_t at,
                          uint64_t size, const char *why);

/* ---- arguments (args.c) ----------------------------------------------- */

/* Converts a non-negative Python int to uint64_t (TypeError, ValueError
 * naming `what`). */
int llpy_parse_offset(PyObject *obj, const char *what, uint64_t *out);
/* A flag argument, True or False only: TypeError naming `what` for anything
 * else (a string such as "no" would be true). 0, or -1. */
int llpy_parse_flag(PyObject *obj, const char *what, int *out);
/* A simple buffer of a bytes-like object (release it); 0, or -1 with a
 * TypeError naming obj's type. */
int llpy_get_bytes(PyObject *obj, Py_buffer *view);
/* The same with the TypeError's text from `fmt`, which takes obj's type
 * name (%.100s): a caller that says what the bytes were for. */
int llpy_get_bytes_for(PyObject *obj, Py_buffer *view, const char *fmt);

/* ---- what module.c registers ------------------------------------------ */

/* The types (reader.c, writer.c; Batch and BatchIterator in arrow.h, from
 * reader_arrow.c), _scan_block (scan.c), _detect_dialect (detect.c),
 * _log_options (log_options.c) and _tail_end (tail.c). Nothing module.c
 * registers calls it back. */
extern PyType_Spec llpy_reader_spec;
extern PyType_Spec llpy_writer_spec;
PyObject *llpy_detect_dialect(PyObject *m, PyObject *const *a, Py_ssize_t n);
PyObject *llpy_scan_block(PyObject *module, PyObject *const *args,
                          Py_ssize_t nargs);
PyObject *llpy_tail_end(PyObject *module, PyObject *const *args,
                        Py_ssize_t nargs);
/* The Reader's test hooks, _test_blocks_in_place and _test_blocks_bounced
 * (reader_testing.c). */
PyObject *llpy_test_blocks_in_place(PyObject *module, PyObject *arg);
PyObject *llpy_test_blocks_bounced(PyObject *module, PyObject *arg);

#endif /* LLPY_MODULE_H */
