/* libFuzzer target: the events (phase marks) reader, then the pairing of
 * whatever it accepted.  Seeds: fixtures/fuzz/events/. */
#include <stddef.h>
#include <stdint.h>

#include "perfmon/phase.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pm_event_list ev;
    size_t bad = 0;
    pm_error err;
    (void)pm_events_sniff(data, size);
    if (pm_events_decode("fuzz.events", (const char *)data, size, &ev, &bad, &err) == 0) {
        pm_phase_set s = {0};
        int rc = pm_phases_pair(&ev, &s, &err); /* pairing of any accepted marks */
        (void)rc;
        pm_phase_set_free(&s);
    }
    pm_event_list_free(&ev);
    return 0;
}
