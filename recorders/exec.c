/* exec.c - the calls after which the process image is gone without
 * libweft's atexit handler (the one that says goodbye to weftd): the exec
 * family, _exit and _Exit. libweft.so compiles this file (for programs
 * linked with it, where it comes before the C library), and so does every
 * recorder library that preloads into a program (libweft-pthread,
 * libweft-io, libweft-mpi: a preloaded library's own dependencies, libweft
 * among them, come after the C library in the symbol search order).
 * A successful exec replaces the process image, libweft's session with
 * it; _exit (dash ends so, and every `sh -c`; python's os._exit) ends
 * the process at once. So the session is closed first
 * (weft__recorder_exec: flushed, acknowledged, goodbye said), and the
 * trace of the program before the exec or _exit is complete. quick_exit
 * needs no wrapper: weft_open registers the same handler with
 * at_quick_exit as with atexit. The new program is traced when its
 * environment still preloads a recorder: as a trace of its own, or under
 * weft run as the next member of the process tree's trace (the Goodbye
 * says the process execs, and weftd waits for it). Nothing is recorded
 * of the calls themselves. When both libraries are preloaded, the first one's
 * wrappers run; either closes the one session. In weft run's process
 * tree, the exec of a parallel launcher (mpirun, srun, ...) becomes an
 * exec of `weft run -- LAUNCHER ...` (launch_via), which traces the
 * launch's tasks with the recorders their programs need.
 *
 * A vfork() child runs in its parent's memory until it execs: it must not
 * close the parent's session (weft__recorder_exec knows it by its pid)
 * and must not allocate, so the real functions are resolved when the
 * library is loaded, and execl's arguments are gathered on the stack as
 * glibc does (its execl, execle and execlp call execve internally, not
 * through the PLT, so each is wrapped itself). What a vfork child calls
 * before its exec is recorded as its parent's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder.h"
#include "runid.h"

#define EXEC_EXPORT __attribute__((visibility("default")))

/* Built with AddressSanitizer (--enable-sanitizers): an exec that works
 * never returns, so the frames that called it (execl's array on the
 * stack among them) leave their redzones poisoned. In a vfork() child
 * that stack is the parent's, whose later frames at those addresses ASan
 * then reports as overflows: the stack is unpoisoned first, as the
 * compiler does before a call that does not return. */
#if defined(__SANITIZE_ADDRESS__)
#define EXEC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EXEC_ASAN 1
#endif
#endif
#ifdef EXEC_ASAN
#include <sanitizer/asan_interface.h>
#define EXEC_STACK_LEFT() __asan_handle_no_return()
#else
#define EXEC_STACK_LEFT() ((void)0)
#endif

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef void (*exit_fn)(int);
typedef int (*spawn_fn)(pid_t *, const char *,
                        const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[],
                        char *const[]);

static execve_fn real_execve, real_execvpe;
static execv_fn real_execv, real_execvp;
static fexecve_fn real_fexecve;
static exit_fn real_exit, real_Exit;
static spawn_fn real_posix_spawn, real_posix_spawnp;

/* Resolves `name` into *fn (NULL when the C library has none). */
static void resolve(void *fn, const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);

    __builtin_memcpy(fn, &p, sizeof p);
}

/* 1 when the C library comes after this library in the symbol search
 * order (the chain of link maps of the libraries loaded at start), so
 * that RTLD_NEXT finds its functions: always for a preloaded recorder,
 * and for libweft.so linked into a program, but not for libweft.so as a
 * preloaded recorder's dependency (its wrappers are never called then).
 * Asked first because a failed dlsym allocates its message: with the
 * program's own malloc, whose locks libweft-pthread records, before its
 * constructor ran. */
static int libc_follows(void)
{
    struct dl_find_object fo;

    if (_dl_find_object((void *)libc_follows, &fo) != 0 || !fo.dlfo_link_map)
        return 0;
    for (const struct link_map *m = fo.dlfo_link_map->l_next; m;
         m = m->l_next)
        if (m->l_name && strstr(m->l_name, "/libc.so"))
            return 1;
    return 0;
}

__attribute__((constructor)) static void exec_init(void)
{
    int saved = errno;

    if (!libc_follows())
        return;

    resolve(&real_execve, "execve");
    resolve(&real_execvpe, "execvpe");
    resolve(&real_execv, "execv");
    resolve(&real_execvp, "execvp");
    resolve(&real_fexecve, "fexecve");
    resolve(&real_exit, "_exit");
    resolve(&real_Exit, "_Exit");
    resolve(&real_posix_spawn, "posix_spawn");
    resolve(&real_posix_spawnp, "posix_spawnp");
    errno = saved;
}

/* The body of each vector form: the real function, after the session is
 * closed; ENOSYS without one. */
#define EXEC_CALL(real, args)                                                \
    do {                                                                     \
        if (!(real)) {                                                       \
            errno = ENOSYS;                                                  \
            return -1;                                                       \
        }                                                                    \
        weft__recorder_exec(1);                                              \
        EXEC_STACK_LEFT();                                                   \
        return (real) args;                                                  \
    } while (0)

/* A parallel launcher that a process of weft run's tree (WEFT_TREE)
 * starts runs under weft run too (WEFT_RUN_SELF): in front of a launcher
 * weft run traces its tasks with the recorders their programs need
 * (recorders/launch.c), which the tree's recorders are not (a batch
 * script's `mpirun ./app`). Not when weft run itself starts the launcher
 * so (WEFT_LAUNCH_RUN set). Returns weft run's program, or NULL. */
static const char *launch_via(const char *file)
{
    const char *self = getenv(WEFT__RUN_SELF_VAR);
    const char *tree = getenv(WEFT__TREE_VAR);

    if (!file || !self || !*self || !tree || !*tree ||
        getenv(WEFT__LAUNCH_RUN_VAR) || !weft__run_launcher_name(file))
        return NULL;
    return self;
}

static size_t nargs(char *const argv[])
{
    size_t n = 0;

    while (argv && argv[n])
        n++;
    return n;
}

/* v (n + 5 slots): "SELF run -- FILE ARGS..." for file's argv of n. */
static void via_argv(char **v, const char *self, const char *file,
                     char *const argv[], size_t n)
{
    size_t k = 0;

    v[k++] = (char *)self;
    v[k++] = (char *)"run";
    v[k++] = (char *)"--";
    v[k++] = (char *)file;
    for (size_t i = 1; i < n; i++)
        v[k++] = argv[i];
    v[k] = NULL;
}

/* The body of a wrapper of file's exec: through weft run when
 * launch_via says so (call_via, with v) and that exec works, else as
 * called (call). */
#define EXEC_OR_VIA(file, argv, real, call, real_via, call_via)             \
    do {                                                                     \
        const char *self = launch_via(file);                                 \
                                                                             \
        if (self && (real_via)) {                                            \
            size_t n = nargs(argv);                                          \
            char *v[n + 5];                                                  \
                                                                             \
            via_argv(v, self, file, argv, n);                                \
            weft__recorder_exec(1);                                          \
            EXEC_STACK_LEFT();                                               \
            (void)(real_via)call_via;                                        \
        }                                                                    \
        EXEC_CALL(real, call);                                               \
    } while (0)

EXEC_EXPORT int execve(const char *path, char *const argv[],
                       char *const envp[])
{
    EXEC_OR_VIA(path, argv, real_execve, (path, argv, envp), real_execve,
                (self, v, envp));
}

EXEC_EXPORT int execv(const char *path, char *const argv[])
{
    EXEC_OR_VIA(path, argv, real_execv, (path, argv), real_execv,
                (self, v));
}

/* weft run finds file in $PATH as execvp would. */
EXEC_EXPORT int execvp(const char *file, char *const argv[])
{
    EXEC_OR_VIA(file, argv, real_execvp, (file, argv), real_execv,
                (self, v));
}

EXEC_EXPORT int execvpe(const char *file, char *const argv[],
                        char *const envp[])
{
    EXEC_OR_VIA(file, argv, real_execvpe, (file, argv, envp), real_execve,
                (self, v, envp));
}

EXEC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    EXEC_CALL(real_fexecve, (fd, argv, envp));
}

/* posix_spawn and posix_spawnp start a program without this process's
 * exec (glibc's child calls execve inside the C library): a launcher so
 * started runs under weft run as an exec'd one does (launch_via; weft
 * run found in $PATH, as posix_spawnp would). The session stays: this
 * process goes on. Errors are returned, as posix_spawn does. */
#define SPAWN_OR_VIA(real, pid, file, fa, attr, argv, envp)                  \
    do {                                                                     \
        const char *self = launch_via(file);                                 \
                                                                             \
        if (!(real))                                                         \
            return ENOSYS;                                                   \
        if (self && real_posix_spawnp) {                                     \
            size_t n = nargs(argv);                                          \
            char **v = malloc((n + 5) * sizeof *v);                          \
            int rc_;                                                         \
                                                                             \
            if (v) {                                                         \
                via_argv(v, self, file, argv, n);                            \
                rc_ = real_posix_spawnp(pid, self, fa, attr, v, envp);       \
                free(v);                                                     \
                if (rc_ == 0)                                                \
                    return 0;                                                \
            }                                                                \
        }                                                                    \
        return (real)(pid, file, fa, attr, argv, envp);                      \
    } while (0)

EXEC_EXPORT int posix_spawn(pid_t *pid, const char *path,
                            const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *attr,
                            char *const argv[], char *const envp[])
{
    SPAWN_OR_VIA(real_posix_spawn, pid, path, fa, attr, argv, envp);
}

EXEC_EXPORT int posix_spawnp(pid_t *pid, const char *file,
                             const posix_spawn_file_actions_t *fa,
                             const posix_spawnattr_t *attr,
                             char *const argv[], char *const envp[])
{
    SPAWN_OR_VIA(real_posix_spawnp, pid, file, fa, attr, argv, envp);
}

/* _exit and _Exit: the session closed, then the real one (the system
 * call itself if the C library had none: nothing may return). A signal
 * handler may call them: inside libweft (the interrupted code holds its
 * locks) the session is left alone, as weft__recorder_exec says. */
static __attribute__((noreturn)) void exit_now(exit_fn real, int status)
{
    weft__recorder_exec(0);
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

EXEC_EXPORT void _exit(int status)
{
    exit_now(real_exit, status);
}

EXEC_EXPORT void _Exit(int status)
{
    exit_now(real_Exit, status);
}

/* Number of arguments from arg0 to the NULL, the NULL included. */
static size_t count(const char *arg0, va_list ap)
{
    size_t n = 1;

    while (arg0) {
        arg0 = va_arg(ap, const char *);
        n++;
    }
    return n;
}

/* Copies the arguments from arg0 to the NULL into v. */
static void gather(const char *arg0, va_list ap, char **v)
{
    size_t n = 0;

    v[n++] = (char *)arg0;
    while (arg0)
        v[n++] = (char *)(arg0 = va_arg(ap, const char *));
}

/* execl, execlp, execle: the vector form with the arguments gathered
 * into a variable-length array, then envp for execle (the calling
 * process's environment for the others). */
#define EXECL(name, first, call, with_env)                                   \
    EXEC_EXPORT int name(const char *first, const char *arg, ...)            \
    {                                                                        \
        va_list ap, ap2;                                                     \
        size_t n;                                                            \
                                                                             \
        va_start(ap, arg);                                                   \
        va_copy(ap2, ap);                                                    \
        n = count(arg, ap2);                                                 \
        va_end(ap2);                                                         \
        {                                                                    \
            char *v[n];                                                      \
            char *const *envp = NULL;                                        \
                                                                             \
            gather(arg, ap, v);                                              \
            if (with_env)                                                    \
                envp = va_arg(ap, char *const *);                            \
            va_end(ap);                                                      \
            (void)envp;                                                      \
            return call;                                                     \
        }                                                                    \
    }

EXECL(execl, path, execv(path, v), 0)
EXECL(execlp, file, execvp(file, v), 0)
EXECL(execle, path, execve(path, v, envp), 1)
