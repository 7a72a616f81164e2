/* authn.c - the Challenge and the Auth frame of a TCP connection (see
 * authn.h).
 *
 * munge_decode waits for munged, so it runs on a worker
 * of their own (worker.h, at most WEFT_AUTHN_THREADS at once) while the
 * connection is paused; its later frames wait, in order, in the server's
 * buffer. The job outlives a connection that closes meanwhile (it is
 * detached, weft_authn_closed) and is freed when it comes back.
 */
#include "authn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "bind.h"
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
    /* what the credential must be bound to (proto/bind.h) */
    uint8_t nonce[WEFT_AUTH_NONCE];
    weft_bind_addr local, peer;
    /* worker thread's results */
    int rc;
    weft_auth_id id;
    weft_bind bind;          /* its payload, with the session key */
    char err[320];
} authn_job;

static void job_free(authn_job *j)
{
    free(j->socket);
    free(j->cred);
    memset(j, 0, sizeof *j); /* the session key */
    free(j);
}

static void authn_work(weft_work *w)
{
    authn_job *j = (authn_job *)w;
    char why[256];

    j->rc = weft_auth_decode(j->socket, j->cred, j->cred_len, &j->id,
                             j->err, sizeof j->err);
    if (j->rc < 0)
        return;
    if ((j->rc = weft_bind_decode(j->id.payload, j->id.payload_len,
                                  &j->bind, why, sizeof why)) < 0 ||
        (j->rc = weft_bind_check(&j->bind, j->nonce, &j->local, &j->peer,
                                 why, sizeof why)) < 0)
        snprintf(j->err, sizeof j->err, "of uid %u, but %s",
                 (unsigned)j->id.uid, why);
}

/* The ends of c's connection as weftd sees them. 0, or WEFT_EIO. */
static int conn_ends(weft_conn *c, weft_bind_addr *local,
                     weft_bind_addr *peer)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;

    if (uv_tcp_getsockname(&c->h.tcp, (struct sockaddr *)&ss, &len) != 0 ||
        weft_bind_addr_from(local, (struct sockaddr *)&ss) < 0)
        return WEFT_EIO;
    len = sizeof ss;
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) != 0 ||
        weft_bind_addr_from(peer, (struct sockaddr *)&ss) < 0)
        return WEFT_EIO;
    return 0;
}

void weft_authn_challenge(weft_conn *c)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Challenge ch = WEFT__CHALLENGE__INIT;
    uint8_t *frame;
    ssize_t n;

    if (c->is_unix || weft_conn_closing(c))
        return;
    /* The kernel's pool is ready once weftd runs (it is not at early
     * boot, where this would fail rather than block the loop). */
    if (getrandom(c->challenge, WEFT_AUTH_NONCE, GRND_NONBLOCK) !=
        WEFT_AUTH_NONCE) {
        weft_conn_fail(c, WEFT_EIO, "no random bytes for a challenge: %s",
                       strerror(errno));
        return;
    }
    ch.protocol_version = WEFT_PROTOCOL_VERSION;
    ch.nonce.data = c->challenge;
    ch.nonce.len = WEFT_AUTH_NONCE;
    ch.server_uid = (uint32_t)geteuid();
    env.msg_case = WEFT__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &ch;
    if ((n = weft_frame_pack(&env, &frame)) < 0) {
        weft_conn_fail(c, (int)n, "cannot pack a Challenge");
        return;
    }
    weft_conn_send(c, frame, (size_t)n);
}

static void authn_done(weft_work *w)
{
    authn_job *j = (authn_job *)w;
    weft_conn *c = j->c;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__AuthAck ack = WEFT__AUTH_ACK__INIT;
    uint8_t *frame, proof[WEFT_MAC_TAG];
    ssize_t n;

    if (!c)
        goto out;
    c->auth_job = NULL;
    if (j->rc < 0) {
        weft_conn_fail(c, WEFT_EAUTH, "MUNGE credential refused: %s",
                       j->err);
        goto out;
    }
    if (weft_conn_event(c, WEFT_CONN_EV_AUTH_OK, NULL) < 0)
        goto out;
    c->has_peer_uid = 1;
    c->peer_uid = j->id.uid;
    c->peer_gid = j->id.gid;
    weft_conn_log(c, WEFT_LOG_DEBUG, "authenticated by MUNGE as uid %u "
                  "gid %u", (unsigned)j->id.uid, (unsigned)j->id.gid);
    weft_mac_proof(j->bind.key, c->challenge, WEFT_AUTH_NONCE, proof);
    ack.proof.data = proof;
    ack.proof.len = sizeof proof;
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH_ACK;
    env.auth_ack = &ack;
    n = weft_frame_pack(&env, &frame);
    if (n < 0) {
        weft_conn_fail(c, (int)n, "cannot pack AuthAck");
        goto out;
    }
    /* The AuthAck goes as it is (its proof is its MAC); every frame
     * after it, both ways, carries one (server.c). */
    weft_conn_send(c, frame, (size_t)n);
    if (!(c->mac = weft_mac_new(j->bind.key, WEFT_MAC_SERVER))) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        goto out;
    }
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
    if ((rc = weft_conn_event(c, WEFT_CONN_EV_AUTH, NULL)) < 0)
        return rc; /* a second Auth */
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
    memcpy(j->nonce, c->challenge, WEFT_AUTH_NONCE);
    if ((rc = conn_ends(c, &j->local, &j->peer)) < 0) {
        job_free(j);
        weft_conn_fail(c, rc, "cannot tell the ends of this connection");
        return rc;
    }
    if (!d->srv->authenticator &&
        (rc = weft_worker_start(d->loop, WEFT_AUTHN_THREADS,
                                WEFT_WORKER_TRANSIENT,
                                &d->srv->authenticator)) < 0)
        goto fail;
    if ((rc = weft_worker_submit(d->srv->authenticator, &j->work, authn_work,
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
    if (c->is_unix || c->link) {
        /* As before Auth existed: the kernel's word wins over a claim
         * (for a relayed member, the node's kernel's, relay.h). */
        *uid = c->has_peer_uid ? c->peer_uid : h->uid;
        return 0;
    }
    if (c->mode == WEFT_CONN_AUTHENTICATED) {
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

    if (!d->srv->have_tcp)
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
