/* test_codec_el.c - runs of Enters and Leaves read in place
 * (proto/codec.h's weft_el_next, the decoder's fast path) give what the
 * record decoder gives: every encoding of their time deltas and
 * regions, other records between them, every truncation, and the time
 * overflow at 2^64 - 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "record.h"
#include "varint.h"
#include "weft_errors.h"

typedef struct el_event {
    uint32_t type;
    uint32_t region;     /* UINT32_MAX - 1 for other records */
    uint64_t time;
} el_event;

/* Decodes buf[0..len) from base into ev (at most cap): with weft_el_next
 * where it takes the event (run 1) or with weft_decoder_next alone (run
 * 0; it takes what it can with weft_el_next too). Returns the number of
 * events; *rc is the decoder's last result. */
static size_t el_decode(const uint8_t *buf, size_t len, uint64_t base,
                        int run, el_event *ev, size_t cap, int *rc)
{
    weft_decoder d;
    weft_record r;
    size_t n = 0;

    weft_decoder_init(&d, buf, len, 1, base);
    for (;;) {
        if (run) {
            weft_el_run x = weft_el_begin(&d);
            uint32_t type, region;
            while (n < cap && weft_el_next(&x, &type, &region))
                ev[n++] = (el_event){ type, region, x.time };
            weft_el_end(&x, &d);
        }
        if ((*rc = weft_decoder_next(&d, &r)) != 1 || n == cap)
            break;
        ev[n].type = r.type;
        ev[n].time = r.time;
        ev[n].region = r.type == WEFT_REC_Enter   ? r.u.Enter.region
                       : r.type == WEFT_REC_Leave ? r.u.Leave.region
                                                  : UINT32_MAX - 1;
        n++;
    }
    weft_decoder_free(&d);
    return n;
}

#define EL_EVENTS 3000

static uint32_t el_rand(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 16;
}

/* weft_el_next takes Enters and Leaves as they were written, and leaves
 * the rest to the decoder: deltas of 1, 2 and more bytes (and an overlong
 * one), regions of 1 and more bytes and the undefined one, other records
 * between them, time reaching 2^64 - 1 and going beyond it, every
 * truncation of a stream. */
/* A run of EL_EVENTS events, Enter and Leave in every encoding the
 * decoders take (time deltas of 1 to 3 bytes, an overlong 0, undefined
 * and large regions) with a MeasurementOnOff now and then, into buf;
 * what they decode to into want. Returns the run's length. */
static size_t el_make_run(uint8_t *buf, el_event *want)
{
    uint32_t seed = 1;
    uint64_t t = 10;
    size_t len = 0;

    for (size_t i = 0; i < EL_EVENTS; i++) {
        uint32_t x = el_rand(&seed), y = el_rand(&seed), region;
        uint64_t dt;
        if (x % 29 == 0) {
            weft_record r;
            uint64_t prev = 0;
            ssize_t k;
            memset(&r, 0, sizeof r);
            r.type = WEFT_REC_MeasurementOnOff;
            r.time = y % 300;
            r.u.MeasurementOnOff.measurementMode = OTF2_MEASUREMENT_ON;
            k = weft_encode(&r, &prev, buf + len, 64);
            assert_true(k > 0);
            len += (size_t)k;
            t += r.time;
            want[i] = (el_event){ r.type, UINT32_MAX - 1, t };
            continue;
        }
        buf[len++] = x % 2 ? WEFT_REC_Enter : WEFT_REC_Leave;
        switch (x % 7) {
        case 0:
            dt = y * 977u;
            len = (size_t)(weft__put_uvarint(buf + len, dt) - buf);
            break;
        case 1:
            dt = 0;
            buf[len++] = 0x80;  /* an overlong 0 */
            buf[len++] = 0;
            break;
        case 2:
        case 3:
            dt = y % 16384;
            len = (size_t)(weft__put_uvarint(buf + len, dt) - buf);
            break;
        default:
            dt = y % 128;
            buf[len++] = (uint8_t)dt;
        }
        region = x % 11 == 0  ? OTF2_UNDEFINED_REGION
                 : x % 5 == 0 ? y % 300
                              : y % 128;
        len = (size_t)(weft__put_uvarint(buf + len, region) - buf);
        t += dt;
        want[i] = (el_event){ x % 2 ? WEFT_REC_Enter : WEFT_REC_Leave,
                              region, t };
    }
    return len;
}

/* Time: deltas of 1 and 2 bytes to 2^64 - 1 are taken, beyond it
 * the decoder reports the overflow. */
static void el_check_time_overflow(el_event *a, el_event *b)
{
    size_t na, nb;
    int rca, rcb;

    static const uint8_t s[] = { WEFT_REC_Enter, 5, 0,
                                 WEFT_REC_Leave, 0x80, 1, 0,
                                 WEFT_REC_Enter, 1, 0 };
    for (uint64_t back = 0; back < 140; back++) {
        na = el_decode(s, sizeof s, UINT64_MAX - back, 0, a, 4, &rca);
        nb = el_decode(s, sizeof s, UINT64_MAX - back, 1, b, 4, &rcb);
        assert_int_equal(rca, back >= 134 ? 0 : WEFT_ETIME);
        assert_int_equal(rcb, rca);
        assert_int_equal(na, back >= 134 ? 3 : back >= 133 ? 2
                             : back >= 5 ? 1 : 0);
        assert_int_equal(nb, na);
        if (na)
            assert_true(a[na - 1].time ==
                        UINT64_MAX - back + (na == 1 ? 5 : na == 2
                                             ? 133 : 134));
        assert_memory_equal(a, b, na * sizeof *a);
    }
}

static void test_el_run_agrees(void **state)
{
    uint8_t *buf = malloc(EL_EVENTS * 32);
    el_event *want = malloc(EL_EVENTS * sizeof *want);
    el_event *a = malloc(EL_EVENTS * sizeof *a);
    el_event *b = malloc(EL_EVENTS * sizeof *b);
    size_t len, na, nb;
    int rca, rcb;

    (void)state;
    assert_non_null(buf);
    assert_non_null(want);
    assert_non_null(a);
    assert_non_null(b);
    memset(want, 0, EL_EVENTS * sizeof *want);
    memset(a, 0, EL_EVENTS * sizeof *a);
    memset(b, 0, EL_EVENTS * sizeof *b);
    len = el_make_run(buf, want);
    na = el_decode(buf, len, 10, 0, a, EL_EVENTS, &rca);
    nb = el_decode(buf, len, 10, 1, b, EL_EVENTS, &rcb);
    assert_int_equal(rca, 0);
    assert_int_equal(rcb, 0);
    assert_int_equal(na, EL_EVENTS);
    assert_int_equal(nb, EL_EVENTS);
    assert_memory_equal(a, want, EL_EVENTS * sizeof *a);
    assert_memory_equal(b, want, EL_EVENTS * sizeof *b);
    /* Every truncation of its first 200 bytes: the events before the
     * cut, then the decoder's error. */
    for (size_t cut = 0; cut < 200; cut++) {
        na = el_decode(buf, cut, 10, 0, a, EL_EVENTS, &rca);
        nb = el_decode(buf, cut, 10, 1, b, EL_EVENTS, &rcb);
        assert_int_equal(rca, rcb);
        assert_int_equal(nb, na);
        assert_memory_equal(a, want, na * sizeof *a);
        assert_memory_equal(b, want, nb * sizeof *b);
    }
    el_check_time_overflow(a, b);
    free(buf);
    free(want);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_el_run_agrees),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
