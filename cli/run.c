/* run.c - weft run [-t LIST] [--trace NAME] [--server ADDR] [-v] [--]
 * PROGRAM [ARGS...]: runs PROGRAM in this very process (exec: same pid,
 * its arguments, standard streams and exit status untouched) with the
 * recorders that apply to it preloaded, e.g. under a launcher
 * (`mpirun -np 4 weft run -- ./app`, `srun weft run -- ./app`).
 *
 * The steps, each a function: find PROGRAM as execvp would; read its
 * kind (detect.c: dynamic ELF and its interpreter, static, script);
 * for a dynamic one (or a script's #! interpreter, which the kernel runs
 * with the same environment), ask its own interpreter for the libraries
 * it would
 * load (`ld.so --list`, which runs none of the program's code; why not
 * our own DT_NEEDED walk: see detect.c) and find the MPI implementation
 * among them; choose the recorders (preload.c's table, -t); append their
 * libraries, from $WEFT_LIBDIR or the compiled-in WEFT_LIBDIR, to the
 * user's LD_PRELOAD; exec.
 *
 * Tracing never stops a run: a program no recorder can trace (statically
 * linked, not ELF, no MPI when only -t mpi asked for it, a recorder
 * library not installed) runs untraced after one line on stderr saying
 * why. Only usage errors (exit 2) and a PROGRAM that cannot be
 * executed (127 not found, 126 not executable, as a shell says) stop it.
 * A program run on its own (no launcher made this process a task of a
 * parallel launch) is the root of a process tree: every process it starts
 * in turn, whatever the depth (a shell's commands, make's compilers), is
 * a member of the same trace (tree_environment). Under a launcher each
 * task is a member of the launch's trace, as libweft names it from the
 * launcher's job (WEFT_TRACE set only by --trace).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "detect.h"
#include "out.h"
#include "client_config.h"
#include "preload.h"
#include "runid.h"
#include "tsc.h"
#include "weft_errors.h"

#ifndef WEFT_LIBDIR
#define WEFT_LIBDIR "/usr/local/lib"
#endif

extern char **environ;

/* Exit statuses of a PROGRAM that cannot be run, as POSIX shells give. */
enum { EXIT_NOEXEC = 126, EXIT_NOTFOUND = 127 };

/* Most of the loader's list kept (a list is a few KiB). */
#define LIST_MAX (1u << 20)

typedef struct run_opts {
    weft_rec_set recorders;     /* -t, accumulated */
    int explicit;               /* -t given */
    const char *trace, *server; /* --trace, --server, or NULL */
    int verbose;
    char **argv;                /* PROGRAM and its arguments */
} run_opts;

/* What is known of the program before it runs. */
typedef struct program {
    char *path;                 /* where it was found (malloc'd) */
    weft_prog_info info;
    const char *corrupt;        /* why its ELF headers are unreadable */
    weft_mpi_found mpi;
    char list_error[600];       /* why its libraries could not be listed */
} program;

/* "weft run: MESSAGE" on stderr; returns EXIT_FAIL. */
#define say(...) weft__cli_error("run", __VA_ARGS__)

/* ---- options ------------------------------------------------------------ */

enum { O_TRACE = 256, O_SERVER };

/* Options up to PROGRAM: getopt_long stops at the first argument that is
 * not an option ("+"), so PROGRAM's own options are never read here.
 * argv[0] is "run". Returns EXIT_OK (with *help set for --help) or a
 * usage error. */
static int parse_options(int argc, char **argv, run_opts *o, int *help)
{
    static const struct option longs[] = {
        { "help", no_argument, NULL, 'h' },
        { "verbose", no_argument, NULL, 'v' },
        { "recorders", required_argument, NULL, 't' },
        { "trace", required_argument, NULL, O_TRACE },
        { "server", required_argument, NULL, O_SERVER },
        { NULL, 0, NULL, 0 },
    };
    char err[512];
    int ch;

    opterr = 0;
    optind = 0;    /* glibc: start afresh on this argv */
    while ((ch = getopt_long(argc, argv, "+:hvt:", longs, NULL)) != -1) {
        switch (ch) {
        case 'h': *help = 1; break;
        case 'v': o->verbose = 1; break;
        case 't':
            if (!*optarg)
                return weft__cli_usage("run", "-t needs a LIST");
            if (weft__preload_parse(optarg, &o->recorders, err,
                                    sizeof err) < 0)
                return weft__cli_usage("run", "-t: %s", err);
            o->explicit = 1;
            break;
        case O_TRACE:
            if (!*optarg)
                return weft__cli_usage("run", "--trace needs a NAME");
            o->trace = optarg;
            break;
        case O_SERVER:
            if (!*optarg)
                return weft__cli_usage("run", "--server needs an ADDR");
            o->server = optarg;
            break;
        case ':':
            if (optopt == 't')
                return weft__cli_usage("run", "-t needs a LIST");
            return weft__cli_usage("run", "%s needs a %s",
                                   argv[optind - 1],
                                   optopt == O_TRACE ? "NAME" : "ADDR");
        default:
            if (optopt && optopt < 256)
                return weft__cli_usage("run", "unknown option '-%c'",
                                       optopt);
            return weft__cli_usage("run", "unknown option '%s'",
                                   argv[optind - 1]);
        }
    }
    if (*help)
        return EXIT_OK;
    if (optind >= argc)
        return weft__cli_usage("run", "missing PROGRAM (usage: weft run "
                               "[OPTIONS] [--] PROGRAM [ARGS...])");
    o->argv = argv + optind;
    return EXIT_OK;
}

/* ---- finding PROGRAM ---------------------------------------------------- */

/* Can path be executed: 0, or an errno as execve would give (EACCES for
 * a file without execute permission or not a regular file, ENOENT...),
 * but EISDIR for a directory, as shells say. */
static int executable(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode))
        return EACCES;
    return access(path, X_OK) == 0 ? 0 : errno;
}

/* Finds name as execvp does: as given when it has a slash, else in each
 * directory of $PATH (default confstr(_CS_PATH); an empty entry is the
 * current directory), the first executable file winning. Returns EXIT_OK
 * with *path malloc'd, or 127/126 after saying why. */
static int find_program(const char *name, char **path)
{
    const char *dirs = getenv("PATH");
    char defpath[256];
    int denied = 0, err;

    *path = NULL;
    if (!*name) {
        say("'': command not found");
        return EXIT_NOTFOUND;
    }
    if (strchr(name, '/')) {
        if ((err = executable(name)) != 0) {
            say("%s: %s", name, strerror(err));
            return err == ENOENT || err == ENOTDIR ? EXIT_NOTFOUND
                                                   : EXIT_NOEXEC;
        }
        *path = weft__cli_xstrdup(name);
        return EXIT_OK;
    }
    if (!dirs) {
        size_t n = confstr(_CS_PATH, defpath, sizeof defpath);
        dirs = n > 0 && n <= sizeof defpath ? defpath : "/bin:/usr/bin";
    }
    for (const char *p = dirs;;) {
        size_t len = strcspn(p, ":");
        char *cand = NULL;

        if (asprintf(&cand, "%.*s%s%s", (int)len, p, len ? "/" : "",
                     name) < 0)
            return weft__cli_fail("out of memory");
        if (len == 0) {         /* the current directory */
            free(cand);
            if (asprintf(&cand, "./%s", name) < 0)
                return weft__cli_fail("out of memory");
        }
        err = executable(cand);
        if (err == 0) {
            *path = cand;
            return EXIT_OK;
        }
        if (err == EACCES || err == EISDIR)
            denied = 1;
        free(cand);
        p += len;
        if (!*p++)
            break;
    }
    if (denied) {
        say("%s: %s", name, strerror(EACCES));
        return EXIT_NOEXEC;
    }
    say("%s: command not found", name);
    return EXIT_NOTFOUND;
}

/* ---- what the program is ------------------------------------------------ */

/* Reads the kind of pr->path into pr->info (pr->corrupt when its ELF
 * headers are unreadable; a file that cannot be read is left to exec,
 * which says why). */
static void read_kind(program *pr)
{
    struct stat st;
    void *map = MAP_FAILED;
    int fd;

    pr->info.kind = WEFT_PROG_OTHER;
    if ((fd = open(pr->path, O_RDONLY | O_CLOEXEC)) < 0)
        return;
    if (fstat(fd, &st) == 0 && st.st_size > 0)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
        weft__detect_file(map, (size_t)st.st_size, &pr->info, &pr->corrupt);
        munmap(map, (size_t)st.st_size);
    }
    close(fd);
}

/* Keeps the first line of out (the loader's message) in buf. */
static void first_line(const char *out, char *buf, size_t len)
{
    while (*out == '\t' || *out == ' ')
        out++;
    snprintf(buf, len, "%.*s", (int)strcspn(out, "\n"), out);
}

/* Runs pr's interpreter in list mode (stdin /dev/null, stdout and stderr
 * into a pipe) and reads the MPI libraries from what it prints, into
 * pr->mpi; when it lists no library, pr->list_error says why. */
static void list_libraries(program *pr)
{
    posix_spawn_file_actions_t fa;
    char *buf = NULL, *arg = NULL;
    size_t len = 0;
    int fds[2] = { -1, -1 }, rc, status = 0, fa_ok = 0;
    pid_t pid = -1;

    /* ld.so takes no "--": a path that starts with '-' gets "./". */
    if (asprintf(&arg, "%s%s", pr->path[0] == '-' ? "./" : "",
                 pr->path) < 0 || !(buf = malloc(LIST_MAX + 1))) {
        snprintf(pr->list_error, sizeof pr->list_error, "out of memory");
        goto out;
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(pr->list_error, sizeof pr->list_error, "pipe: %s",
                 strerror(errno));
        goto out;
    }
    if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
        goto spawn_failed;
    fa_ok = 1;
    if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
                                               O_RDONLY, 0)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 1)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 2)) != 0)
        goto spawn_failed;
    {
        char *const argv[] = { pr->info.interp, (char *)"--list", arg,
                               NULL };
        rc = posix_spawn(&pid, pr->info.interp, &fa, NULL, argv, environ);
    }
    if (rc != 0)
        goto spawn_failed;
    close(fds[1]);
    fds[1] = -1;
    for (;;) {
        char sink[4096];
        ssize_t n = len < LIST_MAX ? read(fds[0], buf + len, LIST_MAX - len)
                                   : read(fds[0], sink, sizeof sink);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (len < LIST_MAX)
            len += (size_t)n;
    }
    buf[len] = '\0';
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (weft__detect_mpi_in_list(buf, &pr->mpi) == 0) {
        char line[200];
        first_line(buf, line, sizeof line);
        if (WIFSIGNALED(status))
            snprintf(pr->list_error, sizeof pr->list_error,
                     "%.300s --list died of signal %d", pr->info.interp,
                     WTERMSIG(status));
        else
            snprintf(pr->list_error, sizeof pr->list_error,
                     "%.300s --list: %s", pr->info.interp,
                     *line ? line : "no library listed");
    }
    goto out;
spawn_failed:
    snprintf(pr->list_error, sizeof pr->list_error, "cannot run %.300s: %s",
             pr->info.interp, strerror(rc));
out:
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    free(buf);
    free(arg);
}

/* ---- the recorders ------------------------------------------------------ */

/* The recorders built beside this weft when it runs from its build tree
 * (libtool's BUILD/.libs, holding libweft.so) into buf; NULL when it is
 * not there (an installed weft). */
static const char *build_tree_dir(char *buf, size_t len)
{
    static const char libs[] = "/.libs", lib[] = "/.libs/libweft.so";
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    char *slash;

    if (n <= 0)
        return NULL;
    buf[n] = 0;
    slash = strrchr(buf, '/');
    if (!slash || (size_t)(slash - buf) + sizeof lib > len)
        return NULL;
    memcpy(slash, lib, sizeof lib);
    if (access(buf, R_OK) != 0)
        return NULL;
    slash[sizeof libs - 1] = 0;
    return buf;
}

/* The library directory: $WEFT_LIBDIR; else, for a weft run from its
 * build tree, the recorders built with it (so that a build tree's weft
 * never preloads another version's); else the one weft was installed
 * with. Relative made absolute. Returns it malloc'd. */
static char *library_dir(void)
{
    const char *dir = getenv("WEFT_LIBDIR");
    char cwd[PATH_MAX], exe[PATH_MAX], *s = NULL;

    if (!dir || !*dir)
        dir = build_tree_dir(exe, sizeof exe);
    if (!dir)
        dir = WEFT_LIBDIR;
    if (dir[0] != '/' && getcwd(cwd, sizeof cwd)) {
        if (asprintf(&s, "%s/%s", cwd, dir) < 0)
            s = NULL;
    } else {
        s = strdup(dir);
    }
    if (!s) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    return s;
}

/* Why recorder r cannot trace pr (words after the program's name), or
 * NULL when it can; *file is then its library file. */
static const char *why_not(const weft_recorder *r, const program *pr,
                           const char **file, char *buf, size_t len)
{
    const char *why;

    *file = NULL;
    if (r->applies == WEFT_REC_MPI) {
        if (pr->list_error[0]) {
            snprintf(buf, len, "cannot be inspected: %s", pr->list_error);
            return buf;
        }
        if (pr->mpi.other != WEFT_MPI_NONE) {
            snprintf(buf, len, "uses both %s (%s) and %s (%s)",
                     weft__detect_flavour_name(pr->mpi.flavour), pr->mpi.lib,
                     weft__detect_flavour_name(pr->mpi.other),
                     pr->mpi.other_lib);
            return buf;
        }
    }
    if (r->applies == WEFT_REC_OPENMP && pr->list_error[0]) {
        snprintf(buf, len, "cannot be inspected: %s", pr->list_error);
        return buf;
    }
    *file = weft__preload_file(r, &pr->mpi, &why);
    return *file ? NULL : why;
}

/* The recorders o chose that can trace pr: their library paths appended
 * to the user's LD_PRELOAD into *preload (NULL: none), each one that
 * cannot said on stderr. Returns the number of libraries preloaded. */
static int plan(const run_opts *o, const program *pr, char **preload,
                char **shown)
{
    weft_rec_set chosen = weft__preload_choose(
        o->recorders, o->explicit,
        weft__launched() && pr->mpi.flavour == WEFT_MPI_NONE);
    const char *why[sizeof(weft_rec_set) * 8] = { 0 };
    int missing[sizeof(weft_rec_set) * 8] = { 0 }; /* its library */
    char whybuf[sizeof(weft_rec_set) * 8][1024];
    char *dir = library_dir(), *value = NULL;
    const char *first_why = NULL;
    weft__sbuf list = { 0 };
    int n = 0;

    *preload = NULL;
    for (size_t i = 0; i < weft__nrecorders; i++) {
        const weft_recorder *r = &weft__recorders[i];
        const char *file;
        char *path = NULL, *next = NULL;
        int rc;

        if (!(chosen & (1u << i)))
            continue;
        why[i] = why_not(r, pr, &file, whybuf[i], sizeof whybuf[i]);
        if (why[i]) {
            if (!first_why)
                first_why = why[i];
            if (!o->explicit)
                why[i] = NULL;  /* a default that does not apply: quiet */
            continue;
        }
        if (asprintf(&path, "%s/%s", dir, file) < 0) {
            weft__cli_fail("out of memory");
            exit(EXIT_FAIL);
        }
        if (access(path, R_OK) != 0) {
            snprintf(whybuf[i], sizeof whybuf[i], "needs %s%s%s (%s)",
                     path, r->applies == WEFT_REC_MPI ? " for " : "",
                     r->applies == WEFT_REC_MPI
                         ? weft__detect_flavour_name(pr->mpi.flavour) : "",
                     strerror(errno));
            why[i] = whybuf[i];
            missing[i] = 1;
        } else if ((rc = weft__preload_append(value ? value
                                                    : getenv("LD_PRELOAD"),
                                              path, &next)) < 0) {
            snprintf(whybuf[i], sizeof whybuf[i], "needs %s, %s", path,
                     rc == WEFT_EINVAL ? "which LD_PRELOAD cannot carry "
                                         "(a space or a colon in the path)"
                                       : "out of memory");
            why[i] = whybuf[i];
            missing[i] = 1;
        } else {
            free(value);
            value = next;
            weft__cli_sb_printf(&list, "%s%s", n ? " " : "", path);
            n++;
        }
        free(path);
    }
    for (size_t i = 0; i < weft__nrecorders; i++) {
        const char *name = weft__recorders[i].name;

        if (!why[i])
            continue;
        if (missing[i])
            say("the %s recorder %s: running %s %s", name, why[i],
                o->argv[0], n ? "without it" : "untraced");
        else if (n)
            say("-t %s: %s %s: running it without the %s recorder", name,
                o->argv[0], why[i], name);
        else
            say("-t %s: %s %s: running it untraced", name, o->argv[0],
                why[i]);
    }
    if (n == 0 && !o->explicit && first_why) {
        char known[256];
        weft__preload_known(known, sizeof known);
        say("%s %s: running it untraced (recorders: %s)", o->argv[0],
            first_why, known);
    }
    *shown = weft__cli_sb_take(&list);
    *preload = value;
    free(dir);
    return n;
}

/* A #! script is traced through its interpreter, which the kernel runs
 * with the environment given (its own dependencies and MPI as for any
 * program): the recorders that apply to the interpreter are planned.
 * One that is not a dynamically linked program runs the script
 * untraced, saying why. */
static void plan_script(const run_opts *o, const program *pr, char **preload,
                        char **shown)
{
    program in = { .path = (char *)pr->info.interp };

    if (!pr->info.interp[0]) {
        say("%s is a script without an interpreter (#!): running it "
            "untraced", o->argv[0]);
        return;
    }
    read_kind(&in);
    if (in.info.kind != WEFT_PROG_DYNAMIC) {
        say("%s is a script whose interpreter %s is not a dynamically "
            "linked program: running it untraced", o->argv[0],
            pr->info.interp);
        return;
    }
    list_libraries(&in);
    plan(o, &in, preload, shown);
}

/* ---- running it --------------------------------------------------------- */

/* One line on stderr: what was found and what is preloaded. */
static void tell(const program *pr, const char *shown)
{
    const char *kind = "not an ELF program";
    char mpi[600] = "", omp[300] = "";

    switch (pr->info.kind) {
    case WEFT_PROG_DYNAMIC: kind = "dynamically linked"; break;
    case WEFT_PROG_STATIC: kind = "statically linked"; break;
    case WEFT_PROG_SCRIPT: kind = "script"; break;
    case WEFT_PROG_OTHER: break;
    }
    if (pr->info.kind == WEFT_PROG_DYNAMIC) {
        if (pr->list_error[0])
            snprintf(mpi, sizeof mpi, ", libraries unknown");
        else if (pr->mpi.flavour == WEFT_MPI_NONE)
            snprintf(mpi, sizeof mpi, ", no MPI");
        else
            snprintf(mpi, sizeof mpi, ", %s (%s)%s%s",
                     weft__detect_flavour_name(pr->mpi.flavour),
                     pr->mpi.lib, pr->mpi.other ? " and " : "",
                     pr->mpi.other ? pr->mpi.other_lib : "");
        if (!pr->list_error[0] && pr->mpi.omp != WEFT_OMP_NONE)
            snprintf(omp, sizeof omp, ", OpenMP (%s)", pr->mpi.omp_lib);
    }
    say("%s: %s%s%s; preloading %s", pr->path, kind, mpi, omp,
        *shown ? shown : "nothing");
}

static const char *process_env(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* Where the processes of a tree measure the TSC's frequency from
 * (WEFT_TSC_FROM, client/timer.c): (tsc0, ns0), read as weft run started
 * on `host`, so that none sleeps to measure it (a process on its own
 * sleeps up to 2 ms) and the later ones measure over longer. Only where
 * libweft may read the TSC (WEFT_CLOCK auto or tsc, an invariant TSC;
 * each process asks whether the kernel trusts it) and no reading or
 * frequency was given: an outer weft run's reading is older, so better.
 * 0, or -1 with errno (setenv). */
static int tsc_environment(uint64_t tsc0, uint64_t ns0, const char *host)
{
    const char *clock = getenv("WEFT_CLOCK");
    char from[320];

    if (getenv("WEFT_TSC_KHZ") || getenv("WEFT_TSC_FROM") || !tsc0 ||
        !ns0 || !*host ||
        (clock && *clock && strcmp(clock, "auto") && strcmp(clock, "tsc")) ||
        !weft__tsc_invariant())
        return 0;
    snprintf(from, sizeof from, "%" PRIu64 ",%" PRIu64 ",%s", tsc0, ns0,
             host);
    return setenv("WEFT_TSC_FROM", from, 1);
}

/* The environment that makes the traced program the root of a process
 * tree (runid.h): WEFT_TREE names the tree, WEFT_TASK_PID its root (this
 * process, the program after the exec), WEFT_TRACE the trace that every
 * process of it joins (--trace, the user's WEFT_TRACE, else PROGRAM-
 * HOST-PID as a process on its own is named). A weft run inside a tree
 * (a script of it running weft run) adds to that tree unless --trace
 * names another. Under a launcher only WEFT_TASK_PID: it tells the task
 * from the programs it runs (recorder.h, 4). 0 or -1 with errno. */
static int tree_environment(const run_opts *o, uint64_t tsc0, uint64_t ns0)
{
    const char *tree = getenv(WEFT__TREE_VAR), *name = o->trace;
    char task[24], host[256] = "", trace[WEFT__TRACE_MAX + 1];
    char self[PATH_MAX];
    struct timespec ts;
    weft__run run;
    ssize_t n;

    snprintf(task, sizeof task, "%ld", (long)getpid());
    if (weft__launched())
        return setenv(WEFT__TASK_PID_VAR, task, 1);
    if (tree && *tree && (!name || (getenv("WEFT_TRACE") &&
                                    !strcmp(name, getenv("WEFT_TRACE")))))
        return 0;
    gethostname(host, sizeof host - 1);
    clock_gettime(CLOCK_REALTIME, &ts);
    weft__run_tree(host, (long)getpid(),
                   (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                   &run);
    if (!name && !(name = getenv("WEFT_TRACE"))) {
        const char *prog = strrchr(o->argv[0], '/');
        weft__run_default_name(process_env, NULL,
                               prog ? prog + 1 : o->argv[0],
                               &run, trace, sizeof trace);
        name = trace;
    }
    n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    return setenv(WEFT__TREE_VAR, run.id, 1) != 0 ||
                   (*self && setenv(WEFT__RUN_SELF_VAR, self, 1) != 0) ||
                   setenv(WEFT__TASK_PID_VAR, task, 1) != 0 ||
                   setenv("WEFT_TRACE", name, 1) != 0 ||
                   tsc_environment(tsc0, ns0, host) != 0
               ? -1 : 0;
}

/* ---- in front of a launcher (runid.h, recorders/launch.c) ----------- */

/* PROGRAM is a parallel launcher (by the name it was given or the file
 * it is: /usr/bin/mpirun is orterun): 1. */
static int is_launcher(const run_opts *o, const program *pr)
{
    char real[PATH_MAX];

    return weft__run_launcher_name(o->argv[0]) ||
           (realpath(pr->path, real) && weft__run_launcher_name(real));
}

/* The user's LD_PRELOAD (malloc'd, "" when unset) without weft's own
 * recorder libraries from dir: a launcher that a traced script starts
 * (recorders/exec.c) has the script's, which would trace the launcher
 * and, before libweft-launch.so runs them again, its tasks. */
static char *without_recorders(const char *dir)
{
    char *value = strdup(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");

    for (size_t i = 0; value && i < weft__nrecorders; i++)
        for (size_t f = 0; value && f < WEFT_MPI_NFLAVOURS; f++) {
            const char *file = weft__recorders[i].file[f];
            char *path = NULL, *left = NULL;

            if (!file)
                continue;
            if (asprintf(&path, "%s/%s", dir, file) < 0 ||
                weft__preload_remove(value, path, &left) < 0)
                left = NULL;
            free(path);
            free(value);
            value = left;
        }
    if (!value) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    return value;
}

/* Sets up the launcher's environment: libweft-launch.so alone added to
 * the user's LD_PRELOAD (weft's recorders taken out), and what each task needs to run under this weft
 * run (runid.h). *preload is set to the new LD_PRELOAD (malloc'd), NULL
 * when the launcher runs as it is (the library is not installed, or the
 * launcher's own variables cannot be kept: said on stderr). Returns 0, or
 * -1 with errno (setenv). */
static int plan_launcher(const run_opts *o, const program *pr,
                         char **preload)
{
    char *dir = library_dir(), *shim = NULL, self[PATH_MAX], list[256] = "";
    char from[WEFT__LAUNCH_FROM_MAX], *kept = NULL;
    ssize_t n;
    int rc = 0;

    *preload = NULL;
    if (asprintf(&shim, "%s/libweft-launch.so", dir) < 0) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (access(shim, R_OK) != 0)
        say("%s is a launcher, and its tasks need %s (%s): running it "
            "untraced", o->argv[0], shim, strerror(errno));
    else if (n <= 0)
        say("cannot read /proc/self/exe (%s): running %s untraced",
            strerror(errno), o->argv[0]);
    else if (weft__launch_snapshot(process_env, NULL, from, sizeof from) < 0)
        say("%s: the launcher's rank variables are not a launcher's (a ';', "
            "or over %d bytes): running it untraced", o->argv[0],
            WEFT__LAUNCH_FROM_MAX);
    else if (!(kept = without_recorders(dir)) ||
             weft__preload_append(kept, shim, preload) < 0)
        say("%s cannot be in LD_PRELOAD (a space or a colon in it): running "
            "%s untraced", shim, o->argv[0]);
    free(kept);
    if (!*preload)
        goto out;
    self[n] = 0;
    for (size_t i = 0, used = 0; o->explicit && i < weft__nrecorders; i++)
        if (o->recorders & (1u << i))
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     used ? "," : "", weft__recorders[i].name);
    if (o->verbose)
        say("%s is a parallel launcher: it runs untraced, and each task it "
            "starts runs under %s run%s%s; preloading %s", pr->path, self,
            *list ? " -t " : "", list, shim);
    rc = setenv(WEFT__LAUNCH_RUN_VAR, self, 1) != 0 ||
                 setenv(WEFT__LAUNCH_SHIM_VAR, shim, 1) != 0 ||
                 setenv(WEFT__LAUNCH_FROM_VAR, from, 1) != 0 ||
                 setenv(WEFT__LAUNCH_REC_VAR, list, 1) != 0 ||
                 setenv(WEFT__LAUNCH_VERBOSE_VAR, o->verbose ? "1" : "0",
                        1) != 0
             ? -1 : 0;
out:
    free(shim);
    free(dir);
    return rc;
}

/* A task that libweft-launch.so ran again under this weft run: the
 * library taken out of LD_PRELOAD (the user's own entries kept) and its
 * variables out of the environment, so that the task's own programs run
 * as under `mpirun weft run`. 0, or -1 with errno. */
static int leave_launch(void)
{
    const char *shim = getenv(WEFT__LAUNCH_SHIM_VAR);
    const char *old = getenv("LD_PRELOAD");
    char *left = NULL;
    int rc = 0;

    if (shim && *shim && old &&
        weft__preload_remove(old, shim, &left) < 0)
        return -1;
    if (left)
        rc = *left ? setenv("LD_PRELOAD", left, 1) : unsetenv("LD_PRELOAD");
    free(left);
    return rc != 0 || unsetenv(WEFT__LAUNCH_RUN_VAR) != 0 ||
                   unsetenv(WEFT__LAUNCH_SHIM_VAR) != 0 ||
                   unsetenv(WEFT__LAUNCH_FROM_VAR) != 0 ||
                   unsetenv(WEFT__LAUNCH_REC_VAR) != 0 ||
                   unsetenv(WEFT__LAUNCH_VERBOSE_VAR) != 0
               ? -1 : 0;
}

/* Replaces this process with the program. Returns only when exec failed:
 * 127 or 126 after saying why. */
static int exec_program(const program *pr, char **argv)
{
    int err;

    fflush(NULL);
    execv(pr->path, argv);
    err = errno;
    /* A file without #! nor ELF header is a shell script to execvp and
     * to shells: the same here. */
    if (err == ENOEXEC && pr->info.kind == WEFT_PROG_OTHER) {
        size_t n = 0;
        char **sh;

        while (argv[n])
            n++;
        sh = calloc(n + 2, sizeof *sh);
        if (sh) {
            sh[0] = (char *)"/bin/sh";
            sh[1] = pr->path;
            memcpy(sh + 2, argv + 1, n * sizeof *sh); /* with the NULL */
            execv("/bin/sh", sh);
            err = errno;
            free(sh);
        }
    }
    say("cannot run %s: %s", argv[0], strerror(err));
    return err == ENOENT || err == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC;
}

int weft__cmd_run(cli *c)
{
    run_opts o = { 0 };
    program pr = { 0 };
    char *preload = NULL, *shown = NULL;
    uint64_t tsc0, ns0;
    int status, help = 0, launcher = 0;

    weft__tsc_pair(&tsc0, &ns0); /* the tree measures the TSC from here */
    if ((status = parse_options(c->nargs, c->args, &o, &help)) != EXIT_OK)
        return status;
    if (help) {
        weft__cli_command_help("run");
        return EXIT_OK;
    }
    if (getenv(WEFT__LAUNCH_SHIM_VAR) && leave_launch() != 0) {
        status = weft__cli_error("run", "cannot set the environment: %s",
                                 strerror(errno));
        goto out;
    }
    if ((status = find_program(o.argv[0], &pr.path)) != EXIT_OK)
        goto out;
    read_kind(&pr);
    if (pr.info.kind != WEFT_PROG_STATIC && is_launcher(&o, &pr)) {
        launcher = 1;
        if (plan_launcher(&o, &pr, &preload) != 0) {
            status = weft__cli_error("run", "cannot set the environment: "
                                     "%s", strerror(errno));
            goto out;
        }
    } else switch (pr.info.kind) {
    case WEFT_PROG_DYNAMIC:
        /* The loader's list costs a process (about 1 ms here); with
         * only glibc's and the compiler's libraries it names no MPI
         * (unless LD_PRELOAD adds a library: it counts in the list). */
        if (!pr.info.base_only || (getenv("LD_PRELOAD") &&
                                   *getenv("LD_PRELOAD")))
            list_libraries(&pr);
        plan(&o, &pr, &preload, &shown);
        break;
    case WEFT_PROG_STATIC:
        say("%s is statically linked: running it untraced", o.argv[0]);
        break;
    case WEFT_PROG_SCRIPT:
        plan_script(&o, &pr, &preload, &shown);
        break;
    case WEFT_PROG_OTHER:
        if (pr.corrupt)
            say("%s: unreadable ELF headers (%s): running it untraced",
                o.argv[0], pr.corrupt);
        else
            say("%s is not an ELF program: running it untraced",
                o.argv[0]);
        break;
    }
    if (o.verbose && !launcher)
        tell(&pr, shown ? shown : "");
    if ((preload && (setenv("LD_PRELOAD", preload, 1) != 0 ||
                     (!launcher && tree_environment(&o, tsc0, ns0) != 0))) ||
        (o.trace && setenv("WEFT_TRACE", o.trace, 1) != 0) ||
        (o.server && setenv("WEFT_SERVER", o.server, 1) != 0)) {
        status = weft__cli_error("run", "cannot set the environment: %s",
                                 strerror(errno));
        goto out;
    }
    status = exec_program(&pr, o.argv);
out:
    free(preload);
    free(shown);
    free(pr.path);
    return status;
}
