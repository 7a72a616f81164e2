/* weft-demo.c - a small instrumented program: PROCS processes (forked
 * children playing the ranks of a parallel job) with THREADS threads each,
 * recording nested regions and a metric through libweft.
 *
 * Child i runs with WEFT_RANK=i and WEFT_SIZE=PROCS (with --first-rank F
 * and --size S: WEFT_RANK=F+i and WEFT_SIZE=S, the other ranks of the
 * job being played by demos elsewhere, e.g. on other nodes with WEFT_RUN
 * naming the launch); every child inherits
 * the parent's WEFT_TRACE. When neither WEFT_TRACE nor a batch job id is
 * set, the parent sets WEFT_TRACE=weft-demo-HOST-PID so that all children
 * join one trace. The parent is the launcher of its children: unless the
 * environment already says which launch this is (WEFT_RUN, PMIX_NAMESPACE,
 * OMPI_MCA_ess_base_jobid, SLURM_JOB_ID with SLURM_STEP_ID), it sets
 * WEFT_RUN=weft-demo-HOST-PID, so that two demos with one trace name make
 * two traces. Each child reports through a pipe, per thread, how many
 * records of each kind went into the trace (calls that returned 0, less
 * what libweft says it dropped: weft_dropped) and how many were dropped;
 * with --report FILE the parent writes them as one JSON object keyed
 * "RANK.THREAD" (THREAD is the thread's location index), e.g.
 * {"0.0": {"Enter": 3001, "Leave": 3001, "Metric": 1000, "dropped": 0}},
 * which tests compare with the archive.
 *
 * With --all-records each process instead defines every client
 * definition kind of the record table and each thread records every event
 * kind, with boundary values (weft-demo-all.c); --sent FILE then receives
 * what was sent as JSON lines (a schema line first), and the report also
 * counts each process's definitions under "RANK.definitions".
 *
 * Exit status: 0 when every child succeeded, 1 when one failed, 2 for a
 * usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <weft.h>

#include "weft-demo-all.h"

#define MAX_PROCS 4096
#define MAX_THREADS 1024
#define MAX_ITERATIONS 100000000L
#define MAX_SLEEP_US 1000000L
/* report_row.location of a process's definition counts. */
#define DEFINITIONS_ROW UINT32_MAX

typedef struct options {
    long procs, threads, iterations;
    long first_rank, size;  /* ranks first_rank.. of a job of size */
    long sleep_us;          /* pause after each iteration */
    const char *report;
    int all_records;
    const char *sent;
} options;

/* What one thread did; counts by demo_kind. */
typedef struct thread_ctx {
    const options *o;
    uint32_t rank;
    long iterations;
    long sleep_us;
    uint32_t location;
    uint64_t counts[DEMO_MAX_KINDS];
    int first_error;        /* first WEFT_E* code returned, 0 if none */
    const char *failed_call;
} thread_ctx;

/* One message of the report pipe: child -> parent. */
typedef struct report_row {
    uint32_t rank, location;
    uint64_t counts[DEMO_MAX_KINDS]; /* in the trace */
    uint64_t dropped;       /* accepted by libweft, not in the trace */
} report_row;
_Static_assert(sizeof(report_row) <= PIPE_BUF, "report rows must be atomic");

static int k_enter, k_leave, k_metric;

static OTF2_RegionRef r_main, r_iteration, r_compute, r_exchange;
static OTF2_MetricRef m_work;

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: weft-demo [-p PROCS] [-t THREADS] [-n ITERATIONS] "
        "[-s MICROSECONDS]\n                 [--report FILE]\n"
        "                 [--all-records [--sent FILE]]\n"
        "Records nested regions and a metric from PROCS processes with "
        "THREADS threads\neach and streams them to weftd (see WEFT_SERVER).\n"
        "\n"
        "  -p, --procs N        processes (ranks), 1 to %d (default 2)\n"
        "  -t, --threads N      threads per process, 1 to %d (default 2)\n"
        "  -n, --iterations N   rounds per thread, 0 to %ld (default 1000)\n"
        "  -s, --sleep-us N     sleep N microseconds after each round, 0 to "
        "%ld\n                       (default 0), to stretch a run in time\n"
        "      --first-rank N   play ranks N to N+PROCS-1 (default 0) of a job "
        "of\n"
        "      --size N         N processes (default PROCS): other demos play "
        "the rest\n"
        "      --report FILE    write per-thread record and drop counts as "
        "JSON\n"
        "      --all-records    instead, send every definition and event "
        "kind of OTF2\n"
        "                       with boundary values (a test driver)\n"
        "      --sent FILE      with --all-records: write what was sent as "
        "JSON lines\n"
        "  -h, --help           show this help\n"
        "\n"
        "All processes share WEFT_TRACE; if neither it nor a batch job id is "
        "set,\nWEFT_TRACE=weft-demo-HOST-PID is used. They are one run "
        "(WEFT_RUN=weft-demo-HOST-PID\nunless a launcher's variables say "
        "otherwise): two demos are two traces.\n",
        MAX_PROCS, MAX_THREADS, MAX_ITERATIONS, MAX_SLEEP_US);
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("weft-demo: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'weft-demo --help' for more information.\n", stderr);
    return 2;
}

/* A whole number in [min, max]; 0 or -1. */
static int parse_count(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Parses argv. Returns -1 to go on, or an exit status (0 after --help,
 * 2 after a usage error). */
static int parse_options(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        { "procs", required_argument, NULL, 'p' },
        { "threads", required_argument, NULL, 't' },
        { "iterations", required_argument, NULL, 'n' },
        { "report", required_argument, NULL, 'r' },
        { "all-records", no_argument, NULL, 'a' },
        { "sleep-us", required_argument, NULL, 's' },
        { "sent", required_argument, NULL, 'S' },
        { "first-rank", required_argument, NULL, 'F' },
        { "size", required_argument, NULL, 'Z' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    o->procs = 2;
    o->first_rank = 0;
    o->size = 0;
    o->threads = 2;
    o->iterations = 1000;
    o->sleep_us = 0;
    o->report = NULL;
    o->all_records = 0;
    o->sent = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:t:n:s:h", longopts, NULL)) != -1) {
        const char *name = NULL;
        long *target = NULL, min = 1, max = 0;
        switch (c) {
        case 'p':
            target = &o->procs, name = "-p (--procs)", max = MAX_PROCS;
            break;
        case 't':
            target = &o->threads, name = "-t (--threads)", max = MAX_THREADS;
            break;
        case 'n':
            target = &o->iterations, name = "-n (--iterations)";
            min = 0, max = MAX_ITERATIONS;
            break;
        case 'r':
            o->report = optarg;
            continue;
        case 'a':
            o->all_records = 1;
            continue;
        case 's':
            target = &o->sleep_us, name = "-s (--sleep-us)";
            min = 0, max = MAX_SLEEP_US;
            break;
        case 'S':
            o->sent = optarg;
            continue;
        case 'F':
            target = &o->first_rank, name = "--first-rank";
            min = 0, max = MAX_PROCS - 1;
            break;
        case 'Z':
            target = &o->size, name = "--size", max = MAX_PROCS;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            if (optopt)
                return usage_error("option '-%c' needs a value", optopt);
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt)
                return usage_error("unknown option '-%c'", optopt);
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (parse_count(optarg, min, max, target) < 0)
            return usage_error("invalid value '%s' for option %s (a whole "
                               "number from %ld to %ld)", optarg, name, min,
                               max);
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (o->sent && !o->all_records)
        return usage_error("--sent needs --all-records");
    if (!o->size)
        o->size = o->first_rank + o->procs;
    if (o->first_rank + o->procs > o->size)
        return usage_error("ranks %ld to %ld do not fit a job of --size %ld",
                           o->first_rank, o->first_rank + o->procs - 1,
                           o->size);
    return -1;
}

/* ---- the instrumented work (in each child) ------------------------------- */

static void count(thread_ctx *ctx, int kind, int rc, const char *call)
{
    if (rc == 0) {
        ctx->counts[kind]++;
    } else if (!ctx->first_error) {
        ctx->first_error = rc;
        ctx->failed_call = call;
    }
}

/* A little real work the compiler cannot remove. */
static double compute(long i, long n)
{
    volatile double acc = 0;

    for (long k = 1; k <= n; k++)
        acc += (double)((i + k) % 7) / (double)k;
    return acc;
}

/* Name of thread `loc`'s part of the --sent file of `rank`. */
static void part_name(char *buf, size_t n, const char *sent, uint32_t rank,
                      uint32_t loc)
{
    if (loc == DEFINITIONS_ROW)
        snprintf(buf, n, "%s.%" PRIu32 ".d", sent, rank);
    else
        snprintf(buf, n, "%s.%" PRIu32 ".%" PRIu32, sent, rank, loc);
}

static void *all_records_main(thread_ctx *ctx)
{
    char path[PATH_MAX];
    FILE *log = NULL;
    int rc;

    ctx->location = weft_location_index();
    if (ctx->o->sent) {
        part_name(path, sizeof path, ctx->o->sent, ctx->rank, ctx->location);
        if (!(log = fopen(path, "w"))) {
            ctx->first_error = WEFT_EIO;
            ctx->failed_call = "fopen(--sent part)";
            return NULL;
        }
    }
    rc = demo_all_events(log, ctx->counts, &ctx->failed_call);
    if (rc < 0)
        ctx->first_error = rc;
    if (log && fclose(log) != 0 && !ctx->first_error) {
        ctx->first_error = WEFT_EIO;
        ctx->failed_call = "fclose(--sent part)";
    }
    return NULL;
}

static void *thread_main(void *arg)
{
    thread_ctx *ctx = arg;
    uint64_t work = 0;
    double sink = 0;
    char buf[256], copy[256];

    if (ctx->o->all_records)
        return all_records_main(ctx);
    ctx->location = weft_location_index();
    count(ctx, k_enter, weft_enter(r_main), "weft_enter(main)");
    for (long i = 0; i < ctx->iterations; i++) {
        count(ctx, k_enter, weft_enter(r_iteration), "weft_enter(iteration)");

        count(ctx, k_enter, weft_enter(r_compute), "weft_enter(compute)");
        sink += compute(i, 200);
        count(ctx, k_leave, weft_leave(r_compute), "weft_leave(compute)");

        count(ctx, k_enter, weft_enter(r_exchange), "weft_enter(exchange)");
        memset(buf, (int)(i & 0xff), sizeof buf);
        memcpy(copy, buf, sizeof copy);
        sink += copy[i % (long)sizeof copy];
        count(ctx, k_leave, weft_leave(r_exchange), "weft_leave(exchange)");

        work += 200;
        count(ctx, k_metric, weft_metric_u64(m_work, work),
              "weft_metric_u64(work)");
        count(ctx, k_leave, weft_leave(r_iteration), "weft_leave(iteration)");
        if (ctx->sleep_us > 0) {
            struct timespec ts = { ctx->sleep_us / 1000000L,
                                   ctx->sleep_us % 1000000L * 1000L };
            nanosleep(&ts, NULL);
        }
    }
    count(ctx, k_leave, weft_leave(r_main), "weft_leave(main)");
    if (sink < 0)
        fprintf(stderr, "weft-demo: impossible\n");
    return NULL;
}

/* Runs rank `rank`: records, closes, writes one report row per thread to
 * `out`. Returns the process exit status. */
static int run_child(const options *o, uint32_t rank, int out)
{
    char value[32], path[PATH_MAX];
    thread_ctx *ctx = NULL;
    pthread_t *tids = NULL;
    report_row defs = { rank, DEFINITIONS_ROW, { 0 }, 0 };
    long started = 0;
    int rc, status = 1;

    snprintf(value, sizeof value, "%" PRIu32, rank);
    setenv("WEFT_RANK", value, 1);
    snprintf(value, sizeof value, "%ld", o->size);
    setenv("WEFT_SIZE", value, 1);

    rc = weft_open();
    if (rc < 0) {
        fprintf(stderr, "weft-demo: rank %" PRIu32 ": weft_open: %s\n", rank,
                weft_strerror(rc));
        goto out;
    }
    if (o->all_records) {
        FILE *log = NULL;
        if (o->sent) {
            part_name(path, sizeof path, o->sent, rank, DEFINITIONS_ROW);
            if (!(log = fopen(path, "w"))) {
                fprintf(stderr, "weft-demo: cannot write %s: %s\n", path,
                        strerror(errno));
                goto out;
            }
        }
        rc = demo_all_define(rank, (uint32_t)o->size, (uint32_t)o->threads,
                             log, defs.counts);
        if (log && fclose(log) != 0)
            rc = -1;
        if (rc < 0)
            goto out;
    } else {
        r_main = weft_region("main");
        r_iteration = weft_region("iteration");
        r_compute = weft_region("compute");
        r_exchange = weft_region("exchange");
        m_work = weft_metric("work", "items", OTF2_TYPE_UINT64,
                             OTF2_METRIC_ACCUMULATED_START);
    }
    if (!o->all_records &&
        (r_main == OTF2_UNDEFINED_REGION || r_exchange == OTF2_UNDEFINED_REGION ||
         m_work == OTF2_UNDEFINED_METRIC)) {
        fprintf(stderr, "weft-demo: rank %" PRIu32 ": cannot define regions "
                "and metrics\n", rank);
        goto out;
    }

    ctx = calloc((size_t)o->threads, sizeof *ctx);
    tids = calloc((size_t)o->threads, sizeof *tids);
    if (!ctx || !tids) {
        fprintf(stderr, "weft-demo: rank %" PRIu32 ": out of memory\n", rank);
        goto out;
    }
    for (started = 0; started < o->threads; started++) {
        ctx[started].o = o;
        ctx[started].rank = rank;
        ctx[started].iterations = o->iterations;
        ctx[started].sleep_us = o->sleep_us;
        rc = pthread_create(&tids[started], NULL, thread_main, &ctx[started]);
        if (rc != 0) {
            fprintf(stderr, "weft-demo: rank %" PRIu32 ": pthread_create: "
                    "%s\n", rank, strerror(rc));
            break;
        }
    }
    for (long i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    /* After the threads: weft_close ships everything and says goodbye. */
    rc = weft_close();
    if (rc < 0)
        fprintf(stderr, "weft-demo: rank %" PRIu32 ": weft_close: %s\n", rank,
                weft_strerror(rc));
    if (started < o->threads)
        goto out;

    status = 0;
    if (o->all_records &&
        write(out, &defs, sizeof defs) != (ssize_t)sizeof defs) {
        fprintf(stderr, "weft-demo: rank %" PRIu32 ": cannot report: %s\n",
                rank, strerror(errno));
        status = 1;
    }
    for (long i = 0; i < o->threads; i++) {
        report_row row = { rank, ctx[i].location, { 0 }, 0 };
        uint64_t typed = 0;
        memcpy(row.counts, ctx[i].counts, sizeof row.counts);
        /* Accepted is not delivered: take away what libweft dropped. */
        for (int k = 0; k < demo_nkinds(); k++) {
            uint64_t d = 0;
            uint32_t type = demo_kind_event_type(k);
            if (type && weft_dropped(ctx[i].location, type, &d) == 0) {
                row.counts[k] -= d;
                typed += d;
            }
        }
        if (weft_dropped(ctx[i].location, WEFT_TYPE_ANY, &row.dropped) < 0)
            row.dropped = 0;
        if (typed != row.dropped) {
            fprintf(stderr, "weft-demo: rank %" PRIu32 " thread %" PRIu32
                    ": %" PRIu64 " dropped records but %" PRIu64 " of "
                    "known kinds\n", rank, ctx[i].location, row.dropped,
                    typed);
            status = 1;
        }
        if (ctx[i].first_error) {
            fprintf(stderr, "weft-demo: rank %" PRIu32 " thread %" PRIu32
                    ": %s: %s\n", rank, ctx[i].location, ctx[i].failed_call,
                    weft_strerror(ctx[i].first_error));
            status = 1;
        }
        /* Rows are far below PIPE_BUF: each write is atomic. */
        if (write(out, &row, sizeof row) != (ssize_t)sizeof row) {
            fprintf(stderr, "weft-demo: rank %" PRIu32 ": cannot report: %s\n",
                    rank, strerror(errno));
            status = 1;
        }
    }
out:
    free(ctx);
    free(tids);
    return status;
}

/* ---- the parent ------------------------------------------------------------ */

static int cmp_rows(const void *a, const void *b)
{
    const report_row *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->location < y->location ? -1 : x->location > y->location;
}

/* Writes the rows as one JSON object: Enter, Leave and Metric always,
 * other kinds when they were recorded. Returns 0 or -1 after a message. */
static int write_report(const char *path, report_row *rows, size_t n)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        fprintf(stderr, "weft-demo: cannot write %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    qsort(rows, n, sizeof *rows, cmp_rows);
    fputs("{", f);
    for (size_t i = 0; i < n; i++) {
        const char *sep = "";
        if (rows[i].location == DEFINITIONS_ROW)
            fprintf(f, "%s\n  \"%" PRIu32 ".definitions\": {", i ? "," : "",
                    rows[i].rank);
        else
            fprintf(f, "%s\n  \"%" PRIu32 ".%" PRIu32 "\": {", i ? "," : "",
                    rows[i].rank, rows[i].location);
        for (int k = 0; k < demo_nkinds(); k++) {
            int always = rows[i].location != DEFINITIONS_ROW &&
                         (k == k_enter || k == k_leave || k == k_metric);
            if (!always && !rows[i].counts[k])
                continue;
            fprintf(f, "%s\"%s\": %" PRIu64, sep, demo_kind_name(k),
                    rows[i].counts[k]);
            sep = ", ";
        }
        if (rows[i].location != DEFINITIONS_ROW)
            fprintf(f, "%s\"dropped\": %" PRIu64, sep, rows[i].dropped);
        fputs("}", f);
    }
    fputs(n ? "\n}\n" : "}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "weft-demo: cannot write %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    return 0;
}

static int count_kinds(const uint64_t *totals)
{
    int n = 0;

    for (int k = 0; k < demo_nkinds(); k++)
        n += totals[k] > 0;
    return n;
}

/* Appends file `part` to out and removes it; a missing part is fine (a
 * thread that never started). 0 or -1 after a message. */
static int append_part(FILE *out, const char *part)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(part, "r");

    if (!in)
        return errno == ENOENT ? 0 : -1;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            break;
    fclose(in);
    unlink(part);
    return ferror(out) ? -1 : 0;
}

/* The children's --sent parts, in rank order, after one schema line. */
static int merge_sent(const options *o)
{
    char path[PATH_MAX];
    FILE *out = fopen(o->sent, "w");
    int rc = 0;

    if (!out) {
        fprintf(stderr, "weft-demo: cannot write %s: %s\n", o->sent,
                strerror(errno));
        return -1;
    }
    demo_all_schema(out);
    for (long r = o->first_rank; r < o->first_rank + o->procs && rc == 0;
         r++) {
        part_name(path, sizeof path, o->sent, (uint32_t)r, DEFINITIONS_ROW);
        rc = append_part(out, path);
        for (long t = 0; t < o->threads && rc == 0; t++) {
            part_name(path, sizeof path, o->sent, (uint32_t)r, (uint32_t)t);
            rc = append_part(out, path);
        }
    }
    if (fclose(out) != 0)
        rc = -1;
    if (rc < 0)
        fprintf(stderr, "weft-demo: cannot write %s: %s\n", o->sent,
                strerror(errno));
    return rc;
}

static int env_set(const char *name)
{
    const char *v = getenv(name);

    return v && *v;
}

/* Gives all children one trace name and one run (launch) unless the
 * environment has them. */
static void ensure_trace_name(void)
{
    static const char *const vars[] = { "WEFT_TRACE", "SLURM_JOB_ID",
                                        "PBS_JOBID", "LSB_JOBID",
                                        "PMIX_NAMESPACE",
                                        "OMPI_MCA_ess_base_jobid" };
    char host[256] = "host", name[320];
    int named = 0;

    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        named |= env_set(vars[i]);
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    snprintf(name, sizeof name, "weft-demo-%s-%ld", host, (long)getpid());
    if (!named)
        setenv("WEFT_TRACE", name, 1);
    if (!env_set("WEFT_RUN") && !env_set("PMIX_NAMESPACE") &&
        !env_set("OMPI_MCA_ess_base_jobid") &&
        !(env_set("SLURM_JOB_ID") &&
          (env_set("SLURM_STEP_ID") || env_set("SLURM_STEPID"))))
        setenv("WEFT_RUN", name, 1);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) +
           (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
    options o;
    report_row *rows = NULL;
    size_t nrows = 0, cap;
    pid_t *pids = NULL;
    long forked = 0, failed = 0;
    uint64_t totals[DEMO_MAX_KINDS] = { 0 }, dropped = 0;
    uint64_t events = 0, definitions = 0;
    struct timespec t0;
    int fds[2] = { -1, -1 }, status;
    const char *trace;

    status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    status = 1;
    k_enter = demo_kind("Enter");
    k_leave = demo_kind("Leave");
    k_metric = demo_kind("Metric");
    ensure_trace_name();
    clock_gettime(CLOCK_MONOTONIC, &t0);

    cap = (size_t)o.procs * ((size_t)o.threads + 1);
    rows = calloc(cap, sizeof *rows);
    pids = calloc((size_t)o.procs, sizeof *pids);
    if (!rows || !pids) {
        fprintf(stderr, "weft-demo: out of memory\n");
        goto out;
    }
    if (pipe(fds) < 0) {
        fprintf(stderr, "weft-demo: pipe: %s\n", strerror(errno));
        goto out;
    }
    fflush(NULL);
    for (forked = 0; forked < o.procs; forked++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "weft-demo: fork: %s\n", strerror(errno));
            failed++;
            break;
        }
        if (pid == 0) {
            int rc;
            /* The parent's bookkeeping is not the child's. */
            free(rows);
            free(pids);
            close(fds[0]);
            rc = run_child(&o, (uint32_t)(o.first_rank + forked), fds[1]);
            close(fds[1]);
            exit(rc);
        }
        pids[forked] = pid;
    }
    close(fds[1]);
    fds[1] = -1;

    /* Read rows until every child has closed its end. */
    for (;;) {
        report_row row;
        ssize_t n = read(fds[0], &row, sizeof row);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof row) {
            fprintf(stderr, "weft-demo: bad report from a child\n");
            failed++;
            break;
        }
        if (nrows < cap)
            rows[nrows++] = row;
    }
    for (long i = 0; i < forked; i++) {
        int ws;
        while (waitpid(pids[i], &ws, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            if (WIFSIGNALED(ws))
                fprintf(stderr, "weft-demo: rank %ld killed by signal %d\n",
                        i, WTERMSIG(ws));
            failed++;
        }
    }
    for (size_t i = 0; i < nrows; i++) {
        dropped += rows[i].dropped;
        for (int k = 0; k < demo_nkinds(); k++) {
            totals[k] += rows[i].counts[k];
            if (rows[i].location == DEFINITIONS_ROW)
                definitions += rows[i].counts[k];
            else
                events += rows[i].counts[k];
        }
    }
    if (o.report && write_report(o.report, rows, nrows) < 0)
        failed++;
    if (o.sent && merge_sent(&o) < 0)
        failed++;
    trace = getenv("WEFT_TRACE");
    if (o.all_records)
        fprintf(stderr, "weft-demo: %ld processes x %ld threads, all records: "
                "%" PRIu64 " definitions and %" PRIu64 " events of %d kinds "
                "sent in %.2f s, trace %s%s\n", o.procs, o.threads,
                definitions, events, count_kinds(totals), seconds_since(&t0),
                trace && *trace ? trace : "named after the batch job",
                failed ? "; FAILED" : "");
    else
        fprintf(stderr, "weft-demo: %ld processes x %ld threads x %ld "
                "iterations: %" PRIu64 " Enter, %" PRIu64 " Leave, %" PRIu64
                " Metric recorded (%" PRIu64 " dropped) in %.2f s, trace "
                "%s%s\n", o.procs, o.threads, o.iterations, totals[k_enter],
                totals[k_leave], totals[k_metric], dropped, seconds_since(&t0),
                trace && *trace ? trace : "named after the batch job",
                failed ? "; FAILED" : "");
    status = failed ? 1 : 0;
out:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(rows);
    free(pids);
    return status;
}
