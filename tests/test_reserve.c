/* test_reserve.c - what admins keep when other users have taken
 * everything (daemon/ingest/reserve.c), accepting waiting for room
 * (server.c: accept_full) and the lines a peer causes at will
 * (daemon/ingest/connlog.c), over real sockets (server_util.c runs the daemon).
 *
 * The test process is weftd's own user, so its Unix connections are an
 * admin's; its TCP connections are nobody's at accept (ordinary).
 * reserved_connections beyond max_connections and their descriptors are
 * an admin's Unix connections' only; admin_group's members are known
 * from the lookup at start or SIGHUP (weft_reserve_load), and one of
 * them (by gid) takes a question kept for admins when other users'
 * fill the rest, where a non-member is refused; a thousand
 * disconnects without Goodbye log at most max_log_refusals lines a
 * second, the last saying how many were not logged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ask.h"
#include "daemon_fixture.h"
#include "frame.h"
#include "reserve.h"
#include "server.h"
#include "server_util.h"
#include "testutil.h"
#include "weft_errors.h"

/* The fixture with a Unix socket in its directory. */
static int setup_unix(void **state)
{
    fixture *f;
    char err[256], *path;

    setup(state);
    f = *state;
    path = tu_path(f->dir, "weftd.sock");
    assert_int_equal(weft_config_set(&f->d.cfg, "weftd", "socket", path,
                                     err, sizeof err), 0);
    free(path);
    hello_uid = (uint32_t)geteuid();
    return 0;
}

static int unix_connect(const fixture *f)
{
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    struct timeval tv = { TIMEOUT_S, 0 };
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", f->d.cfg.socket);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv),
                     0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof sun), 0);
    return fd;
}

/* 1 if fd has something to read (an Error, a frame) within ms. */
static int readable_within(int fd, int ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };

    return poll(&p, 1, ms) == 1;
}

/* Every ordinary slot taken: an admin's Unix connection takes one of
 * reserved_connections and is answered; beyond the reserve it is
 * refused too, and a TCP one is refused all along. */
static void test_admin_slots(void **state)
{
    fixture *f = *state;
    int t[2], extra, u[2];

    f->d.cfg.max_connections = 2;
    f->d.cfg.reserved_connections = 1;
    start(f);
    for (int i = 0; i < 2; i++) {
        t[i] = cl_connect(f);
        hello_ok(t[i], "slots", (uint32_t)i, 3);
    }
    extra = cl_connect(f);
    expect_error(&extra, WEFT_ELIMIT, "max_connections is 2");
    u[0] = unix_connect(f);
    hello_ok(u[0], "slots", 2, 3); /* answered: the reserve */
    u[1] = unix_connect(f);
    expect_error(&u[1], WEFT_ELIMIT, "max_connections is 2");
    for (int i = 0; i < 2; i++)
        close(t[i]);
    close(u[0]);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_CONNECTIONS], 2);
}

/* Near the descriptor limit an ordinary connection is refused while
 * reserved_connections' descriptors are free; an admin's may use them. */
static void test_admin_fds(void **state)
{
    fixture *f = *state;
    int probe, tcp, u;

    f->d.cfg.reserved_connections = 16;
    start(f);
    probe = open("/dev/null", O_RDONLY); /* the client's socket's, next */
    assert_true(probe >= 0);
    close(probe);
    /* An accepted descriptor near probe: an admin's needs probe + 2 +
     * WEFT_FD_RESERVE, an ordinary one 32 more. */
    f->d.srv->fd_limit = (uint64_t)probe + 2 + WEFT_FD_RESERVE + 16;
    tcp = cl_connect(f);
    expect_error(&tcp, WEFT_ELIMIT, "near its file descriptor limit");
    u = unix_connect(f);
    hello_ok(u, "fds", 0, 1);
    close(u);
    f->d.srv->fd_limit = 0;
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_FD_LIMIT], 1);
}

/* A TCP connection to f's port, not yet accepted (its Challenge not
 * read). */
static int connect_only(const fixture *f)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    struct timeval tv = { TIMEOUT_S, 0 };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    sin.sin_port = htons((uint16_t)f->port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv),
                     0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    return fd;
}

/* Past max_connections + reserved_connections + WEFT_ACCEPT_SLACK open
 * or closing, accepting waits (the listener is not watched: no
 * descriptor is taken, no Error sent, nothing logged) until one closes;
 * then the waiting one is taken. */
static void test_accept_waits(void **state)
{
    fixture *f = *state;
    enum { OPEN = 4 + WEFT_ACCEPT_SLACK };
    int fds[OPEN], waiting;

    f->d.cfg.max_connections = 64;
    f->d.cfg.reserved_connections = 0;
    start(f);
    for (int i = 0; i < OPEN; i++)
        fds[i] = cl_connect(f); /* each took its Challenge: accepted */
    f->d.cfg.max_connections = 4; /* as a reload may: OPEN are the most
                                     that may be open or closing */
    waiting = connect_only(f);
    assert_false(readable_within(waiting, 500)); /* not accepted */
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_CONNECTIONS], 0);
    close(fds[0]);
    /* Room: it is accepted, and refused (OPEN - 1 > 4 are open). */
    expect_error(&waiting, WEFT_ELIMIT, "max_connections is 4");
    for (int i = 1; i < OPEN; i++)
        close(fds[i]);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_CONNECTIONS], 1);
}

/* Lines of path's file holding what, and the sum of the counts of held
 * back lines they report. */
static int count_lines(const char *path, const char *what,
                       unsigned long long *held)
{
    FILE *fp = fopen(path, "r");
    char line[2048];
    int n = 0;

    assert_non_null(fp);
    *held = 0;
    while (fgets(line, sizeof line, fp)) {
        const char *more = strstr(line, "(and ");
        if (!strstr(line, what))
            continue;
        n++;
        if (more)
            *held += strtoull(more + 5, NULL, 10);
    }
    fclose(fp);
    return n;
}

/* A thousand members hang up without Goodbye: at most max_log_refusals
 * lines a second say so, and a later one says how many were not
 * logged, so that every disconnect is accounted for. */
static void test_disconnect_lines(void **state)
{
    fixture *f = *state;
    enum { N = 1000 };
    char *log = tu_path(f->dir, "log");
    unsigned long long held;
    struct timespec t0, t1;
    int saved, out, lines, fd;

    f->d.cfg.max_members = N + 1;
    f->d.cfg.log_level = WEFT_LOG_WARNING;
    f->d.cfg.max_log_refusals = 20;
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(saved >= 0 && out >= 0);
    assert_int_equal(dup2(out, STDERR_FILENO), STDERR_FILENO);
    close(out);
    start(f);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; i < N; i++) {
        fd = cl_connect(f);
        hello_ok(fd, "hangups", i, N + 1);
        close(fd); /* no Goodbye */
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sleep_ms(2000); /* a second later: the next line is let through */
    fd = cl_connect(f);
    hello_ok(fd, "hangups", N, N + 1);
    close(fd);
    sleep_ms(200);
    stop(f);
    fflush(stderr);
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    lines = count_lines(log, "disconnected without goodbye", &held);
    fprintf(stderr, "%d disconnects in %ld ms: %d lines, %llu not logged\n",
            N + 1, (long)((t1.tv_sec - t0.tv_sec) * 1000 +
                          (t1.tv_nsec - t0.tv_nsec) / 1000000), lines, held);
    assert_true(lines <= 20 * ((t1.tv_sec - t0.tv_sec) + 3));
    assert_int_equal((unsigned long long)lines + held, N + 1);
    free(log);
}

/* admin_group's members and gid are those of the last lookup; without a
 * group only root and weftd's user are admins. */
static void test_admin_group_cache(void **state)
{
    fixture *f = *state;
    struct group *gr;
    struct passwd *pw = NULL;
    char err[256];
    uint32_t gid = 0, other = 4000000000u;

    assert_int_equal(weft_reserve_is_admin(&f->d, 0, other), 1);
    assert_int_equal(weft_reserve_is_admin(&f->d, (uint32_t)geteuid(),
                                           other), 1);
    assert_int_equal(weft_reserve_is_admin(&f->d, other, other), 0);
    assert_int_equal(weft_reserve_load(&f->d, &gid), 0); /* none set */
    /* A group of this host with a member that is a user */
    setgrent();
    while ((gr = getgrent()))
        if (gr->gr_mem[0] && (pw = getpwnam(gr->gr_mem[0])) &&
            pw->pw_uid != 0 && pw->pw_uid != geteuid())
            break;
    if (!gr) {
        endgrent();
        skip();
    }
    assert_int_equal(weft_config_set(&f->d.cfg, "weftd", "admin_group",
                                     gr->gr_name, err, sizeof err), 0);
    endgrent();
    assert_int_equal(weft_reserve_load(&f->d, &gid), 0);
    assert_int_equal(weft_reserve_is_admin(&f->d, (uint32_t)pw->pw_uid,
                                           other), 1);
    assert_int_equal(weft_reserve_is_admin(&f->d, other, gid), 1);
    assert_int_equal(weft_reserve_is_admin(&f->d, other, other), 0);
    /* a group that is gone: nobody of it any more */
    assert_int_equal(weft_config_set(&f->d.cfg, "weftd", "admin_group",
                                     "weft-no-such-group", err, sizeof err),
                     0);
    assert_int_equal(weft_reserve_load(&f->d, &gid), WEFT_ENOTFOUND);
    assert_int_equal(weft_reserve_is_admin(&f->d, other, gid), 0);
    weft_reserve_free(&f->d);
}

/* As uid with gid (and no other group), asks f's weftd for the catalog
 * (a child process). 1 if refused because weftd answers too many
 * questions, 0 if anything else came, 2 if nothing did. */
static int ask_as(const fixture *f, uint32_t uid, uint32_t gid)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Query q = WEFT__QUERY__INIT;
    bytes b;
    pid_t pid;
    int status;

    q.protocol_version = WEFT_PROTOCOL_VERSION;
    q.kind = WEFT__QUERY__KIND__CATALOG;
    env.msg_case = WEFT__ENVELOPE__MSG_QUERY;
    env.query = &q;
    b = pack(&env);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        struct timeval tv = { TIMEOUT_S, 0 };
        char got[4096];
        ssize_t n;
        int fd;
        snprintf(sun.sun_path, sizeof sun.sun_path, "%s", f->d.cfg.socket);
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0 ||
            (fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
            connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0 ||
            write(fd, b.p, b.n) != (ssize_t)b.n)
            _exit(3);
        n = read(fd, got, sizeof got);
        if (n <= 0)
            _exit(2);
        _exit(memmem(got, (size_t)n, "questions already", 17) ? 1 : 0);
    }
    free(b.p);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Other users' questions fill all but WEFT_ASK_RESERVE: an admin_group
 * member's (known from the lookup at start) takes one of those, a
 * non-member's is refused. */
static void test_admin_question_reserve(void **state)
{
    fixture *f = *state;
    struct passwd *pw = getpwnam("nobody");
    struct group *gr;
    uint32_t gid, member, other, uid = pw ? (uint32_t)pw->pw_uid : 0;
    char err[256];

    if (!(gr = getgrnam("nogroup")))
        skip();
    member = (uint32_t)gr->gr_gid; /* gr is getgrnam's: copied at once */
    if (geteuid() != 0 || !pw || !(gr = getgrnam("daemon")))
        skip(); /* setuid to another user */
    other = (uint32_t)gr->gr_gid;
    assert_int_equal(chmod(f->dir, 0711), 0);
    assert_int_equal(weft_config_set(&f->d.cfg, "weftd", "admin_group",
                                     "nogroup", err, sizeof err), 0);
    assert_int_equal(weft_reserve_load(&f->d, &gid), 0);
    f->d.ask->n = WEFT_ASK_MAX_QUEUED - WEFT_ASK_RESERVE;
    start(f);
    assert_int_equal(ask_as(f, uid, other), 1);
    assert_int_equal(ask_as(f, uid, member), 0);
    sleep_ms(300); /* its question ends once its asker is gone */
    f->d.ask->n -= WEFT_ASK_MAX_QUEUED - WEFT_ASK_RESERVE;
    stop(f);
    weft_reserve_free(&f->d);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_unix, teardown)
    const struct CMUnitTest tests[] = {
        T(test_admin_slots),
        T(test_admin_fds),
        T(test_accept_waits),
        T(test_disconnect_lines),
        T(test_admin_group_cache),
        T(test_admin_question_reserve),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
