/* weft-signaltest.c - a traced program that dies of a signal, for
 * tests/e2e_signal.sh.
 *
 *   weft-signaltest MODE N
 *
 * A worker thread records N Enter/Leave pairs and ends; the main thread
 * records N pairs; an idle thread records 3 pairs and then blocks for
 * good with its partly filled buffer (its records are lost on a fatal
 * signal: only the signalled thread's buffer is taken over). Then by
 * MODE: "segv" writes to a page without access, "abort" calls abort(),
 * "term" prints "ready" and waits for a signal from the test, "handler"
 * installs its own SIGTERM handler (before weft_open) that exits with
 * status 3, prints "ready" and waits. Exit 2 on usage errors, 1 if it
 * survives.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pairs.h"
#include "weft.h"

static void *idle(void *arg)
{
    int *fds = arg;
    sigset_t term;

    /* SIGTERM from the test is for the main thread, whose buffer the test
     * counts on: the kernel may hand a process's signal to any thread
     * that does not block it. */
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    pairs_record(3);
    /* Tells main it recorded, then blocks for good. */
    if (write(fds[1], "x", 1) != 1)
        abort();
    for (;;)
        pause();
    return NULL;
}

static void on_term(int sig)
{
    (void)sig;
    _exit(3); /* atexit does not run: the test sees this handler ran */
}

static void wait_for_signal(void)
{
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    pthread_t w, i;
    int fds[2];
    char c;
    const char *mode = argc == 3 ? argv[1] : "";

    if (argc != 3 || (pairs_n = atol(argv[2])) <= 0) {
        fprintf(stderr, "usage: weft-signaltest segv|abort|term|handler N\n");
        return 2;
    }
    if (strcmp(mode, "handler") == 0)
        signal(SIGTERM, on_term);
    if (weft_open() < 0 || pipe(fds) < 0)
        return 1;
    pairs_region = weft_region("step");
    pairs_record(pairs_n);             /* main: location 0 */
    pthread_create(&w, NULL, pairs_worker, NULL);
    pthread_join(w, NULL);             /* worker: location 1, ended */
    pthread_create(&i, NULL, idle, fds);
    if (read(fds[0], &c, 1) != 1)      /* idle: location 2, blocked */
        return 1;
    if (strcmp(mode, "segv") == 0) {
        /* A page without access (not NULL: UBSan would stop that first). */
        volatile int *nowhere = mmap(NULL, 4096, PROT_NONE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if ((void *)nowhere != MAP_FAILED)
            *nowhere = 1;
    }
    else if (strcmp(mode, "abort") == 0)
        abort();
    else if (strcmp(mode, "term") == 0 || strcmp(mode, "handler") == 0)
        wait_for_signal();
    else
        return 2;
    return 1;
}
