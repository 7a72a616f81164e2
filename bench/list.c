/* bench/list.c - the weft command on a catalog of 100,000 traces.
 *
 * Builds a catalog in a temporary directory through store/catalog.h
 * (weft_catalog_trace_finish, as weftd does: one transaction per trace
 * with its locations), with rows like a busy site's year: names from a few
 * dozen applications, a few dozen users, mostly complete traces with some
 * partial and failed ones, creation times spread over a year. Then runs
 * the real weft binary (WEFT_BENCH_WEFT, else ./weft), output to
 * /dev/null, and prints the median wall time of R runs of
 *
 *   weft list                       every row
 *   weft list --limit 20            the first page
 *   weft list --name 'app17*'       a name filter
 *   weft list --json                every row as JSON
 *   weft sql 'SELECT count(*) ...'  a query
 *
 * next to the same SELECT run in this process through sqlite3 (stepping
 * every row and reading its columns: the floor for any command), and
 * weft --version (the cost of starting the process at all). An option
 * the binary rejects (exit 2: not there yet) is reported as unsupported.
 *
 *   bench/list [-n TRACES] [-r RUNS] [-k]   (-k keeps the catalog)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "catalog.h"

#define APPS 40
#define USERS 30
#define YEAR (365 * 86400)
#define MAX_RUNS 99

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A small deterministic generator, so runs compare. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

/* Adds trace i to the catalog. Returns 0 or a WEFT_E* code. */
static int add_trace(weft_catalog *c, unsigned i, int64_t year_start)
{
    static const char *const sizes[] = { "small", "n64", "n512", "large" };
    weft_location_row locs[4];
    weft_trace_row row = { 0 };
    char name[64], key[96], path[160], lname[4][32];
    unsigned app = (unsigned)rnd(APPS), nlocs = 1 + (unsigned)rnd(4);
    uint64_t r = rnd(100), duration = 10 + rnd(7200);

    snprintf(name, sizeof name, "app%02u-%s-%u", app, sizes[rnd(4)],
             (unsigned)rnd(1000));
    snprintf(key, sizeof key, "%s-%u", name, i);
    snprintf(path, sizeof path, "/var/lib/weft/traces/%s/archive", key);
    row.key = key;
    row.name = name;
    row.uid = 1000 + (uint32_t)rnd(USERS);
    row.state = r < 90 ? WEFT_STATE_COMPLETE
              : r < 96 ? WEFT_STATE_PARTIAL : WEFT_STATE_FAILED;
    row.created = year_start + (int64_t)rnd(YEAR);
    row.finished = row.created + (int64_t)duration;
    row.path = path;
    row.members = 1 + (uint32_t)rnd(512);
    row.locations = nlocs;
    row.events = 1000 + rnd(50000000);
    row.bytes = row.events * 5;
    row.dropped = r == 99 ? rnd(1000) : 0;
    row.time_first = 1000000000;
    row.time_last = row.time_first + duration * 1000000000;
    row.timer_resolution = 1000000000;
    row.error = strcmp(row.state, WEFT_STATE_FAILED) == 0
                    ? (char *)"conversion failed: bench" : NULL;
    for (unsigned l = 0; l < nlocs; l++) {
        snprintf(lname[l], sizeof lname[l], "rank %u thread %u", l / 2, l % 2);
        locs[l] = (weft_location_row){ .id = ((uint64_t)(l / 2) << 32) | l % 2,
                                       .rank = l / 2, .thread = l % 2,
                                       .name = lname[l],
                                       .events = row.events / nlocs };
    }
    return weft_catalog_trace_finish(c, &row, locs, nlocs);
}

static int build(const char *path, unsigned n)
{
    weft_catalog *c = NULL;
    char *err = NULL;
    int64_t year_start = (int64_t)time(NULL) - YEAR;
    double t0 = now_ms();
    int rc = weft_catalog_open(path, 0, &c, &err);

    if (rc < 0) {
        fprintf(stderr, "bench/list: %s\n", err ? err : "cannot open");
        free(err);
        return -1;
    }
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = add_trace(c, i, year_start);
    if (rc < 0)
        fprintf(stderr, "bench/list: %s\n", weft_catalog_errmsg(c));
    weft_catalog_close(c);
    if (rc == 0)
        printf("catalog: %u traces written in %.1f s (one transaction "
               "each, as weftd)\n", n, (now_ms() - t0) / 1e3);
    return rc < 0 ? -1 : 0;
}

/* Runs argv with stdout and stderr on /dev/null; returns its wall time in
 * ms, or -1 if it could not run, or -2 if it exited 2 (usage error). */
static double run_once(char **argv)
{
    posix_spawn_file_actions_t fa;
    double t0;
    pid_t pid;
    int st, rc;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    t0 = now_ms();
    rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "bench/list: cannot run %s: %s\n", argv[0],
                strerror(rc));
        return -1;
    }
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    t0 = now_ms() - t0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        return -2;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench/list: %s %s failed (status %d)\n", argv[0],
                argv[1], st);
        return -1;
    }
    return t0;
}

/* Median ms of runs of argv; -1 failed, -2 unsupported. */
static double time_cmd(char **argv, int runs)
{
    double v[MAX_RUNS];

    for (int i = 0; i < runs; i++) {
        v[i] = run_once(argv);
        if (v[i] < 0)
            return v[i];
    }
    return median(v, runs);
}

/* Median ms of running sql in-process, stepping every row and reading
 * every column (as text, like a printer would). */
static double time_sqlite(const char *path, const char *sql, int runs,
                          uint64_t *nrows)
{
    double v[MAX_RUNS];
    sqlite3 *db = NULL;

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench/list: sqlite3: %s\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    for (int i = 0; i < runs; i++) {
        sqlite3_stmt *st = NULL;
        double t0 = now_ms();

        *nrows = 0;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            fprintf(stderr, "bench/list: %s: %s\n", sql, sqlite3_errmsg(db));
            sqlite3_close(db);
            return -1;
        }
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++)
                sqlite3_column_text(st, c);
            (*nrows)++;
        }
        sqlite3_finalize(st);
        v[i] = now_ms() - t0;
    }
    sqlite3_close(db);
    return median(v, runs);
}

static void report(const char *what, double ms, double base_ms, uint64_t rows)
{
    if (ms == -2) {
        printf("%-34s unsupported (this weft rejects the option)\n", what);
        return;
    }
    if (ms < 0) {
        printf("%-34s failed\n", what);
        return;
    }
    printf("%-34s %8.1f ms", what, ms);
    if (base_ms > 0)
        printf("   in-process SELECT %7.1f ms (%" PRIu64 " rows), ratio %.1f",
               base_ms, rows, ms / base_ms);
    putchar('\n');
}

/* What bench/list times: weft's arguments after --catalog CATALOG, and
 * the SELECT that returns the same rows in-process (%s: the columns
 * weft list reads; "" for none, NULL for the previous case's). */
static const struct bench_case {
    const char *what;
    const char *args[5];
    const char *sql;
} cases[] = {
    { "weft --version (process start)", { "--version" }, "" },
    { "weft list", { "list" },
      "SELECT %s FROM traces ORDER BY created DESC, id DESC" },
    { "weft list --json", { "list", "--json" }, NULL },
    { "weft list --limit 20", { "list", "--limit", "20" },
      "SELECT %s FROM traces ORDER BY created DESC, id DESC LIMIT 20" },
    { "weft list --name 'app17*'", { "list", "--name", "app17*" },
      "SELECT %s FROM traces WHERE name GLOB 'app17*' ORDER BY created "
      "DESC, id DESC" },
    { "weft sql 'SELECT count(*) ...'",
      { "sql", "SELECT count(*) FROM traces WHERE state = 'complete'" },
      "SELECT count(*) FROM traces WHERE state = 'complete'" },
    { "weft sql --csv (every row)",
      { "sql", "--csv", "SELECT id, name, state, created, events FROM "
        "traces" },
      "SELECT id, name, state, created, events FROM traces" },
};

/* Times each case: weft's median, and the in-process SELECT's. */
static void run_cases(const char *weft, const char *catalog, int runs)
{
    static const char *const cols =
        "id, key, name, uid, state, created, finished, path, members, "
        "locations, events, bytes, dropped, time_first, time_last, "
        "timer_resolution, error";
    double base = 0;
    uint64_t rows = 0;
    char sql[512];

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct bench_case *k = &cases[c];
        char *a[8] = { (char *)weft };
        int n = 1;

        if (strcmp(k->args[0], "--version") != 0) {
            a[n++] = "--catalog";
            a[n++] = (char *)catalog;
        }
        for (int i = 0; i < 5 && k->args[i]; i++)
            a[n++] = (char *)k->args[i];
        double ms = time_cmd(a, runs);
        if (k->sql && !*k->sql) {
            report(k->what, ms, 0, 0);
            continue;
        }
        if (k->sql) {
            snprintf(sql, sizeof sql, k->sql, cols);
            base = time_sqlite(catalog, sql, runs, &rows);
        }
        report(k->what, ms, base, rows);
    }
}

int main(int argc, char **argv)
{
    const char *weft = getenv("WEFT_BENCH_WEFT");
    char tmp[] = "/tmp/weft-bench-list.XXXXXX", catalog[64], cmd[128];
    unsigned n = 100000;
    int runs = 5, keep = 0, opt, status = 1;

    while ((opt = getopt(argc, argv, "n:r:k")) != -1) {
        if (opt == 'n')
            n = (unsigned)strtoul(optarg, NULL, 10);
        else if (opt == 'r')
            runs = atoi(optarg);
        else if (opt == 'k')
            keep = 1;
        else {
            fprintf(stderr, "usage: bench/list [-n TRACES] [-r RUNS] [-k]\n");
            return 2;
        }
    }
    if (n == 0 || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "bench/list: -n must be > 0, -r 1 to %d\n", MAX_RUNS);
        return 2;
    }
    if (!weft)
        weft = "./weft";
    if (access(weft, X_OK) != 0) {
        fprintf(stderr, "bench/list: %s: %s (set WEFT_BENCH_WEFT)\n", weft,
                strerror(errno));
        return 1;
    }
    if (!mkdtemp(tmp)) {
        perror("bench/list: mkdtemp");
        return 1;
    }
    snprintf(catalog, sizeof catalog, "%s/catalog.db", tmp);
    if (build(catalog, n) < 0)
        goto out;
    printf("weft %s, median of %d runs, output to /dev/null:\n", weft, runs);
    run_cases(weft, catalog, runs);
    status = 0;
out:
    if (keep) {
        printf("catalog kept: %s\n", catalog);
    } else {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "bench/list: cannot remove %s\n", tmp);
    }
    return status;
}
