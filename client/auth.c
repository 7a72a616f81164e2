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

int weft__auth_credential(const weft__config *c,
                          uint8_t nonce[WEFT_AUTH_NONCE], char **cred,
                          char *why, size_t whylen)
{
    char err[256];

    if (getrandom(nonce, WEFT_AUTH_NONCE, 0) != WEFT_AUTH_NONCE) {
        snprintf(why, whylen, "getrandom: %s", strerror(errno));
        return WEFT_EAUTH;
    }
    if (weft_auth_encode(c->munge_socket, WEFT_AUTH_ANYONE, 0, nonce,
                         WEFT_AUTH_NONCE, cred, err, sizeof err) < 0) {
        snprintf(why, whylen, "cannot prove who this process is (%s): is "
                 "munged running here? (WEFT_AUTH=none only with a weftd "
                 "of auth = none)", err);
        return WEFT_EAUTH;
    }
    return 0;
}

int weft__auth_check_reply(const weft__config *c, const uint8_t *cred,
                           size_t len, const uint8_t nonce[WEFT_AUTH_NONCE],
                           char *why, size_t whylen)
{
    weft_auth_id id;
    char err[256];

    if (weft_auth_decode(c->munge_socket, cred, len, &id, err,
                         sizeof err) < 0) {
        snprintf(why, whylen, "the server's MUNGE credential does not "
                 "check: %s", err);
        return WEFT_EAUTH;
    }
    if (id.payload_len != WEFT_AUTH_NONCE ||
        memcmp(id.payload, nonce, WEFT_AUTH_NONCE) != 0) {
        snprintf(why, whylen, "the server's MUNGE credential answers "
                 "another connection");
        return WEFT_EAUTH;
    }
    if (!weft__auth_server_uid_ok(c, id.uid, why, whylen))
        return WEFT_EAUTH;
    return 0;
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
