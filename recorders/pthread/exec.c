/* exec.c - the exec family: a process that becomes another program first
 * closes the session libweft-pthread opened, so its trace is complete
 * (weftd hears its goodbye) instead of waiting for a peer that will never
 * come back; the new program is traced if its environment says so
 * (LD_PRELOAD is inherited), as a trace of its own. When exec fails the
 * process goes on untraced. Sessions opened by another recorder (MPI's)
 * are left to it. Nothing is recorded here.
 *
 * glibc's execl, execle and execlp call execve internally, not through
 * the PLT, so each is wrapped itself; their arguments are gathered into
 * an array on the stack and the array form called (ours).
 */
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "pt.h"

/* Closes the session before the process image is replaced. */
static void before_exec(void)
{
    int saved = errno, expect = PT_ST_ON;

    if (!weft__inside &&
        atomic_compare_exchange_strong(&pt_state, &expect, PT_ST_OFF))
        weft_close();
    errno = saved;
}

/* The real function `name` into *fn once; 0, or -1 (errno ENOSYS). */
static int real_of(void *fn, const char *name)
{
    void *p;

    memcpy(&p, fn, sizeof p);
    if (p)
        return 0;
    p = pt_real(name);
    if (!p) {
        errno = ENOSYS;
        return -1;
    }
    memcpy(fn, &p, sizeof p);
    return 0;
}

#define PT_EXEC(name, params, args)                                          \
    PT_EXPORT int name params                                                \
    {                                                                        \
        static int(*real_) params;                                           \
                                                                             \
        if (real_of(&real_, #name) < 0)                                      \
            return -1;                                                       \
        before_exec();                                                       \
        return real_ args;                                                   \
    }

PT_EXEC(execve, (const char *path, char *const argv[], char *const envp[]),
        (path, argv, envp))
PT_EXEC(execv, (const char *path, char *const argv[]), (path, argv))
PT_EXEC(execvp, (const char *file, char *const argv[]), (file, argv))
PT_EXEC(execvpe, (const char *file, char *const argv[], char *const envp[]),
        (file, argv, envp))
PT_EXEC(fexecve, (int fd, char *const argv[], char *const envp[]),
        (fd, argv, envp))

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

/* execl, execlp, execle: the array form with the arguments gathered (a
 * variable-length array, as glibc does on the stack), then envp for
 * execle. */
#define PT_EXECL(name, first, call, with_env)                                \
    PT_EXPORT int name(const char *first, const char *arg, ...)              \
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

PT_EXECL(execl, path, execv(path, v), 0)
PT_EXECL(execlp, file, execvp(file, v), 0)
PT_EXECL(execle, path, execve(path, v, envp), 1)
