/* client_session.h - the one libweft session of a process, shared by the files
 * of client/: its state, who owns each field and which lock guards it,
 * and the internal functions the files call across each other.
 *
 * DESIGN
 * One session per process (a client library without handles has no other
 * place for it than a static struct). Recording threads write into their
 * own buffers without locks (api.c); they touch the session mutex only
 * when a buffer is full, when the sender asked for a flush, on their first
 * and last record, and for definitions, which are rare.
 *
 * The files and their one job each:
 *   config.c   configuration from the environment (pure: config.h)
 *   defs.c     string interning and definitions
 *   pool.c     threads, buffers, the pool and gaps (the record slow path)
 *   conn.c     the connection: connect, Hello, resume, clock offsets,
 *              frames from weftd
 *   sender.c   the sender thread, a state machine
 *   session.c  weft_open, weft_close, fork and fatal signals
 *   timer.c    the trace clock;  log.c  messages
 *   api.c      the record path (client_internal.h)
 * None of them includes another's code; they share this header.
 *
 * Buffers cycle: pool -> thread (filling) -> send queue -> in flight
 * (written to the socket, waiting for weftd's Ack) -> pool (pool.c has the
 * details, and gaps). Definitions are chunks: pending -> in flight ->
 * freed at their Ack (defs.c). The sender takes frames in this order under
 * the mutex: pending definitions first, then the oldest event batch;
 * because both are checked in one critical section, every definition made
 * before a batch was handed over goes out before that batch.
 *
 * Session states: NONE (not opened) -> ACTIVE (recording; connecting,
 * connected or reconnecting) or DISCARD (weftd unreachable at open, or
 * it refused this process for good: records are counted and dropped) ->
 * CLOSED. weft_open connects and writes the Hello but does not wait for
 * the HelloAck (unless WEFT_REQUIRED=1): the sender reads it while the
 * program runs (`opening`), and turns ACTIVE into DISCARD if weftd
 * refuses. FORKED
 * marks the copy of an open session in a child of fork(). The state is
 * written under the mutex and read lock-free by the record slow path;
 * whoever changes it raises every thread's `attention` afterwards, and the
 * slow path clears `attention` before reading the state (both seq_cst), so
 * no thread misses a change.
 *
 * Locks: open_mu serializes weft_open and weft_close (taken first); mu
 * guards the rest unless a field says otherwise. Nothing is called with mu
 * held that may block on the network.
 */
#ifndef WEFT_CLIENT_SESSION_H
#define WEFT_CLIENT_SESSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "client_internal.h"
#include "client_config.h"
#include "frame.h"
#include "mac.h"
#include "record.h"

/* Records of a gap are written here before being counted: room for the
 * largest event record (a Metric of 255 members, about 4.6 KB). */
#define WEFT__SCRATCH_SIZE WEFT__MIN_BUFFER
/* Definitions are shipped in chunks of at most this many bytes (one
 * record may be larger, up to WEFT__MAX_BUFFER). */
#define WEFT__DEFS_CHUNK (256u << 10)

/* Session states (see DESIGN above). */
enum {
    WEFT__ST_NONE,           /* not opened */
    WEFT__ST_ACTIVE,         /* recording; connected or reconnecting */
    WEFT__ST_DISCARD,        /* tracing off: records counted and dropped */
    WEFT__ST_CLOSED,         /* weft_close (or a fatal signal) began */
    WEFT__ST_FORKED          /* the copy of an open session in a child */
};

/* One event buffer. `data` holds cfg.buffer_size bytes (WEFT__SCRATCH_SIZE
 * for a thread's scratch buffer), of which threads fill the first `fill`
 * (pool.c). Mapped pages, not malloc'd (weft__buf_new): those beyond
 * `fill` were never touched and take no memory. */
typedef struct weft__buf {
    struct weft__buf *next;  /* in the free list, send queue or in flight */
    void *map;               /* the mapping it sits at the end of, */
    size_t mapped;           /* its bytes, the guard page included */
    size_t fill;             /* bytes threads may fill (pool units x unit) */
    uint64_t base_time;      /* the owner's previous event time at start */
    uint64_t seq;            /* batch sequence number, per location */
    uint32_t location;
    uint32_t events;         /* records in data[0..len) */
    size_t len;
    uint8_t data[];
} weft__buf;

/* A piece of the definitions stream. */
typedef struct weft__chunk {
    struct weft__chunk *next;
    uint64_t seq;            /* Definitions sequence number once sent */
    size_t len, cap;
    uint8_t *data;
} weft__chunk;

typedef struct weft__intern_slot {
    char *key;               /* owned */
    uint32_t id;
} weft__intern_slot;

/* String -> id, open addressing, power-of-two capacity. */
typedef struct weft__intern {
    weft__intern_slot *slots;
    size_t cap, n;
} weft__intern;

/* Bytes arriving from weftd, cut into frames, and the connection's MAC.
 * Sender thread only (the opening thread before the sender starts). */
typedef struct weft__input {
    uint8_t buf[16384];
    size_t off, len;
    weft_frame_reader rd;
    weft_mac *mac;           /* TCP after the AuthAck: seals what is sent
                                (weft__pack) and checks what arrives;
                                NULL otherwise; owned */
} weft__input;

typedef struct weft__session {
    pthread_mutex_t open_mu;   /* serializes weft_open and weft_close */
    pthread_mutex_t mu;        /* everything below unless noted */
    pthread_cond_t pool_cv;    /* a buffer came back or the state changed */
    atomic_int state;          /* WEFT__ST_*: written under mu, read
                                * anywhere */
    weft__config cfg;          /* set by weft_open before any use; then
                                * read-only (no lock) */
    int hooks_installed;       /* atexit/atfork; under open_mu */
    pid_t pid;                 /* the process that opened the session
                                * (a vfork child runs in its memory);
                                * under open_mu */
    int signals_installed;     /* fatal signal handlers; under open_mu */
    /* Buffers (pool.c). Lists are in send order (per location: by
     * sequence). */
    weft__buf *free_list;
    size_t nbufs;              /* allocated */
    size_t units;              /* pool units their fills take */
    size_t batch_cap;          /* largest batch weftd takes (its HelloAck's
                                * max_frame less framing); 0 until said */
    weft__buf *q_head, *q_tail; /* handed over (or to resend), not yet sent */
    weft__buf *f_head, *f_tail; /* sent, waiting for an Ack */
    /* Definitions (defs.c). */
    weft__chunk *d_head, *d_tail; /* pending (or to resend) */
    weft__chunk *df_head, *df_tail; /* sent, waiting for an Ack */
    uint64_t defs_seq;         /* last Definitions sequence number used */
    weft__intern strings, regions;
    uint32_t next_string, next_region, next_member, next_metric;
    /* Flow control. */
    atomic_int connected;      /* written under mu by the sender */
    atomic_int hello_acked;    /* a HelloAck was taken: a later Hello
                                * resumes this process (Hello.resumes) */
    atomic_int opening;        /* the sender awaits weft_open's HelloAck
                                * (OPENING): records are kept meanwhile */
    uint64_t progress_ms;      /* last sign that weftd works: an Ack, a
                                * HelloAck, or nothing owed to us */
    int stalled;               /* no progress for WEFT_STALL_MS: pool
                                * waits give up; cleared by progress */
    int stall_warned;
    uint32_t gaps;             /* threads in a gap */
    uint64_t close_start_ms;   /* when weft_close began */
    uint32_t close_limit_ms;   /* WEFT_CLOSE_TIMEOUT_MS, or after a fatal
                                * signal WEFT_SIGNAL_FLUSH_MS if shorter */
    /* Threads (pool.c). */
    weft__thread *threads;     /* registry, newest first */
    uint32_t nthreads;         /* location indexes handed out */
    uint32_t live;             /* threads not exited */
    /* Connection: fd and input belong to the sender once it runs (the
     * opening thread before). */
    _Atomic int fd;            /* atomic: a recorder's wrapper compares
                                * a number the program names with it
                                * (fdclaim.c) */
    _Atomic int wake_fd;       /* eventfd: app threads -> sender; set at
                                * open before the sender starts */
    weft__input in;
    atomic_uint conn_serial;   /* connections made (conn.c): one asked
                                * about is told from the next */
    atomic_int wake_users;     /* threads writing to wake_fd now
                                * (weft__wake_sender; fdclaim.c) */
    atomic_int relocate;       /* the socket's number, asked for by the
                                * program, or WEFT__RELOCATE_* (fdclaim.c) */
    pthread_t sender;
    int sender_started;        /* under open_mu */
    int closing;               /* weft_close asked the sender to finish */
    int goodbye_queued;        /* on this connection; under mu */
    char ended[WEFT_MAX_ENDED + 1]; /* Goodbye.ended: how the process
                                * ended abnormally, "" if it did not;
                                * under mu (weft__ended_locked) */
    int execs;                 /* Goodbye.exec: closed for an exec (set
                                * before weft_close, read by the sender) */
    int end_synced;            /* the closing clock offset is measured;
                                * sender only */
    int clock_shared;          /* a local weftd's CLOCK_MONOTONIC is
                                * this one's (conn.c); the opening
                                * thread, then the sender */
    uint64_t sync_sent;        /* CLOCK_MONOTONIC ns when weft_open
                                * sent ClockSync 1 behind its Hello (its
                                * answer not read yet), else 0; the
                                * opening thread, then the sender */
    int close_rc;              /* set by the sender before it exits */
    /* Fatal signals (session.c): the handler publishes the signal and its
     * thread's state, the sender closes the session and says sender_done
     * when it has finished. Lock-free: read in a signal handler. */
    atomic_int signal_seen;    /* a fatal signal's flush has begun */
    atomic_int signal_pending;
    _Atomic(weft__thread *) signal_thread;
    atomic_int sender_done;
    atomic_int sender_tid;
} weft__session;

/* The session (session.c). */
extern weft__session weft__S WEFT__HIDDEN;

/* Keeps `why` as how this process ended abnormally, for the Goodbye: the
 * first one said wins (a signal that ends an aborting process changes
 * nothing). Control characters become '?'; cut at WEFT_MAX_ENDED bytes.
 * mu held. */
WEFT__HIDDEN void weft__ended_locked(const char *why);

/* CLOCK_MONOTONIC in ms: timeouts, waits (not the trace clock). */
static inline uint64_t weft__now_ms(void)
{
    return weft__mono_ns() / 1000000u;
}

static inline uint64_t weft__min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* ---- pool.c: threads, buffers, the pool, gaps ---- */

/* Raises every thread's attention (after a state change). mu held. */
WEFT__HIDDEN void weft__raise_attention_locked(void);
/* Wakes the sender's poll (async-signal-safe; no-op before open): 1 to
 * the wake-up eventfd, counted in wake_users so that fdclaim.c can move
 * the descriptor away under the writers. */
WEFT__HIDDEN void weft__wake_sender(void);
/* Reads the wake-up eventfd's count (the sender), counted the same way:
 * never from a number the program has taken over meanwhile. */
WEFT__HIDDEN void weft__wake_fd_drain(void);
/* No relocation asked for, one done, one that failed (fdclaim.c). */
#define WEFT__RELOCATE_NONE (-1)
#define WEFT__RELOCATE_BUSY (-2)
#define WEFT__RELOCATE_FAILED (-3)
/* Sender, at the start of each round: moves the socket to another number
 * if the program asked for its number (weft__recorder_fd_claim). */
WEFT__HIDDEN void weft__relocate_pending(void);
/* The state of location `location`, NULL if no thread has it. mu held. */
WEFT__HIDDEN weft__thread *weft__thread_of_locked(uint32_t location);
/* The calling thread's state, created (with the next location index) on
 * first use; NULL when out of memory. The session owns it. */
WEFT__HIDDEN weft__thread *weft__thread_self(void);
/* Creates the thread key once (pthread_once). */
WEFT__HIDDEN void weft__thread_key_init(void);
/* Returns b to the pool and tells waiting and gap threads. mu held. */
WEFT__HIDDEN void weft__buf_free_locked(weft__buf *b);
/* A buffer of `size` data bytes from fresh anonymous pages, or NULL: never
 * from malloc, because a thread may record while the program's own
 * allocator holds its lock (a mutex of the program's malloc, recorded by
 * libweft-pthread), and allocating there again would deadlock. Its data
 * ends (within 15 bytes) at an inaccessible page: writing past the end
 * faults at once, in every build (ASan does not watch mappings). */
WEFT__HIDDEN weft__buf *weft__buf_new(size_t size);
/* Unmaps b (NULL: nothing). */
WEFT__HIDDEN void weft__buf_delete(weft__buf *b);
/* weftd made progress: pool waits start over, gaps may end. mu held. */
WEFT__HIDDEN void weft__progress_locked(void);
/* Counts the `n` event records encoded in data[0..len) (times relative
 * to base_time) as dropped on t, by type. mu held. */
WEFT__HIDDEN void weft__count_dropped_locked(weft__thread *t,
                                             const uint8_t *data, size_t len,
                                             uint64_t base_time, uint32_t n);
/* Hands t's buffer to the send queue (or back to the pool); sets *wake
 * when the sender should look. mu held. */
WEFT__HIDDEN void weft__buf_release_locked(weft__thread *t, int *wake);
/* Ends t's gap after counting its last records. mu held. */
WEFT__HIDDEN void weft__gap_end_locked(weft__thread *t);
/* (Re)initializes pool_cv on CLOCK_MONOTONIC. */
WEFT__HIDDEN void weft__pool_cv_init(void);
/* Frees every buffer of the pool and the queues. mu held. */
WEFT__HIDDEN void weft__bufs_free_locked(void);

/* ---- defs.c: interning and definitions ---- */

/* Encodes r at the end of the pending definitions. mu held. Returns 0,
 * WEFT_ETOOBIG or WEFT_ENOMEM. */
WEFT__HIDDEN int weft__defs_append_locked(const weft_record *r);
/* Frees a list of chunks and sets *list to NULL. */
WEFT__HIDDEN void weft__chunks_free(weft__chunk **list);
/* Frees the pending and in-flight definitions and the interning tables.
 * mu held. */
WEFT__HIDDEN void weft__defs_free_locked(void);

/* ---- conn.c: the connection ---- */

/* Where libweft's own descriptors go (its socket, its eventfd): at or
 * above this number (or half the descriptor limit, if that is lower),
 * away from the lowest free numbers the program's own open() and dup2()
 * take, so that a shell's `exec 3>file` or a program that reuses the
 * first free number never gets libweft's, nor libweft its. */
#define WEFT__FD_ASIDE 1000
/* fd moved to a number at or above WEFT__FD_ASIDE (close-on-exec; the
 * old one closed), or fd itself when it cannot be. */
WEFT__HIDDEN int weft__fd_aside(int fd);

/* Connects, authenticates and writes the Hello (weft_open; the sender
 * awaits the HelloAck). Returns 0 with *fdp, or as
 * weft__connect_and_hello; *reached (if not NULL) is set to 1 once the
 * connection was made (a failure after it is weftd's going away, not
 * its absence). */
WEFT__HIDDEN int weft__connect_send_hello(const weft__config *c,
                                          uint64_t deadline, int *fdp,
                                          int *reached, int *codep,
                                          char *why, size_t whylen);
/* Reads the answer to the Hello written on fd: 0 with *ackp (the
 * HelloAck envelope, the caller frees it), WEFT_ECONNECT, or WEFT_EPROTO
 * when weftd refused (*codep is its code). fd stays open. */
WEFT__HIDDEN int weft__await_hello_ack(const weft__config *c, int fd,
                                       uint64_t deadline,
                                       Weft__Envelope **ackp, int *codep,
                                       char *why, size_t whylen);
/* Connects and says Hello (WEFT_REQUIRED=1 at open, the sender on
 * reconnect).
 * Returns 0 with *fdp and *ackp (the HelloAck envelope, the caller frees
 * it with weft_frame_free_envelope), WEFT_ECONNECT when weftd cannot be
 * reached, WEFT_EAUTH when this process cannot prove who it is or the
 * server is not weftd (client/auth.h), or WEFT_EPROTO when weftd refused
 * (*codep is its code). */
WEFT__HIDDEN int weft__connect_and_hello(const weft__config *c,
                                         uint64_t deadline, int *fdp,
                                         Weft__Envelope **ackp, int *codep,
                                         char *why, size_t whylen);
/* After a HelloAck: in-flight frames go back to the front of the queues,
 * what weftd holds is released. 0 with *resend, or WEFT_EPROTO with why.
 * mu held. */
WEFT__HIDDEN int weft__resume_locked(const Weft__HelloAck *a, size_t *resend,
                                     char *why, size_t whylen);
/* Waits up to the deadline (ms, trace clock) for fd to become ready. On
 * the sender thread it also wakes when weft_close begins and then keeps to
 * the close deadline. Returns 1 ready, 0 timed out, -1 with errno. */
WEFT__HIDDEN int weft__wait_fd(int fd, short events, uint64_t deadline);
/* Writes all of buf to fd before the deadline. 0 or -1 with why. */
WEFT__HIDDEN int weft__send_all(int fd, const uint8_t *buf, size_t len,
                                uint64_t deadline, char *why, size_t whylen);
/* Sends the first ClockSync round trip of the starting offset on a
 * connection to a weftd on this host right behind the Hello, so that its
 * answer comes with the HelloAck instead of a round trip after it
 * (weft__measure_offset reads it). Opening thread; nothing on failure. */
WEFT__HIDDEN void weft__offset_presend(int fd);
/* Measures the clock offset to weftd over fd and queues it as a
 * ClockOffset definition (offset.c); warns naming `when` if it cannot. */
WEFT__HIDDEN void weft__measure_offset(int fd, uint64_t deadline,
                                       const char *when);
/* Packs env into a malloc'd frame (*out), sealed with the connection's
 * MAC if it has one (weft__S.in.mac). Frames must be written in the
 * order they are packed. The length or a WEFT_E* code. */
WEFT__HIDDEN ssize_t weft__pack(const Weft__Envelope *env, uint8_t **out);
/* Forgets the connection's input and MAC (a new connection, or the end). */
WEFT__HIDDEN void weft__input_reset(weft__input *in);
/* The next complete frame from fd: 1 with *env, 0 for nothing yet,
 * WEFT_ECLOSED at end of stream, WEFT_EIO or WEFT_EPROTO with why. */
WEFT__HIDDEN int weft__input_next(int fd, weft__input *in,
                                  Weft__Envelope **env, char *why,
                                  size_t whylen);
/* Handles one frame from weftd (Acks, late ClockSync, Error). 0 or a
 * WEFT_E* code with why; *transient says whether reconnecting may help. */
WEFT__HIDDEN int weft__handle_frame(const Weft__Envelope *env, int *transient,
                                    char *why, size_t whylen);
/* 1 when weftd's refusal `code` may go away (try again later). */
WEFT__HIDDEN int weft__transient_code(int code);

/* ---- sender.c ---- */

/* The sender's states (sender.c has one function per state). */
typedef enum weft__sender_state {
    WEFT__SND_OPENING,      /* weft_open's HelloAck, read while the
                             * program runs, and the starting offset */
    WEFT__SND_DISCONNECTED, /* no connection: waits for the next attempt */
    WEFT__SND_CONNECTING,   /* one attempt: connect, Hello, resume */
    WEFT__SND_STREAMING,    /* connected: frames out, Acks in */
    WEFT__SND_CLOSING,      /* the whole Goodbye written: waits for weftd
                             * to hang up */
    WEFT__SND_DONE          /* the thread ends */
} weft__sender_state;

/* The sender thread's body (pthread_create's start routine). Starts in
 * OPENING (weft_open wrote the Hello), or STREAMING when the HelloAck
 * came already (WEFT_REQUIRED=1). */
WEFT__HIDDEN void *weft__sender_main(void *arg);

/* A frame being written. Sender thread only. */
typedef struct weft__out {
    uint8_t *data;           /* malloc'd frame, NULL when idle */
    size_t len, off;
    int is_goodbye;
} weft__out;

/* outframe.c: takes the next frame to write into *out: pending
 * definitions first, then the oldest batch, then (when closing and
 * nothing is left to send) the Goodbye, behind the last batches: weftd
 * journals it after them and hangs up once it is written, after their
 * Acks, so the end costs one round trip. Returns 1 with a frame, 0 with
 * nothing to send, or a WEFT_E* code with why filled. Sender thread. */
WEFT__HIDDEN int weft__next_frame(weft__out *out, int closing, char *why,
                                  size_t whylen);
/* A Heartbeat in out: weftd keeps a quiet session (session_timeout).
 * 1, or a WEFT_E* code with why. Sender thread. */
WEFT__HIDDEN int weft__pack_heartbeat(weft__out *out, char *why,
                                      size_t whylen);
/* Called on the sender thread at every state change when set (tests
 * only; NULL otherwise). Set it before weft_open. */
extern void (*weft__sender_hook)(weft__sender_state from,
                                 weft__sender_state to) WEFT__HIDDEN;

#endif
