/*
 * ds_binding.h - what the files of leveldb_log._datastore share: the module
 * state and the decoder's entry point. The wire format is ../ds_entity.c's;
 * these files make Python values of what it finds:
 *
 *   ds_module.c  module init and state, _setup(), decode()
 *   ds_values.c  an EntityProto's properties as Python values
 *   ds_keys.c    keys and users as Python values
 *   ds_text.c    a field's UTF-8 text, and the error of a bad EntityProto
 *   ds_columns.c records decoded straight into columns, for Arrow tables
 *
 * Every non-static symbol starts with llds_py_.
 */
#ifndef LLDS_PY_BINDING_H
#define LLDS_PY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ds_entity.h"

/* Embedded entities nest at most this deep. */
#define LLDS_PY_MAX_DEPTH 64

typedef struct {
    PyTypeObject *entity;   /* leveldb_log.datastore.Entity, a dict subclass */
    PyTypeObject *key;      /* Key, whose slots _app, _namespace, _path and
                               _database are set here */
    PyObject *geopoint;     /* (latitude, longitude) -> GeoPoint */
    PyObject *raw_value;    /* (meaning, value) -> RawValue */
    PyObject *user;         /* (email, auth_domain, nickname, user_id,
                               federated_identity, federated_provider) */
    PyObject *utc;          /* datetime.timezone.utc */
    PyObject *str_key;      /* "key", the Entity's slot */
    PyObject *key_slots[4]; /* "_app", "_namespace", "_path", "_database" */
    PyObject *empty_tuple;
} llds_py_state;

/* The entity a record holds (an Entity), or NULL with ValueError (bad
 * input) or another exception set. */
PyObject *llds_py_entity(llds_py_state *st, const uint8_t *p, size_t n);

/* ValueError("not an EntityProto: ...") for a status of ds_entity.h; NULL
 * (ds_text.c). */
PyObject *llds_py_fail(int status);
/* Text of a field that must be UTF-8 (names, kinds, apps): ValueError if
 * it is not. */
PyObject *llds_py_text(llds_span s);
/* A key (ds_keys.c): a Key of app, namespace, path and database. */
PyObject *llds_py_key(llds_py_state *st, const llds_key *k);
/* A UserValue group's body as a User. */
PyObject *llds_py_user(llds_py_state *st, llds_span body);

/* A property's value as its meaning says (ds_values.c). */
PyObject *llds_py_value(llds_py_state *st, const llds_property *p, int depth);

/* Imports the datetime C API; -1 with an exception set. */
int llds_py_import_datetime(void);
/* Whether v is exactly a datetime.datetime. */
int llds_py_is_datetime(PyObject *v);

/* Records (an iterable of bytes-like objects) decoded into columns
 * (ds_columns.c): see decode_columns' docstring in ds_module.c. */
PyObject *llds_py_columns(llds_py_state *st, PyObject *records);

#endif
