/* testutil.h - helpers shared by the unit tests: record builders, a
 * growable byte buffer that records are encoded into, (tmpdir.h)
 * scratch directories, and a child process that waits to be killed. Header-only (static inline), so each test stays
 * one .c file linked against the internal libraries. Include after
 * cmocka.h.
 */
#ifndef WEFT_TESTUTIL_H
#define WEFT_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "codec.h"
#include "record.h"
#include "tmpdir.h"

/* Fails the test unless the fixture f's message (f->err) contains s,
 * printing both. */
#define assert_err(f, s)                                                     \
    do {                                                                     \
        if (!strstr((f)->err, (s)))                                          \
            print_error("message \"%s\" lacks \"%s\"\n", (f)->err, (s));     \
        assert_non_null(strstr((f)->err, (s)));                              \
    } while (0)

/* A child process that runs until it is killed. */
static inline pid_t test_sleeper(void)
{
    pid_t pid = fork();

    if (pid == 0) {
        pause();
        _exit(0);
    }
    assert_true(pid > 0);
    return pid;
}

/* ---- records ------------------------------------------------------------ */

static inline weft_record str(OTF2_StringRef self, const char *s)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_String;
    r.u.String.self = self;
    r.u.String.string = s;
    return r;
}

static inline weft_record region(OTF2_RegionRef self, OTF2_StringRef name,
                                 uint32_t line)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Region;
    r.u.Region.self = self;
    r.u.Region.name = name;
    r.u.Region.canonicalName = name;
    r.u.Region.description = OTF2_UNDEFINED_STRING;
    r.u.Region.regionRole = OTF2_REGION_ROLE_FUNCTION;
    r.u.Region.paradigm = OTF2_PARADIGM_COMPILER;
    r.u.Region.regionFlags = OTF2_REGION_FLAG_NONE;
    r.u.Region.sourceFile = OTF2_UNDEFINED_STRING;
    r.u.Region.beginLineNumber = line;
    r.u.Region.endLineNumber = line + 10;
    return r;
}

/* Attribute self named name (its description too), of values type. */
static inline weft_record attribute(OTF2_AttributeRef self,
                                    OTF2_StringRef name, OTF2_Type type)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Attribute;
    r.u.Attribute.self = self;
    r.u.Attribute.name = name;
    r.u.Attribute.description = name;
    r.u.Attribute.type = type;
    return r;
}

static inline weft_record metric_member(OTF2_MetricMemberRef self,
                                        OTF2_StringRef name)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MetricMember;
    r.u.MetricMember.self = self;
    r.u.MetricMember.name = name;
    r.u.MetricMember.description = name;
    r.u.MetricMember.metricType = OTF2_METRIC_TYPE_OTHER;
    r.u.MetricMember.metricMode = OTF2_METRIC_ACCUMULATED_START;
    r.u.MetricMember.valueType = OTF2_TYPE_UINT64;
    r.u.MetricMember.base = OTF2_BASE_DECIMAL;
    r.u.MetricMember.exponent = 0;
    r.u.MetricMember.unit = name;
    return r;
}

static inline weft_record metric_class(OTF2_MetricRef self, uint8_t n,
                                       const OTF2_MetricMemberRef *members)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MetricClass;
    r.u.MetricClass.self = self;
    r.u.MetricClass.numberOfMetrics = n;
    r.u.MetricClass.metricMembers = members;
    r.u.MetricClass.metricOccurrence = OTF2_METRIC_SYNCHRONOUS_STRICT;
    r.u.MetricClass.recorderKind = OTF2_RECORDER_KIND_CPU;
    return r;
}

static inline weft_record io_file(uint32_t self, uint32_t name)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_IoRegularFile;
    r.u.IoRegularFile.self = self;
    r.u.IoRegularFile.name = name;
    r.u.IoRegularFile.scope = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    return r;
}

/* IoHandle self named name, of file f (OTF2_UNDEFINED_IO_FILE: none)
 * and handle parent. */
static inline weft_record io_handle(uint32_t self, uint32_t name,
                                   uint32_t f, uint32_t parent)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_IoHandle;
    r.u.IoHandle.self = self;
    r.u.IoHandle.name = name;
    r.u.IoHandle.file = f;
    r.u.IoHandle.ioParadigm = OTF2_UNDEFINED_IO_PARADIGM;
    r.u.IoHandle.comm = OTF2_UNDEFINED_COMM;
    r.u.IoHandle.parent = parent;
    return r;
}

/* An IoOperationBegin (done == 0: a write of n bytes) or the
 * IoOperationComplete of it (n bytes written) on handle h at t. */
static inline weft_record io_op(uint64_t t, uint32_t h, uint64_t n, int done)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.time = t;
    if (done) {
        r.type = WEFT_REC_IoOperationComplete;
        r.u.IoOperationComplete.handle = h;
        r.u.IoOperationComplete.bytesResult = n;
    } else {
        r.type = WEFT_REC_IoOperationBegin;
        r.u.IoOperationBegin.handle = h;
        r.u.IoOperationBegin.mode = OTF2_IO_OPERATION_MODE_WRITE;
        r.u.IoOperationBegin.bytesRequest = n;
    }
    return r;
}

/* Enter (leave == 0) or Leave of region reg at time t. */
static inline weft_record enter(uint64_t t, OTF2_RegionRef reg, int leave)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = leave ? WEFT_REC_Leave : WEFT_REC_Enter;
    r.time = t;
    if (leave)
        r.u.Leave.region = reg;
    else
        r.u.Enter.region = reg;
    return r;
}

static inline weft_record metric_event(uint64_t t, OTF2_MetricRef m,
                                       uint8_t n, const OTF2_Type *types,
                                       const OTF2_MetricValue *values)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Metric;
    r.time = t;
    r.u.Metric.metric = m;
    r.u.Metric.numberOfMetrics = n;
    r.u.Metric.typeIDs = types;
    r.u.Metric.metricValues = values;
    return r;
}

/* ---- encoded record streams --------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

/* Appends r; prev is the previous event time (events), NULL for
 * definitions. */
static inline void put_rec(bytes *b, const weft_record *r, uint64_t *prev)
{
    size_t need = weft_encode_bound(r);
    ssize_t k;

    if (b->n + need > b->cap) {
        b->cap = (b->n + need) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    k = weft_encode(r, prev, b->p + b->n, b->cap - b->n);
    assert_true(k > 0);
    b->n += (size_t)k;
}

/* Encodes n definitions (base ignored) or n events after base. */
static inline bytes encode(const weft_record *recs, size_t n, int events,
                           uint64_t base)
{
    bytes b = { 0 };
    uint64_t prev = base;

    for (size_t i = 0; i < n; i++)
        put_rec(&b, &recs[i], events ? &prev : NULL);
    return b;
}

#endif
