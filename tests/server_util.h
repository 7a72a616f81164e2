/* server_util.h - what the server tests share (server_util.c). */
#ifndef WEFT_SERVER_UTIL_H
#define WEFT_SERVER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "daemon_fixture.h"
#include "record.h"
#include "testutil.h"
#include "weft.pb-c.h"

#define TIMEOUT_S 10
#define MAX_FRAME 4096

/* cmocka setup: a daemon's configuration with small limits (setup), its
 * loop started in a thread (start) and stopped, conversions done (stop). */
int setup(void **state);
void start(fixture *f);
void stop(fixture *f);

/* The client side: connecting, sending, frames packed. */
int cl_connect(const fixture *f);
/* Reads weftd's Challenge, the first frame over TCP (cl_connect does). */
void cl_challenge(int fd);
int cl_send_try(int fd, const void *buf, size_t len);
void cl_send(int fd, const void *buf, size_t len);
bytes pack(const Weft__Envelope *env);
void append_bytes(bytes *to, bytes from);
void send_bytes_free(int fd, bytes b);
/* The uid the Hellos of hello_frame claim (0 unless a test sets it). */
extern uint32_t hello_uid;
bytes hello_frame(const char *trace, uint32_t rank, uint32_t size,
                  uint32_t version);
bytes defs_frame(uint64_t seq);
/* Definitions seq holding records d[0..n). */
bytes defs_records_frame(uint64_t seq, const weft_record *d, size_t n);
bytes batch_frame(uint32_t loc, uint64_t seq, uint64_t base,
                  uint32_t announce, const weft_record *evs, size_t n);
bytes work_batch(uint32_t loc, uint64_t seq, uint64_t t);
bytes goodbye_ended_frame(const char *ended);
bytes goodbye_frame(void);

/* Receiving and what is expected (failing the test otherwise). */
int read_full(int fd, uint8_t *p, size_t n);
Weft__Envelope *cl_recv(int fd);
void expect_eof(int fd);
void show_unexpected(const Weft__Envelope *env, const char *want);
Weft__Envelope *expect_hello_ack(int fd);
void expect_ack(int fd, int defs, uint32_t loc, uint64_t seq);
void expect_error(int *fdp, int code, const char *text);
void hello_ok(int fd, const char *trace, uint32_t rank, uint32_t size);
void hang_up(int fd);
/* 1 if nothing arrives on fd within ms (the socket stays usable). */
int quiet_for(int fd, long ms);
/* A ClockSync request frame (client_time 12345). */
bytes clock_sync_frame(uint64_t id);
void sleep_ms(long ms);

#endif
