/* journal.c - the append-only member journal (format in journal.h).
 *
 * Writer: one writev(2) per entry (header + payload) on an O_APPEND file
 * descriptor. A failed or short append is rolled back with ftruncate(2),
 * so a full disk never leaves a half entry in front of later ones.
 * Opening for append scans the file with the reader and cuts whatever
 * follows the last good entry (a torn tail after a crash).
 *
 * Reader: read(2) in blocks of READ_BUFFER (less when less is left in the
 * file; more for a larger entry) into one buffer, and
 * entries are handed out where they lie in it (no second copy); an entry
 * cut by the end of the block is moved to the front before the next read.
 * The length of an entry is checked against WEFT_JOURNAL_MAX_PAYLOAD
 * before anything is allocated for it. Any bad entry (torn, bad crc,
 * oversized length, non-zero reserved bytes) ends the good data: next()
 * returns 0 from then on, and weft_journal_reader_offset() tells where the
 * good data ends, so a caller that knows the file size can tell a clean
 * end from a bad one. Entries of a kind the caller skips are stepped over
 * unread: only their header is checked, and that they fit in the file.
 *
 * Names: "rank-R.wj" is made and parsed here only (traces, conversion,
 * recovery and `weft reindex` all find journals by it).
 */
#include "journal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "weft_errors.h"

#define MAGIC_LEN 8
#define CRC_OFFSET 32
#define READ_BUFFER (1u << 20)
#define NAME_PREFIX "rank-"
#define NAME_SUFFIX ".wj"

struct weft_journal {
    int fd;        /* -1 while parked (weft_journal_park) */
    char *path;    /* to reopen a parked journal */
    uint64_t size; /* bytes in the file: magic + good entries */
};

struct weft_journal_reader {
    int fd;
    uint64_t size;   /* of the file when opened */
    uint64_t offset; /* end of the last good entry */
    int done;        /* a bad entry or the end was seen */
    int skip;        /* entries of this kind are stepped over (0: none) */
    uint8_t *buf;    /* bytes read from the file: [start, end) unused */
    size_t cap, start, end;
};

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t entry_crc(const uint8_t *hdr, const uint8_t *payload,
                          uint32_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);

    crc = crc32(crc, hdr, CRC_OFFSET);
    if (len)
        crc = crc32(crc, payload, len);
    return (uint32_t)crc;
}

/* ---- reader ------------------------------------------------------------ */

/* Makes n unused bytes available at r->buf + r->start. 1: there, 0: the
 * file ends before, WEFT_EIO or WEFT_ENOMEM. */
static int fill(weft_journal_reader *r, size_t n)
{
    if (r->end - r->start >= n)
        return 1;
    if (!r->buf) {
        /* What is left of the file, up to a block: a reader that goes on
         * where another stopped (a stream) reads what was added. */
        uint64_t left = r->size > r->offset ? r->size - r->offset : 0;
        r->cap = left < READ_BUFFER ? (size_t)left : READ_BUFFER;
        if (r->cap < n)
            r->cap = n;
        if (!(r->buf = malloc(r->cap)))
            return WEFT_ENOMEM;
    }
    if (r->start) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (n > r->cap) {
        size_t cap = r->cap;
        uint8_t *p;
        while (cap < n)
            cap *= 2;
        p = realloc(r->buf, cap);
        if (!p)
            return WEFT_ENOMEM;
        r->buf = p;
        r->cap = cap;
    }
    while (r->end < n) {
        ssize_t got = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return WEFT_EIO;
        if (got == 0)
            return 0;
        r->end += (size_t)got;
    }
    return 1;
}

/* Opens a journal for reading and checks its magic. Returns 0,
 * WEFT_ENOTFOUND, WEFT_ECORRUPT (short file or wrong magic) or WEFT_EIO;
 * *out (owned by the caller, weft_journal_reader_close) is set on 0. */
int weft_journal_reader_open(const char *path, weft_journal_reader **out)
{
    weft_journal_reader *r = NULL;
    char head[MAGIC_LEN];
    struct stat st;
    ssize_t n;
    int rc;

    assert(path && out);
    *out = NULL;
    r = calloc(1, sizeof *r);
    if (!r)
        return WEFT_ENOMEM;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        rc = errno == ENOENT ? WEFT_ENOTFOUND : WEFT_EIO;
        goto out;
    }
    if (fstat(r->fd, &st) < 0) {
        rc = WEFT_EIO;
        goto out;
    }
    r->size = (uint64_t)st.st_size;
    /* The magic alone: no block is read before the reader knows where
     * it goes on (weft_journal_reader_seek). */
    n = pread(r->fd, head, MAGIC_LEN, 0);
    if (n < 0) {
        rc = WEFT_EIO;
        goto out;
    }
    if (n != MAGIC_LEN || memcmp(head, WEFT_JOURNAL_MAGIC, MAGIC_LEN) != 0) {
        rc = WEFT_ECORRUPT;
        goto out;
    }
    if (lseek(r->fd, MAGIC_LEN, SEEK_SET) < 0) {
        rc = WEFT_EIO;
        goto out;
    }
    r->offset = MAGIC_LEN;
    *out = r;
    r = NULL;
    rc = 0;
out:
    weft_journal_reader_close(r);
    return rc;
}

/* Goes on from offset off, the end of an entry read before (or the
 * start). 0, or WEFT_EIO (lseek failed), WEFT_EINVAL (off beyond the
 * file as opened). */
int weft_journal_reader_seek(weft_journal_reader *r, uint64_t off)
{
    assert(r);
    if (off < MAGIC_LEN)
        off = MAGIC_LEN;
    if (off > r->size)
        return WEFT_EINVAL;
    if (lseek(r->fd, (off_t)off, SEEK_SET) < 0)
        return WEFT_EIO;
    r->start = r->end = 0;
    r->offset = off;
    r->done = 0;
    return 0;
}

/* Steps over entries of `kind` from now on (0: reads all): next() hands
 * them out with payload NULL, their payload neither read nor checked. */
void weft_journal_reader_skip(weft_journal_reader *r, uint8_t kind)
{
    assert(r);
    r->skip = kind;
}

/* Steps over n bytes of payload: in the buffer, or past it with lseek(2).
 * 1, or 0 when the file ends before. */
static int step_over(weft_journal_reader *r, uint64_t n)
{
    uint64_t pos = r->offset + WEFT_JOURNAL_HEADER + n;

    if (pos > r->size)
        return 0;
    if (r->end - r->start >= n) {
        r->start += (size_t)n;
        return 1;
    }
    if (lseek(r->fd, (off_t)pos, SEEK_SET) < 0)
        return WEFT_EIO;
    r->start = r->end = 0;
    return 1;
}

/* Reads the next entry into *e. Returns 1, 0 at the end of the good data
 * (clean end, torn tail or any bad entry; see the offset), or WEFT_EIO /
 * WEFT_ENOMEM. e->payload belongs to the reader and stays valid until the
 * next call. */
int weft_journal_reader_next(weft_journal_reader *r, weft_journal_entry *e)
{
    const uint8_t *hdr;
    uint32_t len;
    int rc;

    assert(r && e);
    if (r->done)
        return 0;
    r->done = 1; /* until this entry proves good */
    rc = fill(r, WEFT_JOURNAL_HEADER);
    if (rc <= 0)
        return rc;
    hdr = r->buf + r->start;
    len = get_u32(hdr);
    /* An entry that would end past the file is a torn tail: said before
     * a buffer of its announced length is made (found by fuzz_journal) */
    if (hdr[5] != 0 || get_u16(hdr + 6) != 0 ||
        len > WEFT_JOURNAL_MAX_PAYLOAD ||
        r->offset + WEFT_JOURNAL_HEADER + (uint64_t)len > r->size)
        return 0;
    e->kind = hdr[4];
    e->location = get_u32(hdr + 8);
    e->count = get_u32(hdr + 12);
    e->seq = get_u64(hdr + 16);
    e->base_time = get_u64(hdr + 24);
    e->len = len;
    e->payload = NULL;
    if (r->skip && e->kind == r->skip) {
        r->start += WEFT_JOURNAL_HEADER;
        rc = step_over(r, len);
    } else {
        rc = fill(r, WEFT_JOURNAL_HEADER + (size_t)len);
        hdr = r->buf + r->start;  /* fill may have moved it */
        if (rc == 1 && entry_crc(hdr, hdr + WEFT_JOURNAL_HEADER, len) !=
                           get_u32(hdr + CRC_OFFSET))
            rc = 0;
        if (rc == 1) {
            e->payload = hdr + WEFT_JOURNAL_HEADER;
            r->start += WEFT_JOURNAL_HEADER + (size_t)len;
        }
    }
    if (rc <= 0)
        return rc;
    r->offset += WEFT_JOURNAL_HEADER + (uint64_t)len;
    r->done = 0;
    return 1;
}

/* Offset just past the last good entry (8, the magic, before any). */
uint64_t weft_journal_reader_offset(const weft_journal_reader *r)
{
    return r->offset;
}

void weft_journal_reader_close(weft_journal_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    free(r);
}

/* ---- writer ------------------------------------------------------------ */

/* Finds the end of the good entries of the journal at path (*good) and
 * whether the magic is sound. Returns 0, WEFT_ECORRUPT or WEFT_EIO. */
static int scan(const char *path, uint64_t *good)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    int rc;

    rc = weft_journal_reader_open(path, &r);
    if (rc < 0)
        return rc;
    while ((rc = weft_journal_reader_next(r, &e)) == 1)
        ;
    if (rc == 0)
        *good = weft_journal_reader_offset(r);
    weft_journal_reader_close(r);
    return rc;
}

static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return WEFT_EIO;
        }
        if (w == 0) {
            errno = EIO;
            return WEFT_EIO;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Opens (creating if needed, mode 0600) the journal at path for
 * appending. A new or empty file gets the magic; a file holding only a
 * prefix of the magic (crash while creating) is restarted. An existing
 * journal is scanned and anything after its last good entry is cut;
 * *cut_bytes (may be NULL) says how many bytes were cut. Returns 0,
 * WEFT_ECORRUPT (not a journal), WEFT_EIO or WEFT_ENOMEM; on 0 *out is
 * the caller's, to free with weft_journal_close. */
int weft_journal_open(const char *path, weft_journal **out,
                      uint64_t *cut_bytes)
{
    weft_journal *j = NULL;
    struct stat st;
    uint64_t good = 0;
    int rc;

    assert(path && out);
    *out = NULL;
    if (cut_bytes)
        *cut_bytes = 0;
    j = calloc(1, sizeof *j);
    if (!j)
        return WEFT_ENOMEM;
    j->fd = -1;
    if (!(j->path = strdup(path))) {
        rc = WEFT_ENOMEM;
        goto out;
    }
    j->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (j->fd < 0) {
        rc = WEFT_EIO;
        goto out;
    }
    if (fstat(j->fd, &st) < 0) {
        rc = WEFT_EIO;
        goto out;
    }
    if ((uint64_t)st.st_size < MAGIC_LEN) {
        char head[MAGIC_LEN];
        ssize_t n = pread(j->fd, head, (size_t)st.st_size, 0);
        if (n != (ssize_t)st.st_size) {
            rc = WEFT_EIO;
            goto out;
        }
        if (memcmp(head, WEFT_JOURNAL_MAGIC, (size_t)n) != 0) {
            rc = WEFT_ECORRUPT;
            goto out;
        }
        good = 0;
    } else {
        rc = scan(path, &good);
        if (rc < 0)
            goto out;
    }
    if (good < (uint64_t)st.st_size && good >= MAGIC_LEN &&
        (uint64_t)st.st_size - good >= WEFT_JOURNAL_HEADER) {
        /* A torn tail is an entry cut short by a crash: it runs to the end
         * of the file. A bad entry with data after it is damage in the
         * middle; what follows was acknowledged, so nothing is cut. */
        uint8_t hdr[4];
        uint64_t len;
        if (pread(j->fd, hdr, sizeof hdr, (off_t)good) != (ssize_t)sizeof hdr) {
            rc = WEFT_EIO;
            goto out;
        }
        len = (uint64_t)hdr[0] | (uint64_t)hdr[1] << 8 |
              (uint64_t)hdr[2] << 16 | (uint64_t)hdr[3] << 24;
        if (good + WEFT_JOURNAL_HEADER + len < (uint64_t)st.st_size) {
            rc = WEFT_ECORRUPT;
            goto out;
        }
    }
    if (good < (uint64_t)st.st_size) {
        if (ftruncate(j->fd, (off_t)good) < 0) {
            rc = WEFT_EIO;
            goto out;
        }
        if (cut_bytes)
            *cut_bytes = (uint64_t)st.st_size - good;
    }
    j->size = good;
    if (good == 0) {
        struct iovec iov = { (void *)WEFT_JOURNAL_MAGIC, MAGIC_LEN };
        rc = write_all(j->fd, &iov, 1);
        if (rc < 0)
            goto out;
        j->size = MAGIC_LEN;
    }
    *out = j;
    j = NULL;
    rc = 0;
out:
    if (j) {
        int saved = errno;
        if (j->fd >= 0)
            close(j->fd);
        free(j->path);
        free(j);
        errno = saved;
    }
    return rc;
}

/* A parked journal's descriptor, opened again for appending (no scan:
 * j->size says where its good data ends). 0 or WEFT_EIO (errno kept). */
static int unpark(weft_journal *j)
{
    if (j->fd >= 0)
        return 0;
    j->fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    return j->fd < 0 ? WEFT_EIO : 0;
}

/* Closes j's descriptor; the next append or sync opens it again. */
void weft_journal_park(weft_journal *j)
{
    assert(j);
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
}

/* 1 if j has its descriptor open. */
int weft_journal_is_open(const weft_journal *j)
{
    return j->fd >= 0;
}

/* Appends one entry with a single writev(2) (continued after short
 * writes and EINTR). Returns 0, WEFT_ETOOBIG (payload over the limit) or
 * WEFT_EIO with errno kept; after a failure the file is cut back to its
 * previous size, so it never holds half an entry. */
int weft_journal_append(weft_journal *j, const weft_journal_entry *e)
{
    uint8_t hdr[WEFT_JOURNAL_HEADER];
    struct iovec iov[2];
    int rc;

    assert(j && e);
    assert(e->len == 0 || e->payload);
    if (e->len > WEFT_JOURNAL_MAX_PAYLOAD)
        return WEFT_ETOOBIG;
    put_u32(hdr, e->len);
    hdr[4] = e->kind;
    hdr[5] = 0;
    put_u16(hdr + 6, 0);
    put_u32(hdr + 8, e->location);
    put_u32(hdr + 12, e->count);
    put_u64(hdr + 16, e->seq);
    put_u64(hdr + 24, e->base_time);
    put_u32(hdr + CRC_OFFSET, entry_crc(hdr, e->payload, e->len));
    iov[0].iov_base = hdr;
    iov[0].iov_len = sizeof hdr;
    iov[1].iov_base = (void *)e->payload;
    iov[1].iov_len = e->len;
    if ((rc = unpark(j)) < 0)
        return rc;
    rc = write_all(j->fd, iov, e->len ? 2 : 1);
    if (rc < 0) {
        int saved = errno;
        /* Best effort: if this fails too, the next open cuts the tail. */
        if (ftruncate(j->fd, (off_t)j->size) < 0)
            (void)0;
        errno = saved;
        return rc;
    }
    j->size += WEFT_JOURNAL_HEADER + (uint64_t)e->len;
    return 0;
}

/* fdatasync(2)s the journal. Returns 0 or WEFT_EIO (errno kept). */
int weft_journal_sync(weft_journal *j)
{
    int r;

    assert(j);
    if (unpark(j) < 0)
        return WEFT_EIO;
    do
        r = fdatasync(j->fd);
    while (r < 0 && errno == EINTR);
    return r < 0 ? WEFT_EIO : 0;
}

/* Bytes in the file, magic included. */
uint64_t weft_journal_size(const weft_journal *j)
{
    return j->size;
}

/* Closes the file and frees j (NULL is fine). */
void weft_journal_close(weft_journal *j)
{
    if (!j)
        return;
    if (j->fd >= 0)
        close(j->fd);
    free(j->path);
    free(j);
}

/* The journal name of rank in buf; returns buf. */
char *weft_journal_name(char *buf, size_t n, uint32_t rank)
{
    int len = snprintf(buf, n, NAME_PREFIX "%" PRIu32 NAME_SUFFIX, rank);

    assert(len > 0 && (size_t)len < n);
    (void)len;
    return buf;
}

/* 1 and *rank for a journal name, 0 for no journal name, WEFT_ECORRUPT
 * for a malformed one (see journal.h). */
int weft_journal_name_parse(const char *name, uint32_t *rank)
{
    size_t len = strlen(name), pre = strlen(NAME_PREFIX);
    size_t suf = strlen(NAME_SUFFIX);
    const char *p = name + pre, *end;
    uint64_t v = 0;

    if (len < pre + suf || strncmp(name, NAME_PREFIX, pre) != 0 ||
        strcmp(name + len - suf, NAME_SUFFIX) != 0)
        return 0;
    end = name + len - suf;
    if (p == end || (*p == '0' && p + 1 != end))
        return WEFT_ECORRUPT;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return WEFT_ECORRUPT;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX)
            return WEFT_ECORRUPT;
    }
    *rank = (uint32_t)v;
    return 1;
}
