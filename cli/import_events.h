/* import_events.h - what `weft import` (import.c) reads a location's
 * events into: the callbacks that feed the region profile, the timeline
 * and the report's summaries by weftd's rules (daemon/convert/replay.c), and
 * the state they fill. Split from import.c along this seam.
 */
#ifndef WEFT_CLI_IMPORT_EVENTS_H
#define WEFT_CLI_IMPORT_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "archive.h"
#include "callcounts.h"
#include "commsum.h"
#include "iosum.h"
#include "metricsum.h"
#include "profile.h"
#include "summary.h"
#include "timeline.h"

/* What the report's summaries need of the whole archive, as conversion
 * keeps it (convert_internal.h): the maps read once the definitions are,
 * the sums of all locations. */
typedef struct imp_sums {
    weft_commmap cmap;       /* comm rank -> world rank */
    weft_metricmap mmap;     /* metric -> its class */
    weft_callcounts ccount;  /* members counting calls (callcounts.h) */
    uint64_t resolution;     /* the archive's ticks per second */
    weft_commsum *sends;     /* by sender rank: its MpiSend and MpiIsend */
    size_t nsends;
    weft_iosum io;           /* I/O operations by handle */
    weft_metricloc *ml;      /* by location: its metric series */
    size_t nml;
    weft_summary_plan plan;  /* timelines' bins, metric series' width */
} imp_sums;

/* What one location's events are read into (the callbacks' user data;
 * span first: archive.c's time callbacks note times there). */
typedef struct imp_loc {
    weft__arc_span span;
    weft_profile *prof;
    weft_profile_loc pl;
    weft_timeline tl;        /* bins NULL: no timeline */
    uint64_t unmatched;      /* Leaves of a region not open */
    uint64_t misnested;      /* Leaves of a region open further down */
    imp_sums *sums;
    weft_commsum *sends;     /* its rank's */
    weft_iolive io;          /* its I/O operations in flight */
    weft_metricloc *ml;      /* NULL: beyond WEFT_CONVERT_METRIC_LOCS */
    int oom;
} imp_loc;

/* The event reader's callbacks (archive.c's time callbacks, then
 * Enter, Leave, MpiSend, MpiIsend, I/O operations and Metric), their
 * user data an imp_loc; NULL when out of memory. The caller deletes
 * them. */
OTF2_EvtReaderCallbacks *weft__import_callbacks(void);

#endif
