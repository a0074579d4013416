#!/bin/sh
# The Makefile's hygiene (issue 17, item 6), read from `make -n` (nothing
# is built):
#  - every name in .PHONY is a target with a rule (a phantom one makes
#    `make NAME` say "Nothing to be done" and pass);
#  - a user's `make` compiles without -Werror, `make test` (and so
#    `make check`) and `make valgrind` with it;
#  - library and program objects are compiled without -Itests/support,
#    the tests' objects with it;
#  - `make deps` as a user who is not root, with only optional packages
#    missing, says what it would install and succeeds (run as root, the
#    check drops to nobody with setpriv, or is skipped).
set -u
. "$PM_ROOT/tests/support/cli.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/u" && chmod 755 "$T" "$T/u"
unset MAKEFLAGS MFLAGS MAKELEVEL
M="make -C $PM_ROOT --no-print-directory SAN=0 DEBUG=0 BUILD=$T/b"

# .PHONY names, continuation lines joined.
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$PM_ROOT/Makefile" | sed -n 's/^\.PHONY:[[:space:]]*//p' |
    tr -s ' \t' '\n\n' | grep -v '^$' >"$T/phony"
check ".PHONY names targets (found $(wc -l <"$T/phony"))" [ -s "$T/phony" ]
phantom=""
while read -r t; do
    grep -Eq "^([^:#=]*[[:space:]])?$t([[:space:]][^:#=]*)?:([^=]|$)" "$PM_ROOT/Makefile" ||
        phantom="$phantom $t"
done <"$T/phony"
check "every .PHONY name has a rule${phantom:+ (phantom:$phantom)}" [ -z "$phantom" ]

# Compile lines, one object of each kind.
lib_o=$T/b/src/common/arena.o
cli_o=$T/b/src/perfmon-analyze/main.o
test_o=$T/b/tests/unit/test_arena.o
sup_o=$T/b/tests/support/testutil.o
$M -n "$lib_o" "$cli_o" "$test_o" "$sup_o" >"$T/plain" 2>&1
$M -n test >"$T/test" 2>&1
$M -n valgrind >"$T/valgrind" 2>&1
line() { grep -- " -c $2 " "$1"; }
check "make: library object compiled" sh -c "grep -q -- ' -c src/common/arena.c ' '$T/plain'"
check "make: no -Werror" sh -c "! grep -q -- -Werror '$T/plain'"
check "make test: library object with -Werror" sh -c "grep -- ' -c src/common/arena.c ' '$T/test' | grep -q -- ' -Werror '"
check "make test: test object with -Werror" sh -c "grep -- ' -c tests/unit/test_arena.c ' '$T/test' | grep -q -- ' -Werror '"
check "make valgrind: library object with -Werror" sh -c "grep -- ' -c src/common/arena.c ' '$T/valgrind' | grep -q -- ' -Werror '"
for f in src/common/arena.c src/perfmon-analyze/main.c; do
    check "$f: without -Itests/support" sh -c "line() { grep -- \" -c \$2 \" \"\$1\"; }; line '$T/plain' $f >'$T/l' && ! grep -q -- -Itests/support '$T/l'"
    check "$f under make test: without -Itests/support" sh -c "grep -- ' -c $f ' '$T/test' >'$T/l' && ! grep -q -- -Itests/support '$T/l'"
done
for f in tests/unit/test_arena.c tests/support/testutil.c; do
    check "$f: with -Itests/support" sh -c "grep -- ' -c $f ' '$T/plain' | grep -q -- -Itests/support"
done

# make deps without root, an optional package missing: a message, exit 0;
# a build package missing: the apt-get command, exit 1.
if [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null 2>&1; then
        asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    else
        asuser() { return 99; }
    fi
else
    asuser() { "$@"; }
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "SKIP  no dpkg-query: make deps as a user not checked"
elif asuser true 2>/dev/null; then
    asuser make -f "$PM_ROOT/Makefile" --no-print-directory -C "$T/u" deps DEB_BUILD_PKGS= \
        DEB_TEST_PKGS=perfmon-no-such-package DEB_PKGS=perfmon-no-such-package >"$T/deps" 2>&1
    rc=$?
    check "make deps, optional package missing, not root: exit 0 (got $rc)" [ "$rc" = 0 ]
    check "  and it names the package and the command" has "$T/deps" \
        'apt-get install -y --no-install-recommends perfmon-no-such-package'
    check "  and says the tests that need it are skipped" has "$T/deps" 'skipped'
    asuser make -f "$PM_ROOT/Makefile" --no-print-directory -C "$T/u" deps \
        DEB_BUILD_PKGS=perfmon-no-such-package DEB_TEST_PKGS= DEB_PKGS=perfmon-no-such-package \
        >"$T/deps2" 2>&1
    rc=$?
    check "make deps, build package missing, not root: fails (exit $rc)" [ "$rc" != 0 ]
    check "  with the command to run as root" has "$T/deps2" 'run as root'
else
    echo "SKIP  root without setpriv: make deps as a user not checked"
fi

[ "$fails" -eq 0 ] || exit 1
