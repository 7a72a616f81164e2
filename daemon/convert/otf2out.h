/* otf2out.h - the converter's side of libotf2: its error, flush and
 * memory callbacks, the writer calls generated from the record table,
 * and the archive itself (opening, local and global definitions,
 * closing, syncing, cleaning up, measuring).
 *
 * Called by convert.c on the conversion's thread, except the record
 * writers (weft__otf2_write_event, weft__otf2_attributes) and
 * weft__otf2_sink, which replay.c's workers call too. Each function that
 * takes a conv fails it (weft__conv_fail) with a message naming the
 * archive when it returns a WEFT_E* code.
 */
#ifndef WEFT_OTF2OUT_H
#define WEFT_OTF2OUT_H

#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "convert_internal.h"

/* Installs the process-wide libotf2 error callback (once). */
void weft__otf2_init(void);
/* Makes c the conversion that the calling thread works for (NULL: none),
 * where libotf2's errors and a full disk are reported; returns the one
 * it worked for before. */
conv *weft__otf2_sink(conv *c);
/* The description of a libotf2 error code. Static. */
const char *weft__otf2_msg(OTF2_ErrorCode rc);
/* Tells the flush callback to write nothing more (b's lock). */
void weft__otf2_budget_fail(chunk_budget *b);

/* Opens the event writer of l (a location of m) as l->w, counted in
 * the writers open at once. 0 or WEFT_EOTF2. Any thread. */
int weft__otf2_open_writer(conv *c, member *m, loc *l);
/* Closes l->w (NULL afterwards, whatever the result): what libotf2 says.
 * Any thread. */
OTF2_ErrorCode weft__otf2_close_writer(conv *c, loc *l);

/* Makes location id an empty event file (it has no events). 0 or
 * WEFT_EOTF2. */
int weft__otf2_empty_events(conv *c, uint64_t id);

/* Writes event r with attributes al (may be NULL). */
OTF2_ErrorCode weft__otf2_write_event(OTF2_EvtWriter *w,
                                      OTF2_AttributeList *al,
                                      const weft_record *r);
/* Writes global definition r (not a WEFT_DF_LOCAL one). */
OTF2_ErrorCode weft__otf2_write_def(OTF2_GlobalDefWriter *gw,
                                    const weft_record *r);
/* Sets *out to al filled with the attributes of event r as written (the
 * member's own ids, see weft__otf2_global_kinds), or to NULL when it has
 * none; g is the same event with global ids, which says which attributes
 * are one (an OTF2 attribute list holds an attribute once). Returns what
 * libotf2 says. */
OTF2_ErrorCode weft__otf2_attributes(OTF2_AttributeList *al,
                                     const weft_record *r,
                                     const weft_record *g,
                                     OTF2_AttributeList **out);

/* Events are written with the ids their member gave them, and each
 * location's local definitions map them to the global ones (OTF2
 * MappingTables, which readers apply), for every id space OTF2 has a
 * mapping for. The id spaces it has none for, and those weftd numbers
 * itself (system tree nodes, location groups), are written global: this
 * mask of weft_ref_kinds (bit k: kind k), for
 * weft_unify_map_event_kinds. */
uint32_t weft__otf2_global_kinds(void);

/* Creates c->archive in c->in->archive_dir (replacing what an earlier
 * attempt left there) with weft's callbacks, and opens its event files.
 * 0 or WEFT_EOTF2. */
int weft__otf2_open(conv *c);
/* Opens c->archive in c->in->archive_dir as the writer of event files
 * only, beside the primary archive weft__otf2_open made there (first:
 * it makes the directories, and writes the anchor and every definition
 * at its close). Closing it (weft__otf2_close_events, weft__otf2_close)
 * writes nothing but the event files of the writers it had. 0 or
 * WEFT_EOTF2. */
int weft__otf2_open_events(conv *c);
/* The clocks c's members read, as the archive's WEFT::CLOCK property
 * (weft__otf2_open sets it; a stream's archive gets it once its trace's
 * members are known). 0 or WEFT_EOTF2 (c failed). */
int weft__otf2_set_clocks(conv *c);
/* Closes the event files (every event writer is closed). */
int weft__otf2_close_events(conv *c);
/* One local definition file per location: the mapping tables of its
 * member's ids, and the member's ClockOffsets. */
int weft__otf2_write_local_defs(conv *c);
/* The global definitions: clock, strings, system tree, location groups,
 * locations, then the members' unified definitions (otf2defs.c). */
int weft__otf2_write_global_defs(conv *c);
/* Closes c->archive (NULL afterwards, whatever the result). */
int weft__otf2_close(conv *c);
/* With c->in->sync: the archive on stable storage, and its entry in the
 * directory above. 0 or WEFT_EIO. */
int weft__otf2_sync(conv *c);
/* The name of a location of thread `thread`: "Master thread" or
 * "Thread T", in buf (n bytes; 64 hold any). */
void weft__otf2_thread_name(char *buf, size_t n, uint32_t thread);
/* Removes what an archive (whole or partial) left in dir. */
void weft__otf2_clean(const char *dir);
/* Bytes of the regular files below dir (0 when it cannot be read). */
uint64_t weft__otf2_bytes(const char *dir);

#endif
