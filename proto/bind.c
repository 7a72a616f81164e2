/* bind.c - the payload of a client's credential over TCP (see bind.h). */
#include "bind.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "weft_errors.h"

int weft_bind_addr_from(weft_bind_addr *a, const struct sockaddr *sa)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         0xff, 0xff};

    memset(a, 0, sizeof *a);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        a->family = 4;
        memcpy(a->addr, &in->sin_addr, 4);
        a->port = ntohs(in->sin_port);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        const uint8_t *b = in6->sin6_addr.s6_addr;
        a->port = ntohs(in6->sin6_port);
        if (memcmp(b, v4mapped, sizeof v4mapped) == 0) {
            a->family = 4;
            memcpy(a->addr, b + 12, 4);
        } else {
            a->family = 6;
            memcpy(a->addr, b, 16);
        }
        return 0;
    }
    return WEFT_EINVAL;
}

void weft_bind_addr_name(const weft_bind_addr *a, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";

    if (a->family == 4) {
        inet_ntop(AF_INET, a->addr, host, sizeof host);
        snprintf(out, cap, "%s:%u", host, (unsigned)a->port);
    } else if (a->family == 6) {
        inet_ntop(AF_INET6, a->addr, host, sizeof host);
        snprintf(out, cap, "[%s]:%u", host, (unsigned)a->port);
    } else {
        snprintf(out, cap, "?");
    }
}

static uint8_t *put_addr(uint8_t *p, const weft_bind_addr *a)
{
    *p++ = a->family;
    memcpy(p, a->addr, 16);
    p += 16;
    *p++ = (uint8_t)(a->port >> 8);
    *p++ = (uint8_t)a->port;
    return p;
}

static const uint8_t *get_addr(const uint8_t *p, weft_bind_addr *a)
{
    a->family = *p++;
    memcpy(a->addr, p, 16);
    p += 16;
    a->port = (uint16_t)(p[0] << 8 | p[1]);
    return p + 2;
}

void weft_bind_encode(const weft_bind *b, uint8_t out[WEFT_BIND_PAYLOAD])
{
    uint8_t *p = out;

    *p++ = WEFT_BIND_VERSION;
    memcpy(p, b->nonce, WEFT_AUTH_NONCE);
    p += WEFT_AUTH_NONCE;
    p = put_addr(p, &b->client);
    p = put_addr(p, &b->server);
    memcpy(p, b->key, WEFT_MAC_KEY);
}

int weft_bind_decode(const uint8_t *p, size_t len, weft_bind *b, char *why,
                     size_t whylen)
{
    memset(b, 0, sizeof *b);
    if (len != WEFT_BIND_PAYLOAD || p[0] != WEFT_BIND_VERSION) {
        snprintf(why, whylen, "its payload (%zu bytes) does not bind it to "
                 "a connection (an older client, or not libweft's)", len);
        return WEFT_EAUTH;
    }
    p++;
    memcpy(b->nonce, p, WEFT_AUTH_NONCE);
    p += WEFT_AUTH_NONCE;
    p = get_addr(p, &b->client);
    p = get_addr(p, &b->server);
    memcpy(b->key, p, WEFT_MAC_KEY);
    return 0;
}

static int same_end(const weft_bind_addr *a, const weft_bind_addr *b)
{
    size_t n = a->family == 4 ? 4 : 16;

    return a->family != 0 && a->family == b->family && a->port == b->port &&
           memcmp(a->addr, b->addr, n) == 0;
}

int weft_bind_check(const weft_bind *b, const uint8_t nonce[WEFT_AUTH_NONCE],
                    const weft_bind_addr *local, const weft_bind_addr *peer,
                    char *why, size_t whylen)
{
    char said[64], is[64];

    if (memcmp(b->nonce, nonce, WEFT_AUTH_NONCE) != 0) {
        snprintf(why, whylen, "it answers another connection's challenge "
                 "(replayed or relayed)");
        return WEFT_EAUTH;
    }
    if (!same_end(&b->server, local)) {
        weft_bind_addr_name(&b->server, said, sizeof said);
        weft_bind_addr_name(local, is, sizeof is);
        snprintf(why, whylen, "it was made for a connection to %s, not to "
                 "weftd's %s (relayed by another program?)", said, is);
        return WEFT_EAUTH;
    }
    if (!same_end(&b->client, peer)) {
        weft_bind_addr_name(&b->client, said, sizeof said);
        weft_bind_addr_name(peer, is, sizeof is);
        snprintf(why, whylen, "it was made for a connection from %s, not "
                 "from %s (relayed by another program?)", said, is);
        return WEFT_EAUTH;
    }
    return 0;
}
