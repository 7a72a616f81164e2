/* lazylib.c - libmunge and nettle, loaded when libweft first needs them.
 *
 * Only a process that proves its uid with MUNGE over TCP needs them (the
 * credential, proto/cred.c; the session MAC, proto/mac.c); over the Unix
 * socket or with WEFT_AUTH=none they are dead weight, and every traced
 * process paid for loading them at its start (0.3 ms of CPU per process
 * on the development VM, nettle's relocations and CPU probing most of
 * it: bench/procs.sh). So libweft does not link them: the functions of
 * theirs that libweft calls are defined here (hidden, so nothing else
 * binds to them) and call the library's own, which
 * weft__lazylib_load dlopens (RTLD_LOCAL) before the first Auth -
 * never while libweft's mutex is held (a dlopen takes ld.so's lock; see
 * recorders/pthread/pt.h). weftd and the weft command link both
 * libraries as usual.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <munge.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "client_internal.h"

/* Every function taken from the two libraries, once. */
#define LAZY_MUNGE(X)                                                        \
    X(munge_ctx_create) X(munge_ctx_destroy) X(munge_ctx_set)                \
    X(munge_ctx_strerror) X(munge_encode) X(munge_decode) X(munge_strerror)
#define LAZY_NETTLE(X)                                                       \
    X(nettle_hmac_sha256_set_key) X(nettle_hmac_sha256_update)               \
    X(nettle_hmac_sha256_digest) X(nettle_memeql_sec)

static struct {
#define LAZY_SLOT(name) void *name;
    LAZY_MUNGE(LAZY_SLOT) LAZY_NETTLE(LAZY_SLOT)
#undef LAZY_SLOT
} fn;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[256];   /* why loading failed, "" when it did not */

/* Opens soname and takes n functions of names[] into slots[]. 0, or -1
 * with failed set. */
static int take(const char *soname, const char *const *names, void **slots,
                size_t n)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

    if (!h) {
        snprintf(failed, sizeof failed, "cannot load %s: %s", soname,
                 dlerror());
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!(slots[i] = dlsym(h, names[i]))) {
            snprintf(failed, sizeof failed, "%s has no %s", soname,
                     names[i]);
            return -1;
        }
    return 0;
}

static void load(void)
{
#define LAZY_NAME(name) #name,
#define LAZY_ADDR(name) &fn.name,
    static const char *const munge_names[] = { LAZY_MUNGE(LAZY_NAME) };
    static const char *const nettle_names[] = { LAZY_NETTLE(LAZY_NAME) };
    void **munge_slots[] = { LAZY_MUNGE(LAZY_ADDR) };
    void **nettle_slots[] = { LAZY_NETTLE(LAZY_ADDR) };
#undef LAZY_NAME
#undef LAZY_ADDR
    void *m[sizeof munge_slots / sizeof *munge_slots];
    void *t[sizeof nettle_slots / sizeof *nettle_slots];

    if (take(WEFT_MUNGE_SONAME, munge_names, m, sizeof m / sizeof *m) < 0 ||
        take(WEFT_NETTLE_SONAME, nettle_names, t, sizeof t / sizeof *t) < 0)
        return;
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
        *munge_slots[i] = m[i];
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        *nettle_slots[i] = t[i];
}

/* See client_internal.h. */
int weft__lazylib_load(char *why, size_t whylen)
{
    pthread_once(&once, load);
    if (!failed[0])
        return 0;
    snprintf(why, whylen, "%s", failed);
    return -1;
}

/* The library function in *slot, both libraries loaded first if that
 * was not done. One that cannot be loaded here was not loaded by
 * weft__lazylib_load either, which the caller had to call: a bug of
 * libweft's, said before aborting. */
static void *need(void *const *slot, const char *name)
{
    pthread_once(&once, load);
    if (!*slot) {
        weft__warn("%s: %s", name, failed);
        abort();
    }
    return *slot;
}

#define CALL(name, type) ((type)need(&fn.name, #name))

munge_ctx_t munge_ctx_create(void)
{
    return CALL(munge_ctx_create, munge_ctx_t(*)(void))();
}

void munge_ctx_destroy(munge_ctx_t ctx)
{
    CALL(munge_ctx_destroy, void (*)(munge_ctx_t))(ctx);
}

/* The options libweft sets (proto/cred.c), each with its argument's
 * type; any other is refused. */
munge_err_t munge_ctx_set(munge_ctx_t ctx, int opt, ...)
{
    munge_err_t (*f)(munge_ctx_t, int, ...) =
        CALL(munge_ctx_set, munge_err_t(*)(munge_ctx_t, int, ...));
    munge_err_t e;
    va_list ap;

    va_start(ap, opt);
    switch (opt) {
    case MUNGE_OPT_SOCKET:
        e = f(ctx, opt, va_arg(ap, char *));
        break;
    case MUNGE_OPT_UID_RESTRICTION:
    case MUNGE_OPT_GID_RESTRICTION:
        e = f(ctx, opt, va_arg(ap, unsigned int));
        break;
    case MUNGE_OPT_TTL:
        e = f(ctx, opt, va_arg(ap, int));
        break;
    default:
        e = EMUNGE_BAD_ARG;
        break;
    }
    va_end(ap);
    return e;
}

const char *munge_ctx_strerror(munge_ctx_t ctx)
{
    return CALL(munge_ctx_strerror, const char *(*)(munge_ctx_t))(ctx);
}

munge_err_t munge_encode(char **cred, munge_ctx_t ctx, const void *buf,
                         int len)
{
    return CALL(munge_encode, munge_err_t(*)(char **, munge_ctx_t,
                                             const void *, int))(
        cred, ctx, buf, len);
}

munge_err_t munge_decode(const char *cred, munge_ctx_t ctx, void **buf,
                         int *len, uid_t *uid, gid_t *gid)
{
    return CALL(munge_decode,
                munge_err_t(*)(const char *, munge_ctx_t, void **, int *,
                               uid_t *, gid_t *))(cred, ctx, buf, len, uid,
                                                  gid);
}

const char *munge_strerror(munge_err_t e)
{
    return CALL(munge_strerror, const char *(*)(munge_err_t))(e);
}

void nettle_hmac_sha256_set_key(struct hmac_sha256_ctx *ctx,
                                size_t key_length, const uint8_t *key)
{
    CALL(nettle_hmac_sha256_set_key,
         void (*)(struct hmac_sha256_ctx *, size_t, const uint8_t *))(
        ctx, key_length, key);
}

void nettle_hmac_sha256_update(struct hmac_sha256_ctx *ctx, size_t length,
                               const uint8_t *data)
{
    CALL(nettle_hmac_sha256_update,
         void (*)(struct hmac_sha256_ctx *, size_t, const uint8_t *))(
        ctx, length, data);
}

void nettle_hmac_sha256_digest(struct hmac_sha256_ctx *ctx, size_t length,
                               uint8_t *digest)
{
    CALL(nettle_hmac_sha256_digest,
         void (*)(struct hmac_sha256_ctx *, size_t, uint8_t *))(
        ctx, length, digest);
}

int nettle_memeql_sec(const void *a, const void *b, size_t n)
{
    return CALL(nettle_memeql_sec, int (*)(const void *, const void *,
                                           size_t))(a, b, n);
}
