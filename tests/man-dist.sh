#!/bin/sh
# man-dist.sh - the man pages travel in the release tarball and install
# without help2man: `make distdir` (what make dist packs) holds the page of
# every program built here, each with EXAMPLES and SEE ALSO, mgpu-record(7)
# and what makes them; then a build of that tree configured with HELP2MAN=no
# (and no CUDA, to be quick) says so in its summary, and `make install-man`
# installs those very pages, none made again.  Skips (77) where this build
# has neither help2man nor the tarball's pages, and in a sanitizer's build
# (make check-sanitize), which would only repeat it.
. "$top_srcdir/tests/lib.sh"
make=${MAKE:-make}
unset MAKEFLAGS MFLAGS # the makes below are separate, with their own -j
top=$(cd "$top_builddir" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-man-dist.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}

# The pages of the programs built here.
pages=
for prog in single_thread/mgpu-single fork/mgpu-fork pthread/mgpu-pthread openmp/mgpu-openmp \
    streams/mgpu-streams mpi/mgpu-mpi persistent/mgpu-persistent bench/mgpu-p2p \
    bench/mgpu-compare; do
    [ -x "$top/$prog" ] && pages="$pages ${prog##*/}.1"
done
case " ${BUILD_CFLAGS:-} " in
*" -fsanitize="*)
    echo "SKIP: a sanitizer's build: the packaging is checked by the plain one"
    exit 77
    ;;
esac
if [ -z "${HELP2MAN:-}" ] && [ ! -f "$top_srcdir/man/mgpu-single.1" ]; then
    echo "SKIP: no help2man and no prebuilt pages: there are no man pages to ship"
    exit 77
fi

dist=$tmp/mgpu-dist
if ! (cd "$top" && run_limited "$make" distdir distdir="$dist" >"$tmp/distdir.log" 2>&1); then
    echo "FAIL: make distdir"
    sed 's/^/# /' "$tmp/distdir.log" | tail -20
    exit 1
fi
for page in $pages; do
    file=$dist/man/$page
    if [ ! -s "$file" ]; then
        fail "the tarball has no man/$page"
        continue
    fi
    for section in EXAMPLES '"SEE ALSO"' '"REPORTING BUGS"'; do
        grep -q "^\\.SH $section\$" "$file" || fail "the tarball's $page has no $section"
    done
done
for file in man/mgpu-record.7 man/mgpu-single.h2m tools/make-man tools/md2man; do
    [ -s "$dist/$file" ] || fail "the tarball has no $file"
done
echo "the tarball's man/:" $(cd "$dist/man" && ls)

# A build of the tarball without help2man: its pages are installed as they
# came.  The source tree is read-only, as distcheck makes it.
chmod -R a-w "$dist"
mkdir "$tmp/build"
# The programs this build makes, no more; nothing else that configure
# would look for (FUZZ_CC=false: no libFuzzer test), to be quick.
choices="--without-hwloc --without-nvml --without-nvtx FUZZ_CC=false"
[ -x "$top/mpi/mgpu-mpi" ] || choices="$choices --without-mpi"
[ -x "$top/openmp/mgpu-openmp" ] || choices="$choices --disable-openmp"
if ! (cd "$tmp/build" && run_limited "$dist/configure" HELP2MAN=no --without-cuda $choices \
    >configure.log 2>&1); then
    fail "configure HELP2MAN=no in the tarball's tree"
    tail -20 "$tmp/build/configure.log" | sed 's/^/# /'
    exit 1
fi
grep -q "man pages: *yes, the tarball's (no help2man)" "$tmp/build/configure.log" ||
    fail "configure's summary does not say that the tarball's pages are installed: $(grep 'man pages:' "$tmp/build/configure.log")"
if ! (cd "$tmp/build" && run_limited "$make" install-man DESTDIR="$tmp/inst" \
    >install.log 2>&1); then
    fail "make install-man without help2man"
    tail -20 "$tmp/build/install.log" | sed 's/^/# /'
fi
if grep -q ' GEN \|help2man\|make-man\|md2man' "$tmp/build/install.log"; then
    fail "a page was made again:"
    sed 's/^/# /' "$tmp/build/install.log"
fi
installed=$(cd "$tmp/inst" && find . -name '*.[17]' | sort | tr '\n' ' ')
for page in $pages mgpu-record.7; do
    sec=${page##*.}
    found=$(cd "$tmp/inst" && find . -path "*/man$sec/$page")
    if [ -z "$found" ]; then
        fail "$page is not installed without help2man (installed: $installed)"
    elif ! cmp -s "$tmp/inst/$found" "$dist/man/$page"; then
        fail "the installed $page is not the tarball's"
    fi
done
[ "$failed" -eq 0 ] && echo "installed without help2man:" $installed
exit $failed
