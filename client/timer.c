/* timer.c - libweft's trace clock: the invariant TSC where the kernel
 * itself trusts it, else CLOCK_MONOTONIC read through the vDSO
 * (WEFT_CLOCK=auto, the default); or either one asked for.
 *
 * DESIGN
 * The record path must not call through another library's PLT, so
 * clock_gettime is resolved once, at load: the vDSO's
 * __vdso_clock_gettime (found with dlvsym on the already mapped
 * linux-vdso.so.1), else libc's clock_gettime, called through
 * weft__gettime. With the TSC the record path reads rdtsc inline and the
 * trace clock counts TSC ticks (about 20 ns cheaper per read than the
 * vDSO on a VM); its frequency is the timer_resolution in Hello, and
 * weftd maps every process's ticks onto one clock (README,
 * proto/clock.h).
 *
 * auto takes the TSC when it is invariant (cpuid 0x80000007) and the
 * kernel's current clocksource is "tsc": then the kernel has checked it
 * (synchronized across CPUs, stable) and computes CLOCK_MONOTONIC_RAW from
 * it with its own frequency, tsc_khz, a whole number of kHz. The
 * frequency measured against CLOCK_MONOTONIC_RAW is that one, within the
 * measurement's error, and is rounded to kHz. The measurement runs from
 * the moment the library is loaded (a constructor takes the first
 * reading) to weft_open, which sleeps only what is missing of
 * WEFT__TSC_CALIBRATE_NS (tsc.c): nothing for a program that opens late
 * (MPI_Init), at most 2 ms for one that opens at start. The processes of
 * a program under `weft run` measure from weft run's start instead
 * (WEFT_TSC_FROM, a reading weft run took on its host; used where the
 * kernel trusts the TSC), over at least WEFT__TSC_RUN_CALIBRATE_NS:
 * weft run's own start and the program's exec make most of it, so the
 * first sleeps little and its children, later, not at all and measure
 * over longer. WEFT_TSC_KHZ gives the frequency outright. Over 2 ms the
 * error was about 1 ppm (rms, up to 3) here, over 20 ms 0.02; processes
 * that measured long enough get the kernel's kHz exactly. weftd keeps
 * the ticks of processes within 10 ppm of each other (convclock.c), and
 * the ClockOffsets measured at open and before the Goodbye correct the
 * rest, linearly.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_config.h"
#include "client_internal.h"
#include "tsc.h"
#include "weft_errors.h"

weft__gettime_fn weft__gettime = clock_gettime;
int weft__clock_tsc;
uint64_t weft__clock_shift;

/* The first calibration reading: the TSC and CLOCK_MONOTONIC_RAW when
 * the library was loaded (0: not taken). Written before main. */
static uint64_t cal_tsc, cal_ns;

/* Resolves the vDSO's clock_gettime when the library is loaded, so the
 * first record already reads the clock without a PLT call. */
__attribute__((constructor)) static void resolve_gettime(void)
{
    void *h = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
    void *f = NULL;

    if (!h)
        return;
#if defined(__x86_64__)
    f = dlvsym(h, "__vdso_clock_gettime", "LINUX_2.6");
#elif defined(__aarch64__)
    f = dlvsym(h, "__kernel_clock_gettime", "LINUX_2.6.39");
#endif
    if (f)
        weft__gettime = (weft__gettime_fn)f;
    /* dlclose of a NOLOAD handle only drops the reference it took. */
    dlclose(h);
}

/* The first reading of the TSC's calibration (after resolve_gettime:
 * constructors of one file run in order). */
__attribute__((constructor)) static void calibration_start(void)
{
    weft__tsc_pair(&cal_tsc, &cal_ns);
}

uint64_t weft__mono_ns(void)
{
    struct timespec ts;

    weft__gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC's frequency (Hz) measured against CLOCK_MONOTONIC_RAW since
 * the library was loaded (sleeping what is missing of
 * WEFT__TSC_CALIBRATE_NS); *span_ns gets how long. 0 if the clocks make
 * no sense. */
static uint64_t tsc_calibrate(uint64_t *span_ns)
{
    if (!cal_ns)
        weft__tsc_pair(&cal_tsc, &cal_ns);
    return weft__tsc_hz_since(cal_tsc, cal_ns, WEFT__TSC_CALIBRATE_NS,
                              span_ns);
}

/* The TSC's frequency (Hz) measured from weft run's start (WEFT_TSC_FROM)
 * to now, sleeping what is missing of WEFT__TSC_RUN_CALIBRATE_NS; *span_ns
 * gets how long. 0 when it is unset, was taken on another host (a
 * launcher passed the environment on), or the clocks make no sense from
 * it: a frequency outside 100 MHz to 100 GHz, or more than 1% from what
 * this process measured since it was loaded, when that was long enough
 * to tell (the clocks ran apart since weft run's start: a suspend). */
#define WEFT__TSC_FROM_CHECK 100u           /* 1/100 */
#define WEFT__TSC_FROM_CHECK_NS 50000u
static uint64_t tsc_from_run(const weft__config *c, uint64_t *span_ns)
{
    char host[256] = "";
    uint64_t hz, here = 0, here_span = 0;

    if (!c->tsc_from_tsc)
        return 0;
    if (gethostname(host, sizeof host - 1) != 0 ||
        strcmp(host, c->tsc_from_host) != 0) {
        weft__debug("clock: WEFT_TSC_FROM is of host %s, this is %s",
                    c->tsc_from_host, host);
        return 0;
    }
    hz = weft__tsc_hz_since(c->tsc_from_tsc, c->tsc_from_ns,
                            WEFT__TSC_RUN_CALIBRATE_NS, span_ns);
    if (cal_ns)
        here = weft__tsc_hz_since(cal_tsc, cal_ns, 0, &here_span);
    if (hz < 100000000u || hz / 1000u > WEFT__MAX_TSC_KHZ ||
        (here && here_span >= WEFT__TSC_FROM_CHECK_NS &&
         (hz > here ? hz - here : here - hz) > here / WEFT__TSC_FROM_CHECK)) {
        weft__debug("clock: the TSC measured from weft run's start "
                    "(WEFT_TSC_FROM, %.1f ms ago) runs at %.6f MHz, since "
                    "this process was loaded (%.3f ms) at %.6f: not used",
                    (double)*span_ns / 1e6, (double)hz / 1e6,
                    (double)here_span / 1e6, (double)here / 1e6);
        return 0;
    }
    return hz;
}

/* See client_internal.h. */
int weft__clock_setup(weft__config *c)
{
    const char *want_name = c->clock == WEFT__CLOCK_TSC ? "tsc" : "auto";
    char source[64];
    uint64_t hz, span;
    int trusted;

    weft__clock_tsc = 0;
    c->resolution = 1000000000u;
    c->clock_name = "monotonic";
    if (c->clock == WEFT__CLOCK_MONOTONIC) {
        weft__debug("clock: CLOCK_MONOTONIC (WEFT_CLOCK=monotonic)");
        goto out;
    }
    if (!weft__tsc_invariant()) {
        if (c->clock == WEFT__CLOCK_TSC)
            weft__warn("WEFT_CLOCK=tsc: this CPU has no invariant TSC (cpuid "
                       "0x80000007 EDX bit 8, x86-64 only); using "
                       "CLOCK_MONOTONIC");
        else
            weft__debug("clock: CLOCK_MONOTONIC (no invariant TSC)");
        goto out;
    }
    trusted = weft__tsc_kernel_trusts(source, sizeof source);
    if (c->clock == WEFT__CLOCK_AUTO && !trusted) {
        weft__debug("clock: CLOCK_MONOTONIC (the kernel's clocksource is "
                    "'%s', not tsc)", source);
        goto out;
    }
    if (trusted && c->tsc_khz) {
        hz = (uint64_t)c->tsc_khz * 1000u;
        weft__debug("clock: TSC at %.6f MHz (WEFT_TSC_KHZ; WEFT_CLOCK=%s; "
                    "kernel clocksource '%s')", (double)hz / 1e6, want_name,
                    source);
        goto tsc;
    }
    /* Where the kernel trusts the TSC its frequency is a whole number of
     * kHz (tsc_khz): the measurement is rounded to it. */
    if (trusted && (hz = tsc_from_run(c, &span)) >= 1000000u) {
        hz = (hz + 500u) / 1000u * 1000u;
        weft__debug("clock: TSC at %.6f MHz, measured over %.1f ms from weft "
                    "run's start (WEFT_TSC_FROM; WEFT_CLOCK=%s; kernel "
                    "clocksource '%s')", (double)hz / 1e6, (double)span / 1e6,
                    want_name, source);
        goto tsc;
    }
    hz = tsc_calibrate(&span);
    if (trusted)
        hz = (hz + 500u) / 1000u * 1000u;
    if (hz < 1000000u) {
        weft__warn("%s: calibrating the TSC against CLOCK_MONOTONIC_RAW "
                   "failed; using CLOCK_MONOTONIC",
                   c->clock == WEFT__CLOCK_TSC ? "WEFT_CLOCK=tsc" : "clock");
        goto out;
    }
    weft__debug("clock: TSC at %.6f MHz, measured over %.1f ms (WEFT_CLOCK=%s"
                "; kernel clocksource '%s')", (double)hz / 1e6,
                (double)span / 1e6, want_name, source);
tsc:
    c->resolution = hz;
    c->clock_name = "tsc";
    weft__clock_tsc = 1;
out:
    /* Test-only shift, in ticks of the chosen clock. */
    weft__clock_shift = (uint64_t)(int64_t)((long double)c->clock_shift_ns *
                                            (long double)c->resolution /
                                            1e9L);
    return 0;
}
