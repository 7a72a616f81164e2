/* convert_util.h - what the conversion tests share (convert_util.c). */
#ifndef WEFT_CONVERT_UTIL_H
#define WEFT_CONVERT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "convert.h"
#include "journal.h"
#include "record.h"

typedef struct ctx {
    char dir[64];
    char trace[96];
    char archive[96];
} ctx;

typedef struct archive_info {
    int nclock;
    uint64_t resolution, offset, length, realtime;
    size_t nlocs;
    OTF2_LocationRef locs[16];
    uint64_t loc_events[16];  /* numberOfEvents of each Location */
    uint64_t events_read[16]; /* events actually found there */
    uint64_t events, tmin, tmax;
    int ordered;              /* times never decrease per location */
    uint64_t last[16];
} archive_info;

/* cmocka setup and teardown: a temporary directory with the trace's
 * spool directory and where its archive goes (ctx). */
int conv_setup(void **state);
int conv_teardown(void **state);

/* Journal entries written by hand. */
void append(weft_journal *j, uint8_t kind, uint32_t location,
            uint32_t count, uint64_t seq, uint64_t base, const void *p,
            size_t n);
void append_hello_clock(weft_journal *j, uint32_t rank, uint32_t size,
                        const char *host, uint64_t res, const char *clock);
void append_hello(weft_journal *j, uint32_t rank, uint32_t size,
                  const char *host);
/* A process of a process tree as its Hello says it (tree 0: a member
 * of a fixed-size trace with the same fields). */
typedef struct tree_proc {
    uint32_t pid, parent_pid;
    const char *command;
    int tree;
} tree_proc;
/* The Hello of p as rank `rank` of a trace of size members (0 for a
 * tree), host node-a, root for rank 0. */
void append_hello_tree(weft_journal *j, uint32_t rank, uint32_t size,
                       const tree_proc *p);
void append_goodbye(weft_journal *j, uint32_t nloc, const uint32_t *threads,
                    const uint64_t *events, const uint64_t *dropped);
void append_events(weft_journal *j, uint32_t thread, uint64_t seq,
                   uint64_t base, const weft_record *evs, size_t n);
void append_defs(weft_journal *j, const weft_record *defs, size_t n);
/* Definitions entry number seq (append_defs: 1). */
void append_defs_seq(weft_journal *j, uint64_t seq, const weft_record *defs,
                     size_t n);
/* Enter/Leave pairs in a batch of append_pairs. */
#define PAR_PAIRS 300
/* Appends a batch of PAR_PAIRS Enter/Leave pairs of regions 0..2 from
 * t, announcing count more than it holds; the time after them. */
uint64_t append_pairs(weft_journal *j, uint32_t thread, uint64_t seq,
                      uint64_t t, uint32_t more);
/* A new journal of member `rank` in c's trace directory. */
weft_journal *open_journal(const ctx *c, uint32_t rank);
/* The two members of the smoke test (test_convert.c). */
void write_member0(const ctx *c, uint64_t second_base);
void write_member1(const ctx *c, uint32_t size, int undefined_ref);

/* The row of res's profile summed over all locations of region `name`
 * (fails the test when there is none). */
const weft_region_row *sum_row(const weft_convert_result *res,
                               const char *name);
/* Writes members 0 and 1 of a trace of two, one thread each: Hello,
 * the definitions, one batch of events, Goodbye. */
void write_two(const ctx *c, const weft_record *defs0, size_t ndefs0,
               const weft_record *evs0, size_t nevs0,
               const weft_record *defs1, size_t ndefs1,
               const weft_record *evs1, size_t nevs1);
/* Converts in, asserting success. */
void convert_ok(const weft_convert_input *in, weft_convert_result *res);
/* system() of fmt with arg: the exit status, 128 if killed. */
int run(const char *fmt, const char *arg);
int have_otf2_print(void);
/* Opens the archive in archive_dir and reads its global definitions
 * with callbacks cb (deleted) given ud; the reader, to read on or
 * close. */
OTF2_Reader *read_global_defs(const char *archive_dir,
                              OTF2_GlobalDefReaderCallbacks *cb, void *ud);
/* Reads the archive in archive_dir back with libotf2 into a. */
void read_archive(const char *archive_dir, archive_info *a);
/* Archive b (made by a conversion alone) is archive a: every file equal
 * but the anchor, which holds a random trace id; and a passes
 * otf2-print -Werror (when there is one). */
void same_archive(const char *a, const char *b);
/* What the two conversions say is the same: figures, locations,
 * profile, timelines, messages, I/O and metric series. */
void same_result(const weft_convert_result *x, const weft_convert_result *y);

#endif
