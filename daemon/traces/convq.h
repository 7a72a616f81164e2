/* convq.h - the conversions waiting for a max_conversions slot, taken
 * fairly between users: round robin by owner uid, not first come first
 * served, so that one user's burst of finished traces delays another
 * user's conversion by at most one of theirs per slot.
 *
 * DESIGN: the converter (worker.h) runs what it is given in the order
 * given; so conversions wait here instead, each user's in a FIFO of its
 * own, and only as many as there are free slots are handed to the
 * converter. The next one is the oldest of the user after the one served
 * last (in uid order, wrapping around). trace.h's
 * weft_trace_count_conversions and weft_trace_set_max_conversions live
 * in convq.c too. Loop thread only.
 */
#ifndef WEFT_CONVQ_H
#define WEFT_CONVQ_H

#include <stddef.h>
#include <stdint.h>

#include "uidmap.h"
#include "worker.h"

struct weft_daemon;

/* One conversion waiting, embedded in the caller's job (the job owns it):
 * when its turn comes, `work` is submitted to d->traces->converter with
 * `run` and `done`. */
typedef struct weft_convq_item {
    struct weft_convq_item *next;
    uint32_t uid;
    weft_work *work;
    weft_work_fn run, done;
} weft_convq_item;

/* One user's waiting conversions, oldest first. */
typedef struct weft_convq_user {
    uint32_t uid;
    weft_convq_item *head, *tail;
} weft_convq_user;

/* The users with conversions waiting, by uid; the uid served last. */
typedef struct weft_convq {
    weft_uidmap users;   /* weft_convq_user cells */
    size_t count;        /* conversions waiting, all users */
    uint32_t last_uid;
    int served;          /* last_uid holds: one was served */
} weft_convq;

/* Queues it for uid (FIFO among uid's). 0, or WEFT_ENOMEM (not queued). */
int weft_convq_push(weft_convq *q, weft_convq_item *it, uint32_t uid);
/* Takes the next conversion: the oldest of the first user after the one
 * served last, in uid order, wrapping around. NULL when none waits. */
weft_convq_item *weft_convq_pop(weft_convq *q);
/* Frees the table (the items are their owners'). */
void weft_convq_free(weft_convq *q);

/* Queues it for uid in d->traces->convq and hands the converter as many
 * waiting conversions as it has free slots (starting it if need be). 0,
 * or a WEFT_E* code (it is not queued). */
int weft_convq_submit(struct weft_daemon *d, weft_convq_item *it,
                      uint32_t uid);
/* A conversion ended (its done callback): hands the converter the next
 * ones for the slots free now. */
void weft_convq_next(struct weft_daemon *d);

#endif
