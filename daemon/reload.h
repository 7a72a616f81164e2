/* reload.h - what SIGHUP cannot change: the keys that take effect only
 * when weftd restarts (weftd.conf(5): those not marked reload). main.c's
 * SIGHUP handler applies the others and keeps the running value of
 * these, naming in a warning those that changed. Pure: no daemon state.
 */
#ifndef WEFT_RELOAD_H
#define WEFT_RELOAD_H

#include <stddef.h>

#include "weftd_config.h"

/* Writes to keys (len > 0, always terminated) the names, ", "
 * separated, of the restart-only keys whose value in next differs from
 * run's. Returns how many differ. */
unsigned weft_reload_restart_keys(const weft_config *run,
                                  const weft_config *next, char *keys,
                                  size_t len);

#endif
