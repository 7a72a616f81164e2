/* ask.h - what a user's weft command asks weftd: the rows of the catalog
 * it may see, weftd's status, removing one of its traces.
 *
 * DESIGN (who reaches what): the catalog and weftd.status are weftd's
 * alone (0600), so a user reads neither, and the spool is not listable.
 * root and weftd's own user read them directly; every other user's weft
 * command asks weftd on its Unix socket, where the kernel names the asker
 * (SO_PEERCRED; a Query over TCP is refused), and gets:
 *  - CATALOG: an SQLite image of the catalog holding only the asker's
 *    traces and their rows (store/catalog_image.c), which the command
 *    opens in memory, so every query it makes (weft sql too) sees only
 *    those;
 *  - STATUS: the status with only the asker's traces recording;
 *  - REMOVE: the asker's trace removed, directory and rows; another
 *    user's trace is "not found", as one that does not exist; a trace
 *    recording or converting is refused, force or not (with weftd
 *    running no such row is stale: recovery failed those at start);
 *  - IMPORT: weft import's rows of an archive the command read as the
 *    asker, in an ImportTrace frame after the Query (import.h: the
 *    frame may then be max_frame bytes, not the 64 KiB before Hello),
 *    stored as a trace of the asker's; weftd never opens the archive.
 * Members of the configured admin_group (and root, and weftd's user) get
 * every trace. Archives are readable by their owner through an ACL
 * (fsutil.h: weft_share_tree), so verify, export and any OTF2 reader work
 * on them. One Query per connection, answered on a worker thread of its
 * own, then the connection closes; at most WEFT_ASK_MAX_QUEUED wait, at
 * most max_questions_per_user of one user (refusals are logged a few
 * times a second at most, with a count). A CATALOG answer is sent piece
 * by piece as the asker reads it, never held whole in memory.
 */
#ifndef WEFT_ASK_H
#define WEFT_ASK_H

#include "server.h"
#include "session.h"
#include "weft.pb-c.h"

/* Questions queued or being answered at once (answers being sent
 * included); more are refused. The last WEFT_ASK_RESERVE are for root,
 * weftd's own user and admin_group (reserve.h); each other user has
 * max_questions_per_user. */
#define WEFT_ASK_MAX_QUEUED 64
#define WEFT_ASK_RESERVE 8
/* Bytes of a CATALOG answer read and sent at a time (at most
 * WEFT_ANSWER_CHUNK): what an asker that does not read holds of weftd. */
#define WEFT_ASK_PIECE (64u << 10)
/* Longest trace key in a REMOVE. */
#define WEFT_ASK_MAX_KEY 4096

/* ask.c's state (d->ask). Loop thread. */
typedef struct weft_asks {
    struct weft_worker *asker;    /* answers questions, while there are
                                     some (it sets this to NULL when it
                                     stops: freed only at exit) */
    unsigned n;                   /* questions queued or answering */
    /* questions in flight (queued, or their answer being sent) per uid,
     * for max_questions_per_user: at most WEFT_ASK_MAX_QUEUED uids */
    struct weft_asker { uint32_t uid, n; } users[WEFT_ASK_MAX_QUEUED];
    uint32_t nusers;
    weft_ratelimit log[2];        /* its refusals logged, per cause */
} weft_asks;

/* d->ask made (weft_daemon_init) and freed (weft_daemon_free, at exit). */
int weft_ask_init(weft_daemon *d);
void weft_ask_free(weft_daemon *d);

/* c's Query: pauses c while a worker answers it, then sends the Answer
 * frames (or an Error) and closes c. 0 when taken, or the WEFT_E* code c
 * was failed with. Loop thread. */
int weft_ask_query(weft_conn *c, const Weft__Query *q);
/* c's ImportTrace, after its Query{IMPORT}: checked (import.h), then
 * stored by a worker, which answers a line naming the trace. 0 when
 * taken, or the WEFT_E* code c was failed with. Loop thread. */
int weft_ask_import(weft_conn *c, const Weft__ImportTrace *m);
/* At start and on reload: looks admin_group up for weftd to keep
 * (weft_reserve_load; blocks for NSS, the only place that does), says in
 * the log who sees every trace (a missing admin group is a warning) and
 * warns when there is no Unix socket to ask on. */
void weft_ask_report(weft_daemon *d);
/* c is closing: its question's answer goes nowhere. */
void weft_ask_closed(weft_conn *c);
/* The three above, for the sessions (d->ask_cbs). */
extern const weft_session_ask weft_ask_cbs;

#endif
