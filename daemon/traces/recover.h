/* recover.h - rebuilds traces in progress from the spool at start-up
 * (see recover.c). */
#ifndef WEFT_RECOVER_H
#define WEFT_RECOVER_H

#include "daemon.h"

/* Scans SPOOL/traces: resumes traces still recording, converts those whose
 * members all said goodbye. Problems with single journals are logged and
 * skipped. Returns 0, or WEFT_EIO if the spool cannot be read. Loop
 * thread, before listening. */
int weft_recover_spool(weft_daemon *d);

#endif
