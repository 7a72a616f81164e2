/* test_commsum.c - who sent what to whom (summary/commsum.c): the world
 * rank of a communicator's rank from the definitions, by communicator
 * id (Comms and InterComms share that id space: a Comm defined after an
 * InterComm is found too), through the COMM_LOCATIONS group of its
 * paradigm when there is one; and the sums by receiver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "commsum.h"
#include "testutil.h"
#include "unify.h"
#include "weft_errors.h"

static void def(weft_unifier *u, weft_record r)
{
    char err[256];

    if (weft_unify_add_def(u, 0, &r, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static weft_record group(OTF2_GroupRef self, OTF2_GroupType type,
                         uint32_t n, const uint64_t *members)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Group;
    r.u.Group.self = self;
    r.u.Group.groupType = type;
    r.u.Group.paradigm = OTF2_PARADIGM_MPI;
    r.u.Group.numberOfMembers = n;
    r.u.Group.members = members;
    return r;
}

static weft_record comm(OTF2_CommRef self, OTF2_GroupRef g)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Comm;
    r.u.Comm.self = self;
    r.u.Comm.group = g;
    r.u.Comm.parent = OTF2_UNDEFINED_COMM;
    return r;
}

static weft_record inter(OTF2_CommRef self, OTF2_GroupRef a,
                         OTF2_GroupRef b)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_InterComm;
    r.u.InterComm.self = self;
    r.u.InterComm.groupA = a;
    r.u.InterComm.groupB = b;
    r.u.InterComm.commonCommunicator = OTF2_UNDEFINED_COMM;
    return r;
}

/* Four ranks' locations; world, an intercommunicator between {0, 2}
 * and {3, 1}, then a communicator of {3, 1, 2} made after it. */
static const uint64_t locs[] = { 0, 1ull << 32, 2ull << 32, 3ull << 32 };
static const uint64_t world[] = { 0, 1, 2, 3 };
static const uint64_t even[] = { 0, 2 };
static const uint64_t odd[] = { 3, 1 };
static const uint64_t late[] = { 3, 1, 2 };

static void test_comm_after_intercomm(void **state)
{
    weft_unifier *u = weft_unify_new(0);
    weft_defview defs;
    weft_commmap m;

    (void)state;
    assert_non_null(u);
    def(u, str(0, ""));
    def(u, group(0, OTF2_GROUP_TYPE_COMM_LOCATIONS, 4, locs));
    def(u, group(1, OTF2_GROUP_TYPE_COMM_GROUP, 4, world));
    def(u, group(2, OTF2_GROUP_TYPE_COMM_GROUP, 2, even));
    def(u, group(3, OTF2_GROUP_TYPE_COMM_GROUP, 2, odd));
    def(u, group(4, OTF2_GROUP_TYPE_COMM_GROUP, 3, late));
    def(u, comm(0, 1));
    def(u, inter(1, 2, 3));
    def(u, comm(2, 4));
    defs = weft_unify_view(u);
    assert_int_equal(weft_commmap_build(&m, &defs, NULL, NULL), 0);
    assert_int_equal(weft_commmap_world(&m, 0, 3), 3);
    /* the Comm after the InterComm: its id, not its place among Comms */
    assert_int_equal(weft_commmap_world(&m, 2, 0), 3);
    assert_int_equal(weft_commmap_world(&m, 2, 2), 2);
    assert_int_equal(weft_commmap_world(&m, 2, 3), WEFT_COMMMAP_UNKNOWN);
    /* an InterComm is not mapped; an id beyond all is unknown */
    assert_int_equal(weft_commmap_world(&m, 1, 0), WEFT_COMMMAP_UNKNOWN);
    assert_int_equal(weft_commmap_world(&m, 7, 0), WEFT_COMMMAP_UNKNOWN);
    weft_commmap_free(&m);
    weft_unify_free(u);
}

static void test_sums(void **state)
{
    weft_commsum s = { 0 };
    weft_message_row *rows = NULL;
    size_t n = 0, cap = 0;

    (void)state;
    assert_int_equal(weft_commsum_add(&s, 2, 8), 0);
    assert_int_equal(weft_commsum_add(&s, 2, 16), 0);
    assert_int_equal(weft_commsum_add(&s, 0, 4), 0);
    /* a receiver the definitions do not say is not counted */
    assert_int_equal(weft_commsum_add(&s, WEFT_COMMMAP_UNKNOWN, 4), 0);
    assert_int_equal(weft_commsum_rows(&s, 1, &rows, &n, &cap), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].receiver, 0);
    assert_int_equal(rows[1].sender, 1);
    assert_int_equal(rows[1].receiver, 2);
    assert_int_equal(rows[1].messages, 2);
    assert_int_equal(rows[1].bytes, 24);
    free(rows);
    weft_commsum_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_after_intercomm),
        cmocka_unit_test(test_sums),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
