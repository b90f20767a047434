/*
 * module.c - the CPython extension leveldb_log._core: module init and state,
 * the CRC functions and the constants. It sits at the top: it registers every
 * type and function of the binding, and no other file calls it (raising is
 * raise.c's, argument conversion args.c's).
 */
#include "module.h"
#include "args.h"
#include "arrow.h"
#include "llpy_docs.h" /* generated from _core.pyi by setup.py */
#include "llpy_io.h"
#include "lock.h"
#include "log_options.h"
#include "reader.h"
#include "writer.h"

/* ====================================================================== */
/* Module functions                                                       */
/* ====================================================================== */

/* Converts an int in [0, 2**32) for the CRC functions: TypeError for
 * non-ints, ValueError out of range (never a silent wrap). */
static int parse_u32(PyObject *arg, uint32_t *out) {
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "expected an int, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || v < 0 || v > 0xFFFFFFFFLL) {
        PyErr_SetString(PyExc_ValueError, "expected an unsigned 32-bit value");
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static PyObject *mod_crc32c(PyObject *module, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    PyObject *data, *value;
    Py_buffer view;
    uint32_t crc = 0;
    if (llpy_args_fast(LLPY_SIG_crc32c, args, nargs, kwnames,
                       LLPY_OUT_crc32c(&data, &value)) < 0)
        return NULL;
    if (value != NULL && parse_u32(value, &crc) < 0)
        return NULL;
    if (llpy_get_bytes(data, &view) < 0)
        return NULL;
    if (view.len >= LLPY_GIL_THRESHOLD) {
        /* The export pins the buffer's memory while the GIL is released. */
        Py_BEGIN_ALLOW_THREADS
        crc = llog_crc32c_extend(crc, view.buf, (size_t)view.len);
        Py_END_ALLOW_THREADS
    } else {
        crc = llog_crc32c_extend(crc, view.buf, (size_t)view.len);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

static PyObject *mod_mask_crc(PyObject *module, PyObject *arg) {
    (void)module;
    uint32_t v;
    if (parse_u32(arg, &v) < 0)
        return NULL;
    return PyLong_FromUnsignedLong(llog_mask_crc(v));
}

static PyObject *mod_unmask_crc(PyObject *module, PyObject *arg) {
    (void)module;
    uint32_t v;
    if (parse_u32(arg, &v) < 0)
        return NULL;
    return PyLong_FromUnsignedLong(llog_unmask_crc(v));
}

static PyObject *mod_slow_copy_window(PyObject *module, PyObject *arg) {
    llpy_state *st = PyModule_GetState(module);
    long max = PyLong_AsLong(arg);
    if (max == -1 && PyErr_Occurred())
        return NULL;
    if (max < 0 || max >= LLPY_PAGE) {
        PyErr_Format(PyExc_ValueError, "max must be in [0, %d), not %ld",
                     LLPY_PAGE, max);
        return NULL;
    }
    unsigned old = st->slow_copy_max;
    st->slow_copy_max = (unsigned)max;
    return PyLong_FromUnsignedLong(old);
}

static PyMethodDef module_methods[] = {
    {"_append_point", (PyCFunction)(void (*)(void))llpy_append_point,
     METH_VARARGS | METH_KEYWORDS, LLPY_DOC__append_point},
    {"_lock_fd", (PyCFunction)(void (*)(void))llpy_lock_fd, METH_FASTCALL,
     LLPY_DOC__lock_fd},
    {"crc32c", (PyCFunction)(void (*)(void))mod_crc32c,
     METH_FASTCALL | METH_KEYWORDS, LLPY_DOC_crc32c},
    {"mask_crc", mod_mask_crc, METH_O, LLPY_DOC_mask_crc},
    {"unmask_crc", mod_unmask_crc, METH_O, LLPY_DOC_unmask_crc},
    {"_slow_copy_window", mod_slow_copy_window, METH_O,
     LLPY_DOC__slow_copy_window},
    {"_scan_block", (PyCFunction)(void (*)(void))llpy_scan_block,
     METH_FASTCALL, LLPY_DOC__scan_block},
    {"_detect_dialect", (PyCFunction)(void (*)(void))llpy_detect_dialect,
     METH_FASTCALL, LLPY_DOC__detect_dialect},
    {"_log_options", (PyCFunction)(void (*)(void))llpy_log_options,
     METH_FASTCALL, LLPY_DOC__log_options},
    {"_tail_end", (PyCFunction)(void (*)(void))llpy_tail_end, METH_FASTCALL,
     LLPY_DOC__tail_end},
    /* the Reader's test hooks (reader_testing.c) */
    {"_test_blocks_in_place", llpy_test_blocks_in_place, METH_O,
     LLPY_DOC__test_blocks_in_place},
    {"_test_blocks_bounced", llpy_test_blocks_bounced, METH_O,
     LLPY_DOC__test_blocks_bounced},
    {NULL, NULL, 0, NULL}};

/* Appends the name of CRC-32C implementation i; -1 with an exception set. */
static int append_impl_name(PyObject *names, int i) {
    PyObject *name = PyUnicode_FromString(llog_crc32c_impl_name(i));
    int rc = name == NULL ? -1 : PyList_Append(names, name);
    Py_XDECREF(name);
    return rc;
}

/* The usable CRC-32C implementations, slowest to fastest on this CPU: in
 * the core's order, but the default last (a CPU may pass over a later one,
 * llog_crc32c_impl_default). */
static PyObject *crc32c_implementations(void) {
    PyObject *names = PyList_New(0);
    if (names == NULL)
        return NULL;
    int best = llog_crc32c_impl_default(), rc = 0;
    for (int i = 0; rc == 0 && i < llog_crc32c_impl_count(); i++)
        if (i != best && llog_crc32c_impl_usable(i))
            rc = append_impl_name(names, i);
    PyObject *tuple = rc == 0 && append_impl_name(names, best) == 0
                          ? PyList_AsTuple(names)
                          : NULL;
    Py_DECREF(names);
    return tuple;
}

/* The fastest implementation, or the one LEVELDB_LOG_CRC32C names (with a
 * warning, and the fastest, when that one is unknown or unusable here). */
static int select_crc32c(void) {
    llog_crc32c_init(1);
    const char *wanted = Py_GETENV("LEVELDB_LOG_CRC32C");
    if (wanted == NULL || *wanted == '\0' || llog_crc32c_init_named(wanted))
        return 0;
    PyObject *usable = crc32c_implementations();
    if (usable == NULL)
        return -1;
    int rc = PyErr_WarnFormat(
        PyExc_RuntimeWarning, 1,
        "LEVELDB_LOG_CRC32C=%s is not usable here (usable: %R); "
        "using %s",
        wanted, usable, llog_crc32c_implementation());
    Py_DECREF(usable);
    return rc;
}

/* PyModule_Add (3.13): adds value, stealing the reference; NULL fails. */
static int add_stolen(PyObject *module, const char *name, PyObject *value) {
    int rc = value ? PyModule_AddObjectRef(module, name, value) : -1;
    Py_XDECREF(value);
    return rc;
}

/* A tuple of a core list's names, name_of(0) to name_of(count - 1), as
 * the module's attribute `attr`; 0, or -1. */
static int add_name_list(PyObject *module, const char *attr,
                         const char *(*name_of)(unsigned), unsigned count) {
    PyObject *names = PyTuple_New(count);
    for (unsigned i = 0; names != NULL && i < count; i++) {
        PyObject *name = PyUnicode_FromString(name_of(i));
        if (name == NULL)
            Py_CLEAR(names);
        else
            PyTuple_SET_ITEM(names, i, name);
    }
    return add_stolen(module, attr, names);
}

/* RECORD_TYPES (type byte -> name), RECOVERY_MODES and _DIALECTS (names,
 * in order), from the core's lists (log_format.h). RecordType
 * (__init__.py) and the stubs' Recovery and Dialect spell them out again
 * for type checkers; tests check that they agree. */
static int add_names(PyObject *module) {
    PyObject *types = PyDict_New();
    for (unsigned t = 0; types != NULL && t < 256; t++) {
        const char *name = llog_type_name(t);
        PyObject *key = name ? PyLong_FromUnsignedLong(t) : NULL;
        PyObject *value = name ? PyUnicode_FromString(name) : NULL;
        if (name && (!key || !value || PyDict_SetItem(types, key, value) < 0))
            Py_CLEAR(types);
        Py_XDECREF(key);
        Py_XDECREF(value);
    }
    if (add_stolen(module, "RECORD_TYPES", types) < 0 ||
        add_name_list(module, "RECOVERY_MODES", llog_recovery_name,
                      LLOG_RECOVERY_COUNT) < 0)
        return -1;
    return add_name_list(module, "_DIALECTS", llog_dialect_name,
                         LLOG_DIALECT_COUNT);
}

/* The objects the module keeps from other modules. */
static int import_objects(llpy_state *st) {
    PyObject *errors = PyImport_ImportModule("leveldb_log._errors");
    if (errors == NULL)
        return -1;
    st->corruption_type = PyObject_GetAttrString(errors, "Corruption");
    st->corruption_error = PyObject_GetAttrString(errors, "CorruptionError");
    st->corruption_warning =
        PyObject_GetAttrString(errors, "CorruptionWarning");
    st->truncated_error =
        PyObject_GetAttrString(errors, "TruncatedRecordError");
    Py_DECREF(errors);
    if (!st->corruption_type || !st->corruption_error ||
        !st->truncated_error || !st->corruption_warning)
        return -1;
    PyObject *os = PyImport_ImportModule("os");
    if (os == NULL)
        return -1;
    st->os_open = PyObject_GetAttrString(os, "open");
    Py_DECREF(os);
    PyObject *io = PyImport_ImportModule("io");
    if (io == NULL)
        return -1;
    st->bytesio_type = PyObject_GetAttrString(io, "BytesIO");
    st->fileio_type = PyObject_GetAttrString(io, "FileIO");
    Py_DECREF(io);
    PyObject *filelock = PyImport_ImportModule("leveldb_log._filelock");
    if (filelock == NULL)
        return -1;
    st->locked_error = PyObject_GetAttrString(filelock, "locked_error");
    Py_DECREF(filelock);
    return st->os_open && st->bytesio_type && st->fileio_type &&
                   st->locked_error
               ? 0
               : -1;
}

/* BLOCK_SIZE and the other constants, RECORD_TYPES and RECOVERY_MODES. */
static int add_constants(PyObject *module) {
    if (PyModule_AddIntConstant(module, "BLOCK_SIZE", LLOG_BLOCK_SIZE) < 0 ||
        PyModule_AddIntConstant(module, "HEADER_SIZE", LLOG_HEADER_SIZE) < 0 ||
        PyModule_AddIntConstant(module, "DEFAULT_BUFFER_SIZE",
                                LLPY_DEFAULT_BUFFER) < 0 ||
        PyModule_AddStringConstant(module, "crc32c_implementation",
                                   llog_crc32c_implementation()) < 0 ||
        PyModule_AddStringConstant(module, "_REASON_BAD_LENGTH",
                                   LLOG_REASON_BAD_LENGTH) < 0 ||
        PyModule_AddStringConstant(module, "_REASON_CHECKSUM",
                                   LLOG_REASON_CHECKSUM) < 0)
        return -1;
    if (add_names(module) < 0)
        return -1;
    PyObject *impls = crc32c_implementations();
    if (impls == NULL ||
        PyModule_AddObject(module, "crc32c_implementations", impls) < 0) {
        Py_XDECREF(impls);
        return -1;
    }
    return 0;
}

/* The binding's types, each a spec its own file exports, made and added
 * alike; the module state keeps each where the table says. */
static const struct {
    PyType_Spec *spec;
    size_t at; /* offsetof(llpy_state, the type's field) */
} module_types[] = {
    {&llpy_reader_spec, offsetof(llpy_state, reader_type)},
    {&llpy_writer_spec, offsetof(llpy_state, writer_type)},
    {&llpy_batch_spec, offsetof(llpy_state, batch_type)},
    {&llpy_batches_spec, offsetof(llpy_state, batches_type)},
};

static int add_types(PyObject *module, llpy_state *st) {
    for (size_t i = 0; i < sizeof module_types / sizeof module_types[0]; i++) {
        PyTypeObject **slot =
            (PyTypeObject **)((char *)st + module_types[i].at);
        *slot = (PyTypeObject *)PyType_FromModuleAndSpec(
            module, module_types[i].spec, NULL);
        if (*slot == NULL || PyModule_AddType(module, *slot) < 0)
            return -1;
    }
    return 0;
}

static int module_exec(PyObject *module) {
    llpy_state *st = PyModule_GetState(module);
    if (select_crc32c() < 0)
        return -1;
    llpy_fork_register();
    if (import_objects(st) < 0 || add_types(module, st) < 0 ||
        PyModule_AddFunctions(module, llpy_writer_testing_methods) < 0)
        return -1;
    st->arrow_spare = llpy_cols_spare_new(); /* the module's reference */
    if (st->arrow_spare == NULL)
        return -1;
    st->slow_copy_max = LLPY_SLOW_COPY_MAX;
    return add_constants(module);
}

static int module_traverse(PyObject *module, visitproc visit, void *arg) {
    llpy_state *st = PyModule_GetState(module);
    Py_VISIT(st->writer_type);
    Py_VISIT(st->reader_type);
    Py_VISIT(st->batch_type);
    Py_VISIT(st->batches_type);
    Py_VISIT(st->corruption_type);
    Py_VISIT(st->corruption_error);
    Py_VISIT(st->truncated_error);
    Py_VISIT(st->corruption_warning);
    Py_VISIT(st->os_open);
    Py_VISIT(st->bytesio_type);
    Py_VISIT(st->fileio_type);
    Py_VISIT(st->locked_error);
    return 0;
}

static int module_clear(PyObject *module) {
    llpy_state *st = PyModule_GetState(module);
    Py_CLEAR(st->writer_type);
    Py_CLEAR(st->reader_type);
    Py_CLEAR(st->batch_type);
    Py_CLEAR(st->batches_type);
    Py_CLEAR(st->corruption_type);
    Py_CLEAR(st->corruption_error);
    Py_CLEAR(st->truncated_error);
    Py_CLEAR(st->corruption_warning);
    Py_CLEAR(st->os_open);
    Py_CLEAR(st->bytesio_type);
    Py_CLEAR(st->fileio_type);
    Py_CLEAR(st->locked_error);
    if (st->arrow_spare != NULL)
        llpy_cols_spare_unref(st->arrow_spare);
    st->arrow_spare = NULL;
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030D0000
                                          {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
                                          {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,         .m_name = "leveldb_log._core",
    .m_doc = LLPY_DOC_MODULE,      .m_size = sizeof(llpy_state),
    .m_methods = module_methods,   .m_slots = module_slots,
    .m_traverse = module_traverse, .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&module_def); }
