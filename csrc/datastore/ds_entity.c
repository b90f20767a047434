/*
 * ds_entity.c - EntityProto's messages read in place: an entity's fields,
 * a property and its value, keys, key paths and users.
 */
#include "ds_entity.h"

#include <string.h>

/* Reads a field the caller knows, refusing a wire type other than `want`. */
static int want(uint32_t wire, uint32_t expected) {
    return wire == expected ? LLDS_OK : LLDS_ERR_FIELD_TYPE;
}

static int read_double(llds_cur *c, double *out) {
    uint64_t bits;
    int rc = llds_fixed64(c, &bits);
    if (rc == LLDS_OK)
        memcpy(out, &bits, sizeof *out);
    return rc;
}

/* PointValue's body: x 6 and y 7, both doubles. */
static int point(llds_span body, llds_value *v) {
    llds_cur c = llds_cursor(body);
    v->d = 0.0;
    v->y = 0.0;
    while (c.p < c.end) {
        uint32_t f, w;
        int rc = llds_tag(&c, &f, &w);
        if (rc == LLDS_OK && (f == 6 || f == 7))
            rc = want(w, LLDS_I64) < 0
                     ? LLDS_ERR_FIELD_TYPE
                     : read_double(&c, f == 6 ? &v->d : &v->y);
        else if (rc == LLDS_OK)
            rc = llds_skip(&c, f, w);
        if (rc < 0)
            return rc;
    }
    return LLDS_OK;
}

/* Sets the value's kind; a second kind is refused (the same one again is
 * protobuf's "last one wins"). */
static int set_kind(llds_value *v, llds_value_kind kind) {
    if (v->kind != LLDS_V_NULL && v->kind != kind)
        return LLDS_ERR_TWO_VALUES;
    v->kind = kind;
    return LLDS_OK;
}

/* One field of a PropertyValue. */
static int value_field(llds_cur *c, uint32_t f, uint32_t w, llds_value *v) {
    uint64_t u;
    int rc;
    switch (f) {
    case 1:
    case 2:
        if ((rc = want(w, LLDS_VARINT)) < 0 || (rc = llds_varint(c, &u)) < 0)
            return rc;
        v->i = f == 1 ? (int64_t)u : u != 0;
        return set_kind(v, f == 1 ? LLDS_V_INT : LLDS_V_BOOL);
    case 3:
        if ((rc = want(w, LLDS_LEN)) < 0 || (rc = llds_len(c, &v->s)) < 0)
            return rc;
        return set_kind(v, LLDS_V_STRING);
    case 4:
        if ((rc = want(w, LLDS_I64)) < 0 || (rc = read_double(c, &v->d)) < 0)
            return rc;
        return set_kind(v, LLDS_V_DOUBLE);
    case 5:
    case 8:
    case 12: {
        llds_span body;
        if ((rc = want(w, LLDS_SGROUP)) < 0 ||
            (rc = llds_group(c, f, &body)) < 0)
            return rc;
        if (f == 5)
            return (rc = point(body, v)) < 0 ? rc : set_kind(v, LLDS_V_POINT);
        v->s = body;
        return set_kind(v, f == 8 ? LLDS_V_USER : LLDS_V_REFERENCE);
    }
    default:
        return llds_skip(c, f, w);
    }
}

static int value(llds_span bytes, llds_value *v) {
    llds_cur c = llds_cursor(bytes);
    v->kind = LLDS_V_NULL;
    while (c.p < c.end) {
        uint32_t f, w;
        int rc = llds_tag(&c, &f, &w);
        if (rc == LLDS_OK)
            rc = value_field(&c, f, w, v);
        if (rc < 0)
            return rc;
    }
    return LLDS_OK;
}

/* One field of a Property. */
static int property_field(llds_cur *c, uint32_t f, uint32_t w,
                          llds_property *p, int *seen) {
    uint64_t u;
    llds_span s;
    int rc;
    switch (f) {
    case 1:
    case 4:
        if ((rc = want(w, LLDS_VARINT)) < 0 || (rc = llds_varint(c, &u)) < 0)
            return rc;
        if (f == 1)
            p->meaning = u;
        else
            p->multiple = u != 0;
        return LLDS_OK;
    case 2:
    case 3:
    case 5:
        if ((rc = want(w, LLDS_LEN)) < 0 || (rc = llds_len(c, &s)) < 0)
            return rc;
        if (f == 2) {
            p->meaning_uri = s;
            p->has_meaning_uri = 1;
        } else if (f == 3) {
            p->name = s;
            *seen |= 1;
        } else {
            *seen |= 2;
            return value(s, &p->value);
        }
        return LLDS_OK;
    default:
        return llds_skip(c, f, w);
    }
}

static int property(llds_span bytes, int indexed, llds_property *p) {
    llds_cur c = llds_cursor(bytes);
    int seen = 0; /* 1: the name, 2: the value */
    memset(p, 0, sizeof *p);
    p->indexed = indexed;
    while (c.p < c.end) {
        uint32_t f, w;
        int rc = llds_tag(&c, &f, &w);
        if (rc == LLDS_OK)
            rc = property_field(&c, f, w, p, &seen);
        if (rc < 0)
            return rc;
    }
    if (!(seen & 1))
        return LLDS_ERR_NO_NAME;
    return seen & 2 ? LLDS_OK : LLDS_ERR_NO_VALUE;
}

int llds_entity_next(llds_cur *c, llds_property *p, llds_span *key,
                     int *has_key) {
    while (c->p < c->end) {
        uint32_t f, w;
        llds_span s;
        int rc = llds_tag(c, &f, &w);
        if (rc < 0)
            return rc;
        if (f != 13 && f != 14 && f != 15) {
            if ((rc = llds_skip(c, f, w)) < 0)
                return rc;
            continue;
        }
        if ((rc = want(w, LLDS_LEN)) < 0 || (rc = llds_len(c, &s)) < 0)
            return rc;
        if (f != 13)
            return (rc = property(s, f == 14, p)) < 0 ? rc : 1;
        *key = s;
        *has_key = 1;
    }
    return 0;
}

/* The fields Reference and ReferenceValue share: app 13, name_space 20,
 * database_id 23. The path is field 14 in both: a Path message in one, the
 * elements' groups in the other. */
static int key_fields(llds_span bytes, int group_form, llds_key *k) {
    llds_cur c = llds_cursor(bytes);
    memset(k, 0, sizeof *k);
    k->group_form = group_form;
    k->path.p = bytes.p; /* no path: an empty one */
    if (group_form)
        k->path = bytes; /* the elements are among these fields */
    while (c.p < c.end) {
        uint32_t f, w;
        int rc = llds_tag(&c, &f, &w);
        if (rc == LLDS_OK &&
            (f == 13 || f == 20 || f == 23 || (f == 14 && !group_form))) {
            llds_span *to = f == 13   ? &k->app
                            : f == 20 ? &k->name_space
                            : f == 23 ? &k->database
                                      : &k->path;
            rc =
                want(w, LLDS_LEN) < 0 ? LLDS_ERR_FIELD_TYPE : llds_len(&c, to);
        } else if (rc == LLDS_OK) {
            rc = llds_skip(&c, f, w);
        }
        if (rc < 0)
            return rc;
    }
    return LLDS_OK;
}

int llds_reference(llds_span ref, llds_key *k) {
    return key_fields(ref, 0, k);
}

int llds_reference_value(llds_span body, llds_key *k) {
    return key_fields(body, 1, k);
}

/* An element's body: its kind, id and name fields. */
static int element(llds_span body, int group_form, llds_element *e) {
    uint32_t base = group_form ? 15 : 2; /* type; id and name follow it */
    llds_cur c = llds_cursor(body);
    int has_kind = 0;
    memset(e, 0, sizeof *e);
    while (c.p < c.end) {
        uint32_t f, w;
        uint64_t u = 0;
        int rc = llds_tag(&c, &f, &w);
        if (rc == LLDS_OK && (f == base || f == base + 2)) {
            rc = want(w, LLDS_LEN) < 0
                     ? LLDS_ERR_FIELD_TYPE
                     : llds_len(&c, f == base ? &e->kind : &e->name);
            has_kind |= f == base;
            e->has_name |= f == base + 2;
        } else if (rc == LLDS_OK && f == base + 1) {
            rc = want(w, LLDS_VARINT) < 0 ? LLDS_ERR_FIELD_TYPE
                                          : llds_varint(&c, &u);
            e->id = (int64_t)u;
            e->has_id = 1;
        } else if (rc == LLDS_OK) {
            rc = llds_skip(&c, f, w);
        }
        if (rc < 0)
            return rc;
    }
    return has_kind ? LLDS_OK : LLDS_ERR_NO_KIND;
}

int llds_path_next(llds_cur *c, int group_form, llds_element *e) {
    uint32_t field = group_form ? 14 : 1;
    while (c->p < c->end) {
        uint32_t f, w;
        llds_span body;
        int rc = llds_tag(c, &f, &w);
        if (rc == LLDS_OK && f == field && w == LLDS_SGROUP)
            rc = llds_group(c, f, &body);
        else if (rc == LLDS_OK && f == field)
            return LLDS_ERR_FIELD_TYPE;
        else if (rc == LLDS_OK) {
            rc = llds_skip(c, f, w);
            if (rc == LLDS_OK)
                continue;
        }
        if (rc < 0)
            return rc;
        return (rc = element(body, group_form, e)) < 0 ? rc : 1;
    }
    return 0;
}

/* Where each string field of UserValue goes, and its "has" flag. */
static llds_span *user_field(llds_user *u, uint32_t f, int **has) {
    *has = NULL;
    switch (f) {
    case 9:
        return &u->email;
    case 10:
        return &u->auth_domain;
    case 11:
        *has = &u->has_nickname;
        return &u->nickname;
    case 19:
        *has = &u->has_user_id;
        return &u->user_id;
    case 21:
        *has = &u->has_federated_identity;
        return &u->federated_identity;
    case 22:
        *has = &u->has_federated_provider;
        return &u->federated_provider;
    default:
        return NULL;
    }
}

int llds_user_value(llds_span body, llds_user *u) {
    llds_cur c = llds_cursor(body);
    memset(u, 0, sizeof *u);
    while (c.p < c.end) {
        uint32_t f, w;
        int *has;
        int rc = llds_tag(&c, &f, &w);
        llds_span *to = rc == LLDS_OK ? user_field(u, f, &has) : NULL;
        if (to != NULL) {
            rc =
                want(w, LLDS_LEN) < 0 ? LLDS_ERR_FIELD_TYPE : llds_len(&c, to);
            if (has != NULL)
                *has = 1;
        } else if (rc == LLDS_OK) {
            rc = llds_skip(&c, f, w);
        }
        if (rc < 0)
            return rc;
    }
    return LLDS_OK;
}
