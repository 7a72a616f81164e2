/* callcounts.h - calls counted instead of recorded (proto/counts.h) in
 * the profile: the Metric events that carry them add visits and time to
 * their region's row on their location.
 *
 * Built after pass 1 from the global definitions (defview.h), as the
 * metric map is, then read only: which MetricMember counts which region
 * and whether it counts calls or ns. weftd's conversion and weft import
 * feed it the Metric events they read, with the profile of the event's
 * location.
 */
#ifndef WEFT_CALLCOUNTS_H
#define WEFT_CALLCOUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "defview.h"
#include "metricsum.h"
#include "profile.h"
#include "record.h"

/* By global MetricMember id: the region counted + 1 (0: none), whether
 * the member counts time (ns) rather than calls, and whether it is a
 * count at all (described so, also of a call that defined no region:
 * one the process never made). */
typedef struct weft_callcounts {
    uint32_t *region;
    uint8_t *is_time;
    uint8_t *is_count;
    size_t n;
} weft_callcounts;

/* Builds cc from defs' MetricMembers described as proto/counts.h says
 * and named as one of p's regions (p's name function: the archive's
 * regions, which a defview need not hold). 0 or WEFT_ENOMEM;
 * weft_callcounts_free frees cc either way. */
int weft_callcounts_build(weft_callcounts *cc, const weft_defview *defs,
                          const weft_profile *p);
void weft_callcounts_free(weft_callcounts *cc);

/* If r (global ids) is a Metric event with counted members, adds their
 * values to l's rows in p: calls to the visits, ns (at `resolution`
 * ticks per second) to the exclusive and inclusive time. 0, or
 * WEFT_ENOMEM. Other records: 0, nothing done. */
int weft_callcounts_event(const weft_callcounts *cc,
                          const weft_metricmap *mm, const weft_profile *p,
                          weft_profile_loc *l, const weft_record *r,
                          uint64_t resolution);

/* 1 when r (global ids) is a Metric event whose members are all counts
 * (a recorder's, which weft_callcounts_event puts in the profile: no
 * metric the report plots); else 0. */
int weft_callcounts_only(const weft_callcounts *cc,
                         const weft_metricmap *mm, const weft_record *r);

#endif
