/* ask.c - what a user's weft command asks weftd (see ask.h).
 *
 * DESIGN (memory): a CATALOG answer is not held in memory: the worker
 * writes the image to an unlinked file of the spool, and the loop reads
 * it back (uv_fs_read, off the loop) one Answer frame at a time, the next
 * only once the previous was written to the socket (on_written). An
 * asker that does not read thus holds one piece, WEFT_ASK_PIECE,
 * whatever the image's size. A question counts for its uid
 * (max_questions_per_user) from its submission until its answer is
 * written or its connection closes.
 * Each kind of question is one entry of questions[]: its work on the
 * asker thread and its answer on the loop thread; a kind without an
 * entry is refused.
 */
#include "ask.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "catalog.h"
#include "import.h"
#include "frame.h"
#include "log.h"
#include "quota.h"
#include "reserve.h"
#include "retain.h"
#include "spool.h"
#include "status.h"
#include "trace.h"
#include "weft_errors.h"
#include "worker.h"

typedef struct ask_job {
    weft_work work;          /* first: the job is its work */
    weft_daemon *d;
    weft_conn *c;            /* NULL once c closed (loop thread) */
    int kind;                /* WEFT__QUERY__KIND__* */
    uint32_t uid, gid;
    char *catalog, *spool, *trace; /* copies (SIGHUP) */
    int all;                 /* uid sees every trace (an admin: reserve.h,
                                known without a lookup) */
    int held;                /* REMOVE: weftd holds another user's trace */
    /* worker thread's results */
    int rc;
    unsigned char *image;    /* CATALOG: sqlite3_free */
    size_t image_len;
    /* CATALOG answer: the image in an unlinked file (or -1), its length
     * and how much of it was sent; loop thread once the worker is done */
    int fd;
    uint64_t len, off;
    uv_fs_t req;             /* reading the next piece (reading) */
    uint8_t *piece;
    int reading;
    int at_worker;           /* the worker has the job (ask_done ends it) */
    uint8_t *import;         /* IMPORT: the ImportTrace, packed */
    size_t import_len;
    uint64_t import_bytes;   /* IMPORT: its archive's bytes (loop thread) */
    uint64_t charge;         /* IMPORT: what its rows cost the quota, held
                                (live) while it is stored (loop thread) */
    char *line;              /* REMOVE, IMPORT: what was done */
    char err[512];
} ask_job;

/* One kind of question (questions[] below). */
typedef struct question {
    /* Asker thread: the work, 0 or a WEFT_E* code (the reason in err). */
    int (*work)(ask_job *j);
    /* Loop thread, the work done without error: sends the answer (*rc:
     * 0 or the code c fails with) and returns 0, or 1 when the answer
     * goes on later (it ends with answer_end). */
    int (*answer)(ask_job *j, int *rc);
} question;

static void job_free(ask_job *j)
{
    if (j->fd >= 0)
        close(j->fd);
    free(j->catalog);
    free(j->spool);
    free(j->trace);
    free(j->import);
    sqlite3_free(j->image);
    free(j->line);
    free(j);
}

/* A question is over (answered, refused or its asker gone): it no
 * longer counts for its uid. Loop thread. */
static void question_end(ask_job *j)
{
    weft_daemon *d = j->d;

    d->ask->n--;
    for (uint32_t i = 0; i < d->ask->nusers; i++) {
        if (d->ask->users[i].uid != j->uid)
            continue;
        if (--d->ask->users[i].n == 0)
            d->ask->users[i] = d->ask->users[--d->ask->nusers];
        break;
    }
    job_free(j);
}

/* Worker thread: moves the image to an unlinked file of the spool (the
 * loop sends it from there, piece by piece). 0 or WEFT_EIO with j->err. */
static int stash_image(ask_job *j)
{
    char path[4096];
    size_t done = 0;
    int fd = open(j->spool, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR ||
                   errno == EINVAL)) {
        /* No O_TMPFILE here: a named one, unlinked at once. */
        snprintf(path, sizeof path, "%s/.answer-XXXXXX", j->spool);
        if ((fd = mkostemp(path, O_CLOEXEC)) >= 0)
            unlink(path);
    }
    while (fd >= 0 && done < j->image_len) {
        ssize_t n = write(fd, j->image + done, j->image_len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            fd = -1;
            break;
        }
        done += (size_t)n;
    }
    if (fd < 0) {
        snprintf(j->err, sizeof j->err, "cannot keep the answer in %s: %s",
                 j->spool, strerror(errno ? errno : ENOSPC));
        return WEFT_EIO;
    }
    j->fd = fd;
    j->len = j->image_len;
    sqlite3_free(j->image);
    j->image = NULL;
    return 0;
}

/* REMOVE, worker thread: the trace whose key is j->trace, if it is the
 * asker's (or the asker sees all), directory and catalog rows. Another
 * user's trace is "not found", as one that does not exist. */
static int remove_work(ask_job *j)
{
    weft_catalog *cat = NULL;
    weft_trace_row row;
    char *msg = NULL, *dir = NULL;
    int rc, found = 0;

    rc = weft_catalog_open(j->catalog, 0, &cat, &msg);
    if (rc < 0) {
        snprintf(j->err, sizeof j->err, "%s", msg ? msg : weft_strerror(rc));
        free(msg);
        return rc;
    }
    rc = weft_catalog_find(cat, j->trace, &row);
    if (rc == 0) {
        found = strcmp(row.key, j->trace) == 0 && (j->all ||
                                                   row.uid == j->uid);
        if (!found)
            weft_catalog_trace_free(&row);
    }
    if (rc == WEFT_ENOTFOUND || (rc == 0 && !found)) {
        snprintf(j->err, sizeof j->err, "you have no trace '%s'", j->trace);
        rc = WEFT_ENOTFOUND;
        goto out;
    }
    if (rc < 0) {
        snprintf(j->err, sizeof j->err, "%s", weft_catalog_errmsg(cat));
        goto out;
    }
    if (j->held) {  /* an admin's remove of another user's held trace */
        snprintf(j->err, sizeof j->err, "trace '%s' is still recording or "
                 "converting; remove it once it is finished", row.key);
        rc = WEFT_ESTATE;
        goto out_row;
    }
    /* Never while weftd is at it (a conversion may be queued): with
     * weftd running no such row is stale, recovery failed those at start,
     * so --force has nothing to force here. */
    if (strcmp(row.state, WEFT_STATE_RECORDING) == 0 ||
        strcmp(row.state, WEFT_STATE_CONVERTING) == 0) {
        snprintf(j->err, sizeof j->err, "trace '%s' is still %s; remove "
                 "it once it is finished", row.key, row.state);
        rc = WEFT_ESTATE;
        goto out_row;
    }
    /* keys are file names: never a '/', never "." or ".." */
    if (strchr(row.key, '/') || row.key[0] == '.' ||
        asprintf(&dir, "%s/traces/%s", j->spool, row.key) < 0) {
        dir = NULL;
        snprintf(j->err, sizeof j->err, "trace key '%s' is not a file "
                 "name", row.key);
        rc = WEFT_EINVAL;
        goto out_row;
    }
    weft_spool_trace_remove(dir);
    rc = weft_catalog_trace_delete(cat, row.id);
    if (rc < 0)
        snprintf(j->err, sizeof j->err, "%s", weft_catalog_errmsg(cat));
    else if (asprintf(&j->line, "removed trace '%s' (#%lld) and %s\n",
                      row.name, (long long)row.id, dir) < 0)
        j->line = NULL;
out_row:
    weft_catalog_trace_free(&row);
out:
    free(dir);
    weft_catalog_close(cat);
    return rc;
}

/* IMPORT, worker thread: the asker's rows stored as a new trace of
 * theirs (import.h); the archive is not opened. */
static int import_work(ask_job *j)
{
    Weft__ImportTrace *m = weft__import_trace__unpack(NULL, j->import_len,
                                                      j->import);
    weft_import_rows r;
    char *key = NULL;
    int rc;

    if (!m) {
        snprintf(j->err, sizeof j->err, "out of memory");
        return WEFT_ENOMEM;
    }
    if ((rc = weft_import_from_msg(m, &r)) < 0) {
        snprintf(j->err, sizeof j->err, "out of memory");
        goto out;
    }
    r.charged = WEFT_IMPORT_CHARGE(j->import_len); /* as weft_ask_import */
    rc = weft_import_store(j->catalog, j->spool, j->uid, &r, &key, j->err,
                           sizeof j->err);
    if (rc == 0 && asprintf(&j->line, "imported %s/traces.otf2 as trace "
                            "'%s' (key %s)\n", m->path, m->name, key) < 0)
        j->line = NULL;
    weft_import_rows_free(&r);
out:
    free(key);
    weft__import_trace__free_unpacked(m, NULL);
    return rc;
}

/* CATALOG, worker thread: the asker's catalog rows (all of them for an
 * admin) as an SQLite image, stashed in a file (stash_image). */
static int catalog_work(ask_job *j)
{
    char *msg = NULL;
    int rc = weft_catalog_image(j->catalog, j->all, j->uid, &j->image,
                                &j->image_len, &msg);

    if (rc == 0 && j->image_len > WEFT_MAX_ANSWER) {
        snprintf(j->err, sizeof j->err, "your catalog rows take %zu "
                 "bytes, more than weftd sends (%u MiB); ask root to "
                 "remove old traces", j->image_len, WEFT_MAX_ANSWER >> 20);
        rc = WEFT_ELIMIT;
    } else if (rc < 0) {
        snprintf(j->err, sizeof j->err, "%s", msg ? msg : weft_strerror(rc));
    } else {
        rc = stash_image(j);
    }
    free(msg);
    return rc;
}

static const question *question_of(int kind);

static void ask_work(weft_work *w)
{
    ask_job *j = (ask_job *)w;
    const question *q = question_of(j->kind);

    if (q->work)
        j->rc = q->work(j);
}

/* Queues one Answer frame of n bytes of data (last: the answer ends
 * with it). 0 or a WEFT_E* code. */
static int send_piece(weft_conn *c, const void *data, size_t n, int last)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Answer a = WEFT__ANSWER__INIT;
    uint8_t *frame;
    ssize_t flen;

    a.data.data = (uint8_t *)data;
    a.data.len = n;
    a.last = last;
    env.msg_case = WEFT__ENVELOPE__MSG_ANSWER;
    env.answer = &a;
    flen = weft_frame_pack(&env, &frame);
    if (flen < 0)
        return (int)flen;
    weft_conn_send(c, frame, (size_t)flen);
    return 0;
}

/* Sends len bytes of data as Answer frames of at most WEFT_ANSWER_CHUNK
 * bytes, the last one saying so (short answers: a status, a line). 0 or
 * a WEFT_E* code. */
static int send_answer(weft_conn *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    int rc;

    do {
        size_t n = len < WEFT_ANSWER_CHUNK ? len : WEFT_ANSWER_CHUNK;
        if ((rc = send_piece(c, p, n, n == len)) < 0)
            return rc;
        p += n;
        len -= n;
    } while (len > 0);
    return 0;
}

/* The answer to j's question ended (sent, or failed with rc and msg):
 * c closes after what it has queued, and the question is over. */
static void answer_end(ask_job *j, int rc, const char *msg)
{
    weft_conn *c = j->c;

    c->ask_job = NULL;
    c->on_written = NULL;
    j->c = NULL;
    if (rc < 0)
        weft_conn_fail(c, rc, "cannot send the answer: %s", msg);
    else
        weft_conn_close(c); /* after the answer is written */
    question_end(j);
}

static void on_piece(uv_fs_t *req);

/* Reads the next piece of j's CATALOG answer (on libuv's threads); it is
 * sent from on_piece. 0 or a WEFT_E* code. */
static int read_piece(ask_job *j)
{
    uint64_t left = j->len - j->off;
    size_t n = left < WEFT_ASK_PIECE ? (size_t)left : WEFT_ASK_PIECE;
    uv_buf_t b;

    if (!(j->piece = malloc(n ? n : 1)))
        return WEFT_ENOMEM;
    b = uv_buf_init((char *)j->piece, (unsigned)n);
    j->req.data = j;
    if (uv_fs_read(j->d->loop, &j->req, j->fd, &b, 1, (int64_t)j->off,
                   on_piece) < 0) {
        free(j->piece);
        j->piece = NULL;
        return WEFT_EIO;
    }
    j->reading = 1;
    j->d->jobs++;
    return 0;
}

static void on_piece(uv_fs_t *req)
{
    ask_job *j = req->data;
    ssize_t n = req->result;
    int rc = 0, last;

    uv_fs_req_cleanup(req);
    j->reading = 0;
    j->d->jobs--;
    if (!j->c) { /* the asker is gone */
        free(j->piece);
        j->piece = NULL;
        question_end(j);
        return;
    }
    if (n <= 0 || (uint64_t)n > j->len - j->off) {
        free(j->piece);
        j->piece = NULL;
        answer_end(j, WEFT_EIO, n < 0 ? uv_strerror((int)n) : "short read");
        return;
    }
    last = j->off + (uint64_t)n == j->len;
    rc = send_piece(j->c, j->piece, (size_t)n, last);
    free(j->piece);
    j->piece = NULL;
    j->off += (uint64_t)n;
    if (rc < 0 || last)
        answer_end(j, rc, weft_strerror(rc));
    /* else the next piece once this one is written: on_written */
}

/* c's writes are done: the next piece of its answer. */
static void on_written(weft_conn *c)
{
    ask_job *j = c->ask_job;
    int rc;

    if (!j || j->reading || j->at_worker || j->fd < 0 || j->off >= j->len)
        return;
    if ((rc = read_piece(j)) < 0)
        answer_end(j, rc, weft_strerror(rc));
}

/* CATALOG's answer, piece by piece as the asker reads (DESIGN above):
 * 1 while pieces are on their way, else 0 with *rc. */
static int catalog_answer(ask_job *j, int *rc)
{
    j->c->on_written = on_written;
    if (j->len == 0)
        *rc = send_answer(j->c, "", 0);
    else if ((*rc = read_piece(j)) == 0)
        return 1;
    return 0;
}

/* STATUS's answer, built on the loop thread from what it holds. */
static int status_answer(ask_job *j, int *rc)
{
    char *text = weft_status_text(j->d, j->all, j->uid);

    *rc = text ? send_answer(j->c, text, strlen(text)) : WEFT_ENOMEM;
    free(text);
    return 0;
}

/* REMOVE's and IMPORT's answer: the line saying what was done, logged. */
static int line_answer(ask_job *j, int *rc)
{
    weft_conn_log(j->c, WEFT_LOG_INFO, "uid %u: %.*s", (unsigned)j->uid,
                  j->line ? (int)strcspn(j->line, "\n") : 15,
                  j->line ? j->line : "done");
    *rc = send_answer(j->c, j->line ? j->line : "", j->line ?
                      strlen(j->line) : 0);
    return 0;
}

/* The kinds of question: what the asker thread does (NULL: nothing) and
 * how the loop thread answers once it is done (without error). */
static const question questions[] = {
    [WEFT__QUERY__KIND__CATALOG] = { catalog_work, catalog_answer },
    [WEFT__QUERY__KIND__STATUS] = { NULL, status_answer },
    [WEFT__QUERY__KIND__REMOVE] = { remove_work, line_answer },
    [WEFT__QUERY__KIND__IMPORT] = { import_work, line_answer },
};

/* NULL for a kind weftd does not answer. */
static const question *question_of(int kind)
{
    if (kind < 0 || (size_t)kind >= sizeof questions / sizeof questions[0] ||
        !questions[kind].answer)
        return NULL;
    return &questions[kind];
}

static void ask_done(weft_work *w)
{
    ask_job *j = (ask_job *)w;
    weft_conn *c = j->c;
    int rc = j->rc;

    j->d->jobs--;
    j->at_worker = 0;
    if (j->charge) { /* an import: stored, or not */
        weft_quota_live(&j->d->quota, j->uid, -(int64_t)j->charge);
        if (rc == 0)
            weft_retain_charge(j->d, j->uid, j->import_bytes + j->charge);
    }
    if (j->kind == WEFT__QUERY__KIND__REMOVE && rc == 0)
        weft_retain_run(j->d); /* its owner's quota counts it gone */
    if (!c) {
        question_end(j);
        return;
    }
    if (rc < 0) {
        c->ask_job = NULL;
        j->c = NULL;
        weft_conn_fail(c, rc, "%s", j->err);
        question_end(j);
        return;
    }
    if (question_of(j->kind)->answer(j, &rc) == 0)
        answer_end(j, rc, weft_strerror(rc));
}

/* REMOVE of a trace weftd holds (recording, or waiting to convert
 * again) is refused, whoever asks: its files are in use. (One being
 * converted is refused by its catalog state, remove_work.) The owner and
 * root hear it here; anyone else's question goes on to remove_work,
 * which says "no trace" to whoever may not see the trace (before, a
 * user learnt that another's key was recording) and refuses an admin's.
 * The owner of the trace, 0 if weftd holds none with this key. */
static const weft_trace *held(const weft_daemon *d, const char *key)
{
    const weft_trace *t = weft_trace_find(d, WEFT_TRACE_RECORDING, key);

    return t ? t : weft_trace_find(d, WEFT_TRACE_RETRY_WAIT, key);
}

static int submit(weft_conn *c, int kind, const char *trace, int held_other,
                  uint8_t *import, size_t import_len);

_Static_assert(WEFT_ASK_PIECE <= WEFT_ANSWER_CHUNK, "a piece is one Answer frame");

/* Questions of uid in flight. */
static uint32_t asker_count(const weft_daemon *d, uint32_t uid)
{
    for (uint32_t i = 0; i < d->ask->nusers; i++)
        if (d->ask->users[i].uid == uid)
            return d->ask->users[i].n;
    return 0;
}

/* One more question of uid (there is room: d->ask->n < the array's size,
 * which may_ask checked). */
static void asker_charge(weft_daemon *d, uint32_t uid)
{
    for (uint32_t i = 0; i < d->ask->nusers; i++) {
        if (d->ask->users[i].uid == uid) {
            d->ask->users[i].n++;
            return;
        }
    }
    assert(d->ask->nusers < sizeof d->ask->users / sizeof d->ask->users[0]);
    d->ask->users[d->ask->nusers].uid = uid;
    d->ask->users[d->ask->nusers++].n = 1;
}

/* Refuses c's question (cause: 0 weftd is full, 1 the user is), with an
 * Error naming why; logged at most max_log_refusals times a second per
 * cause, with the count of those left out (a flood must not fill the
 * disk with warnings). Returns WEFT_ELIMIT. */
__attribute__((format(printf, 4, 5)))
static int refuse(weft_conn *c, int cause, enum weft_limit l,
                  const char *fmt, ...)
{
    weft_daemon *d = c->d;
    uint64_t left_out;
    uint8_t *frame;
    char msg[256];
    va_list ap;
    ssize_t n;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->refused++;
    if (l != WEFT_LIMIT_NONE)
        weft_limit_hit(d, l);
    if (!weft_ratelimit_allow(&d->ask->log[cause], uv_now(d->loop),
                             d->cfg.max_log_refusals, &left_out))
        ;
    else if (left_out)
        weft_conn_log(c, WEFT_LOG_WARNING, "refused: uid %u: %s (and %"
                      PRIu64 " more like it since the last such line)",
                      (unsigned)c->peer_uid, msg, left_out);
    else
        weft_conn_log(c, WEFT_LOG_WARNING, "refused: uid %u: %s",
                      (unsigned)c->peer_uid, msg);
    n = weft_frame_pack_error(&frame, WEFT_ELIMIT, "%s", msg);
    if (n > 0)
        weft_conn_send(c, frame, (size_t)n);
    weft_conn_close(c);
    return WEFT_ELIMIT;
}

/* May c ask now? Every user has max_questions_per_user in flight and the
 * others' share of WEFT_ASK_MAX_QUEUED; root, weftd's own user and
 * admin_group (reserve.h) are not counted per user and have
 * WEFT_ASK_RESERVE more, so a flood of users cannot lock them out. 0, or
 * WEFT_ELIMIT after refusing c. */
static int may_ask(weft_conn *c)
{
    weft_daemon *d = c->d;
    uint32_t uid = c->peer_uid, mine = asker_count(d, uid);
    int privileged = weft_reserve_conn_is_admin(c);
    unsigned cap = privileged ? WEFT_ASK_MAX_QUEUED
                              : WEFT_ASK_MAX_QUEUED - WEFT_ASK_RESERVE;

    if (d->ask->n >= cap)
        return refuse(c, 0, WEFT_LIMIT_NONE, "weftd is answering %u "
                      "questions already; ask again in a moment", d->ask->n);
    if (!privileged && mine >= d->cfg.max_questions_per_user)
        return refuse(c, 1, WEFT_LIMIT_MAX_QUESTIONS_PER_USER, "you have %"
                      PRIu32 " questions being answered already "
                      "(max_questions_per_user %" PRIu64 "); ask again when"
                      " they are done", mine,
                      d->cfg.max_questions_per_user);
    return 0;
}

int weft_ask_query(weft_conn *c, const Weft__Query *q)
{
    weft_daemon *d = c->d;
    const weft_trace *h;
    int rc;

    if ((rc = weft_conn_check_version(c, q->protocol_version)) < 0)
        return rc;
    /* A node relays its Unix socket's askers (relay.h). */
    if (!(c->is_unix || c->link) || !c->has_peer_uid) {
        weft_conn_fail(c, WEFT_EPROTO, "Query over TCP: the weft command "
                       "asks on weftd's Unix socket, where the kernel says "
                       "who it is");
        return WEFT_EPROTO;
    }
    if ((rc = weft_conn_event(c, WEFT_CONN_EV_QUERY, NULL)) < 0)
        return rc; /* after a Query, Hello or Auth */
    if (!question_of((int)q->kind)) {
        weft_conn_fail(c, WEFT_EPROTO, "Query of unknown kind %d",
                       (int)q->kind);
        return WEFT_EPROTO;
    }
    if (q->kind == WEFT__QUERY__KIND__REMOVE &&
        (!q->trace || !*q->trace || strlen(q->trace) > WEFT_ASK_MAX_KEY)) {
        weft_conn_fail(c, WEFT_EINVAL, "Query to remove a trace without "
                       "its key, or a key over %d bytes", WEFT_ASK_MAX_KEY);
        return WEFT_EINVAL;
    }
    h = q->kind == WEFT__QUERY__KIND__REMOVE ? held(d, q->trace) : NULL;
    if (h && (h->uid == c->peer_uid || c->peer_uid == 0)) {
        weft_conn_fail(c, WEFT_ESTATE, "trace '%s' is still recording or "
                       "converting; remove it once it is finished",
                       q->trace);
        return WEFT_ESTATE;
    }
    if ((rc = may_ask(c)) < 0)
        return rc;
    if (q->kind == WEFT__QUERY__KIND__IMPORT) {
        /* The rows follow in one frame of up to max_frame bytes, charged
         * as they arrive as any client's (server.c). */
        if ((rc = weft_conn_event(c, WEFT_CONN_EV_IMPORT_QUERY, NULL)) < 0)
            return rc;
        c->reader.max_frame = d->cfg.max_frame;
        return 0;
    }
    return submit(c, (int)q->kind, q->trace, h != NULL, NULL, 0);
}

/* Queues c's question of kind (trace: REMOVE's key, held_other: weftd
 * holds it for another user; import: IMPORT's packed rows, taken) for
 * the asker thread and pauses c. 0, or the WEFT_E* code c was failed
 * with. */
static int submit(weft_conn *c, int kind, const char *trace, int held_other,
                  uint8_t *import, size_t import_len)
{
    weft_daemon *d = c->d;
    ask_job *j;
    int rc;

    j = calloc(1, sizeof *j);
    if (j) {
        j->import = import;
        j->import_len = import_len;
        import = NULL;
    }
    free(import);
    if (!j || !(j->catalog = strdup(d->cfg.catalog)) ||
        !(j->spool = strdup(d->cfg.spool)) ||
        !(j->trace = strdup(trace ? trace : ""))) {
        if (j)
            job_free(j);
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    j->fd = -1;
    j->d = d;
    j->c = c;
    j->kind = kind;
    j->uid = c->peer_uid;
    j->gid = c->peer_gid;
    j->all = weft_reserve_is_admin(d, j->uid, j->gid);
    j->held = held_other;
    if ((!d->ask->asker &&
         (rc = weft_worker_start(d->loop, 1, WEFT_WORKER_TRANSIENT,
                                 &d->ask->asker)) < 0) ||
        (rc = weft_worker_submit(d->ask->asker, &j->work, ask_work,
                                 ask_done)) < 0) {
        job_free(j);
        weft_conn_fail(c, rc, "cannot answer: %s", weft_strerror(rc));
        return rc;
    }
    d->ask->n++;
    d->jobs++;
    j->at_worker = 1;
    asker_charge(d, j->uid);
    c->ask_job = j;
    weft_conn_pause(c);
    return 0;
}

int weft_ask_import(weft_conn *c, const Weft__ImportTrace *m)
{
    ask_job *j;
    uint64_t charge;
    uint8_t *buf;
    size_t len;
    char err[512];
    int rc;

    if ((rc = weft_conn_event(c, WEFT_CONN_EV_IMPORT_TRACE, NULL)) < 0)
        return rc; /* without a Query to import before it */
    if ((rc = weft_import_check(m, err, sizeof err)) < 0) {
        weft_conn_fail(c, rc, "%s", err);
        return rc;
    }
    len = weft__import_trace__get_packed_size(m);
    if (!(buf = malloc(len ? len : 1))) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    weft__import_trace__pack(m, buf);
    /* Charged before it is stored, as it would be once stored: what it
     * adds to the catalog and the bytes it claims (not 1 byte for any). */
    charge = WEFT_IMPORT_CHARGE(len);
    if ((rc = weft_quota_check(&c->d->quota, c->peer_uid,
                               c->d->cfg.max_user_spool_bytes,
                               charge + m->bytes, err, sizeof err)) < 0) {
        free(buf);
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_USER_SPOOL_BYTES, rc,
                             "import refused: %s", err);
        return rc;
    }
    if ((rc = submit(c, WEFT__QUERY__KIND__IMPORT, NULL, 0, buf, len)) < 0)
        return rc;
    j = c->ask_job;
    j->import_bytes = m->bytes;
    if (weft_quota_live(&c->d->quota, c->peer_uid, (int64_t)charge) == 0)
        j->charge = charge;
    return 0;
}

int weft_ask_init(weft_daemon *d)
{
    d->ask = calloc(1, sizeof *d->ask);
    return d->ask ? 0 : WEFT_ENOMEM;
}

void weft_ask_free(weft_daemon *d)
{
    free(d->ask);
    d->ask = NULL;
}

void weft_ask_report(weft_daemon *d)
{
    uint32_t gid = 0;
    int rc;

    if (!d->srv->have_unix)
        weft_dlog(d, WEFT_LOG_WARNING, "no Unix socket: users other than "
                  "root and weftd's own cannot see their traces with weft "
                  "(set socket in weftd.conf)");
    rc = weft_reserve_load(d, &gid);
    if (!*d->cfg.admin_group)
        return;
    if (rc == WEFT_ENOTFOUND)
        weft_dlog(d, WEFT_LOG_WARNING, "admin_group = %s: no such group; "
                  "only root and weftd's own user see every trace",
                  d->cfg.admin_group);
    else if (rc < 0)
        weft_dlog(d, WEFT_LOG_WARNING, "admin_group = %s: %s; its members "
                  "are those looked up before", d->cfg.admin_group,
                  weft_strerror(rc));
    else
        weft_dlog(d, WEFT_LOG_INFO, "admin_group %s (gid %u): its members "
                  "see every trace and share the reserve kept for root "
                  "(looked up now: a change to the group takes effect on "
                  "SIGHUP)", d->cfg.admin_group, (unsigned)gid);
}

void weft_ask_closed(weft_conn *c)
{
    ask_job *j = c->ask_job;

    c->ask_job = NULL;
    c->on_written = NULL;
    if (!j)
        return;
    j->c = NULL;
    if (!j->at_worker && !j->reading) /* else their callbacks end it */
        question_end(j);
}

const weft_session_ask weft_ask_cbs = { weft_ask_query, weft_ask_import,
                                            weft_ask_closed };
