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
/* How long after the time weftd said it would try a failed conversion
 * again weft wait still waits for that attempt (weftd may be busy, or
 * restarting) before it takes the failure as final. */
#define WAIT_RETRY_SLACK_S 60

/* Parses --timeout's value: a number of seconds, with decimals, and an
 * optional unit s, m, h or d. Returns 0 with *out, or -1. */
static int parse_timeout(const char *s, double *out)
{
    static const struct { char unit; double secs; } units[] = {
        { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
    };
    size_t whole = strspn(s, "0123456789"), frac = 0, i;
    const char *p = s + whole;
    double v, mult = 1;
    char *end;

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

int weft__cmd_wait(cli *c)
{
    const char *what = c->args[0];
    double timeout = -1, deadline, poll;
    char byid[32], found[512], *state = NULL;
    int64_t id = 0;
    int status = -1, said_missing = 0;

    if (c->timeout && parse_timeout(c->timeout, &timeout) < 0)
        return weft__cli_usage("wait", "--timeout '%s': not a number of "
                               "seconds (e.g. 30, 2.5, 10m, 2h, 1d)",
                               c->timeout);
    deadline = now_s() + timeout;
    poll = c->image ? WAIT_POLL_WEFTD_S : WAIT_POLL_S;
    for (;;) {
        weft_trace_row row;
        int rc = weft_catalog_find(c->catalog, id ? byid : what, &row);

        if (rc == 0) {
            if (!id) {
                id = row.id;
                snprintf(byid, sizeof byid, "#%" PRId64, id);
                weft__cli_note_name(c, what, &row);
            }
            who(&row, found, sizeof found);
            status = outcome(&row, c->verbose);
            if (c->verbose && status < 0 &&
                (!state || strcmp(state, row.state) != 0)) {
                if (row.retry_at && !weft__cli_row_unfinished(&row)) {
                    char *why = weft__cli_escape(row.error ? row.error
                                                           : "?");
                    fprintf(stderr, "weft wait: trace %s failed: %s; weftd "
                            "converts it again in %" PRId64 " s\n", found,
                            why, row.retry_at - (int64_t)time(NULL));
                    free(why);
                } else
                    fprintf(stderr, "weft wait: trace %s is %s\n", found,
                            row.state);
            }
            free(state);
            state = weft__cli_xstrdup(row.state);
            weft_catalog_trace_free(&row);
        } else if (rc == WEFT_ENOTFOUND && id) {
            weft__cli_error("wait", "trace %s was deleted from the catalog",
                            found);
            status = WAIT_UNKNOWN;
        } else if (rc == WEFT_ENOTFOUND) {
            if (c->verbose && !said_missing) {
                char *e = weft__cli_escape(what);
                fprintf(stderr, "weft wait: no trace '%s' yet; waiting for "
                        "it to appear\n", e);
                free(e);
                said_missing = 1;
            }
        } else {
            status = weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        }
        if (status >= 0)
            break;
        if (timeout >= 0 && now_s() >= deadline) {
            char *e = weft__cli_escape(what), *p = weft__cli_escape(
                                                      c->catalog_path);
            if (id && strcmp(state, WEFT_STATE_FAILED) == 0)
                weft__cli_error("wait", "trace %s failed, and weftd has not "
                                "converted it again after %g s", found,
                                timeout);
            else if (id)
                weft__cli_error("wait", "trace %s is still %s after %g s",
                                found, state, timeout);
            else
                weft__cli_error("wait", "no trace '%s' in %s after %g s",
                                e, p, timeout);
            free(e);
            free(p);
            status = id ? WAIT_TIMEOUT : WAIT_UNKNOWN;
            break;
        }
        sleep_s(timeout >= 0 && deadline - now_s() < poll
                ? deadline - now_s() : poll);
        if (reopen(c) != EXIT_OK) {
            status = EXIT_FAIL;
            break;
        }
    }
    free(state);
    return status;
}
