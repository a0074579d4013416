/* vec.h - room in a growable array, the one doubling rule, and appending
 * one array to another.
 *
 * A growable array is three things its owner keeps side by side: a pointer
 * from malloc (NULL when empty), a count of elements in use and a capacity.
 * The owner frees the pointer with free(); nothing here keeps a reference.
 *
 *     if (PM_VEC_RESERVE(s->cols, s->cap, s->n + 1, 64) != 0)
 *         return PM_ENOMEM;
 *     s->cols[s->n++] = c;
 *
 * PM_VEC_RESERVE(arr, cap, need, first) makes room for `need` elements of
 * *arr's type: when need > cap the capacity becomes `first` (an empty
 * array's first allocation) and doubles until it holds need, then the array
 * is reallocated once.  The element size is taken from arr's type, so the
 * call cannot disagree with the array.  It returns 0, or PM_ENOMEM when
 * realloc fails or the capacity or its bytes would overflow size_t (the
 * doubling stops at the largest element count whose bytes fit, and only a
 * need beyond that fails); on failure arr and cap are untouched, so the
 * owner still frees the old array.  Like SQLite's sqlite3ArrayAllocate and
 * htop's Vector_resizeIfNecessary, but typed and overflow-checked. */
#ifndef PERFMON_VEC_H
#define PERFMON_VEC_H

#include <stddef.h>

/* The function behind PM_VEC_RESERVE: *p holds *cap elements of `elem`
 * bytes.  Exposed for the unit test and for callers that size elements at
 * run time; prefer the macro. */
int pm_vec_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
    __attribute__((warn_unused_result));

#define PM_VEC_RESERVE(arr, cap, need, first)                                                   \
    __extension__({                                                                             \
        void *pm_vec_p_ = (arr);                                                                \
        size_t pm_vec_cap_ = (cap);                                                             \
        int pm_vec_rc_ = pm_vec_grow(&pm_vec_p_, &pm_vec_cap_, (need), sizeof *(arr), (first)); \
        if (pm_vec_rc_ == 0) {                                                                  \
            (arr) = pm_vec_p_;                                                                  \
            (cap) = pm_vec_cap_;                                                                \
        }                                                                                       \
        pm_vec_rc_;                                                                             \
    })

/* Append nsrc elements of elem bytes from src to the array *p of *n
 * elements and capacity *cap, grown by pm_vec_grow (first: exactly what
 * it needs); the elements are copied bytewise (a move when the caller
 * then forgets them in src).  0, or PM_ENOMEM with *p, *n and *cap
 * untouched. */
int pm_vec_append(void **p, size_t *n, size_t *cap, const void *src, size_t nsrc, size_t elem)
    __attribute__((warn_unused_result));

/* PM_VEC_APPEND(arr, n, cap, src, nsrc): pm_vec_append typed by arr,
 * whose elements must be src's size. */
#define PM_VEC_APPEND(arr, n, cap, src, nsrc)                                                  \
    __extension__({                                                                            \
        _Static_assert(sizeof *(arr) == sizeof *(src), "PM_VEC_APPEND: element sizes differ"); \
        void *pm_vec_p_ = (arr);                                                               \
        size_t pm_vec_n_ = (n), pm_vec_cap_ = (cap);                                           \
        int pm_vec_rc_ =                                                                       \
            pm_vec_append(&pm_vec_p_, &pm_vec_n_, &pm_vec_cap_, (src), (nsrc), sizeof *(arr)); \
        if (pm_vec_rc_ == 0) {                                                                 \
            (arr) = pm_vec_p_;                                                                 \
            (n) = pm_vec_n_;                                                                   \
            (cap) = pm_vec_cap_;                                                               \
        }                                                                                      \
        pm_vec_rc_;                                                                            \
    })

#endif
