/* procid.h - who a process is on its host, as both ends of a connection
 * see it: its pid, its start time (field 22 of /proc/PID/stat, clock
 * ticks since boot: a pid used again by a new process has another) and
 * its pid namespace (the inode of /proc/self/ns/pid: a pid means the
 * same process to two processes only when they share it).
 *
 * The client names itself with these in its Hello (client/conn.c); weftd
 * uses them to tell whether the process at the other end of a loopback
 * connection is still there (daemon/ingest/procwatch.h), also once it
 * ended before weftd read its Hello. Plain system calls, no state.
 */
#ifndef WEFT_PROCID_H
#define WEFT_PROCID_H

#include <stdint.h>

/* The start time of process pid in clock ticks since boot, 0 if it
 * cannot be read (no such process, /proc hides it, pid 0, ...). */
uint64_t weft_proc_start(uint32_t pid);

/* The calling process's start time (as weft_proc_start; /proc/self,
 * whatever the pid namespace /proc was mounted for). */
uint64_t weft_proc_self_start(void);

/* The inode of the calling process's pid namespace, 0 if unknown (no
 * /proc). */
uint64_t weft_proc_pidns(void);

#endif
