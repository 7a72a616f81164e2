/* outframe.c - the frames libweft's sender writes (client_session.h):
 * the next one of what waits (definitions first, then the oldest event
 * batch, then, when closing, the Goodbye with what each thread recorded
 * and dropped and a process tree's children), and a Heartbeat. Sender
 * thread; the queues under weft__S.mu. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_internal.h"
#include "fifo.h"
#include "frame.h"
#include "client_session.h"
#include "weft_errors.h"

/* The child processes of this process still running (or not yet
 * waited for), from each thread's /proc/self/task/TID/children, into
 * pids (at most max). Returns their number. A process with no child
 * at all (most of a build's) is told by one waitid, which sees every
 * thread's children and reaps none (WNOWAIT), without reading /proc. */
static size_t read_children(uint32_t *pids, size_t max)
{
    DIR *tasks;
    struct dirent *de;
    siginfo_t si = { 0 };
    size_t n = 0;

    if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG |
                                  WNOWAIT) < 0 && errno == ECHILD)
        return 0;
    tasks = opendir("/proc/self/task");
    while (tasks && n < max && (de = readdir(tasks)) != NULL) {
        char path[64], buf[4096], *p, *end;
        ssize_t len;
        int fd;

        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children",
                 de->d_name);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue;
        len = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[len > 0 ? len : 0] = 0;
        for (p = buf; n < max; p = end) {
            unsigned long pid = strtoul(p, &end, 10);
            if (end == p || pid == 0 || pid > UINT32_MAX)
                break;
            pids[n++] = (uint32_t)pid;
        }
    }
    if (tasks)
        closedir(tasks);
    return n;
}

/* The Goodbye: per location, events recorded and records dropped, how
 * the process ended if it did not end normally, and for a process tree's
 * member whether it execs and its children still running. Returns
 * the packed frame's length or a WEFT_E* code. mu held. */
static ssize_t pack_goodbye_locked(uint8_t **out)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    Weft__LocationEnd *ends = NULL, **ptrs = NULL;
    static uint32_t children[WEFT_MAX_CHILDREN]; /* mu held */
    size_t n = 0;
    ssize_t len;

    ends = calloc(weft__S.nthreads ? weft__S.nthreads : 1, sizeof *ends);
    ptrs = calloc(weft__S.nthreads ? weft__S.nthreads : 1, sizeof *ptrs);
    if (!ends || !ptrs) {
        len = WEFT_ENOMEM;
        goto out;
    }
    for (weft__thread *t = weft__S.threads; t; t = t->next) {
        if (t->recorded == 0 && t->dropped == 0)
            continue;
        weft__location_end__init(&ends[n]);
        ends[n].location = t->location;
        ends[n].events = t->recorded;
        ends[n].dropped = t->dropped;
        ptrs[n] = &ends[n];
        n++;
    }
    g.n_locations = n;
    g.locations = ptrs;
    g.ended = weft__S.ended;
    if (weft__S.cfg.tree) {
        g.exec = weft__S.execs;
        g.children = children;
        g.n_children = read_children(children, WEFT_MAX_CHILDREN);
    }
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    len = weft__pack(&env, out);
out:
    free(ends);
    free(ptrs);
    return len;
}

/* See client_session.h. */
int weft__next_frame(weft__out *out, int closing, char *why,
                     size_t whylen)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    Weft__EventBatch batch = WEFT__EVENT_BATCH__INIT;
    weft__chunk *c = NULL;
    weft__buf *b = NULL;
    ssize_t len = 0;
    int goodbye = 0;

    pthread_mutex_lock(&weft__S.mu);
    if (weft__S.d_head) {
        c = WEFT_FIFO_SHIFT(weft__S.d_head, weft__S.d_tail);
        if (!c->seq) /* else a resend: same number */
            c->seq = ++weft__S.defs_seq;
        WEFT_FIFO_PUSH(weft__S.df_head, weft__S.df_tail, c);
    } else if (weft__S.q_head) {
        b = WEFT_FIFO_SHIFT(weft__S.q_head, weft__S.q_tail);
        WEFT_FIFO_PUSH(weft__S.f_head, weft__S.f_tail, b);
    } else if (closing && !weft__S.goodbye_queued) {
        len = pack_goodbye_locked(&out->data);
        goodbye = 1;
        weft__S.goodbye_queued = 1;
    }
    pthread_mutex_unlock(&weft__S.mu);

    /* The chunk and batch are in flight now: only this thread touches
     * them until their Ack, so they are packed without the lock. */
    if (c) {
        defs.seq = c->seq;
        defs.records.data = c->data;
        defs.records.len = c->len;
        env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
        env.definitions = &defs;
        len = weft__pack(&env, &out->data);
    } else if (b) {
        batch.location = b->location;
        batch.seq = b->seq;
        batch.base_time = b->base_time;
        batch.events = b->events;
        batch.records.data = b->data;
        batch.records.len = b->len;
        env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
        env.event_batch = &batch;
        len = weft__pack(&env, &out->data);
    } else if (!goodbye) {
        return 0;
    }
    if (len < 0) {
        out->data = NULL;
        snprintf(why, whylen, "cannot pack a frame: %s",
                 weft_strerror((int)len));
        return (int)len;
    }
    out->len = (size_t)len;
    out->off = 0;
    out->is_goodbye = goodbye;
    return 1;
}

/* See client_session.h. */
int weft__pack_heartbeat(weft__out *out, char *why, size_t whylen)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
    ssize_t len;

    env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    len = weft__pack(&env, &out->data);
    if (len < 0) {
        out->data = NULL;
        snprintf(why, whylen, "cannot pack a Heartbeat: %s",
                 weft_strerror((int)len));
        return (int)len;
    }
    out->len = (size_t)len;
    out->off = 0;
    out->is_goodbye = 0;
    return 1;
}
