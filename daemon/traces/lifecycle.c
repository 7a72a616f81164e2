/* lifecycle.c - a trace's lifecycle (trace.h): the table of its states
 * and events, the one function that moves a trace along it, and the
 * lists (one per state, in d->traces->lists) that hold every trace while
 * it lives, walked only through the functions here; and the traces'
 * parts' state made and freed (weft_traces_init). Loop thread.
 */
#include <stdlib.h>
#include <string.h>

#include "catjob.h"
#include "live.h"
#include "retain.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"

_Static_assert(WEFT_TRACE_DONE == WEFT_TRACE_LISTS, "a list per state but "
               "DONE (trace_internal.h)");

/* moves[state][event]: 1 + the state it moves to; 0, refused. */
#define TO(s) (WEFT_TRACE_##s + 1)
static const unsigned char moves[WEFT_TRACE__NSTATES][WEFT_TEV__COUNT] = {
    [WEFT_TRACE_RECORDING] = { [WEFT_TEV_END] = TO(SYNCING),
                               [WEFT_TEV_NO_DIR] = TO(DROPPED),
                               [WEFT_TEV_FORGET] = TO(DONE) },
    [WEFT_TRACE_SYNCING] = { [WEFT_TEV_WRITTEN] = TO(CONVERTING),
                             [WEFT_TEV_FORGET] = TO(DONE) },
    [WEFT_TRACE_CONVERTING] = { [WEFT_TEV_FAILED] = TO(RETRY_WAIT),
                                [WEFT_TEV_FINISHED] = TO(DONE) },
    [WEFT_TRACE_RETRY_WAIT] = { [WEFT_TEV_RETRY] = TO(SYNCING),
                                [WEFT_TEV_FORGET] = TO(DONE) },
    [WEFT_TRACE_DROPPED] = { [WEFT_TEV_FORGET] = TO(DONE) },
    /* DONE: none */
};
#undef TO

int weft_trace_next_state(enum weft_trace_state s, enum weft_trace_event ev)
{
    if ((unsigned)s >= WEFT_TRACE__NSTATES || (unsigned)ev >= WEFT_TEV__COUNT ||
        !moves[s][ev])
        return WEFT_ESTATE;
    return moves[s][ev] - 1;
}

static const char *const state_names[] = {
#define WEFT_TRACE_STATE_NAME(id, name) name,
    WEFT_TRACE_STATES(WEFT_TRACE_STATE_NAME)
#undef WEFT_TRACE_STATE_NAME
};
static const char *const event_names[] = {
#define WEFT_TRACE_EVENT_NAME(id, name) name,
    WEFT_TRACE_EVENTS(WEFT_TRACE_EVENT_NAME)
#undef WEFT_TRACE_EVENT_NAME
};

const char *weft_trace_state_name(enum weft_trace_state s)
{
    return (unsigned)s < WEFT_TRACE__NSTATES ? state_names[s] : "?";
}

const char *weft_trace_event_name(enum weft_trace_event ev)
{
    return (unsigned)ev < WEFT_TEV__COUNT ? event_names[ev] : "?";
}

/* See trace_internal.h: t, in no list, at the head of its state's. */
void weft__trace_push(weft_trace *t)
{
    weft_trace **head = &t->d->traces->lists[t->state];

    t->prev = NULL;
    t->next = *head;
    if (*head)
        (*head)->prev = t;
    *head = t;
}

static void list_unlink(weft_trace *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        t->d->traces->lists[t->state] = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next = t->prev = NULL;
}

int weft_trace_on(weft_trace *t, enum weft_trace_event ev)
{
    int to = weft_trace_next_state(t->state, ev);

    if (to < 0) {
        weft_tlog(t, WEFT_LOG_WARNING, "trace '%s' (%s): event %s refused "
                  "in state %s", t->name ? t->name : "", t->key,
                  weft_trace_event_name(ev), weft_trace_state_name(t->state));
        return to;
    }
    weft_tlog(t, WEFT_LOG_DEBUG, "trace '%s' (%s): %s -> %s (%s)",
              t->name ? t->name : "", t->key,
              weft_trace_state_name(t->state),
              weft_trace_state_name((enum weft_trace_state)to),
              weft_trace_event_name(ev));
    list_unlink(t);
    t->state = (enum weft_trace_state)to;
    if (t->state == WEFT_TRACE_DONE)
        weft__trace_free(t);
    else
        weft__trace_push(t);
    return 0;
}

int weft_traces_init(weft_daemon *d)
{
    d->traces = calloc(1, sizeof *d->traces);
    d->retain = calloc(1, sizeof *d->retain);
    d->live = calloc(1, sizeof *d->live);
    d->catjob = calloc(1, sizeof *d->catjob);
    if (d->traces && d->retain && d->live && d->catjob) {
        weft_convert_budget_init(&d->traces->stream_budget, 0);
        return 0;
    }
    weft_traces_free(d);
    return WEFT_ENOMEM;
}

void weft_traces_free(weft_daemon *d)
{
    if (d->traces)
        weft_convert_budget_destroy(&d->traces->stream_budget);
    free(d->traces);
    d->traces = NULL;
    free(d->retain);
    d->retain = NULL;
    free(d->live);
    d->live = NULL;
    free(d->catjob);
    d->catjob = NULL;
}

weft_trace *weft_trace_first(const weft_daemon *d, enum weft_trace_state s)
{
    return (unsigned)s < WEFT_TRACE_LISTS ? d->traces->lists[s] : NULL;
}

weft_trace *weft_trace_next(const weft_trace *t)
{
    return t->next;
}

unsigned weft_trace_count(const weft_daemon *d, enum weft_trace_state s)
{
    unsigned n = 0;

    for (const weft_trace *t = weft_trace_first(d, s); t; t = t->next)
        n++;
    return n;
}

weft_trace *weft_trace_find(const weft_daemon *d, enum weft_trace_state s,
                            const char *key)
{
    for (weft_trace *t = weft_trace_first(d, s); t; t = t->next)
        if (strcmp(t->key, key) == 0)
            return t;
    return NULL;
}

int weft_trace_syncing(const weft_trace *t)
{
    return t->state == WEFT_TRACE_SYNCING;
}
