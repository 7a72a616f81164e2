/* unify_internal.h - what unify.c (building: adding definitions,
 * mapping events) and unify_read.c (reading what was built: the global
 * definitions, a member's maps) share of the unifier. Only those two
 * include it.
 */
#ifndef WEFT_UNIFY_INTERNAL_H
#define WEFT_UNIFY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "idset.h"
#include "unify.h"

typedef struct def_entry {
    const uint8_t *key; /* encoded content, self id 0 */
    size_t keylen;
    uint64_t gid;       /* UINT64_MAX for records without an id */
    uint32_t member;    /* the member that defined it first */
    int renamed;        /* a CommName gave it its name */
    weft_record rec;    /* global ids; pointers into data[] */
    uint8_t data[];     /* key, then strings and arrays */
} def_entry;

/* Identity of a keyed definition -> its entry. */
typedef struct ident_entry {
    def_entry *e;
    size_t len;
    uint8_t key[];
} ident_entry;

#define IDENT_MAX (4 + 8 * 20)

typedef struct member {
    uint32_t id;
    weft_idset maps[WEFT_REF__COUNT]; /* global id + 1 by local id */
} member;

typedef struct type_list {
    uint32_t type;
    def_entry **v;
    size_t n, cap;
} type_list;

struct weft_unifier {
    uint32_t max_ids;
    void *tree;              /* tsearch tree of def_entry by key */
    void *idents;            /* tsearch tree of ident_entry */
    member all;              /* derived mappings for every member */
    def_entry **order;       /* all entries, first-seen order */
    size_t norder, order_cap;
    type_list *lists;        /* one per definition record type */
    size_t nlists;
    member **members;        /* sorted by id */
    size_t nmembers, members_cap;
    uint64_t next_id[WEFT_REF__COUNT];
    uint8_t *key;            /* scratch: encoding of the current record */
    size_t key_cap;
    weft_unify_scratch arrays; /* scratch: mapped arrays of add_def */
    int keep_first;          /* a conflict keeps the first definition */
    int derived_own;         /* unmapped derived ids are their own */
};

/* The list of global definitions of record type `type`, NULL if none. */
type_list *weft__unify_list_of(const weft_unifier *u, uint32_t type);
/* Member id of u, NULL if it has defined nothing. */
member *weft__unify_member_find(const weft_unifier *u, uint32_t id);

/* Global id + 1 of local id v of kind in m, 0 if not defined (a value
 * beyond 32 bits is MAP_HELD: no mapping yet). */
static inline uint32_t map_get(const member *m, unsigned kind, uint64_t v)
{
    return m ? (uint32_t)weft_idset_get(&m->maps[kind], v) : 0;
}

/* What a local id maps to while its definition is being added: room
 * made, no global id yet (map_get says 0). */
#define MAP_HELD (UINT64_C(1) << 32)

#endif
