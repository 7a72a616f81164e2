/* tests/weft-forktest.c - a traced process that forks: the child runs untraced
 * (its records are refused or dropped, never sent), neither process hangs,
 * and the parent's trace completes with exactly what it recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weft.h"

int main(void)
{
    OTF2_RegionRef r;
    int status, n = 0;
    pid_t pid;

    if (weft_open() < 0)
        return 1;
    r = weft_region("before fork");
    n += weft_enter(r) == 0;
    n += weft_leave(r) == 0;
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        OTF2_RegionRef c = weft_region("child");
        for (int i = 0; i < 1000; i++) {
            weft_enter(c);
            weft_leave(c);
        }
        weft_close();
        _exit(0);
    }
    for (int i = 0; i < 1000; i++) {
        n += weft_enter(r) == 0;
        n += weft_leave(r) == 0;
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 1;
    printf("{\"0.0\": {\"Enter\": %d, \"Leave\": %d}}\n", n / 2, n / 2);
    return weft_close() < 0;
}
