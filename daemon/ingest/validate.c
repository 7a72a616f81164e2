/* validate.c - the checks of what a member sends (see validate.h).
 *
 * Ingest decodes every record once to check it (types, references,
 * clocks, counts) because a bad record must be refused before it is
 * acknowledged; the journal then stores the payload bytes unchanged.
 * The walk over a record's fields is generic: what a field means (enum,
 * reference kind, count of which array, type of which value) comes from
 * the record table's descriptors (record.h). Enter and Leave, most of
 * any trace, take a fast path over the bytes (codec.h's weft_el_run).
 */
#include "validate.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "fail.h"
#include "frame.h"
#include "weft_errors.h"

/* The limit behind a decoder's refusal: its one WEFT_ETOOBIG is a string
 * beyond max_string (dec.max_string). */
static enum weft_limit decoder_limit(int rc)
{
    return rc == WEFT_ETOOBIG ? WEFT_LIMIT_MAX_STRING : WEFT_LIMIT_NONE;
}

/* "[k]" after an array field's name in messages, "" for scalars. */
static const char *idx(const weft_field_desc *f, size_t k, char *buf,
                       size_t n)
{
    if (!f->is_array)
        return "";
    snprintf(buf, n, "[%zu]", k);
    return buf;
}

/* The remembered count and type of definition `id` of `kind` into *out:
 * 1, or 0 if there is none (undefined id, or a kind nothing checks
 * against). */
static int decl_of(const weft_memberin *in, unsigned kind, uint64_t id,
                   weft_decl *out)
{
    uint64_t v;

    if (!weft_ref_kind_has_decl(kind) ||
        !(v = weft_idset_get(&in->defined[kind], id)))
        return 0;
    *out = weft_decl_unpack(v);
    return 1;
}

/* Checks reference v (value k of field f) of id space `kind`: ids this
 * member defined; for what weftd derives, the conventions of the record
 * table (locations rank << 32 | thread, location groups by rank, system
 * tree nodes 0 and 1). */
static int check_ref(const weft_memberin *in, const weft_rec_desc *d,
                     const weft_field_desc *f, size_t k, unsigned kind,
                     uint64_t v, char *err, size_t errlen)
{
    uint32_t size = in->size;
    char ib[24];

    if (v == weft_ref_kind_undefined(kind))
        return 0;
    switch (kind) {
    case WEFT_REF_LOCATION:
        if ((v >> 32) >= size)
            return weft__fail(err, errlen, WEFT_EREF, "%s.%s%s: location %"
                              PRIu64 " is thread %" PRIu64 " of rank %" PRIu64
                              ", but the trace has %" PRIu32 " processes",
                              d->name, f->name, idx(f, k, ib, sizeof ib), v,
                              v & 0xffffffffu, v >> 32, size);
        return 0;
    case WEFT_REF_LOCATION_GROUP:
        if (v >= size)
            return weft__fail(err, errlen, WEFT_EREF, "%s.%s%s: location group "
                              "%" PRIu64 ": location groups are named by rank, "
                              "and the trace has %" PRIu32 " processes",
                              d->name, f->name, idx(f, k, ib, sizeof ib), v,
                              size);
        return 0;
    case WEFT_REF_SYSTEM_TREE_NODE:
        if (v > 1)
            return weft__fail(err, errlen, WEFT_EREF, "%s.%s%s: system tree "
                              "node %" PRIu64 ": clients name 0 (the machine) "
                              "or 1 (their host)", d->name, f->name,
                              idx(f, k, ib, sizeof ib), v);
        return 0;
    default:
        if (!weft_idset_has(&in->defined[kind], v))
            return weft__fail(err, errlen, WEFT_EREF, "%s.%s%s: %s %" PRIu64 " "
                              "is not defined", d->name, f->name,
                              idx(f, k, ib, sizeof ib),
                              weft_ref_kind_name(kind), v);
        return 0;
    }
}

/* Checks every value of record r (and of its attribute list) that the
 * table says something about: OTF2 enums, the type of typed values,
 * references, counts and declared types. Generic over the descriptors.
 * 0, or a WEFT_E* code with err naming record, field and value. */
static int check_record(const weft_memberin *in, const weft_rec_desc *d,
                        const weft_record *r, char *err, size_t errlen)
{
    char ib[24];
    int rc;

    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        size_t n;
        /* Most fields are plain numbers: nothing to check. */
        if (f->wire == WEFT_WIRE_Z ||
            (f->enum_id < 0 && f->sel_map == WEFT_SEL_NONE &&
             (f->is_self || f->ref == WEFT_REF_NONE) && f->count_ref < 0 &&
             f->decl_ref < 0))
            continue;
        n = weft_field_nvalues(r, f);
        for (size_t k = 0; k < n; k++) {
            uint64_t v = weft_field_value(r, f, k);
            unsigned kind;
            if (f->enum_id >= 0 && !weft_enum_valid(f->enum_id, v)) {
                if (weft_enum_is_flags(f->enum_id))
                    return weft__fail(err, errlen, WEFT_EPROTO, "%s.%s%s: %#"
                                      PRIx64 " has bits that are no %s flag",
                                      d->name, f->name,
                                      idx(f, k, ib, sizeof ib), v,
                                      weft_enum_name(f->enum_id));
                return weft__fail(err, errlen, WEFT_EPROTO, "%s.%s%s: %" PRIu64
                                  " is not a valid %s", d->name, f->name,
                                  idx(f, k, ib, sizeof ib), v,
                                  weft_enum_name(f->enum_id));
            }
            if (f->sel_map == WEFT_SEL_TYPE &&
                weft_field_selector(r, d, f, k) == OTF2_TYPE_NONE)
                return weft__fail(err, errlen, WEFT_EPROTO, "%s.%s%s: a value "
                                  "of type OTF2_TYPE_NONE", d->name, f->name,
                                  idx(f, k, ib, sizeof ib));
            kind = f->is_self ? WEFT_REF_NONE : weft_field_kind(r, d, f, k);
            if (kind != WEFT_REF_NONE &&
                (rc = check_ref(in, d, f, k, kind, v, err, errlen)) < 0)
                return rc;
            if (f->count_ref >= 0) {
                const weft_field_desc *rf = &d->fields[f->count_ref];
                uint64_t id = weft_field_get(r, rf);
                weft_decl dl;
                if (decl_of(in, rf->ref, id, &dl) && dl.count != v)
                    return weft__fail(err, errlen, WEFT_EPROTO, "%s.%s: %"
                                      PRIu64 " elements, but %s %" PRIu64 " "
                                      "(%s) has %" PRIu32, d->name, f->name, v,
                                      weft_ref_kind_name(rf->ref), id, rf->name,
                                      dl.count);
            }
            if (f->decl_ref >= 0) {
                const weft_field_desc *rf = &d->fields[f->decl_ref];
                uint64_t id = weft_field_value(r, rf, k);
                weft_decl dl;
                if (decl_of(in, rf->ref, id, &dl) && dl.type != v)
                    return weft__fail(err, errlen, WEFT_EPROTO, "%s.%s%s: type "
                                      "%" PRIu64 ", but %s %" PRIu64 " is "
                                      "declared with type %u", d->name, f->name,
                                      idx(f, k, ib, sizeof ib), v,
                                      weft_ref_kind_name(rf->ref), id, dl.type);
            }
        }
    }
    if (r->attributes)
        return check_record(in, weft_rec_desc_of(r->attributes->type),
                            r->attributes, err, errlen);
    return 0;
}

/* Remembers what later records check against definition r with id `id`:
 * the count of its first array or, without one, the count of the
 * definition of its own id space it refers to (a MetricInstance has its
 * MetricClass's), and its declared OTF2_Type. */
static int remember_decl(weft_memberin *in, const weft_rec_desc *d,
                         const weft_record *r, unsigned kind, uint64_t id)
{
    weft_decl decl = { 0, 0 };

    if (!weft_ref_kind_has_decl(kind))
        return 0;
    if (d->count_field >= 0) {
        decl.count = (uint32_t)weft_field_get(r, &d->fields[d->count_field]);
    } else {
        for (unsigned i = 0; i < d->nfields; i++) {
            const weft_field_desc *f = &d->fields[i];
            weft_decl dl;
            if (f->is_self || f->is_array || f->ref != kind)
                continue;
            if (decl_of(in, kind, weft_field_get(r, f), &dl)) {
                decl.count = dl.count;
                break;
            }
        }
    }
    if (d->decl_type_field >= 0)
        decl.type = (uint8_t)weft_field_get(r, &d->fields[d->decl_type_field]);
    return weft_idset_put(&in->defined[kind], id, weft_decl_pack(decl));
}

/* Undefines the ids defined by the first n records of a Definitions
 * payload. Each of them was new when it was added (weft_validate_defs
 * refuses redefinitions), so no earlier definition is lost. Returns the
 * number of records read. */
static uint64_t forget_defs(weft_memberin *in, const uint8_t *buf, size_t len,
                            uint64_t n)
{
    weft_decoder dec;
    weft_record r;
    uint64_t nrec = 0;

    weft_decoder_init(&dec, buf, len, 0, 0);
    dec.max_string = in->d->cfg.max_string;
    while (n-- > 0 && weft_decoder_next(&dec, &r) == 1) {
        const weft_rec_desc *rd = weft_rec_desc_of(r.type);
        const weft_field_desc *self;
        nrec++;
        if (rd->self_field < 0)
            continue;
        self = &rd->fields[rd->self_field];
        weft_idset_del(&in->defined[self->ref], weft_field_get(&r, self));
    }
    weft_decoder_free(&dec);
    return nrec;
}

/* The thread numbers of weft's own records are below max_locations, as
 * a batch's thread: a named thread becomes a location of the archive,
 * and a team has no more members than a process may have threads. 0, or
 * WEFT_ELIMIT with *hit set and err naming record, field and limit. */
static int check_threads(const weft_config *cfg, const weft_record *r,
                         enum weft_limit *hit, char *err, size_t errlen)
{
    const char *field, *what = "thread";
    uint32_t v;

    switch (r->type) {
    case WEFT_REC_ThreadName:
        field = "ThreadName.thread";
        v = r->u.ThreadName.thread;
        break;
    case WEFT_REC_TeamMember:
        field = "TeamMember.thread";
        v = r->u.TeamMember.thread;
        if (v < cfg->max_locations) {
            field = "TeamMember.index";
            what = "index";
            v = r->u.TeamMember.index;
        }
        break;
    default:
        return 0;
    }
    if (v < cfg->max_locations)
        return 0;
    *hit = WEFT_LIMIT_MAX_LOCATIONS;
    return weft__fail(err, errlen, WEFT_ELIMIT, "%s: %s %" PRIu32 " exceeds "
                      "max_locations (%" PRIu64 ")", field, what, v,
                      cfg->max_locations);
}

/* A payload is accepted or refused as a whole: when a record is refused,
 * the ids the records before it defined are forgotten again, because the
 * payload is neither journaled nor acked and its ids must not satisfy
 * later references or block the corrected resend. */
int weft_validate_defs(weft_memberin *in, const uint8_t *buf, size_t len,
                       uint64_t *charge, enum weft_limit *limit, char *err,
                       size_t errlen)
{
    const weft_config *cfg = &in->d->cfg;
    enum weft_limit hit = WEFT_LIMIT_NONE;
    uint64_t nrec = 0, added = 0;
    weft_decoder dec;
    weft_record r;
    int rc;

    weft_decoder_init(&dec, buf, len, 0, 0);
    dec.max_string = cfg->max_string;
    while ((rc = weft_decoder_next(&dec, &r)) == 1) {
        const weft_rec_desc *rd = weft_rec_desc_of(r.type);
        const weft_field_desc *self;
        uint64_t id;
        nrec++;
        if (rd->flags & WEFT_DF_DAEMON) {
            rc = weft__fail(err, errlen, WEFT_ETYPE, "%s definitions are "
                            "derived by weftd and may not be sent by clients",
                            rd->name);
            goto out;
        }
        rc = check_record(in, rd, &r, err, errlen);
        if (rc < 0)
            goto out;
        if ((rc = check_threads(cfg, &r, &hit, err, errlen)) < 0)
            goto out;
        if (rd->self_field < 0)
            continue;
        self = &rd->fields[rd->self_field];
        id = weft_field_get(&r, self);
        if (id == weft_ref_kind_undefined(self->ref)) {
            rc = weft__fail(err, errlen, WEFT_EPROTO, "%s.%s: the undefined id "
                            "cannot be defined", rd->name, self->name);
            goto out;
        }
        if (weft_idset_has(&in->defined[self->ref], id)) {
            rc = weft__fail(err, errlen, WEFT_EEXIST, "%s.%s: %s %" PRIu64
                            " is already defined", rd->name, self->name,
                            weft_ref_kind_name(self->ref), id);
            goto out;
        }
        rc = weft_idset_add(&in->defined[self->ref], id, cfg->max_definitions);
        if (rc < 0) {
            if (rc == WEFT_ELIMIT)
                hit = WEFT_LIMIT_MAX_DEFINITIONS;
            rc = weft__fail(err, errlen, rc, "%s.%s: id %" PRIu64 " exceeds "
                            "max_definitions (%" PRIu64 ")", rd->name,
                            self->name, id, cfg->max_definitions);
            goto out;
        }
        added = nrec;
        rc = remember_decl(in, rd, &r, self->ref, id);
        if (rc < 0) {
            rc = weft__fail(err, errlen, rc, "%s: out of memory", rd->name);
            goto out;
        }
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", dec.error);
        hit = decoder_limit(rc);
    }
out:
    weft_decoder_free(&dec);
    if (rc < 0)
        forget_defs(in, buf, len, added);
    *charge = rc < 0 ? 0 : len + WEFT_DEF_OVERHEAD * nrec;
    if (limit)
        *limit = rc < 0 ? hit : WEFT_LIMIT_NONE;
    return rc < 0 ? rc : 0;
}

uint64_t weft_validate_undefine(weft_memberin *in, const uint8_t *buf,
                                size_t len)
{
    return len + WEFT_DEF_OVERHEAD * forget_defs(in, buf, len, UINT64_MAX);
}

/* Events from first to last lie within the member's span: from
 * WEFT_MAX_EARLY_S before its Hello's clock to WEFT_MAX_SPAN_S after
 * (a client's clock gone wild would stretch the whole trace). */
static int check_span(const weft_memberin *in, uint64_t first, uint64_t last,
                      char *err, size_t errlen)
{
    uint64_t res = in->resolution;
    uint64_t early = WEFT_MAX_EARLY_S * res, span = WEFT_MAX_SPAN_S * res;

    if (res == 0) /* no Hello (a member made by hand: tests, fuzzers) */
        return 0;
    if (in->start_time > early && first < in->start_time - early)
        return weft__fail(err, errlen, WEFT_ETIME, "an event at %" PRIu64 " is "
                          "%" PRIu64 " s before the process's start (%" PRIu64
                          "): at most %d s are allowed", first,
                          (in->start_time - first) / res, in->start_time,
                          WEFT_MAX_EARLY_S);
    if (last > in->start_time && last - in->start_time > span)
        return weft__fail(err, errlen, WEFT_ETIME, "an event at %" PRIu64 " is "
                          "%" PRIu64 " s after the process's start (%" PRIu64
                          "): at most %d s are allowed", last,
                          (last - in->start_time) / res, in->start_time,
                          WEFT_MAX_SPAN_S);
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* See validate.h. */
int weft_validate_goodbye(const Weft__Goodbye *g, uint64_t max_locations,
                          enum weft_limit *limit, uint64_t *dropped,
                          char *err, size_t errlen)
{
    uint32_t *ids;
    int rc = 0;

    *limit = WEFT_LIMIT_NONE;
    *dropped = 0;
    if (g->n_children > WEFT_MAX_CHILDREN)
        return weft__fail(err, errlen, WEFT_EINVAL, "Goodbye: %zu child "
                          "processes named, at most %d are allowed",
                          g->n_children, WEFT_MAX_CHILDREN);
    for (size_t i = 0; i < g->n_locations; i++) {
        const Weft__LocationEnd *l = g->locations[i];
        if (l->location >= max_locations) {
            *limit = WEFT_LIMIT_MAX_LOCATIONS;
            return weft__fail(err, errlen, WEFT_ELIMIT, "Goodbye: thread %u "
                              "exceeds max_locations (%" PRIu64 ")",
                              l->location, max_locations);
        }
        if (l->events > WEFT_MAX_COUNT || l->dropped > WEFT_MAX_COUNT)
            return weft__fail(err, errlen, WEFT_EINVAL, "Goodbye: thread %u "
                              "reports %" PRIu64 " events and %" PRIu64 " "
                              "dropped: more than %" PRIu64 " cannot be",
                              l->location, l->events, l->dropped,
                              (uint64_t)WEFT_MAX_COUNT);
        *dropped += l->dropped;
    }
    if (g->n_locations < 2)
        return 0;
    if (!(ids = malloc(g->n_locations * sizeof *ids)))
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->n_locations; i++)
        ids[i] = g->locations[i]->location;
    qsort(ids, g->n_locations, sizeof *ids, cmp_u32);
    for (size_t i = 1; i < g->n_locations && rc == 0; i++)
        if (ids[i] == ids[i - 1])
            rc = weft__fail(err, errlen, WEFT_EINVAL, "Goodbye: thread %u is "
                            "named twice", ids[i]);
    free(ids);
    return rc;
}

int weft_validate_events(const weft_memberin *in, uint32_t loc, uint64_t base,
                         uint32_t count, const uint8_t *buf, size_t len,
                         uint64_t *last_time, enum weft_limit *limit,
                         char *err, size_t errlen)
{
    uint64_t prev = in->locs[loc].last_time;
    const weft_idset *regions = &in->defined[WEFT_REF_REGION];
    weft_decoder dec;
    weft_record r;
    uint64_t first = 0;
    uint32_t n = 0;
    int rc;

    if (limit)
        *limit = WEFT_LIMIT_NONE;
    if (base < prev)
        return weft__fail(err, errlen, WEFT_ETIME, "batch base time %" PRIu64
                          " is smaller than the last time %" PRIu64 " of "
                          "thread %u", base, prev, loc);
    weft_decoder_init(&dec, buf, len, 1, base);
    dec.max_string = in->d->cfg.max_string;
    for (;;) {
        /* Enter/Leave, most of any trace: their one field is a region. */
        weft_el_run run = weft_el_begin(&dec), at = run;
        uint32_t type, region;
        while (weft_el_next(&run, &type, &region)) {
            if (region != OTF2_UNDEFINED_REGION &&
                !weft_idset_has(regions, region)) {
                run = at;  /* unread: check_record below says why */
                break;
            }
            if (n++ == 0)
                first = run.time;
            at = run;
        }
        weft_el_end(&run, &dec);
        prev = dec.time;
        if ((rc = weft_decoder_next(&dec, &r)) != 1)
            break;
        if (n++ == 0)
            first = r.time;
        prev = r.time;
        rc = check_record(in, weft_rec_desc_of(r.type), &r, err, errlen);
        if (rc < 0)
            goto out;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", dec.error);
        if (limit)
            *limit = decoder_limit(rc);
        goto out;
    }
    if (n != count) {
        rc = weft__fail(err, errlen, WEFT_EPROTO, "EventBatch announces %u "
                        "events but holds %u", count, n);
        goto out;
    }
    if (n && (rc = check_span(in, first, prev, err, errlen)) < 0)
        goto out;
    *last_time = prev;
out:
    weft_decoder_free(&dec);
    return rc < 0 ? rc : 0;
}

/* ---- Hello tags ---- */

/* Limits of Hello.tags (README, "Tags"): at most WEFT_MAX_TAGS tags, keys
 * of 1..WEFT_MAX_TAG_KEY characters [A-Za-z0-9_.-], values up to
 * max_string bytes, each key once per Hello. */
#define WEFT_MAX_TAGS 64
#define WEFT_MAX_TAG_KEY 64

/* A printable copy of at most WEFT_MAX_TAG_KEY bytes of s for messages:
 * bytes outside printable ASCII become '?'. */
static const char *tag_key_shown(const char *s, char *buf, size_t n)
{
    size_t i = 0;

    for (; s[i] && i < WEFT_MAX_TAG_KEY && i + 1 < n; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    buf[i] = 0;
    return buf;
}

int weft_validate_tags(const Weft__Hello *h, uint64_t max_string,
                       enum weft_limit *limit, char *err, size_t errlen)
{
    char kb[WEFT_MAX_TAG_KEY + 1];
    size_t total = 0;

    if (limit)
        *limit = WEFT_LIMIT_NONE;
    if (h->n_tags > WEFT_MAX_TAGS)
        return weft__fail(err, errlen, WEFT_ELIMIT, "Hello: %zu tags, at most "
                          "%d are allowed", h->n_tags, WEFT_MAX_TAGS);
    for (size_t i = 0; i < h->n_tags; i++) {
        const char *k = h->tags[i]->key, *v = h->tags[i]->value;
        size_t n = strlen(k);
        if (n == 0)
            return weft__fail(err, errlen, WEFT_EINVAL, "Hello: tag %zu has an "
                              "empty key", i + 1);
        if (n > WEFT_MAX_TAG_KEY)
            return weft__fail(err, errlen, WEFT_EINVAL, "Hello: tag key "
                              "'%s...' is %zu bytes long, at most %d are "
                              "allowed", tag_key_shown(k, kb, sizeof kb), n,
                              WEFT_MAX_TAG_KEY);
        if (strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789_.-") != n)
            return weft__fail(err, errlen, WEFT_EINVAL, "Hello: tag key '%s' "
                              "has a character other than A-Z a-z 0-9 _ . -",
                              tag_key_shown(k, kb, sizeof kb));
        if (strlen(v) > max_string) {
            if (limit)
                *limit = WEFT_LIMIT_MAX_STRING;
            return weft__fail(err, errlen, WEFT_ELIMIT, "Hello: the value of "
                              "tag '%s' is %zu bytes long, over max_string (%"
                              PRIu64 ")", k, strlen(v), max_string);
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(h->tags[j]->key, k) == 0)
                return weft__fail(err, errlen, WEFT_EINVAL, "Hello: tag '%s' "
                                  "is given twice", k);
        total += n + strlen(v);
        if (total > WEFT_MAX_TAG_BYTES)
            return weft__fail(err, errlen, WEFT_ELIMIT, "Hello: the tags are "
                              "over %d bytes (keys and values) at tag '%s'",
                              WEFT_MAX_TAG_BYTES, k);
    }
    return 0;
}

/* See validate.h. */
int weft_goodbye_ended(const Weft__Goodbye *g, char **out, char *err,
                       size_t errlen)
{
    const char *s = g->ended ? g->ended : "";
    size_t n = strlen(s);

    *out = NULL;
    if (n > WEFT_MAX_ENDED)
        return weft__fail(err, errlen, WEFT_EINVAL, "Goodbye: 'ended' is %zu "
                          "bytes long, at most %d are allowed", n,
                          WEFT_MAX_ENDED);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return weft__fail(err, errlen, WEFT_EINVAL, "Goodbye: 'ended' has "
                              "a control character (0x%02x) at byte %zu",
                              (unsigned char)s[i], i);
    if (n && !(*out = strdup(s)))
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    return 0;
}
