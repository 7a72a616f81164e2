/* clock.h - clock arithmetic shared by libweft and weftd: the offset of a
 * client's trace clock to weftd's clock from round-trip samples (NTP
 * style), tick to nanosecond conversion, and applying ClockOffset records
 * the way OTF2 readers do.
 *
 * Units: a member's trace clock counts ticks at `res` per second (Hello
 * timer_resolution: 1e9 for CLOCK_MONOTONIC, the calibrated frequency for
 * the TSC). weftd's clock is its CLOCK_MONOTONIC in ns. A ClockOffset
 * record of a member says: at member time `time` (ticks), weftd's clock
 * read ticks_to_ns(time) + offset ns; with res = 1e9 that is exactly
 * OTF2's meaning (global time = local time + offset).
 */
#ifndef WEFT_CLOCK_H
#define WEFT_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* The trace clocks a client may name in Hello.clock (client/timer.c),
 * NULL-terminated, in the order weft lists them. */
extern const char *const weft_clock_names[];

/* Hello.clock as one of weft_clock_names: itself if it is one; "" (a
 * client older than the field) "monotonic" for a resolution of 1e9 ns,
 * else "tsc" (the only clocks such clients had); NULL for another name. */
const char *weft_clock_name(const char *clock, uint64_t res);

/* One ClockSync round trip: the client's clock when it sent the request
 * and when it read the answer (ticks), and weftd's clock in between. */
typedef struct weft_clock_sample {
    uint64_t t_send, t_recv;
    uint64_t server_ns;
} weft_clock_sample;

/* The estimate from the best sample. */
typedef struct weft_clock_estimate {
    uint64_t time;      /* client ticks: the middle of the round trip */
    int64_t offset;     /* weftd ns - ticks_to_ns(time) */
    uint64_t error_ns;  /* half the round trip: |true offset - offset| */
} weft_clock_estimate;

/* A (time, offset) point of a member, as in its ClockOffset records. */
typedef struct weft_clock_point {
    uint64_t time;
    int64_t offset;
} weft_clock_point;

/* t ticks at res per second in ns, rounded to nearest; saturates at
 * UINT64_MAX. res 0 or 1e9 returns t unchanged. */
uint64_t weft_clock_ticks_to_ns(uint64_t t, uint64_t res);

/* The estimate from the sample with the smallest round trip among n.
 * Samples whose t_recv is before t_send are skipped. Returns 0, or
 * WEFT_ENOTFOUND when no sample is usable. */
int weft_clock_best(const weft_clock_sample *s, size_t n, uint64_t res,
                    weft_clock_estimate *out);

/* 1 when the estimate cannot be told from a zero offset: |offset| is
 * within its error bound. */
int weft_clock_is_zero(const weft_clock_estimate *e);

/* The offset at time t from points sorted by time, as libotf2's readers
 * apply ClockOffset records: linear between neighbours (slope in double,
 * rounded with rint), the first interval extended before the first point
 * and the last one after the last; one point is a constant offset (the
 * readers apply none from a single record: weftd writes a second one,
 * daemon/convert/convert.c); 0 without points. */
int64_t weft_clock_offset_at(const weft_clock_point *p, size_t n,
                             uint64_t t);

#endif
