/* wait.c - weft wait TRACE [--timeout S]: blocks until the trace is
 * complete, partial or failed, for batch scripts; the exit status says
 * which (0 only for complete). It polls the catalog, which needs no
 * weftd: each read is a new SQLite read transaction, so it sees what
 * weftd committed since. A user for whom the catalog is weftd's alone
 * reads an image of their rows weftd answers with, asked again each
 * poll (less often: it costs weftd a copy).
 *
 * TRACE may name a trace that is not in the catalog yet (a batch script
 * starts the program and the wait together): weft wait waits for it to
 * appear, bounded by --timeout. Once found, it follows that trace by
 * id, so a newer run of the same name does not take its place.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"
#include "weft_errors.h"

/* Exit statuses besides EXIT_OK (complete), EXIT_FAIL (the catalog
 * cannot be read) and EXIT_USAGE; documented in weft.c's help and
 * weft(1). */
enum {
    WAIT_PARTIAL = 3,
    WAIT_FAILED = 4,     /* failed, or removed by weftd's retention */
    WAIT_TIMEOUT = 5,    /* still recording or converting */
    WAIT_UNKNOWN = 6,    /* no such trace (it did not appear in time, or
                            was deleted while waited for) */
};

#define WAIT_POLL_S 0.2        /* reading the catalog file */
#define WAIT_POLL_WEFTD_S 1.0  /* asking weftd for an image */
#define WAIT_MAX_S 1e9         /* --timeout at most (31 years) */
/* --timeout when none is given: longer than any conversion of a trace
 * that was complete when the wait began takes on a development machine,
 * short enough that a batch script waiting on a trace that will never
 * come (a misspelt name, a program that ran untraced) ends. "--timeout
 * never" waits as long as it takes. Documented in weft.c's help and
 * weft(1). */
#define WAIT_DEFAULT_TIMEOUT_S 600
/* How long after the time weftd said it would try a failed conversion
 * again weft wait still waits for that attempt (weftd may be busy, or
 * restarting) before it takes the failure as final. */
#define WAIT_RETRY_SLACK_S 60

/* Parses --timeout's value: a number of seconds, with decimals, and an
 * optional unit s, m, h or d; or "never" (*out -1: no timeout). Returns 0
 * with *out, or -1. */
static int parse_timeout(const char *s, double *out)
{
    static const struct { char unit; double secs; } units[] = {
        { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
    };
    size_t whole = strspn(s, "0123456789"), frac = 0, i;
    const char *p = s + whole;
    double v, mult = 1;
    char *end;

    if (strcmp(s, "never") == 0) {
        *out = -1;
        return 0;
    }
    if (*p == '.') {
        frac = strspn(p + 1, "0123456789");
        p += 1 + frac;
    }
    if (whole + frac == 0)
        return -1;
    if (*p) {                  /* a unit, and nothing after it */
        for (i = 0; i < sizeof units / sizeof units[0]; i++)
            if (*p == units[i].unit && !p[1])
                break;
        if (i == sizeof units / sizeof units[0])
            return -1;
        mult = units[i].secs;
    }
    errno = 0;
    v = strtod(s, &end);       /* the digits checked above, up to p */
    if (errno || end != p || (v *= mult) > WAIT_MAX_S)
        return -1;
    *out = v;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts;

    if (s <= 0)
        return;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* "'NAME' (#ID)" of row, escaped, in buf. */
static const char *who(const weft_trace_row *row, char *buf, size_t len)
{
    char *name = weft__cli_escape(row->name);

    snprintf(buf, len, "'%s' (#%" PRId64 ")", name, row->id);
    free(name);
    return buf;
}

/* The exit status of a finished trace row, after saying on stderr why it
 * is not 0 (and with verbose that it is). -1 while it is unfinished, or
 * failed but about to be converted again (row->retry_at). */
static int outcome(const weft_trace_row *row, int verbose)
{
    char w[512];
    char *why;
    int status;

    if (weft__cli_row_unfinished(row))
        return -1;
    if (strcmp(row->state, WEFT_STATE_FAILED) == 0 && row->retry_at &&
        (int64_t)time(NULL) <= row->retry_at + WAIT_RETRY_SLACK_S)
        return -1;
    if (strcmp(row->state, WEFT_STATE_COMPLETE) == 0) {
        if (verbose)
            fprintf(stderr, "weft wait: trace %s is complete\n",
                    who(row, w, sizeof w));
        return EXIT_OK;
    }
    why = weft__cli_escape(row->error ? row->error : "");
    if (strcmp(row->state, WEFT_STATE_PARTIAL) == 0) {
        weft__cli_error("wait", "trace %s is partial%s%s",
                        who(row, w, sizeof w), *why ? ": " : "", why);
        status = WAIT_PARTIAL;
    } else if (strcmp(row->state, WEFT_STATE_REMOVED) == 0) {
        weft__cli_error("wait", "trace %s was removed by weftd's retention%s"
                        "%s", who(row, w, sizeof w), *why ? ": " : "", why);
        status = WAIT_FAILED;
    } else {
        /* failed, or a state this weft does not know */
        weft__cli_error("wait", "trace %s %s%s%s%s", who(row, w, sizeof w),
                        strcmp(row->state, WEFT_STATE_FAILED) == 0
                        ? "failed" : row->state, *why ? ": " : "", why,
                        row->retry_at ? " (weftd was to convert it again "
                        "and did not)" : "");
        status = WAIT_FAILED;
    }
    free(why);
    return status;
}

/* A fresh look at the catalog where it is an image of weftd's. */
static int reopen(cli *c)
{
    if (!c->image)
        return EXIT_OK;
    weft_catalog_close(c->catalog);
    c->catalog = NULL;
    free(c->image);
    c->image = NULL;
    return weft__cli_open_catalog(c);
}

/* What one weft wait saw, for its messages and its --json. */
typedef struct waiter {
    cli *c;
    const char *what;        /* TRACE as given */
    double timeout;          /* seconds, -1: never */
    int64_t id;              /* 0 until found */
    char byid[32];           /* "#ID" once found */
    char found[512];         /* "'NAME' (#ID)" once found */
    char *name, *state, *error; /* of the last row seen */
    const char *outcome;     /* for --json: complete, partial, ... */
    int said_missing;
} waiter;

/* Keeps what --json and the messages need of row. */
static void remember(waiter *w, const weft_trace_row *row)
{
    free(w->name);
    free(w->state);
    free(w->error);
    w->name = weft__cli_xstrdup(row->name);
    w->state = weft__cli_xstrdup(row->state);
    w->error = row->error ? weft__cli_xstrdup(row->error) : NULL;
}

/* With --verbose, the state of a trace not finished yet, when it changed
 * since the last look (prev). */
static void say_state(const waiter *w, const weft_trace_row *row,
                      const char *prev)
{
    if (!w->c->verbose || (prev && strcmp(prev, row->state) == 0))
        return;
    if (row->retry_at && !weft__cli_row_unfinished(row)) {
        char *why = weft__cli_escape(row->error ? row->error : "?");
        fprintf(stderr, "weft wait: trace %s failed: %s; weftd converts it "
                "again in %" PRId64 " s\n", w->found, why,
                row->retry_at - (int64_t)time(NULL));
        free(why);
    } else {
        fprintf(stderr, "weft wait: trace %s is %s\n", w->found, row->state);
    }
}

/* The outcome's word for --json of a finished row's state (a constant:
 * the row is freed before it is printed). */
static const char *outcome_word(const char *state)
{
    static const char *const words[] = { WEFT_STATE_COMPLETE,
                                         WEFT_STATE_PARTIAL,
                                         WEFT_STATE_REMOVED };
    int i = WEFT__WORD_INDEX(state, words);

    return i >= 0 ? words[i] : "failed";
}

/* TRACE is not in the catalog (yet): waited for while weftd runs, which
 * may add it; at once an error when weftd is not running, which nothing
 * else would. Returns the exit status, or -1 to look again. */
static int not_there(waiter *w)
{
    char *e;

    if (weft__cli_weftd_running(w->c->catalog_path) == 0) {
        e = weft__cli_escape(w->what);
        weft__cli_error("wait", "no trace '%s' in the catalog, and weftd is "
                        "not running to add it (weft status)", e);
        free(e);
        w->outcome = "not found";
        return WAIT_UNKNOWN;
    }
    if (w->c->verbose && !w->said_missing) {
        e = weft__cli_escape(w->what);
        fprintf(stderr, "weft wait: no trace '%s' yet; waiting for it to "
                "appear\n", e);
        free(e);
        w->said_missing = 1;
    }
    return -1;
}

/* One look at the catalog. Returns the exit status, or -1 to look
 * again. */
static int look(waiter *w)
{
    weft_trace_row row;
    int rc = weft_catalog_find(w->c->catalog, w->id ? w->byid : w->what,
                               &row), status = -1;
    char *prev;

    if (rc == 0) {
        if (!w->id) {
            w->id = row.id;
            snprintf(w->byid, sizeof w->byid, "#%" PRId64, w->id);
            weft__cli_note_name(w->c, w->what, &row);
        }
        who(&row, w->found, sizeof w->found);
        status = outcome(&row, w->c->verbose);
        prev = w->state ? weft__cli_xstrdup(w->state) : NULL;
        remember(w, &row);
        if (status < 0)
            say_state(w, &row, prev);
        else
            w->outcome = outcome_word(row.state);
        free(prev);
        weft_catalog_trace_free(&row);
    } else if (rc == WEFT_ENOTFOUND && w->id) {
        weft__cli_error("wait", "trace %s was deleted from the catalog",
                        w->found);
        w->outcome = "deleted";
        status = WAIT_UNKNOWN;
    } else if (rc == WEFT_ENOTFOUND) {
        status = not_there(w);
    } else {
        status = weft__cli_fail("%s", weft_catalog_errmsg(w->c->catalog));
        w->outcome = "error";
    }
    return status;
}

/* The message and exit status of the timeout. */
static int timed_out(waiter *w)
{
    char *e = weft__cli_escape(w->what), *p = weft__cli_escape(
                                                  w->c->catalog_path);

    if (w->id && strcmp(w->state, WEFT_STATE_FAILED) == 0)
        weft__cli_error("wait", "trace %s failed, and weftd has not "
                        "converted it again after %g s", w->found,
                        w->timeout);
    else if (w->id)
        weft__cli_error("wait", "trace %s is still %s after %g s%s",
                        w->found, w->state, w->timeout, w->c->timeout ? ""
                        : " (the default --timeout; --timeout never waits "
                          "as long as it takes)");
    else
        weft__cli_error("wait", "no trace '%s' in %s after %g s", e, p,
                        w->timeout);
    free(e);
    free(p);
    w->outcome = w->id ? "timeout" : "not found";
    return w->id ? WAIT_TIMEOUT : WAIT_UNKNOWN;
}

/* --json: what the wait ended with, one object on standard output (the
 * messages stay on standard error). */
static void print_json(const waiter *w, int status, double waited)
{
    json_t *o = json_object();

    if (!o) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    weft__cli_jset(o, "trace", weft__cli_jstr(w->what));
    weft__cli_jset(o, "id", w->id ? json_integer(w->id) : json_null());
    weft__cli_jset(o, "name", weft__cli_jstr(w->name));
    weft__cli_jset(o, "state", weft__cli_jstr(w->state));
    weft__cli_jset(o, "error", weft__cli_jstr(w->error));
    weft__cli_jset(o, "outcome", weft__cli_jstr(w->outcome ? w->outcome
                                                           : "error"));
    weft__cli_jset(o, "exit_status", json_integer(status));
    weft__cli_jset(o, "waited_s", json_real(waited));
    weft__cli_jset(o, "timeout_s", w->timeout >= 0 ? json_real(w->timeout)
                                                   : json_null());
    weft__cli_print_json(o);
}

int weft__cmd_wait(cli *c)
{
    waiter w = { .c = c, .what = c->args[0],
                 .timeout = WAIT_DEFAULT_TIMEOUT_S };
    double start = now_s(), poll;
    int status;

    if (c->timeout && parse_timeout(c->timeout, &w.timeout) < 0)
        return weft__cli_usage("wait", "--timeout '%s': not a number of "
                               "seconds (e.g. 30, 2.5, 10m, 2h, 1d) nor "
                               "'never'", c->timeout);
    poll = c->image ? WAIT_POLL_WEFTD_S : WAIT_POLL_S;
    for (;;) {
        double left = start + w.timeout - now_s();
        if ((status = look(&w)) >= 0)
            break;
        if (w.timeout >= 0 && left <= 0) {
            status = timed_out(&w);
            break;
        }
        sleep_s(w.timeout >= 0 && left < poll ? left : poll);
        if (reopen(c) != EXIT_OK) {
            status = EXIT_FAIL;
            w.outcome = "error";
            break;
        }
    }
    if (c->json)
        print_json(&w, status, now_s() - start);
    free(w.name);
    free(w.state);
    free(w.error);
    return status;
}
