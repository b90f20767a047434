/*
 * pages.c - large buffers mapped on their own, in huge pages where the
 * system has them: the columns of Arrow batches (reader_arrow.c).
 *
 * Memory a process touches for the first time costs a page fault per page,
 * which can cost more than writing the bytes there; a huge page takes one
 * fault for a range that small pages take one each for (bench/README.md,
 * "Fresh memory", has the measurements). An Arrow batch is mostly fresh
 * memory: every batch a consumer keeps (pyarrow.table(reader) keeps them
 * all) is a new one. So buffers of at least LLPY_PAGES_MIN bytes are
 * mapped here and asked for in huge pages (madvise, Linux; elsewhere, and
 * when the system has none, they come in small pages), and grow by mremap,
 * which moves pages instead of copying bytes. Smaller ones stay with
 * malloc.
 *
 * Only pages touched count, and a huge page counts whole; a batch fills
 * its buffer to near its end. A huge page only fills a whole aligned 2 MiB
 * range inside the mapping, so a new mapping is placed to end a page short
 * of such a range's end: its last partial range, almost 2 MiB, stays in
 * small pages, and a buffer filled to anywhere there costs what it holds.
 */
#include "llpy_io.h" /* Python.h first: it asks for _GNU_SOURCE (mremap) */

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MREMAP_MAYMOVE)
#define HUGE_RANGE ((size_t)2 << 20)

/* The system's page size (4 KiB, 16 KiB or 64 KiB: every length and
 * address given to the calls below is a multiple of it). */
static size_t page_size(void) {
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? (size_t)n : 4096;
}

static size_t round_up(size_t n) {
    size_t page = page_size();
    return (n + page - 1) & ~(page - 1);
}

/* A new mapping of size bytes that ends a page short of a huge page's
 * boundary (what was mapped around it trimmed off), or NULL. With pages of
 * 2 MiB or more, where huge pages are larger still, it is not placed. */
static void *map_placed(size_t size) {
    size_t len = round_up(size);
    if (len > SIZE_MAX - HUGE_RANGE)
        return NULL;
    uint8_t *p = mmap(NULL, len + HUGE_RANGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    /* the first end past p + len at HUGE_RANGE - a page modulo it */
    size_t page = page_size();
    uintptr_t want = HUGE_RANGE - page, end = (uintptr_t)p + len;
    if (page < HUGE_RANGE)
        end += (want - end % HUGE_RANGE) % HUGE_RANGE;
    uint8_t *a = (uint8_t *)(end - len);
    if (a > p)
        munmap(p, (size_t)(a - p));
    if (a + len < p + len + HUGE_RANGE)
        munmap(a + len, (size_t)(p + HUGE_RANGE - a));
    (void)madvise(a, len, MADV_HUGEPAGE); /* a wish */
    return a;
}

/* A mapping of len bytes at p grown to size (page multiples): by mremap,
 * which moves pages instead of copying bytes (the area keeps its advice),
 * or else copied into a new one. NULL when out of memory. */
static void *grow(uint8_t *p, size_t len, size_t size) {
    uint8_t *q = mremap(p, len, size, MREMAP_MAYMOVE);
    if (q != MAP_FAILED)
        return q;
    q = map_placed(size);
    if (q != NULL) {
        memcpy(q, p, len);
        munmap(p, len);
    }
    return q;
}

void *llpy_pages_resize(void *p, size_t old, size_t size) {
    assert(size >= old); /* (never smaller: a mapping stays one) */
    if (size < LLPY_PAGES_MIN)
        return realloc(p, size);
    if (old < LLPY_PAGES_MIN) { /* from malloc's memory to a mapping */
        void *q = map_placed(size);
        if (q == NULL)
            return NULL;
        if (p != NULL)
            memcpy(q, p, old);
        free(p);
        return q;
    }
    return grow(p, round_up(old), round_up(size));
}

void llpy_pages_free(void *p, size_t size) {
    if (p != NULL && size >= LLPY_PAGES_MIN)
        munmap(p, round_up(size));
    else
        free(p);
}

#else /* malloc's memory, in whatever pages it has */

void *llpy_pages_resize(void *p, size_t old, size_t size) {
    (void)old;
    return realloc(p, size);
}

void llpy_pages_free(void *p, size_t size) {
    (void)size;
    free(p);
}

#endif
