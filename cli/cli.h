/* cli.h - what the weft command's files share: the command context, the
 * catalog helpers of resolve.c and the commands (one file each; weft.c is
 * the wiring). The output helpers are in out.h, the archive reader in
 * archive.h.
 */
#ifndef WEFT_CLI_H
#define WEFT_CLI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "catalog.h"
#include "out.h"
#include "weftd_config.h"

/* What a command runs with. Strings point into argv or are owned by main. */
typedef struct cli {
    const char *catalog_opt; /* --catalog FILE, or NULL */
    const char *catalog_path;
    int node;                /* catalog_path is a node weftd's (its
                                configuration names a head): the head
                                keeps the catalog, weftd relays the
                                questions to it */
    const char *spool;       /* --spool DIR, or NULL: weftd's (rm) */
    weft_catalog *catalog;   /* open read-only, when the command needs it */
    unsigned char *image;    /* weftd's answer when the catalog is its
                                alone: this user's rows (ask.c) */
    size_t image_len;
    int json;
    int force;               /* --force */
    const char *format;      /* --format VALUE, or NULL */
    const char *output;      /* -o / --output FILE, or NULL */
    char **args;             /* positional arguments of the command */
    int nargs;
    /* weft list and weft profile options, NULL when not given;
     * checked by the command */
    const char *user, *name_glob, *state, *since, *until, *host, *sort,
               *limit;
    const char **tags;       /* --tag K=V, in order */
    int ntags;
    int reverse;             /* --reverse */
    int by_location;         /* --by-location */
    int by_program;          /* --by-program */
    const char *top;         /* weft compare --top N, or NULL */
    const char *runs;        /* weft compare --runs N, or NULL */
    int dir;                 /* weft path --dir */
    const char *timeout;     /* weft wait --timeout S, or NULL */
    int verbose;             /* weft wait -v, --verbose */
    /* weft export's filters, NULL when not given; checked by export.c */
    const char *from, *to, *ranks, *regions, *min_duration;
    int copy;                /* weft import --copy */
    const char *port;        /* weft view --port N, or NULL */
    int open;                /* weft view --open */
    const char *cache_max;   /* weft view --cache-max SIZE, or NULL */
} cli;

/* ---- the catalog (resolve.c) -------------------------------------------- */

/* The catalog to read: opt (--catalog), else $WEFT_CATALOG, else the
 * catalog of weftd's configuration (*node: 1 when that configuration
 * names a head, whose catalog it is that the command reads). Returns a
 * malloc'd path, or NULL after saying why. */
char *weft__cli_resolve_catalog(const char *opt, int *node);
/* weftd's configuration as weftd reads it without flags: built-in
 * defaults, then $WEFT_CONFIG or /etc/weft/weftd.conf (may be missing),
 * catalog derived from spool. Returns 0, or WEFT_ECONFIG with err saying
 * why; weft_config_free cfg either way. */
int weft__cli_load_config(weft_config *cfg, char *err, size_t errlen);
/* Opens c->catalog_path read-only into c->catalog (for commands that
 * check their arguments first); when the file is weftd's alone, the
 * image of this user's rows weftd answers with (c->image). Returns
 * EXIT_OK, or EXIT_FAIL after saying why. */
int weft__cli_open_catalog(cli *c);
/* Finds TRACE (id, key, or name: the newest of that name, with a note on
 * stderr when several traces share it) in the open catalog into *row
 * (free with weft_catalog_trace_free). Returns EXIT_OK, or EXIT_FAIL
 * after saying why. */
int weft__cli_find(cli *c, const char *what, weft_trace_row *row);
/* Says on stderr why trace row has no region profile (still recording or
 * converting, or no Enter and Leave events). Returns EXIT_FAIL. */
int weft__cli_no_profile(const weft_trace_row *row);
/* Says on stderr that the name `what` picked row, the newest of n > 1
 * traces of that name, when it was taken as a name (not an id or key). */
void weft__cli_note_name(cli *c, const char *what,
                         const weft_trace_row *row);
/* Is row still recording or converting (its figures not final yet)? */
int weft__cli_row_unfinished(const weft_trace_row *row);
/* Are row's figures live ones, what weftd received so far (it rewrites
 * them every live_interval seconds while the trace records), rather than
 * the conversion's? */
int weft__cli_row_live(const weft_trace_row *row);
/* The trace's duration: seconds from its first to its last event (its
 * time range at its clock's resolution, as weft report says), or -1
 * while not known (still recording or converting, no events). */
double weft__cli_row_span(const weft_trace_row *row);
/* Wall time from created to finished in (the catalog's whole) seconds,
 * or -1 while the trace is not finished. */
int64_t weft__cli_row_wall(const weft_trace_row *row);
/* row as the JSON object of list --json and show --json (without tags
 * and arrays); exits when out of memory. */
json_t *weft__cli_trace_json(const weft_trace_row *row);
/* The tags of trace row as a JSON object, or NULL after saying why. */
json_t *weft__cli_tags_json(cli *c, const weft_trace_row *row);

/* ---- asking weftd (ask.c; daemon/ask/ask.h) -------------------------------- */

/* 1 when path exists but this user may not access it as mode (R_OK,
 * W_OK) says: the file is weftd's alone, ask weftd instead. */
int weft__cli_private(const char *path, int mode);
/* The command asks weftd rather than opening c's catalog for mode
 * (R_OK, W_OK): the catalog is weftd's alone, or a node's weftd relays
 * to its head. */
int weft__cli_asks(const cli *c, int mode);
/* Is the weftd whose catalog is at catalog running (its status file
 * next to it fresh, its pid alive; status.c)? 1 or 0; -1 when this user
 * cannot tell (the status file is weftd's alone). */
int weft__cli_weftd_running(const char *catalog);
/* Asks the running weftd on its Unix socket ($WEFT_SOCKET, else the
 * configuration's socket): kind is a WEFT__QUERY__KIND_* (CATALOG,
 * STATUS, REMOVE of trace, a key); here: a node's weftd answers from its
 * own catalog, not its head's (c->node 0). Returns EXIT_OK with *data
 * (malloc'd, NUL-terminated) and *len, or EXIT_FAIL after saying why
 * (weftd's Error included). */
int weft__cli_ask(int kind, const char *trace, int force, int here,
                  unsigned char **data, size_t *len);
/* Asks weftd to store imp as a trace of this user's (weft import,
 * import/import.h); its answer as weft__cli_ask's. */
struct Weft__ImportTrace;
int weft__cli_ask_import(const struct Weft__ImportTrace *imp, int here,
                         unsigned char **data, size_t *len);

/* ---- the commands: each returns an exit status -------------------------- */

/* weft list, show, profile, status (list.c, ...): c->catalog open. */
int weft__cmd_list(cli *c);
int weft__cmd_show(cli *c);
int weft__cmd_profile(cli *c);
int weft__cmd_status(cli *c);
/* weft compare, path (compare.c, path.c): c->catalog open. */
int weft__cmd_compare(cli *c);
/* weft compare --runs N (compare_runs.c): the N newest traces of a's name
 * against those of b's. An exit status. */
int weft__compare_runs(cli *c, const weft_trace_row *a,
                       const weft_trace_row *b, int64_t runs, int64_t top);
/* The CHANGE S cell of d seconds: "+0.001250", "0.000000" (malloc'd). */
char *weft__compare_fmt_change(double d);
/* A trace's duration: its events' time range in seconds (0: none). */
double weft__compare_duration(const weft_trace_row *row);
int weft__cmd_path(cli *c);
/* weft wait (wait.c): c->catalog open; it reopens it (asks weftd again)
 * while it polls. Returns one of the WAIT_* statuses of wait.c. */
int weft__cmd_wait(cli *c);
/* weft rm (rm.c): c->catalog_path resolved; it opens it read-write. */
int weft__cmd_rm(cli *c);
int weft__cmd_verify(cli *c);
int weft__cmd_export(cli *c);
/* weft report (report.c): c->catalog open; -o FILE, else report.html. */
int weft__cmd_report(cli *c);
int weft__cmd_view(cli *c);
/* weft sql (sql.c): c->format is "table", "csv" or NULL, c->json set for
 * --json, c->catalog_path resolved but not opened. */
int weft__cmd_sql(cli *c);
/* weft reindex (reindex.c): c->catalog_path resolved but not opened;
 * c->args[0], if given, is the spool. */
int weft__cmd_reindex(cli *c);
/* weft import (import.c): c->catalog_path resolved but not opened;
 * c->args[0] is the anchor, c->name_glob the --name, c->tags the tags. */
int weft__cmd_import(cli *c);
/* weft run (run.c): c->args is argv from "run" on, unparsed (options
 * stop at PROGRAM); returns only when PROGRAM could not be executed or
 * on a usage error (or after --help). */
int weft__cmd_run(cli *c);

/* Prints the help of command name (weft.c; front.c has weft-cli print
 * it), for a command that parses its own options. */
void weft__cli_command_help(const char *name);

#endif
