/* split.h - reading the inputs of one analysis on several processes
 * (perfmon-analyze under mpirun: docs/analysis.md, "MPI").
 *
 * Every process (rank) lists the same input files; each reads and decodes
 * its share of them (file i on rank i mod size: the same on every rank
 * even while a running sampler grows its file), and every rank but 0 sends what each file gave (its profiles, or why it
 * was not read) to rank 0, one message per file, then an end message that
 * names its file list.  Rank 0 puts each file's result where its own read
 * would have put it and goes on as one process would, so its outputs are
 * the same bytes.  Events and Scanner files (small) are read by rank 0.
 *
 * The library moves no bytes itself: the program gives the transport.
 * Ownership: the caller owns the pm_split and keeps it for the analysis.
 */
#ifndef PERFMON_SPLIT_H
#define PERFMON_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "perfmon/error.h"

typedef struct pm_split {
    int rank, size; /* this process, and how many there are (size >= 1) */
    /* Rank > 0: send len bytes to rank 0; 0 or a PM_E* code. */
    int (*send)(void *user, const void *buf, size_t len);
    /* Rank 0: the next message from any rank: its sender, and the bytes
     * (malloc'd, the caller frees); 0 or a PM_E* code. */
    int (*recv)(void *user, int *from, void **buf, size_t *len);
    /* Every rank, once, after its part of the exchange: rank 0 gives its
     * status (0 or a PM_E* code), the others get it back; returns it. */
    int (*status)(void *user, int rc);
    void *user;
    /* Set by the library: this rank's part of the exchange is over. */
    int done;
    /* Counted by the library: files read here, and (rank 0) files and
     * bytes received from the other ranks. */
    size_t files_read, files_received;
    uint64_t bytes_received;
    /* Seconds spent reading this rank's share, and (rank 0) then
     * receiving and unpacking the others'. */
    double read_s, gather_s;
} pm_split;

#endif
