# Shared by the shell tests in tests/cli/ (sourced, not run):
#   check DESCRIPTION COMMAND...  runs COMMAND; prints "ok" or "FAIL" and
#                                 counts failures in $fails
#   has FILE PATTERN              grep -q for PATTERN in FILE
# Each test ends with: [ "$fails" -eq 0 ] || ... exit 1.
fails=0
check() {
    desc=$1
    shift
    if "$@"; then echo "ok    $desc"; else echo "FAIL  $desc"; fails=$((fails + 1)); fi
}
has() { grep -q -- "$2" "$1"; }
