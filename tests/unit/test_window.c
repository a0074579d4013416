/* Unit tests of the ordered bounded window (window.h): items claimed in
 * index order, taken by index, at most cap of them held at once; a stopped
 * window releases every waiter; the entries still held at the end go to
 * drop once each; a claim on a full window waits for the oldest take;
 * producers on threads against a consumer that takes in order (the plot
 * workers, a rank's senders), and one producer in order against consumers
 * that take any item (rank 0's receiving thread). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "perfmon/window.h"

static void test_in_order(void **state)
{
    (void)state;
    pm_window w;
    assert_int_equal(pm_window_init(&w, 5, 2, sizeof(int)), 0);
    size_t i = 99, j = 99;
    int e;
    assert_int_equal(pm_window_claim(&w, &i), 1);
    assert_int_equal(i, 0);
    e = 10;
    assert_int_equal(pm_window_put(&w, 0, &e), 0);
    assert_int_equal(pm_window_claim(&w, &i), 1);
    assert_int_equal(i, 1);
    e = 11;
    assert_int_equal(pm_window_put(&w, 1, &e), 0);
    /* the window is full: item 2 waits for item 0's take */
    assert_int_equal(w.held, 2);
    assert_int_equal(pm_window_take(&w, 0, &e), 0);
    assert_int_equal(e, 10);
    assert_int_equal(pm_window_claim(&w, &i), 1);
    assert_int_equal(i, 2);
    assert_int_equal(pm_window_take(&w, 1, &e), 0);
    assert_int_equal(e, 11);
    /* taken twice, or past the end: not in the window */
    assert_int_equal(pm_window_take(&w, 1, &e), PM_EUSAGE);
    assert_int_equal(pm_window_take(&w, 0, &e), PM_EUSAGE);
    assert_int_equal(pm_window_take(&w, 5, &e), PM_EUSAGE);
    e = 12;
    assert_int_equal(pm_window_put(&w, 2, &e), 0);
    /* item 3 not claimed yet: the taker claims it instead of waiting */
    assert_int_equal(pm_window_take_or_claim(&w, 2, &e, &j), 0);
    assert_int_equal(e, 12);
    assert_int_equal(pm_window_take_or_claim(&w, 3, &e, &j), 1);
    assert_int_equal(j, 3);
    e = 13;
    assert_int_equal(pm_window_put(&w, 3, &e), 0);
    assert_int_equal(pm_window_take_or_claim(&w, 3, &e, &j), 0);
    assert_int_equal(e, 13);
    assert_int_equal(pm_window_claim(&w, &i), 1);
    assert_int_equal(i, 4);
    e = 14;
    assert_int_equal(pm_window_put(&w, 4, &e), 0);
    assert_int_equal(pm_window_take(&w, 4, &e), 0);
    assert_int_equal(e, 14);
    /* every item claimed: none more */
    assert_int_equal(pm_window_claim(&w, &i), 0);
    assert_int_equal(w.held, 0);
    pm_window_destroy(&w, NULL, NULL);
}

static void count_drop(void *entry, void *user)
{
    int *dropped = user;
    dropped[*(int *)entry]++;
}

static void test_stop_and_drop(void **state)
{
    (void)state;
    pm_window w;
    assert_int_equal(pm_window_init(&w, 4, 4, sizeof(int)), 0);
    size_t i;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(pm_window_claim(&w, &i), 1);
        if (k < 2)
            assert_int_equal(pm_window_put(&w, i, &k), 0);
    }
    int e = -1;
    assert_int_equal(pm_window_take(&w, 0, &e), 0);
    assert_int_equal(e, 0);
    pm_window_stop(&w);
    /* made before the stop: still given; claimed, not made: not */
    assert_int_equal(pm_window_claim(&w, &i), 0);
    int two = 2;
    assert_int_equal(pm_window_put(&w, 2, &two), -1);
    assert_int_equal(pm_window_take(&w, 2, &e), -1);
    assert_int_equal(pm_window_take(&w, 3, &e), -1);
    int dropped[4] = {0};
    pm_window_destroy(&w, count_drop, dropped);
    /* item 1 was made and never taken: dropped once; 0 taken, 2 refused */
    assert_int_equal(dropped[0], 0);
    assert_int_equal(dropped[1], 1);
    assert_int_equal(dropped[2], 0);
    assert_int_equal(dropped[3], 0);
    /* a window of no slots has one */
    assert_int_equal(pm_window_init(&w, 1, 0, 0), 0);
    assert_int_equal(w.cap, 1);
    pm_window_destroy(&w, NULL, NULL);
}

/* Threads: each item's value is a function of its index; `peak`, the
 * most items claimed beyond the next one to take. */
typedef struct shared {
    pm_window w;
    pthread_mutex_t lock;
    size_t peak;
    size_t next_take; /* (many takers) the next item to take */
    size_t ntaken;
    int bad;
} shared;

static void nap(unsigned salt)
{
    struct timespec ts = {0, (long)(salt % 7) * 20000};
    nanosleep(&ts, NULL);
}

static void made(shared *s, size_t i)
{
    nap((unsigned)(i * 2654435761u >> 7));
    size_t v = i * 7 + 1;
    if (pm_window_put(&s->w, i, &v) != 0)
        s->bad = 1;
}

/* Claimed so far, seen from the taker. */
static size_t claimed(shared *s)
{
    pthread_mutex_lock(&s->w.lock);
    size_t n = s->w.next;
    pthread_mutex_unlock(&s->w.lock);
    return n;
}

static void taken(shared *s, size_t i, size_t v)
{
    pthread_mutex_lock(&s->lock);
    if (v != i * 7 + 1)
        s->bad = 1;
    s->ntaken++;
    pthread_mutex_unlock(&s->lock);
}

static void *producer(void *arg)
{
    shared *s = arg;
    size_t i;
    while (pm_window_claim(&s->w, &i))
        made(s, i);
    return NULL;
}

/* Producers on 4 threads, the items taken in order (and helped with). */
static void test_producers_in_order(void **state)
{
    (void)state;
    enum { N = 600, CAP = 3, T = 4 };
    for (int help = 0; help < 2; help++) {
        shared s = {.peak = 0};
        pthread_mutex_init(&s.lock, NULL);
        assert_int_equal(pm_window_init(&s.w, N, CAP, sizeof(size_t)), 0);
        pthread_t th[T];
        for (int t = 0; t < T; t++)
            assert_int_equal(pthread_create(&th[t], NULL, producer, &s), 0);
        for (size_t i = 0; i < N; i++) {
            size_t v = 0, j;
            int rc;
            /* before item i is taken, at most items i..i+CAP-1 claimed */
            size_t c = claimed(&s);
            if (c > i + CAP)
                s.bad = 2;
            if (c - i > s.peak)
                s.peak = c - i;
            while ((rc = pm_window_take_or_claim(&s.w, i, &v, help ? &j : NULL)) == 1)
                made(&s, j);
            assert_int_equal(rc, 0);
            taken(&s, i, v);
        }
        for (int t = 0; t < T; t++)
            pthread_join(th[t], NULL);
        /* never more than the window's slots in flight */
        assert_int_equal(s.bad, 0);
        assert_int_equal(s.ntaken, N);
        assert_true(s.peak >= 1 && s.peak <= CAP);
        pm_window_destroy(&s.w, NULL, NULL);
        pthread_mutex_destroy(&s.lock);
    }
}

static void *taker(void *arg)
{
    shared *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        size_t i = s->next_take++;
        pthread_mutex_unlock(&s->lock);
        if (i >= s->w.n)
            return NULL;
        size_t v = 0;
        if (pm_window_take(&s->w, i, &v) != 0) {
            s->bad = 1;
            return NULL;
        }
        taken(s, i, v);
    }
}

/* One producer in order, three takers of any item (rank 0's receiver). */
static void test_one_producer_many_takers(void **state)
{
    (void)state;
    enum { N = 600, CAP = 5, T = 3 };
    shared s = {.peak = 0};
    pthread_mutex_init(&s.lock, NULL);
    assert_int_equal(pm_window_init(&s.w, N, CAP, sizeof(size_t)), 0);
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        assert_int_equal(pthread_create(&th[t], NULL, taker, &s), 0);
    size_t i, want = 0;
    while (pm_window_claim(&s.w, &i)) {
        if (i != want++)
            s.bad = 1;
        made(&s, i);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    assert_false(s.bad);
    assert_int_equal(want, N);
    assert_int_equal(s.ntaken, N);
    pm_window_destroy(&s.w, NULL, NULL);
    pthread_mutex_destroy(&s.lock);
}

/* A stop wakes a producer waiting for a slot and a taker waiting for an
 * item that never comes. */
static void *blocked_claim(void *arg)
{
    shared *s = arg;
    size_t i;
    s->ntaken = (size_t)pm_window_claim(&s->w, &i);
    return NULL;
}

static void *blocked_take(void *arg)
{
    shared *s = arg;
    size_t v;
    s->bad = pm_window_take(&s->w, 1, &v);
    return NULL;
}

/* A full window: a claim waits until the oldest item is taken, then gets
 * the item that takes its slot. */
static void *late_claim(void *arg)
{
    shared *s = arg;
    size_t i = 99;
    int got = pm_window_claim(&s->w, &i);
    pthread_mutex_lock(&s->lock);
    s->ntaken = got ? i : 1000;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void test_full_window_waits(void **state)
{
    (void)state;
    shared s = {.ntaken = 77};
    pthread_mutex_init(&s.lock, NULL);
    assert_int_equal(pm_window_init(&s.w, 5, 2, sizeof(size_t)), 0);
    size_t i, v = 5;
    assert_int_equal(pm_window_claim(&s.w, &i), 1);
    assert_int_equal(pm_window_claim(&s.w, &i), 1);
    assert_int_equal(pm_window_put(&s.w, 0, &v), 0);
    assert_int_equal(pm_window_put(&s.w, 1, &v), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, late_claim, &s), 0);
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&s.lock);
    size_t seen = s.ntaken;
    pthread_mutex_unlock(&s.lock);
    assert_int_equal(seen, 77); /* still waiting: both slots held */
    assert_int_equal(pm_window_take(&s.w, 0, &v), 0);
    pthread_join(th, NULL);
    assert_int_equal(s.ntaken, 2); /* item 2, in item 0's slot */
    assert_int_equal(s.w.held, 2);
    pm_window_destroy(&s.w, NULL, NULL);
    pthread_mutex_destroy(&s.lock);
}

static void test_stop_wakes(void **state)
{
    (void)state;
    shared s = {.ntaken = 7};
    assert_int_equal(pm_window_init(&s.w, 3, 1, sizeof(size_t)), 0);
    size_t i;
    assert_int_equal(pm_window_claim(&s.w, &i), 1);
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, blocked_claim, &s), 0);
    assert_int_equal(pthread_create(&b, NULL, blocked_take, &s), 0);
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pm_window_stop(&s.w);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(s.ntaken, 0);
    assert_int_equal(s.bad, -1);
    pm_window_destroy(&s.w, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),           cmocka_unit_test(test_stop_and_drop),
        cmocka_unit_test(test_producers_in_order), cmocka_unit_test(test_one_producer_many_takers),
        cmocka_unit_test(test_full_window_waits),  cmocka_unit_test(test_stop_wakes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
