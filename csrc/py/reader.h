/*
 * reader.h - the Reader (reader.c) as the binding's other files use it:
 * an opaque object (module.c registers its spec, module.h) and what its
 * test hooks read. Its fields are reader.c's alone; the Reader's own files
 * (reader_internal.h) are called by reader.c and never call it back.
 *
 * The Reader's files: reader.c (the type), reader_open.c (tp_init's
 * options and source), reader_pickle.c (pickling), reader_arrow.c (Arrow
 * batches and streams), reader_records.c (where reading stands, the
 * per-record path), reader_damage.c (reports, and the core's verdicts on
 * damage acted on), reader_assembly.c (fragmented records built into
 * bytes objects or Arrow batches), reader_fill.c (feeding the core
 * blocks); and, through this header, reader_testing.c. (reader_dialect.c,
 * the dialect options and metadata state, knows no Reader:
 * reader_dialect.h.)
 */
#ifndef LLPY_READER_H
#define LLPY_READER_H

#include "module.h"

typedef struct llpy_reader llpy_reader;

/* ---- test hooks (reader_testing.c) --------------------------------------
 */

/* How many blocks were read in place (their payload straight into the
 * record being assembled), and of those, through the block buffer. */
typedef struct llpy_reader_blocks {
    uint64_t in_place, bounced;
} llpy_reader_blocks;

/* Fills *out under the lock; 0, or -1 with an exception set. */
int llpy_reader_blocks_of(llpy_reader *self, llpy_reader_blocks *out);

#endif /* LLPY_READER_H */
