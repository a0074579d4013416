#!/bin/sh
# tests/layers.sh ROOT BUILD: every dependency points down.
#
# The layers, lowest first (docs/architecture.md):
#   0 common   1 profile   2 sampler, input   3 analysis   4 export
#   5 render   6 archive   7 the programs (src/perfmon-*)
# A module may call and include its own files and any lower layer; two
# modules of one layer (sampler, input) know nothing of each other.  The
# sampler is a branch of its own: above it only the programs use it (the
# analysis and what is built on it know nothing of the sampler).
#
# Two checks, both over what the build really holds:
#   calls     every undefined symbol of ROOT's BUILD/src/<module>/*.o that
#             another module defines (nm) must be defined lower down;
#   includes  every #include "perfmon/X.h" of src/<module>/*.[ch] must name a
#             header all of whose functions are defined by the module itself
#             or by lower layers: a header that declares a function of a
#             module above it or beside it (sampler, input) is refused, and
#             so is a header of the sampler outside the sampler and the
#             programs.
#             A header of types only belongs to common.
# Prints each violation as "file -> target (symbol or header)" and exits 1
# when there is one.
set -u
ROOT=${1:-.}
BUILD=${2:-build/release}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

rank() {
    case $1 in
    common) echo 0 ;; profile) echo 1 ;; sampler | input) echo 2 ;; analysis) echo 3 ;;
    export) echo 4 ;; render) echo 5 ;; archive) echo 6 ;; perfmon-*) echo 7 ;; *) echo 99 ;;
    esac
}
: >"$tmp/ranks"
for d in "$ROOT"/src/*/; do
    m=$(basename "$d")
    r=$(rank "$m")
    [ "$r" = 99 ] && { echo "layers: src/$m is in no layer (tests/layers.sh, docs/architecture.md)"; exit 1; }
    echo "$m $r" >>"$tmp/ranks"
done

# symbol module file, for every defined and every undefined global symbol
# (one nm over every object: objects of sources that no longer exist, moved
# files, are not the code)
: >"$tmp/objs"
for o in "$BUILD"/src/*/*.o; do
    [ -f "$o" ] || continue
    m=$(basename "$(dirname "$o")")
    f=$(basename "$o" .o)
    [ -f "$ROOT/src/$m/$f.c" ] && echo "$o" >>"$tmp/objs"
done
nobj=$(wc -l <"$tmp/objs")
# nm -A names each line's object: "PATH/src/MOD/FILE.o:[addr] type symbol"
objfile='{ o = $1; sub(/:.*/, "", o); n = split(o, p, "/"); f = p[n]; sub(/[.]o$/, "", f); m = p[n - 1] }'
if [ "$nobj" -gt 0 ]; then
    xargs nm -A -g --defined-only <"$tmp/objs" | awk "$objfile"' NF == 3 { print $3, m, f }' >"$tmp/defs"
    xargs nm -A -u <"$tmp/objs" | awk "$objfile"' { print $NF, m, f }' >"$tmp/uses"
fi
[ "$nobj" -gt 0 ] || { echo "layers: no objects under $BUILD/src (build first)"; exit 2; }

awk 'function branch(to, from) { return to == "sampler" && from !~ /^perfmon-/ }
     FILENAME == ARGV[1] { rank[$1] = $2; next }
     FILENAME == ARGV[2] { dm[$1] = $2; df[$1] = $3; next }
     ($1 in dm) && dm[$1] != $2 && (rank[dm[$1]] >= rank[$2] || branch(dm[$1], $2)) {
         printf "src/%s/%s.c -> src/%s/%s.c (calls %s)\n", $2, $3, dm[$1], df[$1], $1 }' \
    "$tmp/ranks" "$tmp/defs" "$tmp/uses" | sort -u >"$tmp/bad"

# The modules of each public header: those that define the functions it
# declares ("header module symbol", one line per module).
for h in "$ROOT"/include/perfmon/*.h; do
    b=$(basename "$h")
    grep -o 'pm_[A-Za-z0-9_]*[ ]*(' "$h" | tr -d ' (' | sort -u |
        awk -v h="$b" '{ print h, $1 }'
done >"$tmp/decls"
awk 'FILENAME == ARGV[1] { dm[$1] = $2; next }
     ($2 in dm) && !(($1, dm[$2]) in seen) { seen[$1, dm[$2]] = 1; print $1, dm[$2], $2 }' \
    "$tmp/defs" "$tmp/decls" >"$tmp/hdr"
for f in "$ROOT"/src/*/*.c "$ROOT"/src/*/*.h; do [ -f "$f" ] && echo "$f"; done |
    xargs grep -H '^[ ]*#[ ]*include[ ]*"perfmon/' |
    awk -v root="$ROOT/" '{ f = $0; sub(/:.*/, "", f); inc = $0; sub(/^[^"]*"perfmon\//, "", inc)
           sub(/".*/, "", inc); n = split(f, p, "/"); if (index(f, root) == 1) f = substr(f, length(root) + 1)
           print p[n - 1], f, inc }' >"$tmp/incs"
awk 'function branch(to, from) { return to == "sampler" && from !~ /^perfmon-/ }
     FILENAME == ARGV[1] { rank[$1] = $2; next }
     FILENAME == ARGV[2] { n = ++nm[$1]; hm[$1, n] = $2; hs[$1, n] = $3; next }
     { for (i = 1; i <= nm[$3]; i++) {
           m = hm[$3, i]
           if (m != $1 && (rank[m] >= rank[$1] || branch(m, $1)))
               printf "%s -> include/perfmon/%s (a header of src/%s: %s)\n", $2, $3, m, hs[$3, i]
       } }' \
    "$tmp/ranks" "$tmp/hdr" "$tmp/incs" | sort -u >>"$tmp/bad"

if [ -s "$tmp/bad" ]; then
    echo "layers: a module reaches above its layer (docs/architecture.md):"
    sed 's/^/  /' "$tmp/bad"
    exit 1
fi
echo "layers: $nobj objects, $(wc -l <"$tmp/incs") includes: every dependency points down"
