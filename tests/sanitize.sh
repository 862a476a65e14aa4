#!/bin/sh
# sanitize.sh - `make check-sanitize`: the host-backend tests again, in
# builds instrumented by the compiler's sanitizers (doc/design.md section 7, no
# leaks or races):
#   asan/  AddressSanitizer (bad memory use, and leaks at exit) with
#          UndefinedBehaviorSanitizer, every report fatal;
#   tsan/  ThreadSanitizer (data races between the worker threads), on the
#          tests of the programs that run several threads (below): it slows
#          every memory access, the library's large copies most.  OpenMP is
#          left out there: libgomp is not instrumented, so ThreadSanitizer
#          would report its internal synchronisation as races;
#   nojansson/  AddressSanitizer with UBSan again, configured
#          --without-jansson, as on a cluster node with CUDA but no
#          libjansson-dev (doc/design.md section 4): configure's summary says
#          what is left out, the library and every strategy program build,
#          mgpu-compare and mgpu-p2p do not, and the records, written by the
#          library's own JSON writer, hold to their schema (a few tests).
# All are built from this tree's distribution files (make distdir), so that
# an in-tree build can host them, under sanitize/ in the build tree, without
# CUDA or MPI (their libraries are not instrumented either).  Run from the
# top of the build tree; MAKE comes from make, and SANITIZE_JOBS (default 2)
# says how many jobs each build runs.
set -e
top=$(pwd)/sanitize
make=${MAKE:-make}
jobs=${SANITIZE_JOBS:-2}
unset MAKEFLAGS MFLAGS # the builds below are separate, with their own -j
rm -rf "$top"
mkdir -p "$top"
$make distdir distdir="$top/src" >/dev/null

# A sanitizer's report must fail the test that triggered it even where the
# test expects a failing exit status (1 or 2): 86 is no status mgpu uses.
# allocator_may_return_null: the test of a grid too large for the memory
# needs malloc to fail as it does without a sanitizer.
ASAN_OPTIONS=detect_leaks=1:exitcode=86:allocator_may_return_null=1:abort_on_error=0
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86
TSAN_OPTIONS=halt_on_error=1:exitcode=86:allocator_may_return_null=1:second_deadlock_stack=1
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS

# The tests ThreadSanitizer runs: the unit tests and those of the programs
# that start threads (mgpu-openmp's skip there; staged-chunks.tap's threads
# queue copies on each other's streams).
tsan_tests='$(unit_tests) tests/pthread-host.tap tests/openmp-host.tap'
tsan_tests="$tsan_tests tests/fault-threads.tap tests/p2p-host.tap tests/staged-chunks.tap"
# Those of the build without jansson: the record in every form and against
# its schema, and the tests that look for mgpu-compare and mgpu-p2p.
nojansson_tests='tests/test-record tests/record-json.tap tests/record-schema.tap
    tests/output-lost.tap tests/help-width.tap tests/man-pages.sh tests/fuzz-from.sh'

# build NAME CFLAGS TESTS CONFIGURE-OPTIONS...: configure, build and check
# one; TESTS, when not empty, are the tests to run instead of all.
build() {
    name=$1 flags=$2 tests=$3
    shift 3
    mkdir "$top/$name"
    echo "== $name: CFLAGS='$flags'"
    start=$(date +%s)
    (cd "$top/$name" &&
        "$top/src/configure" --without-cuda --without-mpi CFLAGS="$flags" "$@" \
            >configure.log &&
        if [ -n "$tests" ]; then
            $make -j"$jobs" check TESTS="$tests"
        else
            $make -j"$jobs" check
        fi) || {
        echo "== $name: FAILED; the logs are in $top/$name (tests/*.log)"
        return 1
    }
    echo "== $name: passed in $(($(date +%s) - start)) s"
}

common="-g -O1 -fno-omit-frame-pointer"
asan="$common -fsanitize=address,undefined -fno-sanitize-recover=all"
status=0
build asan "$asan" "" || status=1
build tsan "$common -fsanitize=thread" "$tsan_tests" --disable-openmp || status=1
if build nojansson "$asan" "$nojansson_tests" --without-jansson; then
    summary=$(grep '^  jansson:' "$top/nojansson/configure.log")
    case $summary in
    *"no: --without-jansson; mgpu-compare and mgpu-p2p are not built"*) ;;
    *)
        echo "== nojansson: FAILED: configure's summary does not say what is left out:$summary"
        status=1
        ;;
    esac
    for prog in bench/mgpu-compare bench/mgpu-p2p; do
        if [ -e "$top/nojansson/$prog" ]; then
            echo "== nojansson: FAILED: $prog was built"
            status=1
        fi
    done
else
    status=1
fi
exit $status
