/* frame.h - framing of the wire protocol: a 4-byte big-endian length and
 * one weft.Envelope (protobuf-c). Pure functions over bytes; the reader is
 * an explicit state machine (header, then payload) that checks the length
 * against the limit before any payload buffer is sized.
 */
#ifndef WEFT_FRAME_H
#define WEFT_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "weft.pb-c.h"

/* 2: the full record table; typed values (metric values, attributes)
 * encoded by their type; attribute lists before events. 3: Hello tags and
 * ClockSync. 4: Comm, InterComm and RmaWin carry an identity (WX in
 * weft_records.def), and Goodbye says how a process ended abnormally.
 * 5: Auth and AuthAck (MUNGE) before Hello over TCP; Heartbeat.
 * 6: over TCP weftd's Challenge first, the credential bound to the
 * connection (proto/bind.h), every frame after AuthAck MACed
 * (proto/mac.h). */
#define WEFT_PROTOCOL_VERSION 6
/* Longest Goodbye.ended, bytes. */
#define WEFT_MAX_ENDED 256
/* Most Goodbye.children: a process tree's member's child processes still
 * running as it ends (libweft lists no more). */
#define WEFT_MAX_CHILDREN 1024
/* Longest Hello fields, bytes (weftd refuses longer ones; libweft never
 * sends them: it cuts the command line). Tags: keys and values together. */
#define WEFT_MAX_HOSTNAME 255
#define WEFT_MAX_COMMAND 4095
#define WEFT_MAX_JOB_ID 255
#define WEFT_MAX_TAG_BYTES 4096
/* Largest frame weftd takes before a Hello is accepted (Auth, Hello:
 * about 10 KiB at most with the limits above). */
#define WEFT_MAX_HELLO_FRAME (64u << 10)
/* Answers to the weft command's Query (daemon/ask/ask.h): the bytes of one
 * Answer frame, and of a whole answer. */
#define WEFT_ANSWER_CHUNK (1u << 20)
#define WEFT_MAX_ANSWER (256u << 20)
#define WEFT_FRAME_HEADER 4
#define WEFT_DEFAULT_MAX_FRAME (4u << 20)

typedef struct weft_frame_reader {
    size_t max_frame;     /* largest payload accepted, bytes */
    uint8_t hdr[WEFT_FRAME_HEADER];
    size_t hdr_len;       /* header bytes received so far */
    uint8_t *payload;     /* owned; handed to the caller when complete */
    uint32_t payload_len; /* announced length */
    uint32_t have;        /* payload bytes received so far */
    uint32_t cap;         /* bytes allocated at payload: they grow with
                             `have`, from WEFT_FRAME_FIRST_CHUNK */
} weft_frame_reader;

/* What a frame's buffer starts with (or its length if smaller). */
#define WEFT_FRAME_FIRST_CHUNK (64u << 10)

void weft_frame_reader_init(weft_frame_reader *r, size_t max_frame);
/* Consumes bytes from *buf (advancing *buf and *len). Returns 1 when a
 * frame is complete: *frame (malloc'd, the caller frees) and *frame_len
 * are set; 0 when all input was consumed without completing one;
 * WEFT_ETOOBIG when the announced length exceeds max_frame (the reader is
 * then unusable); WEFT_ENOMEM. */
int weft_frame_reader_feed(weft_frame_reader *r, const uint8_t **buf,
                           size_t *len, uint8_t **frame, uint32_t *frame_len);
/* Bytes the reader holds of an incomplete frame. */
size_t weft_frame_reader_pending(const weft_frame_reader *r);
/* Bytes the reader has allocated for an incomplete frame (what weftd
 * charges to max_buffered): at most twice what arrived, or
 * WEFT_FRAME_FIRST_CHUNK. */
size_t weft_frame_reader_allocated(const weft_frame_reader *r);
void weft_frame_reader_free(weft_frame_reader *r);

/* Unpacks one Envelope. NULL if the bytes are not a valid Envelope, carry
 * no message, or carry fields this protocol version does not define. Free
 * with weft_frame_free_envelope. */
Weft__Envelope *weft_frame_unpack(const uint8_t *buf, size_t len);
void weft_frame_free_envelope(Weft__Envelope *env);

/* Packs env with its length prefix into a malloc'd buffer (*out, the
 * caller frees). Returns the total length or WEFT_ENOMEM/WEFT_ETOOBIG. */
ssize_t weft_frame_pack(const Weft__Envelope *env, uint8_t **out);
/* The same with `room` bytes left after the frame (a MAC's tag: see
 * proto/mac.h, weft_mac_seal_in_place); the length returned and the
 * header do not count them. */
ssize_t weft_frame_pack_room(const Weft__Envelope *env, size_t room,
                             uint8_t **out);
/* Packs env without a length prefix (as a NodeRelay carries a frame)
 * into a malloc'd buffer (*out, the caller frees). Its length, or
 * WEFT_ENOMEM/WEFT_ETOOBIG. */
ssize_t weft_frame_pack_bare(const Weft__Envelope *env, uint8_t **out);
/* The length of the first piece of the packed protobuf message p (len
 * bytes, len > 0) that is at most max bytes, cut between two of its
 * top-level fields, so that its pieces cut one after the other and
 * joined in order are the message again (a node's MemberSums beyond its
 * head's max_frame crosses the link so: NodeRelay.sums_more). 0 when
 * its first field alone is longer than max; WEFT_EPROTO when p is not
 * a message (a truncated field, a wire type protobuf does not have). */
ssize_t weft_frame_cut(const uint8_t *p, size_t len, size_t max);
/* Packs an Error frame with code and a printf-style message. */
ssize_t weft_frame_pack_error(uint8_t **out, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Name of an Envelope's message kind, e.g. "EventBatch". */
const char *weft_frame_kind_name(int msg_case);

#endif
