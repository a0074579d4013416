/* bigjob: write a many-node job for the report at scale (issue 18).
 *
 *   bigjob DIR [HOSTS [SAMPLES]]
 *
 * HOSTS profiles (default 10,000) of SAMPLES samples at 1 s (default 120)
 * into DIR (created), by pm_synth_write_groups: three groups of nodes that
 * behave differently, spread over the host names, some idle nodes, some
 * that lost samples and some with a clock offset (synth.h).  bench/run.sh
 * then times `perfmon-analyze DIR --pdf --stats` on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../tests/support/synth.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bigjob DIR [HOSTS [SAMPLES]]\n");
        return 2;
    }
    size_t hosts = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000;
    size_t samples = argc > 3 ? strtoul(argv[3], NULL, 10) : 120;
    if (hosts == 0 || samples < 10) {
        fprintf(stderr, "bigjob: at least 1 host and 10 samples\n");
        return 2;
    }
    if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "bigjob: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    pm_error err;
    if (pm_synth_write_groups(argv[1], hosts, samples, &err) != 0) {
        fprintf(stderr, "bigjob: %s\n", err.msg);
        return 1;
    }
    return 0;
}
