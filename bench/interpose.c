/* bench/interpose.c - one interposed call timed with clock_gettime, for
 * bench/interpose.sh (which runs it untraced, under `weft run -t pthread`
 * or `-t io`, and under EZTrace's pthread or posixio module).
 *
 *   bench/interpose mutex N        N pthread_mutex_lock/unlock pairs on
 *                                  one mutex no other thread touches
 *   bench/interpose pread N DIR    N pread of 4 KiB at offset 0 of a
 *                                  4 KiB file DIR/interpose.dat, written
 *                                  and read once before the timing (so
 *                                  the page cache holds it)
 *
 * pread, not lseek+read: it is one call, and both libweft-io
 * (recorders/io/calls.def) and EZTrace's posixio module wrap it by that
 * name. The program calls the symbol `pread` itself (see below), which
 * is the one EZTrace 2.0 wraps (it has no pread64).
 *
 * N/10 warm-up operations (at least 100) come first. The N operations
 * (N >= BATCHES) run as BATCHES batches of N/BATCHES, each timed on its
 * own: on a shared machine a batch during which another process took
 * the core is slow, and the median batch leaves it out while costs every
 * batch pays (recording, shipping) stay in. It prints one line
 *
 *   ns_per_call MEAN median_batch MED min_batch MIN cpu CPU calls C
 *
 * in ns per operation (a lock/unlock pair, or one pread): over all
 * batches, the median batch, the fastest one, and the CPU time of the
 * thread over all batches. Exit status 0, 1 on a failed call, 2 on bad
 * arguments.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 20
#define BLOCK 4096

/* glibc's pread under _FILE_OFFSET_BITS=64 is a redirect to pread64,
 * which EZTrace does not wrap; on LP64 both are the same call, so name
 * the plain symbol. */
extern ssize_t pread_plain(int fd, void *buf, size_t n, off_t off)
    __asm__("pread");

static double now(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* n lock/unlock pairs; 0, or -1 if a call failed. */
static int mutex_ops(long n)
{
    for (long i = 0; i < n; i++) {
        if (pthread_mutex_lock(&mu) != 0 || pthread_mutex_unlock(&mu) != 0)
            return -1;
    }
    return 0;
}

/* n preads of BLOCK bytes at offset 0 of fd; 0, or -1 if one was short. */
static int pread_ops(int fd, long n)
{
    char buf[BLOCK];

    for (long i = 0; i < n; i++) {
        if (pread_plain(fd, buf, BLOCK, 0) != BLOCK)
            return -1;
    }
    return 0;
}

/* Writes the BLOCK-byte file at path and opens it for reading; the fd,
 * or -1 with a message. */
static int make_file(const char *path)
{
    char buf[BLOCK];
    int fd;

    memset(buf, 'w', sizeof buf);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, buf, sizeof buf) != BLOCK || close(fd) != 0) {
        perror(path);
        return -1;
    }
    fd = open(path, O_RDONLY);
    if (fd < 0)
        perror(path);
    return fd;
}

int main(int argc, char **argv)
{
    int is_mutex, fd = -1, rc = 1;
    long n, warm, per;
    double t0, t1, c0, c1, batch[BATCHES];
    char *end, path[4096];

    n = argc >= 3 ? strtol(argv[2], &end, 10) : 0;
    if (argc < 3 || *end || n < BATCHES ||
        !((argc == 3 && !strcmp(argv[1], "mutex")) ||
          (argc == 4 && !strcmp(argv[1], "pread")))) {
        fprintf(stderr, "usage: %s mutex N | pread N DIR (N at least %d)\n",
                argv[0], BATCHES);
        return 2;
    }
    is_mutex = !strcmp(argv[1], "mutex");
    if (!is_mutex) {
        if (snprintf(path, sizeof path, "%s/interpose.dat", argv[3]) >=
            (int)sizeof path) {
            fprintf(stderr, "%s: directory name too long\n", argv[0]);
            return 2;
        }
        fd = make_file(path);
        if (fd < 0)
            goto out;
    }
    warm = n / 10 < 100 ? 100 : n / 10;
    if (is_mutex ? mutex_ops(warm) : pread_ops(fd, warm))
        goto failed;

    per = n / BATCHES;
    c0 = now(CLOCK_THREAD_CPUTIME_ID);
    t0 = now(CLOCK_MONOTONIC);
    for (int b = 0; b < BATCHES; b++) {
        double b0 = now(CLOCK_MONOTONIC);

        if (is_mutex ? mutex_ops(per) : pread_ops(fd, per))
            goto failed;
        batch[b] = (now(CLOCK_MONOTONIC) - b0) * 1e9 / (double)per;
    }
    t1 = now(CLOCK_MONOTONIC);
    c1 = now(CLOCK_THREAD_CPUTIME_ID);
    qsort(batch, BATCHES, sizeof batch[0], by_value);
    printf("ns_per_call %.1f median_batch %.1f min_batch %.1f cpu %.1f "
           "calls %ld\n", (t1 - t0) * 1e9 / (double)(per * BATCHES),
           (batch[BATCHES / 2 - 1] + batch[BATCHES / 2]) / 2, batch[0],
           (c1 - c0) * 1e9 / (double)(per * BATCHES), per * BATCHES);
    rc = 0;
    goto out;
failed:
    fprintf(stderr, "%s: a %s call failed\n", argv[0],
            is_mutex ? "pthread_mutex" : "pread");
out:
    if (fd >= 0)
        close(fd);
    if (!is_mutex)
        unlink(path);
    return rc;
}
