/* test_fdguard.c - weftd out of file descriptors (daemon/ingest/fdguard.c,
 * through server.c), over real TCP sockets (server_util.c).
 *
 * With every descriptor taken and libuv's own spare gone (as when other
 * threads took the one it freed), a connection waiting to be accepted
 * makes the listener pause: accept fails once, not in a loop, and the
 * loop thread keeps serving (a session's Definitions are acked). Once
 * descriptors are free again the listener resumes by itself and the
 * waiting connection is served. SIGTERM while paused ends the loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "fdguard.h"
#include "server.h"
#include "server_util.h"
#include "trace.h"
#include "weft_errors.h"

typedef struct hog {
    int fds[4096];
    int n;
    struct rlimit was;
} hog;

/* Takes every descriptor but none, under a soft limit lowered to a few
 * above those in use; and libuv's spare (loop->emfile_fd). */
static void hog_all(fixture *f, hog *h)
{
    struct rlimit rl;
    int probe = open("/dev/null", O_RDONLY);

    assert_true(probe >= 0);
    close(probe);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &h->was), 0);
    rl = h->was;
    rl.rlim_cur = (rlim_t)probe + 64;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    h->n = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0) {
            assert_int_equal(errno, EMFILE);
            break;
        }
        assert_true(h->n < (int)(sizeof h->fds / sizeof h->fds[0]));
        h->fds[h->n++] = fd;
    }
    if (f->loop.emfile_fd >= 0) {
        int fd;
        close(f->loop.emfile_fd);
        f->loop.emfile_fd = -1;
        fd = open("/dev/null", O_RDONLY); /* its slot taken */
        assert_true(fd >= 0);
        h->fds[h->n++] = fd;
    }
}

static void unhog(hog *h)
{
    while (h->n > 0)
        close(h->fds[--h->n]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &h->was), 0);
}

/* A TCP socket to the daemon, connecting (the kernel completes it while
 * weftd does not accept). */
static void connect_fd(const fixture *f, int fd)
{
    struct sockaddr_in sin;
    struct timeval tv = { TIMEOUT_S, 0 };

    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)f->port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
}

static void test_emfile_pauses(void **state)
{
    fixture *f = *state;
    hog h;
    int s, waiting;

    start(f);
    s = cl_connect(f);
    hello_ok(s, "fdg", 0, 2);
    /* the new trace's catalog row (a worker job) is written before the
     * descriptors go: at EMFILE the catalog cannot be opened */
    for (int i = 0; i < 500 && __atomic_load_n(&f->d.jobs, __ATOMIC_SEQ_CST);
         i++)
        sleep_ms(10);
    waiting = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(waiting >= 0);
    hog_all(f, &h);
    connect_fd(f, waiting);
    sleep_ms(300);
    /* once per pause, not in a loop (a spin fails thousands of times a
     * second; a busy machine may let a pause end once more); and the
     * loop thread still serves */
    assert_true(f->d.srv->accept_failed >= 1 && f->d.srv->accept_failed < 10);
    assert_true(weft_fdguard_paused(&f->d, (uv_stream_t *)&f->d.srv->tcp));
    send_bytes_free(s, defs_frame(1));
    expect_ack(s, 1, 0, 1);
    sleep_ms(WEFT_ACCEPT_PAUSE_MS + 200); /* still out: stays paused */
    assert_true(f->d.srv->accept_failed < 10);
    unhog(&h);
    cl_challenge(waiting); /* accepted once it resumed: weftd speaks first */
    hello_ok(waiting, "fdg", 1, 2);
    assert_false(weft_fdguard_paused(&f->d, (uv_stream_t *)&f->d.srv->tcp));
    send_bytes_free(waiting, goodbye_frame());
    expect_eof(waiting);
    close(waiting);
    send_bytes_free(s, goodbye_frame());
    expect_eof(s);
    close(s);
    stop(f);
    assert_true(f->d.limit_hits[WEFT_LIMIT_FD_LIMIT] >= 1);
}

/* Stopping while paused: the loop ends, nothing is left open. */
static void test_stop_while_paused(void **state)
{
    fixture *f = *state;
    hog h;
    int waiting;

    start(f);
    waiting = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(waiting >= 0);
    hog_all(f, &h);
    connect_fd(f, waiting);
    sleep_ms(300);
    assert_true(weft_fdguard_paused(&f->d, (uv_stream_t *)&f->d.srv->tcp));
    unhog(&h);
    stop(f);
    close(waiting);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_emfile_pauses),
        T(test_stop_while_paused),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
