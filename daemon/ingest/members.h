/* members.h - what ingest asks of the trace lifecycle about the members
 * whose streams it receives. Ingest declares what it needs here; the
 * lifecycle (daemon/traces/: trace.c, members.c) defines it. So ingest
 * knows a member only by its ingest state (memberin.h) and includes
 * nothing of daemon/traces/, and the lifecycle sees no frame and no
 * connection: the arrow points from traces/ to ingest/ (DESIGN, and
 * scripts/check-includes). Loop thread unless said.
 */
#ifndef WEFT_MEMBERS_H
#define WEFT_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "log.h"
#include "memberin.h"
#include "weft.pb-c.h"

/* Joining is three steps, so that the loop thread never waits for the
 * disk: weft_trace_join_begin (loop thread, memory only), then, for a
 * member that is new, weft_member_open (on a thread that may wait for
 * the disk: the journal writer's open thread, jwriter.h), then
 * weft_trace_join_end (loop thread) with its result.
 *
 * Finds the recording trace of hello's run (same owner, name and run) or
 * creates it, and adds or re-attaches the member of hello's rank, which
 * counts as joined and connected from now on. Returns 0 with *out set
 * to its ingest state when the member came back (its journal is open),
 * 1 with *out set when it is new and must be opened, or a WEFT_E* code
 * with err saying why (size mismatch, rank already connected...;
 * WEFT_EENDED or WEFT_ECLOSED when the run's trace has already ended,
 * complete or partial) and *limit (if
 * not NULL) the limit that refused it (max_members), else
 * WEFT_LIMIT_NONE. */
int weft_trace_join_begin(weft_daemon *d, const Weft__Hello *hello,
                          uint32_t uid, weft_memberin **out,
                          enum weft_limit *limit, char *err, size_t errlen);
/* On a node: whether hello's rank is a member of its run's part here
 * (the same owner, name and run; partlink.h): the process comes back to
 * it, whether or not the node could start a part now (it reconnects to
 * a node restarted mid-run, which recovered its part before its link to
 * the head is up again). */
int weft_trace_part_here(weft_daemon *d, const Weft__Hello *hello,
                         uint32_t uid);
/* The disk work of joining a new member (the journal writer's open
 * step, jwriter.h): its trace's directory if it is the first member,
 * then its journal, opened for appending (in->journal). Runs on one
 * thread for all members, in the order they joined (the directory is
 * made before its members' journals are opened); touches only its
 * journal and its trace's `made`. 0, or a WEFT_E* code with err saying
 * why (spool not writable...). */
int weft_member_open(weft_memberin *in, char *err, size_t errlen);
/* Loop thread: weft_member_open(in) returned rc. connected: its
 * connection is still there (it counts in the trace's `connected`). On
 * success the member is ready; a new trace is logged and recorded in the
 * catalog. On failure the member leaves its trace and is freed, in with
 * it (as is a trace whose directory could not be made, once no member of
 * it is left). */
void weft_trace_join_end(weft_memberin *in, int rc, int connected);
/* The member's connection is gone (after a Goodbye or not; in->conn is
 * NULL). When every member has said goodbye, conversion starts on a
 * worker thread; when none is connected any more, the grace period
 * starts. */
void weft_trace_member_left(weft_memberin *in);
/* A write of the member's journal came back (its last entry queued, or
 * an fdatasync): 1 if its trace waited for its members' writes before
 * it converts (SYNCING) and was told, else 0. */
int weft_member_written(weft_memberin *in);

/* Entries of the member reached its journal: its trace's archive is
 * written from them while it records (streamjob.c). */
void weft_member_journaled(weft_memberin *in);

/* A head's member whose node writes its events (relay.h, events_here)
 * joined or came back: its trace's archive is made now if it is not, and
 * the node is told where it is (weft_relay_archive_key) once it is; if
 * it cannot be, the member's connection fails saying so. */
void weft_member_events_elsewhere(weft_memberin *in);
/* Bytes of the member's journal (with the archive they will make) are
 * charged to its trace's owner (quota.h's `live`), and given back when
 * the trace is freed. */
void weft_member_charge(weft_memberin *in, uint64_t bytes);
/* What the Definitions of its trace's members cost (weft_validate_defs'
 * charge): adds `add`, takes back `sub` (down to 0) and returns the
 * total, which ingest holds against max_definition_bytes. */
uint64_t weft_member_def_bytes(weft_memberin *in, uint64_t add,
                               uint64_t sub);
/* `count` events the member sent could not be stored, and its journal
 * could not say so either (errno err): its trace's conversion counts
 * them as lost. */
void weft_member_unjournaled(weft_memberin *in, uint64_t count, int err);

/* For log lines: its trace's name and key and its rank into ctx. */
void weft_member_describe(const weft_memberin *in, weft_log_ctx *ctx);
/* Its trace's name, and directory (SPOOL/traces/KEY), for messages. */
const char *weft_member_name(const weft_memberin *in);
const char *weft_member_dir(const weft_memberin *in);
/* Members of its trace that joined so far. */
uint32_t weft_member_joined(const weft_memberin *in);

/* Logs a line about the member with its trace's name and key and its
 * rank as journal fields (log.h); the message names them itself too. */
#define weft_mlog(in, level, ...)                                            \
    do {                                                                     \
        weft_log_ctx mlog_ctx_ = { NULL, NULL, -1, NULL };                   \
        weft_member_describe(in, &mlog_ctx_);                                \
        weft_dlog_ctx((in)->d, level, &mlog_ctx_, __VA_ARGS__);              \
    } while (0)

#endif
