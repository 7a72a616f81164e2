/* counts.h - calls a recorder counts instead of recording each one
 * (issue #32: the pthread recorder's uncontended lock calls), as they
 * travel in a trace.
 *
 * For each region R whose calls it counts, the recorder defines two
 * MetricMembers named as R: one described WEFT_COUNTS_CALLS (unit
 * "calls") and one described WEFT_COUNTS_TIME (unit "s", exponent -9),
 * both UINT64 and OTF2_METRIC_ABSOLUTE_LAST: each Metric event of their
 * class on a location carries what that location counted since its
 * previous one. An OTF2 reader sees ordinary metrics; the profile
 * (summary/callcounts.h) adds them to R's visits and time on that
 * location, so `weft profile` counts every call, recorded or not.
 */
#ifndef WEFT_COUNTS_H
#define WEFT_COUNTS_H

#define WEFT_COUNTS_CALLS "weft: calls counted, not recorded one by one"
#define WEFT_COUNTS_TIME "weft: time in calls counted, not recorded one by one"

#endif
