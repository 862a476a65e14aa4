#!/bin/sh
# format.sh - lay out the C and CUDA sources with clang-format and the
# style in .clang-format (doc/contributing.md).
#
#   tools/format.sh [FILE...]          format in place (default: every source;
#                                      FILEs are *.c, *.h, *.cu or *.cuh)
#   tools/format.sh --check [FILE...]  change nothing; list the files whose
#                                      layout differs and exit 1 if any does
#
# CLANG_FORMAT names the clang-format to run (default: clang-format).  With
# none, --check says so and exits 0, since a fresh machine's checks must not
# fail for want of it; formatting exits 1.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

# The folders whose *.c, *.h, *.cu and *.cuh are formatted (the build's
# folders _build*/ and sanitize/ are not among them).
folders="lib single_thread fork pthread openmp streams mpi persistent bench tests tools"
# Sources in those folders that keep their own layout (generated, vendored
# or test data), as paths from the top; none today.
excluded=""
# The major version .clang-format was written for: another one may lay out
# a few constructs differently.
written_for=14

usage() {
    echo "usage: tools/format.sh [--check] [FILE...]" >&2
    exit 2
}

check=0
case ${1-} in
--check)
    check=1
    shift
    ;;
--help | -h)
    sed -n '2,12s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
-*) usage ;;
esac
for f in "$@"; do
    case $f in
    -*) usage ;;
    esac
    if [ ! -f "$f" ]; then
        echo "format.sh: $f: no such file" >&2
        exit 2
    fi
    # clang-format takes any other name for C++, and would rewrite a
    # README.md or a Makefile.am in place as code.
    case $f in
    *.c | *.h | *.cu | *.cuh) ;;
    *)
        echo "format.sh: $f: not a C or CUDA source (accepted: *.c, *.h, *.cu, *.cuh)" >&2
        exit 2
        ;;
    esac
done

clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null 2>&1; then
    if [ "$check" -eq 1 ]; then
        echo "format.sh: no $clang_format to run: layout not checked (install clang-format, or" \
            "set CLANG_FORMAT)"
        exit 0
    fi
    echo "format.sh: no $clang_format to run (install clang-format, or set CLANG_FORMAT)" >&2
    exit 1
fi
version=$("$clang_format" --version | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p')
if [ "${version%%.*}" != "$written_for" ]; then
    echo "format.sh: $clang_format is version ${version:-unknown}; .clang-format was written" \
        "for $written_for, and another version may lay out a few lines differently" >&2
fi

if [ "$#" -eq 0 ]; then
    cd "$top" || exit 1
    existing=
    for d in $folders; do
        [ -d "$d" ] && existing="$existing $d"
    done
    # shellcheck disable=SC2086 # the folders are words
    set -- $(find $existing -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o \
        -name '*.cuh' \) | LC_ALL=C sort)
fi

# The repository's .clang-format by its path: --style=file alone looks for
# one from each file's folder up, and a file outside the tree would get
# clang-format's own default layout instead.  (Before version 14 clang-format
# takes no path there, and finds the file from each source's folder.)
style="--style=file:$top/.clang-format"
case ${version%%.*} in
[0-9] | 1[0-3]) style=--style=file ;;
esac

tmp=$(mktemp "${TMPDIR:-/tmp}/format.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT
status=0
differ=0
for f in "$@"; do
    case " $excluded " in
    *" ${f#./} "*) continue ;;
    esac
    if [ "$check" -eq 1 ]; then
        if ! "$clang_format" "$style" "$f" >"$tmp" || ! cmp -s "$tmp" "$f"; then
            echo "$f"
            differ=$((differ + 1))
        fi
    elif ! "$clang_format" "$style" -i "$f"; then
        status=1
    fi
done
if [ "$differ" -gt 0 ]; then
    echo "format.sh: $differ file(s) above differ from .clang-format; tools/format.sh FILE (or" \
        "make format) lays them out" >&2
    status=1
fi
exit "$status"
