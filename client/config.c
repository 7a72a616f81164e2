/* config.c - libweft's configuration from the environment: WEFT_SERVER,
 * the rank and size, the trace name and run, buffer and pool sizes, the
 * time limits, overflow, signals, tags and the clock. See client_config.h.
 *
 * Every value is checked here, once, and a bad one is named with its
 * variable and value in one line on stderr: a typo in a job script must
 * not silently change what is traced.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "client_config.h"
#include "runid.h"
#include "weft_errors.h"

#define warn weft__warn

/* Where the variables come from. */
typedef struct envsrc {
    weft__env_fn fn;
    void *arg;
} envsrc;

/* The variable's value, NULL when unset or empty. */
static const char *env(const envsrc *e, const char *name)
{
    const char *v = e->fn(name, e->arg);

    return v && *v ? v : NULL;
}

/* The first variable of `names` that is set, NULL if none. */
static const char *env_first(const envsrc *e, const char *const *names,
                             const char **which)
{
    for (; *names; names++) {
        const char *v = env(e, *names);
        if (v) {
            *which = *names;
            return v;
        }
    }
    return NULL;
}
/* Plain decimal: digits only. 0, or -1 for bad syntax, -2 above max. */
static int parse_decimal(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (UINT64_MAX - 9) / 10)
            return -2;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v > max)
        return -2;
    *out = v;
    return 0;
}

/* A number from variable `name` in [min, max], def if unset. Returns 0 or
 * WEFT_ECONFIG after saying what is wrong. */
static int env_number(const envsrc *e, const char *name, uint64_t min,
                      uint64_t max, uint64_t def, uint64_t *out)
{
    const char *v = env(e, name);
    uint64_t n = 0;
    int rc;

    if (!v) {
        *out = def;
        return 0;
    }
    rc = parse_decimal(v, max, &n);
    if (rc == -1) {
        warn("%s='%s' is not a plain decimal number", name, v);
        return WEFT_ECONFIG;
    }
    if (rc < 0 || n < min) {
        warn("%s='%s' is out of range (%" PRIu64 " to %" PRIu64 ")", name, v,
             min, max);
        return WEFT_ECONFIG;
    }
    *out = n;
    return 0;
}

/* WEFT_BUFFER_SIZE: bytes with an optional k/K or m/M suffix. */
static int env_buffer_size(const envsrc *e, size_t *out)
{
    const char *v = env(e, "WEFT_BUFFER_SIZE");
    char digits[32];
    uint64_t n = 0, mult = 1;
    size_t len;

    if (!v) {
        *out = WEFT__DEFAULT_BUFFER;
        return 0;
    }
    len = strlen(v);
    if (len >= sizeof digits)
        goto bad;
    memcpy(digits, v, len + 1);
    if (len > 0 && strchr("kKmM", digits[len - 1])) {
        mult = (digits[len - 1] == 'k' || digits[len - 1] == 'K') ? 1024
                                                                  : 1024 * 1024;
        digits[--len] = 0;
    }
    if (parse_decimal(digits, UINT32_MAX, &n) == -1)
        goto bad;
    n *= mult;
    if (n < WEFT__MIN_BUFFER || n > WEFT__MAX_BUFFER) {
        warn("WEFT_BUFFER_SIZE='%s' is out of range (%u to %u bytes)", v,
             WEFT__MIN_BUFFER, WEFT__MAX_BUFFER);
        return WEFT_ECONFIG;
    }
    *out = (size_t)n;
    return 0;
bad:
    warn("WEFT_BUFFER_SIZE='%s' is not a size (a decimal number of bytes, "
         "optionally followed by k or m)", v);
    return WEFT_ECONFIG;
}

/* WEFT_SERVER: "host:port", "[v6addr]:port", "host" or "unix:/path";
 * unset, the system weftd's socket where it runs on this host, else
 * WEFT__DEFAULT_SERVER. */
static int parse_server(const envsrc *e, const weft__proc *proc,
                        weft__config *c)
{
    const char *v = env(e, "WEFT_SERVER");
    const char *host, *colon, *port;
    char sys[sizeof c->server];
    size_t hlen;
    uint64_t n;

    if (!v && proc->system_socket) {
        snprintf(sys, sizeof sys, "unix:%s", proc->system_socket);
        v = sys;
    }
    if (!v)
        v = WEFT__DEFAULT_SERVER;
    if (strlen(v) >= sizeof c->server) {
        warn("WEFT_SERVER is longer than %zu bytes", sizeof c->server - 1);
        return WEFT_ECONFIG;
    }
    strcpy(c->server, v);
    if (strncmp(v, "unix:", 5) == 0) {
        c->is_unix = 1;
        if (!v[5] || strlen(v + 5) >= sizeof c->path) {
            warn("WEFT_SERVER='%s': the socket path must be 1 to %zu bytes",
                 v, sizeof c->path - 1);
            return WEFT_ECONFIG;
        }
        strcpy(c->path, v + 5);
        return 0;
    }
    if (v[0] == '[') {
        const char *close = strchr(v, ']');
        if (!close || (close[1] && close[1] != ':'))
            goto bad;
        host = v + 1;
        hlen = (size_t)(close - host);
        port = close[1] ? close + 2 : WEFT__DEFAULT_PORT;
    } else {
        colon = strchr(v, ':');
        if (colon && strchr(colon + 1, ':'))
            goto bad; /* a bare IPv6 address: put it in brackets */
        host = v;
        hlen = colon ? (size_t)(colon - v) : strlen(v);
        port = colon ? colon + 1 : WEFT__DEFAULT_PORT;
    }
    if (hlen == 0 || hlen >= sizeof c->host)
        goto bad;
    if (parse_decimal(port, 65535, &n) < 0 || n == 0)
        goto bad;
    memcpy(c->host, host, hlen);
    c->host[hlen] = 0;
    snprintf(c->port, sizeof c->port, "%" PRIu64, n);
    return 0;
bad:
    warn("WEFT_SERVER='%s' is not HOST:PORT, [IPV6]:PORT or unix:/PATH "
         "(port 1 to 65535)", v);
    return WEFT_ECONFIG;
}

/* WEFT_TEST_CLOCK_SHIFT_NS: for tests only, a signed number of ns added
 * to the trace clock (a host whose clock is off). 0 or WEFT_ECONFIG. */
static int env_shift(const envsrc *e, int64_t *out)
{
    const char *v = env(e, "WEFT_TEST_CLOCK_SHIFT_NS");
    uint64_t n;

    *out = 0;
    if (!v)
        return 0;
    if (parse_decimal(v + (v[0] == '-'), INT64_MAX, &n) < 0) {
        warn("WEFT_TEST_CLOCK_SHIFT_NS='%s' is not a decimal number of ns "
             "(from -%" PRId64 " to %" PRId64 ")", v, INT64_MAX, INT64_MAX);
        return WEFT_ECONFIG;
    }
    *out = v[0] == '-' ? -(int64_t)n : (int64_t)n;
    return 0;
}

/* WEFT_TSC_FROM: "TSC,NS,HOST", two decimal numbers (neither 0) and a
 * host name: the TSC and CLOCK_MONOTONIC_RAW (ns) read together when
 * weft run started on HOST, which the processes it starts there measure
 * the TSC's frequency from (timer.c). Unset: 0 0 "". 0 or WEFT_ECONFIG. */
static int env_tsc_from(const envsrc *e, weft__config *c)
{
    const char *v = env(e, "WEFT_TSC_FROM"), *p;
    char num[2][24];

    c->tsc_from_tsc = c->tsc_from_ns = 0;
    c->tsc_from_host[0] = '\0';
    if (!v)
        return 0;
    p = v;
    for (int i = 0; i < 2; i++) {
        const char *comma = strchr(p, ',');
        if (!comma || (size_t)(comma - p) >= sizeof num[i])
            goto bad;
        memcpy(num[i], p, (size_t)(comma - p));
        num[i][comma - p] = '\0';
        p = comma + 1;
    }
    if (parse_decimal(num[0], UINT64_MAX, &c->tsc_from_tsc) < 0 ||
        parse_decimal(num[1], UINT64_MAX, &c->tsc_from_ns) < 0 ||
        !c->tsc_from_tsc || !c->tsc_from_ns || !*p ||
        strlen(p) >= sizeof c->tsc_from_host)
        goto bad;
    memcpy(c->tsc_from_host, p, strlen(p) + 1);
    return 0;
bad:
    c->tsc_from_tsc = c->tsc_from_ns = 0;
    warn("WEFT_TSC_FROM='%s' must be TSC,NS,HOST: two decimal numbers above "
         "0 and a host name, the TSC and CLOCK_MONOTONIC_RAW when weft run "
         "started on HOST", v);
    return WEFT_ECONFIG;
}

/* 1 if c may be part of a tag key. */
static int tag_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* Parses WEFT_TAGS ("key=value,key=value"; `\,` and `\\` in values are
 * a comma and a backslash) into c's tags. A bad value is reported, naming
 * the bad part, and the tags are ignored; with WEFT_REQUIRED=1 it is an
 * error. Returns 0 or WEFT_ECONFIG. */
static int parse_tags(const envsrc *e, weft__config *c)
{
    const char *v = env(e, "WEFT_TAGS"), *s;
    char *out = c->tagbuf, bad[160];
    size_t klen;

    c->ntags = 0;
    if (!v)
        return 0;
    if (strlen(v) > WEFT__TAGS_MAX) {
        snprintf(bad, sizeof bad, "longer than %u bytes", WEFT__TAGS_MAX);
        goto bad;
    }
    for (s = v; *s;) {
        const char *start = s;
        if (c->ntags == WEFT__MAX_TAGS) {
            snprintf(bad, sizeof bad, "more than %u tags", WEFT__MAX_TAGS);
            goto bad;
        }
        for (klen = 0; tag_key_char(s[klen]); klen++)
            ;
        if (klen == 0 || klen > WEFT__TAG_KEY_MAX || s[klen] != '=') {
            size_t n = strcspn(start, ",");
            snprintf(bad, sizeof bad, "'%.*s' is not key=value with a key "
                     "of 1 to %u characters [A-Za-z0-9_.-]",
                     (int)(n > 48 ? 48 : n), start, WEFT__TAG_KEY_MAX);
            goto bad;
        }
        for (uint32_t i = 0; i < c->ntags; i++) {
            if (strlen(c->tagbuf + c->tag_key[i]) == klen &&
                memcmp(c->tagbuf + c->tag_key[i], s, klen) == 0) {
                snprintf(bad, sizeof bad, "key '%.*s' appears twice",
                         (int)klen, s);
                goto bad;
            }
        }
        c->tag_key[c->ntags] = (uint16_t)(out - c->tagbuf);
        memcpy(out, s, klen);
        out += klen;
        *out++ = 0;
        s += klen + 1;
        c->tag_value[c->ntags] = (uint16_t)(out - c->tagbuf);
        for (; *s && *s != ','; s++) {
            if (*s == '\\' && (s[1] == ',' || s[1] == '\\'))
                s++;
            *out++ = *s;
        }
        *out++ = 0;
        c->ntags++;
        if (*s == ',') {
            s++;
            if (!*s) {
                snprintf(bad, sizeof bad, "a ',' ends the list");
                goto bad;
            }
        }
    }
    return 0;
bad:
    c->ntags = 0;
    /* A long list is cut short in the message; `bad` names the part. */
    if (c->required) {
        warn("WEFT_TAGS='%.80s%s': %s (WEFT_REQUIRED=1)", v,
             strlen(v) > 80 ? "..." : "", bad);
        return WEFT_ECONFIG;
    }
    warn("WEFT_TAGS='%.80s%s': %s; the trace gets no tags", v,
         strlen(v) > 80 ? "..." : "", bad);
    return 0;
}

/* Rank and size: the first launcher variable set of each list. Returns 0
 * or WEFT_ECONFIG after a message; *size_var names the source of the
 * size for later messages. */
static int parse_rank_size(const envsrc *e, weft__config *c,
                           const char **size_var)
{
    static const char *const rank_vars[] = { WEFT__RANK_VARS, NULL };
    static const char *const size_vars[] = {
        "WEFT_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
        "MV2_COMM_WORLD_SIZE", NULL };
    const char *rank_var = "default", *v;
    uint64_t n;
    int rc;

    *size_var = "default";
    c->size = 1;
    v = env_first(e, size_vars, size_var);
    if (v) {
        rc = parse_decimal(v, UINT32_MAX, &n);
        if (rc < 0 || n == 0) {
            warn("%s='%s' is not a valid trace size (a plain decimal number "
                 "from 1 to %u)", *size_var, v, UINT32_MAX);
            return WEFT_ECONFIG;
        }
        c->size = (uint32_t)n;
    }
    v = env_first(e, rank_vars, &rank_var);
    if (v) {
        if (parse_decimal(v, UINT32_MAX - 1, &n) < 0) {
            warn("%s='%s' is not a valid rank (a plain decimal number)",
                 rank_var, v);
            return WEFT_ECONFIG;
        }
        c->rank = (uint32_t)n;
    }
    if (c->rank >= c->size) {
        warn("rank %u (from %s) is not below the trace size %u (from %s)",
             c->rank, rank_var, c->size, *size_var);
        return WEFT_ECONFIG;
    }
    return 0;
}

/* A process of weft run's tree (WEFT_TREE) that no launcher made a task
 * of (no rank nor size given): rank UINT32_MAX until weftd gives it one,
 * size 0 (the trace has as many members as join), root when it is the
 * program weft run started (WEFT_TASK_PID: an exec keeps it so). */
static void parse_tree(const envsrc *e, const weft__proc *proc,
                       const char *size_var, weft__config *c)
{
    static const char *const rank_vars[] = { WEFT__RANK_VARS, NULL };
    const char *var, *task = env(e, WEFT__TASK_PID_VAR);

    if (!env(e, WEFT__TREE_VAR) || env_first(e, rank_vars, &var) ||
        strcmp(size_var, "default") != 0)
        return;
    c->tree = 1;
    c->root = task && !weft__not_the_task(task, (long)proc->pid);
    c->rank = UINT32_MAX;
    c->size = 0;
}

/* The run (runid.h), the trace name (WEFT_TRACE, else the default name of
 * the run) and the batch job id. Returns 0 or WEFT_ECONFIG. */
static int parse_trace(const envsrc *e, const weft__proc *proc,
                       const char *size_var, weft__config *c)
{
    static const char *const job_vars[] = {
        "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", NULL };
    const char *v, *job_var;
    char why[256];
    weft__run run;

    if (weft__run_identify(e->fn, e->arg, c->size, proc->host, proc->pid,
                           proc->start_ns, &run, why, sizeof why) < 0) {
        warn("%s", why);
        return WEFT_ECONFIG;
    }
    memcpy(c->run, run.id, sizeof c->run);
    v = env(e, "WEFT_TRACE");
    if (v) {
        if (strlen(v) > WEFT__TRACE_MAX) {
            warn("WEFT_TRACE is longer than %d bytes and cannot name a "
                 "trace", WEFT__TRACE_MAX);
            return WEFT_ECONFIG;
        }
        for (const char *s = v; *s; s++) {
            if ((unsigned char)*s < 0x20 || *s == 0x7f) {
                warn("WEFT_TRACE contains control characters and cannot "
                     "name a trace");
                return WEFT_ECONFIG;
            }
        }
        strcpy(c->trace, v);
    } else if (weft__run_default_name(e->fn, e->arg, proc->program, &run,
                                      c->trace, sizeof c->trace) < 0) {
        warn("WEFT_TRACE is not set and nothing identifies this launch "
             "(WEFT_RUN, PMIX_NAMESPACE, SLURM_JOB_ID, PBS_JOBID, "
             "LSB_JOBID): the %u processes of this trace need a common "
             "name (rank %u, size from %s)", c->size, c->rank, size_var);
        return WEFT_ECONFIG;
    }
    v = env_first(e, job_vars, &job_var);
    if (v)
        snprintf(c->job_id, sizeof c->job_id, "%s", v);
    return 0;
}

/* The plain numbers, as config/config.c's key table: each variable once
 * with its bounds, its default and where it goes (a 32-bit field), in
 * the order they are checked within their stage. */
enum { NUM_LIMITS, NUM_POLICY, NUM_CLOCK };
#define NUM(stage, name, min, max, def, field)                               \
    { stage, name, min, max, def, offsetof(weft__config, field),            \
      sizeof ((weft__config *)0)->field }
static const struct num_key {
    int stage;
    const char *name;
    uint64_t min, max, def;
    size_t off, size;
} num_keys[] = {
    NUM(NUM_LIMITS, "WEFT_POOL_SIZE", WEFT__MIN_POOL, WEFT__MAX_POOL,
        WEFT__DEFAULT_POOL, pool_size),
    NUM(NUM_LIMITS, "WEFT_FLUSH_MS", 0, WEFT__MAX_MS, WEFT__DEFAULT_FLUSH_MS,
        flush_ms),
    NUM(NUM_LIMITS, "WEFT_HEARTBEAT_MS", 0, WEFT__MAX_MS,
        WEFT__DEFAULT_HEARTBEAT_MS, heartbeat_ms),
    NUM(NUM_LIMITS, "WEFT_CLOSE_TIMEOUT_MS", 0, WEFT__MAX_MS,
        WEFT__DEFAULT_CLOSE_TIMEOUT_MS, close_timeout_ms),
    NUM(NUM_LIMITS, "WEFT_STALL_MS", 0, WEFT__MAX_MS, WEFT__DEFAULT_STALL_MS,
        stall_ms),
    NUM(NUM_POLICY, "WEFT_SIGNALS", 0, 1, 1, signals),
    NUM(NUM_POLICY, "WEFT_SIGNAL_FLUSH_MS", 0, WEFT__MAX_SIGNAL_FLUSH_MS,
        WEFT__DEFAULT_SIGNAL_FLUSH_MS, signal_flush_ms),
    NUM(NUM_POLICY, "WEFT_LOCK_THRESHOLD_NS", 0, WEFT__MAX_LOCK_THRESHOLD_NS,
        WEFT__DEFAULT_LOCK_THRESHOLD_NS, lock_threshold_ns),
    NUM(NUM_CLOCK, "WEFT_DEBUG", 0, 1, 0, debug),
    NUM(NUM_CLOCK, "WEFT_TSC_KHZ", 0, WEFT__MAX_TSC_KHZ, 0, tsc_khz),
};
#undef NUM

/* The numbers of `stage` from the table into c. 0 or WEFT_ECONFIG (the
 * first bad one said). */
static int parse_numbers(const envsrc *e, int stage, weft__config *c)
{
    for (size_t i = 0; i < sizeof num_keys / sizeof *num_keys; i++) {
        const struct num_key *k = &num_keys[i];
        uint64_t n;
        uint32_t v;
        int rc;

        _Static_assert(sizeof c->debug == sizeof v &&
                       sizeof c->signals == sizeof v, "32-bit fields");
        if (k->stage != stage)
            continue;
        rc = env_number(e, k->name, k->min, k->max, k->def, &n);
        if (rc < 0)
            return rc;
        v = (uint32_t)n;
        memcpy((char *)c + k->off, &v, sizeof v);
    }
    return 0;
}

/* Buffers, pool and the time limits. Returns 0 or WEFT_ECONFIG. */
static int parse_limits(const envsrc *e, weft__config *c)
{
    int rc;

    rc = env_buffer_size(e, &c->buffer_size);
    if (rc < 0)
        return rc;
    c->grow_ms = WEFT__GROW_MS;
    return parse_numbers(e, NUM_LIMITS, c);
}

/* WEFT_OVERFLOW, WEFT_REQUIRED, WEFT_LOCKS, WEFT_STDIO, WEFT_SIGNALS,
 * WEFT_SIGNAL_FLUSH_MS, WEFT_LOCK_THRESHOLD_NS.
 * Returns 0 or WEFT_ECONFIG. */
static int parse_policy(const envsrc *e, weft__config *c)
{
    const char *v;

    v = env(e, "WEFT_OVERFLOW");
    if (v && strcmp(v, "wait") != 0 && strcmp(v, "discard") != 0) {
        warn("WEFT_OVERFLOW='%s' must be wait or discard", v);
        return WEFT_ECONFIG;
    }
    c->overflow_discard = v && strcmp(v, "discard") == 0;
    v = env(e, "WEFT_REQUIRED");
    if (v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        warn("WEFT_REQUIRED='%s' must be 0 or 1", v);
        return WEFT_ECONFIG;
    }
    c->required = v && v[0] == '1';
    v = env(e, "WEFT_LOCKS");
    if (v && strcmp(v, "contended") != 0 && strcmp(v, "all") != 0) {
        warn("WEFT_LOCKS='%s' must be contended or all", v);
        return WEFT_ECONFIG;
    }
    c->locks_all = v && strcmp(v, "all") == 0;
    v = env(e, "WEFT_STDIO");
    if (v && strcmp(v, "syscalls") != 0 && strcmp(v, "all") != 0) {
        warn("WEFT_STDIO='%s' must be syscalls or all", v);
        return WEFT_ECONFIG;
    }
    c->stdio_all = v && strcmp(v, "all") == 0;
    return parse_numbers(e, NUM_POLICY, c);
}

/* WEFT_CLOCK: auto (default), monotonic or tsc; what the CPU and the
 * kernel allow is timer.c's question, at open. WEFT_TSC_KHZ: the TSC's
 * frequency (0: measure it); WEFT_TSC_FROM: where weft run started the
 * measurement for the processes it starts. WEFT_DEBUG: 0 or 1. 0 or
 * WEFT_ECONFIG. */
static int parse_clock(const envsrc *e, weft__config *c)
{
    static const char *const names[] = { "auto", "monotonic", "tsc" };
    const char *v = env(e, "WEFT_CLOCK");
    int rc;

    rc = env_shift(e, &c->clock_shift_ns);
    if (rc == 0)
        rc = parse_numbers(e, NUM_CLOCK, c);
    if (rc == 0)
        rc = env_tsc_from(e, c);
    if (rc < 0)
        return rc;
    c->clock = -1;
    for (int i = 0; i < 3; i++)
        if (!v || strcmp(v, names[i]) == 0) {
            c->clock = v ? i : WEFT__CLOCK_AUTO;
            break;
        }
    if (c->clock < 0) {
        warn("WEFT_CLOCK='%s' must be auto, monotonic or tsc", v);
        return WEFT_ECONFIG;
    }
    return 0;
}

/* WEFT_AUTH (munge or none), WEFT_DAEMON_USER, WEFT_MUNGE_SOCKET.
 * Whether the user exists is asked when connecting (client/auth.c): a
 * lookup may allocate. 0 or WEFT_ECONFIG. */
static int parse_auth(const envsrc *e, weft__config *c)
{
    const char *v = env(e, "WEFT_AUTH");

    if (v && strcmp(v, "munge") != 0 && strcmp(v, "none") != 0) {
        warn("WEFT_AUTH='%s' must be munge or none", v);
        return WEFT_ECONFIG;
    }
    c->auth_none = v && strcmp(v, "none") == 0;
    v = env(e, "WEFT_DAEMON_USER");
    if (v && (!*v || strlen(v) >= sizeof c->daemon_user ||
              strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789._-$") != strlen(v))) {
        warn("WEFT_DAEMON_USER='%s' must be a user name or a uid", v);
        return WEFT_ECONFIG;
    }
    if (v)
        memcpy(c->daemon_user, v, strlen(v) + 1);
    v = env(e, "WEFT_MUNGE_SOCKET");
    if (v && strlen(v) >= sizeof c->munge_socket) {
        warn("WEFT_MUNGE_SOCKET='%s' is longer than a socket path may be "
             "(%zu bytes)", v, sizeof c->munge_socket - 1);
        return WEFT_ECONFIG;
    }
    if (v)
        memcpy(c->munge_socket, v, strlen(v) + 1);
    return 0;
}

/* See client_config.h. The variables are checked in a fixed order, so the first
 * bad one is the one reported. */
int weft__config_parse(weft__env_fn fn, void *arg, const weft__proc *proc,
                       weft__config *c)
{
    const envsrc e = { fn, arg };
    const char *size_var = "default";
    int rc;

    memset(c, 0, sizeof *c);
    c->resolution = 1000000000u;
    rc = parse_server(&e, proc, c);
    if (rc == 0)
        rc = parse_rank_size(&e, c, &size_var);
    if (rc == 0) {
        parse_tree(&e, proc, size_var, c);
        rc = parse_trace(&e, proc, size_var, c);
    }
    if (rc == 0)
        rc = parse_limits(&e, c);
    if (rc == 0)
        rc = parse_policy(&e, c);
    if (rc == 0)
        rc = parse_tags(&e, c);
    if (rc == 0)
        rc = parse_clock(&e, c);
    if (rc == 0)
        rc = parse_auth(&e, c);
    return rc;
}
