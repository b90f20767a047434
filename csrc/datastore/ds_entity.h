/*
 * ds_entity.h - the legacy App Engine EntityProto, the record of every
 * Firestore and Datastore export file: entities, their properties and
 * values, keys and key paths, read in place from the caller's bytes.
 * Plain C, no Python; every non-static symbol starts with llds_.
 *
 * Field numbers are those of the published entity.proto (App Engine SDK):
 *   EntityProto  key 13 (Reference), property 14, raw_property 15
 *   Property     meaning 1, meaning_uri 2, name 3, multiple 4, value 5
 *   PropertyValue int64 1, bool 2, string 3, double 4,
 *                group PointValue 5 {x 6, y 7},
 *                group UserValue 8 {email 9, auth_domain 10, nickname 11,
 *                  gaiaid 18, obfuscated_gaiaid 19, federated_identity 21,
 *                  federated_provider 22},
 *                group ReferenceValue 12 {app 13, name_space 20,
 *                  group PathElement 14 {type 15, id 16, name 17},
 *                  database_id 23}
 *   Reference    app 13, name_space 20, path 14 (Path), database_id 23
 *   Path         group Element 1 {type 2, id 3, name 4}
 */
#ifndef LLDS_ENTITY_H
#define LLDS_ENTITY_H

#include "ds_wire.h"

/* The Property.Meaning values this reader gives a type of their own. */
enum {
    LLDS_MEANING_GD_WHEN = 7,
    LLDS_MEANING_GEORSS_POINT = 9,
    LLDS_MEANING_GD_RATING = 13,
    LLDS_MEANING_BLOB = 14,
    LLDS_MEANING_TEXT = 15,
    LLDS_MEANING_BYTESTRING = 16,
    LLDS_MEANING_INDEX_VALUE = 18,
    LLDS_MEANING_ENTITY_PROTO = 19,
    LLDS_MEANING_COMPRESSED = 22,
    LLDS_MEANING_EMPTY_LIST = 24,
};

typedef enum {
    LLDS_V_NULL, /* no value field: a null */
    LLDS_V_INT,
    LLDS_V_BOOL,
    LLDS_V_STRING,
    LLDS_V_DOUBLE,
    LLDS_V_POINT,
    LLDS_V_USER,
    LLDS_V_REFERENCE,
} llds_value_kind;

typedef struct {
    llds_value_kind kind;
    int64_t i;   /* INT, and BOOL as 0 or 1 */
    double d;    /* DOUBLE; POINT's x (latitude) */
    double y;    /* POINT's y (longitude) */
    llds_span s; /* STRING's bytes; USER's and REFERENCE's group body */
} llds_value;

typedef struct {
    llds_span name;
    uint64_t meaning;
    int multiple;
    int indexed; /* a `property` (14), not a `raw_property` (15) */
    int has_meaning_uri;
    llds_span meaning_uri;
    llds_value value;
} llds_property;

/* The next property of an entity whose fields `c` walks: 1 with `p` set, 0
 * at the end, or an error. Meeting the key (field 13) sets `key` and
 * `*has_key`; other fields are skipped. */
int llds_entity_next(llds_cur *c, llds_property *p, llds_span *key,
                     int *has_key);

typedef struct {
    llds_span app;
    llds_span name_space;
    llds_span database;
    llds_span path; /* the elements' container */
    int group_form; /* path elements as ReferenceValue's groups (14), not
                       Path's (1) */
} llds_key;

/* A Reference message (an entity's key). */
int llds_reference(llds_span ref, llds_key *k);
/* A ReferenceValue group's body (a key as a property value). */
int llds_reference_value(llds_span body, llds_key *k);

typedef struct {
    llds_span kind;
    int has_id;
    int has_name;
    int64_t id;
    llds_span name;
} llds_element;

/* The next path element of k->path (walked by `c`): 1, 0 at the end, or an
 * error. */
int llds_path_next(llds_cur *c, int group_form, llds_element *e);

typedef struct {
    llds_span email, auth_domain, nickname, user_id, federated_identity,
        federated_provider;
    int has_nickname, has_user_id, has_federated_identity,
        has_federated_provider;
} llds_user;

/* A UserValue group's body. */
int llds_user_value(llds_span body, llds_user *u);

#endif
