/* unify.h - merges the definitions of the members (processes) of one
 * trace into dense global ids, and rewrites the references of events.
 *
 * Each member numbers its definitions itself (process-local ids, per id
 * space). The unifier maps a member's definition to global ids: first its
 * reference fields (from that member's local ids to global ids), then it
 * looks the mapped definition up by content (every field except its own
 * id; strings by their text) and gives it the next dense global id of its
 * id space when it is new. Global ids are thus dense (0..n-1) and in
 * first-seen order, which is what every OTF2 reader expects, and two
 * members defining the same thing get the same global id.
 *
 * Definitions that are not numbered but identified by key fields (FK/RK
 * in the record table: Paradigm, ParadigmProperty, the *Property records)
 * and those whose id means the same in every process (NATURE id spaces:
 * IoParadigm) are one definition per key across all members: equal ones
 * are merged, different ones are a conflict (WEFT_ECONFLICT) naming both
 * members and both definitions. References into what weftd derives
 * itself (DERIVED id spaces) are mapped through tables that the caller
 * sets (weft_unify_set_derived); location ids are global already.
 *
 * Everything is driven by the record descriptors (proto/record.h); there
 * is no list of record names here.
 *
 * Threads: a unifier is built by one thread (add_def, add_global). Once
 * built, the const functions (map_event, lookup, iteration) may be called
 * from several threads at once, each with its own weft_unify_scratch.
 */
#ifndef WEFT_UNIFY_H
#define WEFT_UNIFY_H

#include <stddef.h>
#include <stdint.h>

#include "defview.h"
#include "record.h"

/* Default for weft_unify_new: local ids, member numbers and definitions
 * per id space are all below this. */
#define WEFT_UNIFY_DEFAULT_MAX_IDS (1u << 24)

typedef struct weft_unifier weft_unifier;

/* Member number meaning "every member" (weft_unify_set_derived). */
#define WEFT_UNIFY_ALL UINT32_MAX

/* Memory for the reference arrays of mapped events and their attribute
 * lists, and the last member looked up; owned by the caller,
 * zero-initialise it, use it with one unifier only (members are never
 * removed from a unifier while it lives) and free it with
 * weft_unify_scratch_free. */
typedef struct weft_unify_scratch {
    void *buf;
    size_t cap;
    void *abuf;        /* arrays of the attribute list */
    size_t acap;
    weft_record attrs; /* the mapped attribute list */
    const void *member; /* the member last looked up (of `unifier`) */
    const void *unifier;
    uint32_t member_id;
} weft_unify_scratch;

/* Creates an empty unifier. max_ids (0: the default, at most 2^31) bounds
 * local ids, member numbers and the number of global definitions per id
 * space; going beyond it is WEFT_ELIMIT. Returns NULL when out of memory.
 * The caller frees it with weft_unify_free. */
weft_unifier *weft_unify_new(uint32_t max_ids);
void weft_unify_free(weft_unifier *u);

/* Adds definition `def` of `member`, whose references are that member's
 * local ids. Reference fields (arrays too) are mapped to global ids; the
 * OTF2 "undefined" value of a kind maps to itself. Returns 0, or:
 *   WEFT_ETYPE  not a definition, or one weftd derives itself
 *               (WEFT_DF_DAEMON: clock, system tree, location groups,
 *               locations), which members may not send, or a location's
 *               definition (WEFT_DF_LOCAL), which is not unified;
 *   WEFT_EREF   a reference to an id this member has not defined (or,
 *               for derived id spaces, that no weft_unify_set_derived
 *               call made known), or a definition of the undefined id;
 *   WEFT_EEXIST the member defined this local id before with different
 *               content;
 *   WEFT_ECONFLICT another member (or this one) defined the same key
 *               (see above) with different content;
 *   WEFT_ELIMIT an id, member number or id space beyond max_ids;
 *   WEFT_ENOMEM.
 * On failure err (errlen bytes, may be NULL) names the member, record,
 * field and value, and nothing was added. `def` is not kept: its strings
 * and arrays are copied. Defining the same local id again with the same
 * content (a resend) is fine. weft's own records (WEFT_DF_WEFT) change
 * what is there and add nothing: a CommName renames its Comm or
 * InterComm (the first one wins; the content that unifies the members'
 * definitions is unchanged); ThreadName and TeamMember are the
 * converter's (their references are checked all the same). */
int weft_unify_add_def(weft_unifier *u, uint32_t member,
                       const weft_record *def, char *err, size_t errlen);

/* With `on`, a conflict (WEFT_ECONFLICT above) is no failure: the first
 * definition of the key stands, the member's id (if the record has one)
 * means it from then on, and weft_unify_add_def returns 1 with err
 * saying what conflicted. A converter keeps what members sent this way
 * rather than lose a whole trace over one definition. Off by default. */
void weft_unify_keep_first(weft_unifier *u, int on);

/* With `on`, a reference into a DERIVED id space that no
 * weft_unify_set_derived call made known is its own id rather than
 * WEFT_EREF: a member's own unifier (the converter's, see convert.c)
 * keeps what clients name by convention (system tree nodes 0 and 1,
 * location groups by rank) for the trace's unifier to map. Off by
 * default. */
void weft_unify_derived_own(weft_unifier *u, int on);

/* Makes reference `local` of DERIVED id space `kind` (system tree node,
 * location group) mean global id `global` for `member`, or for every
 * member (WEFT_UNIFY_ALL) where the member has no own mapping. Returns 0,
 * or WEFT_EINVAL (not a derived kind, or locations, whose ids need no
 * mapping), WEFT_ELIMIT (local or member beyond max_ids), WEFT_ENOMEM,
 * with err set. */
int weft_unify_set_derived(weft_unifier *u, uint32_t member, unsigned kind,
                           uint64_t local, uint64_t global, char *err,
                           size_t errlen);

/* Adds a definition made by weftd itself (e.g. the String of a host
 * name). Its references must already be global ids of this unifier. It
 * is deduplicated by content like members' definitions, also against
 * theirs; *gid (may be NULL) receives its global id (UINT64_MAX for a
 * definition without an id). Returns 0 or WEFT_ETYPE, WEFT_EREF,
 * WEFT_ELIMIT, WEFT_ENOMEM with err set. */
int weft_unify_add_global(weft_unifier *u, const weft_record *def,
                          uint64_t *gid, char *err, size_t errlen);

/* Rewrites the references of event `ev` of `member` in place from local
 * to global ids, its attribute list's too. Scalar fields are overwritten
 * in *ev; arrays and the attribute list are not written through (their
 * memory is someone else's, e.g. a decoder's): the mapped copies go to
 * *scratch and ev's pointers are redirected there, valid until the next
 * call with that scratch.
 * Returns 0, or WEFT_ETYPE (not an event), WEFT_EREF (an id the member
 * did not define; err names member, record, field and value) or
 * WEFT_ENOMEM; on failure *ev may be partly mapped. */
int weft_unify_map_event(const weft_unifier *u, uint32_t member,
                         weft_record *ev, weft_unify_scratch *scratch,
                         char *err, size_t errlen);
/* Every id space (weft_unify_map_event_kinds). */
#define WEFT_UNIFY_KINDS_ALL UINT32_MAX
/* weft_unify_map_event for the references of the id spaces in `kinds`
 * only (bit k: weft_ref_kind k); the others are left as they are, and
 * neither mapped nor checked. */
int weft_unify_map_event_kinds(const weft_unifier *u, uint32_t member,
                               weft_record *ev, weft_unify_scratch *scratch,
                               uint32_t kinds, char *err, size_t errlen);
void weft_unify_scratch_free(weft_unify_scratch *scratch);

/* Calls fn(arg, local, global) for each local id of id space `kind` that
 * `member` defined (or was given with weft_unify_set_derived for itself,
 * not for every member): the dense part of its map in increasing local
 * id order, then the others. Stops at the first nonzero return of fn and
 * returns it; 0 when all were seen. */
int weft_unify_each_local(const weft_unifier *u, uint32_t member,
                          unsigned kind,
                          int (*fn)(void *arg, uint64_t local,
                                    uint64_t global),
                          void *arg);

/* Member mid's table of local ids of id space `kind` -> global id + 1 (0:
 * not defined), *n entries long, for hot loops that map one field
 * (conversion's Enter and Leave): the dense part of its map (idset.h),
 * so an id at or beyond *n may still be defined (weft_unify_lookup says).
 * Owned by the unifier and valid until mid's next definition is unified;
 * NULL with *n = 0 when mid defined none. */
const uint64_t *weft_unify_id_table(const weft_unifier *u, uint32_t member,
                                    unsigned kind, size_t *n);

/* Global id of local id `local` of id space `kind` (a weft_ref_kind) of
 * `member`. Returns 0 and sets *global, or WEFT_ENOTFOUND. */
int weft_unify_lookup(const weft_unifier *u, uint32_t member, unsigned kind,
                      uint64_t local, uint64_t *global);

/* What the ids of id space `kind` (not a DERIVED one) of unifier `from`
 * are in unifier `to`, for a member both unified: *out (malloc'd, the
 * caller's; NULL when *n is 0) holds, by `from`'s global id, the global
 * id in `to` of the member's local ids that `from` gave it
 * (WEFT_UNIFY_NO_ID where the member has none there), *n entries.
 * Returns 0, WEFT_ENOMEM, or WEFT_ECONFLICT when two local ids of one
 * `from` id are two ids in `to` (err says which). */
#define WEFT_UNIFY_NO_ID UINT32_MAX
int weft_unify_compose(const weft_unifier *from, const weft_unifier *to,
                       uint32_t member, unsigned kind, uint32_t **out,
                       size_t *n, char *err, size_t errlen);

/* Number of global definitions of record type `type` (a WEFT_REC_*). */
size_t weft_unify_count(const weft_unifier *u, uint32_t type);
/* The i-th (first-seen order) global definition of record type `type`,
 * with global ids in all its id fields; NULL if i is out of range. The
 * record, its strings and arrays belong to the unifier and live until
 * weft_unify_free. */
const weft_record *weft_unify_get(const weft_unifier *u, uint32_t type,
                                  size_t i);
/* The text of global String id ("" when it is not defined); the
 * unifier's, as weft_unify_get's records. */
const char *weft_unify_string(const weft_unifier *u, uint32_t id);
/* All global definitions in the order they were first seen. Any prefix
 * of this order refers only to definitions inside it, so writing them in
 * this order puts every definition after what it references. */
size_t weft_unify_ndefs(const weft_unifier *u);
const weft_record *weft_unify_def(const weft_unifier *u, size_t i);
/* The name of global region id, "" if it has none; owned by the
 * unifier u (a const weft_unifier *: the profile's weft_profile_name_fn). */
const char *weft_unify_region_name(const void *u, uint32_t id);
/* The paradigm of global region id as the profile's rows say it
 * (weft_profile_paradigm_name of its paradigm and role; buf: room for
 * it), "" if there is no such region: the profile's
 * weft_profile_paradigm_fn. */
const char *weft_unify_region_paradigm(const void *u, uint32_t id, char *buf);
/* u's global definitions as the report's summaries read them
 * (defview.h): weft_unify_count, weft_unify_get, weft_unify_string. */
weft_defview weft_unify_view(const weft_unifier *u);

#endif
