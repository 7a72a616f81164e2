/* testhook.c - WEFT_TEST_STOP_AT (testhook.h). */
#include "testhook.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

static const char *const phases[] = {
    "hello", "stream", "unify", "defs", "commit", "committed",
};

int weft_testhook_init(weft_testhook *h, char *err, size_t errlen)
{
    const char *v = getenv("WEFT_TEST_STOP_AT");
    size_t n;
    char *end;

    memset(h, 0, sizeof *h);
    if (!v || !*v)
        return 0;
    n = strcspn(v, ":");
    for (size_t i = 0; i < sizeof phases / sizeof *phases; i++)
        if (strlen(phases[i]) == n && strncmp(v, phases[i], n) == 0)
            memcpy(h->phase, v, n);
    if (!h->phase[0]) {
        snprintf(err, errlen, "WEFT_TEST_STOP_AT=%s: unknown phase (hello, "
                 "stream, unify, defs, commit or committed, then :N "
                 "optionally)", v);
        return WEFT_ECONFIG;
    }
    h->at = 1;
    if (v[n] == ':') {
        errno = 0;
        h->at = strtoull(v + n + 1, &end, 10);
        if (errno || v[n + 1] < '0' || v[n + 1] > '9' || *end ||
            h->at == 0) {
            snprintf(err, errlen, "WEFT_TEST_STOP_AT=%s: the count after "
                     "':' is not a number from 1", v);
            return WEFT_ECONFIG;
        }
    }
    h->on = 1;
    return 0;
}

void weft_testhook_reach(weft_testhook *h, const char *phase)
{
    if (!h || !h->on || strcmp(phase, h->phase) != 0 ||
        atomic_fetch_add(&h->seen, 1) + 1 != h->at)
        return;
    fprintf(stderr, "weftd: test: stopping at %s (WEFT_TEST_STOP_AT)\n",
            phase);
    raise(SIGSTOP);
}
