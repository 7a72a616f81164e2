/* cred.c - MUNGE credentials (see cred.h). */
#include "cred.h"

#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

/* A context talking to munged at socket (libmunge's default if NULL or
 * ""). NULL with err filled. */
static munge_ctx_t context(const char *socket, char *err, size_t errlen)
{
    munge_ctx_t ctx = munge_ctx_create();

    if (!ctx) {
        snprintf(err, errlen, "munge_ctx_create: out of memory");
        return NULL;
    }
    if (socket && socket[0] &&
        munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
        snprintf(err, errlen, "munge socket %s: %s", socket,
                 munge_ctx_strerror(ctx));
        munge_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

/* See cred.h. */
int weft_auth_encode(const char *socket, int64_t for_uid, unsigned ttl,
                     const void *payload, size_t len, char **cred,
                     char *err, size_t errlen)
{
    munge_ctx_t ctx;
    munge_err_t e;
    int rc = WEFT_EAUTH;

    *cred = NULL;
    if (len > WEFT_AUTH_MAX_PAYLOAD) {
        snprintf(err, errlen, "credential payload of %zu bytes", len);
        return WEFT_EAUTH;
    }
    if (!(ctx = context(socket, err, errlen)))
        return WEFT_EAUTH;
    if (for_uid != WEFT_AUTH_ANYONE &&
        munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, (uid_t)for_uid) !=
            EMUNGE_SUCCESS) {
        snprintf(err, errlen, "munge: %s", munge_ctx_strerror(ctx));
        goto out;
    }
    if (ttl && munge_ctx_set(ctx, MUNGE_OPT_TTL, (int)ttl) != EMUNGE_SUCCESS) {
        snprintf(err, errlen, "munge: %s", munge_ctx_strerror(ctx));
        goto out;
    }
    e = munge_encode(cred, ctx, payload, (int)len);
    if (e != EMUNGE_SUCCESS) {
        const char *why = munge_ctx_strerror(ctx);
        snprintf(err, errlen, "munge_encode: %s", why ? why
                                                      : munge_strerror(e));
        free(*cred);
        *cred = NULL;
        goto out;
    }
    rc = 0;
out:
    munge_ctx_destroy(ctx);
    return rc;
}

/* See cred.h. */
int weft_auth_decode(const char *socket, const uint8_t *cred, size_t len,
                     weft_auth_id *id, char *err, size_t errlen)
{
    munge_ctx_t ctx = NULL;
    munge_err_t e;
    char *text = NULL;
    void *payload = NULL;
    int plen = 0, rc = WEFT_EAUTH;
    uid_t uid;
    gid_t gid;

    memset(id, 0, sizeof *id);
    if (len == 0) {
        snprintf(err, errlen, "empty credential");
        return WEFT_EAUTH;
    }
    if (len > WEFT_AUTH_MAX_CREDENTIAL) {
        snprintf(err, errlen, "credential of %zu bytes (at most %d)", len,
                 WEFT_AUTH_MAX_CREDENTIAL);
        return WEFT_EAUTH;
    }
    if (memchr(cred, 0, len)) {
        snprintf(err, errlen, "credential with a NUL byte");
        return WEFT_EAUTH;
    }
    if (!(text = malloc(len + 1))) {
        snprintf(err, errlen, "out of memory");
        return WEFT_ENOMEM;
    }
    memcpy(text, cred, len);
    text[len] = 0;
    if (!(ctx = context(socket, err, errlen)))
        goto out;
    e = munge_decode(text, ctx, &payload, &plen, &uid, &gid);
    if (e != EMUNGE_SUCCESS) {
        const char *why = munge_ctx_strerror(ctx);
        snprintf(err, errlen, "%s", why ? why : munge_strerror(e));
        goto out;
    }
    if (plen < 0 || (size_t)plen > WEFT_AUTH_MAX_PAYLOAD) {
        snprintf(err, errlen, "credential payload of %d bytes (at most %d)",
                 plen, WEFT_AUTH_MAX_PAYLOAD);
        goto out;
    }
    id->uid = (uint32_t)uid;
    id->gid = (uint32_t)gid;
    id->payload_len = (size_t)plen;
    if (plen > 0)
        memcpy(id->payload, payload, (size_t)plen);
    rc = 0;
out:
    free(payload);
    free(text);
    if (ctx)
        munge_ctx_destroy(ctx);
    return rc;
}
