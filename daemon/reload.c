/* reload.c - the keys SIGHUP does not change (see reload.h). */
#include "reload.h"

#include <stdio.h>
#include <string.h>

unsigned weft_reload_restart_keys(const weft_config *run,
                                  const weft_config *next, char *keys,
                                  size_t len)
{
    const weft_config *r = run, *c = next;
    unsigned n = 0;
    size_t used = 0;

    keys[0] = 0;
#define DIFFERS(cond, key)                                                   \
    do {                                                                     \
        if (!(cond))                                                         \
            break;                                                           \
        if (used < len)                                                      \
            used += (size_t)snprintf(keys + used, len - used, "%s%s",        \
                                     n ? ", " : "", key);                    \
        n++;                                                                 \
    } while (0)
#define STR(key) DIFFERS(strcmp(c->key, r->key) != 0, #key)
#define NUM(key) DIFFERS(c->key != r->key, #key)
    STR(listen);
    STR(socket);
    STR(spool);
    STR(catalog);
    NUM(durability);
    NUM(trace_ids);
    NUM(auth);
    STR(munge_socket);
    NUM(listen_backlog);
    NUM(nice); /* every thread takes it from the one that starts it */
    /* #30's: sized or counted from accept and Hello on */
    NUM(max_definition_bytes);
    NUM(max_open_journals);
    NUM(max_preauth_connections);
    NUM(max_preauth_per_address);
    NUM(max_preauth_buffered);
    NUM(max_preauth_frame);
    NUM(preauth_timeout);
    /* [cluster]: the node's link is made once (cluster/uplink.c) */
    DIFFERS(strcmp(c->cluster_head, r->cluster_head) != 0, "head");
    DIFFERS(strcmp(c->node_name, r->node_name) != 0, "node_name");
    DIFFERS(c->cluster_heartbeat != r->cluster_heartbeat, "heartbeat");
    DIFFERS(strcmp(c->archive_root, r->archive_root) != 0, "archive_root");
#undef NUM
#undef STR
#undef DIFFERS
    return n;
}
