/* path.c - weft path TRACE: the path of a trace's OTF2 archive (its anchor
 * file, DIR/traces.otf2, or with --dir the directory), verbatim on one
 * line for scripts: otf2-print "$(weft path run42)". A trace without an
 * archive (still recording or converting, failed, removed by retention,
 * or gone from the disk) is an error saying why, never a path. --json
 * prints both (archive, dir) with the trace's id, key, name and state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"

/* Says why trace row has no archive to show, or returns EXIT_OK. */
static int has_archive(const weft_trace_row *row, const char *anchor)
{
    char *name = weft__cli_escape(row->name);
    int status = EXIT_FAIL;
    struct stat st;

    if (weft__cli_row_unfinished(row)) {
        weft__cli_fail("trace '%s' (#%" PRId64 ") is still %s: its archive "
                       "is written when it is converted (weft wait waits "
                       "for that)", name, row->id, row->state);
    } else if (strcmp(row->state, WEFT_STATE_FAILED) == 0 ||
               strcmp(row->state, WEFT_STATE_REMOVED) == 0) {
        char *why = weft__cli_escape(row->error ? row->error : "");
        weft__cli_fail("trace '%s' (#%" PRId64 ") %s, it has no archive%s%s",
                       name, row->id,
                       strcmp(row->state, WEFT_STATE_FAILED) == 0
                       ? "failed" : "was removed",
                       *why ? ": " : "", why);
        free(why);
    } else if (!anchor) {
        weft__cli_fail("trace '%s' (#%" PRId64 ") has no archive", name,
                       row->id);
    } else if (stat(anchor, &st) != 0 && errno == ENOENT) {
        char *a = weft__cli_escape(anchor);
        weft__cli_fail("the archive of trace '%s' (#%" PRId64 ") is not "
                       "there: %s (removed outside weft?)", name, row->id, a);
        free(a);
    } else {
        status = EXIT_OK;
    }
    free(name);
    return status;
}

int weft__cmd_path(cli *c)
{
    weft_trace_row row;
    char *anchor;
    int status;

    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    anchor = weft__cli_archive_of(row.path);
    status = has_archive(&row, anchor);
    if (status == EXIT_OK && c->json) {
        json_t *o = json_object();
        if (!o) {
            weft__cli_fail("out of memory");
            exit(EXIT_FAIL);
        }
        weft__cli_jset(o, "id", json_integer(row.id));
        weft__cli_jset(o, "key", weft__cli_jstr(row.key));
        weft__cli_jset(o, "name", weft__cli_jstr(row.name));
        weft__cli_jset(o, "state", weft__cli_jstr(row.state));
        weft__cli_jset(o, "archive", weft__cli_jstr(anchor));
        weft__cli_jset(o, "dir", weft__cli_jstr(row.path));
        status = weft__cli_print_json(o);
    } else if (status == EXIT_OK) {
        /* verbatim, not escaped: a script uses it as it is */
        printf("%s\n", c->dir ? row.path : anchor);
    }
    free(anchor);
    weft_catalog_trace_free(&row);
    return status;
}
