/* sampler_cost_cpu: run a command and print its CPU time (user + system,
 * from wait4's rusage, itself and its waited-for children) per sample, in
 * milliseconds: sampler_cost_cpu N CMD ARGS... divides by N.  Used by
 * bench/run.sh for sadc (sysstat) beside the sampler. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sampler_cost_cpu N CMD [ARGS...]\n");
        return 2;
    }
    char *end;
    long n = strtol(argv[1], &end, 10);
    if (*end || n < 1) {
        fprintf(stderr, "sampler_cost_cpu: N must be a positive number\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("sampler_cost_cpu: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "sampler_cost_cpu: %s: cannot run\n", argv[2]);
        _exit(127);
    }
    int st;
    struct rusage ru;
    pid_t w;
    while ((w = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR) {
    }
    if (w != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "sampler_cost_cpu: %s failed\n", argv[2]);
        return 1;
    }
    double us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
                (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
    printf("%.3f\n", us / 1e3 / (double)n);
    return 0;
}
