/* procwatch.h - is a member's process still there? A process that ends
 * without Goodbye (SIGKILL, the exit_group system call, a launcher's
 * kill) cannot say so; weftd knows it is gone when its connection told
 * who it is: the Unix socket's peer (SO_PEERCRED), or a loopback TCP
 * peer whose Hello names a process of the connection's user on this
 * host. Then its trace need not wait the grace period for it (trace.c).
 *
 * A process is known by its pid and its start time (/proc/PID/stat,
 * clock ticks since boot), so that a pid used again by a new process is
 * not taken for the old one. Plain system calls: no loop, no state.
 */
#ifndef WEFT_PROCWATCH_H
#define WEFT_PROCWATCH_H

#include <stdint.h>

#include "procid.h"
#include "server.h"
#include "weft.pb-c.h"

/* 1 when the process pid that started at `start` (0: not known) has
 * ended: there is no such process, it is a zombie, or the pid is another
 * process's now. 0 while it runs, or when that cannot be told. */
int weft_proc_gone(uint32_t pid, uint64_t start);

/* 1 when the process Hello h of uid names is the process at the other
 * end of c on this host: c is on the Unix socket and SO_PEERCRED gave
 * that pid; or c comes from a loopback address and the process, alive,
 * belongs to uid (its /proc entry's owner) and started when the Hello
 * says, or it has ended already (no such pid, or another process's now)
 * in weftd's pid namespace (Hello.pid_ns). Then *start is its start time
 * (0 if unknown), for weft_proc_gone. 0 otherwise: weftd cannot watch it.
 * A Hello that lies can only make its own trace partial sooner. */
int weft_proc_watchable(const weft_conn *c, const Weft__Hello *h,
                        uint32_t uid, uint64_t *start);

#endif
