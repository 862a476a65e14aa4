# lib.sh - what the shell tests share: TAP output, running a program, and
# reading a field of its JSON record.  Sourced by tests/*.tap and *.sh.

: "${top_builddir:=.}"
: "${top_srcdir:=.}"
tap_count=0
tap_failed=0

# ok CONDITION-STATUS DESCRIPTION: one TAP line.
tap() {
    tap_count=$((tap_count + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $tap_count - $2"
    else
        tap_failed=$((tap_failed + 1))
        echo "not ok $tap_count - $2"
    fi
}

# Run a program with a time limit ($limit seconds, default 120), so that a
# hang fails instead of stalling.
run_limited() {
    if command -v timeout >/dev/null 2>&1; then
        timeout "${limit:-120}" "$@"
    else
        "$@"
    fi
}

# json_field NAME < json: the value of "NAME" in a one-line JSON object.
json_field() {
    sed -n "s/.*\"$1\": *\\(\"[^\"]*\"\\|[^,}]*\\).*/\\1/p" | tr -d '"'
}

# check_run DESCRIPTION PROGRAM ARGS...: the program exits 0 and its JSON
# record says verified, with max_error 0 (bit-identical to the reference).
check_run() {
    desc=$1
    shift
    out=$(run_limited "$@" --format=json 2>"${TMPDIR:-/tmp}/mgpu-test-err.$$")
    code=$?
    verified=$(printf '%s\n' "$out" | json_field verified)
    max_error=$(printf '%s\n' "$out" | json_field max_error)
    if [ "$code" -eq 0 ] && [ "$verified" = true ] && [ "$max_error" = 0 ]; then
        tap 0 "$desc"
    else
        tap 1 "$desc (exit $code, verified=$verified, max_error=$max_error)"
        sed 's/^/# /' "${TMPDIR:-/tmp}/mgpu-test-err.$$"
        echo "# command: $*"
    fi
    rm -f "${TMPDIR:-/tmp}/mgpu-test-err.$$"
}

# require_gpus PROGRAM: exit 77 (skip) with the reason unless PROGRAM can run
# on the CUDA backend; else set $gpus to the number of GPUs, at most 4 (the
# tests' largest device count).
require_gpus() {
    probe=$("$1" --backend=cuda --nx=3 --ny=3 --steps=1 --devices=1 --verify=none \
            --repeat=1 --warmup=0 --format=json 2>&1)
    if [ $? -ne 0 ]; then
        echo "SKIP: no usable GPU: $probe"
        exit 77
    fi
    gpus=$(printf '%s\n' "$probe" | json_field backend_reason | sed 's/ .*//')
    [ "$gpus" -gt 4 ] 2>/dev/null && gpus=4
    echo "# $gpus GPU(s)"
}
