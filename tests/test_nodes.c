/* test_nodes.c - who may be a node of a head, and what names a node may
 * have (daemon/cluster/nodes.c): root and the head's own uid only, with
 * a message naming both otherwise; names of 1 to 64 bytes of letters,
 * digits, '.', '-', '_', not starting with '.' (a node's name becomes a
 * file name), each refusal saying what is wrong. The links themselves
 * are tests/e2e_cluster.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "nodes.h"
#include "weft_errors.h"

static void test_trusted(void **state)
{
    char why[256] = "";

    (void)state;
    assert_true(weft_nodes_trusted(0, 998, why, sizeof why));
    assert_true(weft_nodes_trusted(998, 998, why, sizeof why));
    assert_true(weft_nodes_trusted(0, 0, why, sizeof why));
    assert_string_equal(why, "");
    assert_false(weft_nodes_trusted(1000, 998, why, sizeof why));
    assert_string_equal(why, "NodeHello from uid 1000: a node must be a "
                        "weftd running as root or as this head's user "
                        "(uid 998)");
    assert_false(weft_nodes_trusted(998, 0, why, sizeof why));
    assert_false(weft_nodes_trusted(UINT32_MAX, 998, why, sizeof why));
}

static void test_names(void **state)
{
    static const char *const good[] = {
        "n1", "node-017", "c1.cluster.example", "rack_4-node_12", "0",
        "A", "a.", "x-",
    };
    char why[256], long_name[80];

    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (weft_nodes_check_name(good[i], why, sizeof why) != 0)
            fail_msg("'%s' refused: %s", good[i], why);
    memset(long_name, 'n', sizeof long_name);
    long_name[WEFT_NODE_NAME_MAX] = 0;
    assert_int_equal(weft_nodes_check_name(long_name, why, sizeof why), 0);
    long_name[WEFT_NODE_NAME_MAX] = 'n';
    long_name[WEFT_NODE_NAME_MAX + 1] = 0;
    assert_int_equal(weft_nodes_check_name(long_name, why, sizeof why),
                     WEFT_EINVAL);
    assert_string_equal(why, "node name of 65 bytes (1 to 64)");
    assert_int_equal(weft_nodes_check_name("", why, sizeof why), WEFT_EINVAL);
    assert_string_equal(why, "node name of 0 bytes (1 to 64)");
    assert_int_equal(weft_nodes_check_name("..", why, sizeof why),
                     WEFT_EINVAL);
    assert_string_equal(why, "node name '..' starts with '.'");
    assert_int_equal(weft_nodes_check_name("a/b", why, sizeof why),
                     WEFT_EINVAL);
    assert_string_equal(why, "node name has byte 0x2f at 1 (letters, "
                        "digits, '.', '-' and '_' only)");
    assert_int_equal(weft_nodes_check_name("n 1", why, sizeof why),
                     WEFT_EINVAL);
    assert_int_equal(weft_nodes_check_name("n\n", why, sizeof why),
                     WEFT_EINVAL);
    assert_int_equal(weft_nodes_check_name("n\xc3\xa9", why, sizeof why),
                     WEFT_EINVAL);
    assert_string_equal(why, "node name has byte 0xc3 at 1 (letters, "
                        "digits, '.', '-' and '_' only)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trusted),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
