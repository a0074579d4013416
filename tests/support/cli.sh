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
# pdf_clean PDF: poppler reads every page without a word on stderr
# (pdftotext, and pdftoppm at a low resolution) and qpdf --check finds no
# error; the tools that are missing are skipped.
pdf_clean() {
    _pc=$(mktemp -d) || return 1
    _rc=0
    if command -v pdftotext >/dev/null 2>&1; then
        pdftotext "$1" "$_pc/t" 2>"$_pc/e1" || _rc=1
        pdftoppm -r 8 -png "$1" "$_pc/p" 2>>"$_pc/e1" || _rc=1
        [ -s "$_pc/e1" ] && { sed 's/^/      poppler: /' "$_pc/e1" | sort | uniq -c | head -5; _rc=1; }
    fi
    if command -v qpdf >/dev/null 2>&1; then
        qpdf --check "$1" >"$_pc/q" 2>&1 || { sed 's/^/      qpdf: /' "$_pc/q" | head -5; _rc=1; }
    fi
    rm -rf "$_pc"
    return $_rc
}
