/* weft.c - the weft command: query the trace catalog weftd writes.
 *
 *   weft [--catalog FILE] list [FILTERS] [--sort KEY] [--reverse]
 *                              [--limit N] [--json]
 *   weft [--catalog FILE] show TRACE [--json]
 *   weft [--catalog FILE] profile TRACE [--by-location] [--limit N]
 *                              [--sort excl|incl|visits|name] [--json]
 *   weft [--catalog FILE] verify TRACE          (verify.c)
 *   weft [--catalog FILE] export TRACE --format chrome-json -o FILE
 *                                               (export.c)
 *   weft [--catalog FILE] [--spool DIR] rm TRACE... [--force]
 *   weft [--catalog FILE] sql [--table|--csv|--json] QUERY   (sql.c)
 *   weft [--catalog FILE] reindex [SPOOL]                    (reindex.c)
 *
 * Subcommands are entries of `commands` (name, function, synopsis, help);
 * a new one is a function plus one entry. The catalog is opened read-only
 * (it is never created here) and is found by --catalog, else
 * $WEFT_CATALOG, else the catalog of weftd's default configuration
 * (read with weftd's own parser, daemon/config.c). rm removes only
 * SPOOL/traces/KEY, SPOOL being --spool, else that configuration's spool
 * or the catalog's directory.
 * Exit status: 0 ok, 1 not found or failed, 2 usage error. A list that
 * matches nothing prints nothing (JSON: []) and exits 0, like git.
 * list filters and sorts in SQL (weft_catalog_query), never in C.
 * A trace still recording has live figures (what weftd received so far,
 * rewritten every few seconds: daemon/live.c); list and show mark them,
 * --json says "live" for traces not finished.
 *
 * Human output escapes control characters and invalid UTF-8 in names
 * (a name is whatever the client sent); --json output carries them
 * verbatim (as JSON escapes), with invalid UTF-8 replaced by U+FFFD
 * because JSON strings must be Unicode.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"
#include "weftd_config.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Options a command accepts besides --help and --catalog. */
#define OPT_JSON 1u
#define OPT_FORMAT 2u   /* --format VALUE */
#define OPT_OUTPUT 4u   /* -o FILE, --output FILE */
#define OPT_FORCE 8u    /* --force */
#define OPT_TABLE_CSV 16u /* --table, --csv: sets c->format to the name */
#define OPT_LIST 32u    /* weft list's filters, --sort, --reverse, --limit */
#define OPT_PROFILE 64u /* --by-location, --sort, --limit */

typedef struct command {
    const char *name;
    int (*run)(cli *c);      /* returns an exit status */
    unsigned opts;           /* OPT_* */
    int min_args, max_args;
    int needs_catalog;       /* 1: open it; 2: only its path */
    const char *synopsis;    /* after "weft NAME" */
    const char *summary;     /* one line for weft --help */
    const char *help;        /* for weft NAME --help */
} command;

static const char *const trace_help =
    "TRACE is a catalog id (12 or #12), a trace key, or a trace name (the\n"
    "newest trace with that name).\n";


/* ---- the command table -------------------------------------------------- */

static const command commands[] = {
    { "list", weft__cmd_list, OPT_JSON | OPT_LIST, 0, 0, 1, "[OPTIONS]",
      "list traces, newest first",
      "List the traces of the catalog, newest first: id, name, state,\n"
      "creation time, members, locations, events and archive size. Prints\n"
      "nothing when no trace matches. A trace still recording shows the\n"
      "figures weftd received so far, as 'recording (live)' with members\n"
      "joined/expected; one being converted has size 'converting'.\n"
      "\n"
      "Filters (all must hold):\n"
      "  --user NAME|UID   owned by this user\n"
      "  --name GLOB       name matches GLOB (* ? [...], case-sensitive)\n"
      "  --state STATE     recording, converting, complete, partial or\n"
      "                    failed\n"
      "  --since TIME      created at or after TIME\n"
      "  --until TIME      created at or before TIME\n"
      "  --tag KEY=VALUE   has this tag (repeat: all of them)\n"
      "  --host NAME       a member ran on host NAME\n"
      "TIME is YYYY-MM-DD (a whole day), 'YYYY-MM-DD HH:MM[:SS]' in local\n"
      "time, or an age: 30m, 2h, 7d, 2w (also s) ago.\n"
      "\n"
      "  --sort KEY  created (newest first), name, events (most first),\n"
      "              size (biggest first), duration (longest first), state\n"
      "  --reverse   the other way round\n"
      "  --limit N   at most N traces\n"
      "  --json      print a JSON array of trace objects (with tags)\n" },
    { "show", weft__cmd_show, OPT_JSON, 1, 1, 1, "TRACE [--json]",
      "show one trace, its members and locations",
      "Show every field of one trace (owner, state, hosts, command, job\n"
      "id, tags, times, archive path, figures, error), its members (the\n"
      "ranks that never came or vanished are listed as missing) and its\n"
      "locations. While the trace records, the figures are those weftd\n"
      "received so far, marked live (updated every few seconds).\n"
      "\n"
      "  --json   print a JSON object; \"locations\" is the array of its\n"
      "           locations, \"ranks\" that of its members (\"members\" is\n"
      "           their number), \"missing_ranks\" and \"tags\"; while\n"
      "           recording or converting also \"live\", \"joined\" and\n"
      "           \"live_updated\"\n" },
    { "profile", weft__cmd_profile, OPT_JSON | OPT_PROFILE, 1, 1, 1,
      "TRACE [OPTIONS]",
      "show the regions a trace spent its time in",
      "Show the region profile weftd computed when it converted the trace:\n"
      "per region the visits (Enters), inclusive and exclusive seconds and\n"
      "the share of all exclusive time, summed over all locations. Exits 1\n"
      "when the trace has no profile (still recording, or no regions).\n"
      "\n"
      "  --by-location  per location instead (weftd keeps each location's\n"
      "                 100 regions with the most exclusive time)\n"
      "  --limit N      at most N regions (per location); 0: all; default "
      "20\n"
      "  --sort KEY     excl (default), incl, visits (most first) or name\n"
      "  --json         print a JSON object; \"regions\" is the array\n" },
    { "status", weft__cmd_status, OPT_JSON, 0, 0, 2, "[--json]",
      "show what the running weftd is doing",
      "Show the live state of the weftd that uses this catalog:\n"
      "connections, traces recording and converting, events per second,\n"
      "totals, refused clients and clients paused by backpressure. Exits\n"
      "1 when weftd is not running.\n"
      "\n"
      "  --json   print the status object weftd writes\n" },
    { "verify", weft__cmd_verify, 0, 1, 1, 1, "TRACE",
      "check an archive against the catalog",
      "Read the archive back with libotf2 and compare it with the catalog:\n"
      "the locations, each location's numberOfEvents and the events its\n"
      "file really holds, the total, the clock and the time range. Prints\n"
      "each difference and exits 1, or prints one OK line and exits 0.\n" },
    { "export", weft__cmd_export, OPT_FORMAT | OPT_OUTPUT, 1, 1, 2,
      "TRACE --format F -o FILE",
      "convert an archive for other viewers",
      "Convert the archive to another format, streaming (FILE '-' is\n"
      "standard output):\n"
      "\n"
      "  --format chrome-json  Trace Event JSON for Perfetto UI and\n"
      "                        chrome://tracing: a process per rank, a\n"
      "                        thread per location, B/E slices per region,\n"
      "                        C counters per metric\n"
      "  -o, --output FILE     where to write it\n"
      "\n"
      "Progress goes to stderr when it is a terminal.\n" },
    { "rm", weft__cmd_rm, OPT_FORCE, 1, INT_MAX, 2,
      "TRACE... [--force] [--spool DIR]",
      "remove traces: archive and catalog rows",
      "Remove each trace's directory in the spool (SPOOL/traces/KEY, with\n"
      "its archive) and its catalog rows. Refuses a trace that is still\n"
      "recording or converting, and any trace whose directory does not\n"
      "resolve to exactly SPOOL/traces/KEY. SPOOL is --spool DIR, else the\n"
      "spool of weftd's configuration file (the one the catalog is found\n"
      "through) or the catalog's directory when it is a spool.\n"
      "\n"
      "  --force      remove a recording or converting trace too\n"
      "  --spool DIR  the spool weftd writes (it must have traces/), e.g.\n"
      "               when the catalog is elsewhere and weftd was started\n"
      "               with --spool\n" },
    { "sql", weft__cmd_sql, OPT_JSON | OPT_TABLE_CSV, 1, 1, 2,
      "[--table|--csv|--json] QUERY",
      "run a read-only SQL query on the catalog",
      "Run one SELECT statement on the catalog (SQLite; tables traces,\n"
      "locations, members, tags, regions) and print its result. The\n"
      "catalog is opened read-only and anything but reading is refused\n"
      "(writes, ATTACH, PRAGMA, schema changes, load_extension, more than\n"
      "one statement).\n"
      "\n"
      "  --table  aligned columns under a header (the default); NULL is\n"
      "           empty, control characters are escaped\n"
      "  --csv    RFC 4180 CSV with a header line, lines end in \\n; NULL\n"
      "           is an empty field\n"
      "  --json   an array of objects, one per row, keyed by column name;\n"
      "           integers and reals are numbers, NULL is null\n"
      "\n"
      "BLOBs are printed as hexadecimal text in every format.\n" },
    { "reindex", weft__cmd_reindex, 0, 0, 1, 2, "[SPOOL]",
      "rebuild the catalog from the spool (weftd stopped)",
      "Write a new catalog from the archives and journals in SPOOL\n"
      "(default: the catalog's directory), for a catalog that is damaged\n"
      "or lost. A converted trace gets its figures from its archive and\n"
      "the rest (owner, state, hosts, tags, members) from the old catalog\n"
      "where that still reads, else owner = the archive file's owner and\n"
      "state complete; a trace with journals is catalogued as recording\n"
      "(weftd resumes or converts it at its next start), or failed when\n"
      "no journal has a readable Hello. Region profiles are not rebuilt.\n"
      "\n"
      "Takes the spool's lock, so it refuses to run while weftd uses the\n"
      "spool: stop weftd first. The old catalog is kept, renamed to\n"
      "CATALOG.old-YYYYmmddTHHMMSSZ. Run it as the user weftd runs as\n"
      "(as root, the new catalog is given to the spool's owner).\n" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void global_help(FILE *out)
{
    fprintf(out,
            "Usage: weft [--catalog FILE] COMMAND [ARGS]\n"
            "\n"
            "Query the catalog of traces recorded by weftd. weftd need not "
            "be running.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        char lhs[64];
        snprintf(lhs, sizeof lhs, "%s %s", commands[i].name,
                 commands[i].synopsis);
        /* A synopsis too long for the column gets a line of its own. */
        if (strlen(lhs) > 22)
            fprintf(out, "  %s\n  %-22s %s\n", lhs, "", commands[i].summary);
        else
            fprintf(out, "  %-22s %s\n", lhs, commands[i].summary);
    }
    fprintf(out,
            "\n"
            "Options:\n"
            "  --catalog FILE         the catalog to read; default "
            "$WEFT_CATALOG, else the\n"
            "                         catalog of weftd's configuration "
            "file,\n"
            "                         %s\n"
            "  --spool DIR            weftd's spool, for rm; default the "
            "configuration's\n"
            "  -h, --help             this help; 'weft COMMAND --help' for "
            "one command\n"
            "  -V, --version          print the version\n"
            "\n%s"
            "\n"
            "Exit status: 0 ok, 1 not found or failed, 2 usage error.\n",
            weft_config_default_path(), trace_help);
}

static void command_help(const command *cmd)
{
    printf("Usage: weft [--catalog FILE] %s %s\n\n%s", cmd->name,
           cmd->synopsis, cmd->help);
    if (strstr(cmd->synopsis, "TRACE"))
        printf("\n%s", trace_help);
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* ---- arguments ---------------------------------------------------------- */

/* Matches "--name VALUE" and "--name=VALUE" at argv[*i]; 1 if matched (then
 * *value is set, or NULL when VALUE is missing), 0 if not. */
static int opt_value(char **argv, int argc, int *i, const char *name,
                     const char **value)
{
    size_t n = strlen(name);

    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

/* The value options of list and profile at argv[*i]: 1 when one matched
 * (its value stored in c), 0 when none did, -1 after a usage error (a
 * missing value). */
static int query_option(const command *cmd, cli *c, char **argv, int argc,
                        int *i)
{
    static const struct {
        const char *name;
        unsigned opts;
        size_t offset;
    } vopts[] = {
        { "--user", OPT_LIST, offsetof(cli, user) },
        { "--name", OPT_LIST, offsetof(cli, name_glob) },
        { "--state", OPT_LIST, offsetof(cli, state) },
        { "--since", OPT_LIST, offsetof(cli, since) },
        { "--until", OPT_LIST, offsetof(cli, until) },
        { "--host", OPT_LIST, offsetof(cli, host) },
        { "--tag", OPT_LIST, 0 },
        { "--sort", OPT_LIST | OPT_PROFILE, offsetof(cli, sort) },
        { "--limit", OPT_LIST | OPT_PROFILE, offsetof(cli, limit) },
    };
    const char *v = NULL;

    for (size_t k = 0; k < sizeof vopts / sizeof vopts[0]; k++) {
        if (!(cmd->opts & vopts[k].opts) ||
            !opt_value(argv, argc, i, vopts[k].name, &v))
            continue;
        if (!v) {
            weft__cli_usage(cmd->name, "%s needs a value", vopts[k].name);
            return -1;
        }
        if (vopts[k].offset)
            *(const char **)((char *)c + vopts[k].offset) = v;
        else
            c->tags[c->ntags++] = v;
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *catalog_opt = NULL;
    const command *cmd = NULL;
    cli c = { 0 };
    char *catalog_path = NULL;
    int i, want_help = 0, status, only_args = 0, rc;

    /* Global options, up to the command name. */
    for (i = 1; i < argc && !cmd; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            global_help(stdout);
            return EXIT_OK;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("weft %s\n", PACKAGE_VERSION);
            return EXIT_OK;
        } else if (opt_value(argv, argc, &i, "--catalog", &catalog_opt)) {
            if (!catalog_opt || !*catalog_opt)
                return weft__cli_usage(NULL, "--catalog needs a FILE");
        } else if (opt_value(argv, argc, &i, "--spool", &c.spool)) {
            if (!c.spool || !*c.spool)
                return weft__cli_usage(NULL, "--spool needs a DIR");
        } else if (a[0] == '-' && a[1] != '\0') {
            return weft__cli_usage(NULL, "unknown option '%s'", a);
        } else if (!(cmd = find_command(a))) {
            return weft__cli_usage(NULL, "unknown command '%s'", a);
        }
    }
    if (!cmd) {
        global_help(stderr);
        return EXIT_USAGE;
    }

    /* The command's options and arguments, in any order. */
    c.args = calloc((size_t)argc, sizeof *c.args);
    c.tags = calloc((size_t)argc, sizeof *c.tags);
    if (!c.args || !c.tags) {
        free(c.args);
        free(c.tags);
        return weft__cli_fail("out of memory");
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || a[1] == '\0') {
            c.args[c.nargs++] = argv[i];
        } else if (strcmp(a, "--") == 0) {
            only_args = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            want_help = 1;
        } else if ((cmd->opts & OPT_JSON) && strcmp(a, "--json") == 0) {
            c.json = 1;
        } else if ((cmd->opts & OPT_FORCE) && strcmp(a, "--force") == 0) {
            c.force = 1;
        } else if ((cmd->opts & OPT_TABLE_CSV) &&
                   (strcmp(a, "--table") == 0 || strcmp(a, "--csv") == 0)) {
            if (c.format && strcmp(c.format, a + 2) != 0) {
                status = weft__cli_usage(cmd->name, "--table and --csv exclude each "
                                         "other");
                goto out;
            }
            c.format = a + 2;
        } else if ((cmd->opts & OPT_LIST) && strcmp(a, "--reverse") == 0) {
            c.reverse = 1;
        } else if ((cmd->opts & OPT_PROFILE) &&
                   strcmp(a, "--by-location") == 0) {
            c.by_location = 1;
        } else if ((rc = query_option(cmd, &c, argv, argc, &i)) != 0) {
            if (rc < 0) {
                status = EXIT_USAGE;
                goto out;
            }
        } else if ((cmd->opts & OPT_FORMAT) &&
                   opt_value(argv, argc, &i, "--format", &c.format)) {
            if (!c.format || !*c.format) {
                status = weft__cli_usage(cmd->name, "--format needs a VALUE");
                goto out;
            }
        } else if ((cmd->opts & OPT_OUTPUT) &&
                   (opt_value(argv, argc, &i, "--output", &c.output) ||
                    opt_value(argv, argc, &i, "-o", &c.output))) {
            if (!c.output || !*c.output) {
                status = weft__cli_usage(cmd->name, "%s needs a FILE", a);
                goto out;
            }
        } else if (opt_value(argv, argc, &i, "--catalog", &catalog_opt)) {
            if (!catalog_opt || !*catalog_opt) {
                status = weft__cli_usage(cmd->name, "--catalog needs a FILE");
                goto out;
            }
        } else if (opt_value(argv, argc, &i, "--spool", &c.spool)) {
            if (!c.spool || !*c.spool) {
                status = weft__cli_usage(cmd->name, "--spool needs a DIR");
                goto out;
            }
        } else {
            status = weft__cli_usage(cmd->name, "unknown option '%s'", a);
            goto out;
        }
    }
    if (want_help) {
        command_help(cmd);
        status = EXIT_OK;
        goto out;
    }
    if (c.nargs < cmd->min_args) {
        status = weft__cli_usage(cmd->name, "missing argument (usage: weft %s %s)",
                                 cmd->name, cmd->synopsis);
        goto out;
    }
    if (c.nargs > cmd->max_args) {
        status = weft__cli_usage(cmd->name, "unexpected argument '%s'",
                                 c.args[cmd->max_args]);
        goto out;
    }

    if (cmd->needs_catalog) {
        catalog_path = weft__cli_resolve_catalog(catalog_opt);
        if (!catalog_path) {
            status = EXIT_FAIL;
            goto out;
        }
        c.catalog_path = catalog_path;
        c.catalog_given = catalog_opt != NULL;
        status = cmd->needs_catalog == 1 ? weft__cli_open_catalog(&c) : EXIT_OK;
        if (status != EXIT_OK)
            goto out;
    }
    status = cmd->run(&c);
    if (fflush(stdout) != 0 || ferror(stdout))
        status = weft__cli_fail("error writing the output");
out:
    weft_catalog_close(c.catalog);
    free(catalog_path);
    free(c.args);
    free(c.tags);
    return status;
}
