/* rm.c - weft rm TRACE...: remove traces, their directory in the spool
 * (SPOOL/traces/KEY, with the archive) and their catalog rows. Nothing
 * outside a spool is ever removed: a trace directory must resolve to
 * exactly SPOOL/traces/KEY of --spool, of weftd's configuration or of
 * the catalog's directory.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "frame.h"
#include "out.h"
#include "spool.h"
#include "weftd_config.h"
#include "weft_errors.h"

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) {
        char *p = weft__cli_escape(path);
        weft__cli_fail("cannot remove %s: %s", p, strerror(errno));
        free(p);
        return -1;
    }
    return 0;
}

/* Is dir a weftd spool (has it a traces/ directory)? */
static int is_spool(const char *dir)
{
    struct stat st;
    char *p = NULL;
    int yes;

    if (asprintf(&p, "%s/traces", dir) < 0)
        return 0;
    yes = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return yes;
}

/* Adds the real path of dir to spools[*n] when it is a spool and not
 * there yet. */
static void add_spool(const char *dir, char **spools, size_t *n)
{
    char *real = dir ? realpath(dir, NULL) : NULL;

    if (!real)
        return;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(spools[i], real) == 0) {
            free(real);
            return;
        }
    if (is_spool(real))
        spools[(*n)++] = real;
    else
        free(real);
}

/* The spools whose traces rm may remove, as real paths (malloc'd), in
 * spools[0..*n): --spool DIR alone when given; else the spool of weftd's
 * configuration (the file the catalog is found through) and the
 * catalog's directory (the catalog's default place is SPOOL/catalog.db),
 * each if it is a spool. Returns EXIT_OK, or EXIT_FAIL after saying why
 * a --spool is refused. */
static int rm_spools(const cli *c, char *spools[2], size_t *n)
{
    const char *slash = strrchr(c->catalog_path, '/');
    weft_config cfg;
    char err[512], *dir = NULL;

    *n = 0;
    if (c->spool) {
        char *s = weft__cli_escape(c->spool);
        struct stat st;
        int status = EXIT_OK;
        if (stat(c->spool, &st) != 0)
            status = weft__cli_fail("--spool %s: %s", s, strerror(errno));
        else if (!S_ISDIR(st.st_mode) || !is_spool(c->spool))
            status = weft__cli_fail("--spool %s: not a weftd spool (it has "
                                    "no traces/ directory); not removing "
                                    "anything", s);
        else
            add_spool(c->spool, spools, n);
        free(s);
        if (status == EXIT_OK && *n == 0)
            status = weft__cli_fail("--spool: cannot resolve the directory");
        return status;
    }
    if (weft__cli_load_config(&cfg, err, sizeof err) == 0)
        add_spool(cfg.spool, spools, n);
    weft_config_free(&cfg);
    if (!slash)
        dir = weft__cli_xstrdup(".");
    else if (asprintf(&dir, "%.*s", (int)(slash - c->catalog_path + (slash ==
                      c->catalog_path)), c->catalog_path) < 0)
        dir = NULL;
    add_spool(dir, spools, n);
    free(dir);
    return EXIT_OK;
}

/* Is real (a real path) ROOT/KEY, the archive's place outside the spool
 * (archive_root) of the trace directory tdir? */
static int archive_of(const char *tdir, const char *real)
{
    char *o = weft_spool_archive_outside(tdir);
    char *r = o ? realpath(o, NULL) : NULL;
    int same = r && strcmp(r, real) == 0;

    free(o);
    free(r);
    return same;
}

/* The trace directory (SPOOL/traces/KEY, the parent of the archive, or
 * the directory whose link names the archive outside the spool) of
 * row, checked to be exactly SPOOL/traces/KEY of one of the spools. Returns 0 and sets *dir (malloc'd; NULL when nothing of the
 * trace is on disk), or EXIT_FAIL after saying why. */
static int rm_trace_dir(const weft_trace_row *row, char **spools,
                        size_t nspools, char **dir)
{
    const char *path = row->path;
    char *real = NULL, *parent = NULL, *slash, *want = NULL;
    int status = EXIT_FAIL;

    *dir = NULL;
    real = realpath(path, NULL);
    if (real) {
        slash = strrchr(real, '/');
        if (!slash || strcmp(slash + 1, "archive") != 0)
            goto outside;
        *slash = 0;
    } else if (errno == ENOENT) {
        /* No archive yet (or any more): its parent may still be there. */
        parent = weft__cli_xstrdup(path);
        slash = strrchr(parent, '/');
        if (!slash || strcmp(slash + 1, "archive") != 0)
            goto outside;
        *slash = 0;
        real = realpath(*parent ? parent : "/", NULL);
        if (!real && errno == ENOENT) {
            status = EXIT_OK;     /* nothing on disk to remove */
            goto out;
        }
    }
    if (!real) {
        char *p = weft__cli_escape(path);
        weft__cli_fail("trace '%s': cannot resolve %s: %s", row->key, p,
                       strerror(errno));
        free(p);
        goto out;
    }
    if (!row->key || !*row->key || strchr(row->key, '/') ||
        strcmp(row->key, ".") == 0 || strcmp(row->key, "..") == 0)
        goto outside;
    for (size_t i = 0; i < nspools; i++) {
        free(want);
        if (asprintf(&want, "%s/traces/%s", spools[i], row->key) < 0) {
            want = NULL;
            weft__cli_fail("out of memory");
            goto out;
        }
        if (strcmp(real, want) == 0 || archive_of(want, real)) {
            free(real);
            *dir = want;
            want = real = NULL;
            status = EXIT_OK;
            goto out;
        }
    }
outside: {
        char *p = weft__cli_escape(real ? real : path);
        char *k = weft__cli_escape(row->key);
        weft__sbuf where = { 0 };
        for (size_t i = 0; i < nspools; i++) {
            char *sp = weft__cli_escape(spools[i]);
            weft__cli_sb_printf(&where, "%s%s", i ? " or " : "", sp);
            free(sp);
        }
        if (nspools)
            weft__cli_fail("trace '%s': its directory %s is not in the "
                           "spool %s (as traces/%s); not removing anything "
                           "outside the spool (give the spool weftd uses "
                           "with --spool DIR)", k, p, where.s, k);
        else
            weft__cli_fail("trace '%s': no spool to remove %s from: "
                           "neither weftd's configuration (%s) nor the "
                           "catalog's directory names one; give the spool "
                           "with --spool DIR", k, p,
                           weft_config_default_path());
        free(where.s);
        free(p);
        free(k);
    }
out:
    free(want);
    free(parent);
    free(real);
    return status;
}

/* Is row a trace weft import catalogued referring to an archive outside
 * the spools (no --copy)? Then only its empty directory SPOOL/traces/KEY
 * (its key's reservation) goes with its rows, never the archive, which
 * is its owner's. Sets *dir to that directory (malloc'd) when it is
 * there. */
static int imported_outside(const weft_trace_row *row, char **spools,
                            size_t nspools, char **dir)
{
    char *real, *p = NULL;
    struct stat st;
    int outside = 1;

    *dir = NULL;
    if (!row->command || strncmp(row->command, "weft import ", 12) != 0 ||
        !row->key || !*row->key || strchr(row->key, '/') ||
        row->key[0] == '.' || !row->path || !*row->path)
        return 0;
    real = realpath(row->path, NULL);
    for (size_t i = 0; i < nspools && real; i++) {
        size_t n = strlen(spools[i]);
        if (strncmp(real, spools[i], n) == 0 && real[n] == '/')
            outside = 0;
    }
    for (size_t i = 0; i < nspools && outside && !*dir; i++) {
        if (asprintf(&p, "%s/traces/%s", spools[i], row->key) < 0)
            break;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            *dir = p;
        else
            free(p);
    }
    free(real);
    return outside;
}

static int rm_one(cli *c, char **spools, size_t nspools, const char *what)
{
    weft_trace_row row;
    char *dir = NULL, *name = NULL, *outside = NULL;
    int status = EXIT_FAIL, rc, imported = 0;

    if (weft__cli_find(c, what, &row) != EXIT_OK)
        return EXIT_FAIL;
    name = weft__cli_escape(what);
    if (!c->force && (strcmp(row.state, WEFT_STATE_RECORDING) == 0 ||
                      strcmp(row.state, WEFT_STATE_CONVERTING) == 0)) {
        weft__cli_fail("trace '%s' is %s; not removed (--force removes it "
                       "anyway)", name, row.state);
        goto out;
    }
    if ((imported = imported_outside(&row, spools, nspools, &dir))) {
        if (dir && rmdir(dir) != 0)
            fprintf(stderr, "weft rm: warning: %s: %s\n", dir,
                    strerror(errno));
    } else if (row.path && *row.path &&
               rm_trace_dir(&row, spools, nspools, &dir) != EXIT_OK) {
        goto out;
    } else if (dir && ((outside = weft_spool_archive_outside(dir)) &&
                       nftw(outside, rm_entry, 16, FTW_DEPTH | FTW_PHYS) !=
                           0)) {
        char *d = weft__cli_escape(outside);
        weft__cli_fail("trace '%s': removing its archive's %s failed%s%s; "
                       "the catalog row is kept", name, d,
                       errno ? ": " : "", errno ? strerror(errno) : "");
        free(d);
        goto out;
    } else if (dir && nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        char *d = weft__cli_escape(dir);
        weft__cli_fail("trace '%s': removing %s failed%s%s; the catalog row "
                       "is kept", name, d, errno ? ": " : "",
                       errno ? strerror(errno) : "");
        free(d);
        goto out;
    }
    rc = weft_catalog_trace_delete(c->catalog, row.id);
    if (rc < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    if (imported)
        printf("removed trace '%s' (#%" PRId64 "); its archive %s is not "
               "the spool's and stays\n", name, row.id, row.path);
    else
        printf("removed trace '%s' (#%" PRId64 ")%s%s%s%s\n", name, row.id,
               dir ? " and " : "", dir ? dir : "", outside ? " and " : "",
               outside ? outside : "");
    status = EXIT_OK;
out:
    free(dir);
    free(outside);
    free(name);
    weft_catalog_trace_free(&row);
    return status;
}

/* rm of a user who may not write the catalog (it is weftd's): weftd
 * removes each trace, if it is this user's (daemon/ask/ask.h). */
static int rm_asking(cli *c)
{
    int status = EXIT_OK;

    if (weft__cli_open_catalog(c) != EXIT_OK)
        return EXIT_FAIL;
    for (int i = 0; i < c->nargs; i++) {
        weft_trace_row row;
        unsigned char *line = NULL;
        size_t len;
        if (weft__cli_find(c, c->args[i], &row) != EXIT_OK) {
            status = EXIT_FAIL;
            continue;
        }
        if (weft__cli_ask(WEFT__QUERY__KIND__REMOVE, row.key, c->force,
                          !c->node, &line, &len) != EXIT_OK)
            status = EXIT_FAIL;
        else
            fputs((const char *)line, stdout);
        free(line);
        weft_catalog_trace_free(&row);
    }
    return status;
}

int weft__cmd_rm(cli *c)
{
    char *spools[2] = { NULL, NULL };
    char *msg = NULL;
    struct stat st;
    size_t nspools;
    int status = EXIT_OK, rc;

    if (weft__cli_asks(c, W_OK))
        return rm_asking(c);
    if (stat(c->catalog_path, &st) != 0)
        return weft__cli_fail("no catalog at %s (has weftd run with this "
                              "configuration?)", c->catalog_path);
    rc = weft_catalog_open(c->catalog_path, 0, &c->catalog, &msg);
    if (rc < 0) {
        weft__cli_fail("%s", msg ? msg : weft_strerror(rc));
        free(msg);
        return EXIT_FAIL;
    }
    free(msg);
    if (rm_spools(c, spools, &nspools) != EXIT_OK)
        return EXIT_FAIL;
    for (int i = 0; i < c->nargs; i++)
        if (rm_one(c, spools, nspools, c->args[i]) != EXIT_OK)
            status = EXIT_FAIL;
    free(spools[0]);
    free(spools[1]);
    return status;
}
