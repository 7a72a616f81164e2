/* tsc.h - the CPU's time stamp counter: whether it is invariant, whether
 * the kernel trusts it, and its frequency measured against
 * CLOCK_MONOTONIC_RAW. Shared by libweft's trace clock (timer.c) and
 * weft run, which takes the reading the processes of a tree measure the
 * frequency from (WEFT_TSC_FROM), so that none sleeps to measure it.
 */
#ifndef WEFT_TSC_H
#define WEFT_TSC_H

#include <stddef.h>
#include <stdint.h>

/* A process measures the TSC over at least this long (ns): about 1 ppm
 * here. */
#define WEFT__TSC_CALIBRATE_NS 2000000u
/* A process that weft run started measures it from weft run's start
 * (WEFT_TSC_FROM) over at least this long: weft run's start and the exec
 * make most of it. About 2 ppm here (up to 7 under load): the processes
 * of a tree mostly within 10 ppm of each other, whose ticks the archive
 * keeps (convclock.c; further apart they are scaled to ns), and each
 * corrects the rest with the ClockOffsets it measures at its start and
 * end, as it would a drift. */
#define WEFT__TSC_RUN_CALIBRATE_NS 1000000u

/* 1 if the CPU has an invariant TSC (x86-64 cpuid 0x80000007). */
int weft__tsc_invariant(void);
/* 1 if the kernel's clocksource is the TSC (then it checked that the TSC
 * is synchronized and stable, and its frequency is a whole number of
 * kHz); *name gets the clocksource ("" if it cannot be read). */
int weft__tsc_kernel_trusts(char *name, size_t len);
/* The TSC and CLOCK_MONOTONIC_RAW (ns) at one moment: the clock read
 * between two TSC reads, the tightest of a few tries. Both 0 where
 * there is no TSC. */
void weft__tsc_pair(uint64_t *tsc, uint64_t *ns);
/* The TSC's frequency (Hz) from the pair (tsc0, ns0) to now, sleeping
 * what is missing of min_ns; *span_ns gets how long it measured. 0 if
 * the clocks make no sense. */
uint64_t weft__tsc_hz_since(uint64_t tsc0, uint64_t ns0, uint64_t min_ns,
                            uint64_t *span_ns);

#endif
