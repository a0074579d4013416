/* libFuzzer target: the Scanner binary profile reader (counts, strings,
 * truncation) and its content sniffer.  Seeds: fixtures/fuzz/scanner/. */
#include <stddef.h>
#include <stdint.h>

#include "perfmon/scanner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pm_phase_set s = {0};
    pm_error err;
    size_t nw;
    (void)pm_scanner_sniff(data, size);
    /* Damaged input keeps the whole workers before the damage: free both ways. */
    if (pm_scanner_decode("fuzz.bin", data, size, &s, &nw, &err) != 0 && nw == 0 && s.n)
        __builtin_trap(); /* a failed first worker must leave nothing behind */
    pm_phase_set_free(&s);
    return 0;
}
