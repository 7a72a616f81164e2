/* test_config.c - weftd configuration: defaults, file, flags, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpdir.h"
#include "weftd_config.h"
#include "weft_errors.h"

static char *write_file(const char *text)
{
    static char path[4096];
    FILE *f;
    int fd;

    snprintf(path, sizeof path, "%s/weft-test-config-XXXXXX", tu_tmpbase());
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_defaults(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    assert_string_equal(c.listen, WEFT_DEFAULT_LISTEN);
    assert_int_equal(c.listen_backlog, 4096);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_non_null(strstr(c.catalog, "/catalog.db"));
    assert_int_equal(strncmp(c.catalog, c.spool, strlen(c.spool)), 0);
    weft_config_free(&c);
}

static void test_file_and_override(void **state)
{
    weft_config c;
    char err[256];
    char *path = write_file("; comment\n[weftd]\nlisten = 127.0.0.1:9999\n"
                            "spool = /tmp/x\nlog_level = debug\n"
                            "convert_threads = 2\n"
                            "[limits]\nmax_frame = 64k\nmax_connections = 7\n"
                            "listen_backlog = 100\n");

    weft_config_init(&c);
    assert_int_equal(weft_config_load_file(&c, path, 0, err, sizeof err), 0);
    assert_string_equal(c.listen, "127.0.0.1:9999");
    assert_int_equal(c.max_frame, 65536);
    assert_int_equal(c.max_connections, 7);
    assert_int_equal(c.listen_backlog, 100);
    assert_int_equal(c.log_level, 3);
    assert_int_equal(c.convert_threads, 2);
    assert_int_equal(weft_config_set(&c, "weftd", "spool", "/tmp/y", err,
                                     sizeof err), 0);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_string_equal(c.catalog, "/tmp/y/catalog.db");
    weft_config_free(&c);
    unlink(path);
}

static void expect_file_error(const char *text, const char *needle)
{
    weft_config c;
    char err[512];
    char *path = write_file(text);

    weft_config_init(&c);
    assert_int_equal(weft_config_load_file(&c, path, 0, err, sizeof err),
                     WEFT_ECONFIG);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not mention '%s'", err, needle);
    weft_config_free(&c);
    unlink(path);
}

static void test_file_errors(void **state)
{
    expect_file_error("[weftd]\nlisten = a:1\nbogus = 1\n", ":3: unknown key 'bogus'");
    expect_file_error("[limits]\nmax_frame = lots\n", "max_frame = 'lots'");
    expect_file_error("[limits]\nmax_frame = 12\n", "must be between");
    expect_file_error("[weftd]\nconvert_threads = 9\n", "convert_threads");
    expect_file_error("[weftd]\nconvert_threads = -1\n", "convert_threads");
    expect_file_error("[limits]\n\nmax_connections = 4k\n", ":3:");
    expect_file_error("[limits]\nlisten_backlog = 0\n", "listen_backlog");
    expect_file_error("[limits]\nlisten_backlog = 65536\n", "must be between");
    expect_file_error("[weftd]\nlog_level = loud\n", "log_level");
    expect_file_error("[weftd]\nthis is not ini\n", ":2:");
    expect_file_error("[other]\nlisten = x:1\n", "section [other]");
    /* What --check-config prints must read back the same (found by
     * fuzz/fuzz_config): a ';' there would start a comment. */
    expect_file_error("[weftd]\nlisten =; 5.0.0.1:74\n",
                      ":2: listen: a ';' (a comment in weftd.conf) in its "
                      "value (0x3b at byte 0)");
    expect_file_error("[weftd]\nspool = /a\x01" "b\n", "spool: a control "
                      "character in its value (0x01 at byte 2)");
}

/* Flags take what the file could not hold only as the file would. */
static void test_set_strings(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_int_equal(weft_config_set(&c, "weftd", "spool", " /x", err,
                                     sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "spool = ' /x': blanks around the value"));
    assert_int_equal(weft_config_set(&c, "weftd", "spool", "/a;b", err,
                                     sizeof err), WEFT_ECONFIG);
    assert_int_equal(weft_config_set(&c, "weftd", "spool", "/a b", err,
                                     sizeof err), 0);
    assert_string_equal(c.spool, "/a b");
    weft_config_free(&c);
}

static void test_missing_file(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    assert_int_equal(weft_config_load_file(&c, "/nonexistent/weftd.conf", 1,
                                           err, sizeof err), 0);
    assert_int_equal(weft_config_load_file(&c, "/nonexistent/weftd.conf", 0,
                                           err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "/nonexistent/weftd.conf"));
    weft_config_free(&c);
}

static void test_finish_checks(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    weft_config_set(&c, "weftd", "listen", "nocolon", err, sizeof err);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "HOST:PORT"));
    weft_config_set(&c, "weftd", "listen", "", err, sizeof err);
    weft_config_set(&c, "weftd", "socket", "", err, sizeof err);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "nothing to listen on"));
    weft_config_free(&c);
}

/* socket: SPOOL/weftd.sock unless set (empty: none); none when that path
 * is too long for a Unix socket. */
static void test_default_socket(void **state)
{
    weft_config c;
    char err[256], spool[121];

    (void)state;
    weft_config_init(&c);
    weft_config_set(&c, "weftd", "spool", "/srv/weft", err, sizeof err);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_string_equal(c.socket, "/srv/weft/weftd.sock");
    weft_config_free(&c);

    weft_config_init(&c);
    weft_config_set(&c, "weftd", "socket", "", err, sizeof err);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_string_equal(c.socket, "");
    weft_config_free(&c);

    memset(spool, 'x', sizeof spool - 1);
    spool[0] = '/';
    spool[sizeof spool - 1] = 0;
    weft_config_init(&c);
    assert_int_equal(weft_config_set(&c, "weftd", "spool", spool, err,
                                     sizeof err), 0);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_string_equal(c.socket, "");
    weft_config_free(&c);
}

/* libinih reads lines of 198 bytes at most: a longer value, a spool whose
 * derived catalog line would be longer, and a longer line in the file are
 * refused naming them (found by fuzz/fuzz_config: --check-config printed
 * a catalog line its own parser split in two). */
static void test_long_lines(void **state)
{
    weft_config c;
    char err[512], value[200], text[512], *path;

    (void)state;
    memset(value, 'v', sizeof value - 1);
    value[0] = '/';
    value[sizeof value - 1] = 0;
    weft_config_init(&c);
    assert_int_equal(weft_config_set(&c, "weftd", "spool", value, err,
                                     sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "spool: a value of 199 bytes"));
    value[180] = 0; /* fits a line, its catalog does not */
    assert_int_equal(weft_config_set(&c, "weftd", "spool", value, err,
                                     sizeof err), 0);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "set catalog"));
    weft_config_free(&c);

    snprintf(text, sizeof text, "[weftd]\n# %s%s\n", value, value);
    path = write_file(text);
    weft_config_init(&c);
    assert_int_equal(weft_config_load_file(&c, path, 0, err, sizeof err),
                     WEFT_ECONFIG);
    assert_non_null(strstr(err, ":2: a line longer than 199 bytes"));
    weft_config_free(&c);
    unlink(path);
}

static void test_print_roundtrip(void **state)
{
    weft_config a, b;
    char err[256], *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char *path;

    weft_config_init(&a);
    weft_config_set(&a, "limits", "max_locations", "99", err, sizeof err);
    weft_config_finish(&a, err, sizeof err);
    weft_config_print(&a, f);
    fclose(f);
    path = write_file(buf);
    weft_config_init(&b);
    assert_int_equal(weft_config_load_file(&b, path, 0, err, sizeof err), 0);
    assert_int_equal(b.max_locations, 99);
    assert_string_equal(b.catalog, a.catalog);
    free(buf);
    unlink(path);
    weft_config_free(&a);
    weft_config_free(&b);
}

/* The shipped etc/weftd.conf documents every key (as ";key = value")
 * with its built-in default: uncommented, it parses to the defaults. */
static void test_shipped_file(void **state)
{
    weft_config a, b;
    char err[256], path[4096], line[1024], *text = NULL, *printed = NULL;
    size_t tlen = 0, plen = 0;
    const char *src = getenv("WEFT_SRCDIR");
    FILE *in, *out, *p;
    char *tmp;

    snprintf(path, sizeof path, "%s/etc/weftd.conf", src ? src : ".");
    in = fopen(path, "r");
    assert_non_null(in);
    out = open_memstream(&text, &tlen);
    while (fgets(line, sizeof line, in))
        fputs(line[0] == ';' ? line + 1 : line, out);
    fclose(in);
    fclose(out);
    tmp = write_file(text);
    weft_config_init(&a);
    weft_config_init(&b);
    assert_int_equal(weft_config_load_file(&a, tmp, 0, err, sizeof err), 0);
    unlink(tmp);
    assert_string_equal(a.listen, b.listen);
    assert_string_equal(a.socket, b.socket);
    assert_string_equal(a.catalog, b.catalog);
    assert_int_equal(a.durability, b.durability);
    assert_int_equal(a.log_level, b.log_level);
    assert_int_equal(a.grace_period, b.grace_period);
    assert_int_equal(a.convert_threads, b.convert_threads);
    assert_int_equal(a.max_conversions, b.max_conversions);
    assert_int_equal(a.nice, b.nice);
    assert_int_equal(a.write_while_recording, b.write_while_recording);
    assert_int_equal(a.convert_memory, b.convert_memory);
    assert_int_equal(a.live_interval, b.live_interval);
    assert_int_equal(a.max_frame, b.max_frame);
    assert_int_equal(a.max_connections, b.max_connections);
    assert_int_equal(a.max_conn_pending, b.max_conn_pending);
    assert_int_equal(a.max_buffered, b.max_buffered);
    assert_int_equal(a.idle_timeout, b.idle_timeout);
    assert_int_equal(a.shutdown_timeout, b.shutdown_timeout);
    assert_int_equal(a.max_string, b.max_string);
    assert_int_equal(a.max_definitions, b.max_definitions);
    assert_int_equal(a.max_definition_bytes, b.max_definition_bytes);
    assert_int_equal(a.max_questions_per_user, b.max_questions_per_user);
    assert_int_equal(a.max_locations, b.max_locations);
    assert_int_equal(a.max_members, b.max_members);
    assert_int_equal(a.max_user_spool_bytes, b.max_user_spool_bytes);
    assert_int_equal(a.min_free_spool_bytes, b.min_free_spool_bytes);
    /* Every key weftd knows (--check-config lists them) is in the file. */
    p = open_memstream(&printed, &plen);
    weft_config_print(&b, p);
    fclose(p);
    for (char *l = strtok(printed, "\n"); l; l = strtok(NULL, "\n")) {
        char want[128];
        const char *eq = strstr(l, " = ");
        if (l[0] == '#' || l[0] == '[' || !eq)
            continue;
        snprintf(want, sizeof want, "\n%.*s =", (int)(eq - l), l);
        if (!strstr(text, want))
            fail_msg("etc/weftd.conf does not document key '%.*s'",
                     (int)(eq - l), l);
    }
    free(printed);
    free(text);
    weft_config_free(&a);
    weft_config_free(&b);
}

/* max_buffered, idle_timeout, shutdown_timeout: values, units, bounds. */
static void test_new_limits(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    assert_int_equal(c.max_buffered, 64u << 20);
    assert_int_equal(c.idle_timeout, 300);
    assert_int_equal(c.shutdown_timeout, 10);
    assert_int_equal(weft_config_set(&c, "limits", "max_buffered", "16M", err,
                                     sizeof err), 0);
    assert_int_equal(c.max_buffered, 16u << 20);
    assert_int_equal(weft_config_set(&c, "limits", "idle_timeout", "0", err,
                                     sizeof err), 0);
    assert_int_equal(c.idle_timeout, 0);
    weft_config_free(&c);
    expect_file_error("[limits]\nmax_buffered = 1k\n", "max_buffered = 1024: "
                      "must be between 65536 and");
    expect_file_error("[limits]\nshutdown_timeout = 0\n", "shutdown_timeout "
                      "= 0: must be between 1 and 3600");
    expect_file_error("[limits]\nidle_timeout = 5s\n", "idle_timeout = '5s': "
                      "not a whole number");
    expect_file_error("[weftd]\nidle_timeout = 5\n", "unknown key "
                      "'idle_timeout' in section [weftd]");
}

/* A whole-number key of [section] at offset off of weft_config: its
 * default, both ends of its range (set by section and by --set), one
 * past either end and a unit refused naming them, and the key refused in
 * the other section. */
static void check_count_key(const char *section, const char *key, size_t off,
                            uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *other = strcmp(section, "weftd") == 0 ? "limits" : "weftd";
    char err[256], text[128], want[128], v[32];
    weft_config c;

    weft_config_init(&c);
    assert_int_equal(*(uint64_t *)((char *)&c + off), def);
    snprintf(v, sizeof v, "%" PRIu64, lo);
    assert_int_equal(weft_config_set(&c, section, key, v, err, sizeof err), 0);
    assert_int_equal(*(uint64_t *)((char *)&c + off), lo);
    snprintf(v, sizeof v, "%" PRIu64, hi);
    assert_int_equal(weft_config_set(&c, NULL, key, v, err, sizeof err), 0);
    assert_int_equal(*(uint64_t *)((char *)&c + off), hi);
    weft_config_free(&c);
    for (int below = 0; below < 2; below++) {
        uint64_t bad = below ? lo - 1 : hi + 1;
        if (below && lo == 0)
            continue;
        snprintf(text, sizeof text, "[%s]\n%s = %" PRIu64 "\n", section, key,
                 bad);
        snprintf(want, sizeof want, "%s = %" PRIu64 ": must be between %"
                 PRIu64 " and %" PRIu64, key, bad, lo, hi);
        expect_file_error(text, want);
    }
    snprintf(text, sizeof text, "[%s]\n%s = 2s\n", section, key);
    snprintf(want, sizeof want, "%s = '2s': not a whole number", key);
    expect_file_error(text, want);
    snprintf(text, sizeof text, "[%s]\n%s = 2\n", other, key);
    snprintf(want, sizeof want, "unknown key '%s' in section [%s]", key,
             other);
    expect_file_error(text, want);
}

/* live_interval: seconds, 0 (never) to 3600, default 2. */
static void test_live_interval(void **state)
{
    (void)state;
    check_count_key("weftd", "live_interval",
                    offsetof(weft_config, live_interval), 2, 0, 3600);
}

/* max_definitions: ids per member and id space, 16 to 2^24 (what
 * conversion's unifier takes: more was acknowledged but failed its
 * conversion), default 2^20. */
static void test_max_definitions(void **state)
{
    (void)state;
    check_count_key("limits", "max_definitions",
                    offsetof(weft_config, max_definitions), 1u << 20, 16,
                    1u << 24);
}

/* trace_ids: random (the default) or sequential; anything else is
 * refused naming the key (the ids themselves: test_catalog). */
static void test_trace_ids(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_int_equal(c.trace_ids, 0);
    assert_int_equal(weft_config_set(&c, "weftd", "trace_ids", "sequential",
                                     err, sizeof err), 0);
    assert_int_equal(c.trace_ids, 1);
    assert_int_equal(weft_config_set(&c, "weftd", "trace_ids", "random",
                                     err, sizeof err), 0);
    assert_int_equal(c.trace_ids, 0);
    weft_config_free(&c);
    expect_file_error("[weftd]\ntrace_ids = counted\n", "trace_ids");
}

/* write_while_recording: yes (the default) or no; anything else is
 * refused naming the key (what it does: test_convert_stream,
 * e2e_stream.sh). */
static void test_write_while_recording(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_int_equal(c.write_while_recording, 1);
    assert_int_equal(weft_config_set(&c, "weftd", "write_while_recording",
                                     "no", err, sizeof err), 0);
    assert_int_equal(c.write_while_recording, 0);
    assert_int_equal(weft_config_set(&c, "weftd", "write_while_recording",
                                     "yes", err, sizeof err), 0);
    assert_int_equal(c.write_while_recording, 1);
    weft_config_free(&c);
    expect_file_error("[weftd]\nwrite_while_recording = sometimes\n",
                      "write_while_recording");
}

/* max_definition_bytes: bytes of definitions per trace, 64 KiB to 1 TiB,
 * default 256 MiB (the refusal is tested in test_server_limits). */
static void test_max_definition_bytes(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_int_equal(c.max_definition_bytes, 256u << 20);
    assert_int_equal(weft_config_set(&c, NULL, "max_definition_bytes", "1G",
                                     err, sizeof err), 0);
    assert_int_equal(c.max_definition_bytes, 1u << 30);
    assert_int_equal(weft_config_set(&c, "limits", "max_definition_bytes",
                                     "64k", err, sizeof err), 0);
    assert_int_equal(c.max_definition_bytes, 64u << 10);
    weft_config_free(&c);
    expect_file_error("[limits]\nmax_definition_bytes = 1000\n",
                      "max_definition_bytes = 1000: must be between 65536 "
                      "and 1099511627776");
    expect_file_error("[weftd]\nmax_definition_bytes = 1M\n", "unknown key "
                      "'max_definition_bytes' in section [weftd]");
}

/* max_questions_per_user: 1 to 64 (WEFT_ASK_MAX_QUEUED), default 4. */
static void test_max_questions_per_user(void **state)
{
    (void)state;
    check_count_key("limits", "max_questions_per_user",
                    offsetof(weft_config, max_questions_per_user), 4, 1, 64);
}

/* reserved_connections: admins' connections beyond max_connections, 0
 * (none) to 1024, default 16. */
static void test_reserved_connections(void **state)
{
    (void)state;
    check_count_key("limits", "reserved_connections",
                    offsetof(weft_config, reserved_connections), 16, 0, 1024);
}

/* max_conversions: traces converted at once, 1 to 64, default 2 (the
 * queue it bounds is tested in test_trace and test_worker). */
static void test_max_conversions(void **state)
{
    (void)state;
    check_count_key("weftd", "max_conversions",
                    offsetof(weft_config, max_conversions), 2, 1, 64);
}

/* nice: weftd's nice value, 0 to 19, default 19 (that weftd runs at it
 * is tested in e2e_reload.sh). */
static void test_nice(void **state)
{
    (void)state;
    check_count_key("weftd", "nice", offsetof(weft_config, nice), 19, 0, 19);
}

/* convert_memory: bytes, 32 MiB to 1 TiB, default 256 MiB; below the
 * least a conversion needs it is refused naming the bound (the writers
 * it gives are tested in test_convert). */
static void test_convert_memory(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_int_equal(c.convert_memory, 256u << 20);
    assert_int_equal(weft_config_set(&c, NULL, "convert_memory", "1G", err,
                                     sizeof err), 0);
    assert_int_equal(c.convert_memory, 1u << 30);
    weft_config_free(&c);
    expect_file_error("[weftd]\nconvert_memory = 16M\n", "convert_memory = "
                      "16777216: must be between 33554432 and "
                      "1099511627776");
    expect_file_error("[limits]\nconvert_memory = 64M\n", "unknown key "
                      "'convert_memory' in section [limits]");
}

/* max_user_spool_bytes: on by default (10 GiB), 0 turns it off, at most
 * 2^60. */
static void test_max_user_spool_bytes(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_int_equal(c.max_user_spool_bytes, UINT64_C(10) << 30);
    assert_int_equal(weft_config_set(&c, NULL, "max_user_spool_bytes", "1M",
                                     err, sizeof err), 0);
    assert_int_equal(c.max_user_spool_bytes, 1u << 20);
    assert_int_equal(weft_config_set(&c, NULL, "max_user_spool_bytes", "0",
                                     err, sizeof err), 0);
    assert_int_equal(c.max_user_spool_bytes, 0);
    weft_config_free(&c);
    expect_file_error("[limits]\nmax_user_spool_bytes = 2147483648G\n",
                      "max_user_spool_bytes = 2305843009213693952: must be "
                      "between 0 and 1152921504606846976");
}

/* [cluster]: no head (its own), the host name, heartbeats of 5 s; a
 * head must be HOST:PORT, a heartbeat 1 to 3600 s; the keys belong to
 * [cluster], not [weftd]. */
static void test_cluster(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_string_equal(c.cluster_head, "");
    assert_string_equal(c.node_name, "");
    assert_int_equal(c.cluster_heartbeat, 5);
    assert_int_equal(weft_config_set(&c, "cluster", "head",
                                     "head.example:7411", err, sizeof err),
                     0);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), 0);
    assert_int_equal(weft_config_set(&c, NULL, "head", "head.example", err,
                                     sizeof err), 0);
    assert_int_equal(weft_config_finish(&c, err, sizeof err), WEFT_ECONFIG);
    assert_string_equal(err, "[cluster] head = 'head.example': expected "
                        "HOST:PORT");
    assert_int_equal(weft_config_set(&c, "weftd", "head", "h:1", err,
                                     sizeof err), WEFT_ECONFIG);
    weft_config_free(&c);
    expect_file_error("[cluster]\nheartbeat = 0\n",
                      "heartbeat = 0: must be between 1 and 3600");
}

/* min_free_spool_bytes: 1 GiB by default, 0 turns it off, at most 2^60. */
static void test_min_free_spool_bytes(void **state)
{
    weft_config c;
    char err[256];

    (void)state;
    weft_config_init(&c);
    assert_int_equal(c.min_free_spool_bytes, UINT64_C(1) << 30);
    assert_int_equal(weft_config_set(&c, NULL, "min_free_spool_bytes", "64M",
                                     err, sizeof err), 0);
    assert_int_equal(c.min_free_spool_bytes, 64u << 20);
    assert_int_equal(weft_config_set(&c, NULL, "min_free_spool_bytes", "0",
                                     err, sizeof err), 0);
    assert_int_equal(c.min_free_spool_bytes, 0);
    weft_config_free(&c);
    expect_file_error("[limits]\nmin_free_spool_bytes = 2147483648G\n",
                      "min_free_spool_bytes = 2305843009213693952: must be "
                      "between 0 and 1152921504606846976");
}

/* --set KEY=VALUE: a key of any section; an unknown one is named. */
static void test_set_any_section(void **state)
{
    weft_config c;
    char err[256];

    weft_config_init(&c);
    assert_int_equal(weft_config_set(&c, NULL, "max_buffered", "1M", err,
                                     sizeof err), 0);
    assert_int_equal(c.max_buffered, 1u << 20);
    assert_int_equal(weft_config_set(&c, NULL, "grace_period", "5", err,
                                     sizeof err), 0);
    assert_int_equal(c.grace_period, 5);
    assert_int_equal(c.abort_grace_period, 5); /* its default */
    assert_int_equal(weft_config_set(&c, NULL, "abort_grace_period", "0",
                                     err, sizeof err), WEFT_ECONFIG);
    assert_non_null(strstr(err, "abort_grace_period"));
    assert_int_equal(weft_config_set(&c, NULL, "abort_grace_period", "9",
                                     err, sizeof err), 0);
    assert_int_equal(c.abort_grace_period, 9);
    assert_int_equal(weft_config_set(&c, NULL, "nope", "1", err, sizeof err),
                     WEFT_ECONFIG);
    assert_string_equal(err, "unknown key 'nope'");
    weft_config_free(&c);
}

/* The default file is /etc/weft/weftd.conf whatever the prefix;
 * $WEFT_CONFIG replaces it. Under systemd (StateDirectory=) the spool
 * defaults to $STATE_DIRECTORY. */
static void test_default_path_and_spool(void **state)
{
    char *saved = getenv("WEFT_CONFIG") ? strdup(getenv("WEFT_CONFIG")) : NULL;
    weft_config c;

    unsetenv("WEFT_CONFIG");
    assert_string_equal(weft_config_default_path(), "/etc/weft/weftd.conf");
    setenv("WEFT_CONFIG", "/tmp/other.conf", 1);
    assert_string_equal(weft_config_default_path(), "/tmp/other.conf");
    if (saved)
        setenv("WEFT_CONFIG", saved, 1);
    else
        unsetenv("WEFT_CONFIG");
    free(saved);
    setenv("STATE_DIRECTORY", "/var/lib/weft-test", 1);
    weft_config_init(&c);
    assert_string_equal(c.spool, "/var/lib/weft-test");
    weft_config_free(&c);
    unsetenv("STATE_DIRECTORY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_file_and_override),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_set_strings),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_finish_checks),
        cmocka_unit_test(test_default_socket),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_print_roundtrip),
        cmocka_unit_test(test_shipped_file),
        cmocka_unit_test(test_new_limits),
        cmocka_unit_test(test_live_interval),
        cmocka_unit_test(test_max_conversions),
        cmocka_unit_test(test_nice),
        cmocka_unit_test(test_trace_ids),
        cmocka_unit_test(test_write_while_recording),
        cmocka_unit_test(test_max_definitions),
        cmocka_unit_test(test_max_definition_bytes),
        cmocka_unit_test(test_max_questions_per_user),
        cmocka_unit_test(test_reserved_connections),
        cmocka_unit_test(test_convert_memory),
        cmocka_unit_test(test_max_user_spool_bytes),
        cmocka_unit_test(test_min_free_spool_bytes),
        cmocka_unit_test(test_cluster),
        cmocka_unit_test(test_set_any_section),
        cmocka_unit_test(test_default_path_and_spool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
