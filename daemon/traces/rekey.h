/* rekey.h - trace directories of an older weftd, whose keys end in a
 * serial (NAME-STAMP-1), get a key ending in a random tag, as new ones
 * have (spool.h): traces/ lets everyone pass, so any user could stat a
 * guessed NAME-STAMP-N to learn that a trace of that name was made then.
 *
 * The key becomes OLD-TAG: the catalog row first (key, and its path when
 * the archive is in the directory), then the directory is renamed. A
 * start that finds a row with a tagged key and no directory while OLD
 * (the key without its tag) has one finishes the rename a crash cut
 * short. Traces weftd holds (recording, converting, to be converted
 * again) are left for a later start. Blocking: worker threads (retain.c's
 * first job).
 */
#ifndef WEFT_REKEY_H
#define WEFT_REKEY_H

#include <stddef.h>

#include "catalog.h"

/* 1 when key ends in '-' and 16 lowercase hexadecimal digits (a key
 * weft_spool_key_make gave), else 0. */
int weft_rekey_tagged(const char *key);

/* Gives row's trace directory SPOOL/traces/KEY a tagged key (see above),
 * or finishes an interrupted rename. Returns 1 when a directory was
 * renamed, 0 when there was nothing to do, or a WEFT_E* code with err
 * saying why (the directory and the row are then as they were, but for
 * a rename that failed after the row changed: the next start does it). */
int weft_rekey_row(weft_catalog *cat, const char *spool,
                   const weft_trace_row *row, char *err, size_t errlen);

#endif
