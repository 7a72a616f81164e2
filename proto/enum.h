/* enum.h - the OTF2 enums of the record table's fields (weft_enums.def):
 * which C type names an enum, and which values it takes.
 *
 * An enum is named by its index (what weft_field_desc.enum_id holds), -1
 * for none; every function accepts -1 and any other out-of-range index.
 */
#ifndef WEFT_ENUM_H
#define WEFT_ENUM_H

#include <stdint.h>

/* Index of the enum whose C type is `ctype` (e.g. "OTF2_RegionRole"),
 * -1 if weft_enums.def has none. */
int weft_enum_find(const char *ctype);
/* Its C type, "?" for none. */
const char *weft_enum_name(int id);
/* 1 if v is a value of enum `id` (for flag enums: only known bits; for
 * -1: any value, there is nothing to check). */
int weft_enum_valid(int id, uint64_t v);
/* 1 for flag enums (bit sets), 0 for value enums and -1. */
int weft_enum_is_flags(int id);
/* Smallest and largest valid value: for flag enums 0 (no flag) and every
 * known flag; 0 for -1. */
uint64_t weft_enum_first(int id);
uint64_t weft_enum_last(int id);

#endif
