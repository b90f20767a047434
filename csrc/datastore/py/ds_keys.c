/*
 * ds_keys.c - keys (an entity's own, and keys as values) and users as
 * Python values: a Key (allocated here, its four slots set, not through its
 * Python __init__), whose path is a tuple of (kind, id or name) pairs.
 */
#include "ds_binding.h"

/* One path element: (kind, id), (kind, name), or (kind, None) when it has
 * neither (an incomplete key). */
static PyObject *element(const llds_element *e) {
    PyObject *kind = llds_py_text(e->kind);
    if (kind == NULL)
        return NULL;
    PyObject *id = e->has_name ? llds_py_text(e->name)
                   : e->has_id ? PyLong_FromLongLong(e->id)
                               : Py_NewRef(Py_None);
    if (id == NULL) {
        Py_DECREF(kind);
        return NULL;
    }
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL) {
        Py_DECREF(kind);
        Py_DECREF(id);
        return NULL;
    }
    PyTuple_SET_ITEM(pair, 0, kind);
    PyTuple_SET_ITEM(pair, 1, id);
    return pair;
}

/* The path as a tuple: counted in a first walk, built in a second. */
static PyObject *path(const llds_key *k) {
    llds_element e;
    llds_cur c = llds_cursor(k->path);
    Py_ssize_t n = 0;
    int rc;
    while ((rc = llds_path_next(&c, k->group_form, &e)) == 1)
        n++;
    if (rc < 0)
        return llds_py_fail(rc);
    PyObject *t = PyTuple_New(n);
    c = llds_cursor(k->path);
    for (Py_ssize_t i = 0; t != NULL && i < n; i++) {
        PyObject *pair = llds_path_next(&c, k->group_form, &e) == 1
                             ? element(&e)
                             : llds_py_fail(LLDS_ERR_TRUNCATED);
        if (pair == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, pair);
    }
    return t;
}

PyObject *llds_py_key(llds_py_state *st, const llds_key *k) {
    PyObject *args[4] = {llds_py_text(k->app), NULL, NULL, NULL};
    if (args[0] != NULL)
        args[1] = llds_py_text(k->name_space);
    if (args[1] != NULL)
        args[2] = path(k);
    if (args[2] != NULL)
        args[3] = llds_py_text(k->database);
    PyObject *r = args[3] ? st->key->tp_alloc(st->key, 0) : NULL;
    for (int i = 0; r != NULL && i < 4; i++)
        if (PyObject_SetAttr(r, st->key_slots[i], args[i]) < 0)
            Py_CLEAR(r);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(args[i]);
    return r;
}

/* An optional string field: its text, or None when absent. */
static PyObject *optional(llds_span s, int has) {
    return has ? llds_py_text(s) : Py_NewRef(Py_None);
}

PyObject *llds_py_user(llds_py_state *st, llds_span body) {
    llds_user u;
    int rc = llds_user_value(body, &u);
    if (rc < 0)
        return llds_py_fail(rc);
    PyObject *args[6] = {
        llds_py_text(u.email),
        llds_py_text(u.auth_domain),
        optional(u.nickname, u.has_nickname),
        optional(u.user_id, u.has_user_id),
        optional(u.federated_identity, u.has_federated_identity),
        optional(u.federated_provider, u.has_federated_provider),
    };
    PyObject *r = NULL;
    int ok = 1;
    for (int i = 0; i < 6; i++)
        ok &= args[i] != NULL;
    if (ok)
        r = PyObject_Vectorcall(st->user, args, 6, NULL);
    else if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "not an EntityProto: a bad user");
    for (int i = 0; i < 6; i++)
        Py_XDECREF(args[i]);
    return r;
}
