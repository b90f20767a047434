/*
 * crc_speed.c - CRC-32C throughput of every implementation this CPU runs,
 * measured side by side.
 *
 * Build and run (from the repository root):
 *   gcc -O2 -std=c11 -Icsrc/core bench/crc_speed.c csrc/core/crc32c*.c \
 *       -o /tmp/crc_speed
 *   /tmp/crc_speed [--quick] [ROUNDS]
 *
 * Each figure is the median GB/s (10^9 bytes per second of process CPU
 * time) over ROUNDS rounds (default 9, --quick 3). A round times every
 * implementation, and the dispatched llog_crc32c_extend, once at every size
 * in turn, each for about 2 ms (--quick 0.5 ms) of repeated CRCs of one
 * buffer (independent calls from 0), so that all of them see the same load
 * on a shared machine. A '*' marks the fastest implementation at each size.
 * 4 KiB and 32 KiB stay in the L1 cache; 1 MiB reaches the L2 cache or
 * beyond; 16 MiB comes from the L3 cache or memory.
 */
#define _POSIX_C_SOURCE 199309L

#include "crc32c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const size_t sizes[] = {64, 256, 4096, 32768, 1u << 20, 16u << 20};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
#define MAX_ROWS 16
#define MAX_ROUNDS 101

static volatile uint32_t sink; /* keeps the work observable */

static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Nanoseconds for iters calls of implementation impl (-1: dispatched). */
static double time_calls(int impl, const uint8_t *buf, size_t len,
                         long iters) {
    uint32_t acc = 0;
    double t0 = cpu_ns();
    for (long i = 0; i < iters; i++)
        acc ^= impl < 0 ? llog_crc32c_extend(0, buf, len)
                        : llog_crc32c_impl_extend(impl, 0, buf, len);
    double t1 = cpu_ns();
    sink = acc;
    return t1 - t0;
}

/* Calls of the fastest implementation that take about run_ns (at least 1),
 * found by doubling; also warms caches and clocks up. */
static long calls_for(int impl, const uint8_t *buf, size_t len,
                      double run_ns) {
    long iters = 1;
    double t;
    while ((t = time_calls(impl, buf, len, iters)) < run_ns / 4)
        iters *= 2;
    long n = (long)((double)iters * run_ns / (t > 1 ? t : 1));
    return n > 0 ? n : 1;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int rounds = quick ? 3 : 9;
    if (argc > 1 + quick)
        rounds = atoi(argv[1 + quick]);
    if (rounds < 1 || rounds > MAX_ROUNDS)
        return 2;
    double run_ns = quick ? 5e5 : 2e6;
    size_t max = sizes[N_SIZES - 1];
    uint8_t *buf = aligned_alloc(64, max);
    if (buf == NULL)
        return 2;
    for (size_t i = 0; i < max; i++)
        buf[i] = (uint8_t)(i * 2654435761u >> 13);
    llog_crc32c_init(1);

    int impl[MAX_ROWS], rows = 0; /* usable ones, then -1: dispatched */
    for (int i = 0; i < llog_crc32c_impl_count() && rows < MAX_ROWS - 1; i++)
        if (llog_crc32c_impl_usable(i))
            impl[rows++] = i;
    impl[rows++] = -1;
    static long calls[MAX_ROWS][N_SIZES];
    static double rate[MAX_ROWS][N_SIZES][MAX_ROUNDS];
    for (int r = 0; r < rows; r++)
        for (size_t s = 0; s < N_SIZES; s++)
            calls[r][s] = calls_for(impl[r], buf, sizes[s], run_ns);
    for (int k = 0; k < rounds; k++)
        for (size_t s = 0; s < N_SIZES; s++)
            for (int r = 0; r < rows; r++)
                rate[r][s][k] =
                    (double)sizes[s] * (double)calls[r][s] /
                    time_calls(impl[r], buf, sizes[s], calls[r][s]);

    double med[MAX_ROWS][N_SIZES], best[N_SIZES] = {0};
    for (int r = 0; r < rows; r++)
        for (size_t s = 0; s < N_SIZES; s++) {
            med[r][s] = median(rate[r][s], rounds);
            if (impl[r] >= 0 && med[r][s] > best[s])
                best[s] = med[r][s];
        }
    printf("CRC-32C, GB/s of CPU time (median of %d) %8s %8s %8s %8s %8s "
           "%8s\n",
           rounds, "64 B", "256 B", "4 KiB", "32 KiB", "1 MiB", "16 MiB");
    for (int r = 0; r < rows; r++) {
        char label[64];
        if (impl[r] < 0)
            snprintf(label, sizeof label, "extend (%s)",
                     llog_crc32c_implementation());
        printf("%-40s", impl[r] < 0 ? label : llog_crc32c_impl_name(impl[r]));
        for (size_t s = 0; s < N_SIZES; s++)
            printf(" %7.2f%c", med[r][s],
                   impl[r] >= 0 && med[r][s] == best[s] ? '*' : ' ');
        printf("\n");
    }
    free(buf);
    return 0;
}
