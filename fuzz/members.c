/* members.c - the end of a fuzz_daemon input: journals and archives
 * (members.h).
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "convert.h"
#include "fuzz.h"
#include "journal.h"
#include "members.h"

/* Every ack of m names one entry of its journal; adds the events of the
 * journal to *events. */
static void check_journal(const char *keep, const member *m,
                          uint64_t *events)
{
    char path[1024], name[WEFT_JOURNAL_NAME_MAX];
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    static uint8_t seen[MAX_ACKS];
    int rc;

    memset(seen, 0, sizeof seen);
    weft_journal_name(name, sizeof name, m->rank);
    snprintf(path, sizeof path, "%s/%s/%s", keep, m->key, name);
    CHECK(m->linked || m->nacks == 0);
    if (!m->linked)
        return;
    CHECK(weft_journal_reader_open(path, &r) == 0);
    while ((rc = weft_journal_reader_next(r, &e)) == 1) {
        if (e.kind == WEFT_JE_EVENTS)
            *events += e.count;
        for (size_t i = 0; i < m->nacks; i++) {
            const ack *a = &m->acks[i];
            int hit = a->definitions ? e.kind == WEFT_JE_DEFS
                                     : e.kind == WEFT_JE_EVENTS &&
                                           e.location == a->location;
            if (hit && e.seq == a->seq)
                seen[i]++;
        }
    }
    CHECK(rc == 0);
    weft_journal_reader_close(r);
    for (size_t i = 0; i < m->nacks; i++) {
        if (seen[i] != 1)
            fprintf(stderr, "ack %s loc %u seq %llu of %s rank %u: %u "
                    "entries\n", m->acks[i].definitions ? "defs" : "events",
                    m->acks[i].location,
                    (unsigned long long)m->acks[i].seq, m->key, m->rank,
                    seen[i]);
        CHECK(seen[i] == 1);
    }
}

/* The trace of key converted: its row is complete or partial and its
 * archive holds the events of its journals (events), give or take what
 * conversion does so that every location nests. */
static void check_trace(weft_catalog *cat, const char *keep, const char *key,
                        uint64_t events, int all_linked)
{
    weft_trace_row row;
    weft_convert_result res;
    weft_convert_input cin;
    char tdir[512], archive[600];
    int rc;

    memset(&row, 0, sizeof row);
    CHECK(weft_catalog_find(cat, key, &row) == 0);
    if (strcmp(row.state, WEFT_STATE_COMPLETE) != 0 &&
        strcmp(row.state, WEFT_STATE_PARTIAL) != 0)
        fprintf(stderr, "trace %s: %s: %s\n", key, row.state,
                row.error ? row.error : "");
    CHECK(strcmp(row.state, WEFT_STATE_COMPLETE) == 0 ||
          strcmp(row.state, WEFT_STATE_PARTIAL) == 0);
    if (all_linked) {
        snprintf(tdir, sizeof tdir, "%s/%s", keep, key);
        snprintf(archive, sizeof archive, "%s/archive", tdir);
        memset(&res, 0, sizeof res);
        memset(&cin, 0, sizeof cin);
        cin.trace_dir = tdir;
        cin.archive_dir = archive;
        cin.trace_name = row.name;
        cin.members = row.members;
        cin.threads = 1;
        rc = weft_convert_trace(&cin, &res);
        if (rc != 0 || res.events != row.events ||
            res.events + res.nesting_unmatched != events + res.nesting_added)
            fprintf(stderr, "trace %s: rc %d, archive %llu events, row "
                    "%llu, journals %llu, added %llu, left out %llu: %s\n",
                    key, rc, (unsigned long long)res.events,
                    (unsigned long long)row.events,
                    (unsigned long long)events,
                    (unsigned long long)res.nesting_added,
                    (unsigned long long)res.nesting_unmatched, res.error);
        CHECK(rc == 0);
        CHECK(res.events == row.events);
        CHECK(res.events + res.nesting_unmatched ==
              events + res.nesting_added);
        weft_convert_result_free(&res);
    }
    weft_catalog_trace_free(&row);
}

/* See members.h. */
void check_members(const char *keep, const char *catalog,
                   const member *members, size_t nmembers)
{
    weft_catalog *cat = NULL;
    char *msg = NULL;
    uint8_t done[MAX_MEMBERS] = { 0 };

    CHECK(weft_catalog_open(catalog, 1, &cat, &msg) == 0);
    for (size_t i = 0; i < nmembers; i++) {
        uint64_t events = 0;
        int all_linked = 1;
        if (done[i])
            continue;
        for (size_t k = i; k < nmembers; k++) {
            if (strcmp(members[k].key, members[i].key) != 0)
                continue;
            done[k] = 1;
            all_linked &= members[k].linked;
            check_journal(keep, &members[k], &events);
        }
        check_trace(cat, keep, members[i].key, events, all_linked);
    }
    weft_catalog_close(cat);
}
