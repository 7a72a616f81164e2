/* test_convert_remote.c - a trace whose members' events a node's weftd
 * wrote (issue #34, step B; daemon/convert/sums.c): the node's stream
 * (events only) writes their event files into the archive the head's
 * stream made first, and packs each member's sums; the head converts
 * with journals of those members that hold no events, adopting them
 * from their sums. The archive and the result must be those of a
 * conversion of the full journals alone, at the same fixed resolution.
 *
 * Four members of a trace of four: regions (numbered their own way by
 * the odd ranks), MPI messages to the next rank, file I/O, a metric,
 * two threads on ranks 0 and 3; rank 1 leaves a region open, counts
 * 2.5 GHz ticks and never says goodbye (its node ends it as it packs
 * its sums), rank 2 (the head's own, streamed) counts 2 GHz and
 * leaves a region it never entered, rank 3 had events refused. Ranks 1
 * and 3 are the node's. Then: a member whose sums never came (lost:
 * empty event files), sums that are wrong in each way the head checks,
 * a node's stream without its head's archive, and the archive made
 * anew without the head's stream (it restarted) around the node's files.
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
#include <sys/stat.h>
#include <unistd.h>

#include "convert_util.h"
#include "testutil.h"
#include "timeline.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

#define N(a) (sizeof (a) / sizeof (a)[0])
#define MEMBERS 4
#define REFUSED 5           /* events of rank 3 thread 0 refused */

static const uint64_t comm_locations[MEMBERS] = {
    0, UINT64_C(1) << 32, UINT64_C(2) << 32, UINT64_C(3) << 32
};
static const uint64_t comm_ranks[MEMBERS] = { 0, 1, 2, 3 };
static const OTF2_MetricMemberRef metric_members[] = { 0 };
static const OTF2_Type metric_types[] = { OTF2_TYPE_UINT64 };

/* Member rank's clock: ticks per second. */
static uint64_t rate_of(uint32_t rank)
{
    return rank == 1 ? 2500000000u : rank == 2 ? 2000000000u : 1000000000u;
}

/* Its time t (a step: 1 us each, from 1 ms) in its ticks. */
static uint64_t at(uint32_t rank, uint64_t t)
{
    return (1000000 + t * 1000) * (rate_of(rank) / 1000000) / 1000;
}

static weft_record group(uint32_t self, uint32_t name, OTF2_GroupType type,
                         const uint64_t *members)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Group;
    r.u.Group.self = self;
    r.u.Group.name = name;
    r.u.Group.groupType = type;
    r.u.Group.paradigm = OTF2_PARADIGM_MPI;
    r.u.Group.numberOfMembers = MEMBERS;
    r.u.Group.members = members;
    return r;
}

static weft_record comm(uint32_t self, uint32_t name, uint32_t grp)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Comm;
    r.u.Comm.self = self;
    r.u.Comm.name = name;
    r.u.Comm.group = grp;
    r.u.Comm.parent = OTF2_UNDEFINED_COMM;
    return r;
}

static weft_record mpi_send(uint64_t t, uint32_t to, uint64_t len)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MpiSend;
    r.time = t;
    r.u.MpiSend.receiver = to;
    r.u.MpiSend.communicator = 0;
    r.u.MpiSend.msgTag = 7;
    r.u.MpiSend.msgLength = len;
    return r;
}

/* Member rank's journal, whole, in c's trace directory. The odd ranks
 * number their regions the other way round. */
static void write_member(const ctx *c, uint32_t rank)
{
    int odd = rank & 1;
    uint32_t rmain = odd ? 2 : 0, rwork = 1, rsend = odd ? 0 : 2;
    weft_record defs[] = {
        str(0, "main"), str(1, "work"), str(2, "MPI_Send"),
        str(3, "file.dat"), str(4, "MPI_COMM_WORLD"), str(5, "cycles"),
        region(rmain, 0, 1), region(rwork, 1, 1), region(rsend, 2, 1),
        io_file(0, 3), io_handle(0, 3, 0, OTF2_UNDEFINED_IO_HANDLE),
        metric_member(0, 5), metric_class(0, 1, metric_members),
        group(0, 4, OTF2_GROUP_TYPE_COMM_LOCATIONS, comm_locations),
        group(1, 4, OTF2_GROUP_TYPE_COMM_GROUP, comm_ranks),
        comm(0, 4, 1),
    };
    OTF2_MetricValue v1[] = { { .unsigned_int = 10u * rank + 1 } };
    OTF2_MetricValue v2[] = { { .unsigned_int = 10u * rank + 5 } };
    weft_record evs[16];
    size_t n = 0;
    uint32_t threads[2] = { 0, 3 };
    uint64_t events[2], dropped[2] = { 0, 0 };
    weft_journal *j = open_journal(c, rank);

    if (odd) {  /* work (1) stays; main and MPI_Send swap places */
        weft_record t = defs[6];
        defs[6] = defs[8];
        defs[8] = t;
    }
    append_hello_clock(j, rank, MEMBERS, rank < 2 ? "node-a" : "node-b",
                       rate_of(rank), NULL);
    append_defs(j, defs, N(defs));
    evs[n++] = enter(at(rank, 1), rmain, 0);
    evs[n++] = metric_event(at(rank, 2), 0, 1, metric_types, v1);
    evs[n++] = enter(at(rank, 3), rwork, 0);
    evs[n++] = io_op(at(rank, 4), 0, 100 * (rank + 1), 0);
    evs[n++] = io_op(at(rank, 5), 0, 100 * (rank + 1), 1);
    evs[n++] = enter(at(rank, 6), rsend, 0);
    evs[n++] = mpi_send(at(rank, 7), (rank + 1) % MEMBERS, 1000 * (rank + 1));
    evs[n++] = enter(at(rank, 8), rsend, 1);
    evs[n++] = metric_event(at(rank, 9), 0, 1, metric_types, v2);
    evs[n++] = enter(at(rank, 10), rwork, 1);
    if (rank != 1)  /* rank 1 leaves main open */
        evs[n++] = enter(at(rank, 20), rmain, 1);
    if (rank == 2)  /* a Leave of a region not open */
        evs[n++] = enter(at(rank, 21), rwork, 1);
    append_events(j, 0, 1, 0, evs, n);
    events[0] = n;
    if (rank == 3) {
        append(j, WEFT_JE_REFUSED, 0, REFUSED, 2, WEFT_REFUSED_QUOTA, NULL,
               0);
        events[0] += REFUSED;
    }
    if (rank == 0 || rank == 3) {
        weft_record t1[] = { enter(at(rank, 2), rwork, 0),
                             enter(at(rank, 12), rwork, 1) };
        append_events(j, 3, 1, 0, t1, N(t1));
        events[1] = N(t1);
    }
    if (rank != 1)
        append_goodbye(j, rank == 0 || rank == 3 ? 2 : 1, threads, events,
                       dropped);
    weft_journal_close(j);
}

static void write_trace(const ctx *c)
{
    for (uint32_t r = 0; r < MEMBERS; r++)
        write_member(c, r);
}

/* The journal of rank in c's trace directory copied into dir, without
 * its events when `strip` (what a head journals of a node's member). */
static void copy_journal(const ctx *c, const char *dir, uint32_t rank,
                         int strip)
{
    char from[160], to[160], name[WEFT_JOURNAL_NAME_MAX];
    weft_journal_reader *r;
    weft_journal *j;
    weft_journal_entry e;

    weft_journal_name(name, sizeof name, rank);
    snprintf(from, sizeof from, "%s/%s", c->trace, name);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    assert_int_equal(weft_journal_reader_open(from, &r), 0);
    assert_int_equal(weft_journal_open(to, &j, NULL), 0);
    while (weft_journal_reader_next(r, &e) == 1)
        if (!strip ||
            (e.kind != WEFT_JE_EVENTS && e.kind != WEFT_JE_REFUSED))
            assert_int_equal(weft_journal_append(j, &e), 0);
    weft_journal_close(j);
    weft_journal_reader_close(r);
}

/* A cluster's run: the head's trace directory (c->dir/head: ranks 0
 * and 2 whole, 1 and 3 without events), the head's stream making the
 * archive, the node's stream (over the full journals) writing ranks 1
 * and 3 into it and packing their sums. */
typedef struct cluster {
    char head[128];
    weft_convert_input in;     /* the head's */
    weft_convert_stream *s;    /* the head's */
    weft_convert_remote remote[2];
    uint8_t *sums[2];
    size_t len[2];
} cluster;

static void cluster_run(const ctx *c, cluster *k)
{
    weft_convert_input node = { c->trace, c->archive, "remote", MEMBERS, 1,
                                0, 0, NULL, NULL, WEFT_CONVERT_NS, 1, NULL,
                                0 };
    weft_convert_stream *n;
    static const uint32_t ranks[2] = { 1, 3 };
    uint8_t *none;
    size_t nlen;

    memset(k, 0, sizeof *k);
    snprintf(k->head, sizeof k->head, "%s/head", c->dir);
    assert_int_equal(run("rm -rf '%s'", k->head), 0);
    assert_int_equal(run("rm -rf '%s'", c->archive), 0);
    assert_int_equal(mkdir(k->head, 0700), 0);
    for (uint32_t r = 0; r < MEMBERS; r++)
        copy_journal(c, k->head, r, r == 1 || r == 3);
    k->in = (weft_convert_input){ k->head, c->archive, "remote", MEMBERS,
                                  2, 0, 0, NULL, NULL, WEFT_CONVERT_NS, 0,
                                  k->remote, 2 };
    k->s = weft_convert_stream_new(&k->in, NULL, 0);
    assert_non_null(k->s);
    assert_int_equal(weft_convert_stream_open(k->s), 0);

    n = weft_convert_stream_new(&node, NULL, 0);
    assert_non_null(n);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(weft_convert_stream_step(n, ranks[i]), 1);
        assert_int_equal(weft_convert_stream_sums(n, ranks[i], &k->sums[i],
                                                  &k->len[i]), 0);
        assert_true(k->len[i] > 0);
        k->remote[i] = (weft_convert_remote){ ranks[i], k->sums[i],
                                              k->len[i] };
    }
    assert_int_equal(weft_convert_stream_sums(n, 0, &none, &nlen),
                     WEFT_ENOTFOUND);  /* not the node's */
    assert_null(none);
    weft_convert_stream_free(n);

    assert_int_equal(weft_convert_stream_step(k->s, 0), 1);
    assert_int_equal(weft_convert_stream_step(k->s, 2), 1);
}

static void cluster_free(cluster *k)
{
    free(k->sums[0]);
    free(k->sums[1]);
}

/* A conversion of the full journals alone into c->dir/alone. */
static void convert_alone(const ctx *c, weft_convert_result *res,
                          char *dir, size_t len)
{
    weft_convert_input in = { c->trace, dir, "remote", MEMBERS, 2, 0, 0,
                              NULL, NULL, WEFT_CONVERT_NS, 0, NULL, 0 };

    snprintf(dir, len, "%s/alone", c->dir);
    convert_ok(&in, res);
}

/* With WEFT_SUMS_SEED set, rank 1's sums as an input of fuzz/fuzz_sums
 * (its header: what the head knows of rank 1) into that file. */
static void write_seed(const cluster *k)
{
    const char *path = getenv("WEFT_SUMS_SEED");
    Weft__MemberSums *s;
    uint8_t h[8];
    FILE *f;

    if (!path)
        return;
    s = weft__member_sums__unpack(NULL, k->len[0], k->sums[0]);
    assert_non_null(s);
    h[0] = 1;
    h[1] = MEMBERS;
    h[2] = (uint8_t)s->nregions;
    h[3] = (uint8_t)s->nmetric_members;
    h[4] = (uint8_t)s->nio_handles;
    h[5] = (uint8_t)s->ndefs;
    h[6] = 1;  /* rescaled */
    h[7] = 1;  /* 2.5 GHz */
    weft__member_sums__free_unpacked(s, NULL);
    assert_non_null(f = fopen(path, "w"));
    assert_int_equal(fwrite(h, 1, sizeof h, f), sizeof h);
    assert_int_equal(fwrite(k->sums[0], 1, k->len[0], f), k->len[0]);
    fclose(f);
}

static void test_remote_equals_conversion(void **state)
{
    ctx *c = *state;
    cluster k;
    weft_convert_result res, alone;
    char dir[160];

    write_trace(c);
    cluster_run(c, &k);
    write_seed(&k);
    assert_int_equal(weft_convert_trace_stream(&k.in, k.s, &res), 0);
    convert_alone(c, &alone, dir, sizeof dir);
    same_result(&res, &alone);
    same_archive(c->archive, dir);
    assert_string_equal(res.error, "");
    assert_int_equal(res.streamed, MEMBERS);
    assert_int_equal(res.lost, 0);
    assert_int_equal(res.passes, 0);  /* no journal read again */
    /* what the trace holds, so that the equality means something */
    assert_int_equal(res.timer_resolution, WEFT_CONVERT_NS);
    assert_int_equal(res.refused, REFUSED);
    assert_int_equal(res.nmessages, MEMBERS);
    assert_int_equal(res.nio_files, 1);
    assert_int_equal(res.io_files[0].operations, MEMBERS);
    assert_true(res.nmetrics >= MEMBERS);
    assert_true(res.ntimelines >= MEMBERS);
    assert_int_equal(res.nlocations, MEMBERS + 2);
    assert_true(res.nesting_added > 0);     /* rank 1's main */
    assert_true(res.nesting_unmatched > 0); /* rank 2's work */
    weft_convert_result_free(&res);
    weft_convert_result_free(&alone);
    cluster_free(&k);
}

/* Rank 3's sums never came: its locations get empty event files (and
 * a file its node wrote of a thread the head does not know goes), the
 * result says it is lost; rank 1 is adopted still. */
static void test_remote_lost(void **state)
{
    ctx *c = *state;
    cluster k;
    weft_convert_result res;
    char stray[256];
    FILE *f;
    uint64_t rank3 = 0;

    write_trace(c);
    cluster_run(c, &k);
    k.remote[1].sums = NULL;
    snprintf(stray, sizeof stray, "%s/traces/%" PRIu64 ".evt", c->archive,
             UINT64_C(3) << 32 | 9);
    assert_non_null(f = fopen(stray, "w"));
    fclose(f);
    assert_int_equal(weft_convert_trace_stream(&k.in, k.s, &res), 0);
    assert_int_equal(res.lost, 1);
    assert_int_equal(res.streamed, MEMBERS - 1);
    assert_non_null(strstr(res.incomplete, "rank 3: its events are lost "
                           "(its node sent no sums)"));
    for (size_t i = 0; i < res.nlocations; i++)
        if (res.locations[i].rank == 3) {
            assert_int_equal(res.locations[i].events, 0);
            rank3++;
        }
    assert_int_equal(rank3, 2);  /* its Hello's thread, its Goodbye's */
    assert_int_not_equal(access(stray, F_OK), 0);
    if (have_otf2_print()) {
        /* events of rank 3's locations: none; of rank 0's: some */
        assert_int_equal(run("otf2-print -Werror --silent %s/traces.otf2 "
                             ">/dev/null 2>&1", c->archive), 0);
        assert_int_equal(run("cd '%s' && otf2-print traces.otf2 | awk "
                             "'$2 == 12884901888 || $2 == 12884901891 "
                             "{ n3++ } $2 == 0 { n0++ } END { exit !(n0 > 0 "
                             "&& n3 == 0) }'", c->archive), 0);
    }
    weft_convert_result_free(&res);
    cluster_free(&k);
}

/* A change to rank 1's sums (s: unpacked, to change). */
typedef void change_fn(Weft__MemberSums *s);

static void far_location(Weft__MemberSums *s)
{
    s->locations[0]->location = UINT64_C(2) << 32;
}

static void far_region(Weft__MemberSums *s)
{
    assert_true(s->locations[0]->n_slot_region > 0);
    s->locations[0]->slot_region[0] = 1000;
}

static void too_many_bins(Weft__MemberSums *s)
{
    Weft__SumsLocation *l = s->locations[0];
    uint32_t *v = realloc(l->tl_bins, WEFT_TIMELINE_BINS * sizeof *v);

    assert_true(l->has_timeline);
    assert_non_null(v);
    memset(v, 0, WEFT_TIMELINE_BINS * sizeof *v);
    l->tl_cap = WEFT_TIMELINE_BINS;
    l->n_tl_bins = WEFT_TIMELINE_BINS;
    l->tl_bins = v;
}

static void far_receiver(Weft__MemberSums *s)
{
    assert_true(s->n_send_receiver > 0);
    s->send_receiver[0] = 99;
}

static void far_metric(Weft__MemberSums *s)
{
    assert_true(s->locations[0]->n_series > 0);
    s->locations[0]->series[0]->member = 7;
}

static void other_defs(Weft__MemberSums *s)
{
    s->nregions++;
}

static void other_clock(Weft__MemberSums *s)
{
    s->rescale = 0;
}

static void short_arrays(Weft__MemberSums *s)
{
    s->n_io_ticks = 0;
}

/* Rank 1's sums changed by fn (NULL: cut by a byte; swap: rank 3's
 * given as rank 1's) make rank 1 lost, the result saying what `want`
 * says; the rest of the archive stands (rank 3 adopted); nothing
 * crashes or leaks (ASan). */
static void bad_sums(const ctx *c, change_fn *fn, int swap, const char *want)
{
    cluster k;
    weft_convert_result res;
    uint8_t *buf = NULL;

    cluster_run(c, &k);
    if (swap) {
        k.remote[0].sums = k.sums[1];
        k.remote[0].len = k.len[1];
    } else if (!fn) {
        k.remote[0].len--;
    } else {
        Weft__MemberSums *s = weft__member_sums__unpack(NULL, k.len[0],
                                                        k.sums[0]);
        assert_non_null(s);
        fn(s);
        buf = malloc(weft__member_sums__get_packed_size(s));
        assert_non_null(buf);
        k.remote[0].len = weft__member_sums__pack(s, buf);
        k.remote[0].sums = buf;
        weft__member_sums__free_unpacked(s, NULL);
    }
    assert_int_equal(weft_convert_trace_stream(&k.in, k.s, &res), 0);
    assert_int_equal(res.lost, 1);
    if (!strstr(res.incomplete, "rank 1: its events are lost (") ||
        !strstr(res.incomplete, want))
        fail_msg("\"%s\" does not say \"%s\"", res.incomplete, want);
    weft_convert_result_free(&res);
    free(buf);
    cluster_free(&k);
}

static void test_remote_bad_sums(void **state)
{
    ctx *c = *state;

    write_trace(c);
    bad_sums(c, NULL, 0, "rank 1: its sums do not unpack");
    bad_sums(c, NULL, 1, "rank 1: its sums are rank 3's");
    bad_sums(c, far_location, 0, "rank 1: its sums name location 8589934592 "
             "(rank 2 thread 0), not one of its own");
    bad_sums(c, far_region, 0, "rank 1: its sums thread 0: profile region "
             "1000 of 3");
    bad_sums(c, too_many_bins, 0, "rank 1: its sums thread 0: timeline of "
             "1024 bins, room for 1024");
    bad_sums(c, far_receiver, 0, "rank 1: its sums name receiver 99 in a "
             "trace of 4");
    bad_sums(c, far_metric, 0, "rank 1: its sums thread 0: metric member 7 "
             "of 1");
    bad_sums(c, other_defs, 0, "rank 1: its sums follow other definitions "
             "than its journal here");
    bad_sums(c, other_clock, 0, "rank 1: its sums were written at "
             "1000000000 ticks a second (its clock 2500000000, as is)");
    bad_sums(c, short_arrays, 0, "rank 1: its sums hold send or I/O arrays "
             "of different lengths");
}

/* A node's stream joins only an archive its head made, at a fixed
 * resolution; a head converts no node's stream. */
static void test_node_without_head(void **state)
{
    ctx *c = *state;
    weft_convert_input node = { c->trace, c->archive, "remote", MEMBERS, 1,
                                0, 0, NULL, NULL, WEFT_CONVERT_NS, 1, NULL,
                                0 };
    weft_convert_remote remote = { 1, NULL, 0 };
    weft_convert_input in = { c->trace, c->archive, "remote", MEMBERS, 1, 0,
                              0, NULL, NULL, 0, 0, &remote, 1 };
    weft_convert_stream *s;
    weft_convert_result res;
    uint8_t *buf;
    size_t len;
    char want[160];

    write_trace(c);
    s = weft_convert_stream_new(&node, NULL, 0);
    assert_non_null(s);
    assert_int_equal(weft_convert_stream_open(s), WEFT_ESTATE);
    snprintf(want, sizeof want, "%s/traces: no directory", c->archive);
    assert_non_null(strstr(weft_convert_stream_error(s), want));
    assert_int_equal(weft_convert_stream_step(s, 1), 0);
    assert_int_equal(weft_convert_stream_sums(s, 1, &buf, &len),
                     WEFT_ESTATE);
    assert_false(weft_convert_stream_ok(s));
    weft_convert_stream_free(s);

    node.resolution = 0;
    s = weft_convert_stream_new(&node, NULL, 0);
    assert_int_equal(weft_convert_stream_open(s), WEFT_ESTATE);
    assert_non_null(strstr(weft_convert_stream_error(s), "a node's stream "
                           "needs a fixed timer resolution"));
    weft_convert_stream_free(s);

    node.resolution = WEFT_CONVERT_NS;
    s = weft_convert_stream_new(&node, NULL, 0);
    assert_int_equal(weft_convert_trace_stream(&node, s, &res), WEFT_EINVAL);
    assert_non_null(strstr(res.error, "converted by its head"));
    weft_convert_result_free(&res);

    in.nremote = 0;
    in.resolution = 1000;
    assert_int_equal(weft_convert_trace(&in, &res), WEFT_EINVAL);
    assert_non_null(strstr(res.error, "a fixed timer resolution is 1 ns"));
    weft_convert_result_free(&res);
}

/* system() of the command fmt makes: its exit status. */
static int shell(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return run("%s", cmd);
}

/* The head's stream is gone (the head restarted) after its node wrote
 * ranks 1 and 3: the conversion makes the archive anew, ranks 0 and 2
 * from their journals, and takes the node's files into it (aside.c):
 * the archive of the full journals alone; nothing is left aside. With
 * `interrupted`, an earlier conversion had stopped once it had set the
 * directory aside and moved one of the node's files back. */
static void remote_anew(void **state, int interrupted)
{
    ctx *c = *state;
    cluster k;
    weft_convert_result res, alone;
    char dir[160], aside[200];

    write_trace(c);
    cluster_run(c, &k);
    weft_convert_stream_free(k.s);  /* (its files stay as they are) */
    snprintf(aside, sizeof aside, "%s.nodes", c->archive);
    if (interrupted) {
        assert_int_equal(shell("mv '%s' '%s' && mkdir -p '%s/traces' && "
                             "mv '%s/traces/%" PRIu64 ".evt' '%s/traces/' && "
                             "echo junk >'%s/traces/0.evt'", c->archive,
                             aside, c->archive, aside, UINT64_C(1) << 32,
                             c->archive, c->archive), 0);
    }
    assert_int_equal(weft_convert_trace(&k.in, &res), 0);
    convert_alone(c, &alone, dir, sizeof dir);
    same_result(&res, &alone);
    same_archive(c->archive, dir);
    assert_int_equal(res.lost, 0);
    assert_int_equal(res.streamed, 2);  /* the node's, from their sums */
    assert_int_not_equal(access(aside, F_OK), 0);
    weft_convert_result_free(&res);
    weft_convert_result_free(&alone);
    cluster_free(&k);
}

static void test_remote_anew(void **state)
{
    remote_anew(state, 0);
}

static void test_remote_anew_interrupted(void **state)
{
    remote_anew(state, 1);
}

/* Made anew, and one of rank 3's event files is not where the node
 * should have written it: rank 3 is lost saying so (empty files), rank
 * 1 is taken. */
static void test_remote_anew_missing(void **state)
{
    ctx *c = *state;
    cluster k;
    weft_convert_result res;

    write_trace(c);
    cluster_run(c, &k);
    weft_convert_stream_free(k.s);
    assert_int_equal(shell("rm '%s/traces/%" PRIu64 ".evt'", c->archive,
                         UINT64_C(3) << 32), 0);
    assert_int_equal(weft_convert_trace(&k.in, &res), 0);
    assert_int_equal(res.lost, 1);
    assert_int_equal(res.streamed, 1);
    assert_non_null(strstr(res.incomplete, "rank 3: its events are lost "
                           "(its node's event files are not in the "
                           "archive's directory)"));
    for (size_t i = 0; i < res.nlocations; i++) {
        if (res.locations[i].rank == 3)
            assert_int_equal(res.locations[i].events, 0);
        if (res.locations[i].rank == 1)
            assert_true(res.locations[i].events > 0);
    }
    if (have_otf2_print())
        assert_int_equal(run("otf2-print -Werror --silent %s/traces.otf2 "
                             ">/dev/null 2>&1", c->archive), 0);
    weft_convert_result_free(&res);
    cluster_free(&k);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, conv_setup, conv_teardown)
    const struct CMUnitTest tests[] = {
        T(test_remote_equals_conversion),
        T(test_remote_lost),
        T(test_remote_bad_sums),
        T(test_node_without_head),
        T(test_remote_anew),
        T(test_remote_anew_interrupted),
        T(test_remote_anew_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
