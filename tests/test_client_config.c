/* test_client_config.c - libweft's configuration (client/config.c):
 * every WEFT_* variable with its default, good values and bad ones
 * (refused with WEFT_ECONFIG), the launcher variables for rank, size and
 * job, the trace name, and WEFT_TAGS' syntax. The environment is a table
 * given through the lookup callback; nothing connects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "client_config.h"
#include "weft_errors.h"
#include "weftd_config.h"

/* A fake environment: NULL-terminated name, value pairs. */
static const char *lookup(const char *name, void *arg)
{
    const char *const *kv = arg;

    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

static const weft__proc proc = { "prog", "node1", 4242, 99, NULL };

static int parse(const char *const *envv, weft__config *c)
{
    return weft__config_parse(lookup, (void *)envv, &proc, c);
}

/* Parses one variable alone (with a trace name so size 1 needs none). */
static int parse1(const char *name, const char *value, weft__config *c)
{
    const char *envv[] = { name, value, NULL };

    return parse(envv, c);
}

static void test_defaults(void **state)
{
    const char *envv[] = { NULL };
    weft__config c;

    (void)state;
    assert_int_equal(parse(envv, &c), 0);
    assert_string_equal(c.server, WEFT__DEFAULT_SERVER);
    assert_false(c.is_unix);
    assert_string_equal(c.host, "127.0.0.1");
    assert_string_equal(c.port, "7411");
    assert_int_equal(c.rank, 0);
    assert_int_equal(c.size, 1);
    assert_string_equal(c.trace, "prog-node1-4242");
    assert_string_equal(c.job_id, "");
    assert_int_equal(c.buffer_size, WEFT__DEFAULT_BUFFER);
    assert_int_equal(c.pool_size, WEFT__DEFAULT_POOL);
    assert_int_equal(c.flush_ms, WEFT__DEFAULT_FLUSH_MS);
    assert_int_equal(c.close_timeout_ms, WEFT__DEFAULT_CLOSE_TIMEOUT_MS);
    assert_int_equal(c.stall_ms, WEFT__DEFAULT_STALL_MS);
    assert_false(c.overflow_discard);
    assert_false(c.required);
    assert_int_equal(c.signals, 1);
    assert_int_equal(c.signal_flush_ms, WEFT__DEFAULT_SIGNAL_FLUSH_MS);
    assert_false(c.locks_all);
    assert_int_equal(c.lock_threshold_ns, WEFT__DEFAULT_LOCK_THRESHOLD_NS);
    assert_int_equal(c.ntags, 0);
    assert_int_equal(c.clock, WEFT__CLOCK_AUTO);
    assert_int_equal(c.clock_shift_ns, 0);
    assert_int_equal(c.resolution, 1000000000u);
}

static void test_server(void **state)
{
    static const char *const bad[] = {
        "host:", "host:0", "host:65536", "host:12x", ":7411", "::1",
        "[::1", "[::1]x", "[]:7411", "unix:", NULL };
    weft__config c;
    char longpath[300];

    (void)state;
    assert_int_equal(parse1("WEFT_SERVER", "example.org:9000", &c), 0);
    assert_string_equal(c.host, "example.org");
    assert_string_equal(c.port, "9000");
    assert_int_equal(parse1("WEFT_SERVER", "example.org", &c), 0);
    assert_string_equal(c.port, "7411");
    assert_int_equal(parse1("WEFT_SERVER", "[::1]:7000", &c), 0);
    assert_string_equal(c.host, "::1");
    assert_string_equal(c.port, "7000");
    assert_int_equal(parse1("WEFT_SERVER", "[fe80::1]", &c), 0);
    assert_string_equal(c.port, "7411");
    assert_int_equal(parse1("WEFT_SERVER", "unix:/run/weft/sock", &c), 0);
    assert_true(c.is_unix);
    assert_string_equal(c.path, "/run/weft/sock");
    for (int i = 0; bad[i]; i++) {
        print_message("WEFT_SERVER=%s\n", bad[i]);
        assert_int_equal(parse1("WEFT_SERVER", bad[i], &c), WEFT_ECONFIG);
    }
    memcpy(longpath, "unix:/", 6);
    memset(longpath + 6, 'a', sizeof longpath - 7);
    longpath[sizeof longpath - 1] = 0;
    assert_int_equal(parse1("WEFT_SERVER", longpath, &c), WEFT_ECONFIG);
}

/* Without WEFT_SERVER: the system weftd's Unix socket when it is there
 * (the caller looked: weft__proc), which is the system spool's; else
 * the TCP default. WEFT_SERVER wins either way. */
static void test_system_socket(void **state)
{
    static const char *const none[] = { "WEFT_TRACE", "t", NULL };
    static const char *const tcp[] = { "WEFT_TRACE", "t", "WEFT_SERVER",
                                       "node0:7000", NULL };
    weft__proc here = proc;
    weft__config c;

    (void)state;
    assert_string_equal(WEFT__SYSTEM_SOCKET, WEFT_SYSTEM_SPOOL "/weftd.sock");
    here.system_socket = WEFT__SYSTEM_SOCKET;
    assert_int_equal(weft__config_parse(lookup, (void *)none, &here, &c), 0);
    assert_true(c.is_unix);
    assert_string_equal(c.path, WEFT__SYSTEM_SOCKET);
    assert_string_equal(c.server, "unix:" WEFT__SYSTEM_SOCKET);
    assert_int_equal(weft__config_parse(lookup, (void *)tcp, &here, &c), 0);
    assert_false(c.is_unix);
    assert_string_equal(c.host, "node0");
    assert_int_equal(parse(none, &c), 0);
    assert_false(c.is_unix);
    assert_string_equal(c.server, WEFT__DEFAULT_SERVER);
}

static void test_rank_size(void **state)
{
    const char *ok[] = { "WEFT_TRACE", "t", "PMI_RANK", "3", "PMI_SIZE", "4",
                         NULL };
    const char *first[] = { "WEFT_TRACE", "t", "WEFT_RANK", "1",
                            "PMI_RANK", "3", "SLURM_NTASKS", "2", NULL };
    const char *ompi[] = { "WEFT_TRACE", "t", "OMPI_COMM_WORLD_RANK", "5",
                           "OMPI_COMM_WORLD_SIZE", "8", NULL };
    const char *above[] = { "WEFT_TRACE", "t", "WEFT_RANK", "4",
                            "WEFT_SIZE", "4", NULL };
    const char *zero[] = { "WEFT_TRACE", "t", "WEFT_SIZE", "0", NULL };
    const char *notnum[] = { "WEFT_TRACE", "t", "WEFT_RANK", "-1",
                             "WEFT_SIZE", "4", NULL };
    const char *huge[] = { "WEFT_TRACE", "t", "WEFT_SIZE", "4294967296",
                           NULL };
    weft__config c;

    (void)state;
    assert_int_equal(parse(ok, &c), 0);
    assert_int_equal(c.rank, 3);
    assert_int_equal(c.size, 4);
    assert_int_equal(parse(first, &c), 0);
    assert_int_equal(c.rank, 1);
    assert_int_equal(c.size, 2);
    assert_int_equal(parse(ompi, &c), 0);
    assert_int_equal(c.rank, 5);
    assert_int_equal(c.size, 8);
    assert_int_equal(parse(above, &c), WEFT_ECONFIG);
    assert_int_equal(parse(zero, &c), WEFT_ECONFIG);
    assert_int_equal(parse(notnum, &c), WEFT_ECONFIG);
    assert_int_equal(parse(huge, &c), WEFT_ECONFIG);
}

static void test_trace_and_job(void **state)
{
    const char *named[] = { "WEFT_TRACE", "my run", "PBS_JOBID", "77.pbs",
                            NULL };
    const char *slurm[] = { "SLURM_JOB_ID", "12", "SLURM_STEP_ID", "0",
                            "SLURM_PROCID", "0", "SLURM_NTASKS", "2", NULL };
    const char *noname[] = { "WEFT_SIZE", "2", NULL };
    const char *ctl[] = { "WEFT_TRACE", "a\tb", NULL };
    const char *badrun[] = { "WEFT_RUN", "x\ny", NULL };
    char longname[WEFT__TRACE_MAX + 2];
    weft__config c;

    (void)state;
    assert_int_equal(parse(named, &c), 0);
    assert_string_equal(c.trace, "my run");
    assert_string_equal(c.job_id, "77.pbs");
    assert_int_equal(parse(slurm, &c), 0);
    assert_string_equal(c.trace, "prog-12.0");
    assert_string_equal(c.run, "slurm:12.0");
    assert_string_equal(c.job_id, "12");
    /* Several processes and nothing that names their launch. */
    assert_int_equal(parse(noname, &c), WEFT_ECONFIG);
    assert_int_equal(parse(ctl, &c), WEFT_ECONFIG);
    assert_int_equal(parse(badrun, &c), WEFT_ECONFIG);
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    assert_int_equal(parse1("WEFT_TRACE", longname, &c), WEFT_ECONFIG);
    longname[WEFT__TRACE_MAX] = 0;
    assert_int_equal(parse1("WEFT_TRACE", longname, &c), 0);
}

/* A process of weft run's tree (WEFT_TREE; the proc's pid is 4242): its
 * root is the program weft run started (WEFT_TASK_PID), every other
 * process of it a member too, of the same trace (WEFT_TRACE) and run,
 * with rank UINT32_MAX (weftd gives it one) and size 0. A launcher's rank
 * or size makes it a task of that launch instead; without WEFT_TREE it is
 * a process on its own, as before; WEFT_TREE is checked as WEFT_RUN. */
static void test_tree(void **state)
{
    const char *root[] = { "WEFT_TREE", "tree:h:4242:1", "WEFT_TRACE", "mk",
                           "WEFT_TASK_PID", "4242", NULL };
    const char *child[] = { "WEFT_TREE", "tree:h:17:1", "WEFT_TRACE", "mk",
                            "WEFT_TASK_PID", "17", NULL };
    const char *ranked[] = { "WEFT_TREE", "tree:h:17:1", "WEFT_TRACE", "mk",
                             "WEFT_TASK_PID", "17", "PMI_RANK", "1",
                             "PMI_SIZE", "2", NULL };
    const char *sized[] = { "WEFT_TREE", "tree:h:17:1", "WEFT_SIZE", "1",
                            NULL };
    const char *alone[] = { "WEFT_TASK_PID", "17", NULL };
    const char *ctl[] = { "WEFT_TREE", "tree:h\x01", "WEFT_TRACE", "mk",
                          NULL };
    char longrun[WEFT__RUN_MAX + 2];
    const char *longtree[] = { "WEFT_TREE", longrun, NULL };
    weft__config c;

    (void)state;
    assert_int_equal(parse(root, &c), 0);
    assert_true(c.tree && c.root);
    assert_string_equal(c.trace, "mk");
    assert_string_equal(c.run, "tree:h:4242:1");
    assert_int_equal(c.rank, UINT32_MAX);
    assert_int_equal(c.size, 0);
    assert_int_equal(parse(child, &c), 0);
    assert_true(c.tree && !c.root);
    assert_string_equal(c.trace, "mk");
    assert_string_equal(c.run, "tree:h:17:1");
    assert_int_equal(c.rank, UINT32_MAX);
    assert_int_equal(parse(ranked, &c), 0);
    assert_false(c.tree);
    assert_int_equal(c.rank, 1);
    assert_int_equal(c.size, 2);
    assert_int_equal(parse(sized, &c), 0);
    assert_false(c.tree);
    assert_string_equal(c.trace, "prog-node1-4242");
    assert_int_equal(parse(alone, &c), 0);
    assert_false(c.tree);
    assert_int_equal(c.rank, 0);
    assert_string_equal(c.trace, "prog-node1-4242");
    assert_int_equal(parse(ctl, &c), WEFT_ECONFIG); /* a control char */
    memset(longrun, 'r', sizeof longrun - 1);
    longrun[sizeof longrun - 1] = 0;
    assert_int_equal(parse(longtree, &c), WEFT_ECONFIG);
    longrun[WEFT__RUN_MAX] = 0;
    assert_int_equal(parse(longtree, &c), 0);
    assert_string_equal(c.run, longrun);
}

static void test_buffer_size(void **state)
{
    static const char *const bad[] = { "8191", "1g", "k", "64kb", "-64k",
                                       "99999999999999999999999999999999",
                                       "4096m", NULL };
    weft__config c;

    (void)state;
    assert_int_equal(parse1("WEFT_BUFFER_SIZE", "8192", &c), 0);
    assert_int_equal(c.buffer_size, 8192);
    assert_int_equal(parse1("WEFT_BUFFER_SIZE", "128k", &c), 0);
    assert_int_equal(c.buffer_size, 128 << 10);
    assert_int_equal(parse1("WEFT_BUFFER_SIZE", "1M", &c), 0);
    assert_int_equal(c.buffer_size, 1 << 20);
    /* The largest: a batch frame stays below weftd's frame limit. */
    assert_int_equal(parse1("WEFT_BUFFER_SIZE", "16m", &c),
                     WEFT__MAX_BUFFER >= (16u << 20) ? 0 : WEFT_ECONFIG);
    for (int i = 0; bad[i]; i++) {
        print_message("WEFT_BUFFER_SIZE=%s\n", bad[i]);
        assert_int_equal(parse1("WEFT_BUFFER_SIZE", bad[i], &c),
                         WEFT_ECONFIG);
    }
}

/* The plain numbers: each variable's range, and syntax. */
static void test_numbers(void **state)
{
    static const struct {
        const char *name;
        const char *good, *low, *high;
        size_t off;
        uint64_t value;
    } v[] = {
        { "WEFT_POOL_SIZE", "2", "1", "1048577",
          offsetof(weft__config, pool_size), 2 },
        { "WEFT_FLUSH_MS", "0", NULL, "3600001",
          offsetof(weft__config, flush_ms), 0 },
        { "WEFT_HEARTBEAT_MS", "0", NULL, "3600001",
          offsetof(weft__config, heartbeat_ms), 0 },
        { "WEFT_CLOSE_TIMEOUT_MS", "3600000", NULL, "3600001",
          offsetof(weft__config, close_timeout_ms), 3600000 },
        { "WEFT_STALL_MS", "250", NULL, "3600001",
          offsetof(weft__config, stall_ms), 250 },
        { "WEFT_SIGNAL_FLUSH_MS", "60000", NULL, "60001",
          offsetof(weft__config, signal_flush_ms), 60000 },
        { "WEFT_LOCK_THRESHOLD_NS", "1000000000", NULL, "1000000001",
          offsetof(weft__config, lock_threshold_ns), 1000000000 },
        { "WEFT_SIGNALS", "0", NULL, "2",
          offsetof(weft__config, signals), 0 },
        { "WEFT_DEBUG", "1", NULL, "2", offsetof(weft__config, debug), 1 },
        { "WEFT_TSC_KHZ", "2495999", NULL, "100000001",
          offsetof(weft__config, tsc_khz), 2495999 },
    };
    weft__config c;

    (void)state;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        uint32_t got;
        print_message("%s\n", v[i].name);
        assert_int_equal(parse1(v[i].name, v[i].good, &c), 0);
        memcpy(&got, (char *)&c + v[i].off, sizeof got);
        assert_int_equal(got, v[i].value);
        if (v[i].low)
            assert_int_equal(parse1(v[i].name, v[i].low, &c), WEFT_ECONFIG);
        assert_int_equal(parse1(v[i].name, v[i].high, &c), WEFT_ECONFIG);
        assert_int_equal(parse1(v[i].name, "12ms", &c), WEFT_ECONFIG);
        assert_int_equal(parse1(v[i].name, " 1", &c), WEFT_ECONFIG);
        assert_int_equal(parse1(v[i].name, "-1", &c), WEFT_ECONFIG);
    }
}

static void test_switches(void **state)
{
    weft__config c;

    (void)state;
    assert_int_equal(parse1("WEFT_OVERFLOW", "discard", &c), 0);
    assert_true(c.overflow_discard);
    assert_int_equal(parse1("WEFT_OVERFLOW", "wait", &c), 0);
    assert_false(c.overflow_discard);
    assert_int_equal(parse1("WEFT_OVERFLOW", "drop", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_REQUIRED", "1", &c), 0);
    assert_true(c.required);
    assert_int_equal(parse1("WEFT_REQUIRED", "0", &c), 0);
    assert_false(c.required);
    assert_int_equal(parse1("WEFT_REQUIRED", "yes", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_LOCKS", "all", &c), 0);
    assert_true(c.locks_all);
    assert_int_equal(parse1("WEFT_LOCKS", "contended", &c), 0);
    assert_false(c.locks_all);
    assert_int_equal(parse1("WEFT_LOCKS", "some", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_SIGNALS", "0", &c), 0);
    assert_int_equal(c.signals, 0);
    assert_int_equal(parse1("WEFT_SIGNALS", "2", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_CLOCK", "tsc", &c), 0);
    assert_int_equal(c.clock, WEFT__CLOCK_TSC);
    assert_int_equal(parse1("WEFT_CLOCK", "monotonic", &c), 0);
    assert_int_equal(c.clock, WEFT__CLOCK_MONOTONIC);
    assert_int_equal(parse1("WEFT_CLOCK", "auto", &c), 0);
    assert_int_equal(c.clock, WEFT__CLOCK_AUTO);
    assert_int_equal(parse1("WEFT_CLOCK", "realtime", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_CLOCK", "TSC", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_DEBUG", "1", &c), 0);
    assert_int_equal(c.debug, 1);
    assert_int_equal(parse1("WEFT_DEBUG", "yes", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_DEBUG", "2", &c), WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_TEST_CLOCK_SHIFT_NS", "-5000", &c), 0);
    assert_int_equal(c.clock_shift_ns, -5000);
    assert_int_equal(parse1("WEFT_TEST_CLOCK_SHIFT_NS", "7", &c), 0);
    assert_int_equal(c.clock_shift_ns, 7);
    assert_int_equal(parse1("WEFT_TEST_CLOCK_SHIFT_NS", "1s", &c),
                     WEFT_ECONFIG);
    assert_int_equal(parse1("WEFT_TEST_CLOCK_SHIFT_NS", "--1", &c),
                     WEFT_ECONFIG);
}

/* WEFT_TSC_FROM: TSC,NS,HOST as weft run writes it; anything else is
 * an error naming it, and leaves it unset. */
static void test_tsc_from(void **state)
{
    static const char *const bad[] = {
        "1,2", "1,2,", ",2,h", "1,,h", "0,2,h", "1,0,h", "x,2,h",
        "1,2x,h", "-1,2,h", "18446744073709551616,2,h",
        "1234567890123456789012345,2,h",
    };
    char longhost[300];
    weft__config c;

    (void)state;
    assert_int_equal(parse1("WEFT_TSC_FROM",
                            "9223372036854775808,123456789,node-1.a,b", &c),
                     0);
    assert_true(c.tsc_from_tsc == UINT64_C(9223372036854775808));
    assert_int_equal(c.tsc_from_ns, 123456789);
    assert_string_equal(c.tsc_from_host, "node-1.a,b");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        print_message("%s\n", bad[i]);
        assert_int_equal(parse1("WEFT_TSC_FROM", bad[i], &c), WEFT_ECONFIG);
        assert_int_equal(c.tsc_from_tsc, 0);
    }
    memset(longhost, 'h', sizeof longhost);
    memcpy(longhost, "1,2,", 4);
    longhost[sizeof longhost - 1] = '\0';
    assert_int_equal(parse1("WEFT_TSC_FROM", longhost, &c), WEFT_ECONFIG);
}

static void test_tags(void **state)
{
    static const char *const bad[] = {
        "novalue", "=v", "a=1,", "a=1,a=2", "sp ace=1", NULL };
    const char *req[] = { "WEFT_TAGS", "bad", "WEFT_REQUIRED", "1", NULL };
    char many[WEFT__TAGS_MAX + 64], *p = many;
    weft__config c;

    (void)state;
    assert_int_equal(parse1("WEFT_TAGS", "app=lulesh,note=a\\,b\\\\c,e=",
                            &c), 0);
    assert_int_equal(c.ntags, 3);
    assert_string_equal(c.tagbuf + c.tag_key[0], "app");
    assert_string_equal(c.tagbuf + c.tag_value[0], "lulesh");
    assert_string_equal(c.tagbuf + c.tag_key[1], "note");
    assert_string_equal(c.tagbuf + c.tag_value[1], "a,b\\c");
    assert_string_equal(c.tagbuf + c.tag_value[2], "");
    /* A bad list is reported and ignored: the trace gets no tags. */
    for (int i = 0; bad[i]; i++) {
        print_message("WEFT_TAGS=%s\n", bad[i]);
        assert_int_equal(parse1("WEFT_TAGS", bad[i], &c), 0);
        assert_int_equal(c.ntags, 0);
    }
    /* ... unless the configuration must be right. */
    assert_int_equal(parse(req, &c), WEFT_ECONFIG);
    /* Too many tags, then too many bytes. */
    for (unsigned i = 0; i <= WEFT__MAX_TAGS; i++)
        p += sprintf(p, "%sk%u=v", i ? "," : "", i);
    assert_int_equal(parse1("WEFT_TAGS", many, &c), 0);
    assert_int_equal(c.ntags, 0);
    memset(many, 'x', sizeof many - 1);
    many[0] = 'k';
    many[1] = '=';
    many[sizeof many - 1] = 0;
    assert_int_equal(parse1("WEFT_TAGS", many, &c), 0);
    assert_int_equal(c.ntags, 0);
}

/* An empty variable counts as unset. */
static void test_empty_is_unset(void **state)
{
    const char *envv[] = { "WEFT_SERVER", "", "WEFT_POOL_SIZE", "",
                           "WEFT_CLOCK", "", NULL };
    weft__config c;

    (void)state;
    assert_int_equal(parse(envv, &c), 0);
    assert_string_equal(c.server, WEFT__DEFAULT_SERVER);
    assert_int_equal(c.pool_size, WEFT__DEFAULT_POOL);
    assert_int_equal(c.clock, WEFT__CLOCK_AUTO);
    assert_int_equal(c.debug, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_server),
        cmocka_unit_test(test_system_socket),
        cmocka_unit_test(test_rank_size),
        cmocka_unit_test(test_trace_and_job),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_buffer_size),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_switches),
        cmocka_unit_test(test_tsc_from),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_empty_is_unset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
