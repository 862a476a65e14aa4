#!/bin/sh
# step-cost.sh - the per-step cost of every strategy across grid sizes, beside
# NVIDIA's multi-gpu-programming-models: jacobi, 1 and N devices in
# the same run (--baseline), the record's issue, wait and device times per
# step.  Usage, from the build tree:
#   bench/step-cost.sh [SIZES] [DEVICES]      (default: 1024 2048 4096 8192 16384, 2)
# PEER=DIR: a checkout of multi-gpu-programming-models; its jacobi variants
# are built (nvcc, sm_90) and run at the same sizes with -nccheck 100
# (multi_threaded_p2p_opt: -nccheck 1, the only one it takes).  PEER_BIN=DIR:
# the variants built already, as DIR/peer-VARIANT (from the same checkout,
# for the same GPUs), run as they are, so that a GPU machine's time is not
# spent on nvcc.
# EXCHANGES: the modes mgpu-single, -pthread, -openmp and -streams run
# (default: direct and managed, each with and without --graph where the
# program captures it); PROGRAMS: those programs (default: the four), and
# when set, mgpu-fork and mgpu-persistent are left out;
# PEER_VARIANTS: the peer's variants (default: every one below).  The
# peer's multi_threaded_um is built as it ships, without its hints, and as
# multi_threaded_um_hints with -DUM_HINTS (its cudaMemAdvise calls name a
# device as CUDA 12 did; bench/peer-um-hints.h, forced in, gives them CUDA
# 13's form).
# Records go to $OUT/stepcost.jsonl (or ./gpu-out), one JSON object a line,
# the table to stdout.
set -u
out=${OUT:-./gpu-out}
mkdir -p "$out"
sizes=${1:-1024 2048 4096 8192 16384}
devices=${2:-2}
exchanges=${EXCHANGES:-direct managed}
programs=${PROGRAMS:-single_thread/mgpu-single pthread/mgpu-pthread openmp/mgpu-openmp \
    streams/mgpu-streams}
variants=${PEER_VARIANTS:-multi_threaded_copy multi_threaded_copy_overlap multi_threaded_p2p \
    multi_threaded_p2p_opt multi_threaded_um multi_threaded_um_hints}
records=$out/stepcost.jsonl
# What this run writes, this run's alone.
: >"$records"
: >"$out/peer.txt"
: >"$out/stepcost-err.txt"
export NCCL_NVLS_ENABLE=0

# Steps for about a tenth of a second a run at each size.
steps_for() {
    case $1 in
    1024) echo 20000 ;; 2048) echo 10000 ;; 4096) echo 3000 ;; 8192) echo 1000 ;; *) echo 300 ;;
    esac
}

run() { # PROGRAM ARGS...
    "$@" --format=json >>"$records" 2>>"$out/stepcost-err.txt" ||
        echo "FAILED: $*" >>"$out/stepcost-err.txt"
}

for n in $sizes; do
    s=$(steps_for "$n")
    common="--backend=cuda --kernel=jacobi --nx=$n --ny=$n --steps=$s --devices=$devices \
        --baseline --repeat=3 --verify=none"
    run single_thread/mgpu-single $common --exchange=peer-async
    for prog in $programs; do
        [ -x $prog ] || continue
        for x in $exchanges; do
            run $prog $common --exchange="$x"
            # mgpu-streams steps managed through the stencil domain, which
            # it does not capture.
            case $x:$prog in
            direct:* | managed:single_thread/* | managed:pthread/* | managed:openmp/*)
                run $prog $common --exchange="$x" --graph
                ;;
            esac
        done
    done
    [ -n "${PROGRAMS:-}" ] && continue
    run fork/mgpu-fork $common --exchange=ipc
    [ -x persistent/mgpu-persistent ] && run persistent/mgpu-persistent $common
done

# The peer: its own Makefiles name an older C++ standard than nvcc 13 takes.
if [ -n "${PEER:-}" ]; then
    for v in $variants; do
        dir=${v%_hints} # multi_threaded_um_hints: multi_threaded_um -DUM_HINTS
        [ -d "$PEER/$dir" ] || continue
        if [ -x "${PEER_BIN:-/nonexistent}/peer-$v" ]; then
            cp "$PEER_BIN/peer-$v" "$out/peer-$v" && continue
        fi
        hints=
        [ "$v" = "$dir" ] || hints="-DUM_HINTS -include $(dirname "$0")/peer-um-hints.h"
        nvcc -O3 -std=c++17 -Xcompiler -fopenmp -DHAVE_CUB $hints -ldl \
            -gencode arch=compute_90,code=sm_90 -o "$out/peer-$v" "$PEER/$dir/jacobi.cu" \
            >>"$out/stepcost-err.txt" 2>&1 || echo "peer $v: build failed" >>"$out/stepcost-err.txt"
    done
    for n in $sizes; do
        s=$(steps_for "$n")
        for v in $variants; do
            [ -x "$out/peer-$v" ] || continue
            # multi_threaded_p2p_opt takes no other -nccheck than 1 (it
            # says "Only nccheck = 1 is supported" and runs nothing).
            nccheck=100
            [ "$v" = multi_threaded_p2p_opt ] && nccheck=1
            echo "== $v $n $s" >>"$out/peer.txt"
            CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((devices - 1))) \
                "$out/peer-$v" -nx "$n" -ny "$n" -niter "$s" -nccheck $nccheck -csv \
                >>"$out/peer.txt" 2>&1
        done
    done
fi

python3 - "$records" "$out/peer.txt" <<'EOF'
import json, sys, os
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def f(x, k):
    v = x.get(k)
    return float(v) if isinstance(v, (int, float)) else float("nan")
print("%-6s %-16s %-14s %9s %9s %7s %8s %8s %8s" % ("size", "program", "mode", "us/step",
      "1dev", "speedup", "issue", "wait", "device"))
for r in rows:
    graph = r.get("mode") == "graph" or "graph_steps" in r
    mode = r["exchange"] + ("+graph" if graph else "")
    one = f(r, "baseline_s") / f(r, "steps") * 1e6
    print("%-6s %-16s %-14s %9.2f %9.2f %7.2f %8.2f %8.2f %8.2f" % (r["nx"], r["program"], mode,
          f(r, "us_per_step"), one, f(r, "speedup"), f(r, "host_issue_us_per_step"),
          f(r, "host_wait_us_per_step"), f(r, "device_us_per_step")))
peer = sys.argv[2]
if os.path.exists(peer):
    name = None
    for line in open(peer):
        if line.startswith("== "):
            name, size, steps = line.split()[1:4]
        elif line.count(",") >= 6 and name:
            # -csv: variant, nx, ny, iter_max, nccheck, num_devices, p2p, runtime, runtime_serial
            parts = [p.strip() for p in line.split(",")]
            try:
                t, t1 = float(parts[-2]), float(parts[-1])
            except ValueError:
                continue
            print("%-6s %-16s %-14s %9.2f %9.2f %7.2f" % (size, "peer", name, t / int(steps) * 1e6,
                  t1 / int(steps) * 1e6, t1 / t if t else 0))
EOF
