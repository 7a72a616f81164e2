/* seeds.c - what mkseeds' writers share (seeds.h): a seed's buffer and
 * its writing out, the record streams and frames most seeds start from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codec.h"
#include "frame.h"
#include "seeds.h"
#include "weft_errors.h"

const char *outdir;

void die(const char *what)
{
    fprintf(stderr, "mkseeds: %s\n", what);
    exit(1);
}

void put(buf *b, const void *p, size_t n)
{
    if (b->len + n > BUF_MAX)
        die("seed too large");
    memcpy(b->b + b->len, p, n);
    b->len += n;
}

void put_byte(buf *b, uint8_t v)
{
    put(b, &v, 1);
}

void put_u64le(buf *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        put_byte(b, (uint8_t)(v >> (8 * i)));
}

void put_u32le(buf *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        put_byte(b, (uint8_t)(v >> (8 * i)));
}

void put_record(buf *b, const weft_record *r, uint64_t *prev)
{
    ssize_t n = weft_encode(r, prev, b->b + b->len, BUF_MAX - b->len);

    if (n < 0)
        die(weft_strerror((int)n));
    b->len += (size_t)n;
}

void write_seed(const char *target, const char *name, const buf *b)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", outdir, target);
    if (mkdir(path, 0777) < 0 && errno != EEXIST)
        die(path);
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    f = fopen(path, "wb");
    if (!f || fwrite(b->b, 1, b->len, f) != b->len || fclose(f) != 0)
        die(path);
}

/* ---- record streams ---------------------------------------------------- */

void definitions(buf *b)
{
    static const OTF2_MetricMemberRef members[2] = { 0, 1 };
    static const char *const strings[] = { "main", "compute", "a.c",
                                           "cycles", "instructions", "#" };
    weft_record r;

    for (unsigned i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_String;
        r.u.String.self = i;
        r.u.String.string = strings[i];
        put_record(b, &r, NULL);
    }
    for (unsigned i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Region;
        r.u.Region.self = i;
        r.u.Region.name = i;
        r.u.Region.canonicalName = i;
        r.u.Region.description = OTF2_UNDEFINED_STRING;
        r.u.Region.regionRole = OTF2_REGION_ROLE_FUNCTION;
        r.u.Region.paradigm = OTF2_PARADIGM_USER;
        r.u.Region.sourceFile = 2;
        r.u.Region.beginLineNumber = 10 + 20 * i;
        r.u.Region.endLineNumber = 25 + 20 * i;
        put_record(b, &r, NULL);
    }
    for (unsigned i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_MetricMember;
        r.u.MetricMember.self = i;
        r.u.MetricMember.name = 3 + i;
        r.u.MetricMember.description = 3 + i;
        r.u.MetricMember.metricType = OTF2_METRIC_TYPE_PAPI;
        r.u.MetricMember.metricMode = OTF2_METRIC_ACCUMULATED_START;
        r.u.MetricMember.valueType = OTF2_TYPE_UINT64;
        r.u.MetricMember.base = OTF2_BASE_DECIMAL;
        r.u.MetricMember.exponent = -3;
        r.u.MetricMember.unit = 5;
        put_record(b, &r, NULL);
    }
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MetricClass;
    r.u.MetricClass.self = 0;
    r.u.MetricClass.numberOfMetrics = 2;
    r.u.MetricClass.metricMembers = members;
    r.u.MetricClass.metricOccurrence = OTF2_METRIC_SYNCHRONOUS_STRICT;
    r.u.MetricClass.recorderKind = OTF2_RECORDER_KIND_CPU;
    put_record(b, &r, NULL);
}

/* Events of thread 0 from time `base` on; returns how many. */
unsigned events(buf *b, uint64_t base)
{
    static const OTF2_Type types[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    static OTF2_MetricValue values[2];
    uint64_t prev = base, t = base;
    unsigned n = 0;
    weft_record r;

    values[0].unsigned_int = 123456;
    values[1].unsigned_int = 0xffffffffffull;
    for (unsigned region = 0; region < 2; region++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Enter;
        r.time = t += 3;
        r.u.Enter.region = region;
        put_record(b, &r, &prev);
        n++;
    }
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Metric;
    r.time = t += 200;
    r.u.Metric.metric = 0;
    r.u.Metric.numberOfMetrics = 2;
    r.u.Metric.typeIDs = types;
    r.u.Metric.metricValues = values;
    put_record(b, &r, &prev);
    n++;
    for (unsigned region = 2; region-- > 0;) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Leave;
        r.time = t += 1000;
        r.u.Leave.region = region;
        put_record(b, &r, &prev);
        n++;
    }
    return n;
}

/* ---- frames ------------------------------------------------------------ */

void put_frame(buf *b, Weft__Envelope *env)
{
    uint8_t *frame;
    ssize_t n = weft_frame_pack(env, &frame);

    if (n < 0)
        die(weft_strerror((int)n));
    put(b, frame, (size_t)n);
    free(frame);
}

/* Two ClockOffsets, the later one first. */
void clock_offsets(buf *b)
{
    weft_record r;

    for (unsigned i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_ClockOffset;
        r.u.ClockOffset.time = i ? 1000 : 5000000;
        r.u.ClockOffset.offset = i ? 300 : -700;
        r.u.ClockOffset.standardDeviation = 0.5 * i;
        put_record(b, &r, NULL);
    }
}
