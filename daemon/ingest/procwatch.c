/* procwatch.c - is a member's process still there? See procwatch.h. */
#include "procwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t weft_proc_start(uint32_t pid)
{
    char path[64], buf[1024], *p, *end;
    ssize_t n;
    int fd;

    if (pid == 0)
        return 0;
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* "PID (COMM) STATE ...": COMM may hold spaces and parentheses, the
     * fields after its last ')' do not. STATE is field 3, starttime 22. */
    p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 2; field < 22; field++) {
        while (*p == ' ')
            p++;
        if (field < 21) {
            p = strchr(p, ' ');
            if (!p)
                return 0;
        }
    }
    errno = 0;
    uint64_t v = strtoull(p, &end, 10);
    return errno || end == p ? 0 : v;
}

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

int weft_proc_watchable(const weft_conn *c, uint32_t pid, uint32_t uid,
                        uint64_t *start)
{
    char path[64];
    struct stat st;

    *start = 0;
    if (pid == 0)
        return 0;
    if (c->is_unix) {
        if (c->peer_pid != pid)
            return 0;
    } else {
        snprintf(path, sizeof path, "/proc/%" PRIu32, pid);
        if (!c->peer_loopback || stat(path, &st) < 0 || st.st_uid != uid)
            return 0;
    }
    *start = weft_proc_start(pid);
    return 1;
}
