/* auth.c (client) - who weftd is, and proving who this process is (see
 * auth.h). Runs inside libweft (the recorders' guard is up): the
 * lookups and munged's socket are libweft's own work. */
#include "auth.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "weft_errors.h"

/* The system user weftd.service runs as (systemd/weft.sysusers.conf). */
#define WEFT__DAEMON_SYSTEM_USER "weft"

/* uid of user `name` (or a decimal uid). 0 with *uid, -1 if unknown. */
static int lookup_uid(const char *name, uint32_t *uid)
{
    struct passwd pw, *res = NULL;
    char buf[4096], *end;
    unsigned long n;

    errno = 0;
    n = strtoul(name, &end, 10);
    if (*name && !*end && errno == 0 && n <= UINT32_MAX) {
        *uid = (uint32_t)n;
        return 0;
    }
    if (getpwnam_r(name, &pw, buf, sizeof buf, &res) != 0 || !res)
        return -1;
    *uid = (uint32_t)pw.pw_uid;
    return 0;
}

int weft__auth_server_uid_ok(const weft__config *c, uint32_t uid, char *why,
                             size_t whylen)
{
    uint32_t u;

    if (c->daemon_user[0]) {
        if (lookup_uid(c->daemon_user, &u) < 0) {
            snprintf(why, whylen, "WEFT_DAEMON_USER='%s' is no user here",
                     c->daemon_user);
            return 0;
        }
        if (uid == u)
            return 1;
    }
    if (uid == 0 || uid == (uint32_t)geteuid())
        return 1;
    if (lookup_uid(WEFT__DAEMON_SYSTEM_USER, &u) == 0 && uid == u)
        return 1;
    snprintf(why, whylen, "the server runs as uid %u, which weftd never "
             "does (root, user %s, yourself%s%s): another user's program "
             "may hold weftd's address; set WEFT_DAEMON_USER if your "
             "site runs weftd as another user", (unsigned)uid,
             WEFT__DAEMON_SYSTEM_USER, c->daemon_user[0] ? ", " : "",
             c->daemon_user);
    return 0;
}

int weft__auth_bind(int fd, const uint8_t *nonce, size_t len,
                    weft_bind *b, char *why, size_t whylen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;

    memset(b, 0, sizeof *b);
    if (len != WEFT_AUTH_NONCE) {
        snprintf(why, whylen, "the server's Challenge has a nonce of %zu "
                 "bytes (weftd's has %d)", len, WEFT_AUTH_NONCE);
        return WEFT_EAUTH;
    }
    memcpy(b->nonce, nonce, WEFT_AUTH_NONCE);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
        weft_bind_addr_from(&b->client, (struct sockaddr *)&ss) < 0) {
        snprintf(why, whylen, "getsockname: %s", strerror(errno));
        return WEFT_EAUTH;
    }
    sl = sizeof ss;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
        weft_bind_addr_from(&b->server, (struct sockaddr *)&ss) < 0) {
        snprintf(why, whylen, "getpeername: %s", strerror(errno));
        return WEFT_EAUTH;
    }
    if (getrandom(b->key, WEFT_MAC_KEY, 0) != WEFT_MAC_KEY) {
        snprintf(why, whylen, "getrandom: %s", strerror(errno));
        return WEFT_EAUTH;
    }
    return 0;
}

int weft__auth_credential(const weft__config *c, uint32_t server_uid,
                          const weft_bind *b, char **cred, char *why,
                          size_t whylen)
{
    uint8_t payload[WEFT_BIND_PAYLOAD];
    char err[256];
    int rc;

    weft_bind_encode(b, payload);
    rc = weft_auth_encode(c->munge_socket, server_uid, 0, payload,
                          sizeof payload, cred, err, sizeof err);
    memset(payload, 0, sizeof payload);
    if (rc < 0) {
        snprintf(why, whylen, "cannot prove who this process is (%s): is "
                 "munged running here? (WEFT_AUTH=none only with a weftd "
                 "of auth = none)", err);
        return WEFT_EAUTH;
    }
    return 0;
}

int weft__auth_check_ack(const weft_bind *b, const uint8_t *proof,
                         size_t len, uint32_t server_uid, char *why,
                         size_t whylen)
{
    char server[64];

    if (weft_mac_proof_ok(b->key, b->nonce, WEFT_AUTH_NONCE, proof, len))
        return 0;
    weft_bind_addr_name(&b->server, server, sizeof server);
    snprintf(why, whylen, "the server at %s is not weftd: it says it runs "
             "as uid %u but could not read the credential only that uid "
             "can read (another user's program may hold weftd's address)",
             server, (unsigned)server_uid);
    return WEFT_EAUTH;
}

int weft__auth_check_unix(const weft__config *c, int fd, char *why,
                          size_t whylen)
{
    struct ucred cred;
    socklen_t len = sizeof cred;

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        snprintf(why, whylen, "SO_PEERCRED: %s", strerror(errno));
        return WEFT_EAUTH;
    }
    if (!weft__auth_server_uid_ok(c, (uint32_t)cred.uid, why, whylen))
        return WEFT_EAUTH;
    return 0;
}
