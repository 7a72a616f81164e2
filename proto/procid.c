/* procid.c - who a process is on its host. See procid.h. */
#include "procid.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Field 22 of the stat file at path, 0 if it cannot be read. */
static uint64_t start_in(const char *path)
{
    char buf[1024], *p, *end;
    ssize_t n;
    int fd;

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

uint64_t weft_proc_start(uint32_t pid)
{
    char path[64];

    if (pid == 0)
        return 0;
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/stat", pid);
    return start_in(path);
}

uint64_t weft_proc_self_start(void)
{
    return start_in("/proc/self/stat");
}

uint64_t weft_proc_pidns(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}
