/* journal.h - append-only journal of one member (process) of a trace.
 *
 * DESIGN: DESIGN.md sketches one journal per location; weft keeps one per
 * member instead, because a member's definitions and all its threads'
 * batches arrive on one connection in an order that matters (definitions
 * before the events that use them). One file per connection also means one
 * file descriptor per client instead of one per thread. The location of
 * each batch is in its entry header, so conversion still demultiplexes by
 * location and resume (HelloAck) still works per location.
 *
 * File: 8-byte magic "WEFTJNL1", then entries:
 *   u32 length of payload | u8 kind | u8 0 | u16 0 | u32 location |
 *   u32 count | u64 seq | u64 base_time | u32 crc32 | payload
 * all little-endian; crc32 (zlib) covers the header before it and the
 * payload. A torn or corrupt tail is cut at the last good entry on open.
 */
#ifndef WEFT_JOURNAL_H
#define WEFT_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_JOURNAL_MAGIC "WEFTJNL1"
#define WEFT_JOURNAL_HEADER 36
#define WEFT_JOURNAL_MAX_PAYLOAD (64u << 20)

/* A member's journal is the file "rank-R.wj" in its trace directory, R
 * its rank in decimal without leading zeros; this size holds any such
 * name with its NUL. */
#define WEFT_JOURNAL_NAME_MAX sizeof "rank-4294967295.wj"

enum weft_journal_kind {
    WEFT_JE_HELLO = 1,   /* payload: packed weft.Hello */
    WEFT_JE_DEFS = 2,    /* payload: definition records; seq */
    WEFT_JE_EVENTS = 3,  /* payload: event records; location, seq,
                            base_time, count */
    WEFT_JE_GOODBYE = 4, /* payload: packed weft.Goodbye */
    WEFT_JE_REFUSED = 5, /* no payload: an EventBatch of `count` events
                            weftd did not store; location, seq, and
                            base_time says why (WEFT_REFUSED_*) */
    WEFT_JE_SUMS = 6     /* payload: packed weft.MemberSums, what a
                            node's stream summed of the events it wrote
                            of the member (a head's journal of a member
                            whose Hello names events_node, issue #34) */
};

/* Why a WEFT_JE_REFUSED entry's batch was not stored (its base_time). */
#define WEFT_REFUSED_QUOTA 0        /* its owner over max_user_spool_bytes */
#define WEFT_REFUSED_RESERVE 1      /* the spool's file system below
                                       min_free_spool_bytes */
#define WEFT_REFUSED_ERRNO 0x10000  /* plus errno: appending it failed
                                       (ENOSPC, EDQUOT, EIO...) */

typedef struct weft_journal_entry {
    uint8_t kind;
    uint32_t location;
    uint32_t count;
    uint64_t seq;
    uint64_t base_time;
    const uint8_t *payload;
    uint32_t len;
} weft_journal_entry;

/* Writes the journal name of rank into buf (n bytes, at least
 * WEFT_JOURNAL_NAME_MAX) and returns buf. */
char *weft_journal_name(char *buf, size_t n, uint32_t rank);
/* Parses a file name of a trace directory: 1 with *rank set when it is
 * the journal name of a rank (as weft_journal_name makes it); 0 when it
 * is no journal name at all (not "rank-*.wj": "rank-0.wj.tmp",
 * "archive"); WEFT_ECORRUPT when it looks like one but is malformed: no
 * digits ("rank-.wj"), a leading zero ("rank-01.wj" would be a second
 * journal of rank 1), anything but digits ("rank-+1.wj", "rank-1x.wj"),
 * or a rank above UINT32_MAX. */
int weft_journal_name_parse(const char *name, uint32_t *rank);

typedef struct weft_journal weft_journal;

/* Opens the journal at path for appending, creating it if missing. An
 * existing file is scanned and a torn tail (a last entry cut short) is cut
 * (*cut_bytes, may be NULL, says how much). A bad entry followed by more
 * data is damage, not a torn tail: the file is left alone and the result
 * is WEFT_ECORRUPT. Returns 0 or a WEFT_E* code. */
int weft_journal_open(const char *path, weft_journal **out,
                      uint64_t *cut_bytes);
/* Appends one entry with write(2). 0, or WEFT_EIO with errno kept. */
int weft_journal_append(weft_journal *j, const weft_journal_entry *e);
/* Closes the file descriptor of j, keeping j: the next append or sync
 * opens it again (WEFT_EIO if it cannot). Only while no thread uses j. */
void weft_journal_park(weft_journal *j);
/* 1 if j's descriptor is open, 0 if parked. */
int weft_journal_is_open(const weft_journal *j);
/* fdatasync(2) the file (opened again if parked). */
int weft_journal_sync(weft_journal *j);
/* Bytes in the file. */
uint64_t weft_journal_size(const weft_journal *j);
void weft_journal_close(weft_journal *j);

typedef struct weft_journal_reader weft_journal_reader;

/* Opens a journal for reading. 0, WEFT_ENOTFOUND, WEFT_ECORRUPT (bad
 * magic) or WEFT_EIO. */
int weft_journal_reader_open(const char *path, weft_journal_reader **out);
/* Reads the next entry: 1, or 0 at the end of the good data (the end of
 * the file, a torn tail or a corrupt entry: compare
 * weft_journal_reader_offset with the file size), or WEFT_EIO.
 * e->payload stays valid until the next call. */
int weft_journal_reader_next(weft_journal_reader *r, weft_journal_entry *e);
/* Steps over entries of `kind` from now on (0: reads every entry): next()
 * still hands them out, with payload NULL; their payload is neither read
 * nor checked, only that the file holds it. For a pass that wants all
 * but the events (a later full read checks those). */
void weft_journal_reader_skip(weft_journal_reader *r, uint8_t kind);
/* Goes on reading at offset off of the file (the end of an entry read
 * before, weft_journal_reader_offset; 0 is its first entry): a reader
 * opened again where an earlier one stopped, in a journal that grew
 * since. 0, WEFT_EINVAL (off beyond the file as it was when opened) or
 * WEFT_EIO. */
int weft_journal_reader_seek(weft_journal_reader *r, uint64_t off);
/* Offset of the end of the last good entry read. */
uint64_t weft_journal_reader_offset(const weft_journal_reader *r);
void weft_journal_reader_close(weft_journal_reader *r);

#endif
