/*
 * fuzz_datastore.c - the EntityProto decoder of csrc/datastore on arbitrary
 * bytes, taken as one record of an export's output file.
 *
 * The whole record is walked as leveldb_log._datastore walks it: every
 * property and its value, embedded entities (ENTITY_PROTO strings) to any
 * depth the decoder accepts, keys as the entity's and as values, path
 * elements and users. Checks:
 * - every span the decoder returns lies inside the input;
 * - every walk ends (the cursor moves forward at each step) with a property,
 *   the end, or one of the errors llds_error_text names;
 * - a walk that ends cleanly consumed its message exactly;
 * - walking the same bytes twice gives the same counts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds_entity.h"
#include "fuzz_check.h"

static const uint8_t *lo, *hi; /* the input */

static void inside(llds_span s) {
    FUZZ_CHECK(s.n == 0 || (s.p >= lo && s.p + s.n <= hi && s.p + s.n >= s.p));
}

static void known_error(int rc) {
    FUZZ_CHECK(rc >= LLDS_ERR_EMPTY_PATH && rc <= LLDS_OK);
    FUZZ_CHECK(llds_error_text(rc) != NULL);
}

static size_t walk_key(const llds_key *k) {
    inside(k->app);
    inside(k->name_space);
    inside(k->database);
    inside(k->path);
    llds_cur c = llds_cursor(k->path);
    llds_element e;
    size_t n = 0;
    int rc;
    const uint8_t *before = c.p;
    while ((rc = llds_path_next(&c, k->group_form, &e)) == 1) {
        FUZZ_CHECK(c.p > before && c.p <= c.end);
        before = c.p;
        inside(e.kind);
        inside(e.name);
        n++;
    }
    known_error(rc);
    return n;
}

static size_t walk_entity(llds_span s, int depth);

static size_t walk_value(const llds_property *p, int depth) {
    size_t n = 1;
    inside(p->name);
    inside(p->meaning_uri);
    inside(p->value.s);
    if (p->value.kind == LLDS_V_STRING &&
        p->meaning == LLDS_MEANING_ENTITY_PROTO && depth < 64)
        n += walk_entity(p->value.s, depth + 1);
    if (p->value.kind == LLDS_V_REFERENCE) {
        llds_key k;
        int rc = llds_reference_value(p->value.s, &k);
        known_error(rc);
        if (rc == LLDS_OK)
            n += walk_key(&k);
    }
    if (p->value.kind == LLDS_V_USER) {
        llds_user u;
        int rc = llds_user_value(p->value.s, &u);
        known_error(rc);
        if (rc == LLDS_OK) {
            inside(u.email);
            inside(u.auth_domain);
            inside(u.nickname);
            inside(u.user_id);
            inside(u.federated_identity);
            inside(u.federated_provider);
        }
    }
    return n;
}

static size_t walk_entity(llds_span s, int depth) {
    llds_cur c = llds_cursor(s);
    llds_property p;
    llds_span key = {s.p, 0};
    int has_key = 0, rc;
    size_t n = 0;
    const uint8_t *before = c.p;
    while ((rc = llds_entity_next(&c, &p, &key, &has_key)) == 1) {
        FUZZ_CHECK(c.p > before && c.p <= c.end);
        before = c.p;
        n += walk_value(&p, depth);
    }
    known_error(rc);
    if (rc == 0)
        FUZZ_CHECK(c.p == c.end);
    if (has_key) {
        llds_key k;
        inside(key);
        rc = llds_reference(key, &k);
        known_error(rc);
        if (rc == LLDS_OK)
            n += walk_key(&k);
    }
    return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A copy of exactly `size` bytes, so that ASan sees any read past it. */
    uint8_t *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy != NULL);
    if (size)
        memcpy(copy, data, size);
    lo = copy;
    hi = copy + size;
    llds_span all = {copy, size};
    size_t first = walk_entity(all, 0);
    FUZZ_CHECK(walk_entity(all, 0) == first);
    free(copy);
    return 0;
}
