#!/usr/bin/env bash
# What the SMs did, checked on a real NVIDIA GPU: perfmon-sample's SM
# activity (gpu.<n>.sm_active, NVML GPM or DCGM) and utilisation against a
# reference sampled in the same run (DCGM's `dcgmi dmon -e 1002`, else
# `nvidia-smi dmon --gpm-metrics 2`), on a load that tells them apart:
#   slot 3k:   every SM busy (wide kernel)      utilisation ~100, SM activity ~100
#   slot 3k+1: one block of 32 threads spinning  utilisation ~100, SM activity ~1/SMs
#   slot 3k+2: idle                              utilisation 0,   SM activity 0
# Each slot lasts 2 s (a kernel of 1.8 s), so that every slot holds whole
# intervals of the sampler's 0.5 s.
# The second kind is what issue 29's "busy but starved" verdict is about:
# NVML's utilisation says 100 % while the SMs are almost all idle.
#
# Runs where ../shared/tools/gpu-check.sh runs (a GPU machine, maybe with
# no package archive): only the sampler is built.  From the project root:
#   bash tests/device/gpu-sm-check.sh [SECONDS]
# Leaves in $OUT (or ./gpu-sm-check): the profile (JSON Lines, copy it back
# and run `perfmon-analyze DIR --stats` on it for the verdicts), the
# reference's output, the comparison.  Exit 0 when the SM columns agree
# with the reference's levels (the share of samples above 50 % within
# 0.15, their means within 10 points), >= 80 % of the wide slots' samples
# show SM activity >= 80 and >= 80 % of the narrow slots' utilisation >= 90
# with SM activity <= 10; 1 when not; 2 when it cannot run (no GPU, no nvcc, no SM activity
# on this GPU: the profile's note says why).
set -u
secs=${1:-60}
out=${OUT:-$PWD/gpu-sm-check}
mkdir -p "$out"
command -v nvidia-smi >/dev/null 2>&1 || { echo "gpu-sm-check: no nvidia-smi here"; exit 2; }
nvidia-smi -L | tee "$out/gpus.txt"
make -s build/release/bin/perfmon-sample >"$out/build.log" 2>&1 || { tail -n 5 "$out/build.log"; exit 2; }
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$NVCC" ] || { echo "gpu-sm-check: no nvcc: cannot load the GPU"; exit 2; }
cat >"$out/phases.cu" <<'CU'
#include <cstdio>
#include <cstdlib>
#include <ctime>
/* Spin until `cycles` SM clocks have passed: a kernel's length is set by
 * time, not by work, so every phase lasts its second whatever the GPU. */
__global__ void spin(long long cycles, int *sink)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) *sink = 1;
}
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 30, sms = 0, khz = 0, *sink;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    cudaMalloc(&sink, sizeof *sink);
    long long cyc = (long long)khz * 1800; /* 1.8 s at the SM clock */
    double t0 = now();
    printf("sms %d clock_khz %d start %.3f\n", sms, khz, t0);
    for (int s = 0; s < secs / 2; s++) {
        double start = now();
        int kind = s % 3;
        if (kind == 0) spin<<<sms * 8, 256>>>(cyc, sink);
        else if (kind == 1) spin<<<1, 32>>>(cyc, sink);
        if (kind != 2) cudaDeviceSynchronize();
        printf("phase %d %.3f %.3f\n", kind, start - t0, now() - t0);
        fflush(stdout);
        double left = t0 + 2 * (s + 1) - now();
        if (left > 0) {
            struct timespec ts = {(time_t)left, (long)((left - (time_t)left) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    cudaFree(sink);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
CU
"$NVCC" -O2 -o "$out/phases" "$out/phases.cu" >"$out/nvcc.log" 2>&1 || { tail -n 5 "$out/nvcc.log"; exit 2; }

# The reference, sampled every 500 ms beside the sampler.
ref=none
if command -v dcgmi >/dev/null 2>&1 && dcgmi discovery -l >/dev/null 2>&1; then
    ref=dcgm
    dcgmi dmon -e 1002,1003 -d 500 >"$out/ref.txt" 2>&1 &
else
    ref=smi
    nvidia-smi dmon --gpm-metrics 2,3 -d 1 -o T >"$out/ref.txt" 2>&1 &
fi
refpid=$!
sleep 1
start=$(date +%s.%N)
build/release/bin/perfmon-sample -o "$out/prof" -i 0.5 -f json -- "$out/phases" "$secs" \
    >"$out/phases.log" 2>"$out/sample.log"
rc=$?
kill "$refpid" 2>/dev/null
wait "$refpid" 2>/dev/null
echo "gpu-sm-check: sampler exit $rc; reference $ref ($(wc -l <"$out/ref.txt") lines in ref.txt)"
command -v python3 >/dev/null 2>&1 || { echo "gpu-sm-check: no python3: compare $out by hand"; exit 2; }
python3 "$(dirname "$0")/gpu_sm_compare.py" "$out" "$ref" "$start"
