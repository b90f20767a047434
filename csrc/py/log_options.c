/* log_options.c - the options readers and writers of a log share, parsed
 * once (log_options.h). */
#include "log_options.h"
#include "args.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */

#include <string.h>

/* The names of a list (name_of(0) to name_of(count - 1), then extra when
 * not NULL) as the message lists them: 'a', 'b' or 'c'. */
static PyObject *names_text(const char *(*name_of)(unsigned), unsigned count,
                            const char *extra) {
    unsigned all = count + (extra != NULL);
    PyObject *text = PyUnicode_FromString("");
    for (unsigned i = 0; text != NULL && i < all; i++) {
        const char *sep = i == 0 ? "" : i + 1 < all ? ", " : " or ";
        Py_SETREF(text, PyUnicode_FromFormat("%U%s'%s'", text, sep,
                                             i < count ? name_of(i) : extra));
    }
    return text;
}

/* The index of obj's name in a list, or count for extra (a name beyond the
 * list, or NULL); 0, or -1 with an exception naming `what` and the names. */
static int parse_name(PyObject *obj, const char *what,
                      const char *(*name_of)(unsigned), unsigned count,
                      const char *extra, unsigned *out) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    for (unsigned i = 0; i <= count; i++) {
        const char *name = i < count ? name_of(i) : extra;
        if (name != NULL && PyUnicode_CompareWithASCIIString(obj, name) == 0) {
            *out = i;
            return 0;
        }
    }
    PyObject *names = names_text(name_of, count, extra);
    if (names != NULL)
        PyErr_Format(PyExc_ValueError, "%s must be %U, not %R", what, names,
                     obj);
    Py_XDECREF(names);
    return -1;
}

int llpy_parse_dialect(PyObject *obj, llog_dialect *out) {
    unsigned i;
    if (parse_name(obj, "dialect", llog_dialect_name, LLOG_DIALECT_COUNT, NULL,
                   &i) < 0)
        return -1;
    *out = (llog_dialect)i;
    return 0;
}

int llpy_parse_recovery(PyObject *obj, llog_recovery *out) {
    unsigned i;
    if (parse_name(obj, "recovery", llog_recovery_name, LLOG_RECOVERY_COUNT,
                   NULL, &i) < 0)
        return -1;
    *out = (llog_recovery)i;
    return 0;
}

/* The file name at the end of a path. A slash or a backslash ends a
 * directory on every system: no engine puts a backslash in a WAL's name,
 * and a POSIX file named db\000123.log is a Windows path unpacked as one
 * name (by an unzip, say), whose WAL is 000123.log. */
static const char *base_name(const char *path) {
    const char *base = path;
    for (const char *p = path; *p != '\0'; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    return base;
}

/* The number in a WAL's file name, "000123.log" or Pebble's
 * "000123-001.log" (a segment of log 123); 0 when the name is another. */
static int number_in_name(const char *name, uint64_t *out) {
    const char *base = base_name(name);
    uint64_t n = 0;
    const char *p = base;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > (UINT64_MAX - 9) / 10)
            return 0;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    if (p == base)
        return 0;
    if (*p == '-') { /* a segment index */
        const char *q = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == q)
            return 0;
    }
    if (strcmp(p, ".log") != 0)
        return 0;
    *out = n;
    return 1;
}

/* opt's log number from a path source's file name, when it has one. */
static int log_number_of_path(PyObject *source, llog_reader_options *opt) {
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(source, &bytes))
        return -1;
    opt->has_log_number =
        number_in_name(PyBytes_AS_STRING(bytes), &opt->log_number);
    Py_DECREF(bytes);
    return 0;
}

/* The log number of opt's dialect: given (log_number, not for LevelDB's,
 * whose records carry none, unless the dialect is told from block 0), or
 * from a path source's name (path, or NULL). */
static int log_number_options(PyObject *log_number, PyObject *path,
                              llog_reader_options *opt) {
    int numbered = opt->detect || opt->dialect != LLOG_DIALECT_LEVELDB;
    if (log_number != NULL && log_number != Py_None) {
        if (!numbered) {
            PyErr_SetString(PyExc_ValueError,
                            "log_number needs dialect 'rocksdb' or 'pebble': "
                            "LevelDB's records carry no log number");
            return -1;
        }
        opt->has_log_number = 1;
        return llpy_parse_offset(log_number, "log_number", &opt->log_number);
    }
    if (path != NULL && numbered)
        return log_number_of_path(path, opt);
    return 0;
}

int llpy_dialect_options(PyObject *dialect, PyObject *log_number,
                         PyObject *path, llog_reader_options *opt) {
    if (dialect != NULL && llpy_parse_dialect(dialect, &opt->dialect) < 0)
        return -1;
    return log_number_options(log_number, path, opt);
}

int llpy_reader_dialect_options(PyObject *dialect, PyObject *log_number,
                                PyObject *path, llog_reader_options *opt) {
    unsigned i = LLOG_DIALECT_LEVELDB;
    if (dialect != NULL && parse_name(dialect, "dialect", llog_dialect_name,
                                      LLOG_DIALECT_COUNT, "auto", &i) < 0)
        return -1;
    opt->detect = i == LLOG_DIALECT_COUNT;
    opt->dialect = opt->detect ? LLOG_DIALECT_LEVELDB : (llog_dialect)i;
    return log_number_options(log_number, path, opt);
}

PyObject *llpy_log_options(PyObject *module, PyObject *const *args,
                           Py_ssize_t nargs) {
    (void)module;
    if (llpy_args_count(LLPY_SIG__log_options, nargs) < 0)
        return NULL;
    llog_reader_options opt = {0};
    if (llpy_dialect_options(args[0], nargs == 2 ? args[1] : NULL, NULL,
                             &opt) < 0)
        return NULL;
    if (!opt.has_log_number)
        return Py_BuildValue("(sO)", llog_dialect_name(opt.dialect), Py_None);
    return Py_BuildValue("(sK)", llog_dialect_name(opt.dialect),
                         (unsigned long long)opt.log_number);
}
