/* ska_gen: write an SKA perfmon cpu_metrics.json of generated hosts.
 *
 *   ska_gen PATH [HOSTS [SAMPLES]]
 *
 * HOSTS (default 16) x SAMPLES (default 3,600) by pm_synth_write_ska, the
 * input report_bench times the PDF on; bench/html.sh times --html on it
 * beside --pdf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../tests/support/synth.h"

static size_t arg(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v == 0 || v > 1000000) {
        fprintf(stderr, "ska_gen: %s: not a count from 1 to 1000000\n", s);
        exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: ska_gen PATH [HOSTS [SAMPLES]]\n");
        return 2;
    }
    size_t hosts = argc > 2 ? arg(argv[2]) : 16;
    size_t n = argc > 3 ? arg(argv[3]) : 3600;
    if (pm_synth_write_ska(argv[1], hosts, n) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
