/* Shared by the events writer and reader (not a public header). */
#ifndef PERFMON_EVENTS_INTERNAL_H
#define PERFMON_EVENTS_INTERNAL_H

/* Every event line starts with this, so files are recognised by content. */
#define PM_EVENT_MAGIC "{\"perfmon_event\":"

static const char *const PM_EDGE_NAMES[] = {"start", "end", "once"};

#endif
