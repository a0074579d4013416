/* matmul-io: a small workload for the perfmon demo and tests.
 *
 * Multiplies two N x N matrices with T threads (one band of rows each),
 * then writes the result to a file, reads it back and removes it, so a
 * profile shows CPU, memory, threads and disk I/O.  Repeats R rounds.
 *
 *   matmul-io [-n N] [-t THREADS] [-r ROUNDS] [-d DIR]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct band {
    const double *a, *b;
    double *c;
    size_t n, row0, row1;
} band;

static void *multiply(void *arg)
{
    band *w = arg;
    size_t n = w->n;
    for (size_t i = w->row0; i < w->row1; i++) {
        double *ci = w->c + i * n;
        memset(ci, 0, n * sizeof *ci);
        for (size_t k = 0; k < n; k++) {
            double aik = w->a[i * n + k];
            const double *bk = w->b + k * n;
            for (size_t j = 0; j < n; j++)
                ci[j] += aik * bk[j];
        }
    }
    return NULL;
}

static int parse(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    long n = 600, threads = 2, rounds = 3;
    const char *dir = ".";
    int c;
    while ((c = getopt(argc, argv, "n:t:r:d:h")) != -1) {
        switch (c) {
        case 'n':
            if (parse(optarg, 1, 8000, &n))
                goto usage;
            break;
        case 't':
            if (parse(optarg, 1, 256, &threads))
                goto usage;
            break;
        case 'r':
            if (parse(optarg, 1, 100000, &rounds))
                goto usage;
            break;
        case 'd': dir = optarg; break;
        default: goto usage;
        }
    }
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *m = malloc(nn * sizeof *m);
    if (!a || !b || !m) {
        fprintf(stderr, "matmul-io: out of memory for n=%ld\n", n);
        return 1;
    }
    for (size_t i = 0; i < nn; i++) {
        a[i] = (double)(i % 17) / 17.0;
        b[i] = (double)(i % 13) / 13.0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/matmul-io.%d.tmp", dir, (int)getpid());
    double check = 0;
    for (long r = 0; r < rounds; r++) {
        pthread_t tid[256];
        band w[256];
        for (long t = 0; t < threads; t++) {
            w[t] = (band){
                a, b, m, (size_t)n, (size_t)(n * t / threads), (size_t)(n * (t + 1) / threads)};
            if (pthread_create(&tid[t], NULL, multiply, &w[t]) != 0) {
                fprintf(stderr, "matmul-io: cannot start thread\n");
                return 1;
            }
        }
        for (long t = 0; t < threads; t++)
            pthread_join(tid[t], NULL);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(m, sizeof *m, nn, f) != nn || fflush(f) || fsync(fileno(f)) || fclose(f)) {
            fprintf(stderr, "matmul-io: cannot write %s: %s\n", path, strerror(errno));
            return 1;
        }
        f = fopen(path, "rb");
        if (!f || fread(b, sizeof *b, nn, f) != nn || fclose(f)) {
            fprintf(stderr, "matmul-io: cannot read %s\n", path);
            return 1;
        }
        for (size_t i = 0; i < nn; i++)
            b[i] = b[i] / (double)n; /* keep values bounded */
        check += m[nn / 2];
    }
    unlink(path);
    printf("matmul-io: n=%ld threads=%ld rounds=%ld checksum=%.6g\n", n, threads, rounds, check);
    free(a);
    free(b);
    free(m);
    return 0;
usage:
    fprintf(stderr, "usage: matmul-io [-n N (1-8000)] [-t THREADS (1-256)] [-r ROUNDS] [-d DIR]\n");
    return 2;
}
