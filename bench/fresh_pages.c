/*
 * fresh_pages.c - what writing memory a process touches for the first time
 * costs, in 4 KiB pages and in 2 MiB transparent huge pages: the columns
 * of an Arrow batch are such memory (csrc/py/pages.c maps large ones in
 * huge pages for this).
 *
 *   gcc -O2 bench/fresh_pages.c -o /tmp/fresh_pages && /tmp/fresh_pages
 *
 * Maps 32 MiB (aligned to 2 MiB), writes all of it, unmaps it; the best of
 * ten rounds, as ns a byte, for: small pages; small pages asked to be
 * faulted in at once first (MADV_POPULATE_WRITE, Linux 5.14); huge pages
 * (MADV_HUGEPAGE: used when /sys/kernel/mm/transparent_hugepage/enabled
 * says "always" or "madvise"); and a buffer written a second time (no
 * fault: the floor). Linux only.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define SIZE ((size_t)32 << 20)
#define HUGE ((size_t)2 << 20)
#define ROUNDS 10

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One round of mode: seconds to map, (advise,) write and unmap SIZE. */
static double round_of(int mode) {
    double t = now_s();
    uint8_t *p = mmap(NULL, SIZE + HUGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    uint8_t *a =
        (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (mode == 1)
        (void)madvise(a, SIZE, MADV_POPULATE_WRITE);
    if (mode == 2)
        (void)madvise(a, SIZE, MADV_HUGEPAGE);
    if (mode == 3) { /* written once before the clock starts again */
        memset(a, 2, SIZE);
        t = now_s();
    }
    memset(a, 1, SIZE);
    __asm__ volatile("" : : "r"(a) : "memory"); /* the writes happen */
    if (mode == 3)
        t = now_s() - t;
    munmap(p, SIZE + HUGE);
    return mode == 3 ? t : now_s() - t;
}

int main(void) {
    static const char *names[] = {"4 KiB pages", "4 KiB, MADV_POPULATE_WRITE",
                                  "2 MiB huge pages (MADV_HUGEPAGE)",
                                  "written before (no fault)"};
    for (int mode = 0; mode < 4; mode++) {
        double best = 1e9;
        for (int i = 0; i < ROUNDS; i++) {
            double t = round_of(mode);
            if (t >= 0 && t < best)
                best = t;
        }
        printf("%-34s %6.2f ms per 32 MiB, %.3f ns a byte\n", names[mode],
               best * 1e3, best / (double)SIZE * 1e9);
    }
    return 0;
}
