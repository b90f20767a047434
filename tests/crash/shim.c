/*
 * shim.c - an LD_PRELOAD library that records what a process does to the
 * files of one directory, for tests/crash/test_crash_states.py: every call
 * that can change what a crash leaves (create, truncate, write, sync, rename,
 * unlink) becomes one line of a trace, with the bytes written. The test
 * replays prefixes and subsets of those lines to build crash states.
 *
 * LLOG_CRASH_DIR: the directory watched (an absolute path without symbolic
 * links); LLOG_CRASH_TRACE: the trace file, appended to. Lines:
 *   create INO NAME        a file made by open(O_CREAT)
 *   trunc INO SIZE         ftruncate; "trunc INO 0 open": open(O_TRUNC)
 *   write INO OFFSET HEX   write, pwrite, writev: the bytes the call took
 *   sync INO               fsync or fdatasync of a file
 *   syncdir                fsync of the directory
 *   rename NAME NAME       unlink NAME       chmod NAME
 *   unsupported CALL       a call this shim cannot model; the test fails
 * NAME is relative to the directory. One thread writes at a time: the
 * workloads are single-threaded, so fd state needs no lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* musl's headers may name the 64-bit calls as macros for the plain ones:
 * both names are defined here. (64-bit platforms: the two are one call.) */
#undef open64
#undef openat64
#undef creat64
#undef pwrite64
#undef ftruncate64
#undef fallocate64
#undef posix_fallocate64
#undef pwritev64
#undef pwritev64v2
#undef sendfile64

/* O_TMPFILE includes O_DIRECTORY's bit: all of its bits make one. */
#ifdef O_TMPFILE
#define IS_TMPFILE(flags) (((flags)&O_TMPFILE) == O_TMPFILE)
#else
#define IS_TMPFILE(flags) 0
#endif

#define MAX_FD 4096

enum { NOT_WATCHED, WATCHED_FILE, WATCHED_DIR };

static char kind_of[MAX_FD];
static unsigned long long ino_of[MAX_FD];
static int trace_fd = -1;
static ssize_t (*real_write)(int, const void *, size_t);

#define REAL(ret, name, ...)                                                  \
    static ret (*real)(__VA_ARGS__);                                          \
    if (real == NULL)                                                         \
        real = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, name);

static ssize_t raw_write(int fd, const void *p, size_t n) {
    if (real_write == NULL)
        real_write =
            (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    return real_write(fd, p, n);
}

/* Appends one line to the trace in one write(), so that lines from the
 * workload's own markers (written with O_APPEND too) never interleave. */
static void emit(const char *line, size_t n) {
    int saved = errno;
    if (trace_fd < 0) {
        const char *path = getenv("LLOG_CRASH_TRACE");
        REAL(int, "open", const char *, int, ...)
        if (path != NULL)
            trace_fd =
                real(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    }
    if (trace_fd >= 0 && raw_write(trace_fd, line, n) != (ssize_t)n)
        abort(); /* a trace with a line missing would check nothing */
    errno = saved;
}

static void emitf(const char *fmt, ...) {
    char line[3 * PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line)
        abort();
    emit(line, (size_t)n);
}

/* The name of `path` (opened relative to dirfd) inside the watched
 * directory: "" for the directory itself, NULL when outside it. */
static const char *watched_name(int dirfd, const char *path, char *buf) {
    const char *dir = getenv("LLOG_CRASH_DIR");
    if (dir == NULL || path == NULL)
        return NULL;
    if (path[0] == '/') {
        snprintf(buf, PATH_MAX, "%s", path);
    } else {
        char base[PATH_MAX];
        if (dirfd == AT_FDCWD) {
            if (getcwd(base, sizeof base) == NULL)
                return NULL;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            ssize_t got = readlink(link, base, sizeof base - 1);
            if (got < 0)
                return NULL;
            base[got] = 0;
        }
        int k = snprintf(buf, PATH_MAX, "%s/%s", base, path);
        if (k < 0 || k >= PATH_MAX)
            return NULL;
    }
    size_t n = strlen(dir);
    if (strncmp(buf, dir, n) != 0)
        return NULL;
    if (buf[n] == 0 || (buf[n] == '/' && buf[n + 1] == 0))
        return "";
    return buf[n] == '/' ? buf + n + 1 : NULL;
}

static int watched(int fd) {
    return fd >= 0 && fd < MAX_FD && kind_of[fd] != NOT_WATCHED;
}

/* After a successful open of a watched name: remember the descriptor and
 * say what the open changed. */
static void opened(int fd, const char *name, int flags, int existed) {
    struct stat st;
    if (fd < 0 || fd >= MAX_FD || fstat(fd, &st) != 0)
        return;
    kind_of[fd] = S_ISDIR(st.st_mode) ? WATCHED_DIR : WATCHED_FILE;
    ino_of[fd] = (unsigned long long)st.st_ino;
    if (kind_of[fd] == WATCHED_DIR)
        return;
    if (IS_TMPFILE(flags))
        emitf("unsupported O_TMPFILE\n");
    if (!existed)
        emitf("create %llu %s\n", ino_of[fd], name);
    if ((flags & O_TRUNC) && existed)
        emitf("trunc %llu 0 open\n", ino_of[fd]);
}

static int do_openat(int dirfd, const char *path, int flags, mode_t mode) {
    REAL(int, "openat", int, const char *, int, ...)
    char buf[PATH_MAX];
    const char *name = watched_name(dirfd, path, buf);
    struct stat st;
    int existed = name != NULL && fstatat(dirfd, path, &st, 0) == 0;
    int fd = real(dirfd, path, flags, mode);
    if (fd >= 0 && fd < MAX_FD)
        kind_of[fd] = NOT_WATCHED;
    if (fd >= 0 && name != NULL)
        opened(fd, name, flags, existed);
    return fd;
}

#define MODE_ARG(flags, mode)                                                 \
    mode_t mode = 0;                                                          \
    if (((flags)&O_CREAT) || IS_TMPFILE(flags)) {                             \
        va_list ap;                                                           \
        va_start(ap, flags);                                                  \
        mode = (mode_t)va_arg(ap, int);                                       \
        va_end(ap);                                                           \
    }

int open(const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    return do_openat(AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    return do_openat(AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    return do_openat(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) {
    MODE_ARG(flags, mode)
    return do_openat(dirfd, path, flags, mode);
}
int creat(const char *path, mode_t mode) {
    return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
int creat64(const char *path, mode_t mode) { return creat(path, mode); }

int close(int fd) {
    REAL(int, "close", int)
    if (fd >= 0 && fd < MAX_FD)
        kind_of[fd] = NOT_WATCHED;
    return real(fd);
}

/* The bytes a call took, at the offset they went to. */
static void emit_write(int fd, long long off, const struct iovec *iov,
                       int count, size_t took) {
    static const char hex[] = "0123456789abcdef";
    size_t cap = 64 + 2 * took + 1;
    char *line = malloc(cap);
    if (line == NULL)
        abort();
    int n = snprintf(line, cap, "write %llu %lld ", ino_of[fd], off);
    size_t at = (size_t)n;
    for (int i = 0; i < count && took > 0; i++) {
        const unsigned char *p = iov[i].iov_base;
        size_t k = iov[i].iov_len < took ? iov[i].iov_len : took;
        for (size_t j = 0; j < k; j++) {
            line[at++] = hex[p[j] >> 4];
            line[at++] = hex[p[j] & 15];
        }
        took -= k;
    }
    line[at++] = '\n';
    emit(line, at);
    free(line);
}

/* Where a write() on fd lands: the end for O_APPEND, else the position. */
static long long write_position(int fd) {
    int flags = fcntl(fd, F_GETFL);
    struct stat st;
    if (flags >= 0 && (flags & O_APPEND) && fstat(fd, &st) == 0)
        return (long long)st.st_size;
    return (long long)lseek(fd, 0, SEEK_CUR);
}

ssize_t write(int fd, const void *p, size_t n) {
    if (!watched(fd))
        return raw_write(fd, p, n);
    long long off = write_position(fd);
    ssize_t got = raw_write(fd, p, n);
    if (got > 0) {
        struct iovec one = {(void *)p, n};
        emit_write(fd, off, &one, 1, (size_t)got);
    }
    return got;
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
    REAL(ssize_t, "writev", int, const struct iovec *, int)
    long long off = watched(fd) ? write_position(fd) : 0;
    ssize_t got = real(fd, iov, count);
    if (got > 0 && watched(fd))
        emit_write(fd, off, iov, count, (size_t)got);
    return got;
}

static ssize_t do_pwrite(int fd, const void *p, size_t n, off_t off) {
    REAL(ssize_t, "pwrite", int, const void *, size_t, off_t)
    ssize_t got = real(fd, p, n, off);
    if (got > 0 && watched(fd)) {
        struct iovec one = {(void *)p, n};
        emit_write(fd, (long long)off, &one, 1, (size_t)got);
    }
    return got;
}
ssize_t pwrite(int fd, const void *p, size_t n, off_t off) {
    return do_pwrite(fd, p, n, off);
}
ssize_t pwrite64(int fd, const void *p, size_t n, off_t off) {
    return do_pwrite(fd, p, n, off);
}

static int do_ftruncate(int fd, off_t size) {
    REAL(int, "ftruncate", int, off_t)
    int rc = real(fd, size);
    if (rc == 0 && watched(fd))
        emitf("trunc %llu %lld\n", ino_of[fd], (long long)size);
    return rc;
}
int ftruncate(int fd, off_t size) { return do_ftruncate(fd, size); }
int ftruncate64(int fd, off_t size) { return do_ftruncate(fd, size); }

static void emit_sync(int fd) {
    if (kind_of[fd] == WATCHED_DIR)
        emitf("syncdir\n");
    else
        emitf("sync %llu\n", ino_of[fd]);
}

int fsync(int fd) {
    REAL(int, "fsync", int)
    int rc = real(fd);
    if (rc == 0 && watched(fd))
        emit_sync(fd);
    return rc;
}

int fdatasync(int fd) {
    REAL(int, "fdatasync", int)
    int rc = real(fd);
    if (rc == 0 && watched(fd))
        emit_sync(fd);
    return rc;
}

int renameat2(int olddir, const char *from, int newdir, const char *to,
              unsigned flags) {
    REAL(int, "renameat2", int, const char *, int, const char *, unsigned)
    char a[PATH_MAX], b[PATH_MAX];
    const char *x = watched_name(olddir, from, a);
    const char *y = watched_name(newdir, to, b);
    int rc = real(olddir, from, newdir, to, flags);
    if (rc == 0 && (x != NULL || y != NULL)) {
        if (x == NULL || y == NULL || flags != 0)
            emitf("unsupported rename across the directory or with flags\n");
        else
            emitf("rename %s %s\n", x, y);
    }
    return rc;
}
int renameat(int olddir, const char *from, int newdir, const char *to) {
    return renameat2(olddir, from, newdir, to, 0);
}
int rename(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, 0);
}

int unlinkat(int dirfd, const char *path, int flags) {
    REAL(int, "unlinkat", int, const char *, int)
    char buf[PATH_MAX];
    const char *name = watched_name(dirfd, path, buf);
    int rc = real(dirfd, path, flags);
    if (rc == 0 && name != NULL)
        emitf(flags ? "unsupported rmdir\n" : "unlink %s\n", name);
    return rc;
}
int unlink(const char *path) { return unlinkat(AT_FDCWD, path, 0); }

int chmod(const char *path, mode_t mode) {
    REAL(int, "chmod", const char *, mode_t)
    char buf[PATH_MAX];
    const char *name = watched_name(AT_FDCWD, path, buf);
    int rc = real(path, mode);
    if (rc == 0 && name != NULL)
        emitf("chmod %s\n", name);
    return rc;
}

/* Calls that change files in ways the replay does not model: a use on a
 * watched descriptor is reported, so that the test fails rather than build
 * wrong states. (The test also compares the trace with strace's.) */
static void unsupported(int fd, const char *name) {
    if (watched(fd))
        emitf("unsupported %s\n", name);
}

int fallocate(int fd, int how, off_t at, off_t n) {
    REAL(int, "fallocate", int, int, off_t, off_t)
    unsupported(fd, "fallocate");
    return real(fd, how, at, n);
}
int fallocate64(int fd, int how, off_t at, off_t n) {
    REAL(int, "fallocate", int, int, off_t, off_t)
    unsupported(fd, "fallocate");
    return real(fd, how, at, n);
}

int posix_fallocate(int fd, off_t at, off_t n) {
    REAL(int, "posix_fallocate", int, off_t, off_t)
    unsupported(fd, "posix_fallocate");
    return real(fd, at, n);
}
int posix_fallocate64(int fd, off_t at, off_t n) {
    REAL(int, "posix_fallocate", int, off_t, off_t)
    unsupported(fd, "posix_fallocate");
    return real(fd, at, n);
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t at) {
    REAL(ssize_t, "pwritev", int, const struct iovec *, int, off_t)
    unsupported(fd, "pwritev");
    return real(fd, iov, count, at);
}
ssize_t pwritev64(int fd, const struct iovec *iov, int count, off_t at) {
    REAL(ssize_t, "pwritev", int, const struct iovec *, int, off_t)
    unsupported(fd, "pwritev");
    return real(fd, iov, count, at);
}
ssize_t pwritev2(int fd, const struct iovec *iov, int count, off_t at,
                 int flags) {
    REAL(ssize_t, "pwritev2", int, const struct iovec *, int, off_t, int)
    unsupported(fd, "pwritev");
    return real(fd, iov, count, at, flags);
}
ssize_t pwritev64v2(int fd, const struct iovec *iov, int count, off_t at,
                    int flags) {
    REAL(ssize_t, "pwritev2", int, const struct iovec *, int, off_t, int)
    unsupported(fd, "pwritev");
    return real(fd, iov, count, at, flags);
}

ssize_t copy_file_range(int in, off_t *in_at, int out, off_t *out_at, size_t n,
                        unsigned flags) {
    REAL(ssize_t, "copy_file_range", int, off_t *, int, off_t *, size_t,
         unsigned)
    unsupported(out, "copy_file_range");
    return real(in, in_at, out, out_at, n, flags);
}

ssize_t sendfile(int out, int in, off_t *at, size_t n) {
    REAL(ssize_t, "sendfile", int, int, off_t *, size_t)
    unsupported(out, "sendfile");
    return real(out, in, at, n);
}
ssize_t sendfile64(int out, int in, off_t *at, size_t n) {
    REAL(ssize_t, "sendfile", int, int, off_t *, size_t)
    unsupported(out, "sendfile");
    return real(out, in, at, n);
}
