/* window.h - an ordered bounded window between threads: items 0..n-1 are
 * claimed in index order by the threads that make them, made in any order,
 * and taken by index; at most cap of them are claimed and not yet taken at
 * once, so a producer that runs ahead waits instead of filling memory.
 *
 * Item i lives in slot i % cap from its claim to its take: claiming item i
 * waits until item i - cap was taken.  Each slot holds a copy of an entry
 * of esize bytes (0: none, when the caller keeps the items in an array of
 * its own indexed by item), copied in by pm_window_put and out by
 * pm_window_take under the window's lock.
 *
 * Users: the plot workers of the PDF report (render/report_plots.c: the
 * layout takes the canvases in page order) and the hosts' exchange of
 * --stream under mpirun (input/split_stream.c: rank 0 receives the hosts in
 * host order for its workers to take, and each other rank sends the hosts
 * its workers read in host order).
 *
 * Ownership: the caller owns the pm_window; what an entry points to is the
 * caller's, and pm_window_destroy hands each entry still held to drop. */
#ifndef PERFMON_WINDOW_H
#define PERFMON_WINDOW_H

#include <pthread.h>
#include <stddef.h>

#include "perfmon/error.h"

typedef struct pm_window_slot pm_window_slot;

typedef struct pm_window {
    size_t n;             /* items 0..n-1 */
    size_t cap;           /* slots: claimed and not yet taken at most */
    size_t esize;         /* bytes of an entry */
    size_t next;          /* the next item to claim */
    size_t held;          /* claimed, not yet taken */
    int stop;             /* pm_window_stop was called */
    pm_window_slot *slot; /* [cap] */
    unsigned char *data;  /* [cap * esize] the entries */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} pm_window;

/* A window of n items and cap slots (cap >= 1) of entries of esize bytes.
 * 0 or PM_ENOMEM (nothing to destroy then). */
int pm_window_init(pm_window *w, size_t n, size_t cap, size_t esize) PM_WUR;

/* Hands each entry still in a slot (made, not taken) to drop(entry, user)
 * when drop is not NULL, then frees the window. */
void pm_window_destroy(pm_window *w, void (*drop)(void *entry, void *user), void *user);

/* The next item, in index order, into *i; waits while its slot is held.
 * Returns 1, or 0 when every item was claimed or the window is stopped. */
int pm_window_claim(pm_window *w, size_t *i);

/* Item i, claimed by the caller, is made: its entry (esize bytes) copied
 * into its slot.  Returns 0, or -1 when the window is stopped: the entry
 * was not kept (the caller still owns what it points to). */
int pm_window_put(pm_window *w, size_t i, const void *entry);

/* Item i, once made: its entry copied into *entry (when esize) and its
 * slot freed for item i + cap.  Returns 0; -1 when the window was stopped
 * before item i came; PM_EUSAGE when item i is not in the window (i >= n,
 * or already taken). */
int pm_window_take(pm_window *w, size_t i, void *entry) PM_WUR;

/* As pm_window_take, but while item i is not made yet and the next item's
 * slot is free, claims that item instead of waiting: returns 1 with it in
 * *j, and the caller makes it, puts it and calls again (the thread that
 * takes in order helps the producers instead of waiting idle). */
int pm_window_take_or_claim(pm_window *w, size_t i, void *entry, size_t *j) PM_WUR;

/* Wakes every waiter: claims return 0, puts -1, takes of items not yet
 * made -1.  What the slots hold stays for pm_window_destroy. */
void pm_window_stop(pm_window *w);

#endif
