/* test_codec.c - the record stream codec (proto/codec.c) and the record
 * descriptors it walks (proto/record.c).
 *
 * The round trip is generic: for every entry of the record table it builds
 * records from the descriptors alone, with boundary values per field (0,
 * the largest value of the field's size, OTF2 "undefined" references,
 * extreme signed values, NaN/infinity/negative raw bits, empty and long
 * strings, arrays of 0, 1, several and the most elements the count field
 * allows, typed values of every OTF2_Type in canonical form), so a new
 * table entry is covered without touching this file. Events also travel
 * with attribute lists built the same way from the AttributeList entry.
 * Malformed input: every truncation of every valid stream, unknown and
 * misplaced types, each narrow field one past its range, NUL in strings,
 * strings above max_string, array counts beyond the input, timestamp
 * overflow, overlong varints; and the encoder's own checks. Runs of
 * Enters and Leaves read in place: test_codec_el.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "record.h"
#include "varint.h"
#include "weft_errors.h"

#define NVARIANTS 8
#define LONG_STRING 5000
#define MAX_ARRAY 300   /* cap for counts of wide count fields */
#define MAX_OWNED 16

/* ---- boundary values ------------------------------------------------------ */

static uint64_t umax(unsigned size)
{
    return size >= 8 ? UINT64_MAX : ((uint64_t)1 << (size * 8)) - 1;
}

static int64_t smax(unsigned size)
{
    return size >= 8 ? INT64_MAX : ((int64_t)1 << (size * 8 - 1)) - 1;
}

static uint64_t dbits(double d)
{
    uint64_t v;

    memcpy(&v, &d, sizeof v);
    return v;
}

/* Candidate value k (any k, wraps) of a scalar or element of field f. */
static uint64_t boundary(const weft_field_desc *f, size_t k)
{
    uint64_t c[8];
    size_t n = 0;
    unsigned sz = f->size;

    if (f->ref != WEFT_REF_NONE) {
        c[n++] = 0;
        c[n++] = weft_ref_kind_undefined(f->ref);
        c[n++] = 1;
        c[n++] = umax(sz) - 1;
        c[n++] = 127;
        c[n++] = 128;
    } else {
        switch (f->wire) {
        case WEFT_WIRE_I:
            c[n++] = 0;
            c[n++] = (uint64_t)(-smax(sz) - 1);
            c[n++] = (uint64_t)smax(sz);
            c[n++] = (uint64_t)-1;
            c[n++] = 1;
            c[n++] = (uint64_t)-64;
            c[n++] = 63;
            break;
        case WEFT_WIRE_D:
            c[n++] = dbits(0.0);
            c[n++] = dbits(-0.0);
            c[n++] = dbits(NAN);
            c[n++] = dbits(-1.5);
            c[n++] = dbits(INFINITY);
            c[n++] = dbits(-INFINITY);
            c[n++] = dbits(DBL_MAX);
            c[n++] = dbits(DBL_MIN / 4); /* subnormal */
            break;
        case WEFT_WIRE_X:
        case WEFT_WIRE_T:
            c[n++] = 0;
            c[n++] = UINT64_MAX;
            c[n++] = 0x7ff8000000000001ull; /* NaN with payload */
            c[n++] = dbits(-2.5);
            c[n++] = 0x8000000000000000ull;
            c[n++] = dbits(-INFINITY);
            c[n++] = 1;
            break;
        default:
            c[n++] = 0;
            c[n++] = umax(sz);
            c[n++] = 1;
            c[n++] = 127;
            c[n++] = 128;
            c[n++] = umax(sz) - 1;
            break;
        }
    }
    return c[k % n];
}

static size_t max_count(const weft_field_desc *arr)
{
    uint64_t m = umax(arr->count_size);

    return m > MAX_ARRAY ? MAX_ARRAY : (size_t)m;
}

/* Element count of the arrays of variant v. */
static size_t array_len(const weft_field_desc *arr, unsigned v)
{
    static const size_t lens[] = { 0, 1, 5, SIZE_MAX, 2, 0, 17, 3 };
    size_t n = lens[v % (sizeof lens / sizeof lens[0])];

    return n > max_count(arr) ? max_count(arr) : n;
}

static const char *string_for(unsigned v, const char *longstr)
{
    static const char *const s[] = {
        "", NULL, "a", "quote\" 'q' \n\t\xc3\xa9\xe2\x9c\x93", "x y z",
    };
    const char *r = s[v % (sizeof s / sizeof s[0])];

    return r ? r : longstr;
}

/* Event times of the variants: non-decreasing, reaching UINT64_MAX. */
static const uint64_t times[NVARIANTS] = {
    0, 0, 1, 1000, (uint64_t)1 << 40, UINT64_MAX - 1, UINT64_MAX, UINT64_MAX,
};

/* ---- building records from descriptors ------------------------------------ */

typedef struct built {
    weft_record r;
    void *owned[MAX_OWNED]; /* array storage */
    size_t nowned;
} built;

static const weft_field_desc *count_field_of(const weft_rec_desc *d,
                                             const weft_field_desc *arr)
{
    for (unsigned i = 0; i < d->nfields; i++)
        if (!d->fields[i].is_array && d->fields[i].wire != WEFT_WIRE_Z &&
            d->fields[i].offset == arr->count_offset)
            return &d->fields[i];
    fail_msg("array field without a count field");
    return NULL;
}

static int is_count_field(const weft_rec_desc *d, const weft_field_desc *f)
{
    for (unsigned i = 0; i < d->nfields; i++)
        if (d->fields[i].is_array && d->fields[i].count_offset == f->offset)
            return 1;
    return 0;
}

/* Variant v of record d; field i takes candidate v + i, so neighbouring
 * fields differ and every candidate appears over the variants. */
static void build(built *b, const weft_rec_desc *d, unsigned v,
                  const char *longstr)
{
    memset(b, 0, sizeof *b);
    b->r.type = d->type;
    if (d->is_event)
        b->r.time = times[v % NVARIANTS];
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *s = string_for(v + i, longstr);
            memcpy(weft_field_ptr(&b->r, f), &s, sizeof s);
        } else if (f->is_array) {
            size_t n = array_len(f, v);
            uint8_t *elems = calloc(n ? n : 1, f->size);
            assert_non_null(elems);
            assert_true(b->nowned < MAX_OWNED);
            b->owned[b->nowned++] = elems;
            weft_field_set(&b->r, count_field_of(d, f), n);
            memcpy(weft_field_ptr(&b->r, f), &elems, sizeof elems);
            for (size_t k = 0; k < n; k++) {
                uint64_t x = boundary(f, v + i + k);
                if (f->wire == WEFT_WIRE_T)
                    x = weft_typed_canon(weft_field_selector(&b->r, d, f, k),
                                         x);
                memcpy(elems + k * f->size, &x, f->size); /* little endian */
            }
        } else if (f->wire == WEFT_WIRE_T) {
            weft_field_set(&b->r, f,
                           weft_typed_canon(weft_field_selector(&b->r, d, f, 0),
                                            boundary(f, v + i)));
        } else if (!is_count_field(d, f)) {
            weft_field_set(&b->r, f, boundary(f, v + i));
        }
    }
}

static void built_free(built *b)
{
    for (size_t i = 0; i < b->nowned; i++)
        free(b->owned[i]);
    b->nowned = 0;
}

/* The attribute list descriptor (the table's one pseudo-record). */
static const weft_rec_desc *attr_desc(void)
{
    const weft_rec_desc *d = weft_rec_desc_of(WEFT_REC_AttributeList);

    assert_non_null(d);
    assert_true(d->is_pseudo);
    return d;
}

static void assert_same(const weft_record *want, const weft_record *got)
{
    const weft_rec_desc *d = weft_rec_desc_of(want->type);

    assert_non_null(d);
    assert_int_equal(got->type, want->type);
    if (d->is_event)
        assert_true(got->time == want->time);
    if (want->attributes) {
        assert_non_null(got->attributes);
        assert_same(want->attributes, got->attributes);
    } else {
        assert_null(got->attributes);
    }
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *a, *b;
            memcpy(&a, weft_field_cptr(want, f), sizeof a);
            memcpy(&b, weft_field_cptr(got, f), sizeof b);
            assert_non_null(b);
            assert_string_equal(b, a ? a : "");
        } else if (f->is_array) {
            size_t n = weft_field_count(want, f);
            assert_int_equal(weft_field_count(got, f), n);
            for (size_t k = 0; k < n; k++)
                if (weft_field_get_elem(got, f, k) !=
                    weft_field_get_elem(want, f, k))
                    fail_msg("%s.%s[%zu]: got %#" PRIx64 ", want %#" PRIx64,
                             d->name, f->name, k,
                             weft_field_get_elem(got, f, k),
                             weft_field_get_elem(want, f, k));
        } else if (weft_field_get(got, f) != weft_field_get(want, f)) {
            fail_msg("%s.%s: got %#" PRIx64 ", want %#" PRIx64, d->name,
                     f->name, weft_field_get(got, f), weft_field_get(want, f));
        }
    }
}

/* A stream of all variants of one record, with the record boundaries. */
typedef struct stream {
    built recs[NVARIANTS];
    built attrs[NVARIANTS]; /* events: attribute lists of odd variants */
    uint8_t *buf;
    size_t len;
    size_t ends[NVARIANTS]; /* offset after record i */
} stream;

static void stream_build(stream *s, const weft_rec_desc *d,
                         const char *longstr)
{
    uint64_t prev = 0;
    size_t cap = 0;

    memset(s, 0, sizeof *s);
    for (unsigned v = 0; v < NVARIANTS; v++) {
        build(&s->recs[v], d, v, longstr);
        if (d->is_event && (v & 1)) {
            build(&s->attrs[v], attr_desc(), v / 2, longstr);
            s->recs[v].r.attributes = &s->attrs[v].r;
        }
        cap += weft_encode_bound(&s->recs[v].r);
    }
    s->buf = malloc(cap);
    assert_non_null(s->buf);
    for (unsigned v = 0; v < NVARIANTS; v++) {
        ssize_t n = weft_encode(&s->recs[v].r, &prev, s->buf + s->len,
                                cap - s->len);
        if (n <= 0)
            fail_msg("%s variant %u: encode gives %zd (%s)", d->name, v, n,
                     weft_strerror((int)n));
        s->len += (size_t)n;
        s->ends[v] = s->len;
    }
}

static void stream_free(stream *s)
{
    for (unsigned v = 0; v < NVARIANTS; v++) {
        built_free(&s->recs[v]);
        built_free(&s->attrs[v]);
    }
    free(s->buf);
}

static const char *make_long_string(void)
{
    char *s = malloc(LONG_STRING + 1);

    assert_non_null(s);
    for (size_t i = 0; i < LONG_STRING; i++)
        s[i] = (char)('a' + i % 26);
    s[LONG_STRING] = 0;
    return s;
}

/* ---- round trip -------------------------------------------------------------- */

static void test_table_sane(void **state)
{
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    (void)state;
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        const weft_rec_desc *d = all[i];
        assert_ptr_equal(weft_rec_desc_of(d->type), d);
        for (unsigned k = 0; k < d->nfields; k++) {
            const weft_field_desc *f = &d->fields[k];
            if (f->is_array) /* its count comes first */
                assert_true(count_field_of(d, f) < f);
        }
        if (d->self_field >= 0)
            assert_true(d->fields[d->self_field].is_self);
    }
}

static void test_round_trip_every_record(void **state)
{
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char *longstr = (char *)make_long_string();

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const weft_rec_desc *d = all[i];
        weft_decoder dec;
        weft_record got;
        stream s;
        unsigned v;
        int rc;

        if (d->is_pseudo)
            continue; /* travels with events */
        stream_build(&s, d, longstr);
        weft_decoder_init(&dec, s.buf, s.len, d->is_event, 0);
        for (v = 0; (rc = weft_decoder_next(&dec, &got)) == 1; v++) {
            assert_true(v < NVARIANTS);
            assert_same(&s.recs[v].r, &got);
        }
        if (rc != 0)
            fail_msg("%s: decode: %s", d->name, dec.error);
        assert_int_equal(v, NVARIANTS);
        assert_int_equal(weft_decoder_next(&dec, &got), 0); /* stays at end */
        weft_decoder_free(&dec);
        stream_free(&s);
    }
    free(longstr);
}

/* Each variant alone, encoded as the first record of a batch whose base
 * time is the record's own time (delta 0) and a stream of mixed records. */
static void test_round_trip_mixed_stream(void **state)
{
    size_t n, len = 0, cap = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char *longstr = (char *)make_long_string();
    built *recs = calloc(n, sizeof *recs);
    uint8_t *buf;
    weft_decoder dec;
    weft_record got;
    size_t nrec = 0;

    (void)state;
    assert_non_null(recs);
    for (int events = 0; events <= 1; events++) {
        uint64_t prev = 0;
        len = cap = nrec = 0;
        for (size_t i = 0; i < n; i++) {
            if (all[i]->is_event != events || all[i]->is_pseudo)
                continue;
            build(&recs[nrec], all[i], (unsigned)i, longstr);
            if (events)
                recs[nrec].r.time = 5 + i; /* increasing */
            cap += weft_encode_bound(&recs[nrec].r);
            nrec++;
        }
        buf = malloc(cap ? cap : 1);
        assert_non_null(buf);
        for (size_t i = 0; i < nrec; i++) {
            ssize_t k = weft_encode(&recs[i].r, &prev, buf + len, cap - len);
            assert_true(k > 0);
            len += (size_t)k;
        }
        weft_decoder_init(&dec, buf, len, events, 0);
        for (size_t i = 0; i < nrec; i++) {
            assert_int_equal(weft_decoder_next(&dec, &got), 1);
            assert_same(&recs[i].r, &got);
        }
        assert_int_equal(weft_decoder_next(&dec, &got), 0);
        weft_decoder_free(&dec);
        for (size_t i = 0; i < nrec; i++)
            built_free(&recs[i]);
        free(buf);
    }
    free(recs);
    free(longstr);
}

/* ---- truncation ---------------------------------------------------------------- */

static void test_truncated_everywhere(void **state)
{
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    char *longstr = (char *)make_long_string();

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const weft_rec_desc *d = all[i];
        stream s;

        if (d->is_pseudo)
            continue;
        stream_build(&s, d, longstr);
        for (size_t cut = 0; cut < s.len; cut++) {
            /* An exact-size copy, so reading past the cut is an ASan error. */
            uint8_t *p = malloc(cut ? cut : 1);
            weft_decoder dec;
            weft_record got;
            unsigned whole = 0, v;
            int rc;

            assert_non_null(p);
            memcpy(p, s.buf, cut);
            while (whole < NVARIANTS && s.ends[whole] <= cut)
                whole++;
            weft_decoder_init(&dec, p, cut, d->is_event, 0);
            for (v = 0; (rc = weft_decoder_next(&dec, &got)) == 1; v++) {
                assert_true(v < whole);
                assert_same(&s.recs[v].r, &got);
            }
            assert_int_equal(v, whole);
            if (cut == 0 || (whole > 0 && s.ends[whole - 1] == cut)) {
                assert_int_equal(rc, 0); /* cut between records */
            } else {
                if (rc != WEFT_ETRUNC)
                    fail_msg("%s cut at %zu/%zu: rc %d (%s)", d->name, cut,
                             s.len, rc, dec.error);
                assert_true(dec.error[0] != '\0');
            }
            weft_decoder_free(&dec);
            free(p);
        }
        stream_free(&s);
    }
    free(longstr);
}

/* ---- hand-made records -------------------------------------------------------------- */

/* How to encode a record by hand: every field 0 / "" / no elements,
 * except as set here. */
typedef struct craft_opts {
    int target;          /* field whose varint is `raw` (a Z field: its
                          * length), -1 for none */
    uint64_t raw;        /* already zigzagged for I fields */
    const char *str;     /* bytes of Z fields, str_len of them */
    size_t str_len;
    size_t short_by;     /* arrays counted by target get raw - short_by */
    int stop;            /* write fields up to this index only, -1 all */
    uint64_t delta;      /* events: the time delta */
} craft_opts;

#define CRAFT_DEFAULTS .target = -1, .stop = -1

/* A zero in the wire encoding of field f: typed values are encoded by
 * their type, which is the target's raw value if the target is their type
 * field, else 0 (OTF2_TYPE_NONE: 8 raw bytes). */
static uint8_t *put_zero(uint8_t *p, const weft_field_desc *f,
                         const craft_opts *o)
{
    unsigned wire = f->wire;

    if (wire == WEFT_WIRE_T)
        wire = weft_typed_wire(o->target >= 0 && o->target == f->sel
                               ? o->raw : 0);
    switch (wire) {
    case WEFT_WIRE_D:
    case WEFT_WIRE_X: return weft__put_u64le(p, 0);
    case WEFT_TYPED_F4: return weft__put_u32le(p, 0);
    default: return weft__put_uvarint(p, 0);
    }
}

/* Encodes record d by hand per o into buf; returns the length. */
static size_t craft(const weft_rec_desc *d, const craft_opts *o,
                    uint8_t *buf)
{
    uint8_t *p = buf;

    p = weft__put_uvarint(p, d->type);
    if (d->is_event)
        p = weft__put_uvarint(p, o->delta);
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        int is_target = (int)i == o->target;
        if (o->stop >= 0 && (int)i > o->stop)
            break;
        if (f->wire == WEFT_WIRE_Z) {
            p = weft__put_uvarint(p, is_target ? o->raw : o->str_len);
            if (o->str_len)
                memcpy(p, o->str, o->str_len);
            p += o->str_len;
        } else if (f->is_array) {
            size_t cnt = 0;
            if (o->target >= 0 &&
                d->fields[o->target].offset == f->count_offset)
                cnt = (size_t)o->raw - o->short_by;
            for (size_t k = 0; k < cnt; k++)
                p = put_zero(p, f, o);
        } else if (is_target) {
            p = weft__put_uvarint(p, o->raw);
        } else {
            p = put_zero(p, f, o);
        }
    }
    return (size_t)(p - buf);
}

/* Decodes exactly one record from buf; 1, or the error (d.error in err). */
static int decode_one(const uint8_t *buf, size_t len, int events,
                      uint64_t base, weft_record *out, char *err,
                      size_t errlen)
{
    weft_decoder dec;
    uint8_t *copy = malloc(len ? len : 1); /* exact size, for ASan */
    int rc;

    assert_non_null(copy);
    memcpy(copy, buf, len);
    weft_decoder_init(&dec, copy, len, events, base);
    rc = weft_decoder_next(&dec, out);
    if (rc == 1 && dec.p != dec.end)
        fail_msg("decoded a record but left %zu bytes",
                 (size_t)(dec.end - dec.p));
    snprintf(err, errlen, "%s", dec.error);
    weft_decoder_free(&dec); /* out's strings/arrays are not used after */
    free(copy);
    return rc;
}

/* Every varint field narrower than 64 bits: its extreme value decodes,
 * one beyond is refused with EPROTO naming the field. */
static void test_value_out_of_range(void **state)
{
    size_t n, tested = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    uint8_t *buf = malloc(1 << 16);
    char err[WEFT_DECODER_ERROR_MAX];
    weft_record got;

    (void)state;
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        const weft_rec_desc *d = all[i];
        if (d->is_pseudo)
            continue;
        for (unsigned k = 0; k < d->nfields; k++) {
            const weft_field_desc *f = &d->fields[k];
            craft_opts o = { CRAFT_DEFAULTS };
            uint64_t extreme, beyond;
            size_t len;
            if (f->is_array || f->size >= 8 ||
                (f->wire != WEFT_WIRE_U && f->wire != WEFT_WIRE_I))
                continue;
            o.target = (int)k;
            tested++;
            if (f->wire == WEFT_WIRE_U) {
                extreme = umax(f->size);
                o.raw = extreme;
                beyond = extreme + 1;
            } else {
                extreme = (uint64_t)(-smax(f->size) - 1);
                o.raw = weft__zigzag((int64_t)extreme);
                beyond = weft__zigzag((int64_t)extreme - 1);
            }
            if (is_count_field(d, f) && extreme > MAX_ARRAY) {
                /* Too many elements to write: check only that one beyond
                 * is refused before any element is read. */
                o.stop = (int)k;
            } else {
                len = craft(d, &o, buf);
                assert_int_equal(decode_one(buf, len, d->is_event, 0, &got,
                                            err, sizeof err), 1);
                assert_true(weft_field_get(&got, f) == extreme);
            }
            o.raw = beyond;
            len = craft(d, &o, buf);
            assert_int_equal(decode_one(buf, len, d->is_event, 0, &got, err,
                                        sizeof err), WEFT_EPROTO);
            assert_non_null(strstr(err, f->name));
            assert_non_null(strstr(err, "out of range"));
        }
    }
    assert_true(tested > 0); /* the table has narrow fields (e.g. u8) */
    free(buf);
}

static const weft_rec_desc *first_with(int (*pred)(const weft_field_desc *),
                                       int *field)
{
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < all[i]->nfields; k++)
            if (!all[i]->is_pseudo && pred(&all[i]->fields[k])) {
                *field = (int)k;
                return all[i];
            }
    fail_msg("no record in the table has such a field");
    return NULL;
}

static int is_string(const weft_field_desc *f)
{
    return f->wire == WEFT_WIRE_Z;
}

static int is_array(const weft_field_desc *f)
{
    return f->is_array;
}

static void test_string_checks(void **state)
{
    int k;
    const weft_rec_desc *d = first_with(is_string, &k);
    uint8_t buf[256];
    char err[WEFT_DECODER_ERROR_MAX];
    weft_decoder dec;
    weft_record got;
    craft_opts o = { CRAFT_DEFAULTS };
    size_t len;

    (void)state;
    /* NUL inside a string. */
    o.str = "a\0b";
    o.str_len = 3;
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, d->is_event, 0, &got, err,
                                sizeof err), WEFT_EPROTO);
    assert_non_null(strstr(err, "NUL"));

    /* Exactly max_string is fine, one more is too big. */
    o.str = "0123456789a";
    o.str_len = 10;
    len = craft(d, &o, buf);
    weft_decoder_init(&dec, buf, len, d->is_event, 0);
    dec.max_string = 10;
    assert_int_equal(weft_decoder_next(&dec, &got), 1);
    weft_decoder_free(&dec);
    o.str_len = 11;
    len = craft(d, &o, buf);
    weft_decoder_init(&dec, buf, len, d->is_event, 0);
    dec.max_string = 10;
    assert_int_equal(weft_decoder_next(&dec, &got), WEFT_ETOOBIG);
    assert_non_null(strstr(dec.error, "limit"));
    weft_decoder_free(&dec);

    /* A length one beyond the input, and a length of 2^63. */
    o.str = "abc";
    o.str_len = 3;
    o.target = k;
    o.raw = 4;
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, d->is_event, 0, &got, err,
                                sizeof err), WEFT_ETRUNC);
    o.raw = (uint64_t)1 << 63;
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, d->is_event, 0, &got, err,
                                sizeof err), WEFT_ETRUNC);
}

static void test_array_count_beyond_input(void **state)
{
    int k;
    const weft_rec_desc *d = first_with(is_array, &k);
    const weft_field_desc *arr = &d->fields[k];
    const weft_field_desc *cnt = count_field_of(d, arr);
    uint8_t buf[8192];
    char err[WEFT_DECODER_ERROR_MAX];
    weft_record got;
    craft_opts o = { CRAFT_DEFAULTS };
    size_t len;

    (void)state;
    o.target = (int)(cnt - d->fields);
    o.raw = max_count(arr);
    /* Most elements the count allows, all present: fine. */
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, d->is_event, 0, &got, err,
                                sizeof err), 1);
    assert_int_equal(weft_field_count(&got, arr), max_count(arr));
    /* Count announced, input ends after it: refused up front. */
    o.stop = o.target;
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, d->is_event, 0, &got, err,
                                sizeof err), WEFT_ETRUNC);
    assert_non_null(strstr(err, "announced"));
    /* One element short, the record's other fields after it. */
    o.stop = -1;
    o.short_by = 1;
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, d->is_event, 0, &got, err,
                                sizeof err), WEFT_ETRUNC);
}

static const weft_rec_desc *first_kind(int events)
{
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    for (size_t i = 0; i < n; i++)
        if (all[i]->is_event == events && !all[i]->is_pseudo)
            return all[i];
    fail_msg("no %s record in the table", events ? "event" : "definition");
    return NULL;
}

static void test_type_checks(void **state)
{
    uint8_t buf[256], *p;
    char err[WEFT_DECODER_ERROR_MAX];
    weft_record got;
    craft_opts o = { CRAFT_DEFAULTS };
    uint32_t unknown = 0;
    size_t len;

    (void)state;
    while (weft_rec_desc_of(unknown))
        unknown++;
    for (int events = 0; events <= 1; events++) {
        p = weft__put_uvarint(buf, unknown);
        *p++ = 0;
        assert_int_equal(decode_one(buf, (size_t)(p - buf), events, 0, &got,
                                    err, sizeof err), WEFT_ETYPE);
        assert_non_null(strstr(err, "unknown"));
        /* A known id plus 2^32 must not alias it. */
        p = weft__put_uvarint(buf, ((uint64_t)1 << 32) +
                              first_kind(events)->type);
        *p++ = 0;
        assert_int_equal(decode_one(buf, (size_t)(p - buf), events, 0, &got,
                                    err, sizeof err), WEFT_ETYPE);
        p = weft__put_uvarint(buf, WEFT_REC__MAX_ID);
        assert_int_equal(decode_one(buf, (size_t)(p - buf), events, 0, &got,
                                    err, sizeof err), WEFT_ETYPE);
    }
    /* An event in a definition stream and a definition in an event one. */
    for (int events = 0; events <= 1; events++) {
        const weft_rec_desc *d = first_kind(events);
        len = craft(d, &o, buf);
        assert_int_equal(decode_one(buf, len, events, 0, &got, err,
                                    sizeof err), 1);
        assert_int_equal(decode_one(buf, len, !events, 0, &got, err,
                                    sizeof err), WEFT_ETYPE);
        assert_non_null(strstr(err, d->name));
    }
    /* Overlong varints: 11 continuation bytes, and 10 bytes above 2^64. */
    memset(buf, 0x80, 11);
    buf[11] = 0;
    assert_int_equal(decode_one(buf, 12, 1, 0, &got, err, sizeof err),
                     WEFT_ETRUNC);
    memset(buf, 0xff, 9);
    buf[9] = 0x02;
    assert_int_equal(decode_one(buf, 10, 1, 0, &got, err, sizeof err),
                     WEFT_ETRUNC);
    /* Empty input is the end, not an error. */
    assert_int_equal(decode_one(buf, 0, 1, 0, &got, err, sizeof err), 0);
}

static void test_time_checks(void **state)
{
    const weft_rec_desc *d = first_kind(1);
    uint8_t buf[512];
    char err[WEFT_DECODER_ERROR_MAX];
    craft_opts o = { CRAFT_DEFAULTS };
    weft_record r, got;
    weft_decoder dec;
    uint64_t prev;
    size_t len;

    (void)state;
    /* base + delta reaching 2^64 - 1 is fine, beyond it overflows. */
    o.delta = 2;
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, 1, UINT64_MAX - 2, &got, err,
                                sizeof err), 1);
    assert_true(got.time == UINT64_MAX);
    assert_int_equal(decode_one(buf, len, 1, UINT64_MAX - 1, &got, err,
                                sizeof err), WEFT_ETIME);
    assert_non_null(strstr(err, "overflow"));
    o.delta = UINT64_MAX;
    len = craft(d, &o, buf);
    assert_int_equal(decode_one(buf, len, 1, 1, &got, err, sizeof err),
                     WEFT_ETIME);
    /* Two records: the second overflows the time the first reached. */
    o.delta = 2;
    len = craft(d, &o, buf);
    memcpy(buf + len, buf, len);
    weft_decoder_init(&dec, buf, 2 * len, 1, UINT64_MAX - 3);
    assert_int_equal(weft_decoder_next(&dec, &got), 1);
    assert_int_equal(weft_decoder_next(&dec, &got), WEFT_ETIME);
    weft_decoder_free(&dec);

    /* The encoder refuses time going backwards and leaves prev alone. */
    memset(&r, 0, sizeof r);
    r.type = d->type;
    r.time = 99;
    prev = 100;
    assert_int_equal(weft_encode(&r, &prev, buf, sizeof buf), WEFT_ETIME);
    assert_int_equal(prev, 100);
    r.time = 100;
    assert_true(weft_encode(&r, &prev, buf, sizeof buf) > 0);
    assert_int_equal(prev, 100);
}

static void test_encoder_checks(void **state)
{
    weft_record r;
    uint8_t buf[64];
    uint64_t prev = 90;
    ssize_t n;
    uint32_t unknown = 0;

    (void)state;
    /* Enter with a small delta and a small region: a few bytes. */
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Enter;
    r.time = 100;
    r.u.Enter.region = 5;
    n = weft_encode(&r, &prev, buf, sizeof buf);
    assert_true(n > 0 && n <= 4);
    assert_int_equal(prev, 100);
    r.type = WEFT_REC_Leave;
    r.time = 150;
    r.u.Leave.region = 100;
    n = weft_encode(&r, &prev, buf, sizeof buf);
    assert_true(n > 0 && n <= 4);

    /* Too small a buffer, unknown type. */
    n = weft_encode(&r, &prev, buf, 2);
    assert_int_equal(n, WEFT_ETOOBIG);
    while (weft_rec_desc_of(unknown))
        unknown++;
    r.type = unknown;
    assert_int_equal(weft_encode(&r, &prev, buf, sizeof buf), WEFT_ETYPE);
}

/* Attribute lists: only in event streams, one per event, followed by
 * it; typed values within their type's range. */
static void test_attribute_list_checks(void **state)
{
    OTF2_AttributeRef ids[1] = { 3 };
    OTF2_Type types[1] = { OTF2_TYPE_UINT8 };
    OTF2_AttributeValue values[1] = { { .uint8 = 200 } };
    weft_record al, ev, got;
    uint8_t buf[128], two[256], *p;
    char err[WEFT_DECODER_ERROR_MAX];
    uint64_t prev = 0;
    ssize_t n;
    size_t evlen;

    (void)state;
    memset(&al, 0, sizeof al);
    al.type = WEFT_REC_AttributeList;
    al.u.AttributeList.numberOfAttributes = 1;
    al.u.AttributeList.attributes = ids;
    al.u.AttributeList.types = types;
    al.u.AttributeList.values = values;
    memset(&ev, 0, sizeof ev);
    ev.type = WEFT_REC_Enter;
    ev.time = 7;
    ev.u.Enter.region = 1;
    ev.attributes = &al;
    n = weft_encode(&ev, &prev, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal(decode_one(buf, (size_t)n, 1, 0, &got, err, sizeof err),
                     1);
    /* Not on its own, and not in a definition stream. */
    assert_int_equal(weft_encode(&al, &prev, buf, sizeof buf), WEFT_ETYPE);
    assert_int_equal(decode_one(buf, (size_t)n, 0, 0, &got, err, sizeof err),
                     WEFT_ETYPE);
    assert_non_null(strstr(err, "AttributeList"));
    /* Two lists before one event. */
    evlen = (size_t)n - 1 - 1 - 1 - 1 - 1 - 1; /* 0x3f,n,id,type,value */
    memcpy(two, buf, (size_t)n - evlen);
    memcpy(two + (size_t)n - evlen, buf, (size_t)n);
    assert_int_equal(decode_one(two, 2 * (size_t)n - evlen, 1, 0, &got, err,
                                sizeof err), WEFT_EPROTO);
    assert_non_null(strstr(err, "two in a row"));
    /* A UINT8 attribute value of 256. */
    p = buf;
    p = weft__put_uvarint(p, WEFT_REC_AttributeList);
    p = weft__put_uvarint(p, 1);
    p = weft__put_uvarint(p, 3);
    p = weft__put_uvarint(p, OTF2_TYPE_UINT8);
    p = weft__put_uvarint(p, 256);
    assert_int_equal(decode_one(buf, (size_t)(p - buf), 1, 0, &got, err,
                                sizeof err), WEFT_EPROTO);
    assert_non_null(strstr(err, "AttributeList.values"));
    assert_non_null(strstr(err, "typed value"));
}

/* Typed values are canonical: the unused bytes of the union are zero on
 * decoding, whatever the sender had there. */
static void test_typed_values_canonical(void **state)
{
    OTF2_Type types[2] = { OTF2_TYPE_INT8, OTF2_TYPE_FLOAT };
    OTF2_MetricValue values[2];
    weft_record r, got;
    uint8_t buf[256];
    char err[WEFT_DECODER_ERROR_MAX];
    uint64_t prev = 0, bits;
    ssize_t n;

    (void)state;
    memset(values, 0xee, sizeof values);
    values[0].signed_int = (int64_t)0xeeeeeeeeeeeeee80ull; /* int8 -128 */
    memcpy(&values[1], &(float){ -1.5f }, sizeof(float));
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Metric;
    r.u.Metric.numberOfMetrics = 2;
    r.u.Metric.typeIDs = types;
    r.u.Metric.metricValues = values;
    n = weft_encode(&r, &prev, buf, sizeof buf);
    assert_true(n > 0);
    /* type, delta, metric, count, 2 types, -128 zigzagged (2), float (4) */
    assert_int_equal(n, 1 + 1 + 1 + 1 + 2 + 2 + 4);
    assert_int_equal(decode_one(buf, (size_t)n, 1, 0, &got, err, sizeof err),
                     1);
    /* decode_one freed the decoder; re-decode to look at the values */
    {
        weft_decoder dec;
        weft_decoder_init(&dec, buf, (size_t)n, 1, 0);
        assert_int_equal(weft_decoder_next(&dec, &got), 1);
        memcpy(&bits, &got.u.Metric.metricValues[0], 8);
        assert_true(bits == 0x80);
        memcpy(&bits, &got.u.Metric.metricValues[1], 8);
        assert_true(bits == 0xbfc00000u);
        weft_decoder_free(&dec);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_sane),
        cmocka_unit_test(test_round_trip_every_record),
        cmocka_unit_test(test_round_trip_mixed_stream),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_value_out_of_range),
        cmocka_unit_test(test_string_checks),
        cmocka_unit_test(test_array_count_beyond_input),
        cmocka_unit_test(test_type_checks),
        cmocka_unit_test(test_time_checks),
        cmocka_unit_test(test_encoder_checks),
        cmocka_unit_test(test_attribute_list_checks),
        cmocka_unit_test(test_typed_values_canonical),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
