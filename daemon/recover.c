/* recover.c - weftd's start-up scan of the spool.
 *
 * DESIGN: everything weftd acknowledged is in a member journal, so the
 * journals are the whole truth about traces not yet converted. At start,
 * before listening, each SPOOL/traces/KEY/ with journals is rebuilt:
 * torn journal tails are cut (weft_journal_open), every entry is replayed
 * through the same validation the session used when it arrived (so member
 * ids, sequence numbers and clocks are exactly as before the crash), and
 * then
 *  - a trace whose members all said goodbye is converted (again, if a
 *    conversion was interrupted: the archive is always rebuilt from the
 *    journals);
 *  - any other trace waits for its members to reconnect and resume from
 *    the sequence numbers in HelloAck, and is converted as partial after
 *    the grace period if they do not.
 * A directory without journals has been converted and committed (journals
 * are deleted only after that) and is left alone.
 */
#include "recover.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "journal.h"
#include "log.h"
#include "session.h"
#include "trace.h"
#include "weft_errors.h"

__attribute__((format(printf, 3, 4)))
static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int is_journal(const char *name, uint32_t *rank)
{
    char *end;
    unsigned long r;
    size_t n = strlen(name);

    if (strncmp(name, "rank-", 5) != 0 || n < 9 ||
        strcmp(name + n - 3, ".wj") != 0)
        return 0;
    r = strtoul(name + 5, &end, 10);
    if (end != name + n - 3 || r > UINT32_MAX)
        return 0;
    *rank = (uint32_t)r;
    return 1;
}

/* Creation time from the key's "-YYYYmmddTHHMMSSZ-" stamp, else now. */
static int64_t key_time(const char *key)
{
    const char *p = key;
    struct tm tm;

    while ((p = strchr(p, '-')) != NULL) {
        const char *end;
        memset(&tm, 0, sizeof tm);
        end = strptime(p + 1, "%Y%m%dT%H%M%SZ", &tm);
        if (end && *end == '-')
            return (int64_t)timegm(&tm);
        p++;
    }
    return (int64_t)time(NULL);
}

/* Replays one journal into member state. Returns 0 or a WEFT_E* code with
 * err naming the entry. */
static int replay(weft_trace *t, const char *path, const char *name,
                  weft_member **mp, char *err, size_t errlen)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    weft_member *m = NULL;
    char why[512];
    int rc;

    rc = weft_journal_reader_open(path, &r);
    if (rc < 0) {
        say(err, errlen, "%s: cannot read: %s", path, weft_strerror(rc));
        return rc;
    }
    while ((rc = weft_journal_reader_next(r, &e)) == 1) {
        uint64_t off = weft_journal_reader_offset(r);
        if (e.kind == WEFT_JE_HELLO) {
            Weft__Hello *h = weft__hello__unpack(NULL, e.len, e.payload);
            if (!h) {
                rc = WEFT_ECORRUPT;
                say(err, errlen, "%s: Hello before offset %" PRIu64
                         " does not unpack", path, off);
                break;
            }
            if (!m) /* a reconnect repeats Hello; the first one stands */
                rc = weft_trace_restore_member(t, h, &m, why, sizeof why);
            weft__hello__free_unpacked(h, NULL);
            if (rc < 0) {
                say(err, errlen, "%s: %s", path, why);
                break;
            }
            continue;
        }
        if (!m) {
            rc = WEFT_ECORRUPT;
            say(err, errlen, "%s: entry before offset %" PRIu64
                     " comes before the Hello", path, off);
            break;
        }
        if (e.kind == WEFT_JE_DEFS) {
            rc = weft_session_check_defs(m, e.payload, e.len, why, sizeof why);
            if (rc == 0)
                m->defs_seq = m->held_defs_seq = e.seq;
        } else if (e.kind == WEFT_JE_EVENTS) {
            uint64_t last = 0;
            rc = weft_member_location(m, e.location, why, sizeof why);
            if (rc == 0)
                rc = weft_session_check_events(m, e.location, e.base_time,
                                               e.count, e.payload, e.len,
                                               &last, why, sizeof why);
            if (rc == 0) {
                weft_loc_state *l = &m->locs[e.location];
                l->last_seq = l->held_seq = e.seq;
                if (e.count)
                    l->last_time = l->held_time = last;
                l->events += e.count;
            }
        } else if (e.kind == WEFT_JE_GOODBYE) {
            m->said_goodbye = 1;
        }
        if (rc < 0) {
            say(err, errlen, "%s: entry before offset %" PRIu64 ": %s",
                     path, off, why);
            break;
        }
    }
    weft_journal_reader_close(r);
    if (rc == 0 && !m) {
        say(err, errlen, "%s (%s): no Hello: the process never "
                 "finished its handshake", path, name);
        rc = WEFT_ENOTFOUND;
    }
    *mp = m;
    return rc < 0 ? rc : 0;
}

/* Rebuilds one trace directory. */
static void recover_trace(weft_daemon *d, const char *tdir, const char *key)
{
    DIR *dp = opendir(tdir);
    struct dirent *de;
    weft_trace *t = NULL;
    unsigned members = 0, bad = 0;

    if (!dp) {
        weft_dlog(d, WEFT_LOG_ERROR, "recovery: cannot open %s: %s", tdir,
                  strerror(errno));
        return;
    }
    while ((de = readdir(dp)) != NULL) {
        char *path = NULL, err[768];
        weft_member *m = NULL;
        uint32_t rank;
        uint64_t cut = 0;
        weft_journal *j = NULL;
        int rc;
        if (!is_journal(de->d_name, &rank))
            continue;
        if (asprintf(&path, "%s/%s", tdir, de->d_name) < 0)
            break;
        /* Cut a torn tail before replaying. */
        rc = weft_journal_open(path, &j, &cut);
        if (rc == 0) {
            weft_journal_close(j);
            if (cut)
                weft_dlog(d, WEFT_LOG_WARNING, "recovery: %s: cut %" PRIu64
                          " bytes of a torn tail (never acknowledged)", path,
                          cut);
        } else if (rc == WEFT_ECORRUPT) {
            weft_dlog(d, WEFT_LOG_ERROR, "recovery: %s: a corrupt entry with "
                      "acknowledged data after it; the file is kept as it is",
                      path);
        }
        if (!t) {
            t = weft_trace_restore(d, key, tdir, key_time(key), err,
                                   sizeof err);
            if (!t) {
                weft_dlog(d, WEFT_LOG_ERROR, "recovery: %s: %s", tdir, err);
                free(path);
                break;
            }
        }
        if (replay(t, path, de->d_name, &m, err, sizeof err) < 0) {
            weft_dlog(d, WEFT_LOG_ERROR, "recovery: %s", err);
            bad++;
        } else {
            members++;
        }
        free(path);
    }
    closedir(dp);
    if (!t)
        return;
    weft_dlog(d, WEFT_LOG_INFO, "recovery: trace '%s' (%s): %u member "
              "journals%s", t->name ? t->name : "?", key, members,
              bad ? ", some unreadable (see above)" : "");
    weft_trace_restored(t);
}

int weft_recover_spool(weft_daemon *d)
{
    char *traces = NULL;
    DIR *dp;
    struct dirent *de;

    /* Runs that ended before this start; restored traces add theirs. */
    weft_trace_load_ended_runs(d);
    if (asprintf(&traces, "%s/traces", d->cfg.spool) < 0)
        return WEFT_ENOMEM;
    dp = opendir(traces);
    if (!dp) {
        int rc = errno == ENOENT ? 0 : WEFT_EIO;
        free(traces);
        return rc;
    }
    while ((de = readdir(dp)) != NULL) {
        char *tdir = NULL;
        if (de->d_name[0] == '.')
            continue;
        if (asprintf(&tdir, "%s/%s", traces, de->d_name) < 0)
            break;
        recover_trace(d, tdir, de->d_name);
        free(tdir);
    }
    closedir(dp);
    free(traces);
    return 0;
}
