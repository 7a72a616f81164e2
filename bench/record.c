/* bench/record.c - cost of recording Enter/Leave on the application thread.
 *
 * Runs in one process and one run, on 1 and on 2 threads:
 *   (a) weft_evt_Enter/Leave with timestamps passed in,
 *   (b) weft_enter/weft_leave taking their own timestamps,
 *   (0) the baseline: OTF2_EvtWriter_Enter/Leave writing the same events
 *       with the same timestamps into an archive in-process (what a tracer
 *       writing OTF2 locally does), including closing the writers.
 * Prints ns per Enter/Leave pair and the ratios (a)/(0) and (b)/(0), and
 * the wire bytes per Enter/Leave of the same event stream.
 *
 * weft needs a weftd: the bench starts one (WEFT_BENCH_WEFTD or ./weftd)
 * on a free loopback port with a temporary spool and stops it at the end.
 *
 *   bench/record [-n PAIRS] [-r REPEATS] [-p POOL]
 *
 * -p sets WEFT_POOL_SIZE (units of 64 KiB). The default pool (256,
 * 16 MiB) holds the 2 x 6 MB of the default -n on two threads, so the run
 * measures the record path; when a run records more than the pool holds
 * (e.g. -n 4000000, or a smaller -p), the wall time also shows how fast
 * weftd and the sender drain the buffers on this machine: the app threads
 * wait for free buffers when they record faster than that. The trace
 * clock of (b) is WEFT_CLOCK's (monotonic or tsc), printed in the header.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <otf2/otf2.h>
#include <otf2/OTF2_Pthread_Locks.h>

#include "codec.h"
#include "weft.h"
#include "weftd.h"

#define NREGIONS 16

static uint64_t npairs = 1000000;
static OTF2_RegionRef regions[NREGIONS];

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wall time, and the calling thread's CPU time: on a shared 2-core machine
 * the CPU time is the steadier figure; a thread waiting for a buffer shows
 * in the wall time only. */
static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static uint64_t cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* The synthetic clock: 40..103 ns between events, like a tight loop. */
static inline uint64_t next_time(uint64_t t, uint64_t i)
{
    return t + 40 + ((uint32_t)(i * 2654435761u) >> 26);
}

/* ---- weft ---- */

typedef struct job {
    int own_clock;
    uint64_t ns, cpu;
} job;

static void *weft_thread(void *arg)
{
    job *j = arg;
    uint64_t t = 1, start, cstart;

    /* First record outside the timing: it sets up the thread's buffer. */
    weft_evt_Enter(NULL, t, regions[0]);
    weft_evt_Leave(NULL, t, regions[0]);
    start = now_ns();
    cstart = cpu_ns();
    if (j->own_clock) {
        for (uint64_t i = 0; i < npairs; i++) {
            OTF2_RegionRef r = regions[i % NREGIONS];
            weft_enter(r);
            weft_leave(r);
        }
    } else {
        for (uint64_t i = 0; i < npairs; i++) {
            OTF2_RegionRef r = regions[i % NREGIONS];
            t = next_time(t, i);
            weft_evt_Enter(NULL, t, r);
            t = next_time(t, i + 1);
            weft_evt_Leave(NULL, t, r);
        }
    }
    j->ns = now_ns() - start;
    j->cpu = cpu_ns() - cstart;
    return NULL;
}

/* ---- libotf2 in-process ---- */

typedef struct otf2_job {
    OTF2_Archive *archive;
    uint64_t location;
    uint64_t ns, cpu;
} otf2_job;

static OTF2_FlushType pre_flush(void *d, OTF2_FileType ft, OTF2_LocationRef l,
                                void *cb, bool final)
{
    return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_cbs = { pre_flush, NULL };

static void *otf2_thread(void *arg)
{
    otf2_job *j = arg;
    OTF2_EvtWriter *w;
    uint64_t t = 1, start, cstart;

    start = now_ns();
    cstart = cpu_ns();
    w = OTF2_Archive_GetEvtWriter(j->archive, j->location);
    for (uint64_t i = 0; i < npairs; i++) {
        OTF2_RegionRef r = (OTF2_RegionRef)(i % NREGIONS);
        t = next_time(t, i);
        OTF2_EvtWriter_Enter(w, NULL, t, r);
        t = next_time(t, i + 1);
        OTF2_EvtWriter_Leave(w, NULL, t, r);
    }
    OTF2_Archive_CloseEvtWriter(j->archive, w);
    j->ns = now_ns() - start;
    j->cpu = cpu_ns() - cstart;
    return NULL;
}

typedef struct result {
    double wall, cpu; /* ns per pair, slowest thread */
} result;

static result run_otf2(int nthreads, const char *dir)
{
    OTF2_Archive *a = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
                                        1 << 20, 4 << 20, OTF2_SUBSTRATE_POSIX,
                                        OTF2_COMPRESSION_NONE);
    otf2_job jobs[2];
    pthread_t th[2];
    uint64_t worst = 0, cworst = 0;

    if (!a) {
        fprintf(stderr, "bench: OTF2_Archive_Open %s failed\n", dir);
        exit(1);
    }
    OTF2_Archive_SetFlushCallbacks(a, &flush_cbs, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(a);
    OTF2_Pthread_Archive_SetLockingCallbacks(a, NULL);
    OTF2_Archive_OpenEvtFiles(a);
    for (int i = 0; i < nthreads; i++) {
        jobs[i].archive = a;
        jobs[i].location = (uint64_t)i;
        pthread_create(&th[i], NULL, otf2_thread, &jobs[i]);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        if (jobs[i].ns > worst)
            worst = jobs[i].ns;
        if (jobs[i].cpu > cworst)
            cworst = jobs[i].cpu;
    }
    OTF2_Archive_CloseEvtFiles(a);
    OTF2_Archive_Close(a);
    return (result){ (double)worst / (double)npairs,
                     (double)cworst / (double)npairs };
}

static result run_weft(int nthreads, int own_clock)
{
    job jobs[2];
    pthread_t th[2];
    uint64_t worst = 0, cworst = 0;

    for (int i = 0; i < nthreads; i++) {
        jobs[i].own_clock = own_clock;
        pthread_create(&th[i], NULL, weft_thread, &jobs[i]);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        if (jobs[i].ns > worst)
            worst = jobs[i].ns;
        if (jobs[i].cpu > cworst)
            cworst = jobs[i].cpu;
    }
    return (result){ (double)worst / (double)npairs,
                     (double)cworst / (double)npairs };
}

/* Bytes on the wire per event for the synthetic stream, from the codec
 * the client's generated encoders match byte for byte. */
static double wire_bytes(void)
{
    uint8_t buf[64];
    uint64_t prev = 1, t = 1, total = 0, n = 100000;

    for (uint64_t i = 0; i < n; i++) {
        weft_record r = { .type = WEFT_REC_Enter };
        r.u.Enter.region = (OTF2_RegionRef)(i % NREGIONS);
        t = next_time(t, i);
        r.time = t;
        total += (uint64_t)weft_encode(&r, &prev, buf, sizeof buf);
        r.type = WEFT_REC_Leave;
        t = next_time(t, i + 1);
        r.time = t;
        total += (uint64_t)weft_encode(&r, &prev, buf, sizeof buf);
    }
    return (double)total / (double)(2 * n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    char tmp[] = "/tmp/weft-bench-XXXXXX", addr[128], cmd[600];
    const char *pool = NULL, *clock = getenv("WEFT_CLOCK");
    int repeats = 3, opt, status;
    pid_t weftd;

    while ((opt = getopt(argc, argv, "n:r:p:")) != -1) {
        switch (opt) {
        case 'n': npairs = strtoull(optarg, NULL, 10); break;
        case 'r': repeats = atoi(optarg); break;
        case 'p': pool = optarg; break;
        default:
            fprintf(stderr, "usage: bench/record [-n PAIRS] [-r REPEATS] "
                    "[-p POOL]\n");
            return 2;
        }
    }
    if (npairs == 0 || repeats < 1 || repeats > 100) {
        fprintf(stderr, "bench: -n must be > 0 and -r between 1 and 100\n");
        return 2;
    }
    if (!mkdtemp(tmp))
        return 1;
    weftd = bench_start_weftd(tmp, NULL, addr, sizeof addr);
    if (weftd < 0)
        return 1;
    setenv("WEFT_SERVER", addr, 1);
    setenv("WEFT_TRACE", "bench-record", 1);
    setenv("WEFT_RANK", "0", 1);
    setenv("WEFT_SIZE", "1", 1);
    if (pool)
        setenv("WEFT_POOL_SIZE", pool, 1);
    if (weft_open() < 0 || !weft_connected()) {
        fprintf(stderr, "bench: cannot connect to weftd at %s\n", addr);
        kill(weftd, SIGKILL);
        return 1;
    }
    for (int i = 0; i < NREGIONS; i++) {
        char name[32];
        snprintf(name, sizeof name, "region %d", i);
        regions[i] = weft_region(name);
    }

    printf("bench/record: %" PRIu64 " Enter/Leave pairs per thread, median of "
           "%d runs, ns per pair (slowest thread); pool %s buffers, clock "
           "%s\n", npairs, repeats, pool ? pool : "256 (default)",
           clock && *clock ? clock : "monotonic");
    printf("(a) weft_evt_Enter/Leave, timestamps passed in; (b) weft_enter/"
           "weft_leave, own clock;\notf2: OTF2_EvtWriter_Enter/Leave in this "
           "process, same timestamps, writer close included\n");
    printf("%-8s %-5s %10s %10s %10s %9s %9s\n", "threads", "time", "otf2",
           "weft(a)", "weft(b)", "(a)/otf2", "(b)/otf2");
    for (int nthreads = 1; nthreads <= 2; nthreads++) {
        double o[2][100], a[2][100], b[2][100];
        for (int r = 0; r < repeats; r++) {
            char dir[600];
            result x;
            snprintf(dir, sizeof dir, "%s/otf2-%d-%d", tmp, nthreads, r);
            x = run_otf2(nthreads, dir);
            o[0][r] = x.wall, o[1][r] = x.cpu;
            x = run_weft(nthreads, 0);
            a[0][r] = x.wall, a[1][r] = x.cpu;
            x = run_weft(nthreads, 1);
            b[0][r] = x.wall, b[1][r] = x.cpu;
        }
        for (int k = 0; k < 2; k++) {
            double mo, ma, mb;
            qsort(o[k], (size_t)repeats, sizeof o[k][0], cmp_double);
            qsort(a[k], (size_t)repeats, sizeof a[k][0], cmp_double);
            qsort(b[k], (size_t)repeats, sizeof b[k][0], cmp_double);
            mo = o[k][repeats / 2], ma = a[k][repeats / 2], mb = b[k][repeats / 2];
            printf("%-8d %-5s %10.1f %10.1f %10.1f %9.2f %9.2f\n", nthreads,
                   k ? "cpu" : "wall", mo, ma, mb, ma / mo, mb / mo);
        }
    }
    printf("wire bytes per Enter/Leave: %.2f (OTF2 on disk: ~12, see "
           "OTF2-NOTES.md)\n", wire_bytes());
    weft_close();
    /* The archive of this run is not needed: no conversion wait. */
    kill(weftd, SIGKILL);
    waitpid(weftd, &status, 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: could not remove %s\n", tmp);
    return 0;
}
