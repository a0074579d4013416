#!/bin/sh
# perfmon-sample runs beside the job: it links libc alone (NVML is opened
# at run time), so it never maps the plotting, HDF5 or maths libraries and
# its resident size stays small.  A new dependency shows up here.
set -u
if ! command -v readelf >/dev/null 2>&1; then
    echo "SKIP  readelf not installed"
    exit 0
fi
needed=$(readelf -d "$PM_BIN/perfmon-sample" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
case "${SAN:-0}" in 1) want_extra="libasan|libubsan|libstdc\+\+|libm|libgcc_s|libdl|libpthread|librt" ;; *) want_extra="" ;; esac
bad=""
for lib in $needed; do
    case "$lib" in
    libc.so.*) ;;
    *) if [ -n "$want_extra" ] && echo "$lib" | grep -Eq "^($want_extra)"; then :; else bad="$bad $lib"; fi ;;
    esac
done
if [ -n "$bad" ]; then
    echo "FAIL  perfmon-sample links more than libc:$bad (NEEDED: $needed)"
    exit 1
fi
echo "ok    perfmon-sample links: $needed"
