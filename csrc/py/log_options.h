/*
 * log_options.h - the options every reader and writer of a log takes alike,
 * parsed once (log_options.c): the dialect, the log number (given, or from
 * a WAL's file name) and the recovery mode, each checked against the core's
 * list of names (log_format.h), whose names the messages list.
 */
#ifndef LLPY_LOG_OPTIONS_H
#define LLPY_LOG_OPTIONS_H

#include "module.h"

/* A dialect's name (llog_dialect_name) into *out; 0, or -1 with TypeError
 * or ValueError naming the dialects. */
int llpy_parse_dialect(PyObject *obj, llog_dialect *out);

/* A recovery mode's name (llog_recovery_name) into *out; 0, or -1 with
 * TypeError or ValueError naming the modes. */
int llpy_parse_recovery(PyObject *obj, llog_recovery *out);

/* Fills opt's dialect and log number from the options (either may be NULL)
 * and a path source's file name (path, or NULL); 0, or -1 with an
 * exception set. */
int llpy_dialect_options(PyObject *dialect, PyObject *log_number,
                         PyObject *path, llog_reader_options *opt);

/* As llpy_dialect_options, for a Reader, which also takes "auto": the
 * dialect told from block 0 (opt->detect), with the log number given or
 * the file name's, used when it is not LevelDB's. */
int llpy_reader_dialect_options(PyObject *dialect, PyObject *log_number,
                                PyObject *path, llog_reader_options *opt);

/* _core._log_options(dialect, log_number=None): the two checked as a
 * Reader checks them, for the package's Python functions. */
PyObject *llpy_log_options(PyObject *module, PyObject *const *args,
                           Py_ssize_t nargs);

#endif /* LLPY_LOG_OPTIONS_H */
