/* procwatch.c - is a member's process still there? See procwatch.h. */
#include "procwatch.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

int weft_proc_gone(uint32_t pid, uint64_t start)
{
    struct pollfd p;
    int fd, ended;
    uint64_t now;

    if (pid == 0)
        return 0;
    fd = pidfd_open((pid_t)pid, 0);
    if (fd < 0)
        return errno == ESRCH; /* else (EMFILE, ...): cannot tell */
    /* A pidfd is readable once its process has ended (a zombie too). */
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    ended = poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
    close(fd);
    if (ended)
        return 1;
    now = start ? weft_proc_start(pid) : 0;
    return now && now != start; /* the pid is another process's now */
}

int weft_proc_watchable(const weft_conn *c, const Weft__Hello *h,
                        uint32_t uid, uint64_t *start)
{
    char path[64];
    struct stat st;
    uint64_t now;
    int same_ns;

    *start = 0;
    if (h->pid == 0)
        return 0;
    if (c->is_unix) {
        if (c->peer_pid != h->pid)
            return 0;
        *start = weft_proc_start(h->pid);
        /* Gone already: as it said it started (libweft says so over
         * TCP only; 0 is a pid that weft_proc_gone finds free). */
        if (*start == 0)
            *start = h->proc_start;
        return 1;
    }
    if (!c->peer_loopback)
        return 0; /* another host's pids mean nothing here */
    /* The Hello's pid is a pid of weftd's own namespace when the client
     * says so (a container with the host's network has another). */
    same_ns = h->pid_ns != 0 && h->pid_ns == weft_proc_pidns();
    snprintf(path, sizeof path, "/proc/%" PRIu32, h->pid);
    if (stat(path, &st) < 0) {
        /* Ended before weftd read its Hello (which follows MUNGE's
         * decoding): gone already, when the pid was one of ours. */
        if (!same_ns || errno != ENOENT)
            return 0;
        *start = h->proc_start;
        return 1;
    }
    now = weft_proc_start(h->pid);
    if (st.st_uid == uid && (h->proc_start == 0 || h->proc_start == now)) {
        *start = now;
        return 1;
    }
    /* Another process has that pid: the one that said Hello ended. */
    if (same_ns && h->proc_start != 0 && now != 0 && now != h->proc_start) {
        *start = h->proc_start;
        return 1;
    }
    return 0;
}
