/*
 * ds_columns.c - records decoded straight into columns, for Arrow tables:
 * no Entity, Key or dict per record, only the values themselves, appended
 * to one list per property name (None where a record lacks the property),
 * with a bit mask per column of the value types met, and the keys as flat
 * lists (app, namespace, database, path offsets, kinds, ids, names).
 */
#include "ds_binding.h"

/* The value types a column's mask records (leveldb_log/datastore/_arrow.py
 * reads the same bits). */
enum {
    T_NONE = 1,
    T_BOOL = 2,
    T_INT = 4,
    T_FLOAT = 8,
    T_STR = 16,
    T_BYTES = 32,
    T_DATETIME = 64,
    T_OTHER = 128,
    T_GEOPOINT = 256,
    T_KEY = 512,
};

typedef struct {
    PyObject *values;  /* list */
    unsigned mask;     /* T_* of the values met */
    Py_ssize_t filled; /* rows the list holds */
} column;

/* The key lists, in this order. */
enum { K_APP, K_NAMESPACE, K_DATABASE, K_OFFSETS, K_KIND, K_ID, K_NAME, K_N };

typedef struct {
    llds_py_state *st;
    PyObject *index; /* dict: property name -> column number */
    PyObject *names; /* list: the names, by column number */
    column *cols;
    Py_ssize_t ncols, cap;
    Py_ssize_t row;
    PyObject *keys[K_N];
    Py_ssize_t elements; /* path elements so far */
} table;

static unsigned type_bit(llds_py_state *st, PyObject *v) {
    PyTypeObject *t = Py_TYPE(v);
    if (v == Py_None)
        return T_NONE;
    if (t == &PyBool_Type)
        return T_BOOL;
    if (t == &PyLong_Type)
        return T_INT;
    if (t == &PyFloat_Type)
        return T_FLOAT;
    if (t == &PyUnicode_Type)
        return T_STR;
    if (t == &PyBytes_Type)
        return T_BYTES;
    if (llds_py_is_datetime(v))
        return T_DATETIME;
    if ((PyObject *)t == st->geopoint)
        return T_GEOPOINT;
    return t == st->key ? T_KEY : T_OTHER;
}

/* Appends None to a column up to `rows` rows (rows without the property). */
static int pad(column *c, Py_ssize_t rows) {
    if (c->filled < rows)
        c->mask |= T_NONE;
    for (; c->filled < rows; c->filled++)
        if (PyList_Append(c->values, Py_None) < 0)
            return -1;
    return 0;
}

/* The column of a property name, made on first sight. */
static column *column_of(table *t, PyObject *name) {
    PyObject *at = PyDict_GetItemWithError(t->index, name);
    if (at != NULL)
        return &t->cols[PyLong_AsSsize_t(at)];
    if (PyErr_Occurred())
        return NULL;
    if (t->ncols == t->cap) {
        Py_ssize_t cap = t->cap ? 2 * t->cap : 16;
        column *more = PyMem_Realloc(t->cols, (size_t)cap * sizeof *more);
        if (more == NULL)
            return (column *)PyErr_NoMemory();
        t->cols = more;
        t->cap = cap;
    }
    PyObject *number = PyLong_FromSsize_t(t->ncols);
    int rc = number ? PyDict_SetItem(t->index, name, number) : -1;
    Py_XDECREF(number);
    if (rc < 0 || PyList_Append(t->names, name) < 0)
        return NULL;
    column *c = &t->cols[t->ncols];
    c->values = PyList_New(0);
    c->mask = 0;
    c->filled = 0;
    if (c->values == NULL)
        return NULL;
    t->ncols++;
    return c;
}

/* One property into its column; a repeated one into this row's list. */
static int add(table *t, const llds_property *p) {
    PyObject *name = llds_py_text(p->name);
    column *c = name ? column_of(t, name) : NULL;
    Py_XDECREF(name);
    if (c == NULL)
        return -1;
    PyObject *v = llds_py_value(t->st, p, 0);
    if (v == NULL)
        return -1;
    int rc;
    if (c->filled == t->row + 1) { /* this row has it already */
        PyObject *last = PyList_GET_ITEM(c->values, t->row);
        rc = p->multiple && PyList_CheckExact(last) ? PyList_Append(last, v)
                                                    : -2;
    } else if ((rc = pad(c, t->row)) == 0) {
        PyObject *item = p->multiple ? PyList_New(1) : Py_NewRef(v);
        if (p->multiple && item != NULL)
            PyList_SET_ITEM(item, 0, Py_NewRef(v));
        rc = item ? PyList_Append(c->values, item) : -1;
        Py_XDECREF(item);
        c->filled += rc == 0;
        c->mask |= p->multiple ? T_OTHER : type_bit(t->st, v);
    }
    if (rc == -2)
        PyErr_Format(PyExc_ValueError,
                     "not an EntityProto: property %R appears twice without "
                     "being repeated",
                     PyList_GET_ITEM(t->names, c - t->cols));
    Py_DECREF(v);
    return rc < 0 ? -1 : 0;
}

/* Appends a new reference to a list, and drops it. */
static int push(PyObject *list, PyObject *v) {
    int rc = v ? PyList_Append(list, v) : -1;
    Py_XDECREF(v);
    return rc;
}

/* The key of a row into the key lists. */
static int add_key(table *t, llds_span ref) {
    llds_key k;
    llds_element e;
    int rc = llds_reference(ref, &k);
    if (rc == LLDS_OK && k.path.n == 0)
        rc = LLDS_ERR_EMPTY_PATH;
    if (rc < 0)
        return llds_py_fail(rc), -1;
    if (push(t->keys[K_APP], llds_py_text(k.app)) < 0 ||
        push(t->keys[K_NAMESPACE], llds_py_text(k.name_space)) < 0 ||
        push(t->keys[K_DATABASE], llds_py_text(k.database)) < 0)
        return -1;
    llds_cur c = llds_cursor(k.path);
    while ((rc = llds_path_next(&c, k.group_form, &e)) == 1) {
        PyObject *id = e.has_id && !e.has_name ? PyLong_FromLongLong(e.id)
                                               : Py_NewRef(Py_None);
        PyObject *name =
            e.has_name ? llds_py_text(e.name) : Py_NewRef(Py_None);
        if (push(t->keys[K_KIND], llds_py_text(e.kind)) < 0 ||
            push(t->keys[K_ID], id) < 0 || push(t->keys[K_NAME], name) < 0)
            return -1;
        t->elements++;
    }
    if (rc < 0)
        return llds_py_fail(rc), -1;
    return push(t->keys[K_OFFSETS], PyLong_FromSsize_t(t->elements));
}

static int add_row(table *t, const uint8_t *p, size_t n) {
    llds_span bytes = {p, n}, kspan = {p, 0};
    llds_cur c = llds_cursor(bytes);
    llds_property prop;
    int has_key = 0, rc;
    while ((rc = llds_entity_next(&c, &prop, &kspan, &has_key)) == 1)
        if (add(t, &prop) < 0)
            return -1;
    if (rc == 0 && !has_key)
        rc = LLDS_ERR_NO_KEY;
    if (rc < 0)
        return llds_py_fail(rc), -1;
    if (add_key(t, kspan) < 0)
        return -1;
    t->row++;
    return 0;
}

static int add_record(table *t, PyObject *record) {
    if (PyBytes_CheckExact(record))
        return add_row(t, (const uint8_t *)PyBytes_AS_STRING(record),
                       (size_t)PyBytes_GET_SIZE(record));
    Py_buffer view;
    if (PyObject_GetBuffer(record, &view, PyBUF_SIMPLE) < 0)
        return -1;
    int rc = add_row(t, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return rc;
}

static void table_free(table *t) {
    for (Py_ssize_t i = 0; i < t->ncols; i++)
        Py_DECREF(t->cols[i].values);
    PyMem_Free(t->cols);
    Py_XDECREF(t->index);
    Py_XDECREF(t->names);
    for (int i = 0; i < K_N; i++)
        Py_XDECREF(t->keys[i]);
}

/* (rows, key lists, names, [(values, mask), ...]), every column padded to
 * `rows` values. */
static PyObject *result(table *t) {
    PyObject *cols = PyList_New(t->ncols);
    for (Py_ssize_t i = 0; cols != NULL && i < t->ncols; i++) {
        column *c = &t->cols[i];
        PyObject *pair = pad(c, t->row) == 0
                             ? Py_BuildValue("(OI)", c->values, c->mask)
                             : NULL;
        if (pair == NULL)
            Py_CLEAR(cols);
        else
            PyList_SET_ITEM(cols, i, pair);
    }
    if (cols == NULL)
        return NULL;
    PyObject *keys = PyTuple_New(K_N);
    for (int i = 0; keys != NULL && i < K_N; i++)
        PyTuple_SET_ITEM(keys, i, Py_NewRef(t->keys[i]));
    PyObject *r =
        keys ? Py_BuildValue("(nOON)", t->row, keys, t->names, cols) : NULL;
    Py_XDECREF(keys);
    if (r == NULL && keys == NULL)
        Py_DECREF(cols);
    return r;
}

PyObject *llds_py_columns(llds_py_state *st, PyObject *records) {
    table t = {.st = st};
    PyObject *it = PyObject_GetIter(records), *record, *r = NULL;
    t.index = PyDict_New();
    t.names = PyList_New(0);
    int ok = it && t.index && t.names;
    for (int i = 0; i < K_N; i++)
        ok &= (t.keys[i] = PyList_New(0)) != NULL;
    if (ok && push(t.keys[K_OFFSETS], PyLong_FromLong(0)) < 0)
        ok = 0;
    while (ok && (record = PyIter_Next(it)) != NULL) {
        ok = add_record(&t, record) == 0;
        Py_DECREF(record);
    }
    if (ok && !PyErr_Occurred())
        r = result(&t);
    table_free(&t);
    Py_XDECREF(it);
    return r;
}
