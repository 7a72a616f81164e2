/* userlim.h - what one user's recording traces hold in all, against
 * their per-user limits (max_members_per_user). Loop thread. */
#ifndef WEFT_USERLIM_H
#define WEFT_USERLIM_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

/* Members (processes) of uid's traces still recording. */
uint64_t weft_userlim_count_members(const weft_daemon *d, uint32_t uid);
/* 0 if uid may add one more member to its recording traces, else
 * WEFT_ELIMIT with err naming max_members_per_user. */
int weft_userlim_members(const weft_daemon *d, uint32_t uid, char *err,
                         size_t errlen);

#endif
