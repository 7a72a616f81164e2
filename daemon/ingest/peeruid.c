/* peeruid.c - the uid of a local TCP peer (see peeruid.h): one exact
 * inet_diag lookup of the peer's socket (its source is our peer, its
 * destination us). */
#include "peeruid.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "weft_errors.h"

typedef struct diag_request {
    struct nlmsghdr nlh;
    struct inet_diag_req_v2 req;
} diag_request;

/* Fills the socket id of the far end: source peer, destination local. */
static int fill_id(struct inet_diag_sockid *id, const struct sockaddr *peer,
                   const struct sockaddr *local)
{
    if (peer->sa_family == AF_INET && local->sa_family == AF_INET) {
        const struct sockaddr_in *p = (const struct sockaddr_in *)peer;
        const struct sockaddr_in *l = (const struct sockaddr_in *)local;
        id->idiag_sport = p->sin_port;
        id->idiag_dport = l->sin_port;
        memcpy(id->idiag_src, &p->sin_addr, 4);
        memcpy(id->idiag_dst, &l->sin_addr, 4);
        return AF_INET;
    }
    if (peer->sa_family == AF_INET6 && local->sa_family == AF_INET6) {
        const struct sockaddr_in6 *p = (const struct sockaddr_in6 *)peer;
        const struct sockaddr_in6 *l = (const struct sockaddr_in6 *)local;
        id->idiag_sport = p->sin6_port;
        id->idiag_dport = l->sin6_port;
        memcpy(id->idiag_src, &p->sin6_addr, 16);
        memcpy(id->idiag_dst, &l->sin6_addr, 16);
        return AF_INET6;
    }
    return -1;
}

int weft_peeruid_lookup(const struct sockaddr *peer,
                        const struct sockaddr *local, uint32_t *uid)
{
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    struct timeval tv = { 0, 100000 }; /* the kernel answers at once */
    diag_request r;
    union {
        struct nlmsghdr nlh;
        uint8_t buf[8192];
    } ans;
    ssize_t n;
    int fd, family, rc = WEFT_ENOTFOUND;

    memset(&r, 0, sizeof r);
    if ((family = fill_id(&r.req.id, peer, local)) < 0)
        return WEFT_EINVAL;
    r.nlh.nlmsg_len = sizeof r;
    r.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    r.nlh.nlmsg_flags = NLM_F_REQUEST;
    r.req.sdiag_family = (uint8_t)family;
    r.req.sdiag_protocol = IPPROTO_TCP;
    r.req.idiag_states = ~0u;
    r.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    r.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0)
        return WEFT_EIO;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (sendto(fd, &r, sizeof r, 0, (struct sockaddr *)&kernel,
               sizeof kernel) != (ssize_t)sizeof r) {
        rc = WEFT_EIO;
        goto out;
    }
    n = recv(fd, &ans, sizeof ans, 0);
    if (n < 0) {
        rc = WEFT_EIO;
        goto out;
    }
    for (struct nlmsghdr *h = &ans.nlh; NLMSG_OK(h, (size_t)n);
         h = NLMSG_NEXT(h, n)) {
        const struct inet_diag_msg *m = NLMSG_DATA(h);
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
            h->nlmsg_len < NLMSG_LENGTH(sizeof *m))
            break; /* NLMSG_ERROR: ENOENT for a remote peer */
        *uid = m->idiag_uid;
        rc = 0;
        break;
    }
out:
    close(fd);
    return rc;
}
