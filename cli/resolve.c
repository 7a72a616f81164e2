/* resolve.c - what the commands share about the catalog: where it is
 * (--catalog, $WEFT_CATALOG, or weftd's configuration, read with weftd's
 * own parser), opening it read-only, finding the trace a TRACE argument
 * names, and a trace row as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "frame.h"
#include "out.h"
#include "weftd_config.h"
#include "weft_errors.h"

/* ---- the catalog -------------------------------------------------------- */

/* A user's weft without a configuration file defaults to a spool in
 * their home (weftd run as themselves); where there is none and the
 * system's weftd has its spool (the systemd unit's, or root's), that is
 * the one they mean. */
static void system_spool(weft_config *cfg)
{
    char mine[4200];
    char e[64];
    struct stat st;

    if (geteuid() == 0 || getenv("STATE_DIRECTORY") ||
        access(weft_config_default_path(), F_OK) == 0 || errno != ENOENT ||
        *cfg->catalog)
        return;
    snprintf(mine, sizeof mine, "%s/catalog.db", cfg->spool);
    if (stat(mine, &st) == 0 || errno != ENOENT ||
        stat(WEFT_SYSTEM_SPOOL "/catalog.db", &st) != 0)
        return;
    weft_config_set(cfg, "weftd", "spool", WEFT_SYSTEM_SPOOL, e, sizeof e);
}

int weft__cli_load_config(weft_config *cfg, char *err, size_t errlen)
{
    int rc;

    weft_config_init(cfg);
    rc = weft_config_load_file(cfg, weft_config_default_path(), 1, err,
                               errlen);
    if (rc == 0)
        system_spool(cfg);
    if (rc == 0)
        rc = weft_config_finish(cfg, err, errlen);
    return rc;
}

char *weft__cli_resolve_catalog(const char *opt, int *node)
{
    const char *env = getenv("WEFT_CATALOG");
    weft_config cfg;
    char err[512] = "";
    char *path = NULL;

    if (opt)
        return weft__cli_xstrdup(opt);
    if (env && *env)
        return weft__cli_xstrdup(env);
    if (weft__cli_load_config(&cfg, err, sizeof err) < 0)
        weft__cli_fail("%s", err);
    else if (!cfg.catalog || !*cfg.catalog)
        weft__cli_fail("no catalog configured in %s",
                       weft_config_default_path());
    else
        path = weft__cli_xstrdup(cfg.catalog);
    *node = cfg.cluster_head && *cfg.cluster_head;
    weft_config_free(&cfg);
    return path;
}

int weft__cli_open_catalog(cli *c)
{
    char *msg = NULL;
    int rc;

    if (weft__cli_asks(c, R_OK)) {
        if (!c->image && weft__cli_ask(WEFT__QUERY__KIND__CATALOG, NULL, 0, !c->node,
                                       &c->image, &c->image_len) != EXIT_OK)
            return EXIT_FAIL;
        rc = weft_catalog_open_image(c->image, c->image_len,
                                     c->catalog_path, &c->catalog, &msg);
    } else {
        rc = weft_catalog_open(c->catalog_path, 1, &c->catalog, &msg);
    }

    if (rc == WEFT_ENOTFOUND)
        weft__cli_fail("no catalog at %s (has weftd run with this "
                       "configuration?)", c->catalog_path);
    else if (rc < 0)
        weft__cli_fail("%s", msg ? msg : weft_strerror(rc));
    free(msg);
    return rc < 0 ? EXIT_FAIL : EXIT_OK;
}

/* ---- finding a trace ---------------------------------------------------- */

/* Was `what` taken as the name of row (not its id or key)? */
static int found_by_name(const char *what, const weft_trace_row *row)
{
    char id[32];

    snprintf(id, sizeof id, "%" PRId64, row->id);
    return strcmp(row->name, what) == 0 && strcmp(row->key, what) != 0 &&
           strcmp(id, what) != 0;
}

int weft__cli_find(cli *c, const char *what, weft_trace_row *row)
{
    int rc = weft_catalog_find(c->catalog, what, row);

    if (rc == WEFT_ENOTFOUND) {
        char *w = weft__cli_escape(what);
        char *path = weft__cli_escape(c->catalog_path);
        weft__cli_fail("no trace '%s' in %s", w, path);
        free(w);
        free(path);
        return EXIT_FAIL;
    }
    if (rc < 0)
        return weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
    if (!c->runs)  /* weft compare --runs takes the newest runs, no one */
        weft__cli_note_name(c, what, row);
    return EXIT_OK;
}

void weft__cli_note_name(cli *c, const char *what, const weft_trace_row *row)
{
    uint64_t n = 0;

    /* Runs share names: say which one a name picked. */
    if (found_by_name(what, row) &&
        weft_catalog_count_name(c->catalog, what, &n) == 0 && n > 1) {
        char *w = weft__cli_escape(what), *k = weft__cli_escape(row->key);
        fprintf(stderr, "weft: %" PRIu64 " traces are named '%s'; taking "
                "the newest (%s); use a key to pick another (weft list "
                "--name '%s')\n", n, w, k, w);
        free(w);
        free(k);
    }
}

int weft__cli_no_profile(const weft_trace_row *row)
{
    char *name = weft__cli_escape(row->name);

    if (weft__cli_row_unfinished(row))
        weft__cli_fail("trace '%s' (#%" PRId64 ") is still %s: its "
                       "profile is made when it is converted", name,
                       row->id, row->state);
    else
        weft__cli_fail("trace '%s' (#%" PRId64 ") has no region "
                       "profile (no Enter and Leave events)", name,
                       row->id);
    free(name);
    return EXIT_FAIL;
}

/* "a,b" -> ["a", "b"] ("" -> []). */
static json_t *hosts_json(const char *hosts)
{
    json_t *a = json_array();
    const char *p = hosts ? hosts : "";

    while (a && *p) {
        size_t n = strcspn(p, ",");
        char *h = weft__cli_xrealloc(NULL, n + 1);
        memcpy(h, p, n);
        h[n] = 0;
        if (json_array_append_new(a, weft__cli_jstr(h)) != 0) {
            json_decref(a);
            a = NULL;
        }
        free(h);
        p += n + (p[n] == ',');
    }
    return a;
}

int weft__cli_row_unfinished(const weft_trace_row *row)
{
    return strcmp(row->state, WEFT_STATE_RECORDING) == 0 ||
           strcmp(row->state, WEFT_STATE_CONVERTING) == 0;
}

int weft__cli_row_live(const weft_trace_row *row)
{
    return weft__cli_row_unfinished(row) && row->live_updated > 0;
}

double weft__cli_row_span(const weft_trace_row *row)
{
    if (weft__cli_row_unfinished(row) || !row->events ||
        !row->timer_resolution || row->time_last < row->time_first)
        return -1;
    return (double)(row->time_last - row->time_first) /
           (double)row->timer_resolution;
}

int64_t weft__cli_row_wall(const weft_trace_row *row)
{
    if (weft__cli_row_unfinished(row) || !row->finished || !row->created ||
        row->finished < row->created)
        return -1;
    return row->finished - row->created;
}

json_t *weft__cli_trace_json(const weft_trace_row *row)
{
    json_t *o = json_object();
    char *archive = weft__cli_archive_of(row->path);

    if (!o) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    weft__cli_jset(o, "id", json_integer(row->id));
    weft__cli_jset(o, "key", weft__cli_jstr(row->key));
    weft__cli_jset(o, "name", weft__cli_jstr(row->name));
    weft__cli_jset(o, "uid", json_integer(row->uid));
    weft__cli_jset(o, "state", weft__cli_jstr(row->state));
    weft__cli_jset(o, "created", json_integer(row->created));
    weft__cli_jset(o, "finished", row->finished
                                  ? json_integer(row->finished) : json_null());
    weft__cli_jset(o, "path", weft__cli_jstr(row->path));
    weft__cli_jset(o, "archive", weft__cli_jstr(archive));
    weft__cli_jset(o, "members", json_integer(row->members));
    weft__cli_jset(o, "locations", weft__cli_ju64(row->locations));
    weft__cli_jset(o, "events", weft__cli_ju64(row->events));
    weft__cli_jset(o, "bytes", weft__cli_ju64(row->bytes));
    weft__cli_jset(o, "dropped", weft__cli_ju64(row->dropped));
    weft__cli_jset(o, "time_first", weft__cli_ju64(row->time_first));
    weft__cli_jset(o, "time_last", weft__cli_ju64(row->time_last));
    weft__cli_jset(o, "timer_resolution",
                   weft__cli_ju64(row->timer_resolution));
    /* the two durations weft show tells apart; null while not known */
    weft__cli_jset(o, "duration_s", weft__cli_row_span(row) >= 0
                   ? json_real(weft__cli_row_span(row)) : json_null());
    weft__cli_jset(o, "wall_time_s", weft__cli_row_wall(row) >= 0
                   ? json_integer(weft__cli_row_wall(row)) : json_null());
    weft__cli_jset(o, "clock", weft__cli_jstr(row->clock));
    weft__cli_jset(o, "error", weft__cli_jstr(row->error));
    weft__cli_jset(o, "retry_at", row->retry_at ? json_integer(row->retry_at)
                                                : json_null());
    weft__cli_jset(o, "hosts", hosts_json(row->hosts));
    weft__cli_jset(o, "command", weft__cli_jstr(row->command));
    weft__cli_jset(o, "job_id", weft__cli_jstr(row->job_id));
    weft__cli_jset(o, "run", weft__cli_jstr(row->run));
    weft__cli_jset(o, "protocol_version",
                   json_integer(row->protocol_version));
    /* Only while the figures may change: a finished trace's are final. */
    if (weft__cli_row_unfinished(row)) {
        weft__cli_jset(o, "live", json_boolean(weft__cli_row_live(row)));
        weft__cli_jset(o, "joined", json_integer(row->joined));
        weft__cli_jset(o, "live_updated", row->live_updated
                                          ? json_integer(row->live_updated)
                                          : json_null());
    }
    free(archive);
    return o;
}

static int tag_json(const weft_tag *tag, void *arg)
{
    weft__cli_jset(arg, tag->key, weft__cli_jstr(tag->value));
    return 0;
}

json_t *weft__cli_tags_json(cli *c, const weft_trace_row *row)
{
    json_t *o = json_object();

    if (!o) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    if (weft_catalog_tags(c->catalog, row->id, tag_json, o) < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        json_decref(o);
        return NULL;
    }
    return o;
}
