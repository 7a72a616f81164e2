/* enum.c - the OTF2 enums of weft_enums.def as a lookup table (enum.h).
 *
 * A value enum is kept as the set of its values, a bit per value (all
 * OTF2 enums of the table are below 64); a flag enum as the mask of its
 * known bits. Each entry also proves at compile time that its C type is
 * an OTF2 enum: libotf2 declares `enum <ctype>_enum` for every one.
 */
#include "enum.h"

#include <string.h>

#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

typedef struct enum_desc {
    const char *name;
    uint64_t set;   /* values, or known bits of a flag enum */
    int flags;
} enum_desc;

#define UPTO(last) ((((uint64_t)1) << ((last) + 1)) - 1)

#define WEFT_ENUM(ctype, last) { #ctype, UPTO(last), 0 },
#define WEFT_ENUM_SET(ctype, set) { #ctype, (set), 0 },
#define WEFT_FLAGS(ctype, mask) { #ctype, (mask), 1 },
static const enum_desc enums[] = {
#include "weft_enums.def"
};
#define NENUMS ((int)(sizeof enums / sizeof enums[0]))

#define IS_OTF2_ENUM(ctype)                                                  \
    _Static_assert(sizeof(enum ctype##_enum) > 0, #ctype);
#define WEFT_ENUM(ctype, last) IS_OTF2_ENUM(ctype)                           \
    _Static_assert((last) < 63, #ctype ": values above 62");
#define WEFT_ENUM_SET(ctype, set) IS_OTF2_ENUM(ctype)
#define WEFT_FLAGS(ctype, mask) IS_OTF2_ENUM(ctype)
#include "weft_enums.def"

int weft_enum_find(const char *ctype)
{
    for (int i = 0; i < NENUMS; i++)
        if (!strcmp(enums[i].name, ctype))
            return i;
    return -1;
}

const char *weft_enum_name(int id)
{
    return id >= 0 && id < NENUMS ? enums[id].name : "?";
}

int weft_enum_is_flags(int id)
{
    return id >= 0 && id < NENUMS && enums[id].flags;
}

int weft_enum_valid(int id, uint64_t v)
{
    if (id < 0 || id >= NENUMS)
        return 1;
    if (enums[id].flags)
        return (v & ~enums[id].set) == 0;
    return v < 64 && (enums[id].set & (((uint64_t)1) << v));
}

uint64_t weft_enum_first(int id)
{
    if (id < 0 || id >= NENUMS || enums[id].flags)
        return 0;
    return (uint64_t)__builtin_ctzll(enums[id].set);
}

uint64_t weft_enum_last(int id)
{
    if (id < 0 || id >= NENUMS)
        return 0;
    if (enums[id].flags)
        return enums[id].set;
    return 63 - (uint64_t)__builtin_clzll(enums[id].set);
}
