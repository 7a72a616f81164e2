/* runid.c - the run (launch) of a process and the default trace name,
 * from the launcher's environment variables. See runid.h.
 *
 * The innermost launcher wins: an mpirun inside a Slurm allocation gives
 * its processes its own PMIx namespace, while SLURM_STEP_ID may differ
 * between the processes it starts on its own node (the batch step) and
 * those it starts through srun on the others. Every process of one launch
 * must compute the same id, so only variables the launcher gives all of
 * them alike are used.
 */
#include "runid.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "client_config.h"
#include "weft_errors.h"

/* Copies s into out (size n), control characters as '_'. */
static void copy_clean(char *out, size_t n, const char *s)
{
    size_t i = 0;

    for (; s && *s && i + 1 < n; s++)
        out[i++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '_' : *s;
    if (n)
        out[i] = 0;
}

static const char *get(weft__env_fn env, void *arg, const char *name)
{
    const char *v = env(name, arg);

    return v && *v ? v : NULL;
}

/* A Slurm PMIx namespace "slurm.pmix.JOB.STEP": JOB.STEP, else NULL. */
static const char *slurm_pmix_step(const char *ns)
{
    static const char prefix[] = "slurm.pmix.";

    return strncmp(ns, prefix, sizeof prefix - 1) == 0 &&
                   ns[sizeof prefix - 1]
               ? ns + sizeof prefix - 1
               : NULL;
}

/* A run named by variable `var` (WEFT_TREE, WEFT_RUN) set to v: used as
 * it is, restarts included. 0, or WEFT_ECONFIG with why. */
static int given(const char *var, const char *v, weft__run *out, char *why,
                 size_t whylen)
{
    if (strlen(v) > WEFT__RUN_MAX) {
        snprintf(why, whylen, "%s is longer than %d bytes", var,
                 WEFT__RUN_MAX);
        return WEFT_ECONFIG;
    }
    for (const char *s = v; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            snprintf(why, whylen, "%s contains control characters", var);
            return WEFT_ECONFIG;
        }
    copy_clean(out->id, sizeof out->id, v);
    copy_clean(out->label, sizeof out->label, v);
    out->source = var;
    return 0;
}

int weft__run_identify(weft__env_fn env, void *arg, uint32_t size,
                       const char *host, long pid, uint64_t start_ns,
                       weft__run *out, char *why, size_t whylen)
{
    const char *v, *job, *step, *restart;
    char buf[2 * WEFT__RUN_MAX + 64];

    memset(out, 0, sizeof *out);
    out->source = "";
    /* weft run names the trace of its tree in WEFT_TRACE */
    if (size == 0 && (v = get(env, arg, WEFT__TREE_VAR)) != NULL)
        return given(WEFT__TREE_VAR, v, out, why, whylen);
    if ((v = get(env, arg, "WEFT_RUN")) != NULL)
        return given("WEFT_RUN", v, out, why, whylen);
    job = get(env, arg, "SLURM_JOB_ID");
    step = get(env, arg, "SLURM_STEP_ID");
    if (!step)
        step = get(env, arg, "SLURM_STEPID");
    if ((v = get(env, arg, "PMIX_NAMESPACE")) != NULL) {
        const char *js = slurm_pmix_step(v);
        snprintf(buf, sizeof buf, "pmix:%s", v);
        copy_clean(out->label, sizeof out->label, js ? js : v);
        out->source = "PMIX_NAMESPACE";
    } else if ((v = get(env, arg, "OMPI_MCA_ess_base_jobid")) != NULL) {
        snprintf(buf, sizeof buf, "ompi:%s", v);
        copy_clean(out->label, sizeof out->label, v);
        out->source = "OMPI_MCA_ess_base_jobid";
    } else if (job && step) {
        snprintf(buf, sizeof buf, "slurm:%s.%s", job, step);
        snprintf(out->label, sizeof out->label, "%s.%s", job, step);
        copy_clean(out->label, sizeof out->label, out->label);
        out->source = "SLURM_JOB_ID and SLURM_STEP_ID";
    } else if (size == 1) {
        snprintf(buf, sizeof buf, "proc:%s:%ld:%" PRIu64,
                 host && *host ? host : "host", pid, start_ns);
        snprintf(out->label, sizeof out->label, "%s-%ld",
                 host && *host ? host : "host", pid);
        copy_clean(out->label, sizeof out->label, out->label);
        copy_clean(out->id, sizeof out->id, buf);
        out->source = "the process";
        return 0;
    } else {
        return 0;
    }
    restart = get(env, arg, "SLURM_RESTART_COUNT");
    if (restart && strcmp(restart, "0") != 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof buf - n, "+restart%s", restart);
    }
    copy_clean(out->id, sizeof out->id, buf);
    return 0;
}

int weft__run_default_name(weft__env_fn env, void *arg, const char *program,
                           const weft__run *run, char *out, size_t outlen)
{
    static const char *const job_vars[] = { "SLURM_JOB_ID", "PBS_JOBID",
                                            "LSB_JOBID", NULL };
    const char *label = run->label[0] ? run->label : NULL;
    char buf[2 * WEFT__RUN_MAX + 64];

    for (const char *const *p = job_vars; !label && *p; p++)
        label = get(env, arg, *p);
    if (!label)
        return WEFT_ENOTFOUND;
    snprintf(buf, sizeof buf, "%s-%s", program && *program ? program
                                                           : "weft",
             label);
    copy_clean(out, outlen, buf);
    return 0;
}

void weft__run_tree(const char *host, long pid, uint64_t start_ns,
                    weft__run *out)
{
    char buf[2 * WEFT__RUN_MAX + 64];

    memset(out, 0, sizeof *out);
    snprintf(buf, sizeof buf, "tree:%s:%ld:%" PRIu64,
             host && *host ? host : "host", pid, start_ns);
    copy_clean(out->id, sizeof out->id, buf);
    snprintf(out->label, sizeof out->label, "%s-%ld",
             host && *host ? host : "host", pid);
    copy_clean(out->label, sizeof out->label, out->label);
    out->source = WEFT__TREE_VAR;
}

/* The variables a launcher sets in its tasks (and may have itself). */
static const char *const launch_vars[] = { WEFT__RANK_VARS, "SLURM_STEP_ID",
                                           NULL };

int weft__launch_snapshot(weft__env_fn env, void *arg, char *out, size_t n)
{
    size_t used = 0;

    if (n == 0)
        return WEFT_EINVAL;
    out[0] = 0;
    for (size_t i = 0; launch_vars[i]; i++) {
        const char *v = get(env, arg, launch_vars[i]);
        int w;

        if (!v)
            continue;
        if (strchr(v, ';'))
            return WEFT_EINVAL;
        w = snprintf(out + used, n - used, "%s%s=%s", used ? ";" : "",
                     launch_vars[i], v);
        if (w < 0 || (size_t)w >= n - used)
            return WEFT_EINVAL;
        used += (size_t)w;
    }
    return 0;
}

/* The value snapshot gives var (length in *len), or NULL. */
static const char *snapshot_value(const char *snapshot, const char *var,
                                  size_t *len)
{
    size_t vn = strlen(var);

    for (const char *p = snapshot; p && *p;) {
        size_t item = strcspn(p, ";");
        if (item > vn && p[vn] == '=' && strncmp(p, var, vn) == 0) {
            *len = item - vn - 1;
            return p + vn + 1;
        }
        p += item;
        if (*p)
            p++;
    }
    return NULL;
}

int weft__launch_is_task(const char *snapshot, weft__env_fn env, void *arg)
{
    for (size_t i = 0; launch_vars[i]; i++) {
        const char *v = get(env, arg, launch_vars[i]), *was;
        size_t len;

        if (!v)
            continue;
        was = snapshot_value(snapshot, launch_vars[i], &len);
        if (!was || strlen(v) != len || strncmp(v, was, len) != 0)
            return 1;
    }
    return 0;
}
