/* fuzz_records.c - libFuzzer target for the record stream decoder
 * (proto/codec.c) and the record printer (proto/record.c).
 *
 * Input: one mode byte, for event streams 8 bytes of base time (little
 * endian), then the record stream. Mode bit 0 selects an event stream,
 * bits 1-2 the decoder's max_string.
 *
 * Besides "no crash, no leak, no undefined behaviour" it checks the round
 * trip: every record that decodes is re-encoded with weft_encode, must fit
 * weft_encode_bound, and must decode again to the same record (field by
 * field and as printed). The re-encoded stream is canonical: decoding and
 * encoding it once more yields the same bytes. A failure must be one of
 * the decoder's documented codes, with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec.h"
#include "record.h"
#include "weft_errors.h"

static const size_t max_strings[4] = { 1u << 20, 0, 16, 255 };

typedef struct stream {
    uint8_t *buf;
    size_t len, cap;
} stream;

static uint8_t *stream_reserve(stream *s, size_t n)
{
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->len + n)
            cap *= 2;
        s->buf = realloc(s->buf, cap);
        CHECK(s->buf);
        s->cap = cap;
    }
    return s->buf + s->len;
}

/* The record printed into a malloc'd string (the caller frees). */
static char *print_record(const weft_record *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    CHECK(f);
    weft_record_print(f, r);
    CHECK(fclose(f) == 0);
    return text;
}

static void check_equal(const weft_record *a, const weft_record *b)
{
    const weft_rec_desc *rd = weft_rec_desc_of(a->type);
    char *ta, *tb;

    CHECK(a->type == b->type);
    CHECK(rd);
    if (rd->is_event)
        CHECK(a->time == b->time);
    for (unsigned i = 0; i < rd->nfields; i++) {
        const weft_field_desc *f = &rd->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *sa, *sb;
            memcpy(&sa, weft_field_cptr(a, f), sizeof sa);
            memcpy(&sb, weft_field_cptr(b, f), sizeof sb);
            CHECK(sa && sb && strcmp(sa, sb) == 0);
        } else if (f->is_array) {
            size_t n = weft_field_count(a, f);
            CHECK(n == weft_field_count(b, f));
            for (size_t k = 0; k < n; k++)
                CHECK(weft_field_get_elem(a, f, k) ==
                      weft_field_get_elem(b, f, k));
        } else {
            CHECK(weft_field_get(a, f) == weft_field_get(b, f));
        }
    }
    ta = print_record(a);
    tb = print_record(b);
    CHECK(strcmp(ta, tb) == 0);
    free(ta);
    free(tb);
}

static int is_decoder_error(int rc)
{
    return rc == WEFT_ETRUNC || rc == WEFT_ETYPE || rc == WEFT_EPROTO ||
           rc == WEFT_ETOOBIG || rc == WEFT_ETIME;
}

/* Encodes r at the end of s; returns the encoded length. */
static size_t encode_into(stream *s, const weft_record *r, uint64_t *prev)
{
    size_t bound = weft_encode_bound(r);
    uint8_t *p = stream_reserve(s, bound);
    ssize_t n = weft_encode(r, prev, p, bound);

    CHECK(n > 0 && (size_t)n <= bound);
    /* The bound is exact about its own minimum: one byte less is refused. */
    if (bound > 0) {
        uint64_t prev2 = *prev;
        CHECK(weft_encode(r, &prev2, p, bound - 1) == WEFT_ETOOBIG);
    }
    s->len += (size_t)n;
    return (size_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stream enc = { 0 }, again = { 0 };
    weft_decoder d, one, d2;
    weft_record r, r2;
    uint64_t base = 0, prev, prev2;
    size_t max_string, count = 0, count2 = 0;
    int events, rc;

    if (size < 1)
        return 0;
    events = data[0] & 1;
    max_string = max_strings[(data[0] >> 1) & 3];
    data++;
    size--;
    if (events) {
        if (size < 8)
            return 0;
        for (int i = 0; i < 8; i++)
            base |= (uint64_t)data[i] << (8 * i);
        data += 8;
        size -= 8;
    }

    weft_decoder_init(&d, data, size, events, base);
    d.max_string = max_string;
    prev = base;
    for (;;) {
        const uint8_t *before = d.p;
        uint64_t time_before = prev;
        size_t at = enc.len, n;
        rc = weft_decoder_next(&d, &r);
        if (rc != 1)
            break;
        CHECK(d.p > before && d.p <= data + size);
        CHECK(weft_rec_desc_of(r.type) &&
              weft_rec_desc_of(r.type)->is_event == events);
        if (events)
            CHECK(r.time >= time_before);
        n = encode_into(&enc, &r, &prev);
        CHECK(!events || prev == r.time);
        /* The record alone decodes back to itself. */
        weft_decoder_init(&one, enc.buf + at, n, events, time_before);
        one.max_string = max_string;
        CHECK(weft_decoder_next(&one, &r2) == 1);
        check_equal(&r, &r2);
        CHECK(weft_decoder_next(&one, &r2) == 0);
        weft_decoder_free(&one);
        count++;
    }
    if (rc < 0) {
        CHECK(is_decoder_error(rc));
        CHECK(d.error[0] != '\0');
    } else {
        CHECK(rc == 0 && d.p == data + size);
    }
    weft_decoder_free(&d);

    /* The re-encoded stream is canonical: a fixpoint of decode + encode. */
    weft_decoder_init(&d2, enc.buf, enc.len, events, base);
    d2.max_string = max_string;
    prev2 = base;
    while ((rc = weft_decoder_next(&d2, &r)) == 1) {
        encode_into(&again, &r, &prev2);
        count2++;
    }
    CHECK(rc == 0);
    CHECK(count2 == count);
    CHECK(again.len == enc.len);
    CHECK(enc.len == 0 || memcmp(again.buf, enc.buf, enc.len) == 0);
    weft_decoder_free(&d2);
    free(enc.buf);
    free(again.buf);
    return 0;
}
