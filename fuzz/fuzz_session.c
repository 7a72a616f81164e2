/* fuzz_session.c - libFuzzer target for weftd's ingest validation
 * (weft_validate_defs and weft_validate_events in daemon/validate.c)
 * over one member, as a session would drive it.
 *
 * Input: a config byte (bits 0-1: max_definitions, bit 2: max_string),
 * then messages of a 4-byte header (kind, count, 16-bit little-endian
 * length) and that many payload bytes. Kind bit 0: 0 Definitions, 1
 * EventBatch; for batches bits 1-2 are the thread, bit 3 puts the base
 * time before the thread's last time and bits 4-7 are the distance.
 * State follows weftd: a batch that passes moves the thread's last time;
 * a message that fails is the end of a connection, the member (and what
 * it defined) stays, and the next message comes as from a new one.
 *
 * Checked beyond memory safety: failures carry a WEFT_E* code and a
 * message, and name a limit only with WEFT_ELIMIT or WEFT_ETOOBIG; a
 * batch that passes ends no earlier than its base time and its thread's
 * previous time; Definitions that pass leave each id they define marked
 * as defined.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "daemon.h"
#include "trace.h"
#include "validate.h"
#include "weft_errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__,       \
                    __LINE__, #cond);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

#define NLOCS 4

static const uint64_t max_defs[4] = { 16, 64, 4096, 1u << 20 };

static int is_error(int rc)
{
    return rc < 0 && rc > WEFT__ERRNO_BASE && rc < WEFT__ERRNO_END;
}

/* After Definitions passed: every id they define is defined in m. */
static void check_defined(const weft_member *m, const uint8_t *buf,
                          size_t len)
{
    weft_decoder dec;
    weft_record r;

    weft_decoder_init(&dec, buf, len, 0, 0);
    dec.max_string = m->trace->d->cfg.max_string;
    while (weft_decoder_next(&dec, &r) == 1) {
        const weft_rec_desc *rd = weft_rec_desc_of(r.type);
        const weft_field_desc *self;
        if (rd->self_field < 0)
            continue;
        self = &rd->fields[rd->self_field];
        CHECK(weft_idset_has(&m->defined[self->ref],
                             weft_field_get(&r, self)));
    }
    CHECK(dec.p == dec.end);
    weft_decoder_free(&dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static weft_daemon d; /* only d.cfg is read */
    weft_trace t;
    weft_member m;
    weft_loc_state locs[NLOCS];
    char err[512];

    if (size < 1)
        return 0;
    memset(&d, 0, sizeof d);
    d.cfg.max_definitions = max_defs[data[0] & 3];
    d.cfg.max_string = data[0] & 4 ? 16 : 64u << 10;
    memset(&t, 0, sizeof t);
    t.d = &d;
    t.size = 1;
    memset(&m, 0, sizeof m);
    m.trace = &t;
    memset(locs, 0, sizeof locs);
    m.locs = locs;
    m.nlocs = NLOCS;
    data++;
    size--;

    while (size >= 4) {
        uint8_t kind = data[0], count = data[1];
        size_t len = (size_t)data[2] | (size_t)data[3] << 8;
        enum weft_limit limit = WEFT_LIMIT_MAX_FRAME; /* must be set */
        int rc;
        data += 4;
        size -= 4;
        if (len > size)
            len = size;
        err[0] = '\0';
        if (!(kind & 1)) {
            rc = weft_validate_defs(&m, data, len, &limit, err, sizeof err);
            if (rc == 0)
                check_defined(&m, data, len);
        } else {
            uint32_t loc = (kind >> 1) & (NLOCS - 1);
            uint64_t prev = locs[loc].last_time, dist = kind >> 4;
            uint64_t base = kind & 8 ? (prev >= dist ? prev - dist : 0)
                                     : prev + dist;
            uint64_t last = 0;
            rc = weft_validate_events(&m, loc, base, count, data, len,
                                      &last, &limit, err, sizeof err);
            if (rc == 0 && count) {
                CHECK(last >= base && last >= prev);
                locs[loc].last_time = last;
            }
            if (rc == 0 && !count)
                CHECK(len == 0);
        }
        CHECK(rc == 0 || (is_error(rc) && err[0] != '\0'));
        CHECK(limit == WEFT_LIMIT_NONE ||
              (limit == WEFT_LIMIT_MAX_DEFINITIONS && rc == WEFT_ELIMIT) ||
              (limit == WEFT_LIMIT_MAX_STRING && rc == WEFT_ETOOBIG));
        data += len;
        size -= len;
    }

    for (int k = 0; k < WEFT_REF__COUNT; k++) {
        weft_idset_free(&m.defined[k]);
        free(m.decls[k].v);
    }
    return 0;
}
