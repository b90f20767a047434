/*
 * ds_values.c - an EntityProto as Python values: properties by meaning
 * (docs/datastore.md has the table and its sources), arrays from repeated
 * properties, embedded entities, keys and users.
 */
#include "ds_binding.h"

#include <datetime.h>

/* Meanings whose value is a string shown as text: the ATOM and GD string
 * meanings, TEXT and BLOBKEY. */
#define TEXT_MEANINGS                                                         \
    ((1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) |  \
     (1u << 8) | (1u << 10) | (1u << 11) | (1u << 12) | (1u << 15) |          \
     (1u << 17))
#define IS_TEXT_MEANING(m) ((m) < 32 && ((TEXT_MEANINGS >> (m)) & 1u))

/* 0001-01-01 and 9999-12-31 23:59:59.999999, in microseconds from 1970. */
#define MIN_MICROS (-62135596800000000LL)
#define MAX_MICROS 253402300799999999LL

int llds_py_is_datetime(PyObject *v) { return PyDateTime_CheckExact(v); }

int llds_py_import_datetime(void) {
    if (PyDateTimeAPI == NULL)
        PyDateTime_IMPORT;
    return PyDateTimeAPI == NULL ? -1 : 0;
}

static PyObject *bytes_of(llds_span s) {
    return PyBytes_FromStringAndSize((const char *)s.p, (Py_ssize_t)s.n);
}

/* A string value as str, or as bytes when it is not UTF-8. */
static PyObject *text_or_bytes(llds_span s, int *was_text) {
    PyObject *r =
        PyUnicode_DecodeUTF8((const char *)s.p, (Py_ssize_t)s.n, NULL);
    *was_text = r != NULL;
    if (r == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
        r = bytes_of(s);
    }
    return r;
}

static PyObject *raw(llds_py_state *st, uint64_t meaning, PyObject *v) {
    if (v == NULL)
        return NULL;
    PyObject *args[2] = {PyLong_FromUnsignedLongLong(meaning), v};
    PyObject *r =
        args[0] ? PyObject_Vectorcall(st->raw_value, args, 2, NULL) : NULL;
    Py_XDECREF(args[0]);
    Py_DECREF(v);
    return r;
}

/* Microseconds since 1970 as an aware UTC datetime (days to a civil date by
 * the usual era arithmetic of the proleptic Gregorian calendar). */
static PyObject *when(llds_py_state *st, int64_t us) {
    int64_t days = us / 86400000000LL, rem = us % 86400000000LL;
    if (rem < 0) {
        rem += 86400000000LL;
        days -= 1;
    }
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, day = doy - (153 * mp + 2) / 5 + 1;
    int64_t month = mp < 10 ? mp + 3 : mp - 9, year = yoe + era * 400;
    year += month <= 2;
    int64_t secs = rem / 1000000;
    return PyDateTimeAPI->DateTime_FromDateAndTime(
        (int)year, (int)month, (int)day, (int)(secs / 3600),
        (int)(secs / 60 % 60), (int)(secs % 60), (int)(rem % 1000000), st->utc,
        PyDateTimeAPI->DateTimeType);
}

static PyObject *entity_at(llds_py_state *st, llds_span bytes, int depth);

static PyObject *string_value(llds_py_state *st, const llds_property *p,
                              int depth) {
    uint64_t m = p->meaning;
    int ok;
    if (m == LLDS_MEANING_BLOB || m == LLDS_MEANING_BYTESTRING ||
        m == LLDS_MEANING_COMPRESSED)
        return bytes_of(p->value.s);
    if (m == LLDS_MEANING_ENTITY_PROTO)
        return entity_at(st, p->value.s, depth + 1);
    PyObject *v = text_or_bytes(p->value.s, &ok);
    if (m == 0 || m == LLDS_MEANING_INDEX_VALUE || (ok && IS_TEXT_MEANING(m)))
        return v;
    return raw(st, m, v); /* unknown, or text that is not UTF-8 */
}

static PyObject *int_value(llds_py_state *st, uint64_t m, int64_t i) {
    if (m == LLDS_MEANING_GD_WHEN && i >= MIN_MICROS && i <= MAX_MICROS)
        return when(st, i);
    PyObject *v = PyLong_FromLongLong(i);
    if (m == 0 || m == LLDS_MEANING_INDEX_VALUE || m == LLDS_MEANING_GD_RATING)
        return v;
    return raw(st, m, v);
}

static PyObject *point_value(llds_py_state *st, const llds_value *v) {
    PyObject *args[2] = {PyFloat_FromDouble(v->d), PyFloat_FromDouble(v->y)};
    PyObject *r = args[0] && args[1]
                      ? PyObject_Vectorcall(st->geopoint, args, 2, NULL)
                      : NULL;
    Py_XDECREF(args[0]);
    Py_XDECREF(args[1]);
    return r;
}

static PyObject *reference_value(llds_py_state *st, llds_span body) {
    llds_key k;
    int rc = llds_reference_value(body, &k);
    return rc < 0 ? llds_py_fail(rc) : llds_py_key(st, &k);
}

PyObject *llds_py_value(llds_py_state *st, const llds_property *p, int depth) {
    uint64_t m = p->meaning;
    int plain = m == 0 || m == LLDS_MEANING_INDEX_VALUE;
    PyObject *v;
    switch (p->value.kind) {
    case LLDS_V_NULL:
        if (m == LLDS_MEANING_EMPTY_LIST)
            return PyList_New(0);
        return plain ? Py_NewRef(Py_None) : raw(st, m, Py_NewRef(Py_None));
    case LLDS_V_STRING:
        return string_value(st, p, depth);
    case LLDS_V_INT:
        return int_value(st, m, p->value.i);
    case LLDS_V_BOOL:
        v = PyBool_FromLong((long)p->value.i);
        break;
    case LLDS_V_DOUBLE:
        v = PyFloat_FromDouble(p->value.d);
        break;
    case LLDS_V_POINT:
        v = point_value(st, &p->value);
        plain |= m == LLDS_MEANING_GEORSS_POINT;
        break;
    case LLDS_V_USER:
        v = llds_py_user(st, p->value.s);
        break;
    default:
        v = reference_value(st, p->value.s);
        break;
    }
    return plain || v == NULL ? v : raw(st, m, v);
}

/* Adds a property to the entity's mapping: repeated ("multiple") ones make
 * a list, in the order the record holds them. */
static int put(PyObject *props, PyObject *name, PyObject *v, int multiple) {
    PyObject *old = PyDict_GetItemWithError(props, name);
    if (old == NULL && PyErr_Occurred())
        return -1;
    if (old == NULL && !multiple)
        return PyDict_SetItem(props, name, v);
    if (old == NULL) {
        PyObject *list = PyList_New(1);
        if (list == NULL)
            return -1;
        PyList_SET_ITEM(list, 0, Py_NewRef(v));
        int rc = PyDict_SetItem(props, name, list);
        Py_DECREF(list);
        return rc;
    }
    if (multiple && PyList_CheckExact(old))
        return PyList_Append(old, v);
    PyErr_Format(PyExc_ValueError,
                 "not an EntityProto: property %R appears twice without "
                 "being repeated",
                 name);
    return -1;
}

static int add_property(llds_py_state *st, PyObject *props,
                        const llds_property *p, int depth) {
    PyObject *name = llds_py_text(p->name);
    if (name == NULL)
        return -1;
    PyObject *v = llds_py_value(st, p, depth);
    int rc = v == NULL ? -1 : put(props, name, v, p->multiple);
    Py_DECREF(name);
    Py_XDECREF(v);
    return rc;
}

/* The properties of an entity into `props`; its key span into `key`. */
static int fill(llds_py_state *st, PyObject *props, llds_span bytes, int depth,
                llds_span *key, int *has_key) {
    llds_cur c = llds_cursor(bytes);
    llds_property p;
    int rc;
    while ((rc = llds_entity_next(&c, &p, key, has_key)) == 1)
        if (add_property(st, props, &p, depth) < 0)
            return -1;
    if (rc < 0)
        llds_py_fail(rc);
    return rc;
}

/* An Entity of the type _setup() gave, empty, with `key` (not through its
 * Python __init__: dict's own tp_new). */
static PyObject *new_entity(llds_py_state *st, PyObject *key) {
    PyObject *e = st->entity->tp_new(st->entity, st->empty_tuple, NULL);
    if (e != NULL && PyObject_SetAttr(e, st->str_key, key) < 0)
        Py_CLEAR(e);
    return e;
}

/* An embedded entity: an Entity when it has a key with a path, else (a
 * Firestore map) a dict. */
static PyObject *entity_at(llds_py_state *st, llds_span bytes, int depth) {
    llds_span kspan = {bytes.p, 0};
    int has_key = 0;
    llds_key k;
    if (depth > LLDS_PY_MAX_DEPTH)
        return llds_py_fail(LLDS_ERR_DEPTH);
    PyObject *props = PyDict_New();
    if (props == NULL || fill(st, props, bytes, depth, &kspan, &has_key) < 0)
        goto error;
    int rc = has_key ? llds_reference(kspan, &k) : LLDS_OK;
    if (rc < 0) {
        llds_py_fail(rc);
        goto error;
    }
    if (!has_key || k.path.n == 0)
        return props;
    PyObject *key = llds_py_key(st, &k);
    PyObject *e = key ? new_entity(st, key) : NULL;
    Py_XDECREF(key);
    if (e != NULL && PyDict_Update(e, props) < 0)
        Py_CLEAR(e);
    Py_DECREF(props);
    return e;
error:
    Py_XDECREF(props);
    return NULL;
}

PyObject *llds_py_entity(llds_py_state *st, const uint8_t *p, size_t n) {
    llds_span bytes = {p, n}, kspan = {p, 0};
    int has_key = 0;
    llds_key k;
    PyObject *e = new_entity(st, Py_None);
    if (e == NULL || fill(st, e, bytes, 0, &kspan, &has_key) < 0)
        goto error;
    int rc = has_key ? llds_reference(kspan, &k) : LLDS_ERR_NO_KEY;
    if (rc == LLDS_OK && k.path.n == 0)
        rc = LLDS_ERR_EMPTY_PATH;
    if (rc < 0) {
        llds_py_fail(rc);
        goto error;
    }
    PyObject *key = llds_py_key(st, &k);
    if (key == NULL || PyObject_SetAttr(e, st->str_key, key) < 0) {
        Py_XDECREF(key);
        goto error;
    }
    Py_DECREF(key);
    return e;
error:
    Py_XDECREF(e);
    return NULL;
}
