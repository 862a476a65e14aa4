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

# needed FILE: the libraries an executable or shared library names in its
# dynamic section (readelf, of binutils), one a line.
needed() {
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

# milliseconds: a clock in milliseconds (GNU date; 0 where it has no %N), so
# that each run's TAP line says how long it took: where a suite's time goes
# on a GPU machine is read from its logs.
milliseconds() {
    now_ns=$(date +%s%N 2>/dev/null)
    case $now_ns in
    *N* | "") echo 0 ;;
    *) echo $((now_ns / 1000000)) ;;
    esac
}

# seed_holders SEED: the /proc/PID/cmdline files of the processes alive
# with --seed=SEED in an argument.  A test gives its runs a seed of their
# own to find what outlived them.  The bracket keeps grep from finding its
# own command line; zombies have none.
seed_holders() {
    grep -lzE -- "[-]-seed=$1([^0-9]|\$)" /proc/[0-9]*/cmdline 2>/dev/null
}

# json_field NAME < json: the value of "NAME" in a one-line JSON object.
json_field() {
    sed -n "s/.*\"$1\": *\\(\"[^\"]*\"\\|[^,}]*\\).*/\\1/p" | tr -d '"'
}

# py DESCRIPTION FILE CODE: one TAP line, ok when the Python CODE raises
# nothing; DATA is FILE's JSON.  Without python3 the line is a skip.
py() {
    if [ -z "$PYTHON3" ]; then
        echo "ok $((tap_count += 1)) - $1 # SKIP python3 not found"
        return
    fi
    py_err=${TMPDIR:-/tmp}/mgpu-test-py.$$.$tap_count
    if "$PYTHON3" - "$2" >"$py_err" 2>&1 <<EOF
import json, sys
DATA = json.load(open(sys.argv[1]))
$3
EOF
    then
        tap 0 "$1"
    else
        tap 1 "$1"
        sed 's/^/# /' "$py_err"
    fi
    rm -f "$py_err"
}

# jsonschema_missing: true, with why in $jsonschema_why (for a SKIP), unless
# $PYTHON3 has a jsonschema module that knows the schemas' draft (2020-12:
# python3-jsonschema 4.0 and newer; Debian 12's is 4.10; tools/install-deps
# installs it).  Python is asked once a test.
jsonschema_missing() {
    if [ -z "${jsonschema_why+set}" ]; then
        if [ -z "$PYTHON3" ]; then
            jsonschema_why="python3 not found"
        else
            jsonschema_why=$("$PYTHON3" -c '
try:
    import jsonschema
    if not hasattr(jsonschema, "Draft202012Validator"):
        print("python3-jsonschema %s knows no draft 2020-12 (4.0 or newer needed)"
              % jsonschema.__version__)
except ImportError:
    print("python3-jsonschema not installed (tools/install-deps installs it)")' 2>&1)
        fi
    fi
    [ -n "$jsonschema_why" ]
}

# schema_valid DESCRIPTION SCHEMA FILE: one TAP line, ok when FILE's JSON
# holds to SCHEMA (doc/*.schema.json) by python3-jsonschema's validator of
# SCHEMA's own draft (a $schema the module does not know fails: a schema it
# would check by another draft's rules is not checked); without the module
# the line is a skip.
schema_valid() {
    if jsonschema_missing; then
        echo "ok $((tap_count += 1)) - $1 # SKIP $jsonschema_why"
        return
    fi
    sv_err=$3.schema-err # beside FILE: run_at_once's jobs share $$
    "$PYTHON3" - "$2" "$3" >"$sv_err" 2>&1 <<'EOF'
import json, sys, jsonschema
schema_path, path = sys.argv[1:3]
schema = json.load(open(schema_path))
cls = jsonschema.validators.validator_for(schema, default=None)
if cls is None:
    sys.exit("%s: $schema %s: not a draft this jsonschema knows"
             % (schema_path, schema.get("$schema")))
cls.check_schema(schema)
errors = list(cls(schema).iter_errors(json.load(open(path))))
for e in errors[:10]:
    print("%s: %s: %s" % (path, "/".join(map(str, e.absolute_path)) or "(top)", e.message))
if errors:
    sys.exit("%s: %d errors against %s" % (path, len(errors), schema_path))
EOF
    tap $? "$1"
    sed 's/^/# /' "$sv_err"
    rm -f "$sv_err"
}

# check_run DESCRIPTION PROGRAM ARGS...: the program exits 0 and its JSON
# record says verified, with max_error 0 (bit-identical to the reference).
# The program's stderr goes to $check_err, a file of its own in each job of
# run_at_once ($$ is the same in every job).
check_run() {
    desc=$1
    shift
    err_file=${check_err:-${TMPDIR:-/tmp}/mgpu-test-err.$$}
    run_started=$(milliseconds)
    out=$(run_limited "$@" --format=json 2>"$err_file")
    code=$?
    run_took="$(($(milliseconds) - run_started)) ms"
    verified=$(printf '%s\n' "$out" | json_field verified)
    max_error=$(printf '%s\n' "$out" | json_field max_error)
    if [ "$code" -eq 0 ] && [ "$verified" = true ] && [ "$max_error" = 0 ]; then
        tap 0 "$desc ($run_took)"
    else
        tap 1 "$desc (exit $code, verified=$verified, max_error=$max_error, $run_took)"
        sed 's/^/# /' "$err_file"
        echo "# command: $*"
    fi
    rm -f "$err_file"
}

# record_is DESCRIPTION FIELD VALUE: the last check_run's record has FIELD
# equal to VALUE (the feature asked for is the one that ran).
record_is() {
    ri_got=$(printf '%s\n' "$out" | json_field "$2")
    [ "$ri_got" = "$3" ]
    tap $? "$1: $2 is $ri_got"
}

# run_at_once FUNCTION [WORD...]: "FUNCTION WORD" for each word (default:
# the device counts 1 to $gpus), all at once, one background job each;
# their TAP lines come out in WORD order as if they had run one after the
# other.  The GPU scripts give it device counts, the quick tier
# (gpu-quick.sh) its groups of cases.
#
# The GPU tests spend most of their time starting processes and CUDA, and
# they check bit-exact results, not timings, so the device counts may share
# the GPUs: the loop takes about as long as its slowest count.  Every job
# sees every GPU: hiding the others (CUDA_VISIBLE_DEVICES) made a lone
# 1-device process take 0.40 s instead of 0.63-0.94 s on 2 H200s, but
# under the suite's load the runs took as long as before (BENCHMARKS.md
# section 7), so it was taken out.
#
# Each job is a subshell with tap_count and tap_failed from 0, its own
# $check_err, and its stdout and stderr in files of its own; nothing it
# sets reaches the caller or the other jobs, so FUNCTION takes all it needs
# from its argument and the caller's variables.  Each job's program runs
# still have their time limit ($limit, run_limited).  In WORD order, as each job ends, its
# "ok N" and "not ok N" lines are renumbered on from the caller's tap_count,
# its other lines ("# ...") pass through unchanged, its stderr follows on
# stderr, and the caller's tap_count and tap_failed count its results; a job
# that did not reach its end (killed, or FUNCTION called exit) adds a failure.
# While it runs it holds the INT, TERM and HUP traps (not EXIT, which the
# scripts use): they stop the jobs, remove the files and exit; a program
# run already started still ends within its time limit.
run_at_once() {
    fedc_func=$1
    shift
    if [ $# -eq 0 ]; then
        fedc_n=1
        while [ "$fedc_n" -le "$gpus" ]; do
            set -- "$@" "$fedc_n"
            fedc_n=$((fedc_n + 1))
        done
    fi
    if ! fedc_dir=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-tap.XXXXXX"); then
        tap 1 "run_at_once $fedc_func: mktemp -d failed"
        return
    fi
    fedc_pids=
    trap 'fedc_stop 130' INT
    trap 'fedc_stop 143' TERM
    trap 'fedc_stop 129' HUP
    for fedc_n in "$@"; do
        (
            tap_count=0 tap_failed=0
            check_err="$fedc_dir/$fedc_n.check"
            "$fedc_func" "$fedc_n"
            : >"$fedc_dir/$fedc_n.done"
        ) </dev/null >"$fedc_dir/$fedc_n.out" 2>"$fedc_dir/$fedc_n.err" &
        fedc_pids="$fedc_pids $!"
    done
    for fedc_pid in $fedc_pids; do
        wait "$fedc_pid"
        fedc_status=$?
        fedc_n=$1
        shift
        awk -v n="$tap_count" -v failed="$tap_failed" -v sums="$fedc_dir/sums" '
            /^(not )?ok [0-9]+( |$)/ {
                n++
                sub(/ok [0-9]+/, "ok " n)
                if (/^not /) failed++
            }
            { print }
            END { print n, failed > sums }' "$fedc_dir/$fedc_n.out"
        read -r tap_count tap_failed <"$fedc_dir/sums"
        if [ ! -e "$fedc_dir/$fedc_n.done" ]; then
            tap 1 "$fedc_func $fedc_n: the job ended early (exit $fedc_status)"
        fi
        cat "$fedc_dir/$fedc_n.err" >&2
    done
    trap - INT TERM HUP
    rm -rf "$fedc_dir"
}

# fedc_stop STATUS: run_at_once interrupted: stop its jobs, remove
# its files, exit STATUS.
fedc_stop() {
    [ -z "$fedc_pids" ] || kill $fedc_pids 2>/dev/null
    rm -rf "$fedc_dir"
    exit "$1"
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
    gpu_lock
}

# gpu_lock: wait until no other GPU script of this build runs.  They share
# the GPUs and the cores next to them; eight at once (make -j) slowed each
# one, and the host tests beside them, past the time limits the failure
# tests assert.  The lock is released when the script exits (util-linux
# flock; without it the scripts run at once, as before).
gpu_lock() {
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$top_builddir/tests/gpu.lock"
        flock 9
    fi
    gpu_hold
}

# gpu_hold: while this script runs, a process of its own holds a CUDA
# context on each GPU it sees, so that each run does not pay the driver's
# set-up of every GPU (tests/gpu-hold.c says why).  MGPU_GPU_HOLD=0 leaves
# the GPUs unheld, to measure what the holder gives.
gpu_hold() {
    [ "${MGPU_GPU_HOLD:-1}" != 0 ] && [ -x "$top_builddir/tests/gpu-hold" ] || return 0
    "$top_builddir/tests/gpu-hold" $$ </dev/null >/dev/null 9>&- &
}

# mpi_launcher host|cuda: set $launch to mpirun with what every test job
# needs, and $quiet to its option that keeps its own notice of a failed rank
# out (which no rank can prevent); return 1 when there is no mpirun
# ($MPIRUN, else the one on PATH).  Every rank runs on this host, as root in
# CI containers, with more ranks than cores on CI.  For Open MPI that means
# leave to run as root and to oversubscribe, no binding and no ssh to start
# local ranks; on the host backend also shared memory as the only transport,
# no cross-process copies (containers forbid them), and waiting ranks that
# give up their core instead of spinning, and a session directory of this
# script's own, $mpi_tmp, for the caller to remove: two scripts of a
# parallel make check that start mpirun at once race to create the shared
# one (Open MPI 4.1: "mkdir ... File exists").  On GPUs the transports stay
# MPI's own choice: a CUDA-aware one may need them.
mpi_launcher() {
    mpirun=${MPIRUN:-$(command -v mpirun)}
    if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null 2>&1; then
        return 1
    fi
    launch=$mpirun
    quiet=
    mpi_tmp=
    if "$mpirun" --version 2>&1 | grep -q "Open MPI"; then
        launch="$mpirun --allow-run-as-root --oversubscribe --bind-to none"
        quiet=-q
        OMPI_MCA_plm_rsh_agent=false
        export OMPI_MCA_plm_rsh_agent
        if [ "$1" = host ]; then
            OMPI_MCA_pml=ob1
            OMPI_MCA_btl=self,vader
            OMPI_MCA_btl_vader_single_copy_mechanism=none
            OMPI_MCA_mpi_yield_when_idle=1
            export OMPI_MCA_pml OMPI_MCA_btl OMPI_MCA_btl_vader_single_copy_mechanism \
                OMPI_MCA_mpi_yield_when_idle
            if mpi_tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-ompi.XXXXXX"); then
                OMPI_MCA_orte_tmpdir_base=$mpi_tmp
                export OMPI_MCA_orte_tmpdir_base
            fi
        fi
    fi
    return 0
}

# mpi_rejects DESCRIPTION PATTERN RANKS PROGRAM ARGS...: under $launch
# (mpi_launcher), every rank exits 2 and the job prints exactly one line,
# matching PATTERN: no rank's MPI_Abort banner, no line per rank (under Open
# MPI's mpirun -q the whole stderr is that line).
mpi_rejects() {
    mr_desc=$1 mr_pattern=$2 mr_ranks=$3
    shift 3
    mr_err=${TMPDIR:-/tmp}/mgpu-mpi-rejects.$$
    run_limited $launch $quiet -np $mr_ranks "$@" >/dev/null 2>"$mr_err"
    mr_code=$?
    if [ -n "$quiet" ]; then
        mr_lines=$(grep -c '' "$mr_err")
    else
        mr_lines=$(grep -c '^mgpu-mpi:' "$mr_err")
    fi
    if [ "$mr_code" -eq 2 ] && [ "$mr_lines" -eq 1 ] && grep -q -E "$mr_pattern" "$mr_err"; then
        tap 0 "$mr_desc"
    else
        tap 1 "$mr_desc (exit $mr_code, $mr_lines lines)"
        sed 's/^/# /' "$mr_err"
    fi
    rm -f "$mr_err"
}
