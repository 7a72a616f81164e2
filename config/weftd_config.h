/* weftd_config.h - weftd's configuration: built-in defaults, then an INI file
 * (libinih), then command-line flags. No libuv here: the weft command
 * uses it too, to find the catalog of the default configuration.
 *
 * File format (etc/weftd.conf documents every key):
 *   [weftd]   listen, socket, spool, catalog, durability, trace_ids,
 *             log_level,
 *             grace_period, convert_threads, convert_memory,
 *             max_conversions, nice,
 *             live_interval, auth, munge_socket, admin_group,
 *             retention_days,
 *             max_spool_bytes
 *   [limits]  max_frame, max_connections, max_connections_per_user,
 *             reserved_connections,
 *             listen_backlog,
 *             max_conn_pending, max_buffered,
 *             idle_timeout, session_timeout, shutdown_timeout, max_string, max_definitions,
 *             max_definition_bytes, max_questions_per_user,
 *             max_locations, max_members, max_traces_per_user,
 *             max_user_spool_bytes, max_preauth_connections,
 *             max_preauth_per_address, max_preauth_buffered,
 *             max_preauth_frame, preauth_timeout, max_members_per_user,
 *             max_open_journals, max_log_refusals
 *   [cluster] head, node_name, archive_root, heartbeat
 */
#ifndef WEFT_CONFIG_H
#define WEFT_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WEFT_DEFAULT_PORT 7411
#define WEFT_DEFAULT_LISTEN "127.0.0.1:7411"
/* The configuration file read when neither --config nor $WEFT_CONFIG
 * names one (whatever the installation prefix: the contract). */
#define WEFT_CONFIG_PATH "/etc/weft/weftd.conf"
/* root's spool (and the systemd unit's, $STATE_DIRECTORY) */
#define WEFT_SYSTEM_SPOOL "/var/lib/weft"
/* Longest [cluster] archive_root: room for /KEY/archive/traces/N.evt
 * within PATH_MAX. */
#define WEFT_ARCHIVE_ROOT_MAX 2048

enum { WEFT_DURABLE_WRITE = 0, WEFT_DURABLE_FSYNC = 1 };
/* auth: how a TCP client's uid is known (proto/cred.h). */
enum { WEFT_AUTH_MUNGE = 0, WEFT_AUTH_NONE = 1 };

typedef struct weft_config {
    char *listen;        /* "HOST:PORT", "" for none */
    char *socket;        /* Unix socket path, "" for none; unless set,
                            SPOOL/weftd.sock (weft_config_finish) */
    int socket_set;      /* socket was set (file, flag): no default */
    char *spool;         /* spool directory */
    char *catalog;       /* SQLite catalog file; default <spool>/catalog.db */
    char *address_file;  /* if set, the bound TCP address is written here */
    int log_level;       /* 0 error, 1 warning, 2 info, 3 debug */
    int durability;      /* WEFT_DURABLE_WRITE or WEFT_DURABLE_FSYNC */
    int trace_ids;       /* 0 random, 1 sequential (catalog.h:
                            weft_catalog_set_sequential_ids) */
    int auth;            /* WEFT_AUTH_MUNGE or WEFT_AUTH_NONE */
    int write_while_recording; /* 1: archives are written as the
                            journals grow (streamjob.c), 0: at the end */
    char *munge_socket;  /* munged's socket, "" for libmunge's default */
    char *admin_group;   /* its members see every user's traces (ask.c);
                            "" for none */
    uint64_t grace_period;     /* seconds a trace waits with no member
                                  connected before converting (partial) */
    uint64_t abort_grace_period; /* the same, once a member ended
                                  abnormally (trace.c) */
    uint64_t convert_threads;  /* members of a trace converted at once;
                                  0: online CPUs (convert.h) */
    uint64_t convert_memory;   /* bytes of libotf2 buffers per conversion
                                  (convert.h: weft_convert_writers) */
    uint64_t max_conversions;  /* traces converted at once; the others
                                  wait in a queue (trace.c) */
    uint64_t nice;             /* weftd's own nice value at least this
                                  (main.c; restart) */
    uint64_t live_interval;    /* seconds between writes of the recording
                                  traces' figures to the catalog (live.c);
                                  0: never */
    uint64_t max_frame;        /* bytes per frame */
    uint64_t max_connections;
    uint64_t max_connections_per_user; /* that said Hello (server.c) */
    uint64_t reserved_connections;     /* beyond max_connections, for
                                          admins on the Unix socket
                                          (reserve.h) */
    uint64_t listen_backlog;   /* connections the kernel queues before
                                  weftd accepts them (server.c; restart) */
    uint64_t max_conn_pending; /* reply bytes queued for one client before
                                  weftd stops reading from it */
    uint64_t max_buffered;     /* bytes of partly received frames over all
                                  connections before weftd starts no new
                                  frame (global backpressure) */
    uint64_t idle_timeout;     /* seconds for Hello or to finish a frame;
                                  0 = off */
    uint64_t session_timeout;  /* seconds a member's connection may send
                                  nothing; 0 = off */
    uint64_t shutdown_timeout; /* seconds SIGTERM drains before exiting */
    uint64_t max_string;       /* bytes per string */
    uint64_t max_definitions;  /* per member, per id space: largest id + 1 */
    uint64_t max_definition_bytes; /* per trace: Definitions payload bytes
                                  + WEFT_DEF_OVERHEAD per record */
    uint64_t max_questions_per_user; /* Queries in flight per uid (ask.c) */
    uint64_t max_locations;    /* per member */
    uint64_t max_members;      /* per trace (trace size) */
    uint64_t max_traces_per_user; /* recording at once, per uid */
    uint64_t max_user_spool_bytes; /* a uid's traces in the spool before
                                      its new ones are refused; 0: none */
    uint64_t min_free_spool_bytes; /* free bytes of the spool's file
                                      system weftd leaves (diskres.h) */
    /* Before a connection's uid is known (TCP before its Auth: preauth.c) */
    uint64_t max_preauth_connections; /* in all */
    uint64_t max_preauth_per_address; /* from one source address */
    uint64_t max_preauth_buffered;    /* bytes of their frames, in all */
    uint64_t max_preauth_frame;       /* bytes of one of their frames */
    uint64_t preauth_timeout;         /* seconds from accept to a known uid */
    uint64_t max_members_per_user;    /* members of one uid's recording
                                         traces, in all */
    uint64_t max_open_journals;       /* member journals with a file
                                         descriptor open (jcache.c) */
    uint64_t max_log_refusals;        /* refusal lines per second and
                                         cause; the others counted */
    uint64_t retention_days;   /* finished traces older are removed; 0:
                                  kept (retain.c) */
    uint64_t max_spool_bytes;  /* the oldest finished traces go beyond;
                                  0: no bound */
    /* [cluster] (daemon/cluster/) */
    char *cluster_head;        /* "HOST:PORT" of the head this weftd joins
                                  as a node; "" for none (its own head) */
    char *node_name;           /* its name there; "" for the host name */
    char *archive_root;        /* where archives go (ROOT/KEY/archive);
                                  "" for the spool (spool.h) */
    uint64_t cluster_heartbeat; /* seconds between a link's Heartbeats */
    int write_events;          /* a node: 1: it journals its processes
                                  and writes their event files into the
                                  head's archive_root when it sees it
                                  (partlink.h); 0: it forwards them */
} weft_config;

/* Sets the built-in defaults. */
void weft_config_init(weft_config *c);
/* Path of the default configuration file: $WEFT_CONFIG, else
 * WEFT_CONFIG_PATH. */
const char *weft_config_default_path(void);
/* Reads an INI file over c. A missing file is fine when missing_ok. Returns
 * 0 or WEFT_ECONFIG with err naming the file, line and key. */
int weft_config_load_file(weft_config *c, const char *path, int missing_ok,
                          char *err, size_t errlen);
/* Sets one key as in the file (section "weftd" or "limits"); used for
 * command-line flags too. 0 or WEFT_ECONFIG with err saying why. */
int weft_config_set(weft_config *c, const char *section, const char *key,
                    const char *value, char *err, size_t errlen);
/* Fills derived values (catalog from spool) and checks consistency. */
int weft_config_finish(weft_config *c, char *err, size_t errlen);
/* Writes the effective configuration in the file's format. */
void weft_config_print(const weft_config *c, FILE *out);
void weft_config_free(weft_config *c);
/* A size as the configuration writes one: "123", "64k", "4M", "1G",
 * "2GiB" (powers of 1024). 0, or -1 when s is not one. */
int weft_config_parse_size(const char *s, uint64_t *out);

#endif
