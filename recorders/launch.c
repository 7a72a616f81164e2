/* launch.c - libweft-launch.so: what `weft run -- mpirun -np 4 ./app`
 * preloads into the launcher, so that it means what `mpirun -np 4 weft
 * run -- ./app` means: the tasks traced, each with the recorders its
 * own program needs, and not the launcher.
 *
 * DESIGN: weft run cannot pick the tasks' recorders at the launcher's
 * start (the launcher links no MPI; its tasks' programs do) and cannot
 * find the task command among a launcher's arguments (every launcher has
 * its own options). So the launcher and everything it starts get this
 * library alone, whose constructor does nothing in the launcher and its
 * helpers (orted, hydra_pmi_proxy, ssh: no rank variable of their own,
 * runid.h) and, in a task (a rank variable that the launcher did not
 * have), runs the task's command line again under weft run, before any
 * of the program's code ran: that weft run takes this library out of
 * LD_PRELOAD and preloads what the program needs. A task costs one more
 * exec. Nothing is recorded here, and nothing is linked but the C
 * library (and runid.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runid.h"

extern char **environ;

/* The longest command line read back (the kernel's own limit on the
 * arguments and environment of an exec is far lower by default). */
#define CMDLINE_MAX (64u << 20)

static const char *env_get(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* This process's arguments, from /proc/self/cmdline: a NULL-ended argv
 * in one malloc'd block (*argc set), or NULL. */
static char **own_argv(int *argc)
{
    size_t cap = 4096, len = 0;
    char *buf = NULL, **argv;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), n = 0;

    if (fd < 0)
        return NULL;
    for (;;) {
        char *more = realloc(buf, cap);
        ssize_t r;

        if (!more)
            goto fail;
        buf = more;
        r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            goto fail;
        if (r == 0)
            break;
        len += (size_t)r;
        if (len == cap && (cap *= 2) > CMDLINE_MAX)
            goto fail;
    }
    close(fd);
    fd = -1;
    if (len == 0 || buf[len - 1] != 0)
        goto fail;
    for (size_t i = 0; i < len; i++)
        n += buf[i] == 0;
    /* the pointers first, then the strings, in one block */
    argv = malloc((size_t)(n + 1) * sizeof *argv + len);
    if (!argv)
        goto fail;
    memcpy((char *)(argv + n + 1), buf, len);
    free(buf);
    buf = (char *)(argv + n + 1);
    for (int i = 0; i < n; i++) {
        argv[i] = buf;
        buf += strlen(buf) + 1;
    }
    argv[n] = NULL;
    *argc = n;
    return argv;
fail:
    if (fd >= 0)
        close(fd);
    free(buf);
    return NULL;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The program to run under weft run: argv0 itself when it names this
 * very program (with a slash: relative to the same directory; without:
 * found in $PATH as the launcher found it), so that the program sees the
 * argv[0] it was given; else the file /proc/self/exe names (a script's
 * interpreter is itself argv0 of its command line). Into buf. */
static const char *program_of(const char *argv0, char *buf, size_t len)
{
    const char *path = getenv("PATH");
    ssize_t n;

    if (strchr(argv0, '/')) {
        if (same_file(argv0, "/proc/self/exe"))
            return argv0;
    } else if (path) {
        for (const char *p = path;; p++) {
            size_t dl = strcspn(p, ":");
            int w = snprintf(buf, len, "%.*s%s%s", (int)dl, p,
                             dl ? "/" : "", argv0);
            if (w > 0 && (size_t)w < len && same_file(buf, "/proc/self/exe"))
                return argv0;
            p += dl;
            if (!*p)
                break;
        }
    }
    n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    return buf;
}

__attribute__((constructor)) static void weft_launch_task(void)
{
    const char *run = getenv(WEFT__LAUNCH_RUN_VAR);
    const char *from = getenv(WEFT__LAUNCH_FROM_VAR);
    const char *rec = getenv(WEFT__LAUNCH_REC_VAR);
    const char *verbose = getenv(WEFT__LAUNCH_VERBOSE_VAR);
    char exe[PATH_MAX];
    const char *prog;
    char **argv = NULL, **nargv = NULL;
    int argc = 0, k = 0, err;
    void (*close_session)(int);

    if (!run || !*run ||
        !weft__launch_is_task(from ? from : "", env_get, NULL))
        return;
    /* `weft run -- mpirun weft run -- ./app`: that weft run does it */
    if (same_file(run, "/proc/self/exe"))
        return;
    argv = own_argv(&argc);
    prog = argv && argc > 0 ? program_of(argv[0], exe, sizeof exe) : NULL;
    nargv = argv && prog ? calloc((size_t)argc + 7, sizeof *nargv) : NULL;
    if (!nargv) {
        fprintf(stderr, "weft run: cannot read the command line of task "
                "%ld: it runs untraced\n", (long)getpid());
        goto out;
    }
    nargv[k++] = (char *)run;
    nargv[k++] = (char *)"run";
    if (rec && *rec) {
        nargv[k++] = (char *)"-t";
        nargv[k++] = (char *)rec;
    }
    if (verbose && !strcmp(verbose, "1"))
        nargv[k++] = (char *)"-v";
    nargv[k++] = (char *)"--";
    nargv[k++] = (char *)prog;
    memcpy(nargv + k, argv + 1, (size_t)argc * sizeof *nargv); /* + NULL */
    /* a session libweft opened already (a program linked with it) says
     * goodbye first, as its exec wrappers would */
    if ((close_session = (void (*)(int))dlsym(RTLD_DEFAULT,
                                               "weft__recorder_exec")))
        close_session(1);
    /* the system call itself: an exec wrapper preloaded beside this
     * library may not have found the C library's yet (its constructor
     * runs after this one) */
    syscall(SYS_execve, run, nargv, environ);
    err = errno;
    fprintf(stderr, "weft run: cannot run task %ld (%s) under %s: %s: it "
            "runs untraced\n", (long)getpid(), prog, run, strerror(err));
out:
    free(nargv);
    free(argv);
}
