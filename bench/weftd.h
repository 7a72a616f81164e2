/* bench/weftd.h - the weftd a benchmark runs against. */
#ifndef WEFT_BENCH_WEFTD_H
#define WEFT_BENCH_WEFTD_H

#include <stddef.h>
#include <sys/types.h>

/* Starts weftd (WEFT_BENCH_WEFTD, else ./weftd) on a free loopback port
 * with its spool in TMP/spool; `limits`, if not NULL, is the [limits]
 * section of a configuration file written to TMP/weftd.conf. Waits until
 * it listens and puts "HOST:PORT" into addr. Returns its pid, or -1 after
 * a message. */
pid_t bench_start_weftd(const char *tmp, const char *limits, char *addr,
                        size_t addrlen);

#endif
