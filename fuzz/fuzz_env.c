/* fuzz_env.c - libFuzzer target for what libweft reads from the
 * environment: every WEFT_* variable and the launchers' (weft__config_parse,
 * client/config.c: WEFT_SERVER, WEFT_TAGS, WEFT_AUTH, ...) and WEFT_FILTER
 * (weft__ifilter_parse and _match, client/ifilter.c).
 *
 * Input: lines NAME=VALUE, the environment the parser sees (the last
 * value of a name counts); a line "?NAME" is matched against the
 * WEFT_FILTER given, if it parsed. Checked beyond memory safety: a
 * configuration is taken (0) or refused with WEFT_ECONFIG only; one taken
 * has a trace name, a rank below its size, at most WEFT__MAX_TAGS tags
 * with keys and values inside tagbuf, bounded sizes, and without
 * WEFT_SERVER the system weftd's socket exactly when the input's first
 * byte is odd (it stands for the socket being there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "client_config.h"
#include "ifilter.h"
#include "weft_errors.h"

#define MAX_VARS 64

typedef struct envset {
    char *name[MAX_VARS], *value[MAX_VARS];
    size_t n;
} envset;

static const char *lookup(const char *name, void *arg)
{
    const envset *e = arg;

    for (size_t i = e->n; i-- > 0;)
        if (strcmp(e->name[i], name) == 0)
            return e->value[i];
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    /* An odd first byte: the system weftd's socket is there. */
    const weft__proc proc = { "fuzzed", "host1", 4242,
                              1700000000000000000ull,
                              size && (data[0] & 1) ? WEFT__SYSTEM_SOCKET
                                                    : NULL };
    weft__ifilter filter = { 0, NULL };
    weft__config *c = malloc(sizeof *c);
    char err[256];
    int have_filter = 0, rc;
    envset e = { { 0 }, { 0 }, 0 };

    CHECK(text && c);
    memcpy(text, data, size);
    text[size] = 0;
    /* Lines: every newline ends one (text[size] ends the last). */
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\n')
            text[i] = 0;
    for (size_t off = 0; off <= size && e.n < MAX_VARS;) {
        char *l = text + off, *eq = strchr(l, '=');
        off += strlen(l) + 1;
        if (l[0] == '?' || !eq)
            continue;
        *eq = 0; /* the name ends here; the "?" lines are untouched */
        e.name[e.n] = l;
        e.value[e.n++] = eq + 1;
    }
    rc = weft__config_parse(lookup, &e, &proc, c);
    CHECK(rc == 0 || rc == WEFT_ECONFIG);
    if (rc == 0) {
        CHECK(c->trace[0] != 0);
        /* a process of weft run's tree: weftd gives the rank; else a
         * rank below a size of at least 1 */
        CHECK(c->tree ? c->size == 0 && c->rank == UINT32_MAX && c->run[0]
                      : c->size >= 1 && c->rank < c->size && !c->root);
        CHECK(c->ntags <= WEFT__MAX_TAGS);
        for (uint32_t i = 0; i < c->ntags; i++) {
            CHECK(c->tag_key[i] <= WEFT__TAGS_MAX);
            CHECK(c->tag_value[i] <= WEFT__TAGS_MAX);
            CHECK(strlen(c->tagbuf + c->tag_key[i]) <= WEFT__TAG_KEY_MAX);
        }
        CHECK(c->buffer_size >= WEFT__MIN_BUFFER &&
              c->buffer_size <= WEFT__MAX_BUFFER);
        CHECK(c->pool_size >= WEFT__MIN_POOL && c->pool_size <= WEFT__MAX_POOL);
        CHECK(c->is_unix ? c->path[0] != 0 : c->host[0] && c->port[0]);
        /* no WEFT_SERVER: the system weftd's socket if there, else TCP */
        CHECK(lookup("WEFT_SERVER", &e) ||
              (proc.system_socket
                   ? c->is_unix && !strcmp(c->path, WEFT__SYSTEM_SOCKET)
                   : !c->is_unix && !strcmp(c->server,
                                            WEFT__DEFAULT_SERVER)));
        /* WEFT_TSC_FROM: all of it or nothing */
        CHECK(c->tsc_from_tsc
                  ? c->tsc_from_ns && c->tsc_from_host[0] &&
                        strlen(c->tsc_from_host) < sizeof c->tsc_from_host
                  : !c->tsc_from_ns && !c->tsc_from_host[0]);
    }
    if (lookup("WEFT_FILTER", &e)) {
        rc = weft__ifilter_parse(lookup("WEFT_FILTER", &e), &filter, err,
                                 sizeof err);
        CHECK(rc == 0 || err[0] != 0);
        have_filter = rc == 0;
        CHECK(!have_filter || filter.n <= WEFT__IFILTER_MAX_RULES);
    }
    /* Names to match: the "?NAME" lines. An env line was cut at its '='
     * too, so its value is visited as a line of its own: harmless. */
    for (size_t off = 0; have_filter && off <= size;) {
        const char *l = text + off;
        off += strlen(l) + 1;
        if (l[0] == '?') {
            rc = weft__ifilter_match(&filter, l + 1);
            CHECK(rc == 0 || rc == 1);
        }
    }
    weft__ifilter_free(&filter);
    free(c);
    free(text);
    return 0;
}
