/* log_detect.c - telling the dialects apart (the rule is in log_detect.h). */
#include "log_detect.h"

/* What the records walked so far point to. */
enum sign {
    SIGN_LEGACY = 1,     /* a type every dialect writes */
    SIGN_RECYCLABLE = 2, /* a type RocksDB and Pebble write alike */
    SIGN_ROCKSDB = 4,
    SIGN_PEBBLE = 8
};

/* The walk's state: where it is, and the log number once known. */
typedef struct walk {
    const uint8_t *p;
    size_t len, pos;
    int has_log_number;
    uint64_t log_number;
} walk;

/* The sign of a type in dialect d, with the header size d gives it: LevelDB
 * knows it (legacy); the other dialect frames it alike (recyclable); only
 * d writes it. */
static int sign_of(llog_dialect d, unsigned type) {
    llog_dialect other =
        d == LLOG_DIALECT_ROCKSDB ? LLOG_DIALECT_PEBBLE : LLOG_DIALECT_ROCKSDB;
    if (llog_type_role(LLOG_DIALECT_LEVELDB, type) != LLOG_ROLE_UNKNOWN)
        return SIGN_LEGACY;
    if (llog_type_role(other, type) != LLOG_ROLE_UNKNOWN &&
        llog_type_header_size(other, type) == llog_type_header_size(d, type))
        return SIGN_RECYCLABLE;
    return d == LLOG_DIALECT_ROCKSDB ? SIGN_ROCKSDB : SIGN_PEBBLE;
}

/* The record at w->pos read as dialect d writes it: its size when whole
 * and intact (its header in *h), else 0. RocksDB writes its compression
 * record first, with a 4-byte payload, and nowhere else. */
static size_t record_as(const walk *w, llog_dialect d, llog_header *h) {
    const uint8_t *at = w->p + w->pos;
    size_t left = w->len - w->pos;
    if (llog_header_region(llog_header_types(d), at, left, 1, h) !=
            LLOG_REGION_RECORD ||
        llog_type_role(d, h->type) == LLOG_ROLE_UNKNOWN)
        return 0;
    if (d == LLOG_DIALECT_ROCKSDB && h->type == LLOG_RDB_SET_COMPRESSION &&
        (w->pos != 0 || h->length != 4))
        return 0;
    if (!llog_checksum_ok_dialect(at, h, at + h->header_size))
        return 0;
    return h->header_size + h->length;
}

/* The signs of the record at w->pos (stepping over it), or 0 where the walk
 * stops; SIGN_PEBBLE | its own flag for Pebble's trailer, which ends it. */
static int step(walk *w) {
    static const llog_dialect order[] = {LLOG_DIALECT_PEBBLE,
                                         LLOG_DIALECT_ROCKSDB};
    llog_header h = {0, 0, 0, LLOG_HEADER_SIZE, 0, 0};
    if (w->len - w->pos < LLOG_HEADER_SIZE)
        return 0;
    if (llog_header_region(llog_header_types(LLOG_DIALECT_PEBBLE),
                           w->p + w->pos, w->len - w->pos, 1,
                           &h) == LLOG_REGION_RECORD &&
        llog_header_pebble_trailer(LLOG_DIALECT_PEBBLE, &h, w->has_log_number,
                                   w->log_number))
        return SIGN_PEBBLE | 16;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        size_t size = record_as(w, order[i], &h);
        if (size == 0)
            continue;
        llog_header_learn_log_number(order[i], &h, &w->has_log_number,
                                     &w->log_number);
        w->pos += size;
        return sign_of(order[i], h.type);
    }
    return 0;
}

static llog_detection verdict(int signs) {
    if ((signs & SIGN_PEBBLE) && (signs & SIGN_ROCKSDB))
        return (llog_detection){LLOG_DIALECT_COUNT,
                                "signs of both RocksDB and Pebble"};
    if (signs & SIGN_PEBBLE)
        return (llog_detection){LLOG_DIALECT_PEBBLE,
                                "a walSync record or Pebble's trailer"};
    if (signs & SIGN_ROCKSDB)
        return (llog_detection){LLOG_DIALECT_ROCKSDB,
                                "a record type only RocksDB writes"};
    if (signs & SIGN_RECYCLABLE)
        return (llog_detection){LLOG_DIALECT_ROCKSDB,
                                "recyclable records, which LevelDB never "
                                "writes"};
    if (signs & SIGN_LEGACY)
        return (llog_detection){LLOG_DIALECT_LEVELDB,
                                "LevelDB's record types only"};
    return (llog_detection){LLOG_DIALECT_COUNT,
                            "no intact record at the start"};
}

llog_detection llog_detect_dialect(const uint8_t *p, size_t len,
                                   int has_log_number, uint64_t log_number) {
    walk w = {p, len < LLOG_BLOCK_SIZE ? len : LLOG_BLOCK_SIZE, 0,
              has_log_number, log_number};
    int signs = 0, s;
    while ((s = step(&w)) != 0) {
        signs |= s;
        if (s & 16)
            break;
    }
    return verdict(signs);
}
