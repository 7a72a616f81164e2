/* fuzz_session.c - libFuzzer target for weftd's ingest validation
 * (weft_validate_defs and weft_validate_events in daemon/ingest/validate.c)
 * over one member, as a session would drive it.
 *
 * Input: a config byte (bits 0-1: max_definitions, bit 2: max_string,
 * bit 3: for fuzz_convert, the member's clock counts 2.5 GHz ticks, not
 * ns, so that conversion rescales its times when it has ClockOffsets),
 * then messages of a 4-byte header (kind, count, 16-bit little-endian
 * length) and that many payload bytes. Kind bit 0: 0 Definitions, 1
 * EventBatch; for batches bits 1-2 are the thread, bit 3 puts the base
 * time before the thread's last time and bits 4-7 are the distance.
 * State follows weftd: a batch that passes moves the thread's last time;
 * a message that fails is the end of a connection, the member (and what
 * it defined) stays, and the next message comes as from a new one.
 *
 * Checked beyond memory safety: failures carry a WEFT_E* code and a
 * message, and name a limit only with WEFT_ELIMIT or WEFT_ETOOBIG; a
 * batch that passes ends no earlier than its base time and its thread's
 * previous time; Definitions that pass leave each id they define marked
 * as defined.
 *
 * Built with WEFT_FUZZ_CONVERT (fuzz_convert), what passes is also
 * journaled as weftd journals it (a Hello first, a Goodbye with each
 * thread's count last) and the journal is converted to an OTF2 archive
 * in a directory of the process's own (daemon/convert/convert.c: unification,
 * replay, libotf2's writers): what weftd acknowledged must convert, with
 * every event accepted in the archive and the trace complete.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec.h"
#include "daemon.h"
#include "memberin.h"
#include "validate.h"
#include "weft_errors.h"
#ifdef WEFT_FUZZ_CONVERT
#include <unistd.h>

#include "convert.h"
#include "frame.h"
#include "fsutil.h"
#include "journal.h"
#endif

#define NLOCS 4

static const uint64_t max_defs[4] = { 16, 64, 4096, 1u << 20 };

static int is_error(int rc)
{
    return rc < 0 && rc > WEFT__ERRNO_BASE && rc < WEFT__ERRNO_END;
}

/* After Definitions passed: every id they define is defined in m. */
static void check_defined(const weft_memberin *m, const uint8_t *buf,
                          size_t len)
{
    weft_decoder dec;
    weft_record r;

    weft_decoder_init(&dec, buf, len, 0, 0);
    dec.max_string = m->d->cfg.max_string;
    while (weft_decoder_next(&dec, &r) == 1) {
        const weft_rec_desc *rd = weft_rec_desc_of(r.type);
        const weft_field_desc *self;
        if (rd->self_field < 0)
            continue;
        self = &rd->fields[rd->self_field];
        CHECK(weft_idset_has(&m->defined[self->ref],
                             weft_field_get(&r, self)));
    }
    CHECK(dec.p == dec.end);
    weft_decoder_free(&dec);
}

#ifdef WEFT_FUZZ_CONVERT
/* The journal of rank 0 of a trace in a directory of this process's own:
 * what passes validation goes in, as weftd's session journals it. */
typedef struct sink {
    char dir[128], path[160], archive[160];
    weft_journal *j;
    uint64_t defs_seq, seq[NLOCS], events[NLOCS];
} sink;

static void sink_open(sink *k, int tsc)
{
    Weft__Hello h = WEFT__HELLO__INIT;
    weft_journal_entry e = { 0 };
    uint8_t buf[256];

    memset(k, 0, sizeof *k);
    snprintf(k->dir, sizeof k->dir, "/tmp/weft-fuzz-convert.%d",
             (int)getpid());
    weft_rm_tree(k->dir);
    CHECK(weft_mkdir_p(k->dir, 0700, 0700) == 0);
    snprintf(k->path, sizeof k->path, "%s/rank-0.wj", k->dir);
    snprintf(k->archive, sizeof k->archive, "%s/archive", k->dir);
    CHECK(weft_journal_open(k->path, &k->j, NULL) == 0);
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)"fuzz";
    h.size = 1;
    h.hostname = (char *)"node";
    h.pid = 1;
    h.command = (char *)"./fuzz";
    h.timer_resolution = tsc ? 2500000000u : 1000000000u;
    h.realtime_ns = 1700000000000000000ull;
    e.kind = WEFT_JE_HELLO;
    e.len = (uint32_t)weft__hello__get_packed_size(&h);
    CHECK(e.len <= sizeof buf);
    weft__hello__pack(&h, buf);
    e.payload = buf;
    CHECK(weft_journal_append(k->j, &e) == 0);
}

static void sink_put(sink *k, int events, uint32_t loc, uint64_t base,
                     uint32_t count, const uint8_t *p, size_t len)
{
    weft_journal_entry e = { 0 };

    e.kind = events ? WEFT_JE_EVENTS : WEFT_JE_DEFS;
    e.location = loc;
    e.seq = events ? ++k->seq[loc] : ++k->defs_seq;
    e.base_time = base;
    e.count = count;
    e.payload = p;
    e.len = (uint32_t)len;
    CHECK(weft_journal_append(k->j, &e) == 0);
    if (events)
        k->events[loc] += count;
}

/* The Goodbye, then the conversion: it must succeed, complete, with
 * every event accepted (as nesting has it). */
static void sink_convert(sink *k)
{
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    Weft__LocationEnd ends[NLOCS], *pe[NLOCS];
    weft_convert_input in = { k->dir, k->archive, "fuzz", 1, 1, 0, 0,
                              NULL, NULL, 0, 0, NULL, 0 };
    weft_convert_result res;
    weft_journal_entry e = { 0 };
    uint8_t buf[256];
    uint64_t total = 0;
    int rc;

    for (uint32_t i = 0; i < NLOCS; i++) {
        weft__location_end__init(&ends[i]);
        ends[i].location = i;
        ends[i].events = k->events[i];
        pe[i] = &ends[i];
        total += k->events[i];
    }
    g.n_locations = NLOCS;
    g.locations = pe;
    e.kind = WEFT_JE_GOODBYE;
    e.len = (uint32_t)weft__goodbye__get_packed_size(&g);
    CHECK(e.len <= sizeof buf);
    weft__goodbye__pack(&g, buf);
    e.payload = buf;
    CHECK(weft_journal_append(k->j, &e) == 0);
    weft_journal_close(k->j);
    memset(&res, 0, sizeof res);
    rc = weft_convert_trace(&in, &res);
    if (rc != 0 || res.incomplete[0] ||
        res.events + res.nesting_unmatched != total + res.nesting_added)
        fprintf(stderr, "conversion: rc %d, %llu of %llu events (%llu "
                "added, %llu Leaves of regions not open left out), error "
                "'%s', incomplete '%s'\n", rc,
                (unsigned long long)res.events, (unsigned long long)total,
                (unsigned long long)res.nesting_added,
                (unsigned long long)res.nesting_unmatched, res.error,
                res.incomplete);
    CHECK(rc == 0);
    CHECK(res.incomplete[0] == 0);
    /* Every event, but for what makes every location nest: Leaves and
     * Enters added, Leaves of regions not open left out. */
    CHECK(res.events + res.nesting_unmatched == total + res.nesting_added);
    weft_convert_result_free(&res);
    weft_rm_tree(k->dir);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static weft_daemon d; /* only d.cfg is read */
    weft_memberin m;      /* a member's ingest state, no trace around */
    weft_loc_state locs[NLOCS];
    uint64_t charge;
    char err[512];

    if (size < 1)
        return 0;
    memset(&d, 0, sizeof d);
    d.cfg.max_definitions = max_defs[data[0] & 3];
    d.cfg.max_string = data[0] & 4 ? 16 : 64u << 10;
    memset(&m, 0, sizeof m);
    m.d = &d;
    m.size = 1;
    memset(locs, 0, sizeof locs);
    m.locs = locs;
    m.nlocs = NLOCS;
#ifdef WEFT_FUZZ_CONVERT
    sink k;
    sink_open(&k, data[0] & 8);
#endif
    data++;
    size--;

    while (size >= 4) {
        uint8_t kind = data[0], count = data[1];
        size_t len = (size_t)data[2] | (size_t)data[3] << 8;
        enum weft_limit limit = WEFT_LIMIT_MAX_FRAME; /* must be set */
        int rc;
        data += 4;
        size -= 4;
        if (len > size)
            len = size;
        err[0] = '\0';
        if (!(kind & 1)) {
            rc = weft_validate_defs(&m, data, len, &charge, &limit, err,
                                    sizeof err);
            if (rc == 0)
                check_defined(&m, data, len);
            CHECK(rc == 0 ? charge >= len : charge == 0);
#ifdef WEFT_FUZZ_CONVERT
            if (rc == 0)
                sink_put(&k, 0, 0, 0, 0, data, len);
#endif
        } else {
            uint32_t loc = (kind >> 1) & (NLOCS - 1);
            uint64_t prev = locs[loc].last_time, dist = kind >> 4;
            uint64_t base = kind & 8 ? (prev >= dist ? prev - dist : 0)
                                     : prev + dist;
            uint64_t last = 0;
            rc = weft_validate_events(&m, loc, base, count, data, len,
                                      &last, &limit, err, sizeof err);
            if (rc == 0 && count) {
                CHECK(last >= base && last >= prev);
                locs[loc].last_time = last;
            }
            if (rc == 0 && !count)
                CHECK(len == 0);
#ifdef WEFT_FUZZ_CONVERT
            if (rc == 0)
                sink_put(&k, 1, loc, base, count, data, len);
#endif
        }
        CHECK(rc == 0 || (is_error(rc) && err[0] != '\0'));
        /* max_locations: a batch's thread, a ThreadName's, a TeamMember's
         * thread or number. */
        CHECK(limit == WEFT_LIMIT_NONE ||
              (limit == WEFT_LIMIT_MAX_DEFINITIONS && rc == WEFT_ELIMIT) ||
              (limit == WEFT_LIMIT_MAX_LOCATIONS && rc == WEFT_ELIMIT) ||
              (limit == WEFT_LIMIT_MAX_STRING && rc == WEFT_ETOOBIG));
        data += len;
        size -= len;
    }

#ifdef WEFT_FUZZ_CONVERT
    sink_convert(&k);
#endif
    for (int r = 0; r < WEFT_REF__COUNT; r++) {
        weft_idset_free(&m.defined[r]);
    }
    return 0;
}
