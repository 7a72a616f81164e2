/* fdclaim.c - descriptor numbers belong to the program: libweft's two
 * (its socket to weftd and the sender's wake-up eventfd) move out of the
 * way when the program names one of them.
 *
 * libweft keeps its descriptors at 1000 and up (weft__fd_aside), but a
 * program may use any number: a script's `exec 1000>file` (bash first
 * asks fcntl(1000, F_GETFD), finds a close-on-exec descriptor it takes
 * for one of its own and undoes the redirection, so `echo hi >&1000`
 * went into weftd's socket), a dup2 onto a fixed number, a daemon
 * closing every descriptor. Untraced, such a number is free: the
 * recorders' wrappers of close, dup2, dup3 and fcntl call
 * weft__recorder_fd_claim first, which moves libweft's descriptor to
 * another number, so that the call then does exactly what it does
 * untraced (EBADF for a close or an F_GETFD, the redirection for a dup2)
 * and libweft goes on with its new number. close_range and closefrom
 * close around them instead (weft__recorder_own_fds; libweft-io's
 * closerange.c): a range may end at the highest number there is.
 *
 * The wake-up eventfd is written by any thread (weft__wake_sender) and
 * read by the sender (weft__wake_fd_drain): the new number is published
 * first, then the old one is closed once no writer or reader may still
 * hold it (wake_users). The socket is the sender's
 * alone once it runs: it moves it itself at the start of its next round
 * (weft__relocate_pending) while the claiming thread waits, at most
 * WEFT__RELOCATE_WAIT_MS (the sender may be waiting for an answer of
 * weftd's); if it cannot, the claiming call fails with EBUSY, as Linux's
 * dup2 may, rather than hand libweft's connection over to the program
 * or the program's descriptor to libweft. Before the sender runs (and
 * after it ended) the opening thread's open_mu serializes the two.
 * Calls libweft makes itself (weft__inside) claim nothing, nor do a
 * vfork() child's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "client_internal.h"
#include "client_session.h"
#include "recorder.h"

/* How long a claim of the socket waits for the sender to move it. */
#define WEFT__RELOCATE_WAIT_MS 1000

/* A new close-on-exec copy of fd at another number: the lowest free
 * from half of fd on, below fd unless all of those are taken (a program
 * that walks the numbers upwards has passed it), else from 3. The copy,
 * or -1. */
static int copy_elsewhere(int fd)
{
    int n = fcntl(fd, F_DUPFD_CLOEXEC, fd / 2 > 3 ? fd / 2 : 3);

    if (n < 0)
        n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    return n;
}

/* Moves the wake-up eventfd off number fd. 0 or -1. open_mu held. */
static int move_wake(int fd)
{
    int n = copy_elsewhere(fd);

    if (n < 0)
        return -1;
    weft__S.wake_fd = n;
    /* A writer (or the sender reading) that took the old number is done
     * with it by the time it leaves; the ones after take the new one. */
    while (atomic_load(&weft__S.wake_users) > 0)
        sched_yield();
    close(fd);
    return 0;
}

/* Moves the socket off number fd, the sender running: it does it at the
 * start of its next round. 0 or -1. open_mu held. */
static int ask_sender(int fd)
{
    struct timespec tick = { 0, 200000 };
    int expect;

    atomic_store(&weft__S.relocate, fd);
    weft__wake_sender();
    for (int i = 0; i < WEFT__RELOCATE_WAIT_MS * 5; i++) {
        int r = atomic_load(&weft__S.relocate);
        if (r == WEFT__RELOCATE_NONE || r == WEFT__RELOCATE_FAILED ||
            atomic_load(&weft__S.sender_done))
            break;
        nanosleep(&tick, NULL);
    }
    /* Withdrawn unless the sender has taken it (then it finishes). */
    expect = fd;
    if (atomic_compare_exchange_strong(&weft__S.relocate, &expect,
                                       WEFT__RELOCATE_NONE))
        return weft__S.fd == fd ? -1 : 0;
    while (atomic_load(&weft__S.relocate) == WEFT__RELOCATE_BUSY)
        nanosleep(&tick, NULL);
    expect = atomic_exchange(&weft__S.relocate, WEFT__RELOCATE_NONE);
    return expect == WEFT__RELOCATE_FAILED || weft__S.fd == fd ? -1 : 0;
}

/* See client_session.h. */
void weft__relocate_pending(void)
{
    int fd = atomic_load(&weft__S.relocate), n;

    if (fd < 0 || !atomic_compare_exchange_strong(&weft__S.relocate, &fd,
                                                  WEFT__RELOCATE_BUSY))
        return;
    if (fd != weft__S.fd) { /* not (any more) this connection's */
        atomic_store(&weft__S.relocate, WEFT__RELOCATE_NONE);
        return;
    }
    n = copy_elsewhere(fd);
    if (n >= 0) {
        weft__S.fd = n;
        close(fd);
    }
    atomic_store(&weft__S.relocate,
                 n >= 0 ? WEFT__RELOCATE_NONE : WEFT__RELOCATE_FAILED);
}

/* See recorder.h. */
int weft__recorder_fd_claim(int fd)
{
    int saved = errno, rc = 0;

    if (fd < 0 || weft__inside ||
        (fd != weft__S.fd && fd != weft__S.wake_fd))
        return 0;
    /* A vfork() child shares libweft's memory, not its descriptor table:
     * its calls change its own table only, and it is about to exec. */
    if (getpid() != weft__S.pid)
        return 0;
    weft__inside++;
    pthread_mutex_lock(&weft__S.open_mu);
    if (fd == weft__S.wake_fd)
        rc = move_wake(fd);
    else if (fd == weft__S.fd && weft__S.sender_started &&
             !atomic_load(&weft__S.sender_done))
        rc = ask_sender(fd);
    else if (fd == weft__S.fd) { /* nobody else uses it now */
        int n = copy_elsewhere(fd);
        if (n >= 0) {
            weft__S.fd = n;
            close(fd);
        }
        rc = n < 0 ? -1 : 0;
    }
    pthread_mutex_unlock(&weft__S.open_mu);
    weft__inside--;
    errno = rc < 0 ? EBUSY : saved;
    return rc;
}

/* See recorder.h. */
int weft__recorder_own_fds(int *fds)
{
    int a = weft__S.fd, b = weft__S.wake_fd, n = 0;

    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    if (a >= 0)
        fds[n++] = a;
    if (b >= 0 && b != a)
        fds[n++] = b;
    return n;
}
