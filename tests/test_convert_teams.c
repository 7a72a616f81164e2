/* test_convert_teams.c - the groups of thread teams (daemon/convert/
 * teams.c, otf2defs.c): a client defines each OpenMP team's Comm with an
 * empty COMM_GROUP and its paradigm's COMM_LOCATIONS group empty, then
 * names the team's threads in TeamMember records (weft's own); the
 * archive has them as members.
 *
 * Two processes each define the empty groups and two teams. Rank 0's
 * first team is complete (a later TeamMember naming another thread for
 * a number is ignored), its second lacks a number and keeps its empty
 * group; rank 1's two teams are complete with the same threads and
 * share one new group; a TeamMember of a comm rank 1 never defined is
 * left out and said. Read back with libotf2: OpenMP's COMM_LOCATIONS
 * group lists the four threads, each complete team's Comm refers to a
 * new group of thread indices in it, group ids come dense and in order
 * with rank 1's later group written before the new ones, and each
 * definition after what it names; otf2-print -Werror and the python
 * reader take the archive, otf2-print resolving the creating thread of
 * a task. A group of regions that names a region defined after the
 * first team leaves that team its empty group, and the teams after it
 * get theirs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "convert_util.h"
#include "testutil.h"
#include "weft_errors.h"

#define N(a) (sizeof (a) / sizeof (a)[0])
#define MAX_GROUPS 8
#define MAX_COMMS 8

/* The global groups and comms as read, in the order read. */
typedef struct defs_read {
    size_t ngroups;
    OTF2_GroupRef group_id[MAX_GROUPS];
    OTF2_GroupType type[MAX_GROUPS];
    OTF2_Paradigm paradigm[MAX_GROUPS];
    OTF2_StringRef name[MAX_GROUPS];
    uint32_t nmembers[MAX_GROUPS];
    uint64_t members[MAX_GROUPS][8];
    size_t ncomms;
    OTF2_CommRef comm_id[MAX_COMMS];
    OTF2_GroupRef comm_group[MAX_COMMS];
    int group_before[MAX_COMMS]; /* its group was read before it */
    char strings[32][40];
} defs_read;

static OTF2_CallbackCode on_string(void *ud, OTF2_StringRef self,
                                   const char *s)
{
    defs_read *r = ud;

    if (self < N(r->strings))
        snprintf(r->strings[self], sizeof r->strings[self], "%s", s);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_group(void *ud, OTF2_GroupRef self,
                                  OTF2_StringRef name, OTF2_GroupType type,
                                  OTF2_Paradigm paradigm,
                                  OTF2_GroupFlag flags, uint32_t n,
                                  const uint64_t *members)
{
    defs_read *r = ud;
    size_t i = r->ngroups++;

    (void)flags;
    assert_true(i < MAX_GROUPS && n <= 8);
    r->group_id[i] = self;
    r->type[i] = type;
    r->paradigm[i] = paradigm;
    r->name[i] = name;
    r->nmembers[i] = n;
    memcpy(r->members[i], members, n * sizeof *members);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_comm(void *ud, OTF2_CommRef self,
                                 OTF2_StringRef name, OTF2_GroupRef group,
                                 OTF2_CommRef parent, OTF2_CommFlag flags)
{
    defs_read *r = ud;
    size_t i = r->ncomms++;

    (void)name, (void)parent, (void)flags;
    assert_true(i < MAX_COMMS);
    r->comm_id[i] = self;
    r->comm_group[i] = group;
    for (size_t k = 0; k < r->ngroups; k++)
        r->group_before[i] |= r->group_id[k] == group;
    return OTF2_CALLBACK_SUCCESS;
}

static void read_defs(const ctx *c, defs_read *r)
{
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();

    memset(r, 0, sizeof *r);
    assert_non_null(cb);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
    assert_int_equal(OTF2_Reader_Close(read_global_defs(c->archive, cb, r)),
                     OTF2_SUCCESS);
}

/* ---- the members ------------------------------------------------------- */

static weft_record group_def(uint32_t self, uint32_t name,
                             OTF2_GroupType type, OTF2_Paradigm paradigm,
                             uint32_t n, const uint64_t *members)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Group;
    r.u.Group.self = self;
    r.u.Group.name = name;
    r.u.Group.groupType = type;
    r.u.Group.paradigm = paradigm;
    r.u.Group.numberOfMembers = n;
    r.u.Group.members = members;
    return r;
}

/* Strings 0-4, the empty COMM_LOCATIONS group 0 and COMM_GROUP 1 of
 * OpenMP, and teams (Comms) 0 and 1 (its parent) of rank's own
 * identity, into d; their count. */
static size_t team_defs(weft_record *d, uint32_t rank)
{
    static const char *const s[] = { "OpenMP locations",
                                     "OpenMP thread team", "team A",
                                     "team B", "extra" };
    size_t n = 0;

    for (uint32_t i = 0; i < N(s); i++)
        d[n++] = str(i, s[i]);
    d[n++] = group_def(0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                       OTF2_PARADIGM_OPENMP, 0, NULL);
    d[n++] = group_def(1, 1, OTF2_GROUP_TYPE_COMM_GROUP,
                       OTF2_PARADIGM_OPENMP, 0, NULL);
    for (uint32_t i = 0; i < 2; i++, n++) {
        memset(&d[n], 0, sizeof d[n]);
        d[n].type = WEFT_REC_Comm;
        d[n].u.Comm.self = i;
        d[n].u.Comm.name = 2 + i;
        d[n].u.Comm.group = 1;
        d[n].u.Comm.parent = i ? 0 : OTF2_UNDEFINED_COMM;
        d[n].u.Comm.identity = (uint64_t)rank << 16 | i;
    }
    return n;
}

static weft_record member_of(uint32_t comm, uint32_t index, uint32_t thread)
{
    weft_record r = { .type = WEFT_REC_TeamMember };

    r.u.TeamMember.comm = comm;
    r.u.TeamMember.index = index;
    r.u.TeamMember.thread = thread;
    return r;
}

static weft_record team_event(uint32_t type, uint64_t t, uint32_t comm)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = type;
    r.time = t;
    switch (type) {
    case WEFT_REC_ThreadTeamBegin:
        r.u.ThreadTeamBegin.threadTeam = comm;
        break;
    case WEFT_REC_ThreadTeamEnd:
        r.u.ThreadTeamEnd.threadTeam = comm;
        break;
    default:  /* a task of thread 1 */
        r.u.ThreadTaskCreate.threadTeam = comm;
        r.u.ThreadTaskCreate.creatingThread = 1;
        r.u.ThreadTaskCreate.generationNumber = 1;
        break;
    }
    return r;
}

/* Member `rank` of 2 with definitions d[0..n-1] and, on each of its
 * `threads` threads, team 0 begun and ended, thread 0 creating a task of
 * thread 1 of team 0 in it. */
static void write_member(const ctx *c, uint32_t rank, const weft_record *d,
                         size_t n, uint32_t threads)
{
    weft_journal *j = open_journal(c, rank);
    uint32_t th[3];
    uint64_t events[3], dropped[3] = { 0 };

    assert_true(threads <= 3);
    append_hello(j, rank, 2, "node-a");
    append_defs(j, d, n);
    for (uint32_t t = 0; t < threads; t++) {
        weft_record ev[] = {
            team_event(WEFT_REC_ThreadTeamBegin, 100 + t, 0),
            team_event(WEFT_REC_ThreadTaskCreate, 110 + t, 0),
            team_event(WEFT_REC_ThreadTeamEnd, 120 + t, 0),
        };
        if (t) /* only thread 0 creates */
            ev[1] = ev[2];
        th[t] = t;
        events[t] = t ? 2 : 3;
        append_events(j, t, 1, 100, ev, events[t]);
    }
    append_goodbye(j, threads, th, events, dropped);
    weft_journal_close(j);
}

/* ---- the tests --------------------------------------------------------- */

static void test_convert_teams(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "teams", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    static const uint64_t rank1[] = { UINT64_C(1) << 32,
                                      UINT64_C(1) << 32 | 1 };
    weft_convert_result res;
    weft_record d0[16], d1[16];
    size_t n0 = team_defs(d0, 0), n1 = team_defs(d1, 1);
    defs_read r;

    /* Rank 0: team A is threads 0 and 1 (a later TeamMember giving
     * number 1 to thread 2 is ignored), team B has no number 1. */
    d0[n0++] = member_of(0, 0, 0);
    d0[n0++] = member_of(0, 1, 1);
    d0[n0++] = member_of(0, 1, 2);
    d0[n0++] = member_of(1, 0, 0);
    d0[n0++] = member_of(1, 2, 2);
    /* Rank 1: both teams threads 0 and 1, a comm it never defined, and
     * a group of its own after its Comms. */
    d1[n1++] = member_of(1, 1, 1);
    d1[n1++] = member_of(1, 0, 0);
    d1[n1++] = member_of(0, 0, 0);
    d1[n1++] = member_of(0, 1, 1);
    d1[n1++] = member_of(9, 0, 0);
    d1[n1++] = group_def(2, 4, OTF2_GROUP_TYPE_LOCATIONS,
                         OTF2_PARADIGM_UNKNOWN, 2, rank1);
    write_member(c, 0, d0, n0, 3);
    write_member(c, 1, d1, n1, 2);
    convert_ok(&in, &res);
    assert_int_equal(res.events, 3 + 2 + 2 + 3 + 2);
    assert_non_null(strstr(res.incomplete, "1 definition left out (their "
                           "team is no communicator of the trace): "));
    assert_non_null(strstr(res.incomplete, "rank-1.wj: definitions seq 1, "
                           "record 14: TeamMember"));
    weft_convert_result_free(&res);

    read_defs(c, &r);
    assert_int_equal(r.ngroups, 5);
    for (size_t i = 0; i < r.ngroups; i++)  /* dense, in order */
        assert_int_equal(r.group_id[i], i);
    /* OpenMP's locations: the threads of the complete teams */
    assert_int_equal(r.type[0], OTF2_GROUP_TYPE_COMM_LOCATIONS);
    assert_string_equal(r.strings[r.name[0]], "OpenMP locations");
    assert_int_equal(r.nmembers[0], 4);
    assert_int_equal(r.members[0][0], 0);
    assert_int_equal(r.members[0][1], 1);
    assert_int_equal(r.members[0][2], rank1[0]);
    assert_int_equal(r.members[0][3], rank1[1]);
    /* the clients' team group, empty still (team B of rank 0) */
    assert_int_equal(r.type[1], OTF2_GROUP_TYPE_COMM_GROUP);
    assert_int_equal(r.nmembers[1], 0);
    /* rank 1's own group, before the new ones */
    assert_int_equal(r.type[2], OTF2_GROUP_TYPE_LOCATIONS);
    /* rank 0's team A: indices 0 and 1; rank 1's teams: 2 and 3 */
    for (size_t i = 3; i < 5; i++) {
        assert_int_equal(r.type[i], OTF2_GROUP_TYPE_COMM_GROUP);
        assert_int_equal(r.paradigm[i], OTF2_PARADIGM_OPENMP);
        assert_string_equal(r.strings[r.name[i]], "OpenMP thread team");
        assert_int_equal(r.nmembers[i], 2);
        assert_int_equal(r.members[i][0], 2 * (i - 3));
        assert_int_equal(r.members[i][1], 2 * (i - 3) + 1);
    }
    assert_int_equal(r.ncomms, 4);
    for (size_t i = 0; i < r.ncomms; i++) {
        static const OTF2_GroupRef group[] = { 3, 1, 4, 4 };
        assert_int_equal(r.comm_id[i], i);
        assert_int_equal(r.comm_group[i], group[i]);
        assert_true(r.group_before[i]);
    }

    if (!have_otf2_print()) {
        print_message("otf2-print not installed: archive not validated\n");
        return;
    }
    /* Team A's creating thread 1 is rank 0's thread 1, or rank 1's. */
    assert_int_equal(run("cd '%s' && otf2-print -Werror --silent "
                         "traces.otf2 >/dev/null && test \"$(otf2-print "
                         "traces.otf2 | grep -c 'THREAD_TASK_CREATE.*"
                         "Creating Thread: 1 (INVALID)')\" = 0",
                         c->archive), 0);
    /* The python reader resolves a team's members to locations. */
    assert_int_equal(run("cd '%s' && /usr/bin/python3 -c 'import otf2; "
                         "r = otf2.reader.Reader(\"traces.otf2\"); "
                         "c = r.definitions.comms; assert [l._ref for l in "
                         "c[0].group.members] == [0, 1]; assert [l._ref "
                         "for l in c[3].group.members] == [1 << 32, "
                         "(1 << 32) + 1]; assert len(c[1].group.members) "
                         "== 0; assert sum(1 for _ in r.events) == 12'",
                         c->archive), 0);
}

/* Rank 0 defines a group of regions naming a region it defines after its
 * complete team: that group cannot be written before the team's Comm,
 * which keeps its empty group; rank 1's team, after both, gets its
 * own. */
static void test_convert_teams_late_group(void **state)
{
    ctx *c = *state;
    weft_convert_input in = { c->trace, c->archive, "late", 2, 0, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    static const uint64_t regions[] = { 0 };
    weft_convert_result res;
    weft_record d0[16], d1[16];
    size_t n0 = team_defs(d0, 0), n1 = team_defs(d1, 1);
    defs_read r;

    d0[n0++] = member_of(0, 0, 0);
    d0[n0++] = member_of(0, 1, 1);
    d0[n0++] = region(0, 4, 1);
    d0[n0++] = group_def(2, 4, OTF2_GROUP_TYPE_REGIONS,
                         OTF2_PARADIGM_UNKNOWN, 1, regions);
    d1[n1++] = member_of(0, 0, 1);
    d1[n1++] = member_of(0, 1, 0);
    write_member(c, 0, d0, n0, 2);
    write_member(c, 1, d1, n1, 2);
    convert_ok(&in, &res);
    assert_string_equal(res.incomplete, "");
    weft_convert_result_free(&res);

    read_defs(c, &r);
    assert_int_equal(r.ngroups, 4);
    for (size_t i = 0; i < r.ngroups; i++)
        assert_int_equal(r.group_id[i], i);
    /* rank 1's threads only, its team's thread 0 being its thread 1 */
    assert_int_equal(r.nmembers[0], 2);
    assert_int_equal(r.members[0][0], UINT64_C(1) << 32);
    assert_int_equal(r.members[0][1], UINT64_C(1) << 32 | 1);
    assert_int_equal(r.type[2], OTF2_GROUP_TYPE_REGIONS);
    assert_int_equal(r.nmembers[3], 2);
    assert_int_equal(r.members[3][0], 1);
    assert_int_equal(r.members[3][1], 0);
    assert_int_equal(r.ncomms, 4);
    assert_int_equal(r.comm_group[0], 1);
    assert_int_equal(r.comm_group[2], 3);
    if (have_otf2_print())
        assert_int_equal(run("cd '%s' && otf2-print -Werror --silent "
                             "traces.otf2 >/dev/null", c->archive), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, conv_setup, conv_teardown)
    const struct CMUnitTest tests[] = {
        T(test_convert_teams),
        T(test_convert_teams_late_group),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
