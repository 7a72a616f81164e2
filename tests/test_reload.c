/* test_reload.c - the keys SIGHUP does not change (daemon/reload.c):
 * each of #30's restart-only keys, changed, is named; keys SIGHUP
 * applies are not; several are named together, in a bounded buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "reload.h"
#include "weftd_config.h"

static void set(weft_config *c, const char *key, const char *value)
{
    char err[256];
    const char *section = strcmp(key, "head") == 0 ||
                          strcmp(key, "node_name") == 0 ||
                          strcmp(key, "heartbeat") == 0 ? "cluster"
                          : strcmp(key, "nice") == 0  ? "weftd"
                                                      : "limits";

    assert_int_equal(weft_config_set(c, section, key, value, err,
                                     sizeof err), 0);
}

static void test_restart_only(void **state)
{
    static const char *const restart[][2] = {
        { "max_open_journals", "17" },
        { "max_preauth_connections", "3" },
        { "max_preauth_per_address", "3" },
        { "max_preauth_buffered", "8192" },
        { "max_preauth_frame", "2048" },
        { "preauth_timeout", "3" },
        { "max_definition_bytes", "128k" },
        { "listen_backlog", "7" },
        { "nice", "3" },  /* threads take it from the one starting them */
        { "head", "head.cluster:7411" },  /* the node's link is made once */
        { "node_name", "n7" },
        { "heartbeat", "2" },
    };
    char keys[1024];
    weft_config run, next;

    (void)state;
    for (size_t i = 0; i < sizeof restart / sizeof restart[0]; i++) {
        weft_config_init(&run);
        weft_config_init(&next);
        set(&next, restart[i][0], restart[i][1]);
        assert_int_equal(weft_reload_restart_keys(&run, &next, keys,
                                                  sizeof keys), 1);
        assert_string_equal(keys, restart[i][0]);
        weft_config_free(&run);
        weft_config_free(&next);
    }
}

static void test_reloadable(void **state)
{
    static const char *const reload[][2] = {
        { "reserved_connections", "3" },
        { "max_questions_per_user", "2" },
        { "max_members_per_user", "5" },
        { "max_log_refusals", "5" },
        { "max_connections_per_user", "5" },
    };
    char keys[1024];
    weft_config run, next;

    (void)state;
    weft_config_init(&run);
    weft_config_init(&next);
    for (size_t i = 0; i < sizeof reload / sizeof reload[0]; i++)
        set(&next, reload[i][0], reload[i][1]);
    assert_int_equal(weft_reload_restart_keys(&run, &next, keys,
                                              sizeof keys), 0);
    assert_string_equal(keys, "");
    set(&next, "preauth_timeout", "3");
    set(&next, "max_open_journals", "17");
    assert_int_equal(weft_reload_restart_keys(&run, &next, keys, 20), 2);
    assert_string_equal(keys, "max_open_journals, "); /* cut at 20 */
    weft_config_free(&run);
    weft_config_free(&next);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart_only),
        cmocka_unit_test(test_reloadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
