/* ska.h - import of SKA SDP perfmon's JSON output into pm_profile.
 *
 * Accepts the merged cpu_metrics.json ({"host_names": [...], "<host>": {...}})
 * and per-host files (an object with "time_stamps").  Each host becomes one
 * pm_profile whose columns carry perfmon's names (cpu.percent, proc.rss,
 * net.all.bytes_sent, ib.bytes_sent, rapl.package-0, ...; the mapping table
 * is in docs/analysis.md), so everything downstream is format-agnostic.
 *
 * SKA lists may be shorter than time_stamps (padded with NaN) or longer
 * (truncated); the number of such cells is recorded in p->warnings.
 * Timestamps are wall-clock seconds (often integers); t_mono_ns is 0.
 *
 * Memory: the file is mapped, its top level is scanned without building a
 * tree, and only one host object at a time is parsed with cJSON, so the
 * peak is one host's tree plus the decoded doubles.
 *
 * Ownership: *out is an array of *nout profiles, all owned by the caller
 * (pm_profile_free() each, then free() the array).
 */
#ifndef PERFMON_SKA_H
#define PERFMON_SKA_H

#include <stddef.h>

#include "perfmon/error.h"
#include "perfmon/profile.h"

/* pm_profile.format of profiles imported from SKA perfmon JSON. */
#define PM_FMT_SKA 16

/* 1 when the bytes look like a JSON object that is not a perfmon JSON
 * Lines profile (a candidate for pm_ska_decode). */
int pm_ska_sniff(const void *head, size_t len);

/* Decode SKA JSON text (len bytes, need not be NUL-terminated).
 * Malformed JSON gives "path:line:col: message"; a missing or mistyped
 * field gives "path: host H: field: message".  PM_ENOENT when the text is
 * valid JSON but not SKA perfmon output. */
int pm_ska_decode(const char *path, const char *text, size_t len, pm_profile ***out, size_t *nout,
                  pm_error *err) PM_WUR;

/* Map the file at path and decode it. */
int pm_ska_read(const char *path, pm_profile ***out, size_t *nout, pm_error *err) PM_WUR;

#endif
