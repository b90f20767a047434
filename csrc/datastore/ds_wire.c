/*
 * ds_wire.c - the wire format's primitives: varints, fixed values,
 * length-delimited fields, groups, and skipping what a reader does not know.
 */
#include "ds_wire.h"

const char *llds_error_text(int status) {
    switch (status) {
    case LLDS_ERR_TRUNCATED:
        return "a field runs past the end of its message";
    case LLDS_ERR_VARINT:
        return "a varint is longer than 10 bytes";
    case LLDS_ERR_WIRE_TYPE:
        return "an invalid wire type";
    case LLDS_ERR_GROUP:
        return "a group ends with another field's end tag";
    case LLDS_ERR_DEPTH:
        return "groups or embedded entities nest too deep";
    case LLDS_ERR_NO_KEY:
        return "an entity without a key";
    case LLDS_ERR_NO_NAME:
        return "a property without a name";
    case LLDS_ERR_NO_VALUE:
        return "a property without a value";
    case LLDS_ERR_TWO_VALUES:
        return "a property value of two kinds at once";
    case LLDS_ERR_NO_KIND:
        return "a key path element without a kind";
    case LLDS_ERR_FIELD_TYPE:
        return "a field with the wrong wire type";
    case LLDS_ERR_EMPTY_PATH:
        return "an entity key with an empty path";
    default:
        return "malformed";
    }
}

int llds_varint(llds_cur *c, uint64_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (c->p >= c->end)
            return LLDS_ERR_TRUNCATED;
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7F) << (shift < 64 ? shift : 63);
        if (b < 0x80) {
            *out = v;
            return LLDS_OK;
        }
    }
    return LLDS_ERR_VARINT;
}

int llds_fixed64(llds_cur *c, uint64_t *out) {
    if ((size_t)(c->end - c->p) < 8)
        return LLDS_ERR_TRUNCATED;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) /* little-endian, any alignment */
        v = (v << 8) | c->p[i];
    c->p += 8;
    *out = v;
    return LLDS_OK;
}

int llds_len(llds_cur *c, llds_span *out) {
    uint64_t n;
    int rc = llds_varint(c, &n);
    if (rc < 0)
        return rc;
    if (n > (uint64_t)(c->end - c->p))
        return LLDS_ERR_TRUNCATED;
    out->p = c->p;
    out->n = (size_t)n;
    c->p += n;
    return LLDS_OK;
}

int llds_tag(llds_cur *c, uint32_t *field, uint32_t *wire) {
    uint64_t t;
    int rc = llds_varint(c, &t);
    if (rc < 0)
        return rc;
    if ((t >> 3) == 0 || (t >> 3) > 0x1FFFFFFF)
        return LLDS_ERR_WIRE_TYPE; /* field number 0 or out of range */
    *field = (uint32_t)(t >> 3);
    *wire = (uint32_t)(t & 7);
    return LLDS_OK;
}

/* Skips fields up to the end tag of group `field`, `depth` groups deep. */
static int skip_group(llds_cur *c, uint32_t field, int depth) {
    if (depth > LLDS_MAX_GROUP_DEPTH)
        return LLDS_ERR_DEPTH;
    for (;;) {
        uint32_t f, w;
        int rc = llds_tag(c, &f, &w);
        if (rc < 0)
            return rc;
        if (w == LLDS_EGROUP)
            return f == field ? LLDS_OK : LLDS_ERR_GROUP;
        if (w == LLDS_SGROUP)
            rc = skip_group(c, f, depth + 1);
        else
            rc = llds_skip(c, f, w);
        if (rc < 0)
            return rc;
    }
}

int llds_skip(llds_cur *c, uint32_t field, uint32_t wire) {
    uint64_t v;
    llds_span s;
    switch (wire) {
    case LLDS_VARINT:
        return llds_varint(c, &v);
    case LLDS_I64:
        return llds_fixed64(c, &v);
    case LLDS_LEN:
        return llds_len(c, &s);
    case LLDS_SGROUP:
        return skip_group(c, field, 1);
    case LLDS_I32:
        if ((size_t)(c->end - c->p) < 4)
            return LLDS_ERR_TRUNCATED;
        c->p += 4;
        return LLDS_OK;
    default: /* a group end with no start, or wire type 6 or 7 */
        return LLDS_ERR_WIRE_TYPE;
    }
}

int llds_group(llds_cur *c, uint32_t field, llds_span *body) {
    const uint8_t *start = c->p;
    for (;;) {
        const uint8_t *at = c->p;
        uint32_t f, w;
        int rc = llds_tag(c, &f, &w);
        if (rc < 0)
            return rc;
        if (w == LLDS_EGROUP) {
            if (f != field)
                return LLDS_ERR_GROUP;
            body->p = start;
            body->n = (size_t)(at - start);
            return LLDS_OK;
        }
        rc = w == LLDS_SGROUP ? skip_group(c, f, 2) : llds_skip(c, f, w);
        if (rc < 0)
            return rc;
    }
}
