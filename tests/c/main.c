/*
 * main.c - the test_core program: unit tests of the plain-C core (CRC-32C,
 * format tables, writer, reader), one suite per tests/c/test_NAME.c, run in
 * the order of HARNESS_SUITES (harness.h).
 *
 * Usage: test_core path/to/tests/golden/vectors.txt
 * With LLOG_TEST_REDUCED=1 in the environment the slowest tests take a
 * reduced input set, for valgrind (harness.h).
 *
 * The last line of output is "N passed, M failed" (counting checks); the
 * exit status is nonzero when any check failed.
 */
#include <stdio.h>

#include "crc32c.h"
#include "harness.h"

#define HARNESS_RUN_SUITE(name) suite_##name();

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/vectors.txt\n", argv[0]);
        printf("0 passed, 1 failed\n");
        return 2;
    }
    llog_crc32c_init(1);
    test_name = "load_vectors";
    if (!CHECK(load_vectors(argv[1]))) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    printf("vectors: %zu crc, %zu mask, %zu record\n", V.ncrc, V.nmask,
           V.nrec);
    harness_read_reduced();
    HARNESS_SUITES(HARNESS_RUN_SUITE)
    free_vectors();
    return harness_summary();
}
