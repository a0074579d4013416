/* The kernel log's records and the OOM killer's lines in them
 * (include/perfmon/kmsg.h has the formats).
 *
 * Every search is bounded by the record's length: a record is not
 * NUL-terminated and may hold any byte.  A name (the victim's comm, set by
 * the process itself, and a cgroup's path, named by whoever made it) may
 * contain the very separators that surround it (",task=", ") total-vm:"),
 * so each is cut where the kernel's format leaves only one reading: the
 * name in the kill line ends at the last ") total-vm:" (nothing after it
 * has a parenthesis), the summary's victim at the last ",pid=", and the
 * victim's cgroup is told from its name with the name that the kill line
 * gives.
 */
#include <stdio.h>
#include <string.h>

#include "perfmon/kmsg.h"

/* The first occurrence of needle in s[0..n), or NULL. */
static const char *find(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; k <= n && i + k <= n; i++)
        if (memcmp(s + i, needle, k) == 0)
            return s + i;
    return NULL;
}

/* The last occurrence of needle in s[0..n), or NULL. */
static const char *rfind(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    if (k > n)
        return NULL;
    for (size_t i = n - k + 1; i-- > 0;)
        if (memcmp(s + i, needle, k) == 0)
            return s + i;
    return NULL;
}

static int starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

/* Decimal digits at *p (before end) into *v; at most 19 digits, so no
 * overflow.  Returns 0 and advances *p, or -1. */
static int digits(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    size_t n = 0;
    while (s < end && *s >= '0' && *s <= '9' && n < 19) {
        x = x * 10 + (uint64_t)(*s - '0');
        s++;
        n++;
    }
    if (n == 0 || (s < end && *s >= '0' && *s <= '9'))
        return -1;
    *v = x;
    *p = s;
    return 0;
}

/* Copy s[0..n) into out[cap], cut to fit, NUL-terminated. */
static void copy(char *out, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

int pm_kmsg_parse(const char *buf, size_t len, pm_kmsg_rec *out)
{
    const char *p = buf, *end = buf + len;
    uint64_t prio, seq, ts;
    memset(out, 0, sizeof *out);
    if (digits(&p, end, &prio) != 0 || prio > 1023 || p >= end || *p++ != ',' ||
        digits(&p, end, &seq) != 0 || p >= end || *p++ != ',' || digits(&p, end, &ts) != 0 ||
        p >= end || *p++ != ',' || p >= end)
        return -1;
    char flag = *p++;
    if (flag != '-' && flag != 'c' && flag != '+')
        return -1;
    /* Fields after the flag (the caller id since 5.1, ...) up to ';'. */
    const char *semi = memchr(p, ';', (size_t)(end - p));
    if (!semi || (semi != p && *p != ','))
        return -1;
    const char *msg = semi + 1;
    const char *nl = memchr(msg, '\n', (size_t)(end - msg));
    out->prio = (unsigned)prio;
    out->seq = seq;
    out->ts_us = ts;
    out->flag = flag;
    out->msg = msg;
    out->len = (size_t)((nl ? nl : end) - msg);
    return 0;
}

void pm_oom_init(pm_oom_parser *p)
{
    memset(p, 0, sizeof *p);
}

static void kill_init(pm_oom_kill *k)
{
    memset(k, 0, sizeof *k);
    k->anon_rss_kb = k->total_vm_kb = k->uid = -1;
}

static int push(pm_oom_kill *out, size_t max, size_t *n, const pm_oom_kill *k)
{
    if (*n >= max)
        return -1;
    out[(*n)++] = *k;
    return 0;
}

/* The value of "key" (",oom_memcg=", ...) in s[0..n), up to stop (the
 * next member's key) or the end; NULL when absent. */
static const char *member(const char *s, size_t n, const char *key, const char *stop, size_t *vlen)
{
    const char *k = find(s, n, key);
    if (!k)
        return NULL;
    const char *v = k + strlen(key), *end = s + n;
    const char *e = stop ? find(v, (size_t)(end - v), stop) : NULL;
    *vlen = (size_t)((e ? e : end) - v);
    return v;
}

/* Split the summary's middle text ("[PATH,]task=COMM" after
 * "task_memcg=") into the victim's cgroup and name: at ",task=" + comm
 * when comm (from the kill line) is known and fits, else at the last
 * ",task=". */
static void split_mid(const pm_oom_parser *p, const char *comm, pm_oom_kill *k)
{
    const char *m = p->mid;
    size_t n = p->nmid;
    const char *cut = NULL;
    char tail[96];
    if (comm && *comm && strlen(comm) < 80) {
        size_t t = (size_t)snprintf(tail, sizeof tail, "task=%s", comm);
        if (t <= n && memcmp(m + n - t, tail, t) == 0 && (t == n || (n > t && m[n - t - 1] == ',')))
            cut = m + n - t;
    }
    if (!cut) {
        cut = starts(m, n, "task=") ? m : rfind(m, n, ",task=");
        if (cut && *cut == ',')
            cut++;
    }
    if (!cut)
        return;
    copy(k->comm, sizeof k->comm, cut + 5, (size_t)(m + n - cut - 5));
    if (p->mid_has_memcg)
        copy(k->task_memcg, sizeof k->task_memcg, m, cut > m ? (size_t)(cut - m - 1) : 0);
}

/* "oom-kill:constraint=...,task=COMM,pid=N,uid=N": the summary.  Returns
 * 0 with the parser's pending kill filled, or -1. */
static int parse_summary(pm_oom_parser *p, const char *s, size_t n, uint64_t ts)
{
    pm_oom_kill k;
    kill_init(&k);
    k.ts_us = (int64_t)ts;
    const char *end = s + n;
    const char *uid = rfind(s, n, ",uid=");
    const char *pid = uid ? rfind(s, (size_t)(uid - s), ",pid=") : NULL;
    if (!pid)
        return -1;
    const char *q = pid + 5;
    uint64_t v;
    if (digits(&q, uid, &v) != 0 || q != uid || v == 0 || v > INT32_MAX)
        return -1;
    k.pid = (int32_t)v;
    q = uid + 5;
    if (digits(&q, end, &v) == 0 && q == end && v <= UINT32_MAX)
        k.uid = (int64_t)v;
    size_t before = (size_t)(pid - s), vl;
    const char *c = member(s, before, "constraint=", ",", &vl);
    if (c && vl > 0)
        copy(k.constraint, sizeof k.constraint, c, vl);
    const char *om = member(s, before, ",oom_memcg=", ",task_memcg=", &vl);
    if (om)
        copy(k.memcg, sizeof k.memcg, om, vl);
    /* What follows task_memcg= (Linux 5.0 and later), or, before that,
     * the last member before the victim, is "[PATH,]task=COMM". */
    const char *tm = find(s, before, ",task_memcg=");
    const char *mid;
    p->mid_has_memcg = tm != NULL;
    if (tm)
        mid = tm + 12;
    else {
        mid = rfind(s, before, ",task=");
        if (!mid)
            return -1;
        mid++;
    }
    copy(p->mid, sizeof p->mid, mid, (size_t)(pid - mid));
    p->nmid = strlen(p->mid);
    split_mid(p, NULL, &k);
    p->pending = k;
    p->have_pending = 1;
    return 0;
}

/* "[PREFIX: ]Killed process N (COMM) total-vm:NkB, anon-rss:NkB, ...".
 * Returns 0 with *k filled, or -1 when s is not a kill line. */
static int parse_killed(const char *s, size_t n, uint64_t ts, pm_oom_kill *k)
{
    static const char kp[] = "Killed process ";
    const char *at = starts(s, n, kp) ? s : find(s, n, ": Killed process ");
    if (!at)
        return -1;
    const char *end = s + n;
    const char *q = at + (at == s ? strlen(kp) : strlen(kp) + 2);
    uint64_t v;
    if (digits(&q, end, &v) != 0 || v == 0 || v > INT32_MAX || end - q < 2 || q[0] != ' ' ||
        q[1] != '(')
        return -1;
    kill_init(k);
    k->ts_us = (int64_t)ts;
    k->pid = (int32_t)v;
    q += 2;
    const char *close = rfind(q, (size_t)(end - q), ") total-vm:");
    if (!close)
        close = rfind(q, (size_t)(end - q), ")");
    if (!close)
        return -1;
    copy(k->comm, sizeof k->comm, q, (size_t)(close - q));
    if (at != s && starts(s, n, "Memory cgroup out of memory"))
        copy(k->constraint, sizeof k->constraint, "CONSTRAINT_MEMCG", 16);
    const char *r = close + 1;
    size_t left = (size_t)(end - r);
    const char *f;
    if ((f = find(r, left, "total-vm:")) != NULL) {
        const char *d = f + 9;
        if (digits(&d, end, &v) == 0 && starts(d, (size_t)(end - d), "kB"))
            k->total_vm_kb = (int64_t)v;
    }
    if ((f = find(r, left, "anon-rss:")) != NULL) {
        const char *d = f + 9;
        if (digits(&d, end, &v) == 0 && starts(d, (size_t)(end - d), "kB"))
            k->anon_rss_kb = (int64_t)v;
    }
    if ((f = find(r, left, "UID:")) != NULL) {
        const char *d = f + 4;
        if (digits(&d, end, &v) == 0 && v <= UINT32_MAX)
            k->uid = (int64_t)v;
    }
    return 0;
}

/* The summary waiting for its kill line, completed alone. */
static void flush_pending(pm_oom_parser *p, pm_oom_kill *out, size_t max, size_t *n)
{
    if (!p->have_pending)
        return;
    p->have_pending = 0;
    if (p->pending.comm[0] || p->pending.pid)
        push(out, max, n, &p->pending);
}

/* The lines before Linux 4.19 that tell a cgroup's kill.  Returns 1 when
 * s was one (the hints are kept for the kill line), else 0. */
static int hint(pm_oom_parser *p, const char *s, size_t len)
{
    static const char task_in[] = "Task in ", limit[] = " killed as a result of limit of ",
                      kill[] = "Memory cgroup out of memory: Kill process ";
    if (starts(s, len, task_in)) {
        const char *at = rfind(s, len, limit);
        if (!at || at < s + strlen(task_in))
            return 0;
        const char *t = s + strlen(task_in), *m = at + strlen(limit);
        copy(p->hint_task_memcg, sizeof p->hint_task_memcg, t, (size_t)(at - t));
        copy(p->hint_memcg, sizeof p->hint_memcg, m, (size_t)(s + len - m));
        p->have_hint_cg = 1;
        return 1;
    }
    if (starts(s, len, kill)) {
        const char *q = s + strlen(kill);
        uint64_t v;
        if (digits(&q, s + len, &v) == 0 && v > 0 && v <= INT32_MAX)
            p->hint_memcg_pid = (int32_t)v;
        return 1;
    }
    return 0;
}

/* A kill line without its summary: what the older lines told. */
static void apply_hints(pm_oom_parser *p, pm_oom_kill *k)
{
    int memcg = p->have_hint_cg || p->hint_memcg_pid == k->pid;
    if (memcg && !k->constraint[0])
        copy(k->constraint, sizeof k->constraint, "CONSTRAINT_MEMCG", 16);
    if (p->have_hint_cg) {
        memcpy(k->memcg, p->hint_memcg, sizeof k->memcg);
        memcpy(k->task_memcg, p->hint_task_memcg, sizeof k->task_memcg);
    }
}

static void clear_hints(pm_oom_parser *p)
{
    p->have_hint_cg = 0;
    p->hint_memcg_pid = 0;
}

/* One whole line of text. */
static void line(pm_oom_parser *p, const char *s, size_t len, uint64_t ts, pm_oom_kill *out,
                 size_t max, size_t *n)
{
    if (starts(s, len, "oom-kill:")) {
        flush_pending(p, out, max, n);
        clear_hints(p);
        parse_summary(p, s, len, ts);
        return;
    }
    if (hint(p, s, len))
        return;
    if (find(s, len, " invoked oom-killer: ")) {
        /* A new OOM: what older lines told was about another. */
        clear_hints(p);
        return;
    }
    pm_oom_kill k;
    if (parse_killed(s, len, ts, &k) != 0)
        return;
    if (p->have_pending && p->pending.pid == k.pid) {
        /* The summary tells the constraint and the cgroups; the kill
         * line the name, sizes and time. */
        pm_oom_kill j = p->pending;
        split_mid(p, k.comm, &j);
        if (k.comm[0])
            memcpy(j.comm, k.comm, sizeof j.comm);
        if (!j.constraint[0])
            memcpy(j.constraint, k.constraint, sizeof j.constraint);
        j.anon_rss_kb = k.anon_rss_kb;
        j.total_vm_kb = k.total_vm_kb;
        if (k.uid >= 0)
            j.uid = k.uid;
        j.ts_us = k.ts_us;
        p->have_pending = 0;
        push(out, max, n, &j);
        return;
    }
    flush_pending(p, out, max, n);
    apply_hints(p, &k);
    clear_hints(p);
    push(out, max, n, &k);
}

/* End a line assembled from fragments. */
static void end_cont(pm_oom_parser *p, pm_oom_kill *out, size_t max, size_t *n)
{
    if (p->in_cont && !p->cont_cut)
        line(p, p->cont, p->ncont, p->cont_ts, out, max, n);
    p->in_cont = p->cont_cut = 0;
    p->ncont = 0;
}

size_t pm_oom_feed(pm_oom_parser *p, const char *rec, size_t len, pm_oom_kill *out, size_t max)
{
    size_t n = 0;
    pm_kmsg_rec r;
    p->records++;
    if (pm_kmsg_parse(rec, len, &r) != 0) {
        p->malformed++;
        return 0;
    }
    /* Only the kernel's own records (facility 0): user space may write
     * to /dev/kmsg too. */
    if (r.prio >> 3 != 0)
        return 0;
    if (r.flag == '+' && p->in_cont) {
        if (p->ncont + r.len >= sizeof p->cont)
            p->cont_cut = 1;
        else {
            memcpy(p->cont + p->ncont, r.msg, r.len);
            p->ncont += r.len;
        }
        return n;
    }
    end_cont(p, out, max, &n);
    if (r.flag == 'c') {
        p->in_cont = 1;
        p->cont_ts = r.ts_us;
        if (r.len >= sizeof p->cont)
            p->cont_cut = 1;
        else {
            memcpy(p->cont, r.msg, r.len);
            p->ncont = r.len;
        }
        return n;
    }
    /* '-', or a '+' without its start: a line of its own. */
    line(p, r.msg, r.len, r.ts_us, out, max, &n);
    return n;
}

size_t pm_oom_flush(pm_oom_parser *p, pm_oom_kill *out, size_t max)
{
    size_t n = 0;
    end_cont(p, out, max, &n);
    flush_pending(p, out, max, &n);
    return n;
}
