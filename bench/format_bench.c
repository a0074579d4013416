/* format_bench: bytes per sample and decoding speed of the binary profile
 * versions 1, 2 and 3 (docs/format.md).  Each input profile (a real run's)
 * is written again in each version with pm_writer, and a generated
 * 24-hour profile (pm_synth, all 32 columns, 1 s) too; per file: the bytes per sample (the file less its header, the
 * same in both), the MB per day at 1 s, the reading time per value
 * (file to values, the least CPU time of nine reads: ns/v; and from the
 * file's bytes in memory: mem), and the writer's CPU time per sample
 * (us/w).  Used by bench/run.sh.
 *
 *   format_bench [PROFILE...] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfmon/fileio.h"
#include "perfmon/profile.h"
#include "../tests/support/synth.h"
#include "perfmon/writer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Write p's samples again as fmt to path; *hdr gets the size with no
 * sample (header, metadata), *us the writer's CPU time per sample (the
 * encoding and the write(2) of each record: the sampler's cost). */
static int rewrite(const pm_profile *p, int fmt, const char *path, off_t *hdr, double *us)
{
    pm_error err;
    pm_writer *w;
    unlink(path);
    if (pm_writer_open(&w, path, fmt, &p->info, p->cols, p->ncols, p->meta_json, &err))
        goto fail;
    struct stat st;
    if (pm_writer_sync(w, &err) || stat(path, &st))
        goto fail;
    *hdr = st.st_size;
    pm_value *v = calloc(p->ncols + 1, sizeof *v);
    uint8_t *pr = calloc(p->ncols / 8 + 1, 1);
    double spent = 0;
    for (size_t i = 0; i < p->n; i++) {
        memset(pr, 0, p->ncols / 8 + 1);
        for (size_t c = 0; c < p->ncols; c++) {
            double x = p->values[c][i];
            if (isnan(x))
                continue;
            pr[c / 8] |= (uint8_t)(1u << (c % 8));
            if (p->cols[c].type == PM_U64)
                v[c].u = (uint64_t)x;
            else
                v[c].f = x;
        }
        double t0 = now();
        if (pm_writer_sample(w, p->t_mono_ns[i], p->t_wall_ns[i], v, pr, &err))
            goto fail;
        spent += now() - t0;
    }
    *us = spent / (double)(p->n ? p->n : 1) * 1e6;
    free(v);
    free(pr);
    if (p->has_end && pm_writer_end(w, &p->end, &err))
        goto fail;
    return pm_writer_close(w, &err);
fail:
    fprintf(stderr, "format_bench: %s\n", err.msg);
    return -1;
}

/* The least CPU time of nine reads of path (pm_profile_read_hinted into
 * a buffer, as the analysis reads; the file in the page cache), per
 * value: file to decoded values, what the analysis pays. */
static double decode_ns(const char *path, size_t *n, size_t *ncols)
{
    pm_error err;
    pm_read_buf rb = {0};
    double t[9];
    for (int r = 0; r < 9; r++) {
        pm_profile *p;
        double t0 = now();
        if (pm_profile_read_hinted(path, NULL, &rb, &p, &err)) {
            fprintf(stderr, "format_bench: %s\n", err.msg);
            pm_read_buf_free(&rb);
            return -1;
        }
        t[r] = now() - t0;
        *n = p->n;
        *ncols = p->ncols;
        pm_profile_free(p);
    }
    pm_read_buf_free(&rb);
    qsort(t, 9, sizeof t[0], cmp_double);
    return t[0] / ((double)*n * (double)*ncols) * 1e9;
}

/* The same from the file's bytes in memory (pm_profile_decode_bin): the
 * decoder alone. */
static double decode_mem_ns(const char *path)
{
    pm_error err;
    char *buf;
    size_t len, nv = 0;
    if (pm_read_whole(path, (size_t)1 << 31, &buf, &len, &err)) {
        fprintf(stderr, "format_bench: %s\n", err.msg);
        return -1;
    }
    double t[9];
    for (int r = 0; r < 9; r++) {
        pm_profile *p;
        double t0 = now();
        if (pm_profile_decode_bin(path, (const unsigned char *)buf, len, &p, &err)) {
            fprintf(stderr, "format_bench: %s\n", err.msg);
            free(buf);
            return -1;
        }
        t[r] = now() - t0;
        nv = p->n * p->ncols;
        pm_profile_free(p);
    }
    free(buf);
    qsort(t, 9, sizeof t[0], cmp_double);
    return t[0] / (double)(nv ? nv : 1) * 1e9;
}

static int row(const char *label, const pm_profile *p, const char *dir)
{
    static const int fmt[3] = {PM_FMT_BIN1, PM_FMT_BIN2, PM_FMT_BIN};
    char path[3][4200];
    double bps[3], ns[3], mem[3], us[3];
    for (int v = 0; v < 3; v++) {
        off_t hdr;
        struct stat st;
        snprintf(path[v], sizeof path[v], "%s/v%d.pmp", dir, v + 1);
        if (rewrite(p, fmt[v], path[v], &hdr, &us[v]) || stat(path[v], &st))
            return -1;
        bps[v] = (double)(st.st_size - hdr) / (double)p->n;
        size_t n, nc;
        ns[v] = decode_ns(path[v], &n, &nc);
        mem[v] = decode_mem_ns(path[v]);
        unlink(path[v]);
        if (ns[v] < 0 || mem[v] < 0)
            return -1;
    }
    printf("%-28s %7zu %5zu %8.1f %8.1f %8.1f %6.3f %6.3f %9.2f %9.2f %7.2f %7.2f %7.2f %6.2f "
           "%6.2f %6.2f %7.2f %7.2f %7.2f\n",
           label, p->n, p->ncols, bps[0], bps[1], bps[2], bps[1] / bps[0], bps[2] / bps[0],
           bps[0] * 86400 / 1e6, bps[2] * 86400 / 1e6, ns[0], ns[1], ns[2], mem[0], mem[1], mem[2],
           us[0], us[1], us[2]);
    return 0;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/pm-fmt-bench.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    printf("%-28s %7s %5s %8s %8s %8s %6s %6s %9s %9s %7s %7s %7s %6s %6s %6s %7s %7s %7s\n",
           "profile", "samples", "cols", "v1 B/smp", "v2 B/smp", "v3 B/smp", "v2/v1", "v3/v1",
           "v1 MB/day", "v3 MB/day", "v1 ns/v", "v2 ns/v", "v3 ns/v", "v1 mem", "v2 mem", "v3 mem",
           "v1 us/w", "v2 us/w", "v3 us/w");
    int bad = 0;
    for (int a = 1; a < argc; a++) {
        pm_profile *p;
        pm_error err;
        if (pm_profile_read(argv[a], &p, &err)) {
            fprintf(stderr, "format_bench: %s\n", err.msg);
            bad = 1;
            continue;
        }
        const char *base = strrchr(argv[a], '/');
        bad |= row(base ? base + 1 : argv[a], p, dir) != 0;
        pm_profile_free(p);
    }
    /* The generated 24-hour profile: all 32 columns at 1 s, RAPL wrapping,
     * a CPU wave (true floats), a counter reset and a gap. */
    char path[4200];
    snprintf(path, sizeof path, "%s/synth.pmp", dir);
    pm_synth s;
    pm_synth_init(&s, "node0000");
    s.n = 86400;
    s.rapl_wrap = 262143328850ull + 1;
    s.rss_growth = 1000;
    s.cpu_wave = 20;
    s.wave_period_s = 600;
    s.reset_at = 40000;
    s.gap_at = 1000;
    pm_error err;
    pm_profile *p = NULL;
    if (pm_synth_write(path, &s, &err) || pm_profile_read(path, &p, &err)) {
        fprintf(stderr, "format_bench: %s\n", err.msg);
        bad = 1;
    } else {
        bad |= row("generated 24 h, 32 columns", p, dir) != 0;
    }
    pm_profile_free(p);
    unlink(path);
    rmdir(dir);
    return bad;
}
