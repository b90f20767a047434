/*
 * crc_speed.c - CRC-32C throughput of every implementation this CPU runs.
 *
 * Build and run (from the repository root):
 *   gcc -O2 -std=c11 -Icsrc/core bench/crc_speed.c csrc/core/crc32c.c -o /tmp/crc_speed
 *   /tmp/crc_speed            (--quick: fewer, shorter runs)
 *
 * Each figure is the median GB/s (10^9 bytes per second) of several timed
 * runs after a warm-up; a run repeats the CRC of one buffer (independent
 * calls from 0) for about 20 ms. The buffers of 4 KiB and 32 KiB stay in the
 * L1 cache; 1 MiB reaches the L2 cache or beyond.
 */
#define _POSIX_C_SOURCE 199309L

#include "crc32c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const size_t sizes[] = {64, 4096, 32768, 1u << 20};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static volatile uint32_t sink; /* keeps the work observable */

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Nanoseconds for iters calls of implementation impl (-1: dispatched). */
static double time_calls(int impl, const uint8_t *buf, size_t len,
                         long iters) {
    uint32_t acc = 0;
    double t0 = now_ns();
    for (long i = 0; i < iters; i++)
        acc ^= impl < 0 ? llog_crc32c_extend(0, buf, len)
                        : llog_crc32c_impl_extend(impl, 0, buf, len);
    double t1 = now_ns();
    sink = acc;
    return t1 - t0;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median GB/s over runs timed runs of about run_ns each, after a warm-up
 * that also sizes the runs. */
static double gbps(int impl, const uint8_t *buf, size_t len, int runs,
                   double run_ns) {
    long iters = 1;
    while (time_calls(impl, buf, len, iters) < run_ns / 8)
        iters *= 2;
    iters *= 8;
    double rate[32];
    for (int r = 0; r < runs; r++)
        rate[r] =
            (double)len * (double)iters / time_calls(impl, buf, len, iters);
    qsort(rate, (size_t)runs, sizeof rate[0], by_value);
    return rate[runs / 2];
}

static void row(const char *label, int impl, const uint8_t *buf, int runs,
                double run_ns) {
    printf("%-28s", label);
    for (size_t s = 0; s < N_SIZES; s++) {
        printf(" %9.2f", gbps(impl, buf, sizes[s], runs, run_ns));
        fflush(stdout);
    }
    printf("\n");
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int runs = quick ? 3 : 9;
    double run_ns = quick ? 2e6 : 2e7;
    size_t max = sizes[N_SIZES - 1];
    uint8_t *buf = aligned_alloc(64, max);
    if (buf == NULL)
        return 2;
    for (size_t i = 0; i < max; i++)
        buf[i] = (uint8_t)(i * 2654435761u >> 13);
    llog_crc32c_init(1);
    printf("CRC-32C, GB/s (median of %d)  %9s %9s %9s %9s\n", runs, "64 B",
           "4 KiB", "32 KiB", "1 MiB");
    for (int i = 0; i < llog_crc32c_impl_count(); i++)
        if (llog_crc32c_impl_usable(i))
            row(llog_crc32c_impl_name(i), i, buf, runs, run_ns);
    char label[64];
    snprintf(label, sizeof label, "extend (%s)", llog_crc32c_implementation());
    row(label, -1, buf, runs, run_ns);
    free(buf);
    return 0;
}
