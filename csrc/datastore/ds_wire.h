/*
 * ds_wire.h - the protocol buffer wire format as the legacy EntityProto
 * uses it (proto2, with groups): a cursor over caller bytes, varints,
 * fixed 64-bit values, length-delimited fields, and skipping any field.
 * Plain C, no Python; every non-static symbol starts with llds_.
 */
#ifndef LLDS_WIRE_H
#define LLDS_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Wire types. */
enum {
    LLDS_VARINT = 0,
    LLDS_I64 = 1,
    LLDS_LEN = 2,
    LLDS_SGROUP = 3,
    LLDS_EGROUP = 4,
    LLDS_I32 = 5
};

/* Groups nest at most this deep: deeper input is refused, not recursed. */
#define LLDS_MAX_GROUP_DEPTH 32

/* Errors: what went wrong, as a negative number llds_error_text names. */
typedef enum {
    LLDS_OK = 0,
    LLDS_ERR_TRUNCATED = -1,   /* a field runs past the end */
    LLDS_ERR_VARINT = -2,      /* a varint longer than 10 bytes */
    LLDS_ERR_WIRE_TYPE = -3,   /* wire type 6 or 7, or a stray group end */
    LLDS_ERR_GROUP = -4,       /* a group ends with another field's tag */
    LLDS_ERR_DEPTH = -5,       /* groups or entities nested too deep */
    LLDS_ERR_NO_KEY = -6,      /* an entity without its key */
    LLDS_ERR_NO_NAME = -7,     /* a property without a name */
    LLDS_ERR_NO_VALUE = -8,    /* a property without its value */
    LLDS_ERR_TWO_VALUES = -9,  /* a value of two kinds at once */
    LLDS_ERR_NO_KIND = -10,    /* a path element without its kind */
    LLDS_ERR_FIELD_TYPE = -11, /* a known field with the wrong wire type */
    LLDS_ERR_EMPTY_PATH = -12, /* an entity key with no path element */
} llds_status;

const char *llds_error_text(int status);

/* Bytes of the caller's buffer. */
typedef struct {
    const uint8_t *p;
    size_t n;
} llds_span;

/* A cursor: the next byte and the end. */
typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} llds_cur;

static inline llds_cur llds_cursor(llds_span s) {
    llds_cur c = {s.p, s.p + s.n};
    return c;
}

int llds_varint(llds_cur *c, uint64_t *out);
int llds_fixed64(llds_cur *c, uint64_t *out);
/* The bytes of a length-delimited field whose tag was just read. */
int llds_len(llds_cur *c, llds_span *out);
/* Reads a tag: field number and wire type. */
int llds_tag(llds_cur *c, uint32_t *field, uint32_t *wire);
/* Skips the value of a field whose tag was just read; a group up to and
 * including its end tag. */
int llds_skip(llds_cur *c, uint32_t field, uint32_t wire);
/* The body of a group whose start tag (field) was just read: the bytes
 * before its end tag, which the cursor is then past. */
int llds_group(llds_cur *c, uint32_t field, llds_span *body);

#endif
