/* members.h - fuzz_daemon.c's members of traces as weftd made them (the
 * acks their connections got, their journals linked where conversion
 * cannot remove them), and the check at the end of an input that the
 * journals hold what was acknowledged and the traces converted it.
 */
#ifndef WEFT_FUZZ_MEMBERS_H
#define WEFT_FUZZ_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#define MAX_MEMBERS 64    /* members (trace, rank) an input may make */
#define MAX_ACKS 512      /* acks remembered per member */

typedef struct ack {
    uint8_t definitions;
    uint32_t location;
    uint64_t seq;
} ack;

/* A member of a trace as weftd made it: the acks its connections got and
 * its journal, linked where it cannot go. */
typedef struct member {
    char key[256];
    uint32_t rank;
    ack acks[MAX_ACKS];
    size_t nacks;
    int linked;
} member;

/* At the end of an input, once every trace converted: every ack of
 * members[0..nmembers) names one entry of its journal (linked under keep,
 * keep/KEY/JOURNAL); every trace's row in catalog is complete or partial,
 * and its archive, converted again from the linked journals, holds their
 * events give or take what conversion does so that locations nest.
 * Aborts (CHECK) when not. */
void check_members(const char *keep, const char *catalog,
                   const member *members, size_t nmembers);

#endif
