/* tree-workload: a job-shaped process tree that logs the kernel's own
 * accounting of itself, so that a sampler's process-tree figures can be
 * checked interval by interval (tests/cli/proctree_accounting.sh).
 *
 * Phases, each PHASE seconds (-p, default 1.5), at most 2 CPUs busy:
 *   join     2 threads spin while the main thread waits in pthread_join;
 *   threads  short-lived threads (30-120 ms), 2 at a time, come and go;
 *   forks    children that spin 50-200 ms and are reaped at once;
 *   orphan   a child forks a grandchild and exits: the grandchild, an
 *            orphan re-parented to a subreaper or init, spins;
 *   zombies  2 children spin 300 ms and exit; they stay unreaped zombies
 *            until the end of the phase;
 *   io       bursts of write + fsync of -b BYTES (default 4 MiB) to a new
 *            file in -d DIR, dropped from the page cache and read back.
 *
 * Every process writes lines to standard output (one write(2) each, under
 * PIPE_BUF, so lines from several processes do not mix; make it a pipe,
 * whose writes are not block I/O):
 *   T <t0_ns> <t1_ns> <pid> <ppid> <kind> <self_us> <children_us> <read_bytes> <write_bytes>
 * every ~10 ms and once more just before the process exits (kind "exit"
 * then, "main", "child" or "orphan" before).  self_us is getrusage
 * (RUSAGE_SELF) user + system time, children_us RUSAGE_CHILDREN, the bytes
 * are read_bytes and write_bytes of /proc/self/io (-1 when unreadable),
 * all taken between the times t0_ns and t1_ns.
 *   P <mono_ns> <name>          a phase starts
 *   W <mono_ns> <bytes>         a burst of bytes was written and synced
 * mono_ns is CLOCK_MONOTONIC, the clock of perfmon's sample times.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double g_phase = 1.5;
static const char *g_dir = ".";
static long g_bytes = 4L << 20;
static volatile int g_stop_logger;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void put(const char *line, size_t n)
{
    while (n > 0) {
        ssize_t w = write(1, line, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        line += w;
        n -= (size_t)w;
    }
}

static long long us(const struct rusage *ru)
{
    return (long long)ru->ru_utime.tv_sec * 1000000 + ru->ru_utime.tv_usec +
           (long long)ru->ru_stime.tv_sec * 1000000 + ru->ru_stime.tv_usec;
}

static void io_bytes(long long *rb, long long *wb)
{
    *rb = *wb = -1;
    int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nread_bytes: ");
    const char *q = strstr(buf, "\nwrite_bytes: ");
    if (p && q) {
        *rb = strtoll(p + 13, NULL, 10);
        *wb = strtoll(q + 14, NULL, 10);
    }
}

/* One T line: this process's accounting now. */
static void report(const char *kind)
{
    long long t0 = (long long)now_ns();
    struct rusage self, ch;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &ch);
    long long rb, wb;
    io_bytes(&rb, &wb);
    char line[200];
    int n = snprintf(line, sizeof line, "T %lld %lld %d %d %s %lld %lld %lld %lld\n", t0,
                     (long long)now_ns(), (int)getpid(), (int)getppid(), kind, us(&self), us(&ch),
                     rb, wb);
    put(line, (size_t)n);
}

static void mark(const char *tag, long long v, const char *name)
{
    char line[120];
    int n = name ? snprintf(line, sizeof line, "%s %lld %s\n", tag, (long long)now_ns(), name)
                 : snprintf(line, sizeof line, "%s %lld %lld\n", tag, (long long)now_ns(), v);
    put(line, (size_t)n);
}

/* Spin for sec seconds of wall time. */
static void spin(double sec)
{
    int64_t end = now_ns() + (int64_t)(sec * 1e9);
    volatile uint64_t x = 0;
    while (now_ns() < end)
        for (int i = 0; i < 1000; i++)
            x += (uint64_t)i;
}

/* A child's life: spin, reporting every 10 ms, then report and exit. */
static void child_spin(double sec, const char *kind)
{
    int64_t end = now_ns() + (int64_t)(sec * 1e9);
    report(kind);
    while (now_ns() < end) {
        double left = (double)(end - now_ns()) / 1e9;
        spin(left < 0.01 ? left : 0.01);
        report(kind);
    }
    report("exit");
    _exit(0);
}

static void *logger(void *arg)
{
    (void)arg;
    while (!g_stop_logger) {
        report("main");
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *spinner(void *arg)
{
    spin(*(double *)arg);
    return NULL;
}

static void phase_join(void)
{
    pthread_t t[2];
    double d = g_phase;
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, spinner, &d);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

static void phase_threads(void)
{
    int64_t end = now_ns() + (int64_t)(g_phase * 1e9);
    double d[2];
    unsigned k = 0;
    while (now_ns() < end) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++) {
            d[i] = 0.03 + 0.03 * (double)((k++ * 7) % 4);
            pthread_create(&t[i], NULL, spinner, &d[i]);
        }
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    }
}

static void phase_forks(void)
{
    int64_t end = now_ns() + (int64_t)(g_phase * 1e9);
    unsigned k = 0;
    while (now_ns() < end) {
        pid_t p[2];
        for (int i = 0; i < 2; i++) {
            double d = 0.05 + 0.05 * (double)((k++ * 5) % 4);
            p[i] = fork();
            if (p[i] == 0)
                child_spin(d, "child");
        }
        for (int i = 0; i < 2; i++)
            if (p[i] > 0)
                waitpid(p[i], NULL, 0);
    }
}

static void phase_orphan(void)
{
    pid_t b = fork();
    if (b == 0) {
        pid_t parent = getpid();
        pid_t c = fork();
        if (c == 0) {
            /* Spin only once orphaned (re-parented when b has exited). */
            while (getppid() == parent) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
            }
            child_spin(g_phase * 0.8, "orphan");
        }
        report("exit");
        _exit(0);
    }
    waitpid(b, NULL, 0);
    struct timespec ts = {(time_t)g_phase, (long)((g_phase - (double)(time_t)g_phase) * 1e9)};
    nanosleep(&ts, NULL);
}

static void phase_zombies(void)
{
    pid_t p[2];
    for (int i = 0; i < 2; i++) {
        p[i] = fork();
        if (p[i] == 0)
            child_spin(0.3, "child");
    }
    struct timespec ts = {(time_t)g_phase, (long)((g_phase - (double)(time_t)g_phase) * 1e9)};
    nanosleep(&ts, NULL);
    for (int i = 0; i < 2; i++)
        if (p[i] > 0)
            waitpid(p[i], NULL, 0);
}

static int phase_io(void)
{
    char *buf = malloc((size_t)g_bytes);
    if (!buf)
        return -1;
    for (long i = 0; i < g_bytes; i++)
        buf[i] = (char)(i * 131 + 7);
    int64_t end = now_ns() + (int64_t)(g_phase * 1e9);
    char path[4096];
    snprintf(path, sizeof path, "%s/tree-workload.%d.tmp", g_dir, (int)getpid());
    int rc = 0;
    while (now_ns() < end && rc == 0) {
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
            rc = -1;
            break;
        }
        long done = 0;
        while (done < g_bytes) {
            ssize_t w = write(fd, buf + done, (size_t)(g_bytes - done));
            if (w <= 0) {
                rc = -1;
                break;
            }
            done += w;
        }
        if (rc == 0 && fsync(fd) != 0)
            rc = -1;
        mark("W", done, NULL);
        /* Drop it from the page cache and read it back from the disk. */
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        lseek(fd, 0, SEEK_SET);
        while (read(fd, buf, (size_t)g_bytes) > 0) {
        }
        close(fd);
        unlink(path);
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
    }
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "p:d:b:")) != -1) {
        switch (c) {
        case 'p': g_phase = atof(optarg); break;
        case 'd': g_dir = optarg; break;
        case 'b': g_bytes = atol(optarg) & ~4095L; break;
        default:
            fprintf(stderr, "usage: tree-workload [-p PHASE_SECONDS] [-d DIR] [-b BYTES]\n");
            return 2;
        }
    }
    if (g_phase <= 0 || g_phase > 60 || g_bytes <= 0) {
        fprintf(stderr, "tree-workload: bad -p or -b\n");
        return 2;
    }
    pthread_t lt;
    report("main");
    if (pthread_create(&lt, NULL, logger, NULL) != 0)
        return 1;
    mark("P", 0, "join");
    phase_join();
    mark("P", 0, "threads");
    phase_threads();
    mark("P", 0, "forks");
    phase_forks();
    mark("P", 0, "orphan");
    phase_orphan();
    mark("P", 0, "zombies");
    phase_zombies();
    mark("P", 0, "io");
    int rc = phase_io();
    mark("P", 0, "end");
    g_stop_logger = 1;
    pthread_join(lt, NULL);
    report("exit");
    return rc ? 1 : 0;
}
