/* journal.c - the append-only member journal (format in journal.h).
 *
 * Writer: one writev(2) per entry (header + payload) on an O_APPEND file
 * descriptor. A failed or short append is rolled back with ftruncate(2),
 * so a full disk never leaves a half entry in front of later ones.
 * Opening for append scans the file with the reader and cuts whatever
 * follows the last good entry (a torn tail after a crash).
 *
 * Reader: buffered stdio reads into a growable payload buffer. The length
 * of an entry is checked against WEFT_JOURNAL_MAX_PAYLOAD before anything
 * is allocated for it. Any bad entry (torn, bad crc, oversized length,
 * non-zero reserved bytes) ends the good data: next() returns 0 from then
 * on, and weft_journal_reader_offset() tells where the good data ends, so
 * a caller that knows the file size can tell a clean end from a bad one.
 */
#include "journal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
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
#define READ_BUFFER (256u << 10)

struct weft_journal {
    int fd;
    uint64_t size; /* bytes in the file: magic + good entries */
};

struct weft_journal_reader {
    FILE *f;
    uint64_t offset; /* end of the last good entry */
    int done;        /* a bad entry or the end was seen */
    uint8_t *buf;    /* payload of the current entry */
    size_t cap;
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

/* Reads exactly n bytes. 1: read, 0: end of file before n bytes,
 * WEFT_EIO on a read error. */
static int read_full(FILE *f, void *p, size_t n)
{
    size_t got = fread(p, 1, n, f);

    if (got == n)
        return 1;
    return ferror(f) ? WEFT_EIO : 0;
}

/* Opens a journal for reading and checks its magic. Returns 0,
 * WEFT_ENOTFOUND, WEFT_ECORRUPT (short file or wrong magic) or WEFT_EIO;
 * *out (owned by the caller, weft_journal_reader_close) is set on 0. */
int weft_journal_reader_open(const char *path, weft_journal_reader **out)
{
    weft_journal_reader *r = NULL;
    char magic[MAGIC_LEN];
    int rc;

    assert(path && out);
    *out = NULL;
    r = calloc(1, sizeof *r);
    if (!r)
        return WEFT_ENOMEM;
    r->f = fopen(path, "rbe");
    if (!r->f) {
        rc = errno == ENOENT ? WEFT_ENOTFOUND : WEFT_EIO;
        goto out;
    }
    /* Failing to enlarge the stdio buffer only costs speed. */
    (void)setvbuf(r->f, NULL, _IOFBF, READ_BUFFER);
    rc = read_full(r->f, magic, sizeof magic);
    if (rc < 0)
        goto out;
    if (rc == 0 || memcmp(magic, WEFT_JOURNAL_MAGIC, MAGIC_LEN) != 0) {
        rc = WEFT_ECORRUPT;
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

/* Reads the next entry into *e. Returns 1, 0 at the end of the good data
 * (clean end, torn tail or any bad entry; see the offset), or WEFT_EIO /
 * WEFT_ENOMEM. e->payload belongs to the reader and stays valid until the
 * next call. */
int weft_journal_reader_next(weft_journal_reader *r, weft_journal_entry *e)
{
    uint8_t hdr[WEFT_JOURNAL_HEADER];
    uint32_t len;
    int rc;

    assert(r && e);
    if (r->done)
        return 0;
    r->done = 1; /* until this entry proves good */
    rc = read_full(r->f, hdr, sizeof hdr);
    if (rc <= 0)
        return rc;
    len = get_u32(hdr);
    if (hdr[5] != 0 || get_u16(hdr + 6) != 0 ||
        len > WEFT_JOURNAL_MAX_PAYLOAD)
        return 0;
    if (len > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        uint8_t *p;
        while (cap < len)
            cap *= 2;
        p = realloc(r->buf, cap);
        if (!p)
            return WEFT_ENOMEM;
        r->buf = p;
        r->cap = cap;
    }
    rc = read_full(r->f, r->buf, len);
    if (rc <= 0)
        return rc;
    if (entry_crc(hdr, r->buf, len) != get_u32(hdr + CRC_OFFSET))
        return 0;
    e->kind = hdr[4];
    e->location = get_u32(hdr + 8);
    e->count = get_u32(hdr + 12);
    e->seq = get_u64(hdr + 16);
    e->base_time = get_u64(hdr + 24);
    e->payload = r->buf;
    e->len = len;
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
    if (r->f)
        fclose(r->f);
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
        free(j);
        errno = saved;
    }
    return rc;
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
    close(j->fd);
    free(j);
}
