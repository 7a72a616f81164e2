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
 * Subcommands are entries of `commands` (name, function, options,
 * synopsis, help); a new one is a function plus one entry, and a new
 * option one entry of `cli_options`. Global options (--catalog, --spool)
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
#include "out.h"
#include "weftd_config.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif
#ifndef WEFT_LIBDIR
#define WEFT_LIBDIR "/usr/local/lib"
#endif

/* Options a command accepts besides -h/--help, -c/--catalog and --spool
 * (cli_options below lists them all). */
#define OPT_JSON 1u
#define OPT_FORMAT 2u   /* --format VALUE */
#define OPT_OUTPUT 4u   /* -o FILE, --output FILE */
#define OPT_FORCE 8u    /* --force */
#define OPT_TABLE_CSV 16u /* --table, --csv: sets c->format to the name */
#define OPT_LIST 32u    /* weft list's filters, --sort, --reverse, --limit */
#define OPT_PROFILE 64u /* --by-location, --by-program, --sort, --limit */
#define OPT_COMPARE 256u /* --top N, --runs N */
#define OPT_PATH 512u    /* --dir */
#define OPT_WAIT 1024u   /* --timeout S, -v, --verbose */
#define OPT_EXPORT 2048u /* --from, --to, --ranks, --regions, --min-duration */
#define OPT_IMPORT 4096u /* --name, --tag, --copy */
#define OPT_VIEW 8192u   /* --port N, --open */
/* The command parses its own arguments (c->args is argv from its name
 * on), not with cli_options: weft run. */
#define OPT_OWN_ARGS 128u

typedef struct command {
    const char *name;
    int (*run)(cli *c);      /* returns an exit status */
    unsigned opts;           /* OPT_* */
    int min_args, max_args;
    int needs_catalog;       /* 1: open it; 2: only its path; 0: none */
    const char *synopsis;    /* after "weft NAME" */
    const char *summary;     /* one line for weft --help */
    const char *help;        /* for weft NAME --help */
} command;

static int cmd_help(cli *c);

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
      "  -u, --user NAME|UID   owned by this user\n"
      "  -n, --name GLOB       name matches GLOB (* ? [...],\n"
      "                        case-sensitive)\n"
      "  -s, --state STATE     recording, converting, complete, partial,\n"
      "                        failed or removed (by weftd's retention)\n"
      "      --since TIME      created at or after TIME\n"
      "      --until TIME      created at or before TIME\n"
      "  -t, --tag KEY=VALUE   has this tag (repeat: all of them)\n"
      "      --host NAME       a member ran on host NAME\n"
      "TIME is YYYY-MM-DD (a whole day), 'YYYY-MM-DD HH:MM[:SS]' in local\n"
      "time, or an age: 30m, 2h, 7d, 2w (also s) ago.\n"
      "\n"
      "      --sort KEY   created (newest first), name, events (most\n"
      "                   first), size (biggest first), duration (longest\n"
      "                   wall time first: created to finished), state\n"
      "  -r, --reverse    the other way round\n"
      "  -l, --limit N    at most N traces\n"
      "  -j, --json       print a JSON array of trace objects (with tags)\n" },
    { "show", weft__cmd_show, OPT_JSON, 1, 1, 1, "TRACE [--json]",
      "show one trace, its members and locations",
      "Show every field of one trace (owner, state, hosts, command, job\n"
      "id, tags, times, archive path, figures, error), its members (the\n"
      "ranks that never came or vanished are listed as missing) and its\n"
      "locations. While the trace records, the figures are those weftd\n"
      "received so far, marked live (updated every few seconds); its time\n"
      "range, duration and clock are not known until the conversion ends.\n"
      "\n"
      "Two durations: 'wall time' from created to finished (whole seconds,\n"
      "the conversion included) and 'duration' from the first to the last\n"
      "event (as weft report's), below a minute to the microsecond. The\n"
      "time range is in seconds of the trace's clock (ticks / ticks per\n"
      "second).\n"
      "\n"
      "  -j, --json   print a JSON object; \"locations\" is the array of\n"
      "               its locations, \"ranks\" that of its members that\n"
      "               joined (\"members\" is how many were expected),\n"
      "               \"missing_ranks\" ([first, last] ranges) and\n"
      "               \"tags\"; while recording or converting also\n"
      "               \"live\", \"joined\" and \"live_updated\". The\n"
      "               time range in ticks (\"time_first\", \"time_last\",\n"
      "               \"timer_resolution\" ticks a second), \"duration_s\"\n"
      "               and \"wall_time_s\" (null while not known)\n" },
    { "profile", weft__cmd_profile, OPT_JSON | OPT_PROFILE, 1, 1, 1,
      "TRACE [OPTIONS]",
      "show the regions a trace spent its time in",
      "Show the region profile weftd computed when it converted the trace:\n"
      "per region its paradigm, the visits (Enters), inclusive and\n"
      "exclusive seconds and the share of all exclusive time, summed over\n"
      "all locations. The paradigm is the region's OTF2 one in lower case\n"
      "(mpi, openmp, pthread, user, compiler, none, ...; io: I/O calls);\n"
      "empty for traces converted by an older weft. The row\n"
      "'outside traced calls' (visits 0, no paradigm) is the locations'\n"
      "time in no traced region, each one's from its first event to its\n"
      "last: the shares add up to 100%. Exits 1 when the trace has no\n"
      "profile (still recording or converting, or no regions, e.g. a\n"
      "failed trace).\n"
      "\n"
      "      --by-location  per location instead (weftd keeps each\n"
      "                     location's 100 regions with the most exclusive\n"
      "                     time)\n"
      "      --by-program   per program instead: the locations of the\n"
      "                     processes of a process tree (weft run of a\n"
      "                     shell, make) that ran the same program summed\n"
      "                     (from those 100 rows each); \"-\" for locations\n"
      "                     of other traces\n"
      "  -l, --limit N      at most N regions (per location); 0: all;\n"
      "                     default 20\n"
      "      --sort KEY     excl (default), incl, visits (most first) or\n"
      "                     name\n"
      "  -j, --json         print a JSON object; \"regions\" is the array\n" },
    { "compare", weft__cmd_compare, OPT_JSON | OPT_COMPARE, 2, 2, 1,
      "A B [--top N] [--runs N] [--json]",
      "compare the region profiles of two traces",
      "Compare the region profiles of traces A and B (as 'weft profile'\n"
      "shows them: summed over all locations), region by region, matched\n"
      "by name: visits and exclusive seconds of each, the change of\n"
      "exclusive time in seconds and in percent of A's. The regions whose\n"
      "exclusive time changed most (either way) come first; a region of\n"
      "B only is 'new', one of A only 'gone'. The last line is the total\n"
      "of all regions. A and B are each a TRACE: 'weft compare run41\n"
      "run42' compares the newest traces of two names; use keys or ids\n"
      "for two runs of one name (weft list --name NAME). Exits 1 when a\n"
      "trace has no profile (still recording, or no regions). The row\n"
      "'outside traced calls' is the time of the locations in no traced\n"
      "region. With one run of each side the noise is unknown (JSON:\n"
      "\"noise\" null): a change may be run-to-run variation.\n"
      "\n"
      "      --top N     the N regions that changed most; 0: all; default\n"
      "                  20 (the total counts all regions)\n"
      "      --runs N    compare the N newest converted traces named as A\n"
      "                  with those named as B: the means of their\n"
      "                  exclusive times, each run's duration, and the\n"
      "                  noise (the larger spread, slowest run less\n"
      "                  fastest, of a side); a change not above it is\n"
      "                  'within noise' (unknown with one run a side);\n"
      "                  its JSON: \"a\" and \"b\" (name, runs: id, key,\n"
      "                  duration_s), \"regions\" (region, excl_s_a,\n"
      "                  excl_s_b: means; change_s, change_pct,\n"
      "                  noise_s: null when unknown, within_noise) and\n"
      "                  \"total\"\n"
      "  -j, --json      print a JSON object: \"a\" and \"b\" (the traces\n"
      "                  as in weft show --json, and duration_s),\n"
      "                  \"regions\" (region,\n"
      "                  status both/new/gone, visits_a, visits_b,\n"
      "                  excl_s_a, excl_s_b: null where the region is\n"
      "                  not; change_s, change_pct: null when A's time\n"
      "                  is 0) and \"total\" (the same figures of all\n"
      "                  regions, with their number, new and gone)\n" },
    { "path", weft__cmd_path, OPT_PATH | OPT_JSON, 1, 1, 1,
      "TRACE [--dir] [--json]",
      "print the path of a trace's OTF2 archive",
      "Print the path of the trace's OTF2 archive, its anchor file\n"
      "(.../archive/traces.otf2) as OTF2 tools open it, verbatim on one\n"
      "line:\n"
      "\n"
      "  otf2-print \"$(weft path run42)\"\n"
      "\n"
      "Exits 1, printing nothing on standard output, when the trace has no\n"
      "archive: still recording or converting (see weft wait), failed,\n"
      "removed by weftd's retention, or deleted outside weft.\n"
      "\n"
      "      --dir    the archive's directory instead (its traces.otf2,\n"
      "               traces.def and one directory of event files)\n"
      "  -j, --json   print a JSON object: \"archive\" (the anchor file),\n"
      "               \"dir\", and the trace's \"id\", \"key\", \"name\"\n"
      "               and \"state\"; nothing when there is no archive\n" },
    { "wait", weft__cmd_wait, OPT_WAIT | OPT_JSON, 1, 1, 1,
      "TRACE [--timeout S] [--verbose] [--json]",
      "wait until a trace is converted (for batch scripts)",
      "Wait until the trace is complete, partial or failed, reading the\n"
      "catalog every 0.2 s (weftd need not run for those who can read the\n"
      "catalog; other users' weft asks weftd every second). Prints nothing\n"
      "when the trace is complete; otherwise one line on standard error\n"
      "saying why, and exits with the outcome:\n"
      "\n"
      "  0  complete\n"
      "  1  the catalog cannot be read (or weftd asked for it does not\n"
      "     answer)\n"
      "  2  usage error\n"
      "  3  partial (the reason on standard error)\n"
      "  4  failed, or removed by weftd's retention\n"
      "  5  timeout: the trace is still recording or converting, or\n"
      "     failed and not yet converted again\n"
      "  6  no such trace: none appeared before the timeout, it is not\n"
      "     there and weftd is not running (said at once: nothing would\n"
      "     add it), or it was deleted from the catalog (weft rm) while\n"
      "     waited for\n"
      "\n"
      "A conversion that failed for a cause outside the journals (a full\n"
      "disk, an unwritable directory) is tried again by weftd, and the\n"
      "catalog says when (weft show: retry): wait goes on waiting for that\n"
      "attempt, until a minute after its time.\n"
      "\n"
      "A TRACE that is not in the catalog yet is waited for until it\n"
      "appears (a batch script may start the wait before the program's\n"
      "first process reaches weftd), bounded by --timeout, as long as\n"
      "weftd runs. A name is\n"
      "resolved once, when it is first found (the newest trace of that\n"
      "name then): give each run a name of its own in scripts, e.g.\n"
      "WEFT_TRACE=app-$SLURM_JOB_ID, or an older complete run of the name\n"
      "is found at once.\n"
      "\n"
      "      --timeout S   give up after S seconds (decimals and a unit s,\n"
      "                    m, h or d allowed: 90, 2.5, 10m, 2h); 0: look\n"
      "                    once; never: wait as long as it takes;\n"
      "                    default 10m\n"
      "  -v, --verbose     say on standard error when the trace appears,\n"
      "                    each state it goes through, and when it is\n"
      "                    complete\n"
      "  -j, --json        print on standard output, when the wait ends,\n"
      "                    one object: \"trace\" (as given), \"id\",\n"
      "                    \"name\", \"state\", \"error\" (null where not\n"
      "                    known), \"outcome\" (complete, partial, failed,\n"
      "                    removed, timeout, not found, deleted or\n"
      "                    error), \"exit_status\", \"waited_s\" and\n"
      "                    \"timeout_s\" (null: never)\n" },
    { "status", weft__cmd_status, OPT_JSON, 0, 0, 2, "[--json]",
      "show what the running weftd is doing",
      "Show the live state of the weftd that uses this catalog:\n"
      "connections, traces recording and converting, events per second,\n"
      "totals, refused clients and clients paused by backpressure. Exits\n"
      "1 when weftd is not running.\n"
      "\n"
      "  -j, --json   print the status object weftd writes\n" },
    { "verify", weft__cmd_verify, OPT_JSON, 1, 1, 1, "TRACE [--json]",
      "check an archive against the catalog",
      "Read the archive back with libotf2 and compare it with the catalog:\n"
      "the locations, each location's numberOfEvents and the events its\n"
      "file really holds, the total, the clock and the time range. Prints\n"
      "each difference and exits 1, or prints one OK line and exits 0.\n"
      "\n"
      "  -j, --json   print a JSON object instead: \"ok\", \"problems\"\n"
      "               (the differences, an array of strings), \"id\",\n"
      "               \"name\", \"archive\", \"locations\", \"events\"\n"
      "               (read from the archive), \"time_first\" and\n"
      "               \"time_last\" (the catalog's, in ticks)\n" },
    { "export", weft__cmd_export, OPT_FORMAT | OPT_OUTPUT | OPT_EXPORT, 1, 1,
      2, "TRACE --format F -o FILE [--from T] [--to T] [--ranks LIST] "
      "[--regions GLOB] [--min-duration S]",
      "convert an archive for other viewers",
      "Convert the archive to another format, streaming (FILE '-' is\n"
      "standard output; a FILE ending in .gz is compressed with gzip):\n"
      "\n"
      "  --format chrome-json  Trace Event Format JSON (an object with\n"
      "                        \"traceEvents\"), the format of Chrome's\n"
      "                        former chrome://tracing, which Chromium no\n"
      "                        longer has; the Perfetto UI\n"
      "                        (https://ui.perfetto.dev) says it opens this\n"
      "                        format (weft's tests check the format, not\n"
      "                        a viewer). A process per rank (pid\n"
      "                        rank + 1, named 'rank R (host)'), a thread\n"
      "                        per location; a slice per region visit, MPI\n"
      "                        messages as arrows from send to receive,\n"
      "                        thread creation and join as arrows,\n"
      "                        collectives, I/O operations, locks and\n"
      "                        measurement-off gaps as async slices,\n"
      "                        metrics as counters per location, any other\n"
      "                        event as an instant; fields and attributes\n"
      "                        as args; times corrected by the archive's\n"
      "                        ClockOffsets, in microseconds since the start\n"
      "  -o, --output FILE     where to write it\n"
      "\n"
      "Filters (all must hold):\n"
      "      --from T          leave out what ends before T\n"
      "      --to T            leave out what begins after T\n"
      "      --ranks LIST      only these ranks, e.g. 0-3,8\n"
      "      --regions GLOB    only the region slices whose name matches GLOB\n"
      "                        (* ? [...]); other events stay\n"
      "      --min-duration S  leave out slices shorter than S\n"
      "T is seconds since the trace's start (1.5, 250ms, 20us, 100ns),\n"
      "@TICKS, a timestamp of the archive as otf2-print shows it, or a\n"
      "wall clock time: [YYYY-MM-DD ]HH:MM:SS[.frac] in local time (the\n"
      "trace's day when no date is given), or in UTC with ' UTC' or 'Z'\n"
      "after it (from the archive's clock properties); S is seconds as\n"
      "for T.\n"
      "\n"
      "Progress goes to stderr when it is a terminal.\n" },
    { "report", weft__cmd_report, OPT_OUTPUT, 1, 1, 1,
      "TRACE [-o FILE]",
      "write a self-contained HTML report of a trace",
      "Write one HTML file (no network access, nothing external: open it\n"
      "from disk in any browser) showing what happened: the header (name,\n"
      "owner, when, duration from the first to the last event, wall time\n"
      "from created to finished, ranks, threads, hosts, tags, events,\n"
      "dropped records, state, clock), the timeline (one row per\n"
      "location, each pixel column coloured by the region that dominated\n"
      "it; MPI, OpenMP, thread and I/O regions, by their paradigm, in\n"
      "their own colour families;\n"
      "hover for names),\n"
      "the region profile, load balance across locations, and for MPI\n"
      "traces time in MPI per rank and the message matrix. It is made\n"
      "from what weftd stored when it converted the trace, never from the\n"
      "events, so it is quick for any size; a trace converted by an older\n"
      "weft has no timeline (the report says so).\n"
      "\n"
      "  -o, --output FILE     where to write it (default report.html;\n"
      "                        '-' is standard output)\n" },
    { "view", weft__cmd_view, OPT_VIEW, 1, 16, 1,
      "TRACE... [--port N] [--open] [--cache-max SIZE]",
      "look at a trace's events in a browser",
      "Serve an interactive viewer of the traces (up to 16, one under\n"
      "another, e.g. runs to compare) to a browser on this machine: one\n"
      "row per location, grouped by process and host, each a flame view\n"
      "of its regions coloured by paradigm (MPI, OpenMP, threads, I/O,\n"
      "user) with the time outside any region shown as such; zoom\n"
      "(wheel, drag a range, + and -) and pan (shift-drag, arrow keys)\n"
      "down to single events; click a region for its times (inclusive,\n"
      "exclusive), paradigm and call path. weft view reads each archive's\n"
      "events once into an index file in your cache\n"
      "(~/.cache/weft/view; files unused for 30 days, and beyond\n"
      "--cache-max the least recently used, are removed as a view\n"
      "starts), prints the viewer's address\n"
      "(http://127.0.0.1:PORT/TOKEN/) and serves until interrupted\n"
      "(Ctrl-C). It listens on 127.0.0.1 only, and only that address,\n"
      "with its random token, gets an answer: another user of the\n"
      "machine cannot look at your traces through it. Nothing is\n"
      "fetched from the network.\n"
      "\n"
      "      --port N   listen on port N (default 0: any free port)\n"
      "      --open     start the browser on it ($BROWSER, else xdg-open)\n"
      "      --cache-max SIZE  the index files kept in the cache at most\n"
      "                 (bytes, or with K, M, G; default 4G); the ones\n"
      "                 this view uses are kept whatever their size\n" },
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
      "  -f, --force      remove a recording or converting trace too (for\n"
      "                   whoever writes the catalog; a user whose rm asks\n"
      "                   weftd cannot: it removes only finished traces)\n"
      "      --spool DIR  the spool weftd writes (it must have traces/),\n"
      "                   e.g. when the catalog is elsewhere and weftd was\n"
      "                   started with --spool\n" },
    { "sql", weft__cmd_sql, OPT_JSON | OPT_TABLE_CSV, 1, 1, 2,
      "[--table|--csv|--json] QUERY",
      "run a read-only SQL query on the catalog",
      "Run one SELECT statement on the catalog (SQLite; tables traces,\n"
      "locations, members, tags, regions) and print its result. The\n"
      "catalog is opened read-only and anything but reading is refused\n"
      "(writes, ATTACH, PRAGMA, schema changes, load_extension, more than\n"
      "one statement).\n"
      "\n"
      "      --table  aligned columns under a header (the default); NULL\n"
      "               is empty, control characters are escaped\n"
      "      --csv    RFC 4180 CSV with a header line, lines end in \\n;\n"
      "               NULL is an empty field; control characters but\n"
      "               \\n are escaped\n"
      "  -j, --json   an array of objects, one per row, keyed by column\n"
      "               name; integers and reals are numbers, NULL is null\n"
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
      "A process tree's locations keep their process and program (read\n"
      "from its location groups' names, \"PROGRAM (pid N)\").\n"
      "\n"
      "Takes the spool's lock, so it refuses to run while weftd uses the\n"
      "spool: stop weftd first. The old catalog is kept, renamed to\n"
      "CATALOG.old-YYYYmmddTHHMMSSZ. Run it as the user weftd runs as\n"
      "(as root, the new catalog is given to the spool's owner).\n" },
    { "import", weft__cmd_import, OPT_IMPORT, 1, 1, 2,
      "ARCHIVE/traces.otf2 [--name NAME] [--tag KEY=VALUE]... [--copy]",
      "catalog an OTF2 archive another tool wrote",
      "Catalog an OTF2 archive written by another tool (Score-P, libotf2\n"
      "directly) as a trace of yours, so that list, show, profile, report,\n"
      "compare, verify, export and path work on it. weft reads it with\n"
      "libotf2 as you (definitions, each location's local definitions and\n"
      "events), checks it as weft verify does and computes the region\n"
      "profile and the report's timelines as weftd does for its own\n"
      "traces. Members are the archive's location groups of type process\n"
      "(rank = their order), hosts their system tree nodes. A trace whose\n"
      "checks found problems (events against numberOfEvents, times going\n"
      "back, ClockProperties not covering the events, Leaves that do not\n"
      "nest) is partial, its error naming them.\n"
      "\n"
      "Refused (exit 1) with the reader's message: what libotf2 cannot\n"
      "read (no archive, a truncated events file). Refused saying so: an\n"
      "archive with duplicate definitions (EZTrace writes them; otf2-print\n"
      "-Werror and the otf2 Python reader refuse it), an anchor not named\n"
      "traces.otf2, an archive without ClockProperties (its times have no\n"
      "unit). The trace refers to the archive where it is: moving or\n"
      "removing the archive is yours; weft rm removes the catalog rows only.\n"
      "Unless you may write the catalog, weft sends the rows to weftd,\n"
      "which stores them as yours and never opens the archive.\n"
      "\n"
      "  -n, --name NAME       the trace's name (default: the archive's\n"
      "                        description, else its directory's name)\n"
      "  -t, --tag KEY=VALUE   a tag (repeat for more; KEY: 1 to 64 of\n"
      "                        A-Z a-z 0-9 _ . -)\n"
      "      --copy            copy the archive into weftd's spool (only\n"
      "                        for root and weftd's user, who write the\n"
      "                        catalog; owner: the archive file's owner)\n"
      "      --spool DIR       the spool to give the trace its key in\n"
      "                        (direct import only)\n" },
    { "run", weft__cmd_run, OPT_OWN_ARGS, 0, 0, 0,
      "[-t LIST] [--trace NAME] [--server ADDR] [-v] [--] PROGRAM "
      "[ARGS...]",
      "run a program with the recorders that apply preloaded",
      "Run PROGRAM (found through PATH as a shell does) in place of weft,\n"
      "same process, its arguments, standard streams and exit status\n"
      "unchanged, with the recorders that apply to it preloaded\n"
      "(LD_PRELOAD, after the user's own). Under a launcher:\n"
      "\n"
      "  mpirun -np 4 weft run -- ./app ARGS   srun weft run -- ./app\n"
      "\n"
      "or in front of it (mpirun, mpiexec, srun, ... by name: each task\n"
      "it starts runs under weft run, the launcher untraced):\n"
      "\n"
      "  weft run -- mpirun -np 4 ./app ARGS\n"
      "\n"
      "weft run asks PROGRAM's dynamic loader for the libraries it would\n"
      "load (ld.so --list, which runs none of PROGRAM's code) and finds\n"
      "its MPI implementation there: Open MPI (libmpi.so.40) gets\n"
      "libweft-mpi-openmpi.so, MPICH (libmpich.so.12, libmpi.so.12)\n"
      "libweft-mpi-mpich.so, from the library directory ($WEFT_LIBDIR;\n"
      "else, for a weft run from its build tree, the .libs beside it;\n"
      "else " WEFT_LIBDIR ").\n"
      "Options end at PROGRAM: './app -t 3' keeps its -t.\n"
      "\n"
      "  -t, --recorders LIST  the recorders, comma-separated; known: mpi\n"
      "                        (MPI calls through PMPI), pthread (threads\n"
      "                        and locks), io (POSIX and ISO C file I/O),\n"
      "                        openmp (OpenMP: GCC's libgomp, LLVM's\n"
      "                        libomp). Default: those that apply: mpi\n"
      "                        when PROGRAM uses MPI, openmp when it uses\n"
      "                        one of those runtimes, pthread and io for\n"
      "                        every dynamically linked PROGRAM (under a\n"
      "                        launcher, only for an MPI PROGRAM);\n"
      "                        repeatable, the lists add up\n"
      "      --trace NAME      the trace's name (sets WEFT_TRACE); without\n"
      "                        it and without WEFT_TRACE, libweft names the\n"
      "                        trace from the program and the launcher's job;\n"
      "                        outside a launcher, a program PROGRAM runs\n"
      "                        in turn is traced as NAME/ITS-PROGRAM\n"
      "      --server ADDR     weftd's address (sets WEFT_SERVER)\n"
      "  -v, --verbose         say on stderr what was found and what is\n"
      "                        preloaded (one line)\n"
      "\n"
      "Tracing never stops a run: a PROGRAM that is statically linked, a\n"
      "script, uses no MPI when only -t mpi asked for it, or whose\n"
      "recorder libraries are not installed runs untraced after one line\n"
      "on stderr saying why. Exit status: PROGRAM's; 127 when PROGRAM\n"
      "is not found, 126 when it cannot be executed, 2 on a usage error\n"
      "(an unknown recorder too).\n" },
    { "help", cmd_help, 0, 0, 1, 0, "[COMMAND]",
      "show the help of a command",
      "Print the help of COMMAND, exactly as 'weft COMMAND --help' does;\n"
      "without COMMAND, weft's usage (weft --help). An unknown COMMAND is\n"
      "a usage error (exit 2).\n" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

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
    for (size_t i = 0; i < NCOMMANDS; i++) {
        char lhs[128];
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
            weft_config_default_path(), trace_help);
}

static void command_help(const command *cmd)
{
    printf("Usage: weft %s%s %s\n\n%s",
           cmd->needs_catalog ? "[--catalog FILE] " : "", cmd->name,
           cmd->synopsis, cmd->help);
    if (strstr(cmd->synopsis, "TRACE") || strstr(cmd->help, " a TRACE"))
        printf("\n%s", trace_help);
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
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

    for (size_t i = 0; i < NCOMMANDS; i++) {
        size_t d = weft__cli_edit_distance(name, commands[i].name);
        if (d < best_d) {
            best_d = d;
            best = &commands[i];
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
static int cmd_help(cli *c)
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
