/*
 * fuzz_check.h - FUZZ_CHECK, the invariant check of every libFuzzer harness:
 * a broken invariant prints the condition and aborts, so libFuzzer saves the
 * input as a crash artifact.
 */
#ifndef LLOG_FUZZ_CHECK_H
#define LLOG_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__,        \
                    __LINE__, #cond);                                         \
            abort();                                                          \
        }                                                                     \
    } while (0)

#endif /* LLOG_FUZZ_CHECK_H */
