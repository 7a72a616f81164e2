/* weft_errors.h - the one error convention of weft.
 *
 * Every function that can fail returns 0 (or a count) on success and a
 * negative WEFT_E* code on failure. The list below yields the enum, the
 * names and the messages (weft_strerror, weft_err_name).
 */
#ifndef WEFT_ERRORS_H
#define WEFT_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_ERRNO_MAP(XX)                                                   \
    XX(EINVAL,    "invalid argument")                                        \
    XX(ENOMEM,    "out of memory")                                           \
    XX(EPROTO,    "protocol error")                                          \
    XX(EVERSION,  "unsupported protocol version")                            \
    XX(ETOOBIG,   "frame or record too large")                               \
    XX(ETRUNC,    "truncated input")                                         \
    XX(EREF,      "reference to an undefined definition")                    \
    XX(ETIME,     "timestamp smaller than the previous one")                 \
    XX(ETYPE,     "unknown or misplaced record type")                        \
    XX(EIO,       "input/output error")                                      \
    XX(ECORRUPT,  "corrupt data")                                            \
    XX(ENOTFOUND, "not found")                                               \
    XX(ELIMIT,    "limit reached")                                           \
    XX(ECONNECT,  "cannot connect to weftd")                                 \
    XX(ECLOSED,   "session closed")                                          \
    XX(EOTF2,     "libotf2 error")                                           \
    XX(EDB,       "catalog error")                                           \
    XX(ESTATE,    "invalid state")                                           \
    XX(EEXIST,    "already exists")                                          \
    XX(ECONFIG,   "invalid configuration")                                   \
    XX(ECONFLICT, "conflicting definitions")                                 \
    XX(EAUTH,     "authentication failed")                                   \
    XX(EENDED,    "trace already ended with every goodbye")

enum {
    WEFT_OK = 0,
    WEFT__ERRNO_BASE = -1000,
#define WEFT__ERR_ENUM(name, msg) WEFT_##name,
    WEFT_ERRNO_MAP(WEFT__ERR_ENUM)
#undef WEFT__ERR_ENUM
    WEFT__ERRNO_END
};

/* Message for a WEFT_E* code ("unknown error" for anything else). */
const char *weft_strerror(int code);
/* Name of a WEFT_E* code without the prefix, e.g. "EREF". */
const char *weft_err_name(int code);

#ifdef __cplusplus
}
#endif
#endif
