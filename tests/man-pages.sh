#!/bin/sh
# man-pages.sh - the man page help2man made of each program built:
# NAME with the program's name, SYNOPSIS, DESCRIPTION and ENVIRONMENT, and
# every option the program's --help lists; EXAMPLES that run the program,
# SEE ALSO naming mgpu-record(7) and no page of its own, and REPORTING BUGS
# with configure's address (man/PROGRAM.h2m, tools/make-man).  Skips (77)
# where configure found no help2man.
. "$top_srcdir/tests/lib.sh"
if [ -z "${HELP2MAN:-}" ]; then
    echo "SKIP: no help2man, no man pages built"
    exit 77
fi
failed=0 checked=0
for prog in single_thread/mgpu-single fork/mgpu-fork pthread/mgpu-pthread openmp/mgpu-openmp \
    streams/mgpu-streams mpi/mgpu-mpi persistent/mgpu-persistent bench/mgpu-p2p \
    bench/mgpu-compare; do
    [ -x "$top_builddir/$prog" ] || continue
    name=${prog##*/}
    page=$top_builddir/man/$name.1
    checked=$((checked + 1))
    if [ ! -s "$page" ]; then
        echo "FAIL: $page was not made"
        failed=1
        continue
    fi
    # The page's text: font changes and escaped hyphens undone.
    text=$(sed 's/\\f[BIRP]//g; s/\\[,/]//g; s/\\-/-/g' "$page")
    for section in NAME SYNOPSIS DESCRIPTION ENVIRONMENT EXAMPLES '"SEE ALSO"' \
        '"REPORTING BUGS"'; do
        printf '%s\n' "$text" | grep -q "^\.SH $section\$" ||
            { echo "FAIL: $name.1 has no $section section"; failed=1; }
    done
    printf '%s\n' "$text" | sed -n '/^\.SH NAME/{n;p;}' | grep -q "^$name - ." ||
        { echo "FAIL: $name.1: NAME is not '$name - summary'"; failed=1; }
    examples=$(printf '%s\n' "$text" | sed -n '/^\.SH EXAMPLES/,/^\.SH/p')
    printf '%s\n' "$examples" | grep -q "^\.B .*$name " ||
        { echo "FAIL: $name.1: no example runs $name"; failed=1; }
    see_also=$(printf '%s\n' "$text" | sed -n '/^\.SH "SEE ALSO"/,/^\.SH/p')
    printf '%s\n' "$see_also" | grep -q '^\.BR mgpu-record (7)' ||
        { echo "FAIL: $name.1: SEE ALSO does not name mgpu-record(7)"; failed=1; }
    printf '%s\n' "$see_also" | grep -q "^\.BR $name (" &&
        { echo "FAIL: $name.1: SEE ALSO names the page itself"; failed=1; }
    printf '%s\n' "$text" | sed -n '/^\.SH "REPORTING BUGS"/,/^\.SH/p' | grep -q '<.*@.*>' ||
        { echo "FAIL: $name.1: REPORTING BUGS gives no address"; failed=1; }
    options=$(run_limited "$top_builddir/$prog" --help |
        sed -n 's/^  \(-[^ ].*\)/\1/p' | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    [ -n "$options" ] || { echo "FAIL: $name --help lists no option"; failed=1; }
    for option in $options; do
        printf '%s\n' "$text" | grep -q -- "\(^\|, \)$option\([=[, ]\|$\)" ||
            { echo "FAIL: $name.1 does not list $option"; failed=1; }
    done
done
[ "$checked" -gt 0 ] || { echo "FAIL: no program built"; exit 1; }
echo "$checked man pages checked"
exit $failed
