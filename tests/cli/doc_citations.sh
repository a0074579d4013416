#!/bin/sh
# Every citation of a section of the docs names a heading that exists:
# `docs/X.md, "Title"`, `docs/X.md "Title"` and `docs/X.md, "A" and "B"`,
# in the docs, the man pages, the sources, the tests, the examples, the
# bench and the Makefile.  A title cites the heading it begins (backticks
# ignored: "Comparing two jobs" is "Comparing two jobs (`--compare`)"), or
# one of docs/report.md's numbered page titles ("Data quality").  A
# citation split over comment lines is joined first.
set -u
ROOT=${PM_ROOT:-.}
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP  python3 not installed"
    exit 0
fi
python3 - "$ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
heads = {}
def headings(md):
    if md not in heads:
        p = os.path.join(root, md)
        if not os.path.isfile(p):
            heads[md] = None
        else:
            lines = open(p, encoding='utf-8').read().split('\n')
            hs = [re.sub(r'^#+\s*', '', l).replace('`', '').strip()
                  for l in lines if l.startswith('#')]
            hs += [m.group(1) for l in lines
                   for m in [re.match(r'^\d+\. \*\*([^*]+)\*\*', l)] if m]
            heads[md] = hs
    return heads[md]
cite = re.compile(r'((?:docs/)?[a-z-]+\.md)`?,?\s+"([^"]+)"(?:\s+and\s+"([^"]+)")?')
files = ['README.md', 'Makefile']
for top in ('docs', 'src', 'include', 'tests', 'examples', 'bench'):
    for d, _, fs in os.walk(os.path.join(root, top)):
        files += [os.path.relpath(os.path.join(d, f), root) for f in fs
                  if f.endswith(('.md', '.c', '.h', '.sh', '.1', '.py'))]
n = bad = 0
for f in sorted(files):
    p = os.path.join(root, f)
    if not os.path.isfile(p):
        continue
    text = open(p, encoding='utf-8', errors='replace').read()
    flat = re.sub(r'\n\s*(#|\*|//)?\s*', ' ', text)
    flat = flat.replace('\\(lq', '"').replace('\\(rq', '"')
    for m in cite.finditer(flat):
        md = m.group(1)
        if not md.startswith('docs/') and os.path.isfile(os.path.join(root, 'docs', md)):
            md = 'docs/' + md
        hs = headings(md)
        if hs is None:
            continue
        for title in filter(None, m.group(2, 3)):
            n += 1
            t = title.replace('`', '').strip()
            if not any(h.startswith(t) for h in hs):
                bad += 1
                print(f'FAIL  {f}: {md}, "{title}" names no heading of {md}')
if n < 100:
    print(f'FAIL  only {n} citations found: the pattern no longer matches the tree')
    sys.exit(1)
print(f'{"FAIL" if bad else "ok  "}  {n} citations of a docs section, {bad} unresolved')
sys.exit(1 if bad else 0)
PY
