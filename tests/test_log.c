/* test_log.c - weftd's log lines (daemon/log.c): escaping, the
 * timestamped foreground line and the journal's structured fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

static void test_escape(void **state)
{
    char out[64];

    (void)state;
    assert_int_equal(weft_log_escape(out, sizeof out, "plain name"), 10);
    assert_string_equal(out, "plain name");
    weft_log_escape(out, sizeof out, "evil\nweftd: error: forged");
    assert_string_equal(out, "evil\\nweftd: error: forged");
    weft_log_escape(out, sizeof out, "a\tb\rc\x01" "d\x7f" "e\\f");
    assert_string_equal(out, "a\\tb\\rc\\x01d\\x7fe\\\\f");
    /* UTF-8 stays as it is. */
    weft_log_escape(out, sizeof out, "r\xc3\xa9sum\xc3\xa9");
    assert_string_equal(out, "r\xc3\xa9sum\xc3\xa9");
    /* A cut never splits an escape. */
    assert_int_equal(weft_log_escape(out, 5, "abc\ndef"), 3);
    assert_string_equal(out, "abc");
    assert_int_equal(weft_log_escape(out, 1, "abc"), 0);
    assert_string_equal(out, "");
}

static void test_format(void **state)
{
    struct timespec ts = { 1795740012, 345678901 }; /* 2026-11-27 00:40 UTC */
    char line[128];

    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    weft_log_format(line, sizeof line, &ts, WEFT_LOG_INFO, "ready");
    assert_string_equal(line, "2026-11-27T00:40:12.345+0000 weftd: info: "
                              "ready");
    setenv("TZ", "CET-1", 1);
    tzset();
    weft_log_format(line, sizeof line, &ts, WEFT_LOG_WARNING, "x");
    assert_string_equal(line, "2026-11-27T01:40:12.345+0100 weftd: warning: "
                              "x");
    /* Too long: cut, terminated. */
    assert_int_equal(weft_log_format(line, 10, &ts, WEFT_LOG_ERROR, "x"), 9);
    assert_int_equal(strlen(line), 9);
}

static const char *field(const weft_log_fields *f, int i)
{
    static char buf[4096];

    assert_true(i < f->n);
    memcpy(buf, f->iov[i].iov_base, f->iov[i].iov_len);
    buf[f->iov[i].iov_len] = 0;
    return buf;
}

static void test_journal_fields(void **state)
{
    weft_log_ctx ctx = { "my\nrun", "my_run-20261124T004000Z-1", 3,
                         "127.0.0.1:5555" };
    weft_log_fields f;

    (void)state;
    weft_log_journal_fields(&f, WEFT_LOG_WARNING, &ctx, "paused\n");
    assert_int_equal(f.n, 7);
    assert_string_equal(field(&f, 0), "MESSAGE=paused\\n");
    assert_string_equal(field(&f, 1), "PRIORITY=4");
    assert_string_equal(field(&f, 2), "SYSLOG_IDENTIFIER=weftd");
    assert_string_equal(field(&f, 3), "TRACE=my\\nrun");
    assert_string_equal(field(&f, 4), "TRACE_KEY=my_run-20261124T004000Z-1");
    assert_string_equal(field(&f, 5), "RANK=3");
    assert_string_equal(field(&f, 6), "PEER=127.0.0.1:5555");

    /* No context: the three fields every message has. */
    weft_log_journal_fields(&f, WEFT_LOG_DEBUG, NULL, "tick");
    assert_int_equal(f.n, 3);
    assert_string_equal(field(&f, 1), "PRIORITY=7");
    /* Rank 0 is a rank; a peer alone is a peer. */
    ctx = (weft_log_ctx){ NULL, NULL, 0, NULL };
    weft_log_journal_fields(&f, WEFT_LOG_ERROR, &ctx, "m");
    assert_int_equal(f.n, 4);
    assert_string_equal(field(&f, 3), "RANK=0");
    ctx = (weft_log_ctx){ NULL, NULL, -1, "unix:pid 42" };
    weft_log_journal_fields(&f, WEFT_LOG_ERROR, &ctx, "m");
    assert_int_equal(f.n, 4);
    assert_string_equal(field(&f, 3), "PEER=unix:pid 42");
}

/* A cause repeated at will gets 3 lines a second; the next
 * line let through counts what was left out. */
static void test_ratelimited(void **state)
{
    weft_ratelimit l = { 0 };
    uint64_t sup = 99;
    int out = 0;

    (void)state;
    for (int i = 0; i < 1000; i++)
        out += weft_ratelimit_allow(&l, 5000 + (uint64_t)i / 2, 3, &sup);
    assert_int_equal(out, 3);
    assert_int_equal(sup, 0);
    /* The next second: those left out are said in its first line. */
    assert_int_equal(weft_ratelimit_allow(&l, 6000, 3, &sup), 1);
    assert_int_equal(sup, 1000 - 3);
    assert_int_equal(weft_ratelimit_allow(&l, 6001, 3, &sup), 1);
    assert_int_equal(sup, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_journal_fields),
        cmocka_unit_test(test_ratelimited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
