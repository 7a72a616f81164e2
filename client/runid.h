/* runid.h - which launch (run) a process belongs to, and the default
 * trace name, read from what the launcher put in the environment.
 *
 * A run is the processes started by one launch: one srun step, one
 * mpirun, one PMIx namespace, or a single process on its own. weftd
 * groups the members of a trace by (owner, name, run), so two launches
 * with the same trace name are two traces. Pure functions: the
 * environment comes through a lookup callback so tests give their own.
 */
#ifndef WEFT_RUNID_H
#define WEFT_RUNID_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WEFT__RUN_MAX 255
/* Set by weft run to the id of its process tree (weft__run_tree): every
 * process of the tree that no launcher made a task of is a member of one
 * trace, weftd giving each its rank (proto: Hello.tree). */
#define WEFT__TREE_VAR "WEFT_TREE"

/* The value of variable `name` (NULL when unset or empty). */
typedef const char *(*weft__env_fn)(const char *name, void *arg);

typedef struct weft__run {
    char id[WEFT__RUN_MAX + 1];    /* sent in Hello; "" when unknown */
    char label[WEFT__RUN_MAX + 1]; /* names the run in a default trace
                                      name ("1234.5"); "" when unknown */
    const char *source;            /* the variables it came from, for
                                      messages; static */
} weft__run;

/* Identifies the run of this process, first match wins: for a process
 * of a tree (size 0) WEFT_TREE; WEFT_RUN;
 * PMIX_NAMESPACE (Open MPI, srun --mpi=pmix, newer MPICH);
 * OMPI_MCA_ess_base_jobid (Open MPI); SLURM_JOB_ID with SLURM_STEP_ID
 * (srun); for a trace of one process (size 1) the process itself (host,
 * pid and start_ns, a time that tells two processes with the same pid
 * apart). Slurm's SLURM_RESTART_COUNT, when above 0, is added to a
 * detected id so a requeued job is a new run. Otherwise out->id is ""
 * (weftd then groups by name only, as before runs existed).
 * Returns 0, or WEFT_ECONFIG with why set when WEFT_RUN is unusable
 * (too long, control characters). */
int weft__run_identify(weft__env_fn env, void *arg, uint32_t size,
                       const char *host, long pid, uint64_t start_ns,
                       weft__run *out, char *why, size_t whylen);

/* The trace name when WEFT_TRACE is not set: PROGRAM-LABEL for a known
 * run ("lulesh-1234.5"; "lulesh-HOST-PID" for a single process), else
 * PROGRAM-JOB with the batch job id (SLURM_JOB_ID, PBS_JOBID, LSB_JOBID).
 * Characters below 0x20 become '_'; cut to outlen - 1 bytes. Returns 0,
 * or WEFT_ENOTFOUND when nothing names a trace of several processes. */
int weft__run_default_name(weft__env_fn env, void *arg, const char *program,
                           const weft__run *run, char *out, size_t outlen);

/* The run of a process tree whose root is process pid of host, started at
 * start_ns: id "tree:HOST:PID:NS", label "HOST-PID". weft run puts the
 * id in WEFT_TREE. */
void weft__run_tree(const char *host, long pid, uint64_t start_ns,
                    weft__run *out);

/* ---- weft run -- LAUNCHER (mpirun, mpiexec, srun) ----
 * weft run in front of a launcher traces the launcher's tasks, not the
 * launcher: it preloads libweft-launch.so (recorders/launch.c) alone,
 * which does nothing in the launcher and its helpers and, in each task
 * the launch starts, runs the task again under weft run (that weft
 * run then preloads the recorders the task's program needs, as under
 * `mpirun weft run -- ./app`). These variables carry it: */
/* weft run's own program, which the tasks run under */
#define WEFT__LAUNCH_RUN_VAR "WEFT_LAUNCH_RUN"
/* the shim's path in LD_PRELOAD, which the task's weft run takes out */
#define WEFT__LAUNCH_SHIM_VAR "WEFT_LAUNCH_SHIM"
/* the rank variables the launcher itself had (weft__launch_snapshot) */
#define WEFT__LAUNCH_FROM_VAR "WEFT_LAUNCH_FROM"
/* weft run's -t LIST for the tasks ("" or unset: the default) */
#define WEFT__LAUNCH_REC_VAR "WEFT_LAUNCH_RECORDERS"
/* "1": the tasks' weft run says what it does (-v) */
#define WEFT__LAUNCH_VERBOSE_VAR "WEFT_LAUNCH_VERBOSE"
/* weft run's own program, for the processes of its tree (WEFT_TREE):
 * one that execs a launcher runs it under weft run (recorders/exec.c). */
#define WEFT__RUN_SELF_VAR "WEFT_RUN_SELF"

/* 1 when path (a file name, with or without directories) names a
 * parallel launcher by its file name: Open MPI's mpirun, mpiexec,
 * orterun or prterun, MPICH's mpiexec.hydra, Debian's per-implementation
 * mpirun.openmpi, mpiexec.mpich ..., Slurm's srun. Inline: the recorders'
 * exec wrappers (recorders/exec.c, in each recorder library) ask too. */
static inline int weft__run_launcher_name(const char *path)
{
    static const char *const names[] = {
        "mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra",
        "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich",
        "mpiexec.mpich", "srun",
    };
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(base, names[i]) == 0)
            return 1;
    return 0;
}

/* Longest snapshot kept: beyond, a launcher's variables are not those of
 * a launcher (weft run then refuses to stand in front of it). */
#define WEFT__LAUNCH_FROM_MAX 1024

/* Writes into out (size n) the variables that make a process a task of a
 * launch (the rank variables of client_config.h and SLURM_STEP_ID), as
 * the launcher itself has them: "NAME=VALUE;..." for those set, "" when
 * none (a launcher started from a login shell). Returns 0, or
 * WEFT_EINVAL when a value holds ';' or the whole does not fit. */
int weft__launch_snapshot(weft__env_fn env, void *arg, char *out, size_t n);

/* 1 when this process (its variables through env) is a task of the
 * launch whose launcher's variables are snapshot: one of the variables
 * is set and differs from the launcher's (an mpirun run in a Slurm batch
 * script has SLURM_PROCID=0 as the script had, its tasks
 * OMPI_COMM_WORLD_RANK besides); 0 for the launcher and its helpers. */
int weft__launch_is_task(const char *snapshot, weft__env_fn env, void *arg);

#endif
