#!/bin/sh
# perfmon-sample -- CMD follows each process the command starts from the
# sample after its birth (docs/perfmon-sample.md, "Cost": a birth is looked
# up in the children files of the members that ran, the tree's task-clock
# counter telling whether any did).  A parent starts 4 children 0.3 s
# apart, none ending meanwhile; at -i 0.05 the tree is seen with 2, 3, 4
# and 5 processes in turn, each from the sample after the birth.
set -u
# The sampler runs bare, as in the other timing tests: under valgrind its
# samples come late and the births would fall between them.
S="$PM_BIN/perfmon-sample"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$PM_ROOT/tests/support/cli.sh"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed: the test's parent and the profile reader need it"
    exit 0
fi
cat >"$T/parent.py" <<'PY'
import os, time
for i in range(4):
    if os.fork() == 0:
        time.sleep(2.5)
        os._exit(0)
    time.sleep(0.3)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
PY
$S -o "$T/out" -f json -i 0.05 -d 2 -- python3 "$T/parent.py" >"$T/log" 2>&1
rc=$?
check "sampler exit status 0" [ "$rc" -eq 0 ]
python3 - "$T"/out/*.pmp.jsonl >"$T/counts" <<'PY'
import json, sys
cols = None
seen = []
for line in open(sys.argv[1]):
    o = json.loads(line)
    if cols is None and "columns" in o:
        cols = [c["name"] for c in o["columns"]]
    elif "v" in o and cols:
        v = o["v"][cols.index("proc.count")]
        if v is not None and (not seen or seen[-1] != v):
            seen.append(v)
# from the parent alone on (its start may run helpers of its own)
last1 = max((i for i, x in enumerate(seen) if x == 1), default=-1)
print(" ".join(str(int(x)) for x in seen[last1 + 1:]))
PY
echo "      proc.count in turn, from the parent alone on: $(cat "$T/counts")"
check "the tree seen with 2, 3, 4 and 5 processes in turn" [ "$(cat "$T/counts")" = "2 3 4 5" ]
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
