/* iotest.c - an ordinary program (no weft) that calls every function
 * libweft-io wraps (recorders/io/calls.def) and writes, as JSON, what its
 * trace must hold; tests/check_io.py compares the two.
 *
 * usage: iotest DIR REPORT [exec|forkfirst]
 *
 * Works in directory DIR. Before main, a constructor writes ctor.txt (the
 * recorder works from the first call). A forked child writes child.txt,
 * which must not be in the trace (the child is not traced); a SIGALRM
 * handler runs inside a blocked read and writes sig2.txt, unrecorded
 * (calls inside a recorded call are not recorded); a vfork()
 * child execs /bin/true, which must not end this trace. A SIGUSR1
 * handler writes sig.txt (recorded like any call). With `exec`, the
 * program ends by exec'ing itself as `iotest DIR REPORT.exec child`
 * with WEFT_TRACE changed to "$WEFT_TRACE-exec": a new traced process
 * whose report is REPORT.exec. With `forkfirst`, it forks before any
 * I/O (no constructor I/O either): the child's file must not be in the
 * trace, which is the parent's alone.
 *
 * The report is written with direct system calls, which the recorder
 * does not see. Keys: calls (wrapped function -> times called), written
 * and read (absolute path -> bytes transferred, through any handle of
 * that file), deleted (paths), absent (paths no handle may name),
 * dups (IoDuplicateHandle events), seeks (IoSeek events).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXC 64

static struct { const char *name; int n; } calls[MAXC];
static struct { char path[PATH_MAX]; long long w, r; } files[32];
static int nfiles, dups, seeks;
static char deleted[8][PATH_MAX], absent[4][PATH_MAX];
static int ndeleted, nabsent;
#define DIRMAX 1024
static char dir[DIRMAX];

static void called(const char *name)
{
    int i;

    for (i = 0; i < MAXC && calls[i].name; i++)
        if (strcmp(calls[i].name, name) == 0)
            break;
    if (i == MAXC)
        abort();
    calls[i].name = name;
    calls[i].n++;
}

static void io_abs(const char *p, long long w, long long r)
{
    int i;

    for (i = 0; i < nfiles; i++)
        if (strcmp(files[i].path, p) == 0)
            break;
    if (i == nfiles)
        snprintf(files[nfiles++].path, PATH_MAX, "%s", p);
    files[i].w += w;
    files[i].r += r;
}

static void io(const char *rel, long long w, long long r)
{
    char p[DIRMAX + 64];

    snprintf(p, sizeof p, "%s/%s", dir, rel);
    io_abs(p, w, r);
}

static void die(const char *what)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "iotest: %s: %s\n", what,
                     strerror(errno));
    syscall(SYS_write, 2, msg, (size_t)n);
    _exit(1);
}

#define CHECK(cond, what)                                                    \
    do {                                                                     \
        if (!(cond))                                                         \
            die(what);                                                       \
    } while (0)

/* ---- before main ------------------------------------------------------ */

static char ctor_dir[DIRMAX];

__attribute__((constructor)) static void before_main(void)
{
    /* DIR is argv[1]: read it from /proc, with a direct system call. */
    char buf[4096];
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline",
                          O_RDONLY);
    ssize_t n = fd >= 0 ? syscall(SYS_read, fd, buf, sizeof buf - 1) : -1;
    char p[PATH_MAX];
    int out;

    if (fd >= 0)
        syscall(SYS_close, fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    if ((size_t)n <= strlen(buf) + 1)
        return;
    {
        /* `forkfirst`: no I/O before the fork */
        const char *a = buf;
        for (int i = 0; i < 3 && a < buf + n; i++)
            a += strlen(a) + 1;
        if (a < buf + n && strcmp(a, "forkfirst") == 0)
            return;
    }
    snprintf(ctor_dir, sizeof ctor_dir, "%.1000s", buf + strlen(buf) + 1);
    snprintf(p, sizeof p, "%.1000s/ctor.txt", ctor_dir);
    out = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) {
        if (write(out, "constructor\n", 12) != 12)
            _exit(1);
        close(out);
    }
}

/* ---- the calls -------------------------------------------------------- */

static void on_usr1(int sig)
{
    char p[PATH_MAX];
    int fd, saved = errno;

    (void)sig;
    snprintf(p, sizeof p, "%s/sig.txt", dir);
    fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        if (write(fd, "signal\n", 7) != 7)
            _exit(1);
        close(fd);
    }
    errno = saved;
}

/* SIGALRM arrives while the main thread blocks in a recorded read: the
 * handler's calls run inside that call, and are not recorded. */
static void on_alrm(int sig)
{
    char p[PATH_MAX];
    int fd, saved = errno;

    (void)sig;
    snprintf(p, sizeof p, "%.1024s/sig2.txt", dir);
    fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        if (write(fd, "alarm\n", 6) != 6)
            _exit(1);
        close(fd);
    }
    errno = saved;
}

static void signal_in_call(void)
{
    struct sigaction sa;
    int pfd[2];
    char c;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alrm;        /* no SA_RESTART: read fails EINTR */
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");
    CHECK(pipe(pfd) == 0, "pipe");
    alarm(1);
    errno = 0;
    CHECK(read(pfd[0], &c, 1) == -1 && errno == EINTR,
          "read interrupted by a signal");
    called("read");
    snprintf(absent[nabsent++], PATH_MAX, "%.1024s/sig2.txt", dir);
    close(pfd[0]);
    called("close");
    close(pfd[1]);
    called("close");
}

static void path(char *p, const char *rel)
{
    snprintf(p, PATH_MAX, "%.1024s/%.64s", dir, rel);
}

/* Reads and writes of a.txt, every kind; returns its descriptor. */
static int posix_rw(void)
{
    char p[PATH_MAX], buf[256];
    struct iovec iov[2];
    int fd;
    ssize_t n;

    path(p, "a.txt");
    fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    called("open");
    CHECK(fd >= 0, "open a.txt");
    n = write(fd, "0123456789", 10);
    called("write");
    CHECK(n == 10, "write");
    io("a.txt", 10, 0);
    CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek");
    called("lseek");
    seeks++;
    n = read(fd, buf, 4);
    called("read");
    CHECK(n == 4, "read");
    io("a.txt", 0, 4);
    n = pwrite(fd, "ab", 2, 20);
    called("pwrite");
    CHECK(n == 2, "pwrite");
    io("a.txt", 2, 0);
    n = pread(fd, buf, 100, 0);
    called("pread");
    CHECK(n == 22, "pread");
    io("a.txt", 0, 22);
    n = pwrite64(fd, "cd", 2, 22);
    called("pwrite64");
    io("a.txt", 2, 0);
    n = pread64(fd, buf, 4, 20);
    called("pread64");
    CHECK(n == 4, "pread64");
    io("a.txt", 0, 4);
    iov[0].iov_base = "xyz";
    iov[0].iov_len = 3;
    iov[1].iov_base = "uvw";
    iov[1].iov_len = 3;
    CHECK(lseek64(fd, 0, SEEK_END) == 24, "lseek64");
    called("lseek64");
    seeks++;
    n = writev(fd, iov, 2);
    called("writev");
    CHECK(n == 6, "writev");
    io("a.txt", 6, 0);
    CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek");
    called("lseek");
    seeks++;
    iov[0].iov_base = buf;
    iov[1].iov_base = buf + 10;
    n = readv(fd, iov, 2);
    called("readv");
    CHECK(n == 6, "readv");
    io("a.txt", 0, 6);
    CHECK(fsync(fd) == 0, "fsync");
    called("fsync");
    CHECK(fdatasync(fd) == 0, "fdatasync");
    called("fdatasync");
    return fd;
}

/* Duplicates of fd (a.txt), each a new handle; then fd closed, and
 * calls that fail on it. */
static void posix_dups(int fd)
{
    char buf[16];
    int fd2, fd3;

    /* duplicates: each a new handle of a.txt */
    fd2 = dup(fd);
    called("dup");
    dups++;
    CHECK(fd2 >= 0, "dup");
    (void)!write(fd2, "D", 1);
    called("write");
    io("a.txt", 1, 0);
    fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 50);
    called("fcntl");
    dups++;
    CHECK(fd3 >= 50, "fcntl F_DUPFD_CLOEXEC");
    CHECK(dup2(fd, fd3) == fd3, "dup2");
    called("dup2");
    dups++;
    CHECK(dup3(fd, fd2, O_CLOEXEC) == fd2, "dup3");
    called("dup3");
    dups++;
    CHECK(fcntl(fd, F_SETFL, O_APPEND) == 0, "fcntl F_SETFL");
    called("fcntl");
    CHECK(fcntl(fd, F_GETFL) & O_APPEND, "fcntl F_GETFL");
    called("fcntl");
    CHECK(fcntl64(fd, F_GETFL) & O_APPEND, "fcntl64 F_GETFL");
    called("fcntl64");
    (void)!write(fd3, "E", 1);
    called("write");
    io("a.txt", 1, 0);
    CHECK(close(fd3) == 0, "close");
    called("close");
    CHECK(close(fd2) == 0, "close");
    called("close");
    CHECK(close(fd) == 0, "close");
    called("close");
    /* a failing call: errno kept, nothing transferred */
    errno = 0;
    CHECK(read(fd, buf, 1) == -1 && errno == EBADF, "read of a closed fd");
    called("read");
    CHECK(close(fd) == -1 && errno == EBADF, "close of a closed fd");
    called("close");
}

/* Files made, opened at a directory and removed; a pipe. */
static void posix_files(void)
{
    char p[PATH_MAX], q[PATH_MAX], buf[256];
    int fd, dfd;

    path(p, "b.txt");
    fd = creat(p, 0644);
    called("creat");
    CHECK(fd >= 0, "creat");
    CHECK(write(fd, "bbbb", 4) == 4, "write");
    called("write");
    io("b.txt", 4, 0);
    close(fd);
    called("close");
    fd = creat64(p, 0644);
    called("creat64");
    CHECK(fd >= 0, "creat64");
    close(fd);
    called("close");
    fd = open64(p, O_RDONLY);
    called("open64");
    CHECK(fd >= 0, "open64");
    close(fd);
    called("close");

    path(q, "sub");
    CHECK(mkdir(q, 0755) == 0, "mkdir");
    called("mkdir");
    dfd = open(q, O_RDONLY | O_DIRECTORY);
    called("open");
    CHECK(dfd >= 0, "open sub");
    fd = openat(dfd, "c.txt", O_WRONLY | O_CREAT, 0600);
    called("openat");
    CHECK(fd >= 0, "openat");
    CHECK(write(fd, "ccc", 3) == 3, "write");
    called("write");
    io("sub/c.txt", 3, 0);
    close(fd);
    called("close");
    fd = openat64(dfd, "c.txt", O_RDONLY);
    called("openat64");
    CHECK(fd >= 0, "openat64");
    CHECK(read(fd, buf, sizeof buf) == 3, "read");
    called("read");
    io("sub/c.txt", 0, 3);
    close(fd);
    called("close");
    CHECK(unlinkat(dfd, "c.txt", 0) == 0, "unlinkat");
    called("unlinkat");
    snprintf(deleted[ndeleted++], PATH_MAX, "%s/sub/c.txt", dir);
    close(dfd);
    called("close");
    CHECK(rmdir(q) == 0, "rmdir");
    called("rmdir");
    snprintf(deleted[ndeleted++], PATH_MAX, "%s/sub", dir);
    CHECK(unlink(p) == 0, "unlink");
    called("unlink");
    snprintf(deleted[ndeleted++], PATH_MAX, "%s/b.txt", dir);
    /* a pipe: its calls record the region only */
    {
        int pfd[2];
        CHECK(pipe(pfd) == 0, "pipe");
        CHECK(write(pfd[1], "p", 1) == 1, "write pipe");
        called("write");
        CHECK(read(pfd[0], buf, 1) == 1, "read pipe");
        called("read");
        close(pfd[0]);
        called("close");
        close(pfd[1]);
        called("close");
    }
}

static void posix_calls(void)
{
    posix_dups(posix_rw());
    posix_files();
}

static int do_vfprintf(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vfprintf(fp, fmt, ap);
    va_end(ap);
    return n;
}

/* One stream of s.txt through every read, write and seek of stdio. */
static void isoc_stream(void)
{
    char p[PATH_MAX], buf[256];
    FILE *fp;
    int n;

    path(p, "s.txt");
    fp = fopen(p, "w+");
    called("fopen");
    CHECK(fp, "fopen");
    CHECK(fwrite("hello", 1, 5, fp) == 5, "fwrite");
    called("fwrite");
    io("s.txt", 5, 0);
    CHECK(fputs(" world\n", fp) >= 0, "fputs");
    called("fputs");
    io("s.txt", 7, 0);
    CHECK(fputc('x', fp) == 'x', "fputc");
    called("fputc");
    io("s.txt", 1, 0);
    CHECK(putc('y', fp) == 'y', "putc");
    called("putc");
    io("s.txt", 1, 0);
    n = fprintf(fp, "%d-%s\n", 42, "z");
    called("fprintf");
    CHECK(n == 5, "fprintf");
    io("s.txt", 5, 0);
    n = do_vfprintf(fp, "%05d\n", 7);
    called("vfprintf");
    CHECK(n == 6, "vfprintf");
    io("s.txt", 6, 0);
    CHECK(fflush(fp) == 0, "fflush");
    called("fflush");
    rewind(fp);
    called("rewind");
    seeks++;
    CHECK(fgets(buf, sizeof buf, fp) && strcmp(buf, "hello world\n") == 0,
          "fgets");
    called("fgets");
    io("s.txt", 0, 12);
    CHECK(ftell(fp) == 12, "ftell");
    called("ftell");
    seeks++;
    CHECK(fseek(fp, 2, SEEK_CUR) == 0, "fseek");
    called("fseek");
    seeks++;
    CHECK(fread(buf, 1, 100, fp) == 11, "fread");
    called("fread");
    io("s.txt", 0, 11);
    CHECK(fseeko(fp, 0, SEEK_SET) == 0, "fseeko");
    called("fseeko");
    seeks++;
    CHECK(ftello(fp) == 0, "ftello");
    called("ftello");
    seeks++;
    CHECK(fgetc(fp) == 'h', "fgetc");
    called("fgetc");
    CHECK(getc(fp) == 'e', "getc");
    called("getc");
    io("s.txt", 0, 2);
    {
        /* getline itself, not the inline form optimizing compilers
         * make of it (a call of __getdelim, also recorded) */
        ssize_t (*volatile gl)(char **, size_t *, FILE *) = getline;
        char *line = NULL;
        size_t cap = 0;
        CHECK(gl(&line, &cap, fp) == 10, "getline");
        called("getline");
        CHECK(getdelim(&line, &cap, '-', fp) == 5, "getdelim");
        called("getdelim");
        io("s.txt", 0, 15);
        free(line);
    }
    CHECK(fclose(fp) == 0, "fclose");
    called("fclose");
}

/* fopen64, fdopen, freopen, dup2 onto a stream, and the standard
 * streams. */
static void isoc_handles(void)
{
    char p[PATH_MAX];
    FILE *fp;
    int fd, n;

    path(p, "s64.txt");
    fp = fopen64(p, "a");
    called("fopen64");
    CHECK(fp, "fopen64");
    CHECK(fwrite("0123", 2, 2, fp) == 2, "fwrite");
    called("fwrite");
    io("s64.txt", 4, 0);
    CHECK(fclose(fp) == 0, "fclose");
    called("fclose");

    /* fdopen: a stream on a descriptor's handle */
    path(p, "d.txt");
    fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    called("open");
    CHECK(fd >= 0, "open d.txt");
    fp = fdopen(fd, "r+");
    called("fdopen");
    CHECK(fp, "fdopen");
    CHECK(fputs("fd", fp) >= 0, "fputs");
    called("fputs");
    io("d.txt", 2, 0);
    CHECK(fflush(fp) == 0, "fflush");
    called("fflush");
    CHECK(fclose(fp) == 0, "fclose");
    called("fclose");

    /* freopen: the stream's handle ends, a new one names the new file
     * (what is written next is that file's) */
    path(p, "r1.txt");
    fp = fopen(p, "w");
    called("fopen");
    CHECK(fp, "fopen r1.txt");
    CHECK(fputs("one", fp) >= 0, "fputs");
    called("fputs");
    io("r1.txt", 3, 0);
    path(p, "r2.txt");
    fp = freopen(p, "w", fp);
    called("freopen");
    CHECK(fp, "freopen r2.txt");
    CHECK(fputs("four", fp) >= 0, "fputs");
    called("fputs");
    io("r2.txt", 4, 0);
    CHECK(fclose(fp) == 0, "fclose");
    called("fclose");

    /* dup2 onto a stream's descriptor (as sort -o does to stdout): what
     * the stream writes next is the new file's */
    path(p, "r3.txt");
    fp = fopen(p, "w");
    called("fopen");
    CHECK(fp, "fopen r3.txt");
    path(p, "r4.txt");
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    called("open");
    CHECK(fd >= 0, "open r4.txt");
    CHECK(dup2(fd, fileno(fp)) == fileno(fp), "dup2 onto a stream");
    called("dup2");
    dups++;
    CHECK(close(fd) == 0, "close");
    called("close");
    CHECK(fputs("dup2", fp) >= 0, "fputs");
    called("fputs");
    io("r4.txt", 4, 0);
    CHECK(fclose(fp) == 0, "fclose");
    called("fclose");

    /* the standard streams are pre-created handles */
    n = printf("iotest%s\n", "");
    called("printf");
    CHECK(n == 7, "printf");
    {
        /* stdout redirected to a file: that file's bytes */
        struct stat st;
        char link[PATH_MAX];
        ssize_t len = readlink("/proc/self/fd/1", link, sizeof link - 1);
        if (fstat(1, &st) == 0 && S_ISREG(st.st_mode) && len > 0) {
            link[len] = 0;
            io_abs(link, 7, 0);
        }
    }
    CHECK(fflush(stdout) == 0, "fflush");
    called("fflush");
}

static void isoc_calls(void)
{
    isoc_stream();
    isoc_handles();
}

/* Threads: each writes its own file through its own descriptor, at
 * once (the handle maps are shared). */
#define NTHREADS 3
#define TWRITES 50

static void *thread_main(void *arg)
{
    char p[PATH_MAX], rel[32];
    int fd;

    snprintf(rel, sizeof rel, "thread%d.txt", (int)(intptr_t)arg);
    path(p, rel);
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return (void *)1;
    for (int i = 0; i < TWRITES; i++)
        if (write(fd, "0123456789", 10) != 10)
            return (void *)1;
    close(fd);
    return NULL;
}

static void threads(void)
{
    pthread_t t[NTHREADS];

    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i)
                  == 0, "pthread_create");
    for (int i = 0; i < NTHREADS; i++) {
        void *rc;
        char rel[32];
        CHECK(pthread_join(t[i], &rc) == 0 && !rc, "a thread");
        called("open");
        called("close");
        for (int k = 0; k < TWRITES; k++)
            called("write");
        snprintf(rel, sizeof rel, "thread%d.txt", i);
        io(rel, 10 * TWRITES, 0);
    }
}

/* A descriptor's number is free again while its close() still runs: the
 * last close of a TCP socket that lingers over unsent data blocks after
 * the kernel took the number out of the table. Another thread opens a
 * file meanwhile and gets that number; the close's wrapper, returning,
 * must not take the new file's handle for the socket's (it did: the
 * file's writes then named no file). */
struct lingering {
    int fd;                     /* the socket the thread closes */
};

static void *close_lingering(void *arg)
{
    struct lingering *l = arg;

    return close(l->fd) == 0 ? NULL : (void *)1;
}

static void close_race(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    struct linger lg = { 1, 20 };
    struct lingering l;
    char p[PATH_MAX], buf[65536];
    int lis, peer, fd, small = 4096;
    pthread_t t;
    void *rc;

    lis = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lis >= 0 && bind(lis, (struct sockaddr *)&a, sizeof a) == 0 &&
              listen(lis, 1) == 0 &&
              getsockname(lis, (struct sockaddr *)&a, &alen) == 0,
          "a listening socket");
    l.fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l.fd >= 0 && setsockopt(l.fd, SOL_SOCKET, SO_SNDBUF, &small,
                                  sizeof small) == 0 &&
              connect(l.fd, (struct sockaddr *)&a, sizeof a) == 0,
          "connect");
    peer = accept(lis, NULL, NULL);
    CHECK(peer >= 0 && setsockopt(peer, SOL_SOCKET, SO_RCVBUF, &small,
                                  sizeof small) == 0,
          "accept");
    /* Fill both buffers (the peer reads nothing yet): the close lingers. */
    memset(buf, 'x', sizeof buf);
    while (send(l.fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
        ;
    CHECK(errno == EAGAIN || errno == EWOULDBLOCK, "filling the socket");
    CHECK(setsockopt(l.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) == 0,
          "SO_LINGER");
    CHECK(pthread_create(&t, NULL, close_lingering, &l) == 0,
          "pthread_create");
    called("close");
    while (syscall(SYS_fcntl, l.fd, F_GETFD) >= 0)
        sched_yield();
    path(p, "race.txt");
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    called("open");
    CHECK(fd >= 0, "race.txt");
    if (fd != l.fd) /* a lower number was free (another thread's) */
        fprintf(stderr, "iotest: race.txt got %d, not the closing "
                "socket's %d: the race is not tried\n", fd, l.fd);
    /* The peer reads everything: the close ends, its wrapper returns. */
    while (recv(peer, buf, sizeof buf, 0) > 0)
        ;
    CHECK(pthread_join(t, &rc) == 0 && !rc, "the lingering close");
    for (int i = 0; i < 10; i++) {
        CHECK(write(fd, "0123456789", 10) == 10, "race.txt");
        called("write");
    }
    io("race.txt", 100, 0);
    close(fd);
    called("close");
    syscall(SYS_close, peer);
    syscall(SYS_close, lis);
}

static void fork_child(void)
{
    char p[PATH_MAX];
    pid_t pid;
    int st;

    path(p, "child.txt");
    snprintf(absent[nabsent++], PATH_MAX, "%s", p);
    pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        FILE *fp;
        if (fd < 0 || write(fd, "child\n", 6) != 6)
            _exit(1);
        close(fd);
        fp = fopen(p, "a");
        if (!fp || fputs("more\n", fp) < 0 || fclose(fp) != 0)
            _exit(1);
        _exit(0);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
              WEXITSTATUS(st) == 0, "the forked child");

    /* A vfork child runs in our memory until it execs: its exec must not
     * end our trace (what follows is still recorded). */
    pid = vfork();
    CHECK(pid >= 0, "vfork");
    if (pid == 0) {
        static char *const no_env[] = { NULL };
        execle("/bin/true", "true", (char *)NULL, no_env);
        _exit(127);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
              WEXITSTATUS(st) == 0, "the vfork child");
}

/* ---- the report ------------------------------------------------------- */

static char out[1 << 16];
static size_t outlen;

static void put(const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(out + outlen, sizeof out - outlen, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof out - outlen)
        abort();
    outlen += (size_t)n;
}

static void report(const char *file)
{
    int fd;

    put("{\"calls\": {");
    for (int i = 0; i < MAXC && calls[i].name; i++)
        put("%s\"%s\": %d", i ? ", " : "", calls[i].name, calls[i].n);
    put("},\n \"written\": {");
    for (int i = 0, k = 0; i < nfiles; i++)
        if (files[i].w)
            put("%s\"%s\": %lld", k++ ? ", " : "", files[i].path, files[i].w);
    put("},\n \"read\": {");
    for (int i = 0, k = 0; i < nfiles; i++)
        if (files[i].r)
            put("%s\"%s\": %lld", k++ ? ", " : "", files[i].path, files[i].r);
    put("},\n \"deleted\": [");
    for (int i = 0; i < ndeleted; i++)
        put("%s\"%s\"", i ? ", " : "", deleted[i]);
    put("],\n \"absent\": [");
    for (int i = 0; i < nabsent; i++)
        put("%s\"%s\"", i ? ", " : "", absent[i]);
    put("],\n \"dups\": %d, \"seeks\": %d}\n", dups, seeks);
    fd = (int)syscall(SYS_openat, AT_FDCWD, file,
                      O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "report");
    CHECK(syscall(SYS_write, fd, out, outlen) == (long)outlen, "report");
    syscall(SYS_close, fd);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: iotest DIR REPORT [exec]\n");
        return 2;
    }
    {
        char real[PATH_MAX];
        CHECK(realpath(argv[1], real) && strlen(real) < DIRMAX, "DIR");
        snprintf(dir, sizeof dir, "%s", real);
    }
    if (argc > 3 && strcmp(argv[3], "child") == 0) {
        /* the exec'd program: one file */
        char p[PATH_MAX];
        int fd;
        if (ctor_dir[0]) {
            called("open");
            called("write");
            called("close");
            io("ctor.txt", 12, 0);
        }
        path(p, "exec.txt");
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        called("open");
        CHECK(fd >= 0 && write(fd, "exec\n", 5) == 5, "exec.txt");
        called("write");
        io("exec.txt", 5, 0);
        close(fd);
        called("close");
        report(argv[2]);
        return 0;
    }
    if (argc > 3 && strcmp(argv[3], "forkfirst") == 0) {
        /* a fork before this process did any I/O: the child is still
         * not traced */
        char p[PATH_MAX];
        pid_t pid;
        int fd, st;
        path(p, "child.txt");
        snprintf(absent[nabsent++], PATH_MAX, "%s", p);
        pid = fork();
        CHECK(pid >= 0, "fork");
        if (pid == 0) {
            fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || write(fd, "child\n", 6) != 6)
                _exit(1);
            close(fd);
            _exit(0);
        }
        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
                  WEXITSTATUS(st) == 0, "the forked child");
        path(p, "parent.txt");
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        called("open");
        CHECK(fd >= 0 && write(fd, "parent\n", 7) == 7, "parent.txt");
        called("write");
        io("parent.txt", 7, 0);
        close(fd);
        called("close");
        report(argv[2]);
        return 0;
    }
    if (ctor_dir[0]) {
        /* the constructor's calls (before main) */
        called("open");
        called("write");
        called("close");
        io("ctor.txt", 12, 0);
    }
    signal(SIGUSR1, on_usr1);
    posix_calls();
    isoc_calls();
    threads();
    close_race();
    fork_child();
    signal_in_call();
    raise(SIGUSR1);
    called("open");
    called("write");
    called("close");
    io("sig.txt", 7, 0);
    report(argv[2]);
    if (argc > 3 && strcmp(argv[3], "exec") == 0) {
        char rep[PATH_MAX + 8], name[256];
        const char *t = getenv("WEFT_TRACE");
        snprintf(rep, sizeof rep, "%s.exec", argv[2]);
        snprintf(name, sizeof name, "%s-exec", t ? t : "iotest");
        setenv("WEFT_TRACE", name, 1);
        execl("/proc/self/exe", argv[0], argv[1], rep, "child", (char *)NULL);
        die("exec");
    }
    return 0;
}
