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
 * With --stream (docs/analysis.md, "MPI"), the ranks gather the survey
 * (no values decoded) in the same way; rank 0 then broadcasts the hosts
 * (name, files) and, at each pass over the hosts, what to read; host h is
 * read and decoded on rank 1 + h % (size - 1), which sends it to rank 0 in
 * host order, and rank 0's worker threads take it instead of reading its
 * files: the same profile, so the same outputs.
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
    /* Rank 0: the next message from rank *from, or from any rank when
     * *from is -1: its sender in *from, and the bytes (malloc'd, the caller
     * frees); 0 or a PM_E* code.  Messages from one rank come in the order
     * it sent them. */
    int (*recv)(void *user, int *from, void **buf, size_t *len);
    /* --stream: every rank at once; rank 0 gives *buf and *len (kept by
     * the caller), the others get a copy (malloc'd, the caller frees); 0 or
     * a PM_E* code.  NULL: --stream is refused under this split. */
    int (*bcast)(void *user, void **buf, size_t *len);
    /* Every rank, once, after its part of the exchange: rank 0 gives its
     * status (0 or a PM_E* code), the others get it back; returns it. */
    int (*status)(void *user, int rc);
    void *user;
    /* --stream: the transport may be called from any thread, one at a
     * time (MPI_THREAD_SERIALIZED or more): rank 0 receives the hosts on a
     * thread of its own while its workers derive. */
    int threads;
    /* Set by the library: this rank's part of the exchange is over. */
    int done;
    /* Counted by the library: files read here, and (rank 0) files and
     * bytes received from the other ranks. */
    size_t files_read, files_received;
    uint64_t bytes_received;
    /* Seconds spent reading this rank's share, and (rank 0) then
     * receiving and unpacking the others'. */
    double read_s, gather_s;
    /* --stream (rank 0): the passes over the hosts served by the other
     * ranks, the hosts' profiles received in them and their bytes (not in
     * bytes_received), and the seconds its workers waited for them. */
    size_t passes, hosts_received;
    uint64_t host_bytes;
    double wait_s;
} pm_split;

#endif
