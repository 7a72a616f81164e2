/* weft-exittest.c - a traced program that ends in a given way, for
 * tests/e2e_exits.sh.
 *
 *   weft-exittest MODE N
 *
 * The main thread records N Enter/Leave pairs, a worker thread records N
 * and ends; then the process ends by MODE: "return" (from main), "exit",
 * "_exit", "_Exit", "quick_exit" (each with status 7), "exec" (execl of
 * /bin/sh -c 'exit 7'), "exit_group" (the system call itself, which no
 * library sees), "kill" (SIGKILL to itself) or "abort". Exit 2 on usage
 * errors, 1 if it is still alive after MODE.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pairs.h"
#include "weft.h"

int main(int argc, char **argv)
{
    const char *mode = argc == 3 ? argv[1] : "";
    pthread_t w;

    if (argc != 3 || (pairs_n = atol(argv[2])) <= 0) {
        fprintf(stderr, "usage: weft-exittest return|exit|_exit|_Exit|"
                "quick_exit|exec|exit_group|kill|abort N\n");
        return 2;
    }
    if (weft_open() < 0)
        return 1;
    pairs_region = weft_region("step");
    pairs_record(pairs_n);             /* main: location 0 */
    pthread_create(&w, NULL, pairs_worker, NULL);
    pthread_join(w, NULL);             /* worker: location 1, ended */
    if (strcmp(mode, "return") == 0)
        return 7;
    if (strcmp(mode, "exit") == 0)
        exit(7);
    if (strcmp(mode, "_exit") == 0)
        _exit(7);
    if (strcmp(mode, "_Exit") == 0)
        _Exit(7);
    if (strcmp(mode, "quick_exit") == 0)
        quick_exit(7);
    if (strcmp(mode, "exec") == 0) {
        execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
        return 1;
    }
    if (strcmp(mode, "exit_group") == 0)
        syscall(SYS_exit_group, 7);
    if (strcmp(mode, "kill") == 0)
        kill(getpid(), SIGKILL);
    if (strcmp(mode, "abort") == 0)
        abort();
    return strcmp(mode, "exit_group") && strcmp(mode, "kill") ? 2 : 1;
}
