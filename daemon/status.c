/* status.c - the status file of `weft status` (see status.h): built on
 * the loop thread, written on a worker thread. The removal at the end is
 * one more job on the same thread, so it comes after the last write and
 * no write can bring the file back.
 */
#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "weft_errors.h"
#include "worker.h"

struct weft_status {
    weft_worker *worker;  /* NULL once stopped */
    char *path;           /* DIR/weftd.status */
    int writing;          /* a write job is out */
    char *next;           /* the newest content waiting for it, or NULL */
    int removing;         /* the removal is queued: its done frees this */
};

typedef struct status_job {
    weft_work work;       /* first: the job is its work */
    struct weft_status *s;
    char *text;           /* to write; NULL: remove the file */
} status_job;

/* DIR/weftd.status, DIR being the catalog's directory: where `weft
 * status` looks. */
static char *status_path(const weft_daemon *d)
{
    const char *slash = strrchr(d->cfg.catalog, '/');
    char *p = NULL;

    if (!slash)
        return strdup("weftd.status");
    if (asprintf(&p, "%.*s/weftd.status", (int)(slash - d->cfg.catalog),
                 d->cfg.catalog) < 0)
        return NULL;
    return p;
}

typedef struct recording_ctx {
    json_t *traces;
    int all;
    uint32_t uid;
} recording_ctx;

static void add_recording(const weft_status_trace *t, void *arg)
{
    recording_ctx *x = arg;
    json_t *o;

    if (!x->all && t->uid != x->uid)
        return;
    o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "key", json_string(t->key));
    json_object_set_new(o, "size", json_integer(t->size));
    json_object_set_new(o, "joined", json_integer(t->joined));
    json_object_set_new(o, "connected", json_integer(t->connected));
    json_object_set_new(o, "goodbyes", json_integer(t->goodbyes));
    json_object_set_new(o, "events", json_integer((json_int_t)t->events));
    json_object_set_new(o, "written", json_integer((json_int_t)t->written));
    json_array_append_new(x->traces, o);
}

/* The figures of each trace recording (of uid only, unless all). */
static json_t *recording(const weft_daemon *d, int all, uint32_t uid)
{
    recording_ctx x = { json_array(), all, uid };

    if (d->status_src)
        d->status_src->recording(d, add_recording, &x);
    return x.traces;
}

/* What an ordinary user may see (ask.c, all == 0): weftd itself (version,
 * pid, address, its configured bounds) and their own figures, never the
 * machine's (others' connections, events, bytes, refusals, conversions):
 * "scope" says "user" and "uid" whose they are. */
static char *user_status_text(const weft_daemon *d, uint32_t uid)
{
    json_t *st = json_object(), *traces = recording(d, 0, uid);
    weft_status_ingest in = { .bound = "" };
    json_int_t conns = 0, events = 0;
    size_t i;
    json_t *t;
    char *text;

    if (d->status_src) {
        conns = (json_int_t)d->status_src->user_conns(d, uid);
        d->status_src->ingest(d, &in);
    }
    json_array_foreach(traces, i, t)
        events += json_integer_value(json_object_get(t, "events"));
    json_object_set_new(st, "scope", json_string("user"));
    json_object_set_new(st, "uid", json_integer(uid));
    json_object_set_new(st, "version", json_string(PACKAGE_VERSION));
    json_object_set_new(st, "pid", json_integer(getpid()));
    json_object_set_new(st, "started", json_integer(d->started));
    json_object_set_new(st, "updated", json_integer(time(NULL)));
    json_object_set_new(st, "listen", json_string(in.bound[0] ? in.bound
                                                             : d->cfg.socket));
    json_object_set_new(st, "connections", json_integer(conns));
    json_object_set_new(st, "max_connections",
                        json_integer((json_int_t)d->cfg.max_connections));
    json_object_set_new(st, "events", json_integer(events));
    json_object_set_new(st, "recording", traces);
    text = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    return text;
}

/* {"state", "path", "error"}: what a node found of the head's
 * archive_root (cluster/shared.h). */
static json_t *archive_check(const char *state, const char *path,
                             const char *error)
{
    json_t *o = json_object();

    json_object_set_new(o, "state", json_string(state ? state : "none"));
    json_object_set_new(o, "path", json_string(path ? path : ""));
    json_object_set_new(o, "error", json_string(error ? error : ""));
    return o;
}

static void add_node(const weft_status_node *n, void *arg)
{
    json_t *o = json_object();

    json_object_set_new(o, "name", json_string(n->name));
    json_object_set_new(o, "peer", json_string(n->peer));
    json_object_set_new(o, "server", json_string(n->server));
    json_object_set_new(o, "state", json_string(n->linked ? "linked"
                                                          : "gone"));
    json_object_set_new(o, "since", json_integer(n->since));
    json_object_set_new(o, "links", json_integer((json_int_t)n->links));
    json_object_set_new(o, "heartbeats",
                        json_integer((json_int_t)n->heartbeats));
    json_object_set_new(o, "connections",
                        json_integer((json_int_t)n->connections));
    json_object_set_new(o, "recording",
                        json_integer((json_int_t)n->recording));
    json_object_set_new(o, "events", json_integer((json_int_t)n->events));
    json_object_set_new(o, "written", json_integer((json_int_t)n->written));
    json_object_set_new(o, "relayed", json_integer((json_int_t)n->relayed));
    /* events of its traces recording not in their archives yet */
    json_object_set_new(o, "lag", json_integer(
        (json_int_t)(n->events > n->written ? n->events - n->written : 0)));
    json_object_set_new(o, "archive", archive_check(n->archive_state,
                                                    n->archive_path,
                                                    n->archive_error));
    json_array_append_new(arg, o);
}

/* "nodes": this weftd's nodes; "head": its link to its head, if it is a
 * node (admins' status only: peers' addresses). */
static void add_cluster(const weft_daemon *d, json_t *st)
{
    weft_status_head h;
    json_t *nodes = json_array(), *o;

    if (d->status_src && d->status_src->nodes)
        d->status_src->nodes(d, add_node, nodes);
    json_object_set_new(st, "nodes", nodes);
    if (!d->status_src || !d->status_src->head ||
        !d->status_src->head(d, &h))
        return;
    o = json_object();
    json_object_set_new(o, "address", json_string(h.address));
    json_object_set_new(o, "state", json_string(h.state));
    json_object_set_new(o, "name", json_string(h.name));
    json_object_set_new(o, "error", json_string(h.error));
    json_object_set_new(o, "since", json_integer(h.since));
    json_object_set_new(o, "links", json_integer((json_int_t)h.links));
    json_object_set_new(o, "forwarded",
                        json_integer((json_int_t)h.forwarded));
    json_object_set_new(o, "parts", json_integer((json_int_t)h.parts));
    json_object_set_new(o, "archive", archive_check(h.archive_state,
                                                    h.archive_path,
                                                    h.archive_error));
    json_object_set_new(st, "head", o);
}

char *weft_status_text(const weft_daemon *d, int all, uint32_t uid)
{
    json_t *st, *limits;
    unsigned running = 0, queued = 0, in_flight = 0;
    weft_status_ingest in = { .bound = "" };
    char *text;

    if (!all)
        return user_status_text(d, uid);
    st = json_object();
    limits = json_object();
    if (d->status_src) {
        d->status_src->conversions(d, &running, &queued, &in_flight);
        d->status_src->ingest(d, &in);
    }
    json_object_set_new(st, "scope", json_string("all"));
    json_object_set_new(st, "version", json_string(PACKAGE_VERSION));
    json_object_set_new(st, "pid", json_integer(getpid()));
    json_object_set_new(st, "started", json_integer(d->started));
    json_object_set_new(st, "updated", json_integer(time(NULL)));
    json_object_set_new(st, "listen", json_string(in.bound[0] ? in.bound
                                                             : d->cfg.socket));
    json_object_set_new(st, "connections", json_integer((json_int_t)in.conns));
    json_object_set_new(st, "max_connections",
                        json_integer((json_int_t)d->cfg.max_connections));
    json_object_set_new(st, "paused", json_integer((json_int_t)in.paused));
    /* converting: queued and running, as before there was a queue */
    json_object_set_new(st, "converting", json_integer(in_flight));
    json_object_set_new(st, "conversions_running",
                        json_integer(running));
    json_object_set_new(st, "conversions_queued", json_integer(queued));
    json_object_set_new(st, "max_conversions",
                        json_integer((json_int_t)d->cfg.max_conversions));
    json_object_set_new(st, "events_per_s",
                        json_integer((json_int_t)(d->events_in -
                                                  d->events_at_tick)));
    json_object_set_new(st, "events", json_integer((json_int_t)d->events_in));
    json_object_set_new(st, "bytes", json_integer((json_int_t)d->bytes_in));
    json_object_set_new(st, "refused", json_integer((json_int_t)d->refused));
    json_object_set_new(st, "dropped", json_integer((json_int_t)d->dropped_in));
    json_object_set_new(st, "recording", recording(d, all, uid));
    json_object_set_new(st, "buffered", json_integer((json_int_t)in.buffered));
    json_object_set_new(st, "max_buffered",
                        json_integer((json_int_t)d->cfg.max_buffered));
    json_object_set_new(st, "fd_limit", json_integer((json_int_t)in.fd_limit));
    for (int l = 0; d->status_src && l < WEFT_LIMIT__COUNT; l++)
        json_object_set_new(limits,
                            d->status_src->limit_name((enum weft_limit)l),
                            json_integer((json_int_t)d->limit_hits[l]));
    json_object_set_new(st, "limits_reached", limits);
    add_cluster(d, st);
    text = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    return text;
}

/* Worker thread: PATH.tmp, then renamed over PATH (readers never see
 * half a file); or the removal. */
static void status_work(weft_work *w)
{
    status_job *j = (status_job *)w;
    const char *path = j->s->path;
    char *tmp = NULL;
    FILE *f;
    int fd, ok;

    if (!j->text) {
        unlink(path);
        return;
    }
    if (asprintf(&tmp, "%s.tmp", path) < 0)
        return;
    /* 0600: other users' trace names are in it (they ask weftd, ask.c) */
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
              0600);
    f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    if (f) {
        ok = fputs(j->text, f) >= 0;
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0)
            unlink(tmp);
    }
    free(tmp);
}

static void status_free(struct weft_status *s)
{
    free(s->next);
    free(s->path);
    free(s);
}

static void queue_write(struct weft_status *s, char *text);

/* Loop thread: a write or the removal came back. */
static void status_done(weft_work *w)
{
    status_job *j = (status_job *)w;
    struct weft_status *s = j->s;

    if (!j->text) {  /* the removal: the last job */
        status_free(s);
        free(j);
        return;
    }
    free(j->text);
    free(j);
    s->writing = 0;
    if (!s->worker && !s->removing) {  /* stopped without a removal job */
        status_free(s);
        return;
    }
    if (s->next && s->worker) {
        char *text = s->next;
        s->next = NULL;
        queue_write(s, text);
    }
}

/* Queues a job writing text (owned from now on; NULL: the removal).
 * 0, or WEFT_ENOMEM / WEFT_EIO with nothing queued (text freed). */
static int queue_job(struct weft_status *s, char *text)
{
    status_job *j = calloc(1, sizeof *j);
    int rc;

    if (!j) {
        free(text);
        return WEFT_ENOMEM;
    }
    j->s = s;
    j->text = text;
    rc = weft_worker_submit(s->worker, &j->work, status_work, status_done);
    if (rc < 0) {
        free(text);
        free(j);
    }
    return rc;
}

static void queue_write(struct weft_status *s, char *text)
{
    if (queue_job(s, text) == 0)
        s->writing = 1;
}

int weft_status_start(weft_daemon *d)
{
    struct weft_status *s = calloc(1, sizeof *s);
    int rc;

    if (!s || !(s->path = status_path(d))) {
        free(s);
        return WEFT_ENOMEM;
    }
    rc = weft_worker_start(d->loop, 1, 0, &s->worker);
    if (rc < 0) {
        status_free(s);
        return rc;
    }
    d->status = s;
    return 0;
}

void weft_status_update(weft_daemon *d)
{
    struct weft_status *s = d->status;
    char *text;

    if (!s || !(text = weft_status_text(d, 1, 0)))
        return;
    if (s->writing) {
        free(s->next);
        s->next = text;
        return;
    }
    queue_write(s, text);
}

void weft_status_stop(weft_daemon *d)
{
    struct weft_status *s = d->status;

    if (!s)
        return;
    d->status = NULL;
    free(s->next);
    s->next = NULL;
    if (queue_job(s, NULL) == 0) {
        s->removing = 1;
        weft_worker_stop(s->worker);  /* s freed by the removal's done */
        return;
    }
    unlink(s->path);  /* no job for it: here, once, at exit */
    weft_worker_stop(s->worker);
    if (!s->writing)
        status_free(s);  /* else the write's done frees it */
}

void weft_status_hold(weft_daemon *d, int hold)
{
    if (d->status)
        weft_worker_hold(d->status->worker, hold);
}
