/* fuzz_journal.c - libFuzzer target for weftd's member journals: the
 * reader and the names of spool/journal.c, and the start-up recovery of
 * daemon/traces/recover.c that replays a spool's journals (through trace.c and
 * validate.c) and converts the traces they complete.
 *
 * Input: a flags byte, then the bytes of one or two journal files, which
 * go to SPOOL/traces/KEY/ of a spool of the process's own.
 *   bit 0     the rank R of the file name of journal A, rank-R.wj
 *   bit 1     the catalog holds the trace already (recording), as weftd
 *             records it when the trace begins
 *   bit 2     two journals: a 16-bit little-endian length of A comes
 *             first, and B (rank-R+1.wj) is what follows A
 *   bit 3     A's file name comes from the input instead (a length byte,
 *             at most NAME_INPUT_MAX, then the name; before bit 2's
 *             length); a name no file can have leaves A as rank-R.wj
 *   bits 4-5  the kind of entry the reader's second pass steps over:
 *             none, Definitions, EventBatch or Goodbye
 *   bit 6     ... from that pass's second entry on, not from its first
 *   bit 7     the checksum of each entry is set as weftd's writer sets
 *             it, so that mutations get past it to what it guards
 *
 * Checked beyond memory safety:
 *  - the reader against a model of the format of journal.h: it opens
 *    just the files that start with the magic (WEFT_ECORRUPT otherwise)
 *    and hands out just the entries the model finds, each with the
 *    fields and payload of its bytes (no payload for a kind stepped
 *    over), the offset moving by its size and never past the file; it
 *    ends with 0, for good, where the first bad entry starts;
 *  - weft_journal_name_parse takes, refuses (0) or calls malformed
 *    (WEFT_ECORRUPT) a name as journal.h says, and weft_journal_name
 *    makes a name it takes again;
 *  - recovery, with a weft_daemon set up as weftd's main does but for its
 *    listeners, returns 0; the catalog and conversion jobs it starts end
 *    and the loop closes with nothing left open; the trace of a journal
 *    has a catalog row, failed when a journal has no magic, a failure of
 *    recovery naming the file and an offset where one of its entries
 *    starts (or the file and no Hello at all, or, for a trace of empty
 *    journals only, that); journals are gone only once their trace is
 *    converted, and otherwise hold what they held, cut to the last good
 *    entry only when a torn tail followed it (weft_journal_open); a
 *    catalog row left recording with no journal becomes failed, one of
 *    another spool stays as it is.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>
#include <zlib.h>

#include "fuzz.h"
#include "catalog.h"
#include "daemon.h"
#include "fsutil.h"
#include "journal.h"
#include "recover.h"
#include "retain.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"

#define MAGIC_LEN 8
#define NAME_INPUT_MAX 32
#define KEY "fuzz-20240102T030405Z-1"
/* A row a previous weftd left recording, whose journals are gone. */
#define STALE_KEY "gone-20240101T000000Z-1"
/* A row recording in another spool: not this weftd's to fail. */
#define ELSEWHERE_KEY "away-20240101T000000Z-1"
/* Below run.sh's -timeout=10, far above a conversion of its inputs. */
#define WATCHDOG_MS 8000

/* The process's own directory, in $TMPDIR, else in /dev/shm where there
 * is one (each input makes and removes a spool: a disk file system costs
 * more than the recovery), else in /tmp. DIR/spool is made afresh for
 * each input; DIR/template.db is where the catalogs it starts from are
 * made. */
static char dir[128], spool[160], tdir[200], catalog[200];
typedef struct template {
    uint8_t *db;
    size_t len;
} template;
static template templates[2];

typedef struct journal {
    char name[NAME_INPUT_MAX + 1];
    char path[256];
    const uint8_t *p;
    size_t size;
    int considered;     /* its name is a journal name: recovery reads it */
    int magic;          /* it starts with the magic */
    uint64_t good;      /* end of its good entries (the model's) */
} journal;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* ---- the model: journal.h's format, read as it says ------------------- */

/* The crc32 of the entry at h with len bytes of payload: of its header up
 * to the crc, then of the payload. */
static uint32_t entry_crc(const uint8_t *h, uint32_t len)
{
    uLong crc = crc32(crc32(0L, Z_NULL, 0), h, 32);

    return (uint32_t)crc32(crc, h + WEFT_JOURNAL_HEADER, len);
}

/* Whether the header at h, with n bytes of the file from h on, is good
 * and its entry fits in them; *len is its payload's size. */
static int model_fits(const uint8_t *h, uint64_t n, uint32_t *len)
{
    if (n < WEFT_JOURNAL_HEADER)
        return 0;
    *len = le32(h);
    return !h[5] && !h[6] && !h[7] && *len <= WEFT_JOURNAL_MAX_PAYLOAD &&
           n - WEFT_JOURNAL_HEADER >= *len;
}

/* Whether the entry of j at off is good; *len is its payload's size. An
 * entry of the kind `skip` (0: none) needs no good checksum, only to fit
 * in the file. */
static int model_entry(const journal *j, uint64_t off, uint8_t skip,
                       uint32_t *len)
{
    const uint8_t *h;

    if (off > j->size)
        return 0;
    h = j->p + off;
    if (!model_fits(h, j->size - off, len))
        return 0;
    return (skip && h[4] == skip) || entry_crc(h, *len) == le32(h + 32);
}

/* Whether an entry of j starts at off, good or the first bad one. */
static int model_starts(const journal *j, uint64_t off)
{
    uint64_t at = MAGIC_LEN;
    uint32_t len;

    while (at < off && model_entry(j, at, 0, &len))
        at += WEFT_JOURNAL_HEADER + (uint64_t)len;
    return at == off;
}

/* What weft_journal_name_parse is to make of name. */
static int model_name(const char *name, uint32_t *rank)
{
    size_t n = strlen(name), digits;
    uint64_t v = 0;

    if (n < 8 || strncmp(name, "rank-", 5) != 0 ||
        strcmp(name + n - 3, ".wj") != 0)
        return 0;
    digits = n - 8;
    if (digits == 0 || digits > 10 || (name[5] == '0' && digits > 1))
        return WEFT_ECORRUPT;
    for (size_t i = 5; i < 5 + digits; i++) {
        if (name[i] < '0' || name[i] > '9')
            return WEFT_ECORRUPT;
        v = v * 10 + (uint64_t)(name[i] - '0');
    }
    if (v > UINT32_MAX)
        return WEFT_ECORRUPT;
    *rank = (uint32_t)v;
    return 1;
}

/* ---- the reader and names, against the model --------------------------- */

static void check_name(journal *j)
{
    uint32_t want = 0, got = 0;
    char again[WEFT_JOURNAL_NAME_MAX];
    int rc = weft_journal_name_parse(j->name, &got), model;

    model = model_name(j->name, &want);
    CHECK(rc == model);
    if (rc == 1) {
        CHECK(got == want);
        CHECK(strcmp(weft_journal_name(again, sizeof again, got),
                     j->name) == 0);
    }
    j->considered = rc == 1;
}

/* Reads j to its end, stepping over entries of kind skip (0: none) from
 * its entry `from` on, as the model says it must go. The full read
 * (skip 0) sets j->good. */
static void check_read(journal *j, uint8_t skip, unsigned from)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    uint64_t off = MAGIC_LEN;
    int rc = weft_journal_reader_open(j->path, &r);

    if (!j->magic) {
        CHECK(rc == WEFT_ECORRUPT && r == NULL);
        return;
    }
    CHECK(rc == 0 && r != NULL);
    CHECK(weft_journal_reader_offset(r) == MAGIC_LEN);
    for (unsigned n = 0;; n++) {
        uint8_t now = n >= from ? skip : 0;
        uint32_t len = 0;
        int good = model_entry(j, off, now, &len);
        const uint8_t *h = j->p + off;
        if (n == from)
            weft_journal_reader_skip(r, skip);
        memset(&e, 0x5a, sizeof e);
        rc = weft_journal_reader_next(r, &e);
        CHECK(rc == good);
        if (!good)
            break;
        CHECK(e.len == len && e.kind == h[4]);
        CHECK(e.location == le32(h + 8) && e.count == le32(h + 12));
        CHECK(e.seq == le64(h + 16) && e.base_time == le64(h + 24));
        if (now && e.kind == now)
            CHECK(e.payload == NULL);
        else
            CHECK(e.payload != NULL &&
                  memcmp(e.payload, h + WEFT_JOURNAL_HEADER, len) == 0);
        off += WEFT_JOURNAL_HEADER + (uint64_t)len;
        CHECK(weft_journal_reader_offset(r) == off && off <= j->size);
    }
    CHECK(weft_journal_reader_offset(r) == off);
    CHECK(weft_journal_reader_next(r, &e) == 0); /* the end stays */
    CHECK(weft_journal_reader_offset(r) == off);
    weft_journal_reader_close(r);
    if (!skip)
        j->good = off;
}

/* ---- recovery ------------------------------------------------------------ */

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    fprintf(stderr, "recovery and its jobs have not ended after %d ms\n",
            WATCHDOG_MS);
    abort();
}

/* Recovers the spool with a daemon of its own on a loop of its own and
 * frees everything it holds, as weftd's main does. */
static void recover(void)
{
    static const char *const set[][2] = {
        { "spool", spool }, { "catalog", catalog }, { "log_level", "error" },
        { "durability", "write" }, { "convert_threads", "1" },
    };
    uv_loop_t loop;
    uv_timer_t watchdog;
    weft_daemon d;
    char err[512];

    CHECK(weft_daemon_init(&d) == 0);
    CHECK(uv_loop_init(&loop) == 0);
    d.loop = &loop;
    weft_config_init(&d.cfg);
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        CHECK(weft_config_set(&d.cfg, "weftd", set[i][0], set[i][1], err,
                              sizeof err) == 0);
    CHECK(weft_config_finish(&d.cfg, err, sizeof err) == 0);
    CHECK(weft_recover_spool(&d) == 0);
    /* Catalog jobs and conversions: what has not ended by then (counted
     * from uv_loop_init) hangs. */
    CHECK(uv_timer_init(&loop, &watchdog) == 0);
    CHECK(uv_timer_start(&watchdog, on_watchdog, WATCHDOG_MS, 0) == 0);
    uv_unref((uv_handle_t *)&watchdog);
    CHECK(uv_run(&loop, UV_RUN_DEFAULT) == 0);
    CHECK(d.jobs == 0 && d.traces->converting == 0 &&
          d.traces->converter == NULL);
    weft_trace_free_all(&d);
    weft_daemon_free(&d);
    uv_close((uv_handle_t *)&watchdog, NULL);
    CHECK(uv_run(&loop, UV_RUN_DEFAULT) == 0);
    CHECK(uv_loop_close(&loop) == 0);
    weft_config_free(&d.cfg);
}

/* What j holds after recovery, unless converted: journal.h's
 * weft_journal_open cuts a torn tail (the first bad entry runs to the
 * end of the file), leaves damage (more data after it) and what is no
 * journal alone. */
static uint64_t kept_size(const journal *j)
{
    uint64_t len;

    if (j->size <= MAGIC_LEN || !j->magic || j->good == j->size)
        return j->size;
    if (j->size - j->good >= WEFT_JOURNAL_HEADER) {
        len = le32(j->p + j->good);
        if (j->good + WEFT_JOURNAL_HEADER + len < j->size)
            return j->size;
    }
    return j->good;
}

/* 1 if the file at path holds p[0, n), 0 if there is no such file. */
static int holds(const char *path, const uint8_t *p, uint64_t n)
{
    uint8_t *buf = malloc(n + 1);
    FILE *f = fopen(path, "rb");
    size_t got;

    CHECK(buf != NULL);
    if (!f) {
        free(buf);
        return 0;
    }
    got = fread(buf, 1, n + 1, f);
    fclose(f);
    CHECK(got == n && memcmp(buf, p, n) == 0);
    free(buf);
    return 1;
}

/* Why recovery failed the trace, from the catalog (journal.h, recover.c):
 * the first journal it could not use, and where. */
static void check_failure(const journal *js, int nj, const char *error)
{
    static const char use[] = "recovery cannot use ";
    const char *p = strstr(error, " member journals: ");
    const journal *j = NULL;
    uint64_t off;

    if (strstr(error, "no journal holds acknowledged data")) {
        for (int i = 0; i < nj; i++)
            CHECK(!js[i].considered || js[i].size <= MAGIC_LEN);
        return;
    }
    if (strncmp(error, use, sizeof use - 1) != 0)
        return; /* the conversion's */
    CHECK(p != NULL);
    p += strlen(" member journals: ");
    for (int i = 0; i < nj; i++)
        if (js[i].considered &&
            strncmp(p, js[i].path, strlen(js[i].path)) == 0)
            j = &js[i];
    CHECK(j != NULL && j->size > MAGIC_LEN);
    p += strlen(j->path);
    if (strncmp(p, ": offset ", 9) == 0) {
        off = strtoull(p + 9, NULL, 10);
        CHECK(off == 0 ? !j->magic : j->magic && model_starts(j, off));
    } else {
        CHECK(strstr(p, "no Hello") != NULL);
        CHECK(j->magic && j->good == MAGIC_LEN);
    }
}

/* The state of the catalog's row of key. */
static void check_state(weft_catalog *cat, const char *key, const char *state)
{
    weft_trace_row row;

    memset(&row, 0, sizeof row);
    CHECK(weft_catalog_find(cat, key, &row) == 0);
    CHECK(strcmp(row.state, state) == 0);
    weft_catalog_trace_free(&row);
}

/* Recovery makes no journal of its own: every journal in the trace's
 * directory is one the input put there (a Hello whose rank is not its
 * file's once made weftd open a second journal for the member). */
static void check_no_new_journal(const journal *js, int nj)
{
    DIR *dp = opendir(tdir);
    struct dirent *de;
    uint32_t rank;

    CHECK(dp != NULL);
    while ((de = readdir(dp)) != NULL) {
        int ours = 0;
        if (weft_journal_name_parse(de->d_name, &rank) != 1)
            continue;
        for (int i = 0; i < nj; i++) {
            const char *slash = strrchr(js[i].path, '/');
            ours |= strcmp(slash ? slash + 1 : js[i].path, de->d_name) == 0;
        }
        CHECK(ours);
    }
    closedir(dp);
}

/* The catalog and the spool after recovery; had_key: the catalog had a
 * row of the trace before. */
static void check_after(const journal *js, int nj, int had_key)
{
    weft_catalog *cat = NULL;
    weft_trace_row row;
    char *msg = NULL;
    int any = 0, converted = 0, rc;

    check_no_new_journal(js, nj);
    CHECK(weft_catalog_open(catalog, 1, &cat, &msg) == 0);
    check_state(cat, STALE_KEY, WEFT_STATE_FAILED);
    check_state(cat, ELSEWHERE_KEY, WEFT_STATE_RECORDING);
    for (int i = 0; i < nj; i++)
        any |= js[i].considered;
    if (!any) { /* no journal: a row of the trace is stale */
        if (had_key)
            check_state(cat, KEY, WEFT_STATE_FAILED);
        else
            CHECK(weft_catalog_find(cat, KEY, &row) == WEFT_ENOTFOUND);
        weft_catalog_close(cat);
        return;
    }
    memset(&row, 0, sizeof row);
    rc = weft_catalog_find(cat, KEY, &row);
    CHECK(rc == 0);
    converted = strcmp(row.state, WEFT_STATE_COMPLETE) == 0 ||
                strcmp(row.state, WEFT_STATE_PARTIAL) == 0;
    CHECK(converted || strcmp(row.state, WEFT_STATE_RECORDING) == 0 ||
          strcmp(row.state, WEFT_STATE_FAILED) == 0);
    if (strcmp(row.state, WEFT_STATE_FAILED) == 0)
        check_failure(js, nj, row.error ? row.error : "");
    for (int i = 0; i < nj; i++) {
        if (!js[i].considered)
            continue;
        if (js[i].size > MAGIC_LEN && !js[i].magic)
            CHECK(strcmp(row.state, WEFT_STATE_FAILED) == 0);
        CHECK(holds(js[i].path, js[i].p, kept_size(&js[i])) == !converted);
    }
    weft_catalog_trace_free(&row);
    weft_catalog_close(cat);
}

/* ---- the spool ----------------------------------------------------------- */

static void put_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    CHECK(fd >= 0);
    CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
    CHECK(close(fd) == 0);
}

/* An empty spool with template catalog t. */
static void spool_reset(int t)
{
    weft_rm_tree(spool);
    CHECK(weft_mkdir_p(tdir, 0700, 0700) == 0);
    put_file(catalog, templates[t].db, templates[t].len);
}

/* Adds the row a weftd makes when a trace begins. */
static void add_recording(const char *path, const char *key,
                          const char *archive)
{
    weft_trace_row row;
    weft_catalog *cat = NULL;
    char *msg = NULL;

    if (weft_catalog_open(path, 0, &cat, &msg) < 0) {
        fprintf(stderr, "fuzz_journal: %s\n", msg ? msg : path);
        abort();
    }
    memset(&row, 0, sizeof row);
    row.key = (char *)key;
    row.name = (char *)"job-42";
    row.uid = 1000;
    row.created = 1704067200;
    row.path = (char *)archive;
    row.members = 2;
    CHECK(weft_catalog_trace_begin(cat, &row) == 0);
    weft_catalog_close(cat);
}

/* The bytes of the file at path, in *t. */
static void keep_template(const char *path, template *t)
{
    FILE *f = fopen(path, "rb");
    long n;

    CHECK(f != NULL);
    CHECK(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0);
    rewind(f);
    t->db = malloc((size_t)n);
    CHECK(t->db != NULL);
    CHECK(fread(t->db, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    t->len = (size_t)n;
}

/* The catalogs a run starts from: a trace that ended (its run is
 * remembered), one a previous weftd left recording whose journals are
 * gone, one recording in another spool; the second one also KEY, as a
 * previous weftd recorded it when the trace began. */
static void make_templates(void)
{
    weft_trace_row row;
    weft_catalog *cat = NULL;
    char *msg = NULL, path[300], db[200];

    snprintf(db, sizeof db, "%s/template.db", dir);
    if (weft_catalog_open(db, 0, &cat, &msg) < 0) {
        fprintf(stderr, "fuzz_journal: %s\n", msg ? msg : db);
        abort();
    }
    memset(&row, 0, sizeof row);
    row.key = (char *)"done-20231231T000000Z-1";
    row.name = (char *)"done";
    row.run = (char *)"run-1";
    row.uid = 1000;
    row.state = (char *)WEFT_STATE_COMPLETE;
    row.created = 1703980800;
    row.finished = 1703980900;
    row.path = (char *)"/nowhere/archive";
    row.members = 1;
    CHECK(weft_catalog_trace_finish(cat, &row, NULL, 0) == 0);
    weft_catalog_close(cat);
    snprintf(path, sizeof path, "%s/traces/%s/archive", spool, STALE_KEY);
    add_recording(db, STALE_KEY, path);
    add_recording(db, ELSEWHERE_KEY, "/elsewhere/traces/" ELSEWHERE_KEY
                                     "/archive");
    keep_template(db, &templates[0]);
    snprintf(path, sizeof path, "%s/archive", tdir);
    add_recording(db, KEY, path);
    keep_template(db, &templates[1]);
}

static void cleanup(void)
{
    weft_rm_tree(dir);
    free(templates[0].db);
    free(templates[1].db);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");

    (void)argc;
    (void)argv;
    if (!tmp || !*tmp || strlen(tmp) >= 64)
        tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/weft-fuzz-journal.XXXXXX", tmp);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(spool, sizeof spool, "%s/spool", dir);
    snprintf(tdir, sizeof tdir, "%s/traces/" KEY, spool);
    snprintf(catalog, sizeof catalog, "%s/catalog.db", spool);
    make_templates();
    atexit(cleanup);
    return 0;
}

/* Sets the crc32 of each entry of the journal p[0, size) as the writer
 * does, up to the first that does not fit in it; entries with reserved
 * bytes set too, so that only those tell them bad. */
static void fix_crcs(uint8_t *p, size_t size)
{
    uint64_t off = MAGIC_LEN;
    uint32_t len, crc;

    if (size < MAGIC_LEN || memcmp(p, WEFT_JOURNAL_MAGIC, MAGIC_LEN) != 0)
        return;
    while (size - off >= WEFT_JOURNAL_HEADER &&
           (len = le32(p + off)) <= size - off - WEFT_JOURNAL_HEADER) {
        crc = entry_crc(p + off, len);
        for (int i = 0; i < 4; i++)
            p[off + 32 + i] = (uint8_t)(crc >> (8 * i));
        off += WEFT_JOURNAL_HEADER + (uint64_t)len;
    }
}

/* A's name from the input: n bytes at p, up to a NUL. */
static void input_name(journal *a, const uint8_t *p, size_t n)
{
    size_t len = 0;

    while (len < n && p[len])
        len++;
    memcpy(a->name, p, len);
    a->name[len] = 0;
}

/* Splits the input after its flags byte into the journals js (file names
 * and bytes, a copy in *bytes for the caller to free) as the top of this
 * file says. Returns how many there are. */
static int split(uint8_t flags, const uint8_t *data, size_t size,
                 journal js[2], uint8_t **bytes)
{
    uint32_t rank = flags & 1;
    size_t alen;
    int nj = flags & 4 ? 2 : 1;

    memset(js, 0, 2 * sizeof *js);
    weft_journal_name(js[0].name, sizeof js[0].name, rank);
    weft_journal_name(js[1].name, sizeof js[1].name, rank + 1);
    if (flags & 8 && size) {
        size_t n = data[0] > NAME_INPUT_MAX ? NAME_INPUT_MAX : data[0];
        data++;
        size--;
        if (n > size)
            n = size;
        input_name(&js[0], data, n);
        data += n;
        size -= n;
    }
    alen = size;
    if (nj == 2 && size >= 2) {
        alen = (size_t)data[0] | (size_t)data[1] << 8;
        data += 2;
        size -= 2;
        if (alen > size)
            alen = size;
    }
    *bytes = malloc(size + 1);
    CHECK(*bytes != NULL);
    memcpy(*bytes, data, size);
    if (flags & 0x80) {
        fix_crcs(*bytes, alen);
        fix_crcs(*bytes + alen, size - alen);
    }
    js[0].p = *bytes;
    js[0].size = alen;
    js[1].p = *bytes + alen;
    js[1].size = size - alen;

    /* Names: the parse, whatever the bytes; a file only where one can be. */
    for (int i = 0; i < nj; i++)
        check_name(&js[i]);
    if (!js[0].name[0] || strchr(js[0].name, '/') ||
        strcmp(js[0].name, ".") == 0 || strcmp(js[0].name, "..") == 0 ||
        (nj == 2 && strcmp(js[0].name, js[1].name) == 0)) {
        weft_journal_name(js[0].name, sizeof js[0].name, rank);
        check_name(&js[0]);
    }
    return nj;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t skips[4] = { 0, WEFT_JE_DEFS, WEFT_JE_EVENTS,
                                      WEFT_JE_GOODBYE };
    journal js[2];
    uint8_t flags, *bytes = NULL;
    int nj;

    if (size < 1)
        return 0;
    flags = data[0];
    nj = split(flags, data + 1, size - 1, js, &bytes);
    spool_reset(flags >> 1 & 1);
    for (int i = 0; i < nj; i++) {
        journal *j = &js[i];
        uint8_t skip = skips[(flags >> 4) & 3];
        snprintf(j->path, sizeof j->path, "%s/%s", tdir, j->name);
        put_file(j->path, j->p, j->size);
        j->magic = j->size >= MAGIC_LEN &&
                   memcmp(j->p, WEFT_JOURNAL_MAGIC, MAGIC_LEN) == 0;
        check_read(j, 0, 0);
        if (skip)
            check_read(j, skip, flags & 0x40 ? 1 : 0);
    }
    recover();
    check_after(js, nj, flags >> 1 & 1);
    weft_rm_tree(spool);
    free(bytes);
    return 0;
}
