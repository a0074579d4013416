/* --hdf5 FILE: /hosts/<host>/{time, <metric>, <metric>.quality} and
 * /aggregates/<metric>/{time, value, nodes}; units and names as string
 * attributes.  Readable by h5py and pandas (docs/analysis.md). */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "perfmon/export.h"

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

int pm_export_hdf5(const pm_analysis *a, const char *path, pm_error *err)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return pm_error_set(err, PM_EIO, "%s: cannot create HDF5 file", path);
    int rc = 0;
    hid_t hosts = H5Gcreate2(f, "hosts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t aggs = H5Gcreate2(f, "aggregates", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (hosts < 0 || aggs < 0)
        rc = -1;
    char name[600];
    for (size_t h = 0; h < a->nhosts && !rc; h++) {
        link_name(name, sizeof name, a->hosts[h].name, h);
        hid_t g = H5Gcreate2(hosts, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g < 0) {
            rc = -1;
            break;
        }
        rc = attr_str(g, "host", a->hosts[h].name);
        if (!rc)
            rc = write_ds(g, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, a->hosts[h].t,
                          a->hosts[h].n, "s since the epoch");
        for (size_t m = 0; m < a->nmetrics && !rc; m++) {
            const pm_series *s = a->metrics[m].host[h];
            if (!s)
                continue;
            const pm_metric_def *d = a->metrics[m].def;
            char qn[96];
            rc = write_ds(g, d->id, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, s->v, s->n, d->unit);
            if (!rc) {
                hid_t ds = H5Dopen2(g, d->id, H5P_DEFAULT);
                rc = ds < 0 || attr_str(ds, "name", d->name) ? -1 : 0;
                if (ds >= 0)
                    H5Dclose(ds);
            }
            snprintf(qn, sizeof qn, "%s.quality", d->id);
            if (!rc)
                rc = write_ds(g, qn, H5T_STD_U8LE, H5T_NATIVE_UINT8, s->q, s->n,
                              "0 ok, 1 wrap, 2 reset, 3 gap, 4 interpolated, 5 dropped");
        }
        H5Gclose(g);
    }
    for (size_t m = 0; m < a->nmetrics && !rc; m++) {
        const pm_metric_result *r = &a->metrics[m];
        hid_t g = H5Gcreate2(aggs, r->def->id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g < 0) {
            rc = -1;
            break;
        }
        rc = attr_str(g, "comb", r->def->comb == PM_COMB_TOTAL ? "Total" : "Average");
        if (!rc)
            rc = attr_str(g, "name", r->def->name);
        if (!rc)
            rc = write_ds(g, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->agg.t, r->agg.n,
                          "s since the epoch");
        if (!rc)
            rc = write_ds(g, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->agg.v, r->agg.n,
                          r->def->unit);
        if (!rc)
            rc = write_ds(g, "nodes", H5T_STD_U32LE, H5T_NATIVE_UINT32, r->agg.count, r->agg.n,
                          "1");
        H5Gclose(g);
    }
    if (hosts >= 0)
        H5Gclose(hosts);
    if (aggs >= 0)
        H5Gclose(aggs);
    if (H5Fclose(f) < 0)
        rc = -1;
    if (rc)
        return pm_error_set(err, PM_EIO, "%s: writing HDF5 failed", path);
    return 0;
}
