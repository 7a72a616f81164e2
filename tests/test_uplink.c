/* test_uplink.c - a node's link to its head (daemon/cluster/uplink.c):
 * its state table, written out here apart from the code (every step not
 * listed is refused; CLOSING and STOPPED from anywhere but STOPPED, and
 * CLOSING not twice), the names of the states, and the head's address
 * (HOST:PORT, [v6]:PORT; errors naming the value). The link itself is
 * tests/e2e_cluster.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "uplink.h"
#include "weft_errors.h"

#define S(x) WEFT_UPLINK_##x

static const struct { enum weft_uplink_state from, to; } steps[] = {
    { S(WAITING), S(RESOLVING) },
    { S(RESOLVING), S(CONNECTING) },
    { S(CONNECTING), S(CHALLENGED) },
    { S(CHALLENGED), S(AUTHENTICATING) },
    { S(AUTHENTICATING), S(JOINING) },
    { S(JOINING), S(LINKED) },
    { S(CLOSING), S(WAITING) },
};

static int listed(int from, int to)
{
    if (from == S(STOPPED))
        return 0;
    if (to == S(STOPPED) || (to == S(CLOSING) && from != S(CLOSING)))
        return 1;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if ((int)steps[i].from == from && (int)steps[i].to == to)
            return 1;
    return 0;
}

static void test_steps(void **state)
{
    (void)state;
    for (int from = 0; from <= WEFT_UPLINK_NSTATES; from++)
        for (int to = 0; to <= WEFT_UPLINK_NSTATES; to++) {
            int want = from < WEFT_UPLINK_NSTATES &&
                       to < WEFT_UPLINK_NSTATES && listed(from, to);
            if (weft_uplink_step_ok(from, to) != want)
                fail_msg("%s -> %s: %s", weft_uplink_state_name(from),
                         weft_uplink_state_name(to),
                         want ? "refused" : "allowed");
        }
}

static void test_names(void **state)
{
    (void)state;
    for (int s = 0; s < WEFT_UPLINK_NSTATES; s++)
        assert_string_not_equal(weft_uplink_state_name(s), "?");
    assert_string_equal(weft_uplink_state_name(S(LINKED)), "linked");
    assert_string_equal(weft_uplink_state_name(S(WAITING)), "waiting");
    assert_string_equal(weft_uplink_state_name(WEFT_UPLINK_NSTATES), "?");
}

static void parses(const char *spec, const char *host, const char *port)
{
    char h[256], p[8], why[256];

    if (weft_uplink_parse_head(spec, h, sizeof h, p, sizeof p, why,
                               sizeof why) != 0)
        fail_msg("'%s' refused: %s", spec, why);
    assert_string_equal(h, host);
    assert_string_equal(p, port);
}

static void refused(const char *spec)
{
    char h[256], p[8], why[256], want[300];

    assert_int_equal(weft_uplink_parse_head(spec, h, sizeof h, p, sizeof p,
                                            why, sizeof why), WEFT_EINVAL);
    snprintf(want, sizeof want, "head = '%s': expected HOST:PORT", spec);
    if (strncmp(why, want, strlen(want)) != 0)
        fail_msg("'%s': '%s'", spec, why);
}

static void test_parse_head(void **state)
{
    char longhost[300];

    (void)state;
    parses("head:7411", "head", "7411");
    parses("10.0.0.1:1", "10.0.0.1", "1");
    parses("[fd00::1]:65535", "fd00::1", "65535");
    parses("head.cluster.example:007411", "head.cluster.example", "7411");
    refused("head");
    refused(":7411");
    refused("head:");
    refused("head:0");
    refused("head:65536");
    refused("head:74x");
    refused("head:-1");
    refused("[]:7411");
    memset(longhost, 'h', 260);
    strcpy(longhost + 260, ":1");
    {
        char h[256], p[8], why[256];
        assert_int_equal(weft_uplink_parse_head(longhost, h, sizeof h, p,
                                                sizeof p, why, sizeof why),
                         WEFT_EINVAL);
        assert_string_equal(why, "head: a host name of 260 bytes (at most "
                            "255)");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_parse_head),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
