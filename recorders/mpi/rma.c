/* rma.c - one-sided communication (see wm.h): RmaWin definitions, their
 * create and destroy events, and the Rma* events of the data transfers
 * and synchronisations.
 *
 * A window is created collectively over a communicator, so its identity
 * comes from the communicator's creation counter, like a new
 * communicator's (comm.c): the members' RmaWin definitions unify into
 * one. Put, Get and Accumulate get a matchingId each; they are complete
 * at the window's next synchronisation that completes them (Win_fence,
 * Win_unlock, Win_complete), which records RmaOpCompleteBlocking for each.
 */
#include <pthread.h>
#include <stdlib.h>

#include "map.h"
#include "recorder.h"
#include "weft.h"
#include "wm.h"

typedef struct win_info {
    OTF2_RmaWinRef id;
    OTF2_GroupRef access, exposure; /* Win_start's and Win_post's groups */
    uint64_t *pending;   /* matchingIds of operations not completed yet */
    size_t npending, cap;
} win_info;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static wm_map wins;      /* WM_KEY(MPI_Win) -> win_info */
static OTF2_RmaWinRef next_win;
static uint64_t next_match = 1;

/* The window's info, NULL when unknown (made before MPI_Init or by a
 * call not wrapped). mu held. */
static win_info *find(MPI_Win win)
{
    return wm_map_get(&wins, WM_KEY(win));
}

/* Defines `win` over `comm` and records RmaWinCreate. */
static void created(const wm_frame *f, int rc, MPI_Win win, MPI_Comm comm)
{
    weft_record r = { .type = WEFT_REC_RmaWin };
    win_info *w;

    if (rc != MPI_SUCCESS || win == MPI_WIN_NULL)
        return;
    w = calloc(1, sizeof *w);
    if (!w)
        return;
    r.u.RmaWin.comm = wm_comm_ref(comm);
    r.u.RmaWin.name = weft_string(wm_call_name(f->call));
    r.u.RmaWin.flags = OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS;
    r.u.RmaWin.identity = f->identity;
    w->access = w->exposure = OTF2_UNDEFINED_GROUP;
    pthread_mutex_lock(&mu);
    r.u.RmaWin.self = w->id = next_win++;
    weft__recorder_def(&r);
    if (wm_map_put(&wins, WM_KEY(win), w) < 0) {
        free(w);
        w = NULL;
    }
    pthread_mutex_unlock(&mu);
    if (w)
        weft_evt_RmaWinCreate(NULL, wm_now(), r.u.RmaWin.self);
}

/* A transfer started on `win`: its matchingId (0 when the window is not
 * known), remembered until a synchronisation completes it. */
static uint64_t started(MPI_Win win, OTF2_RmaWinRef *id)
{
    win_info *w;
    uint64_t m = 0;

    pthread_mutex_lock(&mu);
    w = find(win);
    if (w && w->npending == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        uint64_t *p = realloc(w->pending, cap * sizeof *p);
        if (p) {
            w->pending = p;
            w->cap = cap;
        }
    }
    if (w && w->npending < w->cap) {
        m = next_match++;
        w->pending[w->npending++] = m;
        *id = w->id;
    }
    pthread_mutex_unlock(&mu);
    return m;
}

/* The window's pending transfers are complete: RmaOpCompleteBlocking for
 * each. Returns the window's id (OTF2_UNDEFINED_RMA_WIN if unknown). */
static OTF2_RmaWinRef complete_all(MPI_Win win)
{
    OTF2_RmaWinRef id = OTF2_UNDEFINED_RMA_WIN;
    uint64_t *done = NULL;
    size_t n = 0;
    win_info *w;

    pthread_mutex_lock(&mu);
    w = find(win);
    if (w) {
        id = w->id;
        done = w->pending;
        n = w->npending;
        w->pending = NULL;
        w->npending = w->cap = 0;
    }
    pthread_mutex_unlock(&mu);
    for (size_t i = 0; i < n; i++)
        weft_evt_RmaOpCompleteBlocking(NULL, wm_now(), id, done[i]);
    free(done);
    return id;
}

static void free_win(void *v)
{
    win_info *w = v;

    free(w->pending);
    free(w);
}

/* See wm.h. */
void wm_win_fini(void)
{
    pthread_mutex_lock(&mu);
    wm_map_clear(&wins, free_win);
    pthread_mutex_unlock(&mu);
}

/* ---- the hooks of calls.def ------------------------------------------- */

void wm_pre_win_create(wm_frame *f, void *base, MPI_Aint size, int disp_unit,
                       MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_win_create(wm_frame *f, int rc, void *base, MPI_Aint size,
                        int disp_unit, MPI_Info info, MPI_Comm comm,
                        MPI_Win *win)
{
    created(f, rc, *win, comm);
}

void wm_pre_win_allocate(wm_frame *f, MPI_Aint size, int disp_unit,
                         MPI_Info info, MPI_Comm comm, void *baseptr,
                         MPI_Win *win)
{
    f->identity = wm_comm_next_identity(comm, WM_NEW_FROM_PARENT,
                                        MPI_GROUP_NULL, 0);
}

void wm_post_win_allocate(wm_frame *f, int rc, MPI_Aint size, int disp_unit,
                          MPI_Info info, MPI_Comm comm, void *baseptr,
                          MPI_Win *win)
{
    created(f, rc, *win, comm);
}

void wm_pre_win_free(wm_frame *f, MPI_Win *win)
{
    OTF2_RmaWinRef id = complete_all(*win);
    win_info *w;

    pthread_mutex_lock(&mu);
    w = wm_map_del(&wins, WM_KEY(*win));
    pthread_mutex_unlock(&mu);
    if (w) {
        weft_evt_RmaWinDestroy(NULL, wm_now(), id);
        free_win(w);
    }
}

void wm_post_win_free(wm_frame *f, int rc, MPI_Win *win)
{
}

/* A Put, Get or Accumulate (`type`) started: its event with a new
 * matchingId, unless it failed or targets MPI_PROC_NULL. */
static void transfer(int rc, uint32_t type, int target, int count,
                     MPI_Datatype dt, MPI_Win win)
{
    OTF2_RmaWinRef id;
    uint64_t m, t, bytes = wm_bytes(count, dt);

    if (rc != MPI_SUCCESS || target == MPI_PROC_NULL)
        return;
    m = started(win, &id);
    if (!m)
        return;
    t = wm_now();
    if (type == WEFT_REC_RmaPut)
        weft_evt_RmaPut(NULL, t, id, (uint32_t)target, bytes, m);
    else if (type == WEFT_REC_RmaGet)
        weft_evt_RmaGet(NULL, t, id, (uint32_t)target, bytes, m);
    else
        weft_evt_RmaAtomic(NULL, t, id, (uint32_t)target,
                           OTF2_RMA_ATOMIC_TYPE_ACCUMULATE, bytes, 0, m);
}

void wm_pre_put(wm_frame *f, const void *origin_addr, int origin_count,
                MPI_Datatype origin_type, int target_rank,
                MPI_Aint target_disp, int target_count,
                MPI_Datatype target_type, MPI_Win win)
{
}

void wm_post_put(wm_frame *f, int rc, const void *origin_addr,
                 int origin_count, MPI_Datatype origin_type, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_type, MPI_Win win)
{
    transfer(rc, WEFT_REC_RmaPut, target_rank, origin_count, origin_type,
             win);
}

void wm_pre_get(wm_frame *f, void *origin_addr, int origin_count,
                MPI_Datatype origin_type, int target_rank,
                MPI_Aint target_disp, int target_count,
                MPI_Datatype target_type, MPI_Win win)
{
}

void wm_post_get(wm_frame *f, int rc, void *origin_addr, int origin_count,
                 MPI_Datatype origin_type, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_type, MPI_Win win)
{
    transfer(rc, WEFT_REC_RmaGet, target_rank, origin_count, origin_type,
             win);
}

void wm_pre_accumulate(wm_frame *f, const void *origin_addr, int origin_count,
                       MPI_Datatype origin_type, int target_rank,
                       MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_type, MPI_Op op, MPI_Win win)
{
}

void wm_post_accumulate(wm_frame *f, int rc, const void *origin_addr,
                        int origin_count, MPI_Datatype origin_type,
                        int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_type,
                        MPI_Op op, MPI_Win win)
{
    transfer(rc, WEFT_REC_RmaAtomic, target_rank, origin_count, origin_type,
             win);
}

void wm_pre_win_fence(wm_frame *f, int assert, MPI_Win win)
{
    weft_evt_RmaCollectiveBegin(NULL, wm_now());
}

void wm_post_win_fence(wm_frame *f, int rc, int assert, MPI_Win win)
{
    OTF2_RmaWinRef id = complete_all(win);

    if (id != OTF2_UNDEFINED_RMA_WIN)
        weft_evt_RmaCollectiveEnd(NULL, wm_now(), OTF2_COLLECTIVE_OP_BARRIER,
                                  OTF2_RMA_SYNC_LEVEL_PROCESS |
                                      OTF2_RMA_SYNC_LEVEL_MEMORY,
                                  id, OTF2_UNDEFINED_UINT32, 0, 0);
}

/* The window's id, OTF2_UNDEFINED_RMA_WIN if unknown. */
static OTF2_RmaWinRef win_id(MPI_Win win)
{
    OTF2_RmaWinRef id = OTF2_UNDEFINED_RMA_WIN;
    win_info *w;

    pthread_mutex_lock(&mu);
    w = find(win);
    if (w)
        id = w->id;
    pthread_mutex_unlock(&mu);
    return id;
}

void wm_pre_win_lock(wm_frame *f, int lock_type, int rank, int assert,
                     MPI_Win win)
{
}

void wm_post_win_lock(wm_frame *f, int rc, int lock_type, int rank,
                      int assert, MPI_Win win)
{
    OTF2_RmaWinRef id = win_id(win);

    if (rc == MPI_SUCCESS && id != OTF2_UNDEFINED_RMA_WIN)
        weft_evt_RmaAcquireLock(NULL, wm_now(), id, (uint32_t)rank, 0,
                                lock_type == MPI_LOCK_SHARED
                                    ? OTF2_LOCK_SHARED
                                    : OTF2_LOCK_EXCLUSIVE);
}

void wm_pre_win_unlock(wm_frame *f, int rank, MPI_Win win)
{
}

void wm_post_win_unlock(wm_frame *f, int rc, int rank, MPI_Win win)
{
    OTF2_RmaWinRef id = complete_all(win);

    if (rc == MPI_SUCCESS && id != OTF2_UNDEFINED_RMA_WIN)
        weft_evt_RmaReleaseLock(NULL, wm_now(), id, (uint32_t)rank, 0);
}

/* RmaGroupSync of `win`: with `group` (Win_post, Win_start), which the
 * window remembers as its exposure or access group, or with the group
 * remembered (Win_wait, Win_complete: MPI_GROUP_NULL). */
static void group_sync(MPI_Win win, MPI_Group group, int exposure)
{
    OTF2_GroupRef g = OTF2_UNDEFINED_GROUP;
    OTF2_RmaWinRef id = OTF2_UNDEFINED_RMA_WIN;
    win_info *w;

    if (group != MPI_GROUP_NULL)
        g = wm_group_ref(group);
    pthread_mutex_lock(&mu);
    w = find(win);
    if (w) {
        OTF2_GroupRef *slot = exposure ? &w->exposure : &w->access;
        if (group != MPI_GROUP_NULL)
            *slot = g;
        g = *slot;
        id = w->id;
    }
    pthread_mutex_unlock(&mu);
    if (id != OTF2_UNDEFINED_RMA_WIN && g != OTF2_UNDEFINED_GROUP)
        weft_evt_RmaGroupSync(NULL, wm_now(),
                              OTF2_RMA_SYNC_LEVEL_PROCESS |
                                  OTF2_RMA_SYNC_LEVEL_MEMORY,
                              id, g);
}

void wm_pre_win_post(wm_frame *f, MPI_Group group, int assert, MPI_Win win)
{
}

void wm_post_win_post(wm_frame *f, int rc, MPI_Group group, int assert,
                      MPI_Win win)
{
    if (rc == MPI_SUCCESS)
        group_sync(win, group, 1);
}

void wm_pre_win_start(wm_frame *f, MPI_Group group, int assert, MPI_Win win)
{
}

void wm_post_win_start(wm_frame *f, int rc, MPI_Group group, int assert,
                       MPI_Win win)
{
    if (rc == MPI_SUCCESS)
        group_sync(win, group, 0);
}

void wm_pre_win_complete(wm_frame *f, MPI_Win win)
{
}

void wm_post_win_complete(wm_frame *f, int rc, MPI_Win win)
{
    if (rc != MPI_SUCCESS)
        return;
    complete_all(win);
    group_sync(win, MPI_GROUP_NULL, 0);
}

void wm_pre_win_wait(wm_frame *f, MPI_Win win)
{
}

void wm_post_win_wait(wm_frame *f, int rc, MPI_Win win)
{
    if (rc == MPI_SUCCESS)
        group_sync(win, MPI_GROUP_NULL, 1);
}
