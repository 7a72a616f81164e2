/* bench/weftd.c - starting weftd for the benchmarks (see weftd.h). Never
 * instrumented: bench/instrument is built with -finstrument-functions. */
#include "weftd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR pid_t bench_start_weftd(const char *tmp, const char *limits,
                                char *addr, size_t addrlen)
{
    const char *weftd = getenv("WEFT_BENCH_WEFTD");
    char spool[512], afile[512], conf[512];
    pid_t pid;

    if (!weftd)
        weftd = "./weftd";
    /* auth = none, for weftd and this process's clients: the benchmarks
     * measure recording and ingest, not MUNGE's round trip per process.
     * WEFT_BENCH_AUTH=munge measures them with MUNGE and the session MAC
     * of every frame (the munged at WEFT_MUNGE_SOCKET). */
    const char *munge = getenv("WEFT_BENCH_AUTH");
    char auth[600] = "auth=none";

    if (munge && strcmp(munge, "munge") == 0)
        snprintf(auth, sizeof auth, "munge_socket=%s",
                 getenv("WEFT_MUNGE_SOCKET") ? getenv("WEFT_MUNGE_SOCKET")
                                             : "");
    else
        setenv("WEFT_AUTH", "none", 1);
    snprintf(spool, sizeof spool, "%s/spool", tmp);
    snprintf(afile, sizeof afile, "%s/addr", tmp);
    snprintf(conf, sizeof conf, "%s/weftd.conf", tmp);
    if (limits) {
        FILE *f = fopen(conf, "w");
        if (!f || fprintf(f, "[limits]\n%s\n", limits) < 0 || fclose(f)) {
            fprintf(stderr, "bench: cannot write %s: %s\n", conf,
                    strerror(errno));
            return -1;
        }
    }
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (limits)
            execl(weftd, weftd, "--config", conf, "--listen", "127.0.0.1:0",
                  "--spool", spool, "--address-file", afile, "--log-level",
                  "warning", "--set", auth, (char *)NULL);
        else
            execl(weftd, weftd, "--listen", "127.0.0.1:0", "--spool", spool,
                  "--address-file", afile, "--log-level", "warning",
                  "--set", auth, (char *)NULL);
        fprintf(stderr, "bench: cannot run %s: %s (set WEFT_BENCH_WEFTD)\n",
                weftd, strerror(errno));
        _exit(127);
    }
    for (int i = 0; i < 100; i++) {
        FILE *f = fopen(afile, "r");
        if (f) {
            int ok = fgets(addr, (int)addrlen, f) != NULL;
            fclose(f);
            if (ok) {
                addr[strcspn(addr, "\n")] = 0;
                return pid;
            }
        }
        usleep(100000);
    }
    fprintf(stderr, "bench: weftd did not start\n");
    kill(pid, SIGKILL);
    return -1;
}
