/* authn.c - the Auth frame of a TCP connection (see authn.h).
 *
 * munge_decode and munge_encode wait for munged, so they run on a worker
 * of their own (worker.h, at most WEFT_AUTHN_THREADS at once) while the
 * connection is paused; its later frames wait, in order, in the server's
 * buffer. The job outlives a connection that closes meanwhile (it is
 * detached, weft_authn_closed) and is freed when it comes back.
 */
#include "authn.h"

#include <stdlib.h>
#include <string.h>

#include "cred.h"
#include "daemon.h"
#include "frame.h"
#include "log.h"
#include "weft_errors.h"
#include "worker.h"

#define WEFT_AUTHN_THREADS 2

typedef struct authn_job {
    weft_work work;          /* first: the job is its work */
    weft_conn *c;            /* NULL once c closed (loop thread) */
    char *socket;            /* munged's socket (a copy: SIGHUP may
                                change the configuration meanwhile) */
    uint8_t *cred;           /* the client's credential */
    size_t cred_len;
    /* worker thread's results */
    int rc;
    weft_auth_id id;
    char *reply;             /* weftd's credential for AuthAck */
    char err[256];
} authn_job;

static void job_free(authn_job *j)
{
    free(j->socket);
    free(j->cred);
    free(j->reply);
    free(j);
}

static void authn_work(weft_work *w)
{
    authn_job *j = (authn_job *)w;

    j->rc = weft_auth_decode(j->socket, j->cred, j->cred_len, &j->id,
                             j->err, sizeof j->err);
    if (j->rc == 0)
        j->rc = weft_auth_encode(j->socket, j->id.uid, 0, j->id.payload,
                                 j->id.payload_len, &j->reply, j->err,
                                 sizeof j->err);
}

static void authn_done(weft_work *w)
{
    authn_job *j = (authn_job *)w;
    weft_conn *c = j->c;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__AuthAck ack = WEFT__AUTH_ACK__INIT;
    uint8_t *frame;
    ssize_t n;

    if (!c)
        goto out;
    c->auth_job = NULL;
    if (j->rc < 0) {
        weft_conn_fail(c, WEFT_EAUTH, "MUNGE credential refused: %s",
                       j->err);
        goto out;
    }
    c->authenticated = 1;
    c->has_peer_uid = 1;
    c->peer_uid = j->id.uid;
    c->peer_gid = j->id.gid;
    weft_conn_log(c, WEFT_LOG_DEBUG, "authenticated by MUNGE as uid %u "
                  "gid %u", (unsigned)j->id.uid, (unsigned)j->id.gid);
    ack.credential.data = (uint8_t *)j->reply;
    ack.credential.len = strlen(j->reply);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH_ACK;
    env.auth_ack = &ack;
    n = weft_frame_pack(&env, &frame);
    if (n < 0) {
        weft_conn_fail(c, (int)n, "cannot pack AuthAck");
        goto out;
    }
    weft_conn_send(c, frame, (size_t)n);
    weft_conn_resume(c);
out:
    job_free(j);
}

int weft_authn_auth(weft_conn *c, const Weft__Auth *a)
{
    weft_daemon *d = c->d;
    authn_job *j;
    int rc;

    if ((rc = weft_conn_check_version(c, a->protocol_version)) < 0)
        return rc;
    if (c->is_unix) {
        weft_conn_fail(c, WEFT_EPROTO, "Auth on the Unix socket: the "
                       "kernel already says who you are");
        return WEFT_EPROTO;
    }
    if (c->authenticated || c->auth_job) {
        weft_conn_fail(c, WEFT_EPROTO, "second Auth on one connection");
        return WEFT_EPROTO;
    }
    if (a->credential.len == 0 ||
        a->credential.len > WEFT_AUTH_MAX_CREDENTIAL) {
        weft_conn_fail(c, WEFT_EAUTH, "MUNGE credential of %zu bytes "
                       "(expected 1 to %d)", a->credential.len,
                       WEFT_AUTH_MAX_CREDENTIAL);
        return WEFT_EAUTH;
    }
    j = calloc(1, sizeof *j);
    if (!j || !(j->socket = strdup(d->cfg.munge_socket)) ||
        !(j->cred = malloc(a->credential.len))) {
        if (j)
            job_free(j);
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    memcpy(j->cred, a->credential.data, a->credential.len);
    j->cred_len = a->credential.len;
    j->c = c;
    if (!d->authenticator &&
        (rc = weft_worker_start(d->loop, WEFT_AUTHN_THREADS,
                                WEFT_WORKER_TRANSIENT,
                                &d->authenticator)) < 0)
        goto fail;
    if ((rc = weft_worker_submit(d->authenticator, &j->work, authn_work,
                                 authn_done)) < 0)
        goto fail;
    c->auth_job = j;
    weft_conn_pause(c);
    return 0;
fail:
    job_free(j);
    weft_conn_fail(c, rc, "cannot check the credential: no thread");
    return rc;
}

int weft_authn_hello_uid(weft_conn *c, const Weft__Hello *h, uint32_t *uid)
{
    if (c->is_unix) {
        /* As before Auth existed: the kernel's word wins over a claim. */
        *uid = c->has_peer_uid ? c->peer_uid : h->uid;
        return 0;
    }
    if (c->authenticated) {
        if (h->uid != c->peer_uid) {
            weft_conn_fail(c, WEFT_EAUTH, "Hello claims uid %u but its "
                           "MUNGE credential is of uid %u",
                           (unsigned)h->uid, (unsigned)c->peer_uid);
            return WEFT_EAUTH;
        }
        *uid = c->peer_uid;
        return 0;
    }
    if (c->d->cfg.auth == WEFT_AUTH_NONE) {
        *uid = h->uid;
        return 0;
    }
    weft_conn_fail(c, WEFT_EAUTH, "Hello without a MUNGE credential: this "
                   "weftd (auth = munge) needs one over TCP; is munged "
                   "running on the client's host with the cluster's key?");
    return WEFT_EAUTH;
}

void weft_authn_closed(weft_conn *c)
{
    if (c->auth_job) {
        ((authn_job *)c->auth_job)->c = NULL;
        c->auth_job = NULL;
    }
}

void weft_authn_report(weft_daemon *d)
{
    const char *sock = d->cfg.munge_socket[0] ? d->cfg.munge_socket
                                              : "libmunge's default socket";
    char err[256];
    char *cred = NULL;

    if (!d->have_tcp)
        return; /* Unix socket only: SO_PEERCRED */
    if (d->cfg.auth == WEFT_AUTH_NONE) {
        weft_dlog(d, WEFT_LOG_WARNING, "auth = none: a TCP client owns what "
                  "it sends under the uid its Hello claims (single-user "
                  "machines only; see weftd.conf(5), Security)");
        return;
    }
    if (weft_auth_encode(d->cfg.munge_socket, WEFT_AUTH_ANYONE, 0, NULL, 0,
                         &cred, err, sizeof err) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "auth = munge, but munged does not "
                  "answer at %s (%s): TCP clients are refused until it "
                  "does (start munge, or set auth = none on a single-user "
                  "machine); Unix socket clients are served", sock, err);
        return;
    }
    free(cred);
    weft_dlog(d, WEFT_LOG_INFO, "auth = munge: TCP clients prove their uid "
              "with MUNGE (munged at %s)", sock);
}
