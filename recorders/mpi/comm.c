/* comm.c - communicators: their OTF2 definitions and the identity their
 * members agree on (see wm.h).
 *
 * DESIGN
 * weftd unifies definitions by content; two communicators with the same
 * members (two Comm_dups of the world) have the same content but for
 * their `identity` (weft's own field of Comm, weft_records.def). Every
 * member computes the same identity without a message, because the
 * calls that make communicators are collective and MPI requires every
 * member to make them in the same order:
 *   world 1, self 2;
 *   made over a parent (dup, split, split_type, create, cart_create,
 *   intercomm_merge): mix(parent identity, the parent's creation count),
 *   the count advanced by every member of the parent, including those
 *   that get MPI_COMM_NULL;
 *   Comm_create_group: collective over the group only, so the count is
 *   kept per (parent, group, tag);
 *   Intercomm_create: collective over both local groups, whose local
 *   communicators differ; the count is kept per (sorted union of the
 *   members' world ranks, tag).
 * The content then tells the colors of a split apart (other groups).
 * A communicator this library did not see made (a call not wrapped) is
 * defined when first used, with identity 0 (content only).
 * A communicator is named after the call that made it; MPI_Comm_set_name
 * renames it afterwards with a CommName record (weft's own), which weftd
 * applies to the unified Comm.
 * Groups are COMM_GROUPs of world ranks in communicator rank order. OTF2
 * readers resolve them through the MPI COMM_LOCATIONS group (world rank
 * -> location: rank << 32, the first thread of a rank), which must come
 * before them: every rank defines it first, identically, so weftd
 * unifies them into one and the archive has it even when some rank's
 * definitions never arrived (a rank killed before it shipped any). Like
 * the world's group, it costs each rank O(size).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "recorder.h"
#include "weft.h"
#include "wm.h"

#define ID_WORLD 1u
#define ID_SELF 2u

typedef struct comm_info {
    OTF2_CommRef id;
    uint64_t identity;
    uint64_t children;   /* communicators made over this one so far */
} comm_info;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static wm_map comms;     /* WM_KEY(MPI_Comm) -> comm_info */
static wm_map counters;  /* group / intercomm creation key -> count */
static MPI_Group world_group = MPI_GROUP_NULL;
static OTF2_CommRef world_id = OTF2_UNDEFINED_COMM,
                    self_id = OTF2_UNDEFINED_COMM;

/* World ranks of the members of `g`, in its rank order (malloc'd, *n
 * set), NULL when empty or out of memory. */
static uint64_t *world_ranks(MPI_Group g, uint32_t *n)
{
    int size = 0, *in = NULL, *out = NULL;
    uint64_t *v = NULL;

    *n = 0;
    if (PMPI_Group_size(g, &size) != MPI_SUCCESS || size <= 0)
        return NULL;
    in = malloc((size_t)size * sizeof *in);
    out = malloc((size_t)size * sizeof *out);
    v = malloc((size_t)size * sizeof *v);
    if (!in || !out || !v)
        goto fail;
    for (int i = 0; i < size; i++)
        in[i] = i;
    if (PMPI_Group_translate_ranks(g, size, in, world_group, out) !=
        MPI_SUCCESS)
        goto fail;
    for (int i = 0; i < size; i++)
        v[i] = out[i] == MPI_UNDEFINED ? OTF2_UNDEFINED_UINT32
                                       : (uint64_t)out[i];
    free(in);
    free(out);
    *n = (uint32_t)size;
    return v;
fail:
    free(in);
    free(out);
    free(v);
    return NULL;
}

/* Defines a group of `type` with those members; its id. mu held. */
static OTF2_GroupRef define_group(OTF2_GroupType type, const uint64_t *m,
                                  uint32_t n)
{
    weft_record r = { .type = WEFT_REC_Group };
    weft_Group *g = &r.u.Group;

    g->self = weft__recorder_newid(WEFT_REF_GROUP);
    g->name = weft_string("");
    g->groupType = type;
    g->paradigm = OTF2_PARADIGM_MPI;
    g->groupFlags = OTF2_GROUP_FLAG_NONE;
    g->numberOfMembers = n;
    g->members = m;
    weft__recorder_def(&r);
    return g->self;
}

/* The COMM_GROUP of `g`'s members. mu held. */
static OTF2_GroupRef define_group_of(MPI_Group g)
{
    uint32_t n;
    uint64_t *m = world_ranks(g, &n);
    OTF2_GroupRef id = define_group(OTF2_GROUP_TYPE_COMM_GROUP, m, n);

    free(m);
    return id;
}

/* Remembers `comm` as `id` with `identity`; NULL when out of memory.
 * mu held. */
static comm_info *remember(MPI_Comm comm, OTF2_CommRef id, uint64_t identity)
{
    comm_info *c = calloc(1, sizeof *c);

    if (!c)
        return NULL;
    c->id = id;
    c->identity = identity;
    if (wm_map_put(&comms, WM_KEY(comm), c) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

/* Defines intra-communicator `comm`: its group, then the Comm. mu held. */
static comm_info *define_intra(MPI_Comm comm, OTF2_CommRef parent,
                               uint64_t identity, const char *name)
{
    weft_record r = { .type = WEFT_REC_Comm };
    weft_Comm *d = &r.u.Comm;
    MPI_Group g;

    if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return NULL;
    d->group = define_group_of(g);
    PMPI_Group_free(&g);
    d->self = weft__recorder_newid(WEFT_REF_COMM);
    d->name = weft_string(name);
    d->parent = parent;
    d->flags = OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS;
    d->identity = identity;
    weft__recorder_def(&r);
    return remember(comm, d->self, identity);
}

/* Defines inter-communicator `comm`. Both sides must write the same
 * InterComm: group A is the one holding the lowest world rank. mu held. */
static comm_info *define_inter(MPI_Comm comm, uint64_t identity,
                               const char *name)
{
    weft_record r = { .type = WEFT_REC_InterComm };
    weft_InterComm *d = &r.u.InterComm;
    MPI_Group local, remote;
    uint64_t *a, *b;
    uint32_t na, nb;

    if (PMPI_Comm_group(comm, &local) != MPI_SUCCESS)
        return NULL;
    if (PMPI_Comm_remote_group(comm, &remote) != MPI_SUCCESS) {
        PMPI_Group_free(&local);
        return NULL;
    }
    a = world_ranks(local, &na);
    b = world_ranks(remote, &nb);
    PMPI_Group_free(&local);
    PMPI_Group_free(&remote);
    if (na && nb && b[0] < a[0]) {
        d->groupA = define_group(OTF2_GROUP_TYPE_COMM_GROUP, b, nb);
        d->groupB = define_group(OTF2_GROUP_TYPE_COMM_GROUP, a, na);
    } else {
        d->groupA = define_group(OTF2_GROUP_TYPE_COMM_GROUP, a, na);
        d->groupB = define_group(OTF2_GROUP_TYPE_COMM_GROUP, b, nb);
    }
    free(a);
    free(b);
    d->self = weft__recorder_newid(WEFT_REF_COMM);
    d->name = weft_string(name);
    d->commonCommunicator = OTF2_UNDEFINED_COMM;
    d->flags = OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS;
    d->identity = identity;
    weft__recorder_def(&r);
    return remember(comm, d->self, identity);
}

/* Defines `comm`, intra or inter. mu held. */
static comm_info *define_comm(MPI_Comm comm, OTF2_CommRef parent,
                              uint64_t identity, const char *name)
{
    int inter = 0;

    PMPI_Comm_test_inter(comm, &inter);
    return inter ? define_inter(comm, identity, name)
                 : define_intra(comm, parent, identity, name);
}

/* See wm.h. */
void wm_comm_init(int size)
{
    weft_record r = { .type = WEFT_REC_Comm };
    comm_info *c;

    pthread_mutex_lock(&mu);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    weft_def_Paradigm(OTF2_PARADIGM_MPI, weft_string("MPI"),
                      OTF2_PARADIGM_CLASS_PROCESS);
    {
        uint64_t *loc = malloc((size_t)size * sizeof *loc);
        if (loc) {
            for (int i = 0; i < size; i++)
                loc[i] = (uint64_t)i << 32;
            define_group(OTF2_GROUP_TYPE_COMM_LOCATIONS, loc, (uint32_t)size);
            free(loc);
        }
    }
    c = define_intra(MPI_COMM_WORLD, OTF2_UNDEFINED_COMM, ID_WORLD,
                     "MPI_COMM_WORLD");
    world_id = c ? c->id : OTF2_UNDEFINED_COMM;
    r.u.Comm.group = define_group(OTF2_GROUP_TYPE_COMM_SELF, NULL, 0);
    r.u.Comm.self = weft__recorder_newid(WEFT_REF_COMM);
    r.u.Comm.name = weft_string("MPI_COMM_SELF");
    r.u.Comm.parent = OTF2_UNDEFINED_COMM;
    r.u.Comm.flags = OTF2_COMM_FLAG_NONE;
    r.u.Comm.identity = ID_SELF;
    weft__recorder_def(&r);
    c = remember(MPI_COMM_SELF, r.u.Comm.self, ID_SELF);
    self_id = c ? c->id : OTF2_UNDEFINED_COMM;
    pthread_mutex_unlock(&mu);
}

static void free_value(void *v)
{
    free(v);
}

/* See wm.h. */
void wm_comm_fini(void)
{
    pthread_mutex_lock(&mu);
    wm_map_clear(&comms, free_value);
    wm_map_clear(&counters, free_value);
    if (world_group != MPI_GROUP_NULL)
        world_group = MPI_GROUP_NULL; /* freed with MPI */
    world_id = self_id = OTF2_UNDEFINED_COMM;
    pthread_mutex_unlock(&mu);
}

/* See wm.h. */
OTF2_CommRef wm_comm_ref(MPI_Comm comm)
{
    comm_info *c;
    OTF2_CommRef id;

    if (comm == MPI_COMM_WORLD)
        return world_id;
    if (comm == MPI_COMM_NULL)
        return OTF2_UNDEFINED_COMM;
    pthread_mutex_lock(&mu);
    c = wm_map_get(&comms, WM_KEY(comm));
    if (!c)
        c = define_comm(comm, OTF2_UNDEFINED_COMM, 0, "communicator");
    id = c ? c->id : OTF2_UNDEFINED_COMM;
    pthread_mutex_unlock(&mu);
    return id;
}

/* Advances and returns the counter kept under `key`. mu held. */
static uint64_t count_under(uint64_t key)
{
    uint64_t *n = wm_map_get(&counters, key);

    if (!n) {
        n = calloc(1, sizeof *n);
        if (!n || wm_map_put(&counters, key, n) < 0) {
            free(n);
            return 0;
        }
    }
    return ++*n;
}

/* A hash of `g`'s world ranks, sorted when `sorted`. */
static uint64_t hash_group(MPI_Group g, int sorted, uint64_t h)
{
    uint32_t n;
    uint64_t *m = world_ranks(g, &n);

    if (sorted)
        for (uint32_t i = 1; i < n; i++)
            for (uint32_t j = i; j > 0 && m[j - 1] > m[j]; j--) {
                uint64_t t = m[j];
                m[j] = m[j - 1];
                m[j - 1] = t;
            }
    for (uint32_t i = 0; i < n; i++)
        h = wm_mix(h, m[i]);
    free(m);
    return wm_mix(h, n);
}

/* See wm.h. For WM_NEW_INTER, `parent` is the local communicator and
 * `group` is ignored: the union of both sides is only known afterwards,
 * so the identity is finished in wm_comm_created. */
uint64_t wm_comm_next_identity(MPI_Comm parent, wm_new_kind kind,
                               MPI_Group group, int tag)
{
    comm_info *c;
    uint64_t id = 0, pid;

    if (kind == WM_NEW_INTER)
        return wm_mix(3, (uint64_t)(uint32_t)tag);
    (void)wm_comm_ref(parent);
    pthread_mutex_lock(&mu);
    c = wm_map_get(&comms, WM_KEY(parent));
    pid = c ? c->identity : 0;
    if (c && pid) {
        if (kind == WM_NEW_FROM_PARENT)
            id = wm_mix(pid, ++c->children);
        else {
            uint64_t key = hash_group(group, 0, wm_mix(pid, (uint32_t)tag));
            id = wm_mix(key, count_under(key));
        }
    }
    pthread_mutex_unlock(&mu);
    return id;
}

/* The identity of new intercommunicator `comm`: from the sorted union of
 * both sides and what wm_comm_next_identity made of the tag. mu held. */
static uint64_t inter_identity(MPI_Comm comm, uint64_t base)
{
    MPI_Group local, remote, all;
    uint64_t key;

    if (PMPI_Comm_group(comm, &local) != MPI_SUCCESS)
        return 0;
    if (PMPI_Comm_remote_group(comm, &remote) != MPI_SUCCESS) {
        PMPI_Group_free(&local);
        return 0;
    }
    PMPI_Group_union(local, remote, &all);
    key = hash_group(all, 1, base);
    PMPI_Group_free(&all);
    PMPI_Group_free(&local);
    PMPI_Group_free(&remote);
    return wm_mix(key, count_under(key));
}

/* See wm.h. */
void wm_comm_created(MPI_Comm comm, MPI_Comm parent, uint64_t identity,
                     unsigned call)
{
    OTF2_CommRef pid;
    comm_info *c;
    int inter = 0;

    if (comm == MPI_COMM_NULL)
        return;
    pid = wm_comm_ref(parent);
    pthread_mutex_lock(&mu);
    PMPI_Comm_test_inter(comm, &inter);
    if (inter && call == WM_Intercomm_create)
        identity = inter_identity(comm, identity);
    c = define_comm(comm, pid, identity, wm_call_name(call));
    pthread_mutex_unlock(&mu);
    if (c)
        weft_evt_CommCreate(NULL, wm_now(), c->id);
}

/* See wm.h. */
OTF2_GroupRef wm_group_ref(MPI_Group group)
{
    OTF2_GroupRef id;

    pthread_mutex_lock(&mu);
    id = define_group_of(group);
    pthread_mutex_unlock(&mu);
    return id;
}

/* See wm.h. */
void wm_comm_freed(MPI_Comm comm)
{
    comm_info *c;

    if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD ||
        comm == MPI_COMM_SELF)
        return;
    pthread_mutex_lock(&mu);
    c = wm_map_del(&comms, WM_KEY(comm));
    pthread_mutex_unlock(&mu);
    if (c) {
        weft_evt_CommDestroy(NULL, wm_now(), c->id);
        free(c);
    }
}

/* ---- the hooks of calls.def ------------------------------------------- */

void wm_pre_comm_dup(wm_frame *f, MPI_Comm comm, MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_comm_dup(wm_frame *f, int rc, MPI_Comm comm, MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, comm, f->identity, f->call);
}

void wm_pre_comm_split(wm_frame *f, MPI_Comm comm, int color, int key,
                       MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_comm_split(wm_frame *f, int rc, MPI_Comm comm, int color,
                        int key, MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, comm, f->identity, f->call);
}

void wm_pre_comm_split_type(wm_frame *f, MPI_Comm comm, int split_type,
                            int key, MPI_Info info, MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_comm_split_type(wm_frame *f, int rc, MPI_Comm comm,
                             int split_type, int key, MPI_Info info,
                             MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, comm, f->identity, f->call);
}

void wm_pre_comm_create(wm_frame *f, MPI_Comm comm, MPI_Group group,
                        MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_comm_create(wm_frame *f, int rc, MPI_Comm comm, MPI_Group group,
                         MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, comm, f->identity, f->call);
}

void wm_pre_comm_create_group(wm_frame *f, MPI_Comm comm, MPI_Group group,
                              int tag, MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_GROUP, group, tag);
}

void wm_post_comm_create_group(wm_frame *f, int rc, MPI_Comm comm,
                               MPI_Group group, int tag, MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, comm, f->identity, f->call);
}

void wm_pre_cart_create(wm_frame *f, MPI_Comm comm, int ndims,
                        const int dims[], const int periods[], int reorder,
                        MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_cart_create(wm_frame *f, int rc, MPI_Comm comm, int ndims,
                         const int dims[], const int periods[], int reorder,
                         MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, comm, f->identity, f->call);
}

void wm_pre_intercomm_create(wm_frame *f, MPI_Comm local_comm,
                             int local_leader, MPI_Comm peer_comm,
                             int remote_leader, int tag, MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(local_comm, WM_NEW_INTER,
                                        MPI_GROUP_NULL, tag);
}

void wm_post_intercomm_create(wm_frame *f, int rc, MPI_Comm local_comm,
                              int local_leader, MPI_Comm peer_comm,
                              int remote_leader, int tag, MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, local_comm, f->identity, f->call);
}

void wm_pre_intercomm_merge(wm_frame *f, MPI_Comm intercomm, int high,
                            MPI_Comm *newcomm)
{
    f->identity = wm_comm_next_identity(intercomm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_intercomm_merge(wm_frame *f, int rc, MPI_Comm intercomm,
                             int high, MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        wm_comm_created(*newcomm, intercomm, f->identity, f->call);
}

void wm_pre_comm_set_name(wm_frame *f, MPI_Comm comm, const char *comm_name)
{
}

/* The name goes to weftd as weft's own CommName record: the Comm was
 * defined (with the name of the call that made it) when it was made. */
void wm_post_comm_set_name(wm_frame *f, int rc, MPI_Comm comm,
                           const char *comm_name)
{
    weft_record r = { .type = WEFT_REC_CommName };

    if (rc != MPI_SUCCESS || !comm_name)
        return;
    r.u.CommName.comm = wm_comm_ref(comm);
    r.u.CommName.name = weft_string(comm_name);
    if (r.u.CommName.comm != OTF2_UNDEFINED_COMM &&
        r.u.CommName.name != OTF2_UNDEFINED_STRING)
        weft__recorder_def(&r);
}

void wm_pre_comm_free(wm_frame *f, MPI_Comm *comm)
{
    wm_comm_freed(*comm);
}

void wm_post_comm_free(wm_frame *f, int rc, MPI_Comm *comm)
{
}
