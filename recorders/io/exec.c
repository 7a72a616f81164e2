/* exec.c - the exec family: a successful exec replaces the process
 * image, libweft's session with it, without the atexit handler that
 * says goodbye to weftd. So the session of a recording process is
 * closed (flushed, acknowledged, goodbye) just before the exec; the new
 * program opens its own session if the environment still preloads
 * libweft-io. An exec that fails leaves the session closed: the rest of
 * that process is not recorded. (Calls a vfork() child makes before its
 * exec are recorded as the parent's: it runs in the parent's memory.) Nothing is recorded of the calls
 * themselves. The list-argument forms (execl, execlp, execle) call the
 * C library's vector forms.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "io.h"
#include "session.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

extern char **environ;

/* Before an exec: ends the session this process records in. Not in
 * the child of a vfork(), which shares the parent's memory, session
 * included: the parent goes on recording. */
static void before_exec(void)
{
    weft__rguard g;

    if (atomic_load(&io_state) != IO_ST_ON || (int)getpid() != io_pid ||
        !weft__recorder_begin(&g))
        return;
    atomic_store(&io_state, IO_ST_OFF);
    weft_close();
    weft__recorder_end(&g);
    errno = g.saved_errno;
}

/* Resolves every real function up front: after before_exec, nothing may
 * fail to find its real function. */
static void *real(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);

    if (!p)
        abort();
    return p;
}

IO_EXPORT int execve(const char *path, char *const argv[],
                     char *const envp[])
{
    execve_fn f = (execve_fn)real("execve");

    before_exec();
    return f(path, argv, envp);
}

IO_EXPORT int execv(const char *path, char *const argv[])
{
    execv_fn f = (execv_fn)real("execv");

    before_exec();
    return f(path, argv);
}

IO_EXPORT int execvp(const char *file, char *const argv[])
{
    execv_fn f = (execv_fn)real("execvp");

    before_exec();
    return f(file, argv);
}

IO_EXPORT int execvpe(const char *file, char *const argv[],
                      char *const envp[])
{
    execve_fn f = (execve_fn)real("execvpe");

    before_exec();
    return f(file, argv, envp);
}

IO_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    fexecve_fn f = (fexecve_fn)real("fexecve");

    before_exec();
    return f(fd, argv, envp);
}

/* The arguments of an execl-style call after `arg0`, NULL-terminated, in
 * a malloc'd vector; *envp gets the environment after the NULL when
 * `with_env`. NULL when out of memory. */
static char **collect(const char *arg0, va_list ap, int with_env,
                      char ***envp)
{
    va_list count;
    size_t n = 1;
    char **v;

    va_copy(count, ap);
    while (va_arg(count, char *))
        n++;
    va_end(count);
    v = malloc((n + 1) * sizeof *v);
    if (!v)
        return NULL;
    v[0] = (char *)arg0;
    for (size_t i = 1; i <= n; i++)
        v[i] = va_arg(ap, char *);   /* the last one is the NULL */
    if (with_env)
        *envp = va_arg(ap, char **);
    return v;
}

#define IO_EXECL(call, with_env, ...)                                        \
    do {                                                                     \
        va_list ap;                                                          \
        char **v, **envp = environ;                                          \
        int rc;                                                              \
                                                                             \
        va_start(ap, arg);                                                   \
        v = collect(arg, ap, with_env, &envp);                               \
        va_end(ap);                                                          \
        if (!v) {                                                            \
            errno = ENOMEM;                                                  \
            return -1;                                                       \
        }                                                                    \
        rc = call;                                                           \
        free(v);                                                             \
        return rc;                                                           \
    } while (0)

IO_EXPORT int execl(const char *path, const char *arg, ...)
{
    IO_EXECL(execve(path, v, envp), 0);
}

IO_EXPORT int execlp(const char *file, const char *arg, ...)
{
    IO_EXECL(execvpe(file, v, envp), 0);
}

IO_EXPORT int execle(const char *path, const char *arg, ...)
{
    IO_EXECL(execve(path, v, envp), 1);
}
