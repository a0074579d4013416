/* perfmon-analyze under mpirun (docs/analysis.md, "MPI"): the transport
 * of split.h over MPI.  Built with mpicc's flags when make finds mpicc
 * (PM_HAVE_MPI); MPI is started only when the process was launched by
 * mpirun, so a plain run needs no MPI runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyze_cli.h"
#include "perfmon/cli.h"
#include "perfmon/endian.h"
#include "perfmon/split.h"

#ifdef PM_HAVE_MPI
#include <mpi.h>

/* A message: its length (8 bytes, TAG_LEN), then the bytes in chunks of
 * at most CHUNK (TAG_DATA), since an MPI count is an int. */
enum { TAG_LEN = 1, TAG_DATA = 2 };
#define CHUNK ((size_t)1 << 30)
/* No one file's result is near this; a length above it is a fault. */
#define MAX_MSG ((uint64_t)64 << 30)

/* Wait for req without holding a CPU: MPI's blocking calls poll the
 * transport flat out, and a rank waits long (rank 0's receiving thread
 * while its workers derive, the other ranks while rank 0 ends a pass), on
 * cores that the workers need when ranks share a node.  Polls with a
 * sleep growing from 1 us to 1 ms, so a message is noticed within twice
 * the time it took to come. */
static int wait_polite(MPI_Request *req, MPI_Status *st)
{
    long ns = 1000;
    for (;;) {
        int done = 0;
        if (MPI_Test(req, &done, st) != MPI_SUCCESS)
            return PM_EIO;
        if (done)
            return 0;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < 1000000)
            ns *= 2;
    }
}

static int mpi_send(void *user, const void *buf, size_t len)
{
    (void)user;
    unsigned char head[8];
    pm_put_u64(head, len);
    /* The length in synchronous mode: done when rank 0 has taken it,
     * which it does when it has room for the message (--stream), so this
     * rank waits politely there and the bytes then go at once. */
    MPI_Request req;
    if (MPI_Issend(head, 8, MPI_BYTE, 0, TAG_LEN, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_polite(&req, MPI_STATUS_IGNORE))
        return PM_EIO;
    for (size_t at = 0; at < len; at += CHUNK) {
        size_t n = len - at < CHUNK ? len - at : CHUNK;
        if (MPI_Send((const char *)buf + at, (int)n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            return PM_EIO;
    }
    return 0;
}

static int mpi_recv(void *user, int *from, void **buf, size_t *len)
{
    (void)user;
    unsigned char head[8];
    MPI_Status st;
    MPI_Request req;
    *buf = NULL;
    if (MPI_Irecv(head, 8, MPI_BYTE, *from >= 0 ? *from : MPI_ANY_SOURCE, TAG_LEN, MPI_COMM_WORLD,
                  &req) != MPI_SUCCESS ||
        wait_polite(&req, &st))
        return PM_EIO;
    *from = st.MPI_SOURCE;
    uint64_t n = pm_get_u64(head);
    if (n > MAX_MSG)
        return PM_ELIMIT;
    char *b = malloc(n ? (size_t)n : 1);
    if (!b)
        return PM_ENOMEM;
    for (size_t at = 0; at < n; at += CHUNK) {
        size_t k = n - at < CHUNK ? (size_t)n - at : CHUNK;
        if (MPI_Recv(b + at, (int)k, MPI_BYTE, *from, TAG_DATA, MPI_COMM_WORLD, &st) !=
            MPI_SUCCESS) {
            free(b);
            return PM_EIO;
        }
        int got = 0;
        MPI_Get_count(&st, MPI_BYTE, &got);
        if ((size_t)got != k) {
            free(b);
            return PM_EFORMAT;
        }
    }
    *buf = b;
    *len = (size_t)n;
    return 0;
}

/* --stream's requests: the length, then the bytes in chunks, from rank 0
 * to every rank. */
static int mpi_bcast(void *user, void **buf, size_t *len)
{
    (void)user;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    unsigned char head[8];
    MPI_Request req;
    if (rank == 0)
        pm_put_u64(head, *len);
    if (MPI_Ibcast(head, 8, MPI_BYTE, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_polite(&req, MPI_STATUS_IGNORE))
        return PM_EIO;
    uint64_t n = pm_get_u64(head);
    if (n > MAX_MSG)
        return PM_ELIMIT;
    char *b = *buf;
    if (rank && !(b = malloc(n ? (size_t)n : 1)))
        return PM_ENOMEM; /* (MPI aborts the job at the next collective) */
    for (size_t at = 0; at < n; at += CHUNK) {
        size_t k = n - at < CHUNK ? (size_t)n - at : CHUNK;
        if (MPI_Bcast(b + at, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
            if (rank)
                free(b);
            return PM_EIO;
        }
    }
    if (rank) {
        *buf = b;
        *len = (size_t)n;
    }
    return 0;
}

static int mpi_status(void *user, int rc)
{
    (void)user;
    int v = rc;
    /* (the other ranks wait here while rank 0 analyses: politely) */
    MPI_Request req;
    if (MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_polite(&req, MPI_STATUS_IGNORE))
        return rc ? rc : PM_EIO;
    return v;
}

/* Launched by mpirun (Open MPI, or a PMI launcher such as MPICH's or
 * SLURM's srun --mpi)? */
static int launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

static void mpi_name(char *buf, size_t cap)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(lib, &n) != MPI_SUCCESS)
        lib[0] = 0;
    lib[strcspn(lib, ",\n")] = 0;
    snprintf(buf, cap, "built in (%s, MPI %d.%d): mpirun -n N perfmon-analyze ...", lib,
             MPI_VERSION, MPI_SUBVERSION);
}

int pm_analyze_mpi_main(int argc, char **argv)
{
    char name[MPI_MAX_LIBRARY_VERSION_STRING + 64];
    mpi_name(name, sizeof name);
    if (!launched())
        return pm_analyze_main_split(argc, argv, NULL, name);
    int provided = 0, rank = 0, size = 1;
    /* The main thread calls MPI, and with --stream rank 0's receiving
     * thread, never at the same time: MPI_THREAD_SERIALIZED (without it,
     * --stream is refused). */
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "perfmon-analyze: MPI_Init failed\n");
        return PM_EXIT_USAGE;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Several ranks on one node share its CPUs between their threads. */
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    long nlocal = local ? strtol(local, NULL, 10) : 0;
    if (nlocal > 1 && !getenv("PM_THREADS")) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        char t[24];
        snprintf(t, sizeof t, "%ld", ncpu / nlocal > 1 ? ncpu / nlocal : 1);
        setenv("PM_THREADS", t, 1);
    }
    /* Only rank 0 prints. */
    if (rank > 0 && (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))) {
        MPI_Abort(MPI_COMM_WORLD, PM_EXIT_USAGE);
        return PM_EXIT_USAGE;
    }
    pm_split sp = {.rank = rank,
                   .size = size,
                   .send = mpi_send,
                   .recv = mpi_recv,
                   .bcast = mpi_bcast,
                   .status = mpi_status,
                   .threads = provided >= MPI_THREAD_SERIALIZED};
    int rc = pm_analyze_main_split(argc, argv, &sp, name);
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    return rc;
}

#else

int pm_analyze_mpi_main(int argc, char **argv)
{
    /* Under mpirun each process would analyse every input alone. */
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    if (!n)
        n = getenv("PMI_SIZE");
    if (n && strtol(n, NULL, 10) > 1)
        fprintf(stderr,
                "perfmon-analyze: warning: built without MPI (--version): each of the %s "
                "processes mpirun started analyses all the inputs\n",
                n);
    return pm_analyze_main_split(argc, argv, NULL, NULL);
}

#endif
