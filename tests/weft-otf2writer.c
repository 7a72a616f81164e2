/* weft-otf2writer.c - writes an OTF2 archive with libotf2 directly, as
 * Score-P does, for tests/e2e_import.sh: 2 processes (location groups of
 * type PROCESS on hosts nodeA and nodeB) x 2 threads, each location's
 * events written with local region and string ids and MappingTables to
 * the global ones, rank 1's clock running twice as fast and 1 ms ahead,
 * corrected by two ClockOffsets of different offsets in its local
 * definitions (readers interpolate between them); Enter/Leave of main,
 * compute and io, and a metric; on the master threads MPI messages
 * between the ranks (MPI_Send/MPI_Recv regions, MpiSend/MpiRecv events,
 * COMM_LOCATIONS and COMM_GROUP groups and a Comm as Score-P defines
 * them) and a ParameterString of a mapped string; on the other threads
 * file I/O (IoParadigm, IoRegularFile, IoHandle definitions,
 * IoOperationBegin/Complete events). Prints what a reader must compute,
 * one fact a line (times in ns):
 *   region NAME VISITS INCL EXCL    the profile summed over locations
 *   events LOCATION N               events of a location
 *   message SENDER RECEIVER N BYTES sends between world ranks
 *   mpi RANK EXCL                   time in MPI_* regions of a rank
 *   io FILE READ WRITTEN OPERATIONS file I/O summed over locations
 *   metric LOCATION NAME UNIT MIN MAX LAST   a location's metric values
 *   string TEXT                     the ParameterString's value
 *   span FIRST LAST                 the first and last event's time
 *
 *   weft-otf2writer DIR    writes DIR/traces.otf2 (DIR must not exist)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <otf2/otf2.h>

#define RANKS 2
#define THREADS 2
#define SKEW 1000000    /* rank 1's clock: 2 t + SKEW at true time t */
#define MPI_NS 30       /* each MPI call */
#define CHECK(x)                                                          \
    do {                                                                  \
        if ((x) != OTF2_SUCCESS) {                                        \
            fprintf(stderr, "weft-otf2writer: %s failed\n", #x);          \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

enum { R_MAIN, R_COMPUTE, R_IO, R_SEND, R_RECV, NREG };
static const char *const names[NREG] = { "main", "compute", "io",
                                         "MPI_Send", "MPI_Recv" };
/* local region id -> global: the MappingTable of every location */
static const uint64_t local_to_global[NREG] = { R_IO, R_COMPUTE, R_MAIN,
                                                R_RECV, R_SEND };
/* local string id -> global (STRING MappingTable): local 1 is the
 * parameter's value, global S_VALUE */
enum { S_VALUE = 20, S_PARAM, S_POSIX, S_IN, S_OUT, S_FD3, S_FD4,
       S_WORLD, S_COMM_LOCS, S_COMM_GROUP, S_MPI };
static const uint64_t string_map[2] = { 0, S_VALUE };
static const char *const value = "run-config-A";
/* messages: rank 0 sends SENDS0 to rank 1, rank 1 one back */
static const uint64_t sends0[] = { 1000, 24 }, send1 = 4096;
enum { F_IN, F_OUT, NFILES };
static const char *const files[NFILES] = { "/data/input.dat",
                                           "/data/out.dat" };

static uint64_t visits[NREG], incl[NREG], excl[NREG];
static uint64_t mpi_ns[RANKS], io_read[NFILES], io_written[NFILES],
                io_ops[NFILES];
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

/* Rank r's clock at true time t. */
static uint64_t clock_of(int rank, uint64_t t)
{
    return rank ? 2 * t + SKEW : t;
}

/* An MPI call of region `region` at t (true) on w: its event inside. */
static void mpi_call(OTF2_EvtWriter *w, int rank, uint64_t *t, int region,
                     uint32_t peer, uint64_t bytes)
{
    CHECK(OTF2_EvtWriter_Enter(w, NULL, clock_of(rank, *t),
                               local_of((uint32_t)region)));
    if (region == R_SEND)
        CHECK(OTF2_EvtWriter_MpiSend(w, NULL, clock_of(rank, *t), peer, 0,
                                     7, bytes));
    else
        CHECK(OTF2_EvtWriter_MpiRecv(w, NULL, clock_of(rank, *t), peer, 0,
                                     7, bytes));
    *t += MPI_NS;
    CHECK(OTF2_EvtWriter_Leave(w, NULL, clock_of(rank, *t),
                               local_of((uint32_t)region)));
    visits[region]++, incl[region] += MPI_NS, excl[region] += MPI_NS;
    mpi_ns[rank] += MPI_NS;
}

/* An I/O operation on handle (= file) f at t (true): bytes read or
 * written. */
static void io_op(OTF2_EvtWriter *w, int rank, uint64_t *t, int f,
                  uint64_t bytes, uint64_t matching)
{
    OTF2_IoOperationMode mode = f == F_IN ? OTF2_IO_OPERATION_MODE_READ
                                          : OTF2_IO_OPERATION_MODE_WRITE;

    CHECK(OTF2_EvtWriter_IoOperationBegin(w, NULL, clock_of(rank, *t),
                                          (OTF2_IoHandleRef)f, mode,
                                          OTF2_IO_OPERATION_FLAG_NONE,
                                          bytes, matching));
    *t += 3;
    CHECK(OTF2_EvtWriter_IoOperationComplete(w, NULL, clock_of(rank, *t),
                                             (OTF2_IoHandleRef)f, bytes,
                                             matching));
    *t += 2;
    (f == F_IN ? io_read : io_written)[f] += bytes;
    io_ops[f]++;
}

/* The events of one location; times are true times, written on the
 * rank's clock. */
static void write_events(OTF2_EvtWriter *w, int rank, int thread,
                         OTF2_MetricRef metric)
{
    uint64_t t = 1000, t0, children = 0, c0;
    int n = 2 + rank + thread;

    t0 = t;
    CHECK(OTF2_EvtWriter_Enter(w, NULL, clock_of(rank, t),
                               local_of(R_MAIN)));
    if (thread == 0)  /* local string 1: S_VALUE */
        CHECK(OTF2_EvtWriter_ParameterString(w, NULL, clock_of(rank, t), 0,
                                             1));
    for (int k = 0; k < n; k++) {
        uint64_t dc = 100 * (uint64_t)(1 + thread) + 10 * (uint64_t)k;
        OTF2_Type type = OTF2_TYPE_UINT64;
        OTF2_MetricValue v = { .unsigned_int = (uint64_t)k };
        t += 10;
        CHECK(OTF2_EvtWriter_Enter(w, NULL, clock_of(rank, t),
                                   local_of(R_COMPUTE)));
        t += dc;
        CHECK(OTF2_EvtWriter_Leave(w, NULL, clock_of(rank, t),
                                   local_of(R_COMPUTE)));
        t += 5;
        CHECK(OTF2_EvtWriter_Enter(w, NULL, clock_of(rank, t),
                                   local_of(R_IO)));
        CHECK(OTF2_EvtWriter_Metric(w, NULL, clock_of(rank, t), metric, 1,
                                    &type, &v));
        t += 20;
        CHECK(OTF2_EvtWriter_Leave(w, NULL, clock_of(rank, t),
                                   local_of(R_IO)));
        visits[R_COMPUTE]++, incl[R_COMPUTE] += dc, excl[R_COMPUTE] += dc;
        visits[R_IO]++, incl[R_IO] += 20, excl[R_IO] += 20;
        children += dc + 20;
    }
    printf("metric %d flops FLOP 0 %d %d\n", rank * THREADS + thread, n - 1,
           n - 1);
    t += 10;
    c0 = t;
    if (thread == 0 && rank == 0) {
        for (size_t i = 0; i < sizeof sends0 / sizeof *sends0; i++)
            mpi_call(w, rank, &t, R_SEND, 1, sends0[i]);
        mpi_call(w, rank, &t, R_RECV, 1, send1);
    } else if (thread == 0) {
        for (size_t i = 0; i < sizeof sends0 / sizeof *sends0; i++)
            mpi_call(w, rank, &t, R_RECV, 0, sends0[i]);
        mpi_call(w, rank, &t, R_SEND, 0, send1);
    } else {
        for (uint64_t i = 0; i < 3; i++)
            io_op(w, rank, &t, F_IN, 300 + 100 * (uint64_t)rank, i);
        io_op(w, rank, &t, F_OUT, 64 * (uint64_t)(rank + 1), 3);
    }
    if (thread == 0)
        children += t - c0;
    t += 7;
    CHECK(OTF2_EvtWriter_Leave(w, NULL, clock_of(rank, t),
                               local_of(R_MAIN)));
    visits[R_MAIN]++, incl[R_MAIN] += t - t0, excl[R_MAIN] += t - t0 - children;
    if (t0 < tmin)
        tmin = t0;
    if (t > tmax)
        tmax = t;
}

/* Every location's events; their counts in nev. */
static void write_all_events(OTF2_Archive *ar, uint64_t *nev)
{
    CHECK(OTF2_Archive_OpenEvtFiles(ar));
    for (int r = 0; r < RANKS; r++)
        for (int th = 0; th < THREADS; th++) {
            OTF2_LocationRef id = (OTF2_LocationRef)(r * THREADS + th);
            OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, id);
            if (!w) {
                fprintf(stderr, "weft-otf2writer: no event writer\n");
                exit(1);
            }
            write_events(w, r, th, 0);
            CHECK(OTF2_EvtWriter_GetNumberOfEvents(w, &nev[id]));
            printf("events %d %" PRIu64 "\n", (int)id, nev[id]);
            CHECK(OTF2_Archive_CloseEvtWriter(ar, w));
        }
    CHECK(OTF2_Archive_CloseEvtFiles(ar));
}

/* Local definitions, as Score-P writes them: the region and string
 * ids of the events are local, and rank 1's clock is corrected:
 * global = local + offset, offset -(local + SKEW) / 2 at the two
 * points and linear between them. */
static void write_local_defs(OTF2_Archive *ar)
{
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
            map = OTF2_IdMap_CreateFromUint64Array(2, string_map, false);
            CHECK(OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_STRING,
                                                   map));
            OTF2_IdMap_Free(map);
            if (r) {
                CHECK(OTF2_DefWriter_WriteClockOffset(dw, 0, -SKEW / 2,
                                                      0.0));
                CHECK(OTF2_DefWriter_WriteClockOffset(
                    dw, 4 * SKEW, -(4 * SKEW + SKEW) / 2, 0.0));
            }
            CHECK(OTF2_Archive_CloseDefWriter(ar, dw));
        }
    CHECK(OTF2_Archive_CloseDefFiles(ar));
}

/* The global definitions' strings. */
static void write_strings(OTF2_GlobalDefWriter *g)
{
    /* strings: 0 "", 1..3 regions, 4.. the rest */
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 0, ""));
    for (uint32_t i = 0; i < 3; i++)
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
    CHECK(OTF2_GlobalDefWriter_WriteString(g, 15, "config"));
    for (uint32_t i = 3; i < NREG; i++)
        CHECK(OTF2_GlobalDefWriter_WriteString(g, 13 + i, names[i]));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_VALUE, value));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_PARAM, "weft-otf2writer"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_POSIX, "POSIX I/O"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_IN, files[F_IN]));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_OUT, files[F_OUT]));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_FD3, "fd 3"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_FD4, "fd 4"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_WORLD, "MPI_COMM_WORLD"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_COMM_LOCS,
                                           "MPI comm locations"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_COMM_GROUP, "MPI world"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, S_MPI, "MPI"));
}

/* Regions, the system tree, location groups and locations (nev: their
 * event counts), the metric and the parameter. */
static void write_system(OTF2_GlobalDefWriter *g, const uint64_t *nev)
{
    for (uint32_t i = 0; i < NREG; i++) {
        OTF2_StringRef name = i < 3 ? 1 + i : 13 + i;
        CHECK(OTF2_GlobalDefWriter_WriteRegion(
            g, i, name, name, 0, i < 3 ? OTF2_REGION_ROLE_FUNCTION
                                       : OTF2_REGION_ROLE_POINT2POINT,
            i < 3 ? OTF2_PARADIGM_USER : OTF2_PARADIGM_MPI,
            OTF2_REGION_FLAG_NONE, 0, 0, 0));
    }
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
    CHECK(OTF2_GlobalDefWriter_WriteParameter(g, 0, 15,
                                              OTF2_PARAMETER_TYPE_STRING));
}

/* MPI as Score-P defines it: the locations of the ranks (their master
 * threads), the world as indices into them, its Comm. */
static void write_mpi_defs(OTF2_GlobalDefWriter *g)
{
    const uint64_t locs[RANKS] = { 0, THREADS }, ranks[RANKS] = { 0, 1 };

    CHECK(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, S_MPI,
                                             OTF2_PARADIGM_CLASS_PROCESS));
    CHECK(OTF2_GlobalDefWriter_WriteGroup(
        g, 0, S_COMM_LOCS, OTF2_GROUP_TYPE_COMM_LOCATIONS,
        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, RANKS, locs));
    CHECK(OTF2_GlobalDefWriter_WriteGroup(
        g, 1, S_COMM_GROUP, OTF2_GROUP_TYPE_COMM_GROUP,
        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, RANKS, ranks));
    CHECK(OTF2_GlobalDefWriter_WriteComm(g, 0, S_WORLD, 1,
                                         OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE));
}

/* POSIX I/O: the files and their handles. */
static void write_io_defs(OTF2_GlobalDefWriter *g)
{
    CHECK(OTF2_GlobalDefWriter_WriteIoParadigm(
        g, 0, S_POSIX, S_POSIX, OTF2_IO_PARADIGM_CLASS_SERIAL,
        OTF2_IO_PARADIGM_FLAG_OS, 0, NULL, NULL, NULL));
    for (uint32_t f = 0; f < NFILES; f++) {
        CHECK(OTF2_GlobalDefWriter_WriteIoRegularFile(g, f, S_IN + f, 0));
        CHECK(OTF2_GlobalDefWriter_WriteIoHandle(
            g, f, S_FD3 + f, f, 0, OTF2_IO_HANDLE_FLAG_NONE,
            OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_IO_HANDLE));
    }
}

/* What a reader must compute (the file's header says the lines). */
static void print_expected(void)
{
    for (int i = 0; i < NREG; i++)
        printf("region %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", names[i],
               visits[i], incl[i], excl[i]);
    printf("message 0 1 %zu %" PRIu64 "\n", sizeof sends0 / sizeof *sends0,
           sends0[0] + sends0[1]);
    printf("message 1 0 1 %" PRIu64 "\n", send1);
    for (int r = 0; r < RANKS; r++)
        printf("mpi %d %" PRIu64 "\n", r, mpi_ns[r]);
    for (int f = 0; f < NFILES; f++)
        printf("io %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", files[f],
               io_read[f], io_written[f], io_ops[f]);
    printf("string %s\n", value);
    printf("span %" PRIu64 " %" PRIu64 "\n", tmin, tmax);
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
    write_all_events(ar, nev);
    write_local_defs(ar);
    g = OTF2_Archive_GetGlobalDefWriter(ar);
    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(
        g, 1000000000, tmin, tmax - tmin + 1, OTF2_UNDEFINED_TIMESTAMP));
    write_strings(g);
    write_system(g, nev);
    write_mpi_defs(g);
    write_io_defs(g);
    CHECK(OTF2_Archive_CloseGlobalDefWriter(ar, g));
    CHECK(OTF2_Archive_Close(ar));
    print_expected();
    return 0;
}
