/* tsc.c - the CPU's time stamp counter (see tsc.h). */
#include "tsc.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

/* Where the kernel says which clocksource it uses. */
#define WEFT__CLOCKSOURCE \
    "/sys/devices/system/clocksource/clocksource0/current_clocksource"

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

int weft__tsc_kernel_trusts(char *name, size_t len)
{
    FILE *f = fopen(WEFT__CLOCKSOURCE, "re");
    size_t n = 0;

    name[0] = 0;
    if (f) {
        if (fgets(name, (int)len, f))
            n = strcspn(name, "\n");
        fclose(f);
    }
    name[n] = 0;
    return strcmp(name, "tsc") == 0;
}

#if defined(__x86_64__)
static uint64_t raw_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

void weft__tsc_pair(uint64_t *tsc, uint64_t *ns)
{
#if defined(__x86_64__)
    uint64_t best = UINT64_MAX;

    for (int i = 0; i < 5; i++) {
        uint64_t t1 = __rdtsc(), n = raw_ns(), t2 = __rdtsc();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *tsc = t1 + (t2 - t1) / 2;
            *ns = n;
        }
    }
#else
    *tsc = *ns = 0;
#endif
}

uint64_t weft__tsc_hz_since(uint64_t tsc0, uint64_t ns0, uint64_t min_ns,
                            uint64_t *span_ns)
{
    uint64_t t1, n1;
    long double hz;

    weft__tsc_pair(&t1, &n1);
    if (n1 >= ns0 && n1 - ns0 < min_ns) {
        uint64_t left = min_ns - (n1 - ns0);
        struct timespec nap = { 0, (long)left };
        while (nanosleep(&nap, &nap) != 0)
            ;
        weft__tsc_pair(&t1, &n1);
    }
    *span_ns = n1 - ns0;
    if (t1 <= tsc0 || n1 <= ns0)
        return 0;
    hz = (long double)(t1 - tsc0) * 1e9L / (long double)(n1 - ns0) + 0.5L;
    return hz < 1e18L ? (uint64_t)hz : 0; /* 1 EHz: the clocks make no sense */
}
