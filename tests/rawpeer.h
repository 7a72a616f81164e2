/* rawpeer.h - the wire protocol spoken by hand, for weft-rawpeer's modes
 * (tests/weft-rawpeer.c): one connection at a time (`sock`), its
 * Challenge, MUNGE credential and MAC over TCP, frames and records
 * built field by field so that a mode can send what libweft never
 * would. Functions that cannot go on exit the process with status 1
 * (the test tool's way: the mode failed), after saying why on stderr.
 */
#ifndef WEFT_RAWPEER_H
#define WEFT_RAWPEER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bind.h"
#include "codec.h"
#include "mac.h"
#include "weft.pb-c.h"

/* The connection and what it learned (rawpeer_wire.c). */
extern int sock;
extern int authenticated;          /* AuthAck received on this socket */
extern int stop_at_hello_ack;      /* await_reply_n returns 4 at HelloAck */
extern int quiet_errors;           /* await_reply_n keeps Errors in */
extern char last_error[512];       /* the last Error, when quiet */
extern uint32_t claim_uid_delta;   /* "claim": the Hello's uid is off by */
extern uint8_t nonce[WEFT_AUTH_NONCE]; /* this socket's Challenge */
extern uint32_t server_uid;        /* what the Challenge says */
extern weft_bind bound;            /* the last credential's payload */
extern weft_mac *mac;              /* after the AuthAck */
extern int corrupt_next;           /* "bad-mac": flip a bit of the next */
extern Weft__HelloAck *hello_ack;  /* the last HelloAck received */
extern uint64_t acks;              /* Ack frames received */
/* "node-relay": every frame sent goes in a NodeRelay of this member
 * (not 0), its Hello vouching for relay_uid and relay_gid; the head's
 * NodeRelays for it are read as its frames. */
extern uint32_t relay_member;
extern uint32_t relay_uid, relay_gid;
extern int relay_events_here;      /* its Hello says events_here */
extern uint32_t hello_rank;        /* the rank a Hello says (0) */

/* Connects to HOST:PORT or unix:PATH (over TCP, reads the Challenge).
 * 0, -1 (errno), or -2 when weftd refused at once (last_error). */
int connect_to(const char *addr);

/* Sending: raw bytes, an envelope (sealed once there is a MAC). */
void send_bytes(const void *buf, size_t len);
ssize_t pack_env(const Weft__Envelope *env, uint8_t **frame);
void send_env(const Weft__Envelope *env);

/* Authentication: a credential for this socket, Auth with it (1 when
 * AuthAck came, 0 after printing weftd's Error), Auth before a Hello. */
char *make_cred(unsigned ttl);
int send_auth(const char *cred, unsigned ttl, char **made);
void ensure_auth(void);

/* A session's frames. */
/* The process a Hello names: RAWPEER_PID (tests/lib.sh: the test
 * script's), else this one. The script stands for the traced process
 * whose connections the rawpeer runs are, and lives on when one of them
 * ends (weftd gives up at once on a member whose process is gone:
 * daemon/ingest/procwatch.h). */
uint32_t hello_pid(void);
void send_hello_size(const char *trace, uint32_t version, uint32_t size);
void send_hello(const char *trace, uint32_t version);
void send_records(int events, uint32_t loc, uint64_t seq,
                  uint64_t base_time, const weft_record *r, size_t n);
void send_raw_defs(uint64_t seq, const uint8_t *bytes, size_t len);
void send_goodbye_ended(const char *ended);
void send_goodbye(void);
void send_goodbye_counts(uint64_t events, uint64_t dropped);
void send_defs_region(void);   /* String 0 "work", Region 0 */

/* Records. */
weft_record rec_string(uint32_t id, const char *s);
weft_record rec_region(uint32_t id, uint32_t name);
weft_record rec_event(uint32_t type, uint64_t time, uint32_t region);

/* Replies: until an Error (printed, 1), EOF (0), timeout (-1), an
 * AuthAck (3), a HelloAck with stop_at_hello_ack (4), or that many Acks
 * in all (2); await_reply waits for no Ack count. */
int await_reply_n(int timeout_ms, uint64_t stop_after_acks);
/* Forgets what was read and not handed out (a new connection). */
void reset_replies(void);
int await_reply(int timeout_ms);

/* Numbers from the environment, dflt when unset or empty. */
uint64_t env_u64(const char *name, uint64_t dflt);
unsigned env_count(const char *name, unsigned dflt);
uint32_t env_u32(const char *name, uint32_t dflt);

/* The adversary suite's modes (rawpeer_hostile.c): exit statuses. */
int run_big_ids(const char *trace);
int run_big_strings(const char *trace);
int hello_hangup(const char *addr, const char *trace);
int hold_connections(const char *addr, int stall);
int run_goodbye_threads(const char *trace);
int run_tree_join(const char *trace);

#endif
