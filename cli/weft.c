/* weft.c - the weft command: query the trace catalog weftd writes, and
 * run programs traced (weft run). This file is the wiring: the command table, the help, the options (parsed
 * with getopt_long, as weftd does) and main. Each command is its own file:
 *
 *   weft [--catalog FILE] list [FILTERS] [--sort KEY] [--reverse]
 *                              [--limit N] [--json]          (list.c)
 *   weft [--catalog FILE] show TRACE [--json]               (show.c)
 *   weft [--catalog FILE] profile TRACE [--by-location|--by-program]
 *                              [--limit N]
 *                              [--sort excl|incl|visits|name] [--json]
 *                                                           (profile.c)
 *   weft [--catalog FILE] compare A B [--top N] [--json]     (compare.c)
 *   weft [--catalog FILE] path TRACE [--dir] [--json]        (path.c)
 *   weft [--catalog FILE] wait TRACE [--timeout S] [-v] [--json]
 *                                                            (wait.c)
 *   weft [--catalog FILE] status [--json]                   (status.c)
 *   weft [--catalog FILE] verify TRACE [--json]             (verify.c)
 *   weft [--catalog FILE] export TRACE --format chrome-json -o FILE
 *                              [--from T] [--to T] [--ranks LIST]
 *                              [--regions GLOB] [--min-duration S]
 *                                           (export.c, export_*.c)
 *   weft [--catalog FILE] report TRACE [-o FILE]   (report.c, report_page.html)
 *   weft [--catalog FILE] view TRACE... [--port N] [--open] [--cache-max SIZE]
 *                              (view.c, view_index.c, view_page.html)
 *   weft [--catalog FILE] [--spool DIR] rm TRACE... [--force]   (rm.c)
 *   weft [--catalog FILE] sql [--table|--csv|--json] QUERY   (sql.c)
 *   weft [--catalog FILE] reindex [SPOOL]                    (reindex.c)
 *   weft [--catalog FILE] import ARCHIVE/traces.otf2 [--name N]
 *                              [--tag K=V]... [--copy]      (import.c)
 *   weft run [-t LIST] [--trace NAME] [--server ADDR] [-v] [--]
 *            PROGRAM [ARGS...]                   (run.c, detect.c, preload.c)
 *   weft help [COMMAND]                                      (here)
 *
 * with output helpers in out.c, the catalog and TRACE lookup in
 * resolve.c and the OTF2 archive reader in archive.c.
 *
 * Subcommands are entries of `weft__cli_commands` (commands.c: name,
 * function, options, synopsis, help); a new one is a function plus one
 * entry, and a new option one entry of `cli_options`. Global options (--catalog, --spool)
 * go before the command or among its own options and arguments, which
 * mix in any order; "--" ends the options. weft run is the exception
 * (OPT_OWN_ARGS): it reads its own options, which stop at PROGRAM, so
 * that PROGRAM's options stay PROGRAM's. The catalog is opened
 * read-only (it is never created here) and is found by --catalog, else
 * $WEFT_CATALOG, else the catalog of weftd's default configuration
 * (read with weftd's own parser, config/config.c). rm removes only
 * SPOOL/traces/KEY, SPOOL being --spool, else that configuration's spool
 * or the catalog's directory.
 * Exit status: 0 ok, 1 not found or failed, 2 usage error (weft wait
 * adds its own, 3 to 6, for the outcomes of a trace). A list that
 * matches nothing prints nothing (JSON: []) and exits 0, like git.
 * list filters and sorts in SQL (weft_catalog_query), never in C.
 * A trace still recording has live figures (what weftd received so far,
 * rewritten every few seconds: daemon/traces/live.c); list and show mark them,
 * --json says "live" for traces not finished.
 *
 * Human output escapes control characters and invalid UTF-8 in names
 * (a name is whatever the client sent); --json output carries them
 * verbatim (as JSON escapes), with invalid UTF-8 replaced by U+FFFD
 * because JSON strings must be Unicode.
 */
#include <assert.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "commands.h"
#include "out.h"
#include "weftd_config.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif
#ifndef WEFT_LIBDIR
#define WEFT_LIBDIR "/usr/local/lib"
#endif


static void global_help(FILE *out)
{
    fprintf(out,
            "Usage: weft [--catalog FILE] COMMAND [ARGS]\n"
            "\n"
            "Query the catalog of traces recorded by weftd (weftd need not "
            "be running\n"
            "for those who can read the catalog; other users' weft asks "
            "weftd for their\n"
            "own traces), or run a program traced.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < weft__cli_ncommands; i++) {
        char lhs[128];
        snprintf(lhs, sizeof lhs, "%s %s", weft__cli_commands[i].name,
                 weft__cli_commands[i].synopsis);
        /* A synopsis too long for the column gets a line of its own. */
        if (strlen(lhs) > 22)
            fprintf(out, "  %s\n  %-22s %s\n", lhs, "",
                    weft__cli_commands[i].summary);
        else
            fprintf(out, "  %-22s %s\n", lhs,
                    weft__cli_commands[i].summary);
    }
    fprintf(out,
            "\n"
            "Options:\n"
            "  -c, --catalog FILE     the catalog to read; default "
            "$WEFT_CATALOG, else the\n"
            "                         catalog of weftd's configuration "
            "file,\n"
            "                         %s\n"
            "      --spool DIR        weftd's spool, for rm and import; "
            "default the\n"
            "                         configuration's, or the catalog's "
            "directory when\n"
            "                         it is a spool\n"
            "  -h, --help             this help; 'weft COMMAND --help' "
            "(or 'weft help\n"
            "                         COMMAND') for one command\n"
            "  -V, --version          print the version\n"
            "\n"
            "--catalog and --spool may also follow the command (but run, "
            "whose options\n"
            "are its own). Short options of the commands: -j (--json), "
            "-n (--name),\n"
            "-s (--state), -u (--user), -t (--tag), -l (--limit), "
            "-r (--reverse),\n"
            "-f (--force), -o (--output), -v (--verbose).\n"
            "\n%s"
            "\n"
            "Exit status: 0 ok, 1 not found or failed, 2 usage error "
            "('weft help wait'\n"
            "for the outcomes weft wait adds).\n",
            weft_config_default_path(), weft__cli_trace_help);
}

static void command_help(const command *cmd)
{
    printf("Usage: weft %s%s %s\n\n%s",
           cmd->needs_catalog ? "[--catalog FILE] " : "", cmd->name,
           cmd->synopsis, cmd->help);
    if (strstr(cmd->synopsis, "TRACE") || strstr(cmd->help, " a TRACE"))
        printf("\n%s", weft__cli_trace_help);
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < weft__cli_ncommands; i++)
        if (strcmp(weft__cli_commands[i].name, name) == 0)
            return &weft__cli_commands[i];
    return NULL;
}

/* The most edits that still make a mistyped command a near miss ("lsit"
 * is 2 from "list"), fewer than the word's length. */
#define NEAR_MISS_EDITS 2

/* The usage error for an unknown command name (cmd: the command that was
 * given it, NULL for weft itself), naming the nearest command when it is
 * a near miss: "did you mean 'list'?". Returns EXIT_USAGE. */
static int unknown_command(const char *cmd, const char *name)
{
    const command *best = NULL;
    size_t best_d = SIZE_MAX;
    char *e;
    int status;

    for (size_t i = 0; i < weft__cli_ncommands; i++) {
        size_t d = weft__cli_edit_distance(name, weft__cli_commands[i].name);
        if (d < best_d) {
            best_d = d;
            best = &weft__cli_commands[i];
        }
    }
    e = weft__cli_escape(name);
    if (best && best_d <= NEAR_MISS_EDITS && best_d < strlen(name))
        status = weft__cli_usage(cmd, "unknown command '%s'; did you mean "
                                 "'%s'?", e, best->name);
    else
        status = weft__cli_usage(cmd, "unknown command '%s'", e);
    free(e);
    return status;
}

void weft__cli_command_help(const char *name)
{
    const command *cmd = find_command(name);

    assert(cmd);
    command_help(cmd);
}

/* weft help [COMMAND]: what weft --help or weft COMMAND --help prints. */
int weft__cli_cmd_help(cli *c)
{
    const command *cmd;

    if (c->nargs == 0) {
        global_help(stdout);
        return EXIT_OK;
    }
    if (!(cmd = find_command(c->args[0])))
        return unknown_command("help", c->args[0]);
    command_help(cmd);
    return EXIT_OK;
}

/* ---- options ------------------------------------------------------------ */

/* Values of the options without a short form (above any character). */
enum {
    O_SPOOL = 256, O_TABLE, O_CSV, O_FORMAT, O_SINCE, O_UNTIL, O_HOST,
    O_SORT, O_BY_LOCATION, O_BY_PROGRAM, O_TOP, O_DIR, O_TIMEOUT, O_FROM, O_TO, O_RANKS,
    O_REGIONS, O_MIN_DURATION, O_COPY, O_RUNS, O_PORT, O_OPEN, O_CACHE_MAX,
};

/* Every option after the command. cmds: the OPT_* of the commands that
 * take it, 0 for all; metavar: what a missing value is called in the
 * error ("--spool needs a DIR"). */
static const struct cli_option {
    struct option o;
    unsigned cmds;
    const char *metavar;
} cli_options[] = {
    { { "help", no_argument, NULL, 'h' }, 0, NULL },
    { { "catalog", required_argument, NULL, 'c' }, 0, "FILE" },
    { { "spool", required_argument, NULL, O_SPOOL }, 0, "DIR" },
    { { "json", no_argument, NULL, 'j' }, OPT_JSON, NULL },
    { { "force", no_argument, NULL, 'f' }, OPT_FORCE, NULL },
    { { "table", no_argument, NULL, O_TABLE }, OPT_TABLE_CSV, NULL },
    { { "csv", no_argument, NULL, O_CSV }, OPT_TABLE_CSV, NULL },
    { { "format", required_argument, NULL, O_FORMAT }, OPT_FORMAT, "VALUE" },
    { { "output", required_argument, NULL, 'o' }, OPT_OUTPUT, "FILE" },
    { { "user", required_argument, NULL, 'u' }, OPT_LIST, "value" },
    { { "name", required_argument, NULL, 'n' }, OPT_LIST | OPT_IMPORT,
      "value" },
    { { "state", required_argument, NULL, 's' }, OPT_LIST, "value" },
    { { "since", required_argument, NULL, O_SINCE }, OPT_LIST, "value" },
    { { "until", required_argument, NULL, O_UNTIL }, OPT_LIST, "value" },
    { { "host", required_argument, NULL, O_HOST }, OPT_LIST, "value" },
    { { "tag", required_argument, NULL, 't' }, OPT_LIST | OPT_IMPORT,
      "value" },
    { { "copy", no_argument, NULL, O_COPY }, OPT_IMPORT, NULL },
    { { "reverse", no_argument, NULL, 'r' }, OPT_LIST, NULL },
    { { "sort", required_argument, NULL, O_SORT }, OPT_LIST | OPT_PROFILE,
      "value" },
    { { "limit", required_argument, NULL, 'l' }, OPT_LIST | OPT_PROFILE,
      "value" },
    { { "by-location", no_argument, NULL, O_BY_LOCATION }, OPT_PROFILE,
      NULL },
    { { "by-program", no_argument, NULL, O_BY_PROGRAM }, OPT_PROFILE,
      NULL },
    { { "top", required_argument, NULL, O_TOP }, OPT_COMPARE, "value" },
    { { "runs", required_argument, NULL, O_RUNS }, OPT_COMPARE, "value" },
    { { "dir", no_argument, NULL, O_DIR }, OPT_PATH, NULL },
    { { "timeout", required_argument, NULL, O_TIMEOUT }, OPT_WAIT, "value" },
    { { "verbose", no_argument, NULL, 'v' }, OPT_WAIT, NULL },
    { { "from", required_argument, NULL, O_FROM }, OPT_EXPORT, "TIME" },
    { { "to", required_argument, NULL, O_TO }, OPT_EXPORT, "TIME" },
    { { "ranks", required_argument, NULL, O_RANKS }, OPT_EXPORT, "LIST" },
    { { "regions", required_argument, NULL, O_REGIONS }, OPT_EXPORT, "GLOB" },
    { { "min-duration", required_argument, NULL, O_MIN_DURATION }, OPT_EXPORT,
      "SECONDS" },
    { { "port", required_argument, NULL, O_PORT }, OPT_VIEW, "N" },
    { { "open", no_argument, NULL, O_OPEN }, OPT_VIEW, NULL },
    { { "cache-max", required_argument, NULL, O_CACHE_MAX }, OPT_VIEW, "SIZE" },
};
#define NOPTIONS (sizeof cli_options / sizeof cli_options[0])

/* The options of cmd for getopt_long: longs[] (NOPTIONS + 1 entries) and
 * shorts ("-:" first: arguments come back in order as 1, a missing value
 * as ':'). */
static void command_options(const command *cmd, struct option *longs,
                            char *shorts)
{
    size_t n = 0, k = 0;

    shorts[k++] = '-';
    shorts[k++] = ':';
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct cli_option *o = &cli_options[i];
        if (o->cmds && !(cmd->opts & o->cmds))
            continue;
        longs[n++] = o->o;
        if (o->o.val < 256) {
            shorts[k++] = (char)o->o.val;
            if (o->o.has_arg == required_argument)
                shorts[k++] = ':';
        }
    }
    memset(&longs[n], 0, sizeof longs[n]);
    shorts[k] = 0;
}

static const struct cli_option *option_of(int val)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (cli_options[i].o.val == val)
            return &cli_options[i];
    return NULL;
}

/* The usage error of getopt_long's '?' (unknown option) or ':' (missing
 * value) for argv[optind - 1], naming the option as it was written. */
static int option_error(const char *cmd, int ch, char **argv)
{
    const char *arg = argv[optind - 1];
    const struct cli_option *o = option_of(optopt);

    if (ch == ':' && o && strncmp(arg, "--", 2) == 0)
        return weft__cli_usage(cmd, "--%s needs a %s", o->o.name,
                               o->metavar);
    if (ch == ':' && o)
        return weft__cli_usage(cmd, "-%c needs a %s", optopt, o->metavar);
    if (strncmp(arg, "--", 2) == 0)
        return weft__cli_usage(cmd, "unknown option '%s'", arg);
    return weft__cli_usage(cmd, "unknown option '-%c'", optopt);
}

/* The option getopt_long just returned with a value, as it was written:
 * its element is argv[optind - 1] when the value was attached (--x=V,
 * -xV), else the one before. */
static const char *option_text(char **argv)
{
    return optarg == argv[optind - 1] && optind >= 2 ? argv[optind - 2]
                                                     : argv[optind - 1];
}

/* Stores option ch (of command cmd, NULL before the command) and its
 * value v in c. Returns EXIT_OK or a usage error. */
static int set_option(const char *cmd, cli *c, int ch, const char *v,
                      char **argv)
{
    const struct cli_option *o = option_of(ch);

    /* A FILE, DIR or VALUE cannot be empty (a list filter can). */
    if (v && !*v && o && o->metavar && strcmp(o->metavar, "value") != 0) {
        if (strncmp(option_text(argv), "--", 2) == 0)
            return weft__cli_usage(cmd, "--%s needs a %s", o->o.name,
                                   o->metavar);
        return weft__cli_usage(cmd, "-%c needs a %s", ch, o->metavar);
    }
    switch (ch) {
    case 'c': c->catalog_opt = v; break;
    case O_SPOOL: c->spool = v; break;
    case 'j': c->json = 1; break;
    case 'f': c->force = 1; break;
    case O_TABLE:
    case O_CSV:
        v = ch == O_TABLE ? "table" : "csv";
        if (c->format && strcmp(c->format, v) != 0)
            return weft__cli_usage(cmd, "--table and --csv exclude each "
                                   "other");
        c->format = v;
        break;
    case O_FORMAT: c->format = v; break;
    case 'o': c->output = v; break;
    case 'u': c->user = v; break;
    case 'n': c->name_glob = v; break;
    case 's': c->state = v; break;
    case O_SINCE: c->since = v; break;
    case O_UNTIL: c->until = v; break;
    case O_HOST: c->host = v; break;
    case 't': c->tags[c->ntags++] = v; break;
    case 'r': c->reverse = 1; break;
    case O_SORT: c->sort = v; break;
    case 'l': c->limit = v; break;
    case O_BY_LOCATION: c->by_location = 1; break;
    case O_BY_PROGRAM: c->by_program = 1; break;
    case O_TOP: c->top = v; break;
    case O_RUNS: c->runs = v; break;
    case O_DIR: c->dir = 1; break;
    case O_TIMEOUT: c->timeout = v; break;
    case 'v': c->verbose = 1; break;
    case O_FROM: c->from = v; break;
    case O_TO: c->to = v; break;
    case O_RANKS: c->ranks = v; break;
    case O_REGIONS: c->regions = v; break;
    case O_MIN_DURATION: c->min_duration = v; break;
    case O_COPY: c->copy = 1; break;
    case O_PORT: c->port = v; break;
    case O_OPEN: c->open = 1; break;
    case O_CACHE_MAX: c->cache_max = v; break;
    }
    return EXIT_OK;
}

/* Global options, up to the command name (getopt_long stops there: "+").
 * Returns the command, or NULL with *status set (help, version, usage
 * error). */
static const command *global_options(int argc, char **argv, cli *c,
                                     int *status)
{
    static const struct option longs[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "catalog", required_argument, NULL, 'c' },
        { "spool", required_argument, NULL, O_SPOOL },
        { NULL, 0, NULL, 0 },
    };
    const command *cmd;
    int ch;

    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+:hVc:", longs, NULL)) != -1) {
        if (ch == 'h') {
            global_help(stdout);
            *status = EXIT_OK;
            return NULL;
        }
        if (ch == 'V') {
            printf("weft %s\n", PACKAGE_VERSION);
            *status = EXIT_OK;
            return NULL;
        }
        if (ch == '?' || ch == ':')
            *status = option_error(NULL, ch, argv);
        else
            *status = set_option(NULL, c, ch, optarg, argv);
        if (*status != EXIT_OK)
            return NULL;
    }
    if (optind >= argc) {
        global_help(stderr);
        *status = EXIT_USAGE;
        return NULL;
    }
    if (!(cmd = find_command(argv[optind]))) {
        *status = unknown_command(NULL, argv[optind]);
        return NULL;
    }
    return cmd;
}

/* The command's options and arguments, in any order, from argv[0] (the
 * command's name) on; "--" ends the options. Fills c (c->args and c->tags
 * must hold argc entries). Returns EXIT_OK, or an exit status: a usage
 * error, or EXIT_OK with *help set for --help. */
static int command_args(const command *cmd, int argc, char **argv, cli *c,
                        int *help)
{
    struct option longs[NOPTIONS + 1];
    char shorts[2 + 2 * NOPTIONS + 1];
    int ch, status;

    command_options(cmd, longs, shorts);
    optind = 0;    /* glibc: start afresh on this argv */
    while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (ch == 1) {
            c->args[c->nargs++] = optarg;
        } else if (ch == 'h') {
            *help = 1;
        } else if (ch == '?' || ch == ':') {
            return option_error(cmd->name, ch, argv);
        } else if ((status = set_option(cmd->name, c, ch, optarg, argv)) !=
                   EXIT_OK) {
            return status;
        }
    }
    while (optind < argc)       /* after "--" */
        c->args[c->nargs++] = argv[optind++];
    return EXIT_OK;
}

/* Checks the number of arguments of cmd. Returns EXIT_OK or a usage
 * error. */
static int check_args(const command *cmd, const cli *c)
{
    if (c->nargs < cmd->min_args)
        return weft__cli_usage(cmd->name, "missing argument (usage: weft %s "
                               "%s)", cmd->name, cmd->synopsis);
    if (c->nargs > cmd->max_args)
        return weft__cli_usage(cmd->name, "unexpected argument '%s'",
                               c->args[cmd->max_args]);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    const command *cmd;
    cli c = { 0 };
    char *catalog_path = NULL;
    int status = EXIT_OK, help = 0, first;

    if (!(cmd = global_options(argc, argv, &c, &status)))
        return status;
    first = optind;
    c.args = calloc((size_t)argc, sizeof *c.args);
    c.tags = calloc((size_t)argc, sizeof *c.tags);
    if (!c.args || !c.tags) {
        status = weft__cli_fail("out of memory");
        goto out;
    }
    if (cmd->opts & OPT_OWN_ARGS) {
        for (int i = first; i < argc; i++)
            c.args[c.nargs++] = argv[i];
        status = cmd->run(&c);
        goto out;
    }
    status = command_args(cmd, argc - first, argv + first, &c, &help);
    if (status != EXIT_OK)
        goto out;
    if (help) {
        command_help(cmd);
        goto out;
    }
    if ((status = check_args(cmd, &c)) != EXIT_OK)
        goto out;
    if (cmd->needs_catalog) {
        catalog_path = weft__cli_resolve_catalog(c.catalog_opt, &c.node);
        if (!catalog_path) {
            status = EXIT_FAIL;
            goto out;
        }
        c.catalog_path = catalog_path;
        if (cmd->needs_catalog == 1 &&
            (status = weft__cli_open_catalog(&c)) != EXIT_OK)
            goto out;
    }
    status = cmd->run(&c);
    if (fflush(stdout) != 0 || ferror(stdout))
        status = weft__cli_fail("error writing the output");
out:
    weft_catalog_close(c.catalog);
    free(c.image);
    free(catalog_path);
    free(c.args);
    free(c.tags);
    return status;
}
