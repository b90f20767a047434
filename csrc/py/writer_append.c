/*
 * writer_append.c - what mode "a" does on open: find where the log resumes
 * (the policy: resume_point) and cut back what lies after it.
 */
#include "binding.h"

#include <errno.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

/* What a scan of a log's tail found. */
typedef struct {
    uint64_t clean_end; /* end of the last complete record */
    uint64_t torn_at;   /* start of the torn tail, or the end of the log */
    int damaged;        /* damage other than a torn tail after clean_end */
} tail_scan;

/*
 * One pass of scan_tail: reads the log from `start` (a block boundary) as
 * if it ended at `size`, with `block` as the read buffer. Fills clean_end
 * and torn_at, and *first_bad: the first damage reported, or LLOG_NO_END.
 * 0, or -1 with an exception set.
 */
static int scan_from(int fd, uint64_t size, uint64_t start, uint8_t *block,
                     tail_scan *out, uint64_t *first_bad) {
    llog_reader_options opt = {
        .start = start, .end = LLOG_NO_END, .verify_checksums = 1};
    llog_reader *r = llog_reader_new(&opt);
    if (r == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *first_bad = LLOG_NO_END;
    out->torn_at = size;
    llog_event ev;
    do {
        llog_reader_next(r, &ev);
        if (ev.kind == LLOG_EV_NEED_BLOCK) {
            uint64_t at = llog_reader_wanted(r);
            size_t n = at >= size                    ? 0
                       : size - at < LLOG_BLOCK_SIZE ? (size_t)(size - at)
                                                     : LLOG_BLOCK_SIZE;
            Py_ssize_t got = llpy_fd_read_full(fd, 1, block, n, at);
            if (got < 0)
                break;
            llog_reader_feed(r, block, (size_t)got);
        } else if (ev.kind == LLOG_EV_CORRUPTION && ev.offset < *first_bad) {
            *first_bad = ev.offset;
        } else if (ev.kind == LLOG_EV_EOF && ev.torn) {
            out->torn_at = ev.offset;
        } else if (ev.kind == LLOG_EV_ERROR) {
            llpy_raise_status((llog_status)ev.size);
        }
    } while (!PyErr_Occurred() && ev.kind != LLOG_EV_EOF &&
             ev.kind != LLOG_EV_ERROR);
    out->clean_end = llog_reader_clean_end(r);
    llog_reader_free(r);
    return PyErr_Occurred() ? -1 : 0;
}

/*
 * Scans the log as if it ended at `size`: reads its end (going further back
 * only while no complete record is found) and reports what lies after the
 * last complete record.
 */
static int scan_tail(int fd, uint64_t size, tail_scan *out) {
    uint8_t *block = PyMem_Malloc(LLOG_BLOCK_SIZE);
    if (block == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t last = size > 0 ? size - 1 : 0;
    uint64_t start = last - last % LLOG_BLOCK_SIZE;
    int rc;
    for (;;) {
        uint64_t first_bad;
        rc = scan_from(fd, size, start, block, out, &first_bad);
        if (rc < 0)
            break;
        if (out->clean_end >= start || start == 0) {
            /* Every report at or after clean_end was seen: it is >= start. */
            out->damaged =
                first_bad != LLOG_NO_END && first_bad >= out->clean_end;
            break;
        }
        uint64_t back = size - start; /* double the span read */
        start = start > back ? start - back : 0;
        start -= start % LLOG_BLOCK_SIZE;
    }
    PyMem_Free(block);
    return rc;
}

/* Offset just past the last non-zero byte in [floor, size), or floor. */
static int last_written(int fd, uint64_t floor, uint64_t size, uint64_t *out) {
    uint8_t *buf = PyMem_Malloc(LLOG_BLOCK_SIZE);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t end = size;
    *out = floor;
    while (end > floor) {
        size_t n = end - floor < LLOG_BLOCK_SIZE ? (size_t)(end - floor)
                                                 : LLOG_BLOCK_SIZE;
        Py_ssize_t got = llpy_fd_read_full(fd, 1, buf, n, end - n);
        if (got < 0) {
            PyMem_Free(buf);
            return -1;
        }
        size_t i = (size_t)got;
        while (i > 0 && buf[i - 1] == 0)
            i--;
        if (i > 0) {
            *out = end - n + i;
            break;
        }
        end -= n;
    }
    PyMem_Free(buf);
    return 0;
}

/*
 * Where "a" resumes. A log ending in a torn tail or zero fill (what a crash
 * or preallocation leaves) is cut back to the end of its last complete
 * record. A crash inside preallocated space leaves both, a torn record then
 * zeros, which read as damage: if the log, taken to end at its last non-zero
 * byte (never before the last complete record: payloads may end in zeros),
 * has only a torn tail after that record, it is cut back there too. Other
 * damage is left alone: only a torn tail is cut, and the new records start
 * at the next block boundary.
 */
static int resume_point(int fd, uint64_t size, uint64_t *cut, int *damaged) {
    tail_scan scan;
    if (scan_tail(fd, size, &scan) < 0)
        return -1;
    *cut = scan.damaged ? scan.torn_at : scan.clean_end;
    *damaged = scan.damaged;
    if (!scan.damaged)
        return 0;
    uint64_t written;
    if (last_written(fd, scan.clean_end, size, &written) < 0)
        return -1;
    tail_scan trimmed;
    if (written < size && scan_tail(fd, written, &trimmed) < 0)
        return -1;
    if (written < size && !trimmed.damaged) {
        *cut = trimmed.clean_end;
        *damaged = 0;
    }
    return 0;
}

/* Truncates the log to `cut` and seeks there. */
static int cut_back(int fd, PyObject *name, uint64_t cut) {
    int rc;
#ifdef _WIN32
    rc = _chsize_s(fd, (__int64)cut);
#else
    rc = ftruncate(fd, (off_t)cut);
#endif
    if (rc != 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
        return -1;
    }
#ifdef _WIN32
    _lseeki64(fd, (__int64)cut, SEEK_SET);
#else
    lseek(fd, (off_t)cut, SEEK_SET);
#endif
    return 0;
}

int llpy_append_open(int fd, PyObject *name, uint64_t *offset, int *damaged) {
#ifdef _WIN32
    __int64 size = _lseeki64(fd, 0, SEEK_END);
#else
    off_t size = lseek(fd, 0, SEEK_END);
#endif
    if (size < 0) { /* not seekable (a pipe, a terminal): nothing to resume */
        size = 0;
        errno = 0;
    }
    uint64_t cut = (uint64_t)size;
    *damaged = 0;
    if (size > 0 && resume_point(fd, (uint64_t)size, &cut, damaged) < 0)
        return -1;
    if (cut < (uint64_t)size && cut_back(fd, name, cut) < 0)
        return -1;
    *offset = cut;
    return 0;
}
