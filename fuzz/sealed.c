/* sealed.c - protocol 6's TCP path for fuzzers (see sealed.h). */
#include "sealed.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cred.h"
#include "frame.h"
#include "fuzz.h"
#include "weft_errors.h"

/* ---- munged's stand-in (proto/cred.h) ---------------------------------- */

static int hex(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

/* "FZ:V:UUUUUUUU:" and the payload in hex into out (room for
 * FZ_CREDENTIAL). Its length. */
static size_t put_credential(char *out, int valid, uint32_t uid,
                             const uint8_t *payload, size_t len)
{
    size_t n = (size_t)snprintf(out, 16, "FZ:%c:%08x:", valid ? '0' : '1',
                                (unsigned)uid);

    for (size_t i = 0; i < len; i++)
        n += (size_t)snprintf(out + n, 3, "%02x", payload[i]);
    return n;
}

/* libweft's credential (fuzz_client): valid, of the calling process. */
int weft_auth_encode(const char *socket, int64_t for_uid, unsigned ttl,
                     const void *payload, size_t len, char **cred,
                     char *err, size_t errlen)
{
    (void)socket;
    (void)for_uid;
    (void)ttl;
    if (len > WEFT_AUTH_MAX_PAYLOAD || !(*cred = malloc(FZ_CREDENTIAL))) {
        *cred = NULL;
        snprintf(err, errlen, "cannot make a credential");
        return WEFT_EAUTH;
    }
    put_credential(*cred, 1, (uint32_t)geteuid(), payload, len);
    return 0;
}

/* Thread-safe: it reads its arguments only (weftd calls it on a worker). */
int weft_auth_decode(const char *socket, const uint8_t *cred, size_t len,
                     weft_auth_id *id, char *err, size_t errlen)
{
    char uid[9];

    (void)socket;
    memset(id, 0, sizeof *id);
    if (len < 14 || memcmp(cred, "FZ:", 3) != 0 || cred[4] != ':' ||
        cred[13] != ':' || (len - 14) % 2 != 0) {
        snprintf(err, errlen, "Invalid credential format");
        return WEFT_EAUTH;
    }
    if (cred[3] != '0') {
        snprintf(err, errlen, "Replayed credential");
        return WEFT_EAUTH;
    }
    if ((len - 14) / 2 > WEFT_AUTH_MAX_PAYLOAD) {
        snprintf(err, errlen, "a payload of %zu bytes (at most %d)",
                 (len - 14) / 2, WEFT_AUTH_MAX_PAYLOAD);
        return WEFT_EAUTH;
    }
    memcpy(uid, cred + 5, 8);
    uid[8] = '\0';
    id->uid = (uint32_t)strtoul(uid, NULL, 16);
    id->gid = id->uid;
    for (size_t i = 14; i < len; i += 2) {
        int hi = hex((char)cred[i]), lo = hex((char)cred[i + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(err, errlen, "Invalid credential format");
            return WEFT_EAUTH;
        }
        id->payload[id->payload_len++] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* ---- loopback connections ---------------------------------------------- */

int fz_listen(uint16_t *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    CHECK(fd >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(fd, 64) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

int fz_connect(uint16_t port, char *tag, size_t cap)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd = -1, one = 1, err = 0;

    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    /* Over loopback the kernel completes it before weftd accepts. A
     * refusal of the machine (seen once in a long run: a full backlog
     * or no free port) is tried again, not taken for weftd's. */
    for (int tries = 0; tries < 100; tries++) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(fd >= 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
        usleep(1000);
    }
    if (fd < 0)
        fprintf(stderr, "fz_connect: 127.0.0.1:%u: %s\n", (unsigned)port,
                strerror(err));
    CHECK(fd >= 0);
    CHECK(fcntl(fd, F_SETFL, O_NONBLOCK) == 0);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    snprintf(tag, cap, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    return fd;
}

/* ---- the credential ---------------------------------------------------- */

void fz_bind(int fd, const uint8_t nonce[WEFT_AUTH_NONCE],
             const uint8_t key[WEFT_MAC_KEY], weft_bind *b)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;

    memset(b, 0, sizeof *b);
    memcpy(b->nonce, nonce, WEFT_AUTH_NONCE);
    memcpy(b->key, key, WEFT_MAC_KEY);
    CHECK(getsockname(fd, (struct sockaddr *)&ss, &len) == 0);
    CHECK(weft_bind_addr_from(&b->client, (struct sockaddr *)&ss) == 0);
    len = sizeof ss;
    CHECK(getpeername(fd, (struct sockaddr *)&ss, &len) == 0);
    CHECK(weft_bind_addr_from(&b->server, (struct sockaddr *)&ss) == 0);
}

size_t fz_credential(char *out, uint32_t uid, const weft_bind *b,
                     enum fz_spoil spoil)
{
    uint8_t payload[WEFT_AUTH_MAX_PAYLOAD + 1];
    weft_bind sb = *b;
    size_t n = WEFT_BIND_PAYLOAD;

    if (spoil == FZ_NONCE)
        sb.nonce[0] ^= 1;
    else if (spoil == FZ_CLIENT_END)
        sb.client.port ^= 1;
    else if (spoil == FZ_SERVER_END)
        sb.server.addr[3] ^= 2; /* 127.0.0.3 */
    weft_bind_encode(&sb, payload);
    if (spoil == FZ_PAYLOAD) { /* another version, one byte longer */
        payload[0] = WEFT_BIND_VERSION + 1;
        payload[n++] = 'x';
    }
    return put_credential(out, spoil != FZ_REFUSED, uid, payload, n);
}

/* ---- sealed frames ----------------------------------------------------- */

size_t fz_seal(weft_mac *m, uint8_t **frame, size_t len,
               enum fz_tamper tamper, uint8_t bits)
{
    uint8_t *lost;
    ssize_t n;

    if (tamper == FZ_UNSEALED)
        return len;
    if (tamper == FZ_SKIPPED) {
        CHECK((lost = malloc(len)) != NULL);
        memcpy(lost, *frame, len);
        CHECK(weft_mac_seal(m, &lost, len) > 0);
        free(lost);
    }
    n = weft_mac_seal(m, frame, len);
    CHECK(n == (ssize_t)(len + WEFT_MAC_TAG));
    if (tamper == FZ_BAD_TAG)
        (*frame)[len + bits % WEFT_MAC_TAG] ^= (uint8_t)(1u << (bits >> 5));
    else if (tamper == FZ_BAD_BODY && len > WEFT_FRAME_HEADER)
        (*frame)[WEFT_FRAME_HEADER + bits % (len - WEFT_FRAME_HEADER)] ^=
            (uint8_t)(1u << (bits >> 5));
    return (size_t)n;
}
