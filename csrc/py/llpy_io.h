/*
 * llpy_io.h - sources and targets, the I/O the core leaves to its caller:
 * paths, URLs, descriptors and file objects (io.c); buffers aligned to
 * pages, and large ones mapped on their own (pages.c); and when a copy
 * between two addresses is slow, for the Reader and the Writer to steer
 * around. Not io.h: Windows has one, which io.c includes.
 */
#ifndef LLPY_IO_H
#define LLPY_IO_H

#include "module.h"

#include <stddef.h>
#include <stdint.h>

/* ---- paths, descriptors, file objects (io.c) -------------------------- */

/* 1 for str and os.PathLike, which name files; 0 otherwise. */
int llpy_is_path(PyObject *obj);
/* 1 for a str (or os.PathLike giving one) of the form scheme://...: a URL
 * for leveldb_log._storage; 0 otherwise; -1 with an exception set. */
int llpy_is_url(PyObject *obj);
/* leveldb_log._storage.open_url(url, mode, storage_options or None): a
 * binary file object, or for a local file system its plain path (a str);
 * NULL with an exception set. */
PyObject *llpy_open_url(PyObject *url, const char *mode,
                        PyObject *storage_options);
/* os.open(path, flags | O_BINARY | O_CLOEXEC, 0o666): a descriptor, or -1
 * with an exception set (naming the file). */
int llpy_open_path(llpy_state *st, PyObject *path, int flags);
void llpy_close_fd(int fd);
/* One write(2); -1 with errno set. Called without the GIL. */
Py_ssize_t llpy_write_some(int fd, const uint8_t *buf, size_t n);
/* Reads from a descriptor at `at` (or where it stands, when not seekable)
 * until n bytes or the end; the count, or -1 with an exception set. */
Py_ssize_t llpy_fd_read_full(int fd, int seekable, uint8_t *buf, size_t n,
                             uint64_t at);
/* obj.method(arg) as a non-negative size, -1 for None, or -2 with an
 * exception set. */
Py_ssize_t llpy_call_for_size(PyObject *obj, const char *method,
                              PyObject *arg);

/* ---- buffers (io.c, pages.c) ------------------------------------------ */

#define LLPY_PAGE 4096

/* Buffers the kernel copies file data into: page-aligned (LLPY_PAGE), so
 * that a read at a block boundary copies between equally aligned addresses.
 * NULL when out of memory (no exception); free with llpy_io_free. */
void *llpy_io_alloc(size_t n);
void llpy_io_free(void *p);

/* Buffers of LLPY_PAGES_MIN bytes or more are mapped on their own, in huge
 * pages where the system has them (pages.c); smaller ones are malloc's.
 * Resize is realloc's contract with the old size given (p NULL and old 0
 * for a new buffer; never smaller); free needs the size too. */
#define LLPY_PAGES_MIN ((size_t)4 << 20)
void *llpy_pages_resize(void *p, size_t old, size_t size);
void llpy_pages_free(void *p, size_t size);

/* ---- slow copies ------------------------------------------------------ */

/* Some CPUs copy strings (rep movsb: the kernel's copy to and from user
 * memory, memcpy of large sizes) slowly when the destination lies 1 to 31
 * bytes past the source modulo the page size (docs/performance.md, "Large
 * records"; bench/copy_window.c measures it). */
#define LLPY_SLOW_COPY_MAX 31
/* 1 when copying the byte at src (an address, or a file offset read at a
 * page boundary) to dst is such a copy: 1 to max bytes past it. */
static inline int llpy_copy_is_slow(uint64_t dst, uint64_t src, unsigned max) {
    uint64_t d = (dst - src) % LLPY_PAGE;
    return d >= 1 && d <= max;
}
/* How far such a copy is moved by going through a buffer placed this many
 * bytes past its source (and so before its place): both copies are then
 * fast, the first at this distance, the second at d - LLPY_COPY_SHIFT
 * (33 to 63 bytes before its place). Larger than LLPY_SLOW_COPY_MAX. */
#define LLPY_COPY_SHIFT 64

#endif /* LLPY_IO_H */
