#!/bin/sh
# man-record.sh - mgpu-record(7), doc/record.md made a man page by
# tools/md2man: it is there, with its NAME, DESCRIPTION and SEE ALSO;
# groff reads it without a warning; and every field doc/record.md's tables
# name is a tagged paragraph of the page, and every such tag a field of
# doc/record.md, so that the two say the same.
. "$top_srcdir/tests/lib.sh"
page=$top_builddir/man/mgpu-record.7
[ -f "$page" ] || page=$top_srcdir/man/mgpu-record.7
doc=$top_srcdir/doc/record.md
tmp="${TMPDIR:-/tmp}/mgpu-man-record.$$"
trap 'rm -f "$tmp".*' EXIT
failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}

if [ ! -s "$page" ]; then
    echo "FAIL: no man/mgpu-record.7 was made"
    exit 1
fi
grep -q '^\.TH MGPU-RECORD 7 ' "$page" || fail "mgpu-record.7 has no .TH line for section 7"
for section in NAME DESCRIPTION '"SEE ALSO"'; do
    grep -q "^\\.SH $section\$" "$page" || fail "mgpu-record.7 has no $section section"
done
sed -n '/^\.SH NAME/{n;p;}' "$page" | grep -q '^mgpu-record \\- .' ||
    fail "mgpu-record.7: NAME is not 'mgpu-record - summary'"
if command -v groff >/dev/null 2>&1; then
    groff -man -ww -z "$page" >"$tmp.groff" 2>&1
    [ -s "$tmp.groff" ] && { fail "groff warns:"; sed 's/^/# /' "$tmp.groff"; }
fi

# The fields: in doc/record.md, the `names` of the column headed field or
# figure (the tag md2man takes) of each table; in the page, the bold names
# of each .TP tag line.
awk '
/^\|/ {
    line = $0; sub(/^ *\|/, "", line); sub(/\| *$/, "", line)
    n = split(line, c, "|")
    if (!intable) {
        intable = 1; tag = 0
        for (i = 1; i <= n; i++) {
            h = c[i]; gsub(/ /, "", h)
            if (h ~ /^(field|figure|option|test|variable)$/) { tag = i; break }
        }
        next
    }
    if (line ~ /^[-| :]*$/ || !tag) next
    s = c[tag]
    while (match(s, /`[^`]*`/)) { print substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH) }
    next
}
{ intable = 0 }' "$doc" | sort -u >"$tmp.doc"
awk 'prev == ".TP" {
    s = $0
    while (match(s, /\\fB[^\\]*(\\-[^\\]*)*\\fR/)) { print substr(s, RSTART + 3, RLENGTH - 6); s = substr(s, RSTART + RLENGTH) }
}
{ prev = $0 }' "$page" | sed 's/\\-/-/g' | sort -u >"$tmp.page"
only_doc=$(comm -23 "$tmp.doc" "$tmp.page" | tr '\n' ' ')
only_page=$(comm -13 "$tmp.doc" "$tmp.page" | tr '\n' ' ')
[ -z "$only_doc" ] || fail "fields of doc/record.md missing from mgpu-record.7: $only_doc"
[ -z "$only_page" ] || fail "fields of mgpu-record.7 not in doc/record.md: $only_page"
count=$(grep -c '' "$tmp.doc")
[ "$count" -ge 60 ] || fail "only $count fields found in doc/record.md"
for field in schema time_s binding node_ranks pcie_path; do
    grep -qx "$field" "$tmp.page" || fail "mgpu-record.7 does not name $field"
done
[ "$failed" -eq 0 ] && echo "mgpu-record.7: the $count fields of doc/record.md, and no other"
exit $failed
