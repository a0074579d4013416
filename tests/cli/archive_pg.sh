#!/bin/sh
# perfmon-archive on PostgreSQL: starts a throw-away server (initdb +
# pg_ctl, loopback only, a free port, as the postgres user when run as
# root, since the server refuses to run as root), then runs the store
# round trip of test_archive_store and the add/list/history/check flow
# against postgresql:// URLs, with 4 archivers at once; the server is
# stopped and removed at exit.  Where no server can be started this
# prints a SKIP line and passes.
set -u
B="${PM_WRAP:-} $PM_BIN/perfmon-archive"
F="$PM_ROOT/fixtures/archive"
T=$(mktemp -d)
PGDATA="$T/pg"
started=0
cleanup() {
    if [ "$started" = 1 ]; then as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate stop >/dev/null 2>&1; fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
. "$PM_ROOT/tests/support/cli.sh"
skip() {
    echo "SKIP  PostgreSQL tests: $*"
    exit 0
}

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] || skip "no initdb/pg_ctl (Debian package postgresql)"
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || skip "running as root and there is no postgres user"
    command -v runuser >/dev/null 2>&1 || skip "running as root without runuser"
    chown postgres "$T" || skip "cannot hand $T to the postgres user"
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi
chmod 755 "$T"
as_pg "$PGBIN/initdb" -D "$PGDATA" -U archive --auth=trust -E UTF8 --locale=C >"$T/initdb.log" 2>&1 ||
    skip "initdb failed: $(tail -n 1 "$T/initdb.log")"

# A free loopback port: try a few from a per-process start.
port=""
base=$((20000 + $$ % 20000))
for k in 0 1 2 3 4 5 6 7; do
    p=$((base + k * 97))
    if as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$T/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $p -k $T -c fsync=off -c max_connections=30" start >/dev/null 2>&1; then
        port=$p
        started=1
        break
    fi
done
[ -n "$port" ] || skip "the server did not start: $(tail -n 2 "$T/server.log" 2>/dev/null | tr '\n' ' ')"
echo "PostgreSQL $("$PGBIN/postgres" --version | awk '{ print $3 }') on 127.0.0.1:$port"
createdb() { as_pg "$PGBIN/createdb" -h 127.0.0.1 -p "$port" -U archive "$1"; }
URL="postgresql://archive@127.0.0.1:$port"

# --- the store round trip of the unit test, on PostgreSQL -----------------------
U="${PM_BUILD:-}/tests/test_archive_store"
if [ -x "$U" ]; then
    createdb unit
    PM_ARCHIVE_TEST_DB="$URL/unit" ${PM_WRAP:-} "$U" >"$T/unit.log" 2>&1
    st=$?
    check "store round trip on PostgreSQL" [ "$st" -eq 0 ]
    [ "$st" -eq 0 ] || cat "$T/unit.log"
else
    echo "SKIP  $U not built: store round trip on PostgreSQL"
fi

# --- add, list, history, check -------------------------------------------------
createdb cli
DB="$URL/cli"
D="$T/data" A="$T/archive"
mkdir "$D" "$A"
cp "$F/tf-results.json" "$D/a.json"
cp "$F/perfmon-stats.json" "$D/b.json"
printf '{"name":"broken",' >"$D/c.json"
$B add --db "$DB" --datadir "$D" --archivedir "$A" --test nightly >"$T/out" 2>"$T/err"
check "add with a bad file exits 1" [ $? -eq 1 ]
check "the summary counts" has "$T/out" "archived 2 files (37 entries), 0 already stored, 0 skipped, 1 failed"
check "the bad file is reported and moved" has "$T/err" "cannot process $D/c.json:1:" && [ -f "$A/failed/c.json" ]
$B list --db "$DB" >"$T/out"
check "list shows both tests" grep -q "^nightly  *1  *34 " "$T/out" && grep -q "^//tensorflow/core/kernels:matmul_op_test  *1  *3 " "$T/out"
$B history --db "$DB" nightly phase:solve >"$T/out"
check "history of an entry" grep -q "^2023-11-14T22:13:19.700000Z  phase:solve  61.5$" "$T/out"
cp "$F/tf-results.json" "$D/again.json"
$B add --db "$DB" --datadir "$D" --archivedir "$A" >"$T/out" 2>&1
check "a stored file again: already stored, exit 0" has "$T/out" "archived 0 files (0 entries), 1 already stored"

H="$T/hist" HA="$T/hist-archive"
mkdir "$H" "$HA"
i=0
for v in 1.00 1.02 0.99 1.01 0.98 1.00 1.03 0.99 1.01 1.00 1.30; do
    printf '{"name":"x'"'"'); DROP TABLE entry; --","startTime":"%d","entries":{"entry":[{"name":"steady","wallTime":%s},{"name":"flat","wallTime":2}]}}\n' \
        $((1700000000 + i * 86400)) "$v" >"$H/run$i.json"
    i=$((i + 1))
done
# 4 archivers at once on the same files and database.
pids=""
for k in 1 2 3 4; do
    $B add --db "$DB" --datadir "$H" --archivedir "$HA" >"$T/c$k" 2>&1 &
    pids="$pids $!"
done
st=0
for p in $pids; do wait "$p" || st=1; done
check "4 concurrent archivers exit 0" [ "$st" -eq 0 ]
check "every file archived once" [ "$(ls "$HA" | wc -l)" -eq 11 ] && [ "$(ls "$H" | wc -l)" -eq 0 ] &&
    [ "$(cat "$T"/c1 "$T"/c2 "$T"/c3 "$T"/c4 | awk '{ n += $2 } END { print n }')" = 11 ]
$B history --db "$DB" "x'); DROP TABLE entry; --" steady >"$T/out"
check "the SQL-looking test name reads back, 11 runs" [ "$(wc -l <"$T/out")" -eq 11 ]
$B check --db "$DB" "x'); DROP TABLE entry; --" >"$T/out"
check "one entry 30% slower, the other flat, a young history: suspect, exit 6" [ $? -eq 6 ]
check "and says which and by how much" grep -q "^SUSPECT  *steady: latest 1.3 vs median 1 of 10 runs (+30.0%," "$T/out"
check "the steady entry is ok" grep -q "^ok  *flat: latest 2 vs median 2" "$T/out"

# 4 archivers at once on 1,000 files: each archived and stored exactly once.
M="$T/many" MA="$T/many-archive"
mkdir "$M" "$MA"
i=0
while [ "$i" -lt 1000 ]; do
    printf '{"name":"many","startTime":"%d","entries":{"entry":[{"name":"a","wallTime":%d},{"name":"b","wallTime":1}]}}\n' \
        $((1700000000 + i)) "$i" >"$M/r$i.json"
    i=$((i + 1))
done
pids=""
for k in 1 2 3 4; do
    $B add --db "$DB" --datadir "$M" --archivedir "$MA" >"$T/m$k" 2>&1 &
    pids="$pids $!"
done
st=0
for p in $pids; do wait "$p" || st=1; done
check "4 archivers on 1,000 files exit 0" [ "$st" -eq 0 ]
check "none left, 1,000 archived under their own names" [ "$(ls "$M" | wc -l)" -eq 0 ] &&
    [ "$(ls "$MA" | grep -c '^r[0-9]*\.json$')" -eq 1000 ] && [ "$(ls "$MA" | wc -l)" -eq 1000 ]
check "1,000 runs and 2,000 entries stored" [ "$($B list --db "$DB" | awk '$1 == "many" { print $2, $3 }')" = "1000 2" ] &&
    [ "$($B history --db "$DB" many | wc -l)" -eq 2000 ]
cat "$T"/m1 "$T"/m2 "$T"/m3 "$T"/m4

$B list --db "postgresql://archive@127.0.0.1:1/none?connect_timeout=2" 2>"$T/err"
check "an unreachable server exits 3" [ $? -eq 3 ]
check "the connection failure is said" has "$T/err" "PostgreSQL: cannot connect"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
