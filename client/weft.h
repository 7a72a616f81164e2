/* weft.h - libweft, the client library of the weft trace collection service.
 *
 * A process opens one session (weft_open, configured from the environment),
 * defines strings, regions and metrics, and records events from any number
 * of threads; each thread is its own OTF2 location. Records are appended to
 * per-thread buffers and shipped to weftd by a background sender thread.
 * weft_close (also run at process exit) flushes everything and says goodbye.
 *
 * Two levels of API:
 *  - convenience calls (weft_region, weft_enter, ...) that assign
 *    process-local ids and take timestamps themselves;
 *  - one call per OTF2 record, generated from the record table, whose
 *    arguments mirror the libotf2 writer function one for one:
 *      OTF2_EvtWriter_Enter(writer, attributeList, time, region)
 *        -> weft_evt_Enter(attributeList, time, region)
 *      OTF2_GlobalDefWriter_WriteRegion(writer, self, name, ...)
 *        -> weft_def_Region(self, name, ...)
 *    Ids passed to weft_def_* are process-local; weftd unifies them across
 *    the processes of a trace. Do not mix self-chosen ids with ids from the
 *    convenience calls within one id space.
 *
 * Environment: WEFT_SERVER (host:port or unix:/path, default
 * 127.0.0.1:7411), WEFT_TRACE (trace name), WEFT_RANK and WEFT_SIZE (else
 * the MPI launcher's or Slurm's variables), WEFT_BUFFER_SIZE, WEFT_POOL_SIZE,
 * WEFT_FLUSH_MS, WEFT_REQUIRED, WEFT_STALL_MS, WEFT_OVERFLOW,
 * WEFT_CLOSE_TIMEOUT_MS. See README.md.
 *
 * When the connection to weftd breaks (or weftd restarts), the sender
 * reconnects with backoff and sends again whatever weftd does not hold, so
 * nothing is lost or duplicated; recording threads wait only when the
 * buffer pool is exhausted. See weft_dropped for when records are
 * discarded instead.
 *
 * Every function returns 0 (or an id) on success and a negative WEFT_E*
 * code on failure; see weft_errors.h.
 */
#ifndef WEFT_H
#define WEFT_H

#include <stdint.h>

#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_AttributeValue.h>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#include "weft_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

/* An attribute list attached to an event, as OTF2_AttributeList: a set of
 * (attribute, type, value) triples, each type the one declared by the
 * Attribute definition (weft_def_Attribute). Like libotf2's event writers,
 * every weft_evt_* call that returns 0 empties the list it was given, so
 * one list is filled anew for each event; NULL means no attributes. A
 * list belongs to the caller and is used by one thread at a time. */
typedef struct weft_attribute_list weft_attribute_list;

/* A new empty list (free it with weft_attribute_list_free), or NULL when
 * out of memory. */
WEFT_API weft_attribute_list *weft_attribute_list_new(void);
WEFT_API void weft_attribute_list_free(weft_attribute_list *list);
/* Adds one attribute, as OTF2_AttributeList_AddAttribute. `value` is read
 * as `type` says (value.uint8 for OTF2_TYPE_UINT8, value.stringRef for
 * OTF2_TYPE_STRING, ...). Returns 0, WEFT_EEXIST if the attribute is in
 * the list already, WEFT_EINVAL for a NULL list or OTF2_TYPE_NONE or an
 * unknown type, WEFT_ELIMIT beyond 64 attributes, WEFT_ENOMEM. */
WEFT_API int weft_attribute_list_add(weft_attribute_list *list,
                                     OTF2_AttributeRef attribute,
                                     OTF2_Type type, OTF2_AttributeValue value);
/* Empties the list (OTF2_AttributeList_RemoveAllAttributes). */
WEFT_API void weft_attribute_list_remove_all(weft_attribute_list *list);
/* Number of attributes in the list (0 for NULL). */
WEFT_API uint32_t weft_attribute_list_count(const weft_attribute_list *list);

/* Opens the process's session from the environment, connects to weftd
 * and says Hello; libweft's sender thread reads weftd's answer while the
 * application runs on, recording. If weftd cannot be reached, prints one
 * warning and returns 0: the application runs on and records are
 * discarded; the same, from then on, if weftd refuses the process
 * (unless WEFT_REQUIRED=1: then weft_open waits for the answer and
 * returns WEFT_ECONNECT). Bad environment values give WEFT_ECONFIG with a
 * message on stderr. Calling it twice is harmless. It also installs the
 * fatal signal handlers (WEFT_SIGNALS, README) where the disposition is
 * still the default. */
WEFT_API int weft_open(void);
/* Flushes every thread's records, says goodbye and waits (bounded) until
 * weftd holds everything. Call it after the recording threads have
 * finished; it also runs at exit. */
WEFT_API int weft_close(void);
/* 1 while the session is connected to weftd or makes its first
 * connection; 0 while it reconnects, or when tracing is off. */
WEFT_API int weft_connected(void);
/* The trace clock: CLOCK_MONOTONIC in nanoseconds, or TSC ticks with
 * WEFT_CLOCK=tsc (chosen by weft_open: read it after opening). */
WEFT_API uint64_t weft_time(void);
/* The calling thread's location index (0, 1, ... in order of first use);
 * its OTF2 location id in the archive is rank * 2^32 + index. */
WEFT_API uint32_t weft_location_index(void);
/* This process's rank and the trace size, as taken from the environment. */
WEFT_API uint32_t weft_rank(void);
WEFT_API uint32_t weft_size(void);

/* Event record types, for weft_dropped: WEFT_TYPE_<Name> is the id of
 * event record <Name> in the record table (weft_records.def). */
enum weft_event_type {
    WEFT_TYPE_ANY = 0,
#define WEFT_EVENT(id, Name, fields) WEFT_TYPE_##Name = (id),
#include "weft_records.def"
};

/* How many records of location `location` (a weft_location_index value
 * of this process) the library accepted - the call returned 0 - but that
 * will not be in the trace: discarded while the buffer pool was exhausted
 * (WEFT_OVERFLOW=discard, or weftd unreachable for longer than
 * WEFT_STALL_MS), while tracing was off, or given up unacknowledged by
 * weft_close. With `type` WEFT_TYPE_ANY all records count, else only event
 * records of that type (the per-type counts add up to the total, except
 * for records refused with WEFT_ECLOSED after their thread ended, which
 * the total also counts, and if memory ran out while counting). The same
 * totals go to weftd in the Goodbye. Counts are final once the thread has ended or weft_close has
 * returned; before that, records discarded by a running thread may not
 * be counted yet. Returns 0 with *count, or WEFT_EINVAL for a location
 * this process never used or a type that is not an event record. */
WEFT_API int weft_dropped(uint32_t location, uint32_t type, uint64_t *count);

/* Convenience definitions; ids are assigned by the library from 0 up.
 * They return the id, or OTF2_UNDEFINED_* if the session is not open. */
WEFT_API OTF2_StringRef weft_string(const char *s);
WEFT_API OTF2_RegionRef weft_region(const char *name);
/* A metric with one member: a MetricMember and a MetricClass. */
WEFT_API OTF2_MetricRef weft_metric(const char *name, const char *unit,
                                    OTF2_Type value_type,
                                    OTF2_MetricMode mode);

/* Convenience events on the calling thread, timestamped now. */
WEFT_API int weft_enter(OTF2_RegionRef region);
WEFT_API int weft_leave(OTF2_RegionRef region);
WEFT_API int weft_metric_u64(OTF2_MetricRef metric, uint64_t value);
WEFT_API int weft_metric_i64(OTF2_MetricRef metric, int64_t value);
WEFT_API int weft_metric_double(OTF2_MetricRef metric, double value);

/* One function per record of the record table, arguments as in libotf2.
 * References to what weftd defines itself follow the table's convention
 * (weft_records.def): a location is named by its id rank * 2^32 + thread
 * index, a location group by the rank of its process, a system tree node
 * as 0 (the machine) or 1 (this process's host). weft_def_ClockOffset
 * applies to every location of this process. */
#define WEFT_SCALAR(ctype, name, W, sel) , ctype name
#define WEFT_ARRAY(ctype, name, count, W, sel) , const ctype *name
#define WEFT__DROP_(first, ...) __VA_ARGS__
#define WEFT__DROP(...) WEFT__DROP_(__VA_ARGS__)
/* `fields` arrives expanded to ", type name, ..." (commas and all). */
#define WEFT__DEF_CLIENT(Name, ...)                                          \
    WEFT_API int weft_def_##Name(WEFT__DROP(~ __VA_ARGS__));
#define WEFT__DEF_LOCAL(Name, ...) WEFT__DEF_CLIENT(Name, __VA_ARGS__)
#define WEFT__DEF_DAEMON(Name, ...)
#define WEFT__DEF_WEFT(Name, ...)
#define WEFT_DEF(id, Name, flags, fields) WEFT__DEF_##flags(Name, fields)
#define WX(ctype, name, W) /* weft's own fields: not in the API */
#define WEFT_EVENT(id, Name, fields)                                         \
    WEFT_API int weft_evt_##Name(weft_attribute_list *attributes,            \
                                 OTF2_TimeStamp time fields);
#include "weft_records.def"
#undef WEFT__DEF_CLIENT
#undef WEFT__DEF_LOCAL
#undef WEFT__DEF_DAEMON
#undef WEFT__DEF_WEFT
#undef WEFT_SCALAR
#undef WEFT_ARRAY

#ifdef __cplusplus
}
#endif
#endif
