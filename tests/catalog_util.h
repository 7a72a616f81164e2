/* catalog_util.h - what the catalog tests share (catalog_util.c). */
#ifndef WEFT_CATALOG_UTIL_H
#define WEFT_CATALOG_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "tmpdir.h"

typedef tu_scratch fixture;

#define MAXROWS 16
#define ODD "it's \"odd\"\n'); DROP TABLE tags;--"

typedef struct collected {
    size_t n;
    int64_t ids[MAXROWS];
    char *names[MAXROWS];
    char *states[MAXROWS];
    uint64_t locids[MAXROWS];
    uint64_t events[MAXROWS];
    int stop_after;       /* return 7 after this many rows, 0: never */
} collected;

typedef struct seen {
    size_t n;
    char text[16][160];
} seen;

/* cmocka setup and teardown: a scratch directory and its catalog path. */
int setup(void **state);
int teardown(void **state);
/* Opens the catalog at path, asserting success. */
weft_catalog *open_ok(const char *path, int readonly);
/* (A writable one set to sequential ids, which the tests name traces by;
 * test_ids_random sets them back to random.) */
/* SQL run on the file with SQLite itself, not through the catalog. */
void raw_exec(const char *path, const char *sql);
int64_t raw_int(const char *path, const char *sql);
/* Row collectors (collected, seen) for the catalog's listing functions. */
void collected_free(collected *c);
int collect_trace(const weft_trace_row *row, void *arg);
int collect_location(const weft_location_row *row, void *arg);
int seen_member(const weft_member_row *m, void *arg);
int seen_tag(const weft_tag *t, void *arg);
int seen_region(const weft_region_row *r, void *arg);
/* A trace begun (its id), and one stored with figures, hosts, members,
 * tags and regions. */
int64_t begin(weft_catalog *c, const char *key, const char *name,
              int64_t created);
void finish_full(weft_catalog *c, const char *key, const char *name,
                 uint32_t uid, const char *state, int64_t created,
                 int64_t finished, uint64_t events, uint64_t bytes,
                 const char *hosts, const weft_tag *tags, size_t ntags);

#endif
