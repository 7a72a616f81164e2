/* weft-otf2writer.c - writes an OTF2 archive with libotf2 directly, as
 * Score-P does, for tests/e2e_import.sh: 2 processes (location groups of
 * type PROCESS on hosts nodeA and nodeB) x 2 threads, each location's
 * events written with local region ids and a MappingTable to the
 * global ones, rank 1's clock 1 ms ahead and corrected by ClockOffsets
 * in its local definitions; Enter/Leave of main, compute and io, and a
 * metric. Prints the profile a reader must compute, summed over all
 * locations: "REGION VISITS INCL_NS EXCL_NS" per line.
 *
 *   weft-otf2writer DIR    writes DIR/traces.otf2 (DIR must not exist)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <otf2/otf2.h>

#define RANKS 2
#define THREADS 2
#define SKEW 1000000    /* rank 1's clock, ns ahead */
#define CHECK(x)                                                          \
    do {                                                                  \
        if ((x) != OTF2_SUCCESS) {                                        \
            fprintf(stderr, "weft-otf2writer: %s failed\n", #x);          \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

enum { R_MAIN, R_COMPUTE, R_IO, NREG };
static const char *const names[NREG] = { "main", "compute", "io" };
/* local region id -> global: the MappingTable of every location */
static const uint64_t local_to_global[NREG] = { R_IO, R_COMPUTE, R_MAIN };

static uint64_t visits[NREG], incl[NREG], excl[NREG];
static uint64_t tmin = UINT64_MAX, tmax;

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l,
                                void *cd, bool final)
{
    (void)u, (void)ft, (void)l, (void)cd, (void)final;
    return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_cbs = { pre_flush, NULL };

static OTF2_RegionRef local_of(uint32_t global)
{
    for (uint32_t i = 0; i < NREG; i++)
        if (local_to_global[i] == global)
            return i;
    return 0;
}

/* The events of one location; times are true times, written with the
 * skew of the rank's clock. */
static void write_events(OTF2_EvtWriter *w, int rank, int thread,
                         OTF2_MetricRef metric)
{
    uint64_t skew = rank ? SKEW : 0, t = 1000, t0, children = 0;
    int n = 2 + rank + thread;

    t0 = t;
    CHECK(OTF2_EvtWriter_Enter(w, NULL, t + skew, local_of(R_MAIN)));
    for (int k = 0; k < n; k++) {
        uint64_t dc = 100 * (uint64_t)(1 + thread) + 10 * (uint64_t)k;
        OTF2_Type type = OTF2_TYPE_UINT64;
        OTF2_MetricValue v = { .unsigned_int = (uint64_t)k };
        t += 10;
        CHECK(OTF2_EvtWriter_Enter(w, NULL, t + skew, local_of(R_COMPUTE)));
        t += dc;
        CHECK(OTF2_EvtWriter_Leave(w, NULL, t + skew, local_of(R_COMPUTE)));
        t += 5;
        CHECK(OTF2_EvtWriter_Enter(w, NULL, t + skew, local_of(R_IO)));
        CHECK(OTF2_EvtWriter_Metric(w, NULL, t + skew, metric, 1, &type, &v));
        t += 20;
        CHECK(OTF2_EvtWriter_Leave(w, NULL, t + skew, local_of(R_IO)));
        visits[R_COMPUTE]++, incl[R_COMPUTE] += dc, excl[R_COMPUTE] += dc;
        visits[R_IO]++, incl[R_IO] += 20, excl[R_IO] += 20;
        children += dc + 20;
    }
    t += 7;
    CHECK(OTF2_EvtWriter_Leave(w, NULL, t + skew, local_of(R_MAIN)));
    visits[R_MAIN]++, incl[R_MAIN] += t - t0, excl[R_MAIN] += t - t0 - children;
    if (t0 < tmin)
        tmin = t0;
    if (t > tmax)
        tmax = t;
}

int main(int argc, char **argv)
{
    OTF2_Archive *ar;
    OTF2_GlobalDefWriter *g;
    uint64_t nev[RANKS * THREADS];

    if (argc != 2) {
        fprintf(stderr, "usage: weft-otf2writer DIR\n");
        return 2;
    }
    ar = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE,
                           1024 * 1024, 4 * 1024 * 1024,
                           OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar) {
        fprintf(stderr, "weft-otf2writer: cannot create %s\n", argv[1]);
        return 1;
    }
    CHECK(OTF2_Archive_SetFlushCallbacks(ar, &flush_cbs, NULL));
    CHECK(OTF2_Archive_SetSerialCollectiveCallbacks(ar));
    CHECK(OTF2_Archive_SetCreator(ar, "weft-otf2writer"));
    CHECK(OTF2_Archive_OpenEvtFiles(ar));
    for (int r = 0; r < RANKS; r++)
        for (int th = 0; th < THREADS; th++) {
            OTF2_LocationRef id = (OTF2_LocationRef)(r * THREADS + th);
            OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, id);
            if (!w) {
                fprintf(stderr, "weft-otf2writer: no event writer\n");
                return 1;
            }
            write_events(w, r, th, 0);
            CHECK(OTF2_EvtWriter_GetNumberOfEvents(w, &nev[id]));
            CHECK(OTF2_Archive_CloseEvtWriter(ar, w));
        }
    CHECK(OTF2_Archive_CloseEvtFiles(ar));
    /* Local definitions, as Score-P writes them: the region ids of the
     * events are local, and rank 1's clock is corrected. */
    CHECK(OTF2_Archive_OpenDefFiles(ar));
    for (int r = 0; r < RANKS; r++)
        for (int th = 0; th < THREADS; th++) {
            OTF2_LocationRef id = (OTF2_LocationRef)(r * THREADS + th);
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, id);
            OTF2_IdMap *map = OTF2_IdMap_CreateFromUint64Array(
                NREG, local_to_global, false);
            CHECK(OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION,
                                                   map));
            OTF2_IdMap_Free(map);
            if (r) {
                CHECK(OTF2_DefWriter_WriteClockOffset(dw, 0, -SKEW, 0.0));
                CHECK(OTF2_DefWriter_WriteClockOffset(dw, 2 * SKEW, -SKEW,
                                                      0.0));
            }
            CHECK(OTF2_Archive_CloseDefWriter(ar, dw));
        }
    CHECK(OTF2_Archive_CloseDefFiles(ar));
    g = OTF2_Archive_GetGlobalDefWriter(ar);
    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(
        g, 1000000000, tmin, tmax - tmin + 1, OTF2_UNDEFINED_TIMESTAMP));
    /* strings: 0 "", 1..3 regions, 4.. the rest */
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 0, ""));
    for (uint32_t i = 0; i < NREG; i++)
        CHECK(OTF2_GlobalDefWriter_WriteString(g, 1 + i, names[i]));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 4, "cluster"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 5, "machine"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 6, "nodeA"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 7, "nodeB"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 8, "node"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 9, "MPI Rank 0"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 10, "MPI Rank 1"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 11, "Master thread"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 12, "Pthread thread 1"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 13, "flops"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 14, "FLOP"));
    for (uint32_t i = 0; i < NREG; i++)
        CHECK(OTF2_GlobalDefWriter_WriteRegion(
            g, i, 1 + i, 1 + i, 0, OTF2_REGION_ROLE_FUNCTION,
            OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, 0, 0, 0));
    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(
        g, 0, 4, 5, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, 6, 8, 0));
    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 2, 7, 8, 0));
    for (uint32_t r = 0; r < RANKS; r++)
        CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(
            g, r, 9 + r, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1 + r,
            OTF2_UNDEFINED_LOCATION_GROUP));
    for (uint32_t r = 0; r < RANKS; r++)
        for (uint32_t th = 0; th < THREADS; th++) {
            OTF2_LocationRef id = r * THREADS + th;
            CHECK(OTF2_GlobalDefWriter_WriteLocation(
                g, id, 11 + th, OTF2_LOCATION_TYPE_CPU_THREAD, nev[id], r));
        }
    {
        OTF2_MetricMemberRef m = 0;
        CHECK(OTF2_GlobalDefWriter_WriteMetricMember(
            g, 0, 13, 13, OTF2_METRIC_TYPE_PAPI,
            OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
            OTF2_BASE_DECIMAL, 0, 14));
        CHECK(OTF2_GlobalDefWriter_WriteMetricClass(
            g, 0, 1, &m, OTF2_METRIC_SYNCHRONOUS_STRICT,
            OTF2_RECORDER_KIND_CPU));
    }
    CHECK(OTF2_Archive_CloseGlobalDefWriter(ar, g));
    CHECK(OTF2_Archive_Close(ar));
    for (int i = 0; i < NREG; i++)
        printf("%s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", names[i],
               visits[i], incl[i], excl[i]);
    return 0;
}
