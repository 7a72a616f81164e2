/* commands.h - weft's subcommands (weft.c runs them): their options,
 * and the table of their names, functions, arguments and help texts
 * (commands.c). */
#ifndef WEFT_CLI_COMMANDS_H
#define WEFT_CLI_COMMANDS_H

#include <stddef.h>

#include "cli.h"

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
#define OPT_VIEW 8192u   /* --port N, --open, --cache-max SIZE */
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

extern const command weft__cli_commands[];
extern const size_t weft__cli_ncommands;
/* What a TRACE argument is, after the help of a command that takes one. */
extern const char *const weft__cli_trace_help;
/* weft help [COMMAND] (weft.c). */
int weft__cli_cmd_help(cli *c);

#endif
