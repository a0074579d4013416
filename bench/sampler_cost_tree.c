/* sampler_cost_tree: a process tree for measuring the sampler's cost at
 * scale: N child processes of 2 threads each (the main thread and one
 * more), which sleep for S seconds and exit; the parent waits for them.
 * Run under the sampler: perfmon-sample -o DIR -i 0.05 -d 10 --
 * sampler_cost_tree 512 11.  With a third argument W > 0, every child's
 * second thread wakes every W milliseconds (a little work, as a rank's
 * progress thread does), so the sampler cannot reuse its last read. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double g_secs;
static long g_wake_ms;

static void *second(void *arg)
{
    (void)arg;
    struct timespec ts;
    if (g_wake_ms > 0) {
        ts.tv_sec = g_wake_ms / 1000;
        ts.tv_nsec = (g_wake_ms % 1000) * 1000000L;
    } else {
        ts.tv_sec = (time_t)g_secs + 1;
        ts.tv_nsec = 0;
    }
    for (;;)
        nanosleep(&ts, NULL);
    return NULL;
}

static int child(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, second, NULL) != 0)
        return 1;
    struct timespec ts = {(time_t)g_secs, (long)((g_secs - (double)(time_t)g_secs) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sampler_cost_tree N SECONDS [WAKE_MS]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    g_secs = strtod(argv[2], NULL);
    g_wake_ms = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    if (n < 1 || n > 100000 || !(g_secs > 0) || g_wake_ms < 0) {
        fprintf(stderr, "sampler_cost_tree: N in 1..100000, SECONDS > 0, WAKE_MS >= 0\n");
        return 2;
    }
    for (long i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("sampler_cost_tree: fork"); /* those started end on their own */
            n = i;
            break;
        }
        if (p == 0)
            _exit(child());
    }
    int bad = 0, st;
    while (wait(&st) > 0)
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    return bad;
}
