/*
 * reader_internal.h - what the Reader's own files ask of each other, as
 * functions: reader.c (the type, iteration), reader_open.c (tp_init),
 * reader_damage.c (reports and the verdicts acted on), reader_assembly.c
 * (building fragmented records) and reader_fill.c (feeding blocks). Each
 * keeps its state in its own .c file: the reader's fields in reader.c, the
 * feed's in reader_fill.c, the assembly's in reader_assembly.c. Every other
 * file goes through reader.h.
 */
#ifndef LLPY_READER_INTERNAL_H
#define LLPY_READER_INTERNAL_H

#include "llpy_io.h"
#include "lock.h"
#include "reader.h"
#include "reader_dialect.h"

typedef struct llpy_feed llpy_feed;         /* reader_fill.c */
typedef struct llpy_assembly llpy_assembly; /* reader_assembly.c */

/* ---- reader.c ------------------------------------------------------------
 */

/* 1 once tp_init made the reader (or it was closed): it is not made again.
 */
int llpy_reader_initialized(const llpy_reader *self);
/* What tp_init made, taken by the reader: feed and name (new references,
 * taken even on failure); source, on_corruption and storage_options (a
 * URL's) borrowed, the last two may be NULL. Makes the core from opt; 0, or
 * -1 with an exception set. */
int llpy_reader_adopt(llpy_reader *self, llog_reader_options *opt,
                      llpy_feed *feed, PyObject *source, PyObject *name,
                      PyObject *on_corruption, PyObject *storage_options);
/* No more records, ever (a buffer source is let go). */
void llpy_reader_finish(llpy_reader *self);
/* What reader_damage.c reads and counts: the source as given and
 * on_corruption (borrowed, or NULL), the core (NULL once closed), whether
 * the source is a buffer, whether the reader is closed; bytes dropped. */
PyObject *llpy_reader_source(const llpy_reader *self);
PyObject *llpy_reader_on_corruption(const llpy_reader *self);
llog_reader *llpy_reader_core(const llpy_reader *self);
int llpy_reader_over_buffer(const llpy_reader *self);
int llpy_reader_closed(const llpy_reader *self);
void llpy_reader_count_dropped(llpy_reader *self, uint64_t n);
/* The warnings given once per reader: whether one was; that it was. */
enum llpy_reader_warning { LLPY_WARNED_TAIL = 1, LLPY_WARNED_GONE = 2 };
int llpy_reader_warned(const llpy_reader *self, enum llpy_reader_warning w);
void llpy_reader_set_warned(llpy_reader *self, enum llpy_reader_warning w);
/* Gives up the lock for a callback, which may use the reader, as may other
 * threads meanwhile: a redirect ends first (saved in *fn, *ctx), so that
 * nothing of the reader's stays in a batch being filled. 0, or -1 with an
 * exception set (the lock still held). Leaving takes the lock back (this
 * cannot fail: this thread no longer owns it) and the redirect up again. */
int llpy_reader_callback_enter(llpy_reader *self, llog_reserve_fn *fn,
                               void **ctx);
void llpy_reader_callback_leave(llpy_reader *self, llog_reserve_fn fn,
                                void *ctx);
/* What became of a followed file at its end (llpy_feed_change). */
enum llpy_source_change {
    LLPY_SOURCE_SAME,
    LLPY_SOURCE_SHRANK,
    LLPY_SOURCE_REPLACED
};
enum llpy_source_change llpy_reader_source_change(llpy_reader *self,
                                                  uint64_t *size);

/* ---- reader_damage.c -----------------------------------------------------
 */

/* A CORRUPTION event (or a torn EOF whose verdict is to stop or fail)
 * reported and its verdict acted on: 1 to keep reading, 0 to end iteration
 * cleanly, -1 with an exception set. And the end of the data fed so far,
 * once it is believed: a torn tail is reported and acted on when the
 * verdict on it says so; otherwise a buffer, which never grows, is
 * finished (an exception may be set: check PyErr_Occurred). */
int llpy_reader_on_damage(llpy_reader *self, llpy_state *st,
                          const llog_event *ev);
void llpy_reader_on_end(llpy_reader *self, llpy_state *st,
                        const llog_event *ev);

/* ---- reader_open.c -------------------------------------------------------
 */

/* tp_init. */
int llpy_reader_init(PyObject *op, PyObject *args, PyObject *kwds);

/* ---- reader_assembly.c ---------------------------------------------------
 */

/* Where fragmented records are built: made with the module state and the
 * reader's saved GIL state (see reader_step in reader.c); NULL with
 * MemoryError. */
llpy_assembly *llpy_assembly_new(llpy_state *st, PyThreadState **released);
/* The core's reserve callback (llog_reserve_fn, ctx the assembly); the
 * record it finished assembling as a bytes object (NULL with an exception
 * set); the same left in place for an Arrow batch (ev->data set to where it
 * is); the length of the last fragmented record this reader (or, before
 * its first, any reader) assembled: a guess of the next one's. */
uint8_t *llpy_assembly_reserve(void *ctx, size_t len, size_t need,
                               size_t *cap);
PyObject *llpy_assembly_take(llpy_assembly *self, size_t len);
void llpy_assembly_view(llpy_assembly *self, llog_event *ev);
size_t llpy_assembly_hint(const llpy_assembly *self);
/* The redirect (llpy_reader_redirect in reader.h): set; what it is (fn,
 * *ctx); whether the record being built is in it; and its end, which
 * moves what is there (the core's open record, and the pending payloads
 * read in place for it: *pending is moved with them) to the scratch
 * buffer (pending may be NULL): 0, or -1 with MemoryError. */
void llpy_assembly_redirect(llpy_assembly *self, llog_reserve_fn fn,
                            void *ctx);
llog_reserve_fn llpy_assembly_redirect_of(const llpy_assembly *self,
                                          void **ctx);
int llpy_assembly_redirecting(const llpy_assembly *self);
int llpy_assembly_redirect_end(llpy_assembly *self, llog_reader *core,
                               uint8_t **pending, size_t pending_len);
/* Frees the buffers (the reader is closed); frees all. NULL is a no-op. */
void llpy_assembly_clear(llpy_assembly *self);
void llpy_assembly_free(llpy_assembly *self);

/* ---- reader_fill.c -------------------------------------------------------
 */

/* What a source is and where reading stands in it, feeding the core the
 * block it wants. Made by kind (NULL with an exception set): a buffer
 * (exported while read); a path's descriptor (the feed's, closed with it;
 * abs_path stolen, may be NULL: where to tell whether it was replaced); a
 * file object from where it stands (owned: closed with the reader). */
enum llpy_source_kind { LLPY_SRC_BUFFER, LLPY_SRC_FD, LLPY_SRC_FILE };
llpy_feed *llpy_feed_buffer(llpy_state *st, PyObject *source);
llpy_feed *llpy_feed_path(llpy_state *st, int fd, int seekable,
                          PyObject *abs_path);
llpy_feed *llpy_feed_file(llpy_state *st, PyObject *file, int seekable,
                          uint64_t base, int owned);
/* The core it feeds and the assembly it reads in place for. */
void llpy_feed_attach(llpy_feed *self, llog_reader *core,
                      llpy_assembly *assembly);
enum llpy_source_kind llpy_feed_kind(const llpy_feed *self);
int llpy_feed_seekable(const llpy_feed *self);
/* Feeds the core the block it wants (llog_reader_wanted); 0, or -1 with an
 * exception set. */
int llpy_feed_fill(llpy_feed *self);
/* A followed file at its end: the same, shrunk below the reader's position
 * (*size its size now), or replaced by another file at its path. */
enum llpy_source_change llpy_feed_change(const llpy_feed *self,
                                         uint64_t *size);
/* The payloads read in place and not fed yet: their length, and in *body
 * where the pointer to them is (NULL where nothing is read in place), to
 * move them with a redirect's end. */
size_t llpy_feed_pending(llpy_feed *self, uint8_t ***body);
/* Blocks read in place, and of those through the block buffer (tests). */
void llpy_feed_blocks(const llpy_feed *self, uint64_t *in_place,
                      uint64_t *bounced);
/* No more records: a buffer is let go. */
void llpy_feed_finished(llpy_feed *self);
/* Lets the source go (the reader is closed); GC support; frees all. NULL
 * is a no-op for these. */
void llpy_feed_close(llpy_feed *self);
int llpy_feed_traverse(llpy_feed *self, visitproc visit, void *arg);
void llpy_feed_clear(llpy_feed *self);
void llpy_feed_free(llpy_feed *self);

#endif /* LLPY_READER_INTERNAL_H */
