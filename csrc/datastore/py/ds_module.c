/*
 * ds_module.c - the extension leveldb_log._datastore: module init and state
 * (multi-phase), _setup(), which hands it the Python classes it builds, and
 * decode().
 */
#include "ds_binding.h"
#include "llds_docs.h" /* generated from _datastore.pyi by setup.py */

static llds_py_state *state_of(PyObject *module) {
    return (llds_py_state *)PyModule_GetState(module);
}

static PyObject *mod_setup(PyObject *module, PyObject *const *args,
                           Py_ssize_t nargs) {
    llds_py_state *st = state_of(module);
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "_setup() takes 6 arguments");
        return NULL;
    }
    if (!PyType_Check(args[0]) ||
        !PyType_IsSubtype((PyTypeObject *)args[0], &PyDict_Type)) {
        PyErr_SetString(PyExc_TypeError,
                        "_setup(): Entity must subclass dict");
        return NULL;
    }
    Py_XSETREF(st->entity, (PyTypeObject *)Py_NewRef(args[0]));
    if (!PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_setup(): Key must be a class");
        return NULL;
    }
    Py_XSETREF(st->key, (PyTypeObject *)Py_NewRef(args[1]));
    Py_XSETREF(st->geopoint, Py_NewRef(args[2]));
    Py_XSETREF(st->raw_value, Py_NewRef(args[3]));
    Py_XSETREF(st->user, Py_NewRef(args[4]));
    Py_XSETREF(st->utc, Py_NewRef(args[5]));
    Py_RETURN_NONE;
}

static PyObject *mod_decode(PyObject *module, PyObject *record) {
    llds_py_state *st = state_of(module);
    if (st->entity == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_setup() was not called");
        return NULL;
    }
    if (PyBytes_CheckExact(record))
        return llds_py_entity(st, (const uint8_t *)PyBytes_AS_STRING(record),
                              (size_t)PyBytes_GET_SIZE(record));
    Py_buffer view;
    if (PyObject_GetBuffer(record, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Format(PyExc_TypeError,
                     "a record must be a bytes-like object, not %.100s",
                     Py_TYPE(record)->tp_name);
        return NULL;
    }
    PyObject *r = llds_py_entity(st, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return r;
}

static PyObject *mod_decode_columns(PyObject *module, PyObject *records) {
    llds_py_state *st = state_of(module);
    if (st->entity == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_setup() was not called");
        return NULL;
    }
    return llds_py_columns(st, records);
}

static PyMethodDef module_methods[] = {
    {"_setup", (PyCFunction)(void (*)(void))mod_setup, METH_FASTCALL,
     LLDS_DOC__setup},
    {"decode", mod_decode, METH_O, LLDS_DOC_decode},
    {"decode_columns", mod_decode_columns, METH_O, LLDS_DOC_decode_columns},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module) {
    llds_py_state *st = state_of(module);
    if (llds_py_import_datetime() < 0)
        return -1;
    st->str_key = PyUnicode_InternFromString("key");
    st->empty_tuple = PyTuple_New(0);
    static const char *slots[4] = {"_app", "_namespace", "_path", "_database"};
    for (int i = 0; i < 4; i++)
        if ((st->key_slots[i] = PyUnicode_InternFromString(slots[i])) == NULL)
            return -1;
    return st->str_key && st->empty_tuple ? 0 : -1;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg) {
    llds_py_state *st = state_of(module);
    Py_VISIT(st->entity);
    Py_VISIT(st->key);
    Py_VISIT(st->geopoint);
    Py_VISIT(st->raw_value);
    Py_VISIT(st->user);
    Py_VISIT(st->utc);
    return 0;
}

static int module_clear(PyObject *module) {
    llds_py_state *st = state_of(module);
    Py_CLEAR(st->entity);
    Py_CLEAR(st->key);
    for (int i = 0; i < 4; i++)
        Py_CLEAR(st->key_slots[i]);
    Py_CLEAR(st->geopoint);
    Py_CLEAR(st->raw_value);
    Py_CLEAR(st->user);
    Py_CLEAR(st->utc);
    Py_CLEAR(st->str_key);
    Py_CLEAR(st->empty_tuple);
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030D0000
                                          {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
                                          {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,         .m_name = "leveldb_log._datastore",
    .m_doc = LLDS_DOC_MODULE,      .m_size = sizeof(llds_py_state),
    .m_methods = module_methods,   .m_slots = module_slots,
    .m_traverse = module_traverse, .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__datastore(void) {
    return PyModuleDef_Init(&module_def);
}
