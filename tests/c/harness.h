/*
 * harness.h - what every C unit test shares: the checks and their counters,
 * small utilities (allocation, a seeded random generator, growable byte
 * buffers), the golden vectors (tests/golden/vectors.txt) and a record
 * encoder written from docs/format.md.
 *
 * No framework: the CHECK macros count passed and failed checks and print
 * file:line for every failure (the first few of each test); main.c prints
 * "N passed, M failed" (counting checks) last and exits nonzero when any
 * check failed.
 *
 * Expected values come from docs/format.md, log_reader.h and the golden
 * vectors, or from small independent models (ref_crc32c.h, the encoder
 * below), never from the code under test.
 */
#ifndef LLOG_TESTS_HARNESS_H
#define LLOG_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "log_header.h"
#include "ref_crc32c.h"

#define B LLOG_BLOCK_SIZE
#define H LLOG_HEADER_SIZE

/* ---- the suites --------------------------------------------------------- */

/*
 * The suites of the test_core program, in the order main.c runs them. Each
 * is a file tests/c/test_NAME.c defining void suite_NAME(void), which RUNs
 * its tests. Adding a suite is one line: write tests/c/test_NAME.c and add
 * X(NAME) to this list (at the end: tests draw on one random generator, so
 * the order of the earlier ones stays). The builds (tests/core/test_c_core.py,
 * tests/meta/test_sanitized.py, tests/c/Makefile) compile every .c file of
 * tests/c except test_crc32c.c, a program of its own.
 */
#define HARNESS_SUITES(X)                                                     \
    X(checksums)                                                              \
    X(format)                                                                 \
    X(writer)                                                                 \
    X(reader)                                                                 \
    X(ranges)                                                                 \
    X(append)                                                                 \
    X(dialects_reading)                                                       \
    X(dialects_metadata)                                                      \
    X(dialects_writer)                                                        \
    X(peer_log_test)                                                          \
    X(header)                                                                 \
    X(recovery)                                                               \
    X(tail)                                                                   \
    X(regions)

#define HARNESS_DECLARE_SUITE(name) void suite_##name(void);
HARNESS_SUITES(HARNESS_DECLARE_SUITE)
#undef HARNESS_DECLARE_SUITE

/* ---- checks ------------------------------------------------------------- */

extern const char *test_name; /* the test running, printed with failures */

int pass(void);
int failure(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Context for the failure just printed (silent once failures are muted). */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int check_true(int ok, const char *expr, const char *file, int line);
int check_eq(unsigned long long a, unsigned long long b, const char *ea,
             const char *eb, const char *file, int line);
int check_str(const char *a, const char *b, const char *ea, const char *eb,
              const char *file, int line);
int check_mem(const void *a, size_t alen, const void *b, size_t blen,
              const char *ea, const char *eb, const char *file, int line);

/* Each returns 1 when the check passed, so failures can add a note(). */
#define CHECK(c) check_true((c) != 0, #c, __FILE__, __LINE__)
#define CHECK_EQ(a, b)                                                        \
    check_eq((unsigned long long)(a), (unsigned long long)(b), #a, #b,        \
             __FILE__, __LINE__)
#define CHECK_STR(a, b) check_str((a), (b), #a, #b, __FILE__, __LINE__)
#define CHECK_MEM(a, alen, b, blen)                                           \
    check_mem((a), (alen), (b), (blen), #a, #b, __FILE__, __LINE__)

/* Runs one test and prints its line: "ok" or "FAIL", checks made. */
void run_test(const char *name, void (*fn)(void));
#define RUN(fn) run_test(#fn, fn)

/* Prints the totals ("N passed, M failed" last); the exit status. */
int harness_summary(void);

/* ---- the reduced input set ---------------------------------------------- */

/*
 * Valgrind runs these programs some 50 times slower than natively, so under
 * it (tests/meta/test_sanitized.py) the slowest tests take a reduced input
 * set that reaches the same code paths: fewer alignments, lengths, rounds,
 * cut points or records. So do the ASan + UBSan build and QEMU's runs; the
 * full matrix runs natively at -O2 (tests/core/test_c_core.py).
 * LLOG_TEST_REDUCED=1 in the environment chooses the reduced set; without it
 * every input runs.
 */
extern int harness_reduced;

/* Reads LLOG_TEST_REDUCED; prints "reduced input set" when it is on. */
void harness_read_reduced(void);

/* full in a full run, reduced in a reduced one: a count, a bound, a step. */
size_t harness_pick(size_t full, size_t reduced);

/* Whether to run case i: always in a full run, one in `every` (i a
 * multiple of it) in a reduced one. */
int harness_keep(size_t i, size_t every);

/* Whether to check a CRC of len bytes at offset align (of 64): always in a
 * full run; in a reduced one every offset of the lengths up to 320 bytes,
 * then the lengths within 8 of a block size the paths switch on
 * (crc32c_x86.c) and one in 13 of the others, at one offset in 8 that
 * turns with the length. */
int harness_keep_crc(size_t len, size_t align);

/* ---- small utilities ---------------------------------------------------- */

/* malloc and realloc that exit on failure (and never ask for 0 bytes). */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);

/* The random generator's state (xorshift64*): set it to reproduce. */
extern uint64_t rng;
uint64_t rnd(void);
size_t rnd_below(size_t n);
void rnd_fill(uint8_t *p, size_t n);

/* A growable byte buffer: logs are built in these. */
typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf;

uint8_t *buf_grow(buf *b, size_t n); /* appends n bytes; returns them */
void buf_put(buf *b, const void *data, size_t n);
void buf_bytes(buf *b, int byte, size_t n);
void buf_zero_to(buf *b, size_t offset); /* zero bytes up to offset */
void buf_free(buf *b);

/* ---- the record encoder (docs/format.md) -------------------------------- */

/* Appends a raw header; returns its offset in b. */
size_t put_header(buf *b, uint32_t masked, size_t length, unsigned type);
/* Appends a physical record with a correct checksum; returns its offset. */
size_t put_phys(buf *b, unsigned type, const void *payload, size_t n);
/* What a LevelDB writer appends for one record when the log holds `offset`
 * bytes; *first_header gets the record's offset. Returns the bytes added. */
size_t ref_encode(uint64_t offset, const uint8_t *data, size_t len, buf *out,
                  uint64_t *first_header);

/* ---- golden vectors ----------------------------------------------------- */

/* Lowercase hex or "-" (empty) to bytes (free *out); 0 when malformed. */
int unhex(const char *s, uint8_t **out, size_t *len);

typedef struct crc_vec {
    uint8_t *data;
    size_t len;
    uint32_t crc;
} crc_vec;

typedef struct mask_vec {
    uint32_t crc, masked;
} mask_vec;

typedef struct rec_vec {
    unsigned type;
    uint8_t *payload;
    size_t plen;
    uint8_t *rec;
    size_t rlen;
} rec_vec;

#define MAX_VECTORS 512

/* The vectors load_vectors read: "crc", "mask" and "record" lines. */
typedef struct golden_vectors {
    crc_vec crc[MAX_VECTORS];
    size_t ncrc;
    mask_vec mask[MAX_VECTORS];
    size_t nmask;
    rec_vec rec[MAX_VECTORS];
    size_t nrec;
} golden_vectors;

extern golden_vectors V;

int load_vectors(const char *path); /* 0 (and a message) when malformed */
void free_vectors(void);

#endif /* LLOG_TESTS_HARNESS_H */
