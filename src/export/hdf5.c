/* --hdf5 FILE: /hosts/<host>/{time, <metric>, <metric>.quality} and
 * /aggregates/<metric>/{time, value, nodes}; units and names as string
 * attributes, the title figures (means, maxima) as number attributes.  Readable by h5py and pandas (docs/analysis.md).
 *
 * The HDF5 library is opened with dlopen when an export asks for it, not
 * linked: with the libraries it pulls in (curl, TLS, Kerberos, LDAP) it
 * adds some 7 MB to the resident size of every perfmon-analyze run,
 * which on a 16 x 3,600 SKA job was a quarter of --stats' peak.
 * PERFMON_HDF5_LIB names another library to open; the default is the one
 * the build found (PM_HDF5_LIB, its soname). */
#include <dlfcn.h>
#include <hdf5.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmon/export.h"
#include "perfmon/fileio.h"

#ifndef PM_HDF5_LIB
#define PM_HDF5_LIB "libhdf5_serial.so.103"
#endif

/* The entry points and predefined types used below, resolved by dlsym. */
static struct h5_api {
#define FN(name) __typeof__(name) *name
    FN(H5dont_atexit);
    FN(H5open);
    FN(H5get_libversion);
    FN(H5Eset_auto2);
    FN(H5Eclear2);
    FN(H5Fcreate);
    FN(H5Fclose);
    FN(H5Gcreate2);
    FN(H5Gclose);
    FN(H5Tcopy);
    FN(H5Tset_size);
    FN(H5Tset_cset);
    FN(H5Tclose);
    FN(H5Screate);
    FN(H5Screate_simple);
    FN(H5Sclose);
    FN(H5Acreate2);
    FN(H5Awrite);
    FN(H5Aclose);
    FN(H5Dcreate2);
    FN(H5Dopen2);
    FN(H5Dwrite);
    FN(H5Dclose);
#undef FN
    const hid_t *C_S1, *IEEE_F64LE, *NATIVE_DOUBLE, *STD_U8LE, *NATIVE_UINT8, *STD_U32LE,
        *NATIVE_UINT32;
    char why[512]; /* empty when loaded */
} h5;

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;

static void h5_load(void)
{
    const char *lib = getenv("PERFMON_HDF5_LIB");
    if (!lib || !*lib)
        lib = PM_HDF5_LIB;
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        snprintf(h5.why, sizeof h5.why, "cannot open the HDF5 library (%s)", e ? e : lib);
        return;
    }
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
#define S(name) {#name, offsetof(struct h5_api, name)}
        S(H5dont_atexit),
        S(H5open),
        S(H5get_libversion),
        S(H5Eset_auto2),
        S(H5Eclear2),
        S(H5Fcreate),
        S(H5Fclose),
        S(H5Gcreate2),
        S(H5Gclose),
        S(H5Tcopy),
        S(H5Tset_size),
        S(H5Tset_cset),
        S(H5Tclose),
        S(H5Screate),
        S(H5Screate_simple),
        S(H5Sclose),
        S(H5Acreate2),
        S(H5Awrite),
        S(H5Aclose),
        S(H5Dcreate2),
        S(H5Dopen2),
        S(H5Dwrite),
        S(H5Dclose),
#undef S
        {"H5T_C_S1_g", offsetof(struct h5_api, C_S1)},
        {"H5T_IEEE_F64LE_g", offsetof(struct h5_api, IEEE_F64LE)},
        {"H5T_NATIVE_DOUBLE_g", offsetof(struct h5_api, NATIVE_DOUBLE)},
        {"H5T_STD_U8LE_g", offsetof(struct h5_api, STD_U8LE)},
        {"H5T_NATIVE_UINT8_g", offsetof(struct h5_api, NATIVE_UINT8)},
        {"H5T_STD_U32LE_g", offsetof(struct h5_api, STD_U32LE)},
        {"H5T_NATIVE_UINT32_g", offsetof(struct h5_api, NATIVE_UINT32)},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(dl, syms[i].name);
        if (!p) {
            snprintf(h5.why, sizeof h5.why, "%s: no symbol %s: not an HDF5 library", lib,
                     syms[i].name);
            return; /* dl stays open: what was resolved is never called */
        }
        memcpy((char *)&h5 + syms[i].off, &p, sizeof p);
    }
    /* No HDF5 clean-up at exit: after a file whose close failed (a
     * write cut short: a full disk, a size limit), HDF5 1.10's own
     * termination closes it again and crashes (H5F__close_cb); the
     * kernel frees what is left. */
    (void)h5.H5dont_atexit(); /* (before any other call, which would start it) */
    /* The layout of the types and constants used here is that of the
     * headers perfmon was built with (as H5check_version demands). */
    unsigned maj = 0, min = 0, rel = 0;
    if (h5.H5get_libversion(&maj, &min, &rel) < 0 || maj != H5_VERS_MAJOR || min != H5_VERS_MINOR) {
        snprintf(h5.why, sizeof h5.why, "%s is HDF5 %u.%u.%u; perfmon was built for %d.%d", lib,
                 maj, min, rel, H5_VERS_MAJOR, H5_VERS_MINOR);
        return;
    }
    if (h5.H5open() < 0)
        snprintf(h5.why, sizeof h5.why, "%s: the HDF5 library does not start", lib);
}

/* The code below reads as if linked: each name is the resolved pointer. */
#undef H5OPEN
#define H5OPEN
#undef H5CHECK
#define H5CHECK
#define H5Eset_auto2 h5.H5Eset_auto2
#define H5Eclear2 h5.H5Eclear2
#define H5Fcreate h5.H5Fcreate
#define H5Fclose h5.H5Fclose
#define H5Gcreate2 h5.H5Gcreate2
#define H5Gclose h5.H5Gclose
#define H5Tcopy h5.H5Tcopy
#define H5Tset_size h5.H5Tset_size
#define H5Tset_cset h5.H5Tset_cset
#define H5Tclose h5.H5Tclose
#define H5Screate h5.H5Screate
#define H5Screate_simple h5.H5Screate_simple
#define H5Sclose h5.H5Sclose
#define H5Acreate2 h5.H5Acreate2
#define H5Awrite h5.H5Awrite
#define H5Aclose h5.H5Aclose
#define H5Dcreate2 h5.H5Dcreate2
#define H5Dopen2 h5.H5Dopen2
#define H5Dwrite h5.H5Dwrite
#define H5Dclose h5.H5Dclose
#define H5T_C_S1_g (*h5.C_S1)
#define H5T_IEEE_F64LE_g (*h5.IEEE_F64LE)
#define H5T_NATIVE_DOUBLE_g (*h5.NATIVE_DOUBLE)
#define H5T_STD_U8LE_g (*h5.STD_U8LE)
#define H5T_NATIVE_UINT8_g (*h5.NATIVE_UINT8)
#define H5T_STD_U32LE_g (*h5.STD_U32LE)
#define H5T_NATIVE_UINT32_g (*h5.NATIVE_UINT32)

static int attr_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    size_t len = strlen(value);
    H5Tset_size(t, len ? len : 1);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t at = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = at < 0 || H5Awrite(at, t, len ? value : " ") < 0 ? -1 : 0;
    if (at >= 0)
        H5Aclose(at);
    H5Sclose(sp);
    H5Tclose(t);
    return rc;
}

/* A float64 scalar attribute (NaN when the figure is not known). */
static int attr_num(hid_t obj, const char *name, double v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    if (sp < 0)
        return -1;
    hid_t at = H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = at < 0 || H5Awrite(at, H5T_NATIVE_DOUBLE, &v) < 0 ? -1 : 0;
    if (at >= 0)
        H5Aclose(at);
    H5Sclose(sp);
    return rc;
}

static int write_ds(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *data,
                    size_t n, const char *unit)
{
    hsize_t dims[1] = {n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    if (sp < 0)
        return -1;
    hid_t ds = H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = ds < 0 ? -1 : 0;
    if (!rc && n && H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        rc = -1;
    if (!rc && unit)
        rc = attr_str(ds, "units", unit);
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(sp);
    return rc;
}

/* HDF5 link names may not contain '/' and may not be "." */
/* A group name for host s (index h): '/' escaped; a name too long for
 * cap is its start, "..." and "#h", unique among the hosts (the whole
 * name is the group's "host" attribute). */
static void link_name(char *out, size_t cap, const char *s, size_t h)
{
    size_t o = 0;
    for (; *s && o + 4 < cap; s++) {
        if (*s == '/') {
            memcpy(out + o, "%2F", 3);
            o += 3;
        } else {
            out[o++] = *s;
        }
    }
    out[o] = 0;
    if (*s) {
        char tail[40];
        int n = snprintf(tail, sizeof tail, "...#%zu", h);
        o = o > cap - 1 - (size_t)n ? cap - 1 - (size_t)n : o;
        while (o > 0 && ((unsigned char)out[o] & 0xC0) == 0x80)
            o--; /* not inside a UTF-8 character */
        memcpy(out + o, tail, (size_t)n + 1);
    }
    if (strcmp(out, ".") == 0)
        snprintf(out, cap, "%%2E");
}

struct pm_hdf5_out {
    hid_t f, hosts, aggs;
    int rc;         /* -1 once anything failed */
    char tmp[4200]; /* written here, renamed to path at the end */
    char path[];    /* for the messages */
};

pm_hdf5_out *pm_hdf5_open(const char *path, pm_error *err)
{
    pthread_once(&h5_once, h5_load);
    if (h5.why[0]) {
        pm_error_set(err, PM_EIO, "%s: %s", path, h5.why);
        return NULL;
    }
    size_t len = strlen(path);
    pm_hdf5_out *w = calloc(1, sizeof *w + len + 1);
    if (!w) {
        pm_error_set(err, PM_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(w->path, path, len + 1);
    if (pm_out_begin(path, w->tmp, sizeof w->tmp, err) != 0) {
        free(w);
        return NULL;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    w->f = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (w->f < 0) {
        /* (the error stack is the calling thread's: --stream's hosts come
         * from worker threads, which would leave it behind) */
        H5Eclear2(H5E_DEFAULT);
        pm_error_set(err, PM_EIO, "%s: cannot create HDF5 file", path);
        free(w);
        return NULL;
    }
    w->hosts = H5Gcreate2(w->f, "hosts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    w->aggs = H5Gcreate2(w->f, "aggregates", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (w->hosts < 0 || w->aggs < 0)
        w->rc = -1;
    return w;
}

void pm_hdf5_host(pm_hdf5_out *w, size_t h, const pm_host *host, const pm_metric_def *const *defs,
                  size_t nm, const pm_series *const *s)
{
    if (w->rc)
        return;
    /* (no error printing: in a thread-safe build, it is set per thread) */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char name[600];
    link_name(name, sizeof name, host->name, h);
    hid_t g = H5Gcreate2(w->hosts, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        w->rc = -1;
        return;
    }
    int rc = attr_str(g, "host", host->name);
    if (!rc)
        rc = write_ds(g, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, host->t, host->n,
                      "s since the epoch");
    for (size_t m = 0; m < nm && !rc; m++) {
        if (!s[m])
            continue;
        const pm_metric_def *d = defs[m];
        char qn[96];
        rc = write_ds(g, d->id, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, s[m]->v, s[m]->n, d->unit);
        if (!rc) {
            hid_t ds = H5Dopen2(g, d->id, H5P_DEFAULT);
            rc = ds < 0 || attr_str(ds, "name", d->name) || attr_num(ds, "mean", s[m]->st.mean) ||
                         attr_num(ds, "max", s[m]->st.max)
                     ? -1
                     : 0;
            if (ds >= 0)
                H5Dclose(ds);
        }
        snprintf(qn, sizeof qn, "%s.quality", d->id);
        if (!rc)
            rc = write_ds(g, qn, H5T_STD_U8LE, H5T_NATIVE_UINT8, s[m]->q, s[m]->n,
                          "0 ok, 1 wrap, 2 reset, 3 gap, 4 interpolated, 5 dropped, 6 held");
    }
    H5Gclose(g);
    if (rc)
        H5Eclear2(H5E_DEFAULT);
    w->rc = rc;
}

int pm_hdf5_close(pm_hdf5_out *w, const pm_analysis *a, pm_error *err)
{
    if (!w)
        return 0;
    int rc = w->rc;
    for (size_t m = 0; a && m < a->nmetrics && !rc; m++) {
        const pm_metric_result *r = &a->metrics[m];
        hid_t g = H5Gcreate2(w->aggs, r->def->id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g < 0) {
            rc = -1;
            break;
        }
        rc = attr_str(g, "comb", r->def->comb == PM_COMB_TOTAL ? "Total" : "Average");
        if (!rc)
            rc = attr_str(g, "name", r->def->name);
        /* The figures of the plot titles: the all-node series' own mean and
         * maximum, and the per-node ones (docs/analysis.md, "Which mean"). */
        if (!rc)
            rc = attr_num(g, "series_mean", r->agg.st.mean) ||
                         attr_num(g, "series_max", r->agg.st.max) ||
                         attr_num(g, "avg_per_node", r->avg_per_node) ||
                         attr_num(g, "max_per_node", r->max_per_node)
                     ? -1
                     : 0;
        if (!rc)
            rc = write_ds(g, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->agg.t, r->agg.n,
                          "s since the epoch");
        if (!rc)
            rc = write_ds(g, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->agg.v, r->agg.n,
                          r->def->unit);
        if (!rc)
            rc =
                write_ds(g, "nodes", H5T_STD_U32LE, H5T_NATIVE_UINT32, r->agg.count, r->agg.n, "1");
        H5Gclose(g);
    }
    if (w->hosts >= 0)
        H5Gclose(w->hosts);
    if (w->aggs >= 0)
        H5Gclose(w->aggs);
    if (H5Fclose(w->f) < 0)
        rc = -1;
    if (rc)
        pm_error_set(err, PM_EIO, "%s: writing HDF5 failed", w->path);
    rc = pm_out_end(w->tmp, w->path, rc ? PM_EIO : 0, err);
    free(w);
    return rc;
}

void pm_hdf5_discard(pm_hdf5_out *w)
{
    if (!w)
        return;
    w->rc = -1; /* (no aggregates) */
    pm_error e;
    int ignored = pm_hdf5_close(w, NULL, &e);
    (void)ignored;
}

int pm_export_hdf5(const pm_analysis *a, const char *path, pm_error *err)
{
    pm_hdf5_out *w = pm_hdf5_open(path, err);
    if (!w)
        return err->code ? err->code : PM_EIO;
    size_t nm = a->nmetrics ? a->nmetrics : 1;
    const pm_metric_def **defs = calloc(nm, sizeof *defs);
    const pm_series **s = calloc(nm, sizeof *s);
    if (!defs || !s) {
        free(defs);
        free(s);
        pm_hdf5_discard(w);
        return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    for (size_t m = 0; m < a->nmetrics; m++)
        defs[m] = a->metrics[m].def;
    for (size_t h = 0; h < a->in.nhosts; h++) {
        for (size_t m = 0; m < a->nmetrics; m++)
            s[m] = a->metrics[m].host[h];
        pm_hdf5_host(w, h, &a->in.hosts[h], defs, a->nmetrics, s);
    }
    free(defs);
    free(s);
    return pm_hdf5_close(w, a, err);
}
