/* status.c - weft status: what the running weftd is doing, read from the
 * status file it rewrites every second next to the catalog.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "frame.h"
#include "out.h"

/* weftd rewrites DIR/weftd.status (DIR: the catalog's directory) every
 * second while it runs; see daemon/main.c. */
#define STATUS_STALE_SECONDS 5

static char *status_path(const char *catalog)
{
    const char *slash = strrchr(catalog, '/');
    char *p = NULL;

    if (!slash)
        p = weft__cli_xstrdup("weftd.status");
    else if (asprintf(&p, "%.*s/weftd.status", (int)(slash - catalog),
                      catalog) < 0)
        p = NULL;
    return p;
}

static json_int_t jint(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* Is the pid of the weftd that wrote status st there? */
static int pid_there(json_t *st)
{
    json_int_t pid = jint(st, "pid");

    return pid > 0 && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

/* Was status st written within the last STATUS_STALE_SECONDS? */
static int fresh(json_t *st)
{
    return (json_int_t)time(NULL) - jint(st, "updated") <=
           STATUS_STALE_SECONDS;
}

int weft__cli_weftd_running(const char *catalog)
{
    char *path = status_path(catalog);
    json_t *st;
    int running;

    if (!path || weft__cli_private(path, R_OK)) {
        free(path);
        return -1;
    }
    /* Not running: no status (weftd removes it when it stops), or one
     * both stale and of a pid that is gone. Only one of them (a status
     * stale on a full disk, a pid of another host's) is not enough. */
    st = json_load_file(path, 0, NULL);
    running = st && (pid_there(st) || fresh(st));
    json_decref(st);
    free(path);
    return running;
}

/* "limits reached: max_buffered 3, idle_timeout 1" (those not 0). */
static void print_limits_reached(json_t *limits)
{
    const char *key;
    json_t *v;
    int any = 0;

    printf("limits reached:");
    json_object_foreach(limits, key, v) {
        if (json_integer_value(v) == 0)
            continue;
        printf("%s %s %lld", any ? "," : "", key,
               (long long)json_integer_value(v));
        any = 1;
    }
    printf("%s\n", any ? " (times)" : " none");
}

/* "recording: N traces" and a line per trace. */
static void print_recording(json_t *traces)
{
    size_t i;
    json_t *t;

    printf("recording:   %zu traces\n", json_array_size(traces));
    json_array_foreach(traces, i, t) {
        char *name = weft__cli_escape(
            json_string_value(json_object_get(t, "name")));
        printf("  %-30s %lld/%lld members connected, %lld done, %lld "
               "events, %lld in the archive\n", name,
               (long long)jint(t, "connected"), (long long)jint(t, "size"),
               (long long)jint(t, "goodbyes"), (long long)jint(t, "events"),
               (long long)jint(t, "written"));
        free(name);
    }
}

/* "for N s" of a unix time `since`, at the status's `updated`. */
static long long ago(json_t *o, json_int_t updated)
{
    json_int_t d = updated - jint(o, "since");

    return d < 0 ? 0 : (long long)d;
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "";
}

/* "archive_root: ok (PATH)" or why not, indented by `indent`, for an
 * "archive" object of the status (a node's view of its head's
 * archive_root); nothing when the head has none. */
static void print_archive(const json_t *a, const char *indent)
{
    const char *state = jstr(a, "state");
    char *path;

    if (!a || !*state || strcmp(state, "none") == 0)
        return;
    path = weft__cli_escape(jstr(a, "path"));
    printf("%sarchive_root: %s (%s)", indent, state, path);
    if (*jstr(a, "error")) {
        char *e = weft__cli_escape(jstr(a, "error"));
        printf(": %s", e);
        free(e);
    }
    printf("\n");
    free(path);
}

/* "nodes: N linked, M gone" and a line per node; "head: ..." when this
 * weftd is a node. Nothing for a weftd of one machine. */
static void print_cluster(json_t *st, json_int_t updated)
{
    json_t *nodes = json_object_get(st, "nodes"), *head, *n;
    size_t i, linked = 0;

    json_array_foreach(nodes, i, n)
        linked += strcmp(jstr(n, "state"), "linked") == 0;
    if (json_array_size(nodes) > 0)
        printf("nodes:       %zu linked, %zu gone\n", linked,
               json_array_size(nodes) - linked);
    json_array_foreach(nodes, i, n) {
        char *name = weft__cli_escape(jstr(n, "name"));
        printf("  %-30s %s for %lld s, from %s, weftd %s, %lld links\n",
               name, jstr(n, "state"), ago(n, updated), jstr(n, "peer"),
               jstr(n, "server"), (long long)jint(n, "links"));
        if (strcmp(jstr(n, "state"), "linked") == 0)
            printf("  %-30s %lld connections (%lld processes served "
                   "here), %lld traces recording, %lld events, %lld not in "
                   "the archives yet\n", "",
                   (long long)jint(n, "connections"),
                   (long long)jint(n, "relayed"),
                   (long long)jint(n, "recording"),
                   (long long)jint(n, "events"), (long long)jint(n, "lag"));
        if (strcmp(jstr(n, "state"), "linked") == 0)
            print_archive(json_object_get(n, "archive"),
                          "                                 ");
        free(name);
    }
    if (!(head = json_object_get(st, "head")))
        return;
    printf("head:        %s, %s for %lld s", jstr(head, "address"),
           jstr(head, "state"), ago(head, updated));
    if (*jstr(head, "name"))
        printf(" (host %s)", jstr(head, "name"));
    printf(", %lld links made, %lld connections forwarded now, %lld "
           "processes journaled here not all at the head yet\n",
           (long long)jint(head, "links"), (long long)jint(head, "forwarded"),
           (long long)jint(head, "parts"));
    if (*jstr(head, "error"))
        printf("  last link ended: %s\n", jstr(head, "error"));
    print_archive(json_object_get(head, "archive"), "  ");
}

/* weftd's answer to an ordinary user: their own figures only. */
static int user_scope(json_t *st)
{
    const char *scope = json_string_value(json_object_get(st, "scope"));

    return scope && strcmp(scope, "user") == 0;
}

static void print_user(json_t *st)
{
    printf("connections: %lld of yours (max_connections %lld)\n",
           (long long)jint(st, "connections"),
           (long long)jint(st, "max_connections"));
    printf("events:      %lld in your traces recording\n",
           (long long)jint(st, "events"));
    print_recording(json_object_get(st, "recording"));
    printf("(your figures only: the whole machine's are for root, weftd's "
           "user and admin_group)\n");
}

int weft__cmd_status(cli *c)
{
    char *path = status_path(c->catalog_path);
    json_error_t jerr;
    json_t *st = NULL;
    int status = EXIT_FAIL;
    json_int_t pid, updated;

    if (!path)
        return weft__cli_fail("out of memory");
    if (weft__cli_private(path, R_OK)) {
        /* weftd's alone: it says what this user may see (ask.c) */
        unsigned char *text = NULL;
        size_t len = 0;
        if (weft__cli_ask(WEFT__QUERY__KIND__STATUS, NULL, 0, 1, &text, &len)
            != EXIT_OK)
            goto out;
        st = json_loadb((const char *)text, len, 0, &jerr);
        free(text);
        if (!st) {
            weft__cli_fail("weftd's status does not parse: %s", jerr.text);
            goto out;
        }
    } else {
        st = json_load_file(path, 0, &jerr);
    }
    if (!st) {
        weft__cli_fail("weftd is not running with this configuration (no "
                       "status in %s)", path);
        goto out;
    }
    pid = jint(st, "pid");
    updated = jint(st, "updated");
    if (!pid_there(st) || !fresh(st)) {
        weft__cli_fail("weftd is not running (its last status in %s is "
                       "%lld s old)", path,
                       (long long)((json_int_t)time(NULL) - updated));
        goto out;
    }
    if (c->json) {
        status = weft__cli_print_json(st);
        st = NULL;
        goto out;
    }
    printf("weftd %s, pid %lld, up %lld s, listening on %s\n",
           json_string_value(json_object_get(st, "version")),
           (long long)pid, (long long)(updated - jint(st, "started")),
           json_string_value(json_object_get(st, "listen")));
    if (user_scope(st)) {
        print_user(st);
        status = EXIT_OK;
        goto out;
    }
    printf("connections: %lld (max_connections %lld), %lld paused by "
           "backpressure\n", (long long)jint(st, "connections"),
           (long long)jint(st, "max_connections"),
           (long long)jint(st, "paused"));
    printf("events/s:    %lld\n", (long long)jint(st, "events_per_s"));
    printf("since start: %lld events, %lld bytes, %lld clients refused\n",
           (long long)jint(st, "events"), (long long)jint(st, "bytes"),
           (long long)jint(st, "refused"));
    printf("dropped:     %lld records (reported by clients that said "
           "goodbye)\n", (long long)jint(st, "dropped"));
    printf("buffered:    %lld bytes of frames (max_buffered %lld), file "
           "descriptor limit %lld\n", (long long)jint(st, "buffered"),
           (long long)jint(st, "max_buffered"),
           (long long)jint(st, "fd_limit"));
    print_limits_reached(json_object_get(st, "limits_reached"));
    printf("converting:  %lld traces", (long long)jint(st, "converting"));
    if (json_object_get(st, "max_conversions"))
        printf(" (%lld running, %lld waiting; max_conversions %lld)",
               (long long)jint(st, "conversions_running"),
               (long long)jint(st, "conversions_queued"),
               (long long)jint(st, "max_conversions"));
    printf("\n");
    print_recording(json_object_get(st, "recording"));
    print_cluster(st, updated);
    status = EXIT_OK;
out:
    json_decref(st);
    free(path);
    return status;
}
