/* varint.h - the primitive encodings of the record stream.
 *
 * Unsigned LEB128 varints, zigzag for signed values, little-endian fixed
 * 8-byte values for doubles and raw 64-bit words, 4 bytes for floats.
 * Writers assume the caller reserved WEFT_VARINT_MAX bytes; readers are
 * bounds checked and return NULL on truncated or overlong input.
 */
#ifndef WEFT_VARINT_H
#define WEFT_VARINT_H

#include <stdint.h>
#include <string.h>

#define WEFT_VARINT_MAX 10

static inline uint8_t *weft__put_uvarint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t weft__zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t weft__unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *weft__put_svarint(uint8_t *p, int64_t v)
{
    return weft__put_uvarint(p, weft__zigzag(v));
}

static inline uint8_t *weft__put_u64le(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 8;
}

static inline uint8_t *weft__put_u32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 4;
}

static inline uint8_t *weft__put_double(uint8_t *p, double d)
{
    uint64_t v;

    memcpy(&v, &d, sizeof v);
    return weft__put_u64le(p, v);
}

/* Reads one unsigned varint; NULL if truncated or longer than 64 bits. */
static inline const uint8_t *weft__get_uvarint(const uint8_t *p,
                                               const uint8_t *end,
                                               uint64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;

    if (p < end && *p < 0x80) {  /* one byte: most deltas and ids */
        *out = *p;
        return p + 1;
    }
    while (p < end) {
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return NULL;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return p;
        }
        shift += 7;
        if (shift > 63)
            return NULL;
    }
    return NULL;
}

static inline const uint8_t *weft__get_u64le(const uint8_t *p,
                                             const uint8_t *end,
                                             uint64_t *out)
{
    uint64_t v = 0;

    if (end - p < 8)
        return NULL;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    *out = v;
    return p + 8;
}

static inline const uint8_t *weft__get_u32le(const uint8_t *p,
                                             const uint8_t *end,
                                             uint64_t *out)
{
    uint64_t v = 0;

    if (end - p < 4)
        return NULL;
    for (int i = 0; i < 4; i++)
        v |= (uint64_t)p[i] << (8 * i);
    *out = v;
    return p + 4;
}

#endif
