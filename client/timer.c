/* timer.c - libweft's trace clock: CLOCK_MONOTONIC read through the
 * vDSO, or the invariant TSC (WEFT_CLOCK=tsc) calibrated at start.
 *
 * DESIGN
 * The record path must not call through another library's PLT, so
 * clock_gettime is resolved once, at load: the vDSO's
 * __vdso_clock_gettime (found with dlvsym on the already mapped
 * linux-vdso.so.1), else libc's clock_gettime, called through
 * weft__gettime. With WEFT_CLOCK=tsc the record path reads rdtsc inline
 * and the trace clock counts TSC ticks; its frequency, calibrated against
 * CLOCK_MONOTONIC_RAW over WEFT__TSC_CALIBRATE_NS, is the
 * timer_resolution in Hello. weftd maps every process's ticks onto one
 * clock (README, proto/clock.h).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "client_internal.h"
#include "weft_errors.h"

/* The TSC is calibrated over this long (a short sleep at weft_open). */
#define WEFT__TSC_CALIBRATE_NS 20000000u

weft__gettime_fn weft__gettime = clock_gettime;
int weft__clock_tsc;
uint64_t weft__clock_shift;

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

uint64_t weft__mono_ns(void)
{
    struct timespec ts;

    weft__gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t raw_ns(void)
{
    struct timespec ts;

    weft__gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int weft__tsc_invariant(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;

    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1;
#else
    return 0;
#endif
}

#if defined(__x86_64__)
/* The TSC and CLOCK_MONOTONIC_RAW at one moment: the clock read between
 * two TSC reads, the tightest of a few tries. */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;

    for (int i = 0; i < 5; i++) {
        uint64_t t1 = __rdtsc(), n = raw_ns(), t2 = __rdtsc();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *tsc = t1 + (t2 - t1) / 2;
            *ns = n;
        }
    }
}
#endif

/* Measures the TSC frequency (Hz) against CLOCK_MONOTONIC_RAW over
 * WEFT__TSC_CALIBRATE_NS. 0 if the clocks make no sense. */
static uint64_t tsc_calibrate(void)
{
#if defined(__x86_64__)
    struct timespec nap = { 0, WEFT__TSC_CALIBRATE_NS };
    uint64_t t0, n0, t1, n1;
    long double hz;

    tsc_pair(&t0, &n0);
    while (nanosleep(&nap, &nap) != 0)
        ;
    tsc_pair(&t1, &n1);
    if (t1 <= t0 || n1 <= n0)
        return 0;
    hz = (long double)(t1 - t0) * 1e9L / (long double)(n1 - n0);
    return (uint64_t)(hz + 0.5L);
#else
    return 0;
#endif
}

/* See client_internal.h. */
int weft__clock_setup(const char *value, int64_t shift_ns,
                      uint64_t *resolution)
{
    uint64_t hz;

    weft__clock_tsc = 0;
    *resolution = 1000000000u;
    if (!value || strcmp(value, "monotonic") == 0)
        goto out;
    if (strcmp(value, "tsc") != 0) {
        weft__warn("WEFT_CLOCK='%s' must be monotonic or tsc", value);
        return WEFT_ECONFIG;
    }
    if (!weft__tsc_invariant()) {
        weft__warn("WEFT_CLOCK=tsc: this CPU has no invariant TSC (cpuid "
                   "0x80000007 EDX bit 8, x86-64 only); using CLOCK_MONOTONIC");
        goto out;
    }
    hz = tsc_calibrate();
    if (hz < 1000000u) {
        weft__warn("WEFT_CLOCK=tsc: calibrating the TSC against "
                   "CLOCK_MONOTONIC_RAW failed; using CLOCK_MONOTONIC");
        goto out;
    }
    *resolution = hz;
    weft__clock_tsc = 1;
out:
    /* Test-only shift, in ticks of the chosen clock. */
    weft__clock_shift = (uint64_t)(int64_t)((long double)shift_ns *
                                            (long double)*resolution / 1e9L);
    return 0;
}
