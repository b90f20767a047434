/*
 * copy_window.c - how fast this CPU's string copy (rep movsb, which the
 * kernel uses to copy file data to and from user memory, and memcpy for
 * large sizes) runs at each distance between destination and source
 * modulo the page. On AMD Zen 3 a destination 1 to 31 bytes past its
 * source runs about 20 times slower than any other (Zen 4: 15 times at 1
 * to 15 bytes, a third slower at 16 to 31); the Reader and the Writer keep
 * their payloads out of that window (docs/performance.md).
 *
 *   gcc -O2 bench/copy_window.c -o /tmp/copy_window && /tmp/copy_window
 *
 * Prints GB/s of a 32761-byte copy (a block's payload) in L1/L2, for rep
 * movsb and memcpy, at distances 0..40 and a few others. x86-64 only.
 */
#define _POSIX_C_SOURCE 200112L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEN 32761
#define ROUNDS 7
#define COPIES 64

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void rep_movsb(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#else
    memcpy(dst, src, n);
#endif
}

/* Best GB/s over ROUNDS of COPIES copies of LEN bytes from src to dst. */
static double rate(void (*copy)(void *, const void *, size_t), uint8_t *dst,
                   const uint8_t *src) {
    double best = 1e300;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < COPIES; i++) {
            copy(dst, src, LEN);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        double t = now_ns() - t0;
        best = t < best ? t : best;
    }
    return (double)COPIES * LEN / best;
}

static void libc_memcpy(void *dst, const void *src, size_t n) {
    memcpy(dst, src, n);
}

int main(void) {
    uint8_t *src = NULL, *dst = NULL;
    if (posix_memalign((void **)&src, 4096, 2 * 4096 + LEN) != 0 ||
        posix_memalign((void **)&dst, 4096, 2 * 4096 + LEN) != 0)
        return 2;
    memset(src, 1, 2 * 4096 + LEN);
    memset(dst, 2, 2 * 4096 + LEN);
    static const int extra[] = {48, 63, 64, 65, 2048, 4064, 4065, 4095};
    printf("distance (dst - src) mod 4096: rep movsb GB/s, memcpy GB/s\n");
    for (int k = 0; k < 41 + (int)(sizeof extra / sizeof extra[0]); k++) {
        int d = k < 41 ? k : extra[k - 41];
        /* the source 7 bytes into a page, as a payload after its header */
        const uint8_t *s = src + 7;
        uint8_t *t = dst + 7 + d;
        printf("%4d: %6.1f %6.1f\n", d, rate(rep_movsb, t, s),
               rate(libc_memcpy, t, s));
    }
    free(src);
    free(dst);
    return 0;
}
