/* daemon.c - a weft_daemon made and freed (daemon.h). Each part keeps
 * its state in a struct of its own, which its header defines and the
 * daemon holds by pointer; this file, like main.c, wires the parts and
 * may include any of them. */
#include "daemon.h"

#include <string.h>

#include "ask.h"
#include "catjob.h"
#include "nodes.h"
#include "quota.h"
#include "server.h"
#include "trace.h"
#include "uplink.h"
#include "weft_errors.h"

int weft_daemon_init(weft_daemon *d)
{
    memset(d, 0, sizeof *d);
    if (weft_server_init(d) < 0 || weft_ask_init(d) < 0 ||
        weft_traces_init(d) < 0) {
        weft_daemon_free(d);
        return WEFT_ENOMEM;
    }
    return 0;
}

void weft_daemon_free(weft_daemon *d)
{
    weft_catjob_close_idle();
    weft_uplink_free(d);
    weft_nodes_free(d);
    weft_traces_free(d);
    weft_quota_free(&d->quota);
    weft_ask_free(d);
    weft_server_free(d);
}
