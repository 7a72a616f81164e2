/* ifilter.h - WEFT_FILTER, the filter of the recorders: parsing the rule
 * list and matching names against it, the functions of
 * libweft-instrument and the calls libweft-pthread wraps. Pure functions
 * over strings: no globals, no I/O. Part of libweft.so, exported to the
 * recorder libraries (WEFT_RECORDER_0, recorder.h).
 *
 * Syntax: rules separated by commas, each an fnmatch(3) glob with an
 * optional sign: "+pattern" (or a bare "pattern") includes the functions
 * whose name matches, "-pattern" excludes them. Blanks around a rule are
 * ignored. The first rule that matches decides; a name that matches no
 * rule is included. So "-helper_*" traces everything but helper_*, and
 * "+main,+solve*,-*" traces main and solve* only.
 */
#ifndef WEFT_IFILTER_H
#define WEFT_IFILTER_H

#include <stddef.h>

#define WEFT__IFILTER_API __attribute__((visibility("default")))

/* Limits of a WEFT_FILTER value; longer lists are rejected as malformed. */
#define WEFT__IFILTER_MAX_RULES 256
#define WEFT__IFILTER_MAX_PATTERN 255 /* bytes of one pattern, sign excluded */

typedef struct weft__ifilter_rule {
    int include;   /* 1: "+" or bare, 0: "-" */
    char *pattern; /* NUL-terminated glob; owned by the filter */
} weft__ifilter_rule;

typedef struct weft__ifilter {
    size_t n;                  /* rules in `rules` */
    weft__ifilter_rule *rules; /* in the order given; NULL when n == 0 */
} weft__ifilter;

/* Parses `spec` (a WEFT_FILTER value; NULL or "" is the empty filter,
 * which includes everything) into *f, which the caller frees with
 * weft__ifilter_free. Returns 0; WEFT_EINVAL with a message naming the
 * bad rule in err (err_len bytes, always NUL-terminated) and *f empty; or
 * WEFT_ENOMEM. */
WEFT__IFILTER_API int weft__ifilter_parse(const char *spec, weft__ifilter *f,
                                          char *err, size_t err_len);

/* 1 if the function called `name` is to be traced, else 0. */
WEFT__IFILTER_API int weft__ifilter_match(const weft__ifilter *f,
                                          const char *name);
/* The same for a function with two names (a C++ function's demangled
 * name and its symbol; alt may be NULL or equal to name): a rule applies
 * when its pattern matches either. */
WEFT__IFILTER_API int weft__ifilter_match2(const weft__ifilter *f,
                                           const char *name, const char *alt);

/* Frees the rules of *f and leaves it empty. Idempotent. */
WEFT__IFILTER_API void weft__ifilter_free(weft__ifilter *f);

#endif
