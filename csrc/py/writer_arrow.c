/*
 * writer_arrow.c - Writer.write_many over Arrow data (the Arrow C data and
 * C stream interfaces, arrow.h): any object exporting __arrow_c_stream__
 * (chunked data too) or __arrow_c_array__ of binary, large_binary, string
 * or large_string (and binary_view, string_view: polars makes those).
 * Every chunk is taken and checked before writer_write.c writes the first
 * value, straight from the Arrow buffers (no Python object per value):
 * nulls raise ValueError and other types TypeError, with nothing written.
 * This file never sees a Writer: it hands values to a callback.
 */
#include "arrow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct llpy_arrow_data {
    int large;                 /* 64-bit offsets (large_binary/string) */
    int view;                  /* binary_view, string_view */
    size_t count, cap;         /* chunks */
    struct ArrowArray *chunks; /* moved here; released by llpy_arrow_free */
    uint64_t rows;             /* values in the chunks so far */
};

int llpy_arrow_exportable(PyObject *obj) {
    return PyObject_HasAttrString(obj, "__arrow_c_stream__") ||
           PyObject_HasAttrString(obj, "__arrow_c_array__");
}

/* Release callbacks may be Python code (ctypes): none runs with an
 * exception set, which is kept across them. */
static void release_array(struct ArrowArray *a) {
    PyObject *exc = PyErr_GetRaisedException();
    a->release(a);
    PyErr_SetRaisedException(exc);
}

static void release_schema(struct ArrowSchema *s) {
    PyObject *exc = PyErr_GetRaisedException();
    if (s->release != NULL)
        s->release(s);
    PyErr_SetRaisedException(exc);
}

void llpy_arrow_free(llpy_arrow_data *d) {
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->count; i++)
        if (d->chunks[i].release != NULL)
            release_array(&d->chunks[i]);
    free(d->chunks);
    free(d);
}

/* A readable name for a format string of the C data interface. */
static const char *format_name(const char *f) {
    static const char *const names[][2] = {
        {"n", "null"},     {"b", "bool"},        {"c", "int8"},
        {"C", "uint8"},    {"s", "int16"},       {"S", "uint16"},
        {"i", "int32"},    {"I", "uint32"},      {"l", "int64"},
        {"L", "uint64"},   {"e", "float16"},     {"f", "float32"},
        {"g", "float64"},  {"+l", "list"},       {"+L", "large_list"},
        {"+s", "struct"},  {"+m", "map"},        {"tdD", "date32"},
        {"tdm", "date64"}, {"+vl", "list_view"}, {"+w", "fixed_size_list"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(f, names[i][0]) == 0)
            return names[i][1];
    return NULL;
}

/* Sets d->large from the schema's type; 0, or -1 with TypeError. */
static int check_schema(llpy_arrow_data *d, const struct ArrowSchema *s) {
    const char *f = s->format ? s->format : "";
    if (s->dictionary == NULL && f[0] != '\0' && f[1] == '\0' &&
        strchr("zZuU", f[0]) != NULL) {
        d->large = f[0] == 'Z' || f[0] == 'U';
        return 0;
    }
    if (s->dictionary == NULL &&
        (strcmp(f, "vz") == 0 || strcmp(f, "vu") == 0)) {
        d->view = 1;
        return 0;
    }
    const char *name = s->dictionary ? "dictionary" : format_name(f);
    /* binary_view and string_view are taken too (polars makes them). */
    if (name != NULL)
        PyErr_Format(PyExc_TypeError,
                     "write_many takes Arrow binary, large_binary, string or "
                     "large_string data (or a view type), not %s",
                     name);
    else
        PyErr_Format(PyExc_TypeError,
                     "write_many takes Arrow binary, large_binary, string or "
                     "large_string data (or a view type), not the Arrow type "
                     "of format '%.50s'",
                     f);
    return -1;
}

/* The offset of value i of a (its array offset included). */
static int64_t value_offset(const llpy_arrow_data *d,
                            const struct ArrowArray *a, int64_t i) {
    const void *offsets = a->buffers[1];
    if (d->large)
        return ((const int64_t *)offsets)[a->offset + i];
    return ((const int32_t *)offsets)[a->offset + i];
}

/* Value i of a binary_view or string_view array: its bytes and length;
 * NULL when the view points outside the array's buffers. */
static const uint8_t *view_value(const struct ArrowArray *a, int64_t i,
                                 size_t *n) {
    const uint8_t *v = (const uint8_t *)a->buffers[1] + 16 * (a->offset + i);
    int32_t len, buf, at;
    memcpy(&len, v, 4);
    if (len < 0)
        return NULL;
    *n = (size_t)len;
    if (len <= 12)
        return v + 4; /* inline */
    memcpy(&buf, v + 8, 4);
    memcpy(&at, v + 12, 4);
    int64_t variadic = a->n_buffers - 3;
    if (buf < 0 || buf >= variadic || at < 0)
        return NULL;
    const int64_t *sizes = a->buffers[a->n_buffers - 1];
    if (sizes == NULL || (int64_t)at + len > sizes[buf])
        return NULL;
    return (const uint8_t *)a->buffers[2 + buf] + at;
}

/* Value i of a chunk: its bytes and length (n). */
static const uint8_t *chunk_value(const llpy_arrow_data *d,
                                  const struct ArrowArray *a, int64_t i,
                                  size_t *n) {
    static const uint8_t empty[1];
    if (d->view)
        return view_value(a, i, n);
    int64_t start = value_offset(d, a, i), end = value_offset(d, a, i + 1);
    const uint8_t *data = a->buffers[2];
    *n = (size_t)(end - start);
    return end > start ? data + start : empty;
}

/* 1 when every value of a lies where its buffers say, else 0. */
static int values_sane(const llpy_arrow_data *d, const struct ArrowArray *a) {
    if (d->view) {
        size_t n;
        for (int64_t i = 0; i < a->length; i++)
            if (view_value(a, i, &n) == NULL)
                return 0;
        return 1;
    }
    int64_t prev = a->length > 0 ? value_offset(d, a, 0) : 0;
    for (int64_t i = 1; prev >= 0 && i <= a->length; i++) {
        int64_t next = value_offset(d, a, i);
        prev = next >= prev ? next : -1;
    }
    return prev >= 0 && (a->length == 0 || prev == 0 || a->buffers[2]);
}

/* The index of a's first null, or -1 when it has none. */
static int64_t first_null(const struct ArrowArray *a) {
    if (a->null_count == 0 || a->length == 0)
        return -1;
    const uint8_t *valid = a->buffers[0];
    if (valid == NULL)
        return a->null_count > 0 ? 0 : -1; /* nulls without a bitmap */
    for (int64_t i = 0; i < a->length; i++) {
        int64_t bit = a->offset + i;
        if (!(valid[bit / 8] & (1u << (bit % 8))))
            return i;
    }
    return -1;
}

/* Checks a chunk: its layout, no nulls, offsets that never go back. 0, or
 * -1 with an exception set. */
static int check_chunk(const llpy_arrow_data *d, const struct ArrowArray *a) {
    if ((d->view ? a->n_buffers < 3 : a->n_buffers != 3) || a->length < 0 ||
        a->offset < 0 || (a->length > 0 && a->buffers[1] == NULL)) {
        PyErr_SetString(PyExc_ValueError,
                        "write_many: malformed Arrow array (buffers, length "
                        "or offset)");
        return -1;
    }
    int64_t null_at = first_null(a);
    if (null_at >= 0) {
        PyErr_Format(PyExc_ValueError,
                     "write_many cannot write nulls: value %llu of the Arrow "
                     "data is null (nothing was written)",
                     (unsigned long long)(d->rows + (uint64_t)null_at));
        return -1;
    }
    if (!values_sane(d, a)) {
        PyErr_SetString(
            PyExc_ValueError,
            "write_many: malformed Arrow array (offsets or views)");
        return -1;
    }
    return 0;
}

/* Checks a chunk and moves it into d (or releases it); 0, or -1. */
static int take_chunk(llpy_arrow_data *d, struct ArrowArray *a) {
    if (check_chunk(d, a) < 0) {
        release_array(a);
        return -1;
    }
    if (d->count == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        struct ArrowArray *grown = realloc(d->chunks, cap * sizeof *grown);
        if (grown == NULL) {
            PyErr_NoMemory();
            release_array(a);
            return -1;
        }
        d->chunks = grown;
        d->cap = cap;
    }
    d->chunks[d->count++] = *a; /* moved: the original is released */
    a->release = NULL;
    d->rows += (uint64_t)a->length;
    return 0;
}

/* The capsule's pointer, after checking the object is one named name. */
static void *capsule_pointer(PyObject *cap, const char *name) {
    if (!PyCapsule_IsValid(cap, name)) {
        PyErr_Format(PyExc_TypeError, "write_many: expected a \"%s\" capsule",
                     name);
        return NULL;
    }
    return PyCapsule_GetPointer(cap, name);
}

static int import_array(llpy_arrow_data *d, PyObject *obj) {
    PyObject *pair = PyObject_CallMethod(obj, "__arrow_c_array__", NULL);
    if (pair == NULL)
        return -1;
    int rc = -1;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "write_many: __arrow_c_array__ did not return a "
                        "(schema, array) pair");
    } else {
        struct ArrowSchema *s =
            capsule_pointer(PyTuple_GET_ITEM(pair, 0), "arrow_schema");
        struct ArrowArray *a =
            s ? capsule_pointer(PyTuple_GET_ITEM(pair, 1), "arrow_array")
              : NULL;
        if (a != NULL && a->release == NULL)
            PyErr_SetString(PyExc_ValueError,
                            "write_many: the Arrow array was released");
        else if (a != NULL && check_schema(d, s) == 0)
            rc = take_chunk(d, a);
    }
    Py_DECREF(pair);
    return rc;
}

/* Raises OSError for a stream that failed with code rc. */
static void stream_failed(struct ArrowArrayStream *s, int rc) {
    const char *why = s->get_last_error ? s->get_last_error(s) : NULL;
    PyErr_Format(PyExc_OSError, "write_many: the Arrow stream failed: %s",
                 why ? why : strerror(rc));
}

/* Reads the stream to its end, every chunk into d; 0, or -1. */
static int read_stream(llpy_arrow_data *d, struct ArrowArrayStream *s) {
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    int rc = s->get_schema(s, &schema);
    if (rc != 0) {
        stream_failed(s, rc);
        return -1;
    }
    rc = check_schema(d, &schema);
    release_schema(&schema);
    while (rc == 0) {
        struct ArrowArray a;
        memset(&a, 0, sizeof a);
        int code = s->get_next(s, &a);
        if (code != 0) {
            stream_failed(s, code);
            return -1;
        }
        if (a.release == NULL)
            return 0; /* the end */
        rc = take_chunk(d, &a);
    }
    return rc;
}

static int import_stream(llpy_arrow_data *d, PyObject *obj) {
    PyObject *cap = PyObject_CallMethod(obj, "__arrow_c_stream__", NULL);
    if (cap == NULL)
        return -1;
    struct ArrowArrayStream *s = capsule_pointer(cap, "arrow_array_stream");
    int rc = -1;
    if (s != NULL && s->release == NULL)
        PyErr_SetString(PyExc_ValueError,
                        "write_many: the Arrow stream was released");
    else if (s != NULL)
        rc = read_stream(d, s);
    Py_DECREF(cap); /* its destructor releases the stream */
    return rc;
}

llpy_arrow_data *llpy_arrow_import(PyObject *obj) {
    llpy_arrow_data *d = calloc(1, sizeof *d);
    if (d == NULL)
        return (llpy_arrow_data *)PyErr_NoMemory();
    int rc = PyObject_HasAttrString(obj, "__arrow_c_stream__")
                 ? import_stream(d, obj)
                 : import_array(d, obj);
    if (rc < 0) {
        llpy_arrow_free(d);
        return NULL;
    }
    return d;
}

Py_ssize_t llpy_arrow_write(const llpy_arrow_data *d, llpy_arrow_put_fn put,
                            void *ctx) {
    const uint8_t *data[LLPY_ARROW_GROUP];
    size_t len[LLPY_ARROW_GROUP], k = 0;
    Py_ssize_t count = 0;
    for (size_t c = 0; c < d->count; c++) {
        const struct ArrowArray *a = &d->chunks[c];
        for (int64_t i = 0; i < a->length; i++) {
            data[k] = chunk_value(d, a, i, &len[k]);
            if (++k == LLPY_ARROW_GROUP) {
                if (put(ctx, data, len, k) < 0)
                    return -1;
                count += (Py_ssize_t)k;
                k = 0;
            }
        }
    }
    if (k > 0 && put(ctx, data, len, k) < 0)
        return -1;
    return count + (Py_ssize_t)k;
}
