/* The ordered bounded window (window.h): slots of items claimed in index
 * order, made by any thread, taken by index.  Every state change is under
 * the one lock and wakes every waiter (a handful of threads: the workers
 * and the thread that takes). */
#include <stdlib.h>
#include <string.h>

#include "perfmon/invariant.h"
#include "perfmon/mem.h"
#include "perfmon/window.h"

enum { SLOT_FREE, SLOT_CLAIMED, SLOT_MADE };

struct pm_window_slot {
    size_t item; /* the item it holds (not SLOT_FREE) */
    int state;
};

/* The window's invariants, under its lock. */
static void check(const pm_window *w)
{
    PM_ASSERT(w->next <= w->n);
    PM_ASSERT(w->held <= w->cap);
    PM_ASSERT(w->held <= w->next);
}

int pm_window_init(pm_window *w, size_t n, size_t cap, size_t esize)
{
    memset(w, 0, sizeof *w);
    if (cap == 0)
        cap = 1;
    w->slot = calloc(cap, sizeof *w->slot);
    w->data = esize ? pm_alloc_array(cap, esize) : NULL;
    if (!w->slot || (esize && !w->data)) {
        free(w->slot);
        free(w->data);
        w->slot = NULL;
        w->data = NULL;
        return PM_ENOMEM;
    }
    w->n = n;
    w->cap = cap;
    w->esize = esize;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    return 0;
}

void pm_window_destroy(pm_window *w, void (*drop)(void *entry, void *user), void *user)
{
    if (!w->slot)
        return;
    for (size_t s = 0; s < w->cap && drop && w->esize; s++)
        if (w->slot[s].state == SLOT_MADE)
            drop(w->data + s * w->esize, user);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w->slot);
    free(w->data);
    w->slot = NULL;
    w->data = NULL;
}

/* Claims the next item when its slot is free (under the lock). */
static int claim_locked(pm_window *w, size_t *i)
{
    pm_window_slot *s = &w->slot[w->next % w->cap];
    if (s->state != SLOT_FREE)
        return 0;
    /* a free slot: item next - cap was taken, so at most cap - 1 are held */
    PM_ASSERT(w->held < w->cap);
    s->state = SLOT_CLAIMED;
    s->item = w->next;
    *i = w->next++;
    w->held++;
    check(w);
    return 1;
}

int pm_window_claim(pm_window *w, size_t *i)
{
    int got = 0;
    pthread_mutex_lock(&w->lock);
    while (!w->stop && w->next < w->n && !(got = claim_locked(w, i)))
        pthread_cond_wait(&w->cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
    return got;
}

int pm_window_put(pm_window *w, size_t i, const void *entry)
{
    int rc = -1;
    pthread_mutex_lock(&w->lock);
    pm_window_slot *s = &w->slot[i % w->cap];
    /* only the claimer of item i makes it, once */
    PM_ASSERT(i < w->next);
    PM_ASSERT(s->state == SLOT_CLAIMED && s->item == i);
    if (!w->stop) {
        if (w->esize)
            memcpy(w->data + (i % w->cap) * w->esize, entry, w->esize);
        s->state = SLOT_MADE;
        rc = 0;
    }
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

/* Item i's state: 1 made (taken into *entry), 0 to wait for, or an
 * error (under the lock). */
static int take_locked(pm_window *w, size_t i, void *entry)
{
    pm_window_slot *s = &w->slot[i % w->cap];
    if (i >= w->n)
        return PM_EUSAGE;
    if (i < w->next && (s->state == SLOT_FREE || s->item != i))
        return PM_EUSAGE; /* taken already */
    if (i >= w->next || s->state != SLOT_MADE)
        return 0;
    PM_ASSERT(s->item == i && w->held > 0);
    if (w->esize)
        memcpy(entry, w->data + (i % w->cap) * w->esize, w->esize);
    s->state = SLOT_FREE;
    w->held--;
    check(w);
    pthread_cond_broadcast(&w->cond);
    return 1;
}

int pm_window_take_or_claim(pm_window *w, size_t i, void *entry, size_t *j)
{
    int rc;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        rc = take_locked(w, i, entry);
        if (rc) {
            rc = rc == 1 ? 0 : rc;
            break;
        }
        if (w->stop) {
            rc = -1;
            break;
        }
        if (j && w->next < w->n && claim_locked(w, j)) {
            rc = 1;
            break;
        }
        pthread_cond_wait(&w->cond, &w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int pm_window_take(pm_window *w, size_t i, void *entry)
{
    return pm_window_take_or_claim(w, i, entry, NULL);
}

void pm_window_stop(pm_window *w)
{
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}
