/* Reading the inputs on several processes (split.h; docs/analysis.md,
 * "MPI"): each rank reads the files i with i % size == rank; the others
 * send theirs to rank 0 one message per file.
 *
 * Messages (every integer a varint, strings length-prefixed):
 *   FILE   u8 1, index, path, deferred u8, and unless deferred: -rc,
 *          err.sys, err.msg, ignored (u8 + string), size + 1, ngot, u8
 *          whether the survey shrank them (--stream), then per profile
 *          its clock (4 doubles as bits), its samples before the shrink
 *          (if shrunk) and pm_profile_pack;
 *   END    u8 2, files sent, files listed;
 *   ABORT  u8 3, -rc, message.
 * Every rank sends FILE messages for its share then END, or ABORT at the
 * first problem; rank 0 receives until each rank has sent END or ABORT, so
 * no rank waits for ever, whatever failed where. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exchange.h"
#include "perfmon/pack.h"
#include "perfmon/clock.h"

enum { MSG_FILE = 1, MSG_END = 2, MSG_ABORT = 3 };

/* Events and Scanner files are small, and their phases do not travel:
 * rank 0 reads them again. */
static int deferred(const slot *sl)
{
    return sl->events.n || sl->phases.n || sl->phases.scanner_files || sl->phases.nproblems;
}

static void slot_clear(slot *sl)
{
    for (size_t k = 0; k < sl->ngot; k++)
        pm_profile_free(sl->got[k]);
    free(sl->got);
    free(sl->clocks);
    free(sl->nfull);
    free(sl->ignored);
    pm_event_list_free(&sl->events);
    pm_phase_set_free(&sl->phases);
    const char *path = sl->path;
    memset(sl, 0, sizeof *sl);
    sl->path = path;
}

static int pack_slot(const slot *sl, size_t index, pm_buf *b)
{
    pm_pack_u8(b, MSG_FILE);
    pm_pack_varint(b, index);
    pm_pack_str(b, sl->path);
    int def = deferred(sl);
    pm_pack_u8(b, (unsigned)def);
    if (def)
        return b->oom ? PM_ENOMEM : 0;
    pm_pack_varint(b, (uint64_t) - (int64_t)sl->rc);
    pm_pack_varint(b, (uint64_t)(sl->err.sys > 0 ? sl->err.sys : 0));
    pm_pack_str(b, sl->rc ? sl->err.msg : "");
    pm_pack_u8(b, sl->ignored != NULL);
    if (sl->ignored)
        pm_pack_str(b, sl->ignored);
    pm_pack_varint(b, (uint64_t)(sl->size + 1));
    pm_pack_varint(b, sl->ngot);
    pm_pack_u8(b, sl->nfull != NULL);
    for (size_t k = 0; k < sl->ngot; k++) {
        const pm_clock *c = &sl->clocks[k];
        pm_pack_varint(b, (uint64_t)c->method);
        pm_pack_f64(b, c->offset_s);
        pm_pack_f64(b, c->drift_ppm);
        pm_pack_f64(b, c->step_max_s);
        if (sl->nfull)
            pm_pack_varint(b, sl->nfull[k]);
        int rc = pm_profile_pack(sl->got[k], b);
        if (rc)
            return rc;
    }
    return b->oom ? PM_ENOMEM : 0;
}

/* A FILE message from rank `from` into its slot (index already read). */
static int unpack_slot(slot *sl, const char *what, const unsigned char *m, size_t len, size_t *at,
                       const pm_read_hint *hint, int *def, pm_error *err)
{
    char *path = NULL, *msg = NULL;
    unsigned u = 0, shrunk = 0;
    uint64_t v = 0, sys = 0, size = 0, ngot = 0;
    if (pm_unpack_str(m, len, at, PM_MAX_STRING, &path))
        goto bad;
    if (strcmp(path, sl->path) != 0) {
        int rc = pm_error_set(err, PM_EUSAGE,
                              "%s holds %s where this rank lists %s: the ranks do not see the same "
                              "input files",
                              what, path, sl->path);
        free(path);
        return rc;
    }
    free(path);
    if (pm_unpack_u8(m, len, at, &u) || u > 1)
        goto bad;
    *def = (int)u;
    if (u)
        return 0;
    if (pm_unpack_varint(m, len, at, &v) || v > 100 || pm_unpack_varint(m, len, at, &sys) ||
        sys > 100000 || pm_unpack_str(m, len, at, sizeof sl->err.msg - 1, &msg) ||
        pm_unpack_u8(m, len, at, &u) || u > 1 ||
        (u && pm_unpack_str(m, len, at, PM_MAX_STRING * 4, &sl->ignored)) ||
        pm_unpack_varint(m, len, at, &size) || size > (uint64_t)INT64_MAX ||
        pm_unpack_varint(m, len, at, &ngot) || ngot > len - *at ||
        pm_unpack_u8(m, len, at, &shrunk) || shrunk > 1)
        goto bad;
    sl->rc = -(int)v;
    sl->err.code = sl->rc;
    sl->err.sys = (int)sys;
    snprintf(sl->err.msg, sizeof sl->err.msg, "%s", msg);
    free(msg);
    msg = NULL;
    sl->size = (off_t)size - 1;
    if (ngot) {
        sl->got = calloc((size_t)ngot, sizeof *sl->got);
        sl->clocks = calloc((size_t)ngot, sizeof *sl->clocks);
        sl->nfull = shrunk ? calloc((size_t)ngot, sizeof *sl->nfull) : NULL;
        if (!sl->got || !sl->clocks || (shrunk && !sl->nfull))
            return pm_error_set(err, PM_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < ngot; k++) {
        pm_clock *c = &sl->clocks[k];
        if (pm_unpack_varint(m, len, at, &v) || v > 1 || pm_unpack_f64(m, len, at, &c->offset_s) ||
            pm_unpack_f64(m, len, at, &c->drift_ppm) || pm_unpack_f64(m, len, at, &c->step_max_s))
            goto bad;
        c->method = (int)v;
        if (shrunk) {
            if (pm_unpack_varint(m, len, at, &v) || v > SIZE_MAX)
                goto bad;
            sl->nfull[k] = (size_t)v;
        }
        int rc = pm_profile_unpack(what, m, len, at, hint, &sl->got[k], err);
        if (rc)
            return rc;
        sl->ngot++;
    }
    return 0;
bad:
    free(msg);
    return pm_error_set(err, PM_EFORMAT, "%s: offset %zu: malformed message", what, *at);
}

static int send_buf(pm_split *sp, pm_buf *b)
{
    if (b->oom)
        return PM_ENOMEM;
    int rc = sp->send(sp->user, b->data, b->len);
    pm_buf_reset(b);
    return rc;
}

static int send_abort(pm_split *sp, int rc, const char *msg)
{
    pm_buf b;
    pm_buf_init(&b);
    pm_pack_u8(&b, MSG_ABORT);
    pm_pack_varint(&b, (uint64_t) - (int64_t)(rc ? rc : PM_EFORMAT));
    pm_pack_str(&b, msg);
    int r = send_buf(sp, &b);
    pm_buf_free(&b);
    sp->done = 1;
    return r;
}

/* Rank > 0: each slot of its share, then END. */
static int send_share(pm_split *sp, slot *slots, size_t n, pm_error *err)
{
    pm_buf b;
    pm_buf_init(&b);
    size_t sent = 0;
    int rc = 0;
    for (size_t i = (size_t)sp->rank; i < n; i += (size_t)sp->size) {
        rc = pack_slot(&slots[i], i, &b);
        slot_clear(&slots[i]);
        if (rc) {
            pm_error_set(err, rc, "rank %d: %s: cannot pack what it read (out of memory)", sp->rank,
                         slots[i].path);
            break;
        }
        if ((rc = send_buf(sp, &b))) {
            pm_error_set(err, rc, "rank %d: cannot send to rank 0", sp->rank);
            break;
        }
        sent++;
    }
    for (size_t i = (size_t)sp->rank; i < n; i += (size_t)sp->size)
        slot_clear(&slots[i]);
    if (rc) {
        pm_buf_free(&b);
        (void)send_abort(sp, rc, err->msg);
        return rc;
    }
    pm_pack_u8(&b, MSG_END);
    pm_pack_varint(&b, sent);
    pm_pack_varint(&b, n);
    rc = send_buf(sp, &b);
    pm_buf_free(&b);
    sp->done = 1;
    if (rc)
        return pm_error_set(err, rc, "rank %d: cannot send to rank 0", sp->rank);
    return 0;
}

/* Rank 0: receive until every other rank has sent END or ABORT; the first
 * problem is kept in err (and rc), later messages are still received. */
static int receive(pm_split *sp, slot *slots, size_t n, int have_list, const pm_read_hint *hint,
                   pm_error *err)
{
    int rc = 0;
    size_t left = (size_t)sp->size - 1;
    unsigned char *ended = calloc((size_t)sp->size, 1);
    unsigned char *got = calloc(n ? n : 1, 1);
    if (!ended || !got) {
        /* Still wait for every rank's last message, keeping nothing. */
        rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        have_list = 0;
    }
    while (left) {
        int from = -1;
        void *data = NULL;
        size_t len = 0;
        int r = sp->recv(sp->user, &from, &data, &len);
        if (r || from <= 0 || from >= sp->size) {
            free(data);
            if (!rc)
                rc = pm_error_set(err, r ? r : PM_EFORMAT, "cannot receive from the other ranks");
            break; /* the transport itself failed: nothing more will come */
        }
        const unsigned char *m = data;
        char what[64];
        snprintf(what, sizeof what, "rank %d's message", from);
        size_t at = 0;
        unsigned kind = 0;
        uint64_t v = 0, w = 0;
        int bad = pm_unpack_u8(m, len, &at, &kind);
        if (!bad && kind == MSG_FILE) {
            bad = pm_unpack_varint(m, len, &at, &v);
            if (!bad && !rc && have_list) {
                sp->bytes_received += len;
                if (v >= n || v % (uint64_t)sp->size != (uint64_t)from || got[v])
                    rc = pm_error_set(err, PM_EUSAGE,
                                      "rank %d sent file %llu of %zu, not one of its share: the "
                                      "ranks do not see the same input files",
                                      from, (unsigned long long)v, n);
                else {
                    int def = 0;
                    got[v] = 1;
                    rc = unpack_slot(&slots[v], what, m, len, &at, hint, &def, err);
                    if (!rc && def) {
                        pm_read_buf rb = {0};
                        pm_input_read_slot(&slots[v], hint, &rb);
                        pm_read_buf_free(&rb);
                    }
                    sp->files_received++;
                }
            }
        } else if (!bad && kind == MSG_END) {
            bad = pm_unpack_varint(m, len, &at, &v) || pm_unpack_varint(m, len, &at, &w);
            size_t share = n > (size_t)from ? (n - (size_t)from - 1) / (size_t)sp->size + 1 : 0;
            if (!bad && !rc && have_list && (w != n || v != share))
                rc = pm_error_set(err, PM_EUSAGE,
                                  "rank %d lists %llu input files and sent %llu, where rank 0 "
                                  "lists %zu and expects %zu: the ranks do not see the same inputs",
                                  from, (unsigned long long)w, (unsigned long long)v, n, share);
            if (!bad && ended && !ended[from]++)
                left--;
        } else if (!bad && kind == MSG_ABORT) {
            char *msg = NULL;
            bad = pm_unpack_varint(m, len, &at, &v) || v == 0 || v > 100 ||
                  pm_unpack_str(m, len, &at, sizeof err->msg - 16, &msg);
            if (!bad && !rc)
                rc = pm_error_set(err, -(int)v, "%s", msg);
            free(msg);
            if (!bad && ended && !ended[from]++)
                left--;
        } else {
            bad = 1;
        }
        if (bad && !rc)
            rc = pm_error_set(err, PM_EFORMAT, "%s: malformed (%zu bytes)", what, len);
        free(data);
        if (!ended) /* without the table, count every END or ABORT */
            left -= !bad && kind != MSG_FILE;
    }
    free(ended);
    free(got);
    sp->done = 1;
    return rc;
}

int pm_split_read(pm_split *sp, slot *slots, size_t n, const pm_input_opts *opts,
                  const pm_read_hint *hint, pm_error *err)
{
    /* This rank's share, read on its threads. */
    size_t share = n > (size_t)sp->rank ? (n - (size_t)sp->rank - 1) / (size_t)sp->size + 1 : 0;
    slot *mine = calloc(share ? share : 1, sizeof *mine);
    if (!mine) {
        int rc = pm_error_set(err, PM_ENOMEM, "out of memory");
        if (sp->rank)
            (void)send_abort(sp, rc, err->msg);
        else
            (void)receive(sp, slots, n, 0, hint, err);
        return rc;
    }
    for (size_t k = 0; k < share; k++)
        mine[k].path = slots[(size_t)sp->rank + k * (size_t)sp->size].path;
    pm_input_opts o = *opts;
    if (sp->rank)
        o.progress = NULL;
    double t0 = pm_mono_s();
    pm_input_read_slots(mine, share, &o, hint);
    sp->read_s = pm_mono_s() - t0;
    for (size_t k = 0; k < share; k++)
        slots[(size_t)sp->rank + k * (size_t)sp->size] = mine[k];
    free(mine);
    sp->files_read = share;
    if (sp->rank)
        return send_share(sp, slots, n, err);
    t0 = pm_mono_s();
    int rc = receive(sp, slots, n, 1, hint, err);
    sp->gather_s = pm_mono_s() - t0;
    return rc;
}

int pm_split_survey_end(pm_split *sp, int rc, pm_error *err)
{
    if (!sp->done) {
        if (sp->rank)
            (void)send_abort(sp, rc, err->msg);
        else {
            pm_error keep = *err;
            (void)receive(sp, NULL, 0, 0, NULL, err);
            *err = keep;
        }
    }
    return rc;
}

int pm_split_finish(pm_split *sp, int rc, pm_error *err)
{
    (void)pm_split_survey_end(sp, rc, err);
    int all = sp->status(sp->user, rc);
    if (sp->rank && all && !rc)
        pm_error_set(err, all, "rank 0 could not read the inputs");
    return sp->rank ? (all ? all : rc) : rc;
}
