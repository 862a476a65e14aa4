#!/bin/sh
# design-refs.sh - the design the code cites is the one in the repository:
# no source, test or document names a DESIGN.md (there is none here; the
# design as built is doc/design.md), and every
# "doc/design.md section N" names a section that doc/design.md has.
: "${top_srcdir:=.}"
design="$top_srcdir/doc/design.md"
if [ ! -f "$design" ]; then
    echo "no $design"
    exit 1
fi
# The distributed text files, not what a build or check-sanitize made.
files=$(find "$top_srcdir" \( -name .git -o -name '_build*' -o -name sanitize -o \
    -name autom4te.cache -o -name results \) -prune -o \
    -type f ! -name design-refs.sh \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o \
    -name '*.cuh' -o -name '*.sh' -o -name '*.tap' -o -name '*.py' -o -name '*.md' -o \
    -name '*.am' -o -name '*.ac' -o -name run \) -print)
status=0
bad=$(grep -n 'DESIGN\.md' $files)
if [ -n "$bad" ]; then
    echo "DESIGN.md is not in the repository; cite doc/design.md:"
    printf '%s\n' "$bad"
    status=1
fi
cited=$(grep -o -h 'doc/design\.md section [0-9][0-9]*' $files | sed 's/.* //' | sort -u -n)
if [ -z "$cited" ]; then
    echo "nothing cites doc/design.md by section: this test finds no files"
    status=1
fi
for n in $cited; do
    if grep -q "^## $n\. " "$design"; then
        echo "ok: doc/design.md section $n"
    else
        echo "doc/design.md has no section $n, cited by:"
        grep -n "doc/design\.md section $n\\b" $files
        status=1
    fi
done
exit $status
