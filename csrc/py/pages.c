/*
 * Large buffers mapped on their own, in huge pages where the system has
 * them: the columns of Arrow batches (reader_arrow.c).
 *
 * Memory a process touches for the first time costs a page fault per page.
 * In the VMs we measured, writing fresh 4 KiB pages cost 0.6 ns a byte
 * (more than copying the bytes there), in 2 MiB transparent huge pages
 * 0.08 ns (`bench/README.md`, "Fresh memory"). An Arrow batch is
 * mostly fresh memory: every batch a consumer keeps (pyarrow.table(reader)
 * keeps them all) is a new one. So buffers of at least LLPY_PAGES_MIN bytes
 * are mapped here, asked for in huge pages (madvise, Linux; elsewhere, and
 * when the system has none, they come in small pages as before), grown
 * with mremap, which moves pages instead of copying bytes. Smaller ones
 * stay with malloc. Only pages touched count: a huge page is only used for
 * a whole 2 MiB range inside the mapping, so a buffer's last partial range
 * stays in small pages (a batch that just passes its size costs no 2 MiB).
 */
#include "binding.h" /* Python.h first: it asks for _GNU_SOURCE (mremap) */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MREMAP_MAYMOVE)
#define HUGE_RANGE ((size_t)2 << 20)

static size_t round_up(size_t n) {
    return (n + LLPY_PAGE - 1) & ~(size_t)(LLPY_PAGE - 1);
}

/* A new mapping of size bytes that starts on a huge page's boundary (its
 * head and tail trimmed off), or NULL. */
static void *map_aligned(size_t size) {
    size_t len = round_up(size);
    if (len > SIZE_MAX - HUGE_RANGE)
        return NULL;
    uint8_t *p = mmap(NULL, len + HUGE_RANGE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t at =
        ((uintptr_t)p + HUGE_RANGE - 1) & ~(uintptr_t)(HUGE_RANGE - 1);
    uint8_t *a = (uint8_t *)at;
    if (a > p)
        munmap(p, (size_t)(a - p));
    munmap(a + len, (size_t)(p + HUGE_RANGE - a)); /* never empty */
    (void)madvise(a, len, MADV_HUGEPAGE); /* a wish: small pages otherwise */
    return a;
}

void *llpy_pages_resize(void *p, size_t old, size_t size) {
    if (size < LLPY_PAGES_MIN)
        return realloc(p, size); /* (old is smaller still: never shrinks) */
    if (old < LLPY_PAGES_MIN) {  /* from malloc's memory to a mapping */
        void *q = map_aligned(size);
        if (q == NULL)
            return NULL;
        if (p != NULL)
            memcpy(q, p, old);
        free(p);
        return q;
    }
    void *q = mremap(p, round_up(old), round_up(size), MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
        return NULL;
    (void)madvise(q, round_up(size), MADV_HUGEPAGE); /* where it moved */
    return q;
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
