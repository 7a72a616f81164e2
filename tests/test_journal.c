/* test_journal.c - the member journal (spool/journal.c).
 *
 * Round trip of every field, reopen and append, and every way a journal
 * can go bad: torn tail (inside a header and inside a payload), flipped
 * payload byte, non-zero reserved bytes, oversized length, bad magic,
 * half-written magic, empty and missing files; stepping over the
 * entries of one kind; the journal's file name, made and parsed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "tmpdir.h"
#include "weft_errors.h"

typedef tu_scratch fixture;

static int setup(void **state)
{
    return tu_scratch_setup(state, "wjtest", "rank-0.wj");
}

static int teardown(void **state)
{
    return tu_scratch_teardown(state);
}

static uint64_t file_size(const char *path)
{
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    close(fd);
}

static void patch_byte(const char *path, uint64_t off, uint8_t xor_with)
{
    int fd = open(path, O_RDWR);
    uint8_t b;

    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
    b ^= xor_with;
    assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
    close(fd);
}

/* Entry i of the standard test set: payload of 3 * i bytes. */
static void make_entry(unsigned i, weft_journal_entry *e, uint8_t *buf)
{
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)(1 + i % 4);
    e->location = i * 7u;
    e->count = i * 3u;
    e->seq = 1000000000000ull + i;
    e->base_time = UINT64_MAX - i;
    for (unsigned k = 0; k < 3 * i; k++)
        buf[k] = (uint8_t)(k * 31 + i);
    e->payload = buf;
    e->len = 3 * i;
}

static void append_n(const char *path, unsigned from, unsigned n)
{
    weft_journal *j = NULL;
    uint8_t buf[256];
    weft_journal_entry e;
    uint64_t cut = 99;

    assert_int_equal(weft_journal_open(path, &j, &cut), 0);
    assert_int_equal(cut, 0);
    for (unsigned i = from; i < from + n; i++) {
        uint64_t before = weft_journal_size(j);
        make_entry(i, &e, buf);
        assert_int_equal(weft_journal_append(j, &e), 0);
        assert_int_equal(weft_journal_size(j),
                         before + WEFT_JOURNAL_HEADER + e.len);
    }
    assert_int_equal(weft_journal_sync(j), 0);
    assert_int_equal(weft_journal_size(j), file_size(path));
    weft_journal_close(j);
}

/* Reads the journal, checking entries against make_entry(0..); returns
 * how many were good and the reader's final offset. */
static unsigned read_all(const char *path, uint64_t *offset)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e, want;
    uint8_t buf[256];
    unsigned n = 0;
    int rc;

    assert_int_equal(weft_journal_reader_open(path, &r), 0);
    assert_int_equal(weft_journal_reader_offset(r), 8);
    while ((rc = weft_journal_reader_next(r, &e)) == 1) {
        make_entry(n, &want, buf);
        assert_int_equal(e.kind, want.kind);
        assert_int_equal(e.location, want.location);
        assert_int_equal(e.count, want.count);
        assert_int_equal(e.seq, want.seq);
        assert_int_equal(e.base_time, want.base_time);
        assert_int_equal(e.len, want.len);
        if (e.len)
            assert_memory_equal(e.payload, want.payload, e.len);
        n++;
    }
    assert_int_equal(rc, 0);
    /* The end is sticky. */
    assert_int_equal(weft_journal_reader_next(r, &e), 0);
    *offset = weft_journal_reader_offset(r);
    weft_journal_reader_close(r);
    return n;
}

static uint64_t end_of(unsigned n)
{
    uint64_t off = 8;
    for (unsigned i = 0; i < n; i++)
        off += WEFT_JOURNAL_HEADER + 3 * i;
    return off;
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    uint64_t off;

    append_n(f->path, 0, 5);
    assert_int_equal(file_size(f->path), end_of(5));
    assert_int_equal(read_all(f->path, &off), 5);
    assert_int_equal(off, end_of(5));
    /* Reopening a sound journal cuts nothing and appends after it. */
    append_n(f->path, 5, 3);
    assert_int_equal(read_all(f->path, &off), 8);
    assert_int_equal(off, file_size(f->path));
}

/* Skipping a kind: its entries come out with their header and no
 * payload, the others as always; a skipped entry cut short still ends
 * the good data. Large payloads (beyond the reader's block) are read and
 * stepped over too. */
static void test_skip(void **state)
{
    fixture *f = *state;
    weft_journal_reader *r = NULL;
    weft_journal *j = NULL;
    weft_journal_entry e, want;
    uint8_t buf[256], *big = malloc(3u << 20);
    unsigned n = 0;
    int rc;

    assert_non_null(big);
    append_n(f->path, 0, 9);
    assert_int_equal(weft_journal_reader_open(f->path, &r), 0);
    weft_journal_reader_skip(r, WEFT_JE_EVENTS);
    while ((rc = weft_journal_reader_next(r, &e)) == 1) {
        make_entry(n, &want, buf);
        assert_int_equal(e.kind, want.kind);
        assert_int_equal(e.seq, want.seq);
        assert_int_equal(e.len, want.len);
        if (e.kind == WEFT_JE_EVENTS)
            assert_null(e.payload);
        else if (e.len)
            assert_memory_equal(e.payload, want.payload, e.len);
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, 9);
    assert_int_equal(weft_journal_reader_offset(r), end_of(9));
    weft_journal_reader_close(r);

    /* Entry 6 (kind 3, 18 bytes) cut inside its payload. */
    assert_int_equal(truncate(f->path, (off_t)(end_of(7) - 4)), 0);
    assert_int_equal(weft_journal_reader_open(f->path, &r), 0);
    weft_journal_reader_skip(r, WEFT_JE_EVENTS);
    n = 0;
    while ((rc = weft_journal_reader_next(r, &e)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, 6);
    assert_int_equal(weft_journal_reader_offset(r), end_of(6));
    weft_journal_reader_close(r);

    /* Payloads of 3 MiB and 2 MiB + 1 (events, read whole or skipped)
     * around a small one. */
    unlink(f->path);
    assert_int_equal(weft_journal_open(f->path, &j, NULL), 0);
    for (unsigned i = 0; i < 3; i++) {
        memset(&e, 0, sizeof e);
        e.kind = i == 1 ? WEFT_JE_DEFS : WEFT_JE_EVENTS;
        e.seq = i + 1;
        e.len = i == 0 ? 3u << 20 : i == 1 ? 5 : (2u << 20) + 1;
        memset(big, 'a' + (int)i, e.len);
        e.payload = big;
        assert_int_equal(weft_journal_append(j, &e), 0);
    }
    weft_journal_close(j);
    for (int skip = 0; skip < 2; skip++) {
        assert_int_equal(weft_journal_reader_open(f->path, &r), 0);
        if (skip)
            weft_journal_reader_skip(r, WEFT_JE_EVENTS);
        for (unsigned i = 0; i < 3; i++) {
            assert_int_equal(weft_journal_reader_next(r, &e), 1);
            assert_int_equal(e.seq, i + 1);
            if (skip && e.kind == WEFT_JE_EVENTS) {
                assert_null(e.payload);
                continue;
            }
            assert_non_null(e.payload);
            assert_int_equal(e.payload[0], 'a' + (int)i);
            assert_int_equal(e.payload[e.len - 1], 'a' + (int)i);
        }
        assert_int_equal(weft_journal_reader_next(r, &e), 0);
        assert_int_equal(weft_journal_reader_offset(r), file_size(f->path));
        weft_journal_reader_close(r);
    }
    free(big);
}

static void test_torn_tail(void **state)
{
    fixture *f = *state;
    weft_journal *j = NULL;
    uint64_t cut = 0, off;
    uint64_t cuts[] = { 5, WEFT_JOURNAL_HEADER + 1, WEFT_JOURNAL_HEADER + 9 };

    for (unsigned t = 0; t < 3; t++) {
        unlink(f->path);
        append_n(f->path, 0, 4);
        /* Entry 3 (9 payload bytes) loses its last bytes: inside the
         * payload, just after the header, inside the header. */
        assert_int_equal(truncate(f->path, (off_t)(end_of(4) - cuts[t])), 0);
        assert_int_equal(read_all(f->path, &off), 3);
        assert_int_equal(off, end_of(3));
        assert_int_equal(weft_journal_open(f->path, &j, &cut), 0);
        assert_int_equal(cut, end_of(4) - cuts[t] - end_of(3));
        assert_int_equal(weft_journal_size(j), end_of(3));
        assert_int_equal(file_size(f->path), end_of(3));
        weft_journal_close(j);
        append_n(f->path, 3, 2);
        assert_int_equal(read_all(f->path, &off), 5);
        assert_int_equal(off, end_of(5));
    }
}

/* A reader opened again goes on where one stopped: at the end of a
 * torn entry's predecessor while the entry is being written, then past
 * it once it is whole; and not beyond the file. */
static void test_seek(void **state)
{
    fixture *f = *state;
    weft_journal_reader *r = NULL;
    weft_journal_entry e, want;
    uint8_t buf[256];
    uint64_t off;

    append_n(f->path, 0, 4);
    assert_int_equal(truncate(f->path, (off_t)(end_of(4) - 2)), 0);
    assert_int_equal(read_all(f->path, &off), 3);
    assert_int_equal(off, end_of(3));
    assert_int_equal(truncate(f->path, (off_t)end_of(3)), 0);
    append_n(f->path, 3, 2);
    assert_int_equal(weft_journal_reader_open(f->path, &r), 0);
    assert_int_equal(weft_journal_reader_seek(r, off), 0);
    for (unsigned n = 3; n < 5; n++) {
        assert_int_equal(weft_journal_reader_next(r, &e), 1);
        make_entry(n, &want, buf);
        assert_int_equal(e.seq, want.seq);
        assert_memory_equal(e.payload, want.payload, e.len);
    }
    assert_int_equal(weft_journal_reader_next(r, &e), 0);
    assert_int_equal(weft_journal_reader_offset(r), end_of(5));
    /* the start, then past the end */
    assert_int_equal(weft_journal_reader_seek(r, 0), 0);
    assert_int_equal(weft_journal_reader_next(r, &e), 1);
    make_entry(0, &want, buf);
    assert_int_equal(e.seq, want.seq);
    assert_int_equal(weft_journal_reader_seek(r, end_of(5) + 1),
                     WEFT_EINVAL);
    weft_journal_reader_close(r);
}

static void test_flipped_byte(void **state)
{
    fixture *f = *state;
    weft_journal *j = NULL;
    uint64_t cut = 0, off;

    append_n(f->path, 0, 5);
    /* A payload byte of entry 2, then the good data ends after entry 1
     * even though more entries follow. */
    patch_byte(f->path, end_of(2) + WEFT_JOURNAL_HEADER + 1, 0x40);
    assert_int_equal(read_all(f->path, &off), 2);
    assert_int_equal(off, end_of(2));
    assert_true(off < file_size(f->path));
    /* Damage with acknowledged entries after it is not a torn tail: the
     * file is not cut, opening it for appending says it is corrupt. */
    assert_int_equal(weft_journal_open(f->path, &j, &cut), WEFT_ECORRUPT);
    assert_null(j);
    assert_int_equal(file_size(f->path), end_of(5));

    /* A header byte (location) of entry 1 is covered by the crc too. */
    patch_byte(f->path, end_of(1) + 8, 0x01);
    assert_int_equal(read_all(f->path, &off), 1);
    assert_int_equal(off, end_of(1));
}

/* A bad last entry cannot be told from one cut short: it is cut. */
static void test_flipped_byte_in_last_entry(void **state)
{
    fixture *f = *state;
    weft_journal *j = NULL;
    uint64_t cut = 0;

    append_n(f->path, 0, 3);
    patch_byte(f->path, end_of(2) + WEFT_JOURNAL_HEADER + 1, 0x40);
    assert_int_equal(weft_journal_open(f->path, &j, &cut), 0);
    assert_int_equal(cut, end_of(3) - end_of(2));
    weft_journal_close(j);
    assert_int_equal(file_size(f->path), end_of(2));
}

static void test_reserved_bytes(void **state)
{
    fixture *f = *state;
    uint64_t off;

    append_n(f->path, 0, 3);
    patch_byte(f->path, end_of(1) + 5, 0x01);
    assert_int_equal(read_all(f->path, &off), 1);
    assert_int_equal(off, end_of(1));
}

static void test_bad_magic(void **state)
{
    fixture *f = *state;
    weft_journal_reader *r = NULL;
    weft_journal *j = NULL;
    const char junk[] = "NOTAJRNL and then some bytes";

    write_file(f->path, junk, sizeof junk);
    assert_int_equal(weft_journal_reader_open(f->path, &r), WEFT_ECORRUPT);
    assert_null(r);
    assert_int_equal(weft_journal_open(f->path, &j, NULL), WEFT_ECORRUPT);
    assert_null(j);
    /* Nothing was cut from a file that is not a journal. */
    assert_int_equal(file_size(f->path), sizeof junk);

    write_file(f->path, "XY", 2);
    assert_int_equal(weft_journal_open(f->path, &j, NULL), WEFT_ECORRUPT);
    assert_int_equal(weft_journal_reader_open(f->path, &r), WEFT_ECORRUPT);
}

static void test_half_magic(void **state)
{
    fixture *f = *state;
    weft_journal *j = NULL;
    uint64_t cut = 0, off;

    /* A crash while creating the journal left part of the magic. */
    write_file(f->path, "WEFT", 4);
    assert_int_equal(weft_journal_open(f->path, &j, &cut), 0);
    assert_int_equal(cut, 4);
    assert_int_equal(weft_journal_size(j), 8);
    weft_journal_close(j);
    assert_int_equal(read_all(f->path, &off), 0);
    assert_int_equal(off, 8);
}

static void test_empty(void **state)
{
    fixture *f = *state;
    weft_journal_reader *r = NULL;
    weft_journal *j = NULL;
    uint64_t cut = 1, off;

    assert_int_equal(weft_journal_reader_open(f->path, &r), WEFT_ENOTFOUND);
    /* A zero-length file is not a journal to read... */
    write_file(f->path, "", 0);
    assert_int_equal(weft_journal_reader_open(f->path, &r), WEFT_ECORRUPT);
    /* ...but opening it for append makes it one. */
    assert_int_equal(weft_journal_open(f->path, &j, &cut), 0);
    assert_int_equal(cut, 0);
    assert_int_equal(weft_journal_size(j), 8);
    weft_journal_close(j);
    assert_int_equal(file_size(f->path), 8);
    assert_int_equal(read_all(f->path, &off), 0);
    assert_int_equal(off, 8);

    /* An entry with an empty payload. */
    unlink(f->path);
    assert_int_equal(weft_journal_open(f->path, &j, NULL), 0);
    {
        weft_journal_entry e = { .kind = WEFT_JE_GOODBYE, .seq = 1 };
        assert_int_equal(weft_journal_append(j, &e), 0);
    }
    weft_journal_close(j);
    assert_int_equal(weft_journal_reader_open(f->path, &r), 0);
    {
        weft_journal_entry e;
        assert_int_equal(weft_journal_reader_next(r, &e), 1);
        assert_int_equal(e.kind, WEFT_JE_GOODBYE);
        assert_int_equal(e.len, 0);
        assert_int_equal(weft_journal_reader_next(r, &e), 0);
    }
    weft_journal_reader_close(r);
}

static void test_oversized(void **state)
{
    fixture *f = *state;
    weft_journal *j = NULL;
    weft_journal_entry e;
    uint8_t tiny[4] = { 0 };
    uint64_t off, cut = 0;
    uint32_t big = WEFT_JOURNAL_MAX_PAYLOAD + 1;

    append_n(f->path, 0, 2);
    /* The writer refuses it... */
    assert_int_equal(weft_journal_open(f->path, &j, NULL), 0);
    memset(&e, 0, sizeof e);
    e.kind = WEFT_JE_EVENTS;
    e.payload = tiny;
    e.len = big;
    assert_int_equal(weft_journal_append(j, &e), WEFT_ETOOBIG);
    assert_int_equal(weft_journal_size(j), end_of(2));
    weft_journal_close(j);
    /* ...and the reader stops at a header claiming it, before reading
     * (or allocating) anything for it. */
    {
        uint8_t hdr[WEFT_JOURNAL_HEADER + 16];
        int fd = open(f->path, O_WRONLY | O_APPEND);
        memset(hdr, 0, sizeof hdr);
        hdr[0] = (uint8_t)big;
        hdr[1] = (uint8_t)(big >> 8);
        hdr[2] = (uint8_t)(big >> 16);
        hdr[3] = (uint8_t)(big >> 24);
        hdr[4] = WEFT_JE_EVENTS;
        assert_true(fd >= 0);
        assert_int_equal(write(fd, hdr, sizeof hdr), (ssize_t)sizeof hdr);
        close(fd);
    }
    assert_int_equal(read_all(f->path, &off), 2);
    assert_int_equal(off, end_of(2));
    assert_int_equal(weft_journal_open(f->path, &j, &cut), 0);
    assert_int_equal(cut, WEFT_JOURNAL_HEADER + 16);
    weft_journal_close(j);
}

static void test_append_failure_rolls_back(void **state)
{
    fixture *f = *state;
    weft_journal *j = NULL;
    weft_journal_entry e;
    uint8_t buf[256];
    struct rlimit old, lim;
    uint64_t off;
    int rc, err;

    append_n(f->path, 0, 2);
    assert_int_equal(weft_journal_open(f->path, &j, NULL), 0);
    /* A file size limit in the middle of the next entry: the write is
     * short, then fails with EFBIG (as on a full disk). The half entry
     * must be cut again and errno kept. */
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = end_of(2) + WEFT_JOURNAL_HEADER + 3;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    make_entry(9, &e, buf);
    errno = 0;
    rc = weft_journal_append(j, &e);
    err = errno;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    assert_int_equal(rc, WEFT_EIO);
    assert_int_equal(err, EFBIG);
    assert_int_equal(weft_journal_size(j), end_of(2));
    assert_int_equal(file_size(f->path), end_of(2));
    make_entry(2, &e, buf);
    assert_int_equal(weft_journal_append(j, &e), 0);
    weft_journal_close(j);
    assert_int_equal(read_all(f->path, &off), 3);
    assert_int_equal(off, end_of(3));
}

/* Names: what weft_journal_name makes, weft_journal_name_parse reads
 * back; other files are no journals, and a name that could be taken for
 * another rank's journal is malformed. */
static void test_names(void **state)
{
    static const uint32_t ranks[] = { 0, 1, 9, 10, 4294967295u };
    static const char *const none[] = {
        "archive", "rank-0.wj.tmp", "rank-1.wjx", "Rank-1.wj", "rank1.wj",
        "rank-1.WJ", "rank-", ".wj", "rank.wj", "", "rank-1.wj/",
    };
    static const char *const bad[] = {
        "rank-.wj", "rank-01.wj", "rank-00.wj", "rank-4294967296.wj",
        "rank-99999999999999999999999.wj", "rank-1x.wj", "rank-x1.wj",
        "rank-+1.wj", "rank--1.wj", "rank- 1.wj", "rank-1 .wj",
        "rank-1.wj.wj", "rank-0x10.wj", "rank-1-2.wj",
    };
    char name[WEFT_JOURNAL_NAME_MAX];
    uint32_t rank;

    (void)state;
    assert_string_equal(weft_journal_name(name, sizeof name, 0),
                        "rank-0.wj");
    assert_string_equal(weft_journal_name(name, sizeof name, 4294967295u),
                        "rank-4294967295.wj");
    assert_int_equal(strlen(name) + 1, WEFT_JOURNAL_NAME_MAX);
    for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
        rank = 12345;
        weft_journal_name(name, sizeof name, ranks[i]);
        assert_int_equal(weft_journal_name_parse(name, &rank), 1);
        assert_int_equal(rank, ranks[i]);
    }
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        rank = 12345;
        if (weft_journal_name_parse(none[i], &rank) != 0)
            fail_msg("\"%s\" taken for a journal name", none[i]);
        assert_int_equal(rank, 12345);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rank = 12345;
        if (weft_journal_name_parse(bad[i], &rank) != WEFT_ECORRUPT)
            fail_msg("\"%s\" not refused as malformed", bad[i]);
        assert_int_equal(rank, 12345);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seek, setup, teardown),
        cmocka_unit_test_setup_teardown(test_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flipped_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flipped_byte_in_last_entry,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_magic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_half_magic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_failure_rolls_back,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
