/* perfmon-sample mark: record the start or end of a job phase on this node
 * (docs/perfmon-sample.md, "Phases").  One locked append per event into
 * DIR/<host>.events; safe from many processes at once. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmon/cli.h"
#include "perfmon/dirs.h"
#include "perfmon/parse.h"
#include "perfmon/phase.h"
#include "perfmon/sampler.h"
#include "sample_cli.h"

static void mark_usage(FILE *f)
{
    fprintf(
        f,
        "usage: perfmon-sample mark -o DIR [--host NAME] PHASE start|end [KEY=VALUE...]\n"
        "       perfmon-sample mark -o DIR [--host NAME] PHASE [once] diff=SECONDS [KEY=VALUE...]\n"
        "Record the start or end of a job phase on this node, with the same clocks as\n"
        "the samples, into DIR/<host>.events.  Starts and ends pair by PHASE and by the\n"
        "img= (else key=, else id=) attribute; a one-shot phase (diff=SECONDS) ended now\n"
        "and lasted SECONDS.\n"
        "  -o, --output DIR   the job's profile directory (or $PERFMON_DIR)\n"
        "      --host NAME    host name (default: SLURMD_NODENAME or hostname)\n"
        "  -h, --help         this text\n"
        "      --version      the version\n"
        "exit status: 0 recorded, 2 usage error, 3 the event could not be written\n"
        "examples:\n"
        "  perfmon-sample mark -o prof solve start img=3\n"
        "  perfmon-sample mark -o prof checkpoint once diff=12.5\n");
}

int pm_mark_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"host", required_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    const char *dir = getenv("PERFMON_DIR"), *host = NULL;
    int c;
    optind = 0;
    opterr = 0;
    /* "+": stop at the first operand, so attribute values may start with '-'. */
    while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': dir = optarg; break;
        case 'H': host = optarg; break;
        case 'h': mark_usage(stdout); return PM_EXIT_OK;
        case 'V': return pm_cli_version("perfmon-sample mark");
        default: {
            pm_error err;
            pm_error_clear(&err);
            (void)pm_cli_refused(c, argv, "+:o:h", longopts, &err);
            fprintf(stderr, "perfmon-sample mark: %s\n", err.msg);
            return PM_EXIT_USAGE;
        }
        }
    }
    if (!dir || !*dir) {
        fprintf(stderr, "perfmon-sample mark: no directory: give -o DIR (or set PERFMON_DIR)\n");
        return PM_EXIT_USAGE;
    }
    if (optind >= argc) {
        fprintf(stderr, "perfmon-sample mark: no phase name\n");
        mark_usage(stderr);
        return PM_EXIT_USAGE;
    }
    const char *name = argv[optind++];
    int edge = -1;
    if (optind < argc && strchr(argv[optind], '=') == NULL) {
        const char *e = argv[optind++];
        if (strcmp(e, "start") == 0)
            edge = PM_EDGE_START;
        else if (strcmp(e, "end") == 0)
            edge = PM_EDGE_END;
        else if (strcmp(e, "once") == 0)
            edge = PM_EDGE_ONESHOT;
        else {
            fprintf(stderr, "perfmon-sample mark: \"%s\" is not start, end or once\n", e);
            return PM_EXIT_USAGE;
        }
    }
    /* diff=SECONDS makes a one-shot phase; the other KEY=VALUEs are kept. */
    double diff = NAN;
    const char *attrs[PM_EVENT_ATTRS_MAX + 1];
    size_t nattrs = 0;
    for (; optind < argc; optind++) {
        const char *a = argv[optind];
        if (strncmp(a, "diff=", 5) == 0) {
            if (pm_parse_double(a + 5, &diff) != 0 || diff < 0) {
                fprintf(stderr, "perfmon-sample mark: diff=\"%s\" is not a duration in seconds\n",
                        a + 5);
                return PM_EXIT_USAGE;
            }
            continue;
        }
        if (nattrs > PM_EVENT_ATTRS_MAX) {
            fprintf(stderr, "perfmon-sample mark: at most %d attributes\n", PM_EVENT_ATTRS_MAX);
            return PM_EXIT_USAGE;
        }
        attrs[nattrs++] = a;
    }
    if (!isnan(diff)) {
        if (edge != -1 && edge != PM_EDGE_ONESHOT) {
            fprintf(stderr, "perfmon-sample mark: diff= goes with a one-shot phase, not %s\n",
                    edge == PM_EDGE_START ? "start" : "end");
            return PM_EXIT_USAGE;
        }
        edge = PM_EDGE_ONESHOT;
    }
    if (edge == -1) {
        fprintf(stderr, "perfmon-sample mark: say start, end, or once with diff=SECONDS\n");
        return PM_EXIT_USAGE;
    }
    char hbuf[256];
    if (!host) {
        const char *s = getenv("SLURMD_NODENAME");
        if (s && *s)
            host = s;
        else if (gethostname(hbuf, sizeof hbuf - 1) == 0) {
            hbuf[sizeof hbuf - 1] = 0;
            host = hbuf;
        } else
            host = "unknown";
    }
    pm_error err;
    pm_error_clear(&err);
    /* A mark may come before the sampler has started (it runs in the
     * background of the job script): DIR is created here as the sampler
     * creates it, with its parents, and must be writable. */
    int rc = pm_mkdir_p(dir, &err);
    if (rc == 0 && access(dir, W_OK | X_OK) != 0)
        rc = pm_error_sys(&err, PM_EIO, errno, "%s: not writable", dir);
    if (rc == 0)
        rc = pm_event_append(dir, host, name, edge, diff, attrs, nattrs, &err);
    if (rc) {
        fprintf(stderr, "perfmon-sample mark: %s\n", err.msg);
        return rc == PM_EUSAGE ? PM_EXIT_USAGE : PM_EXIT_OUTPUT;
    }
    return PM_EXIT_OK;
}
