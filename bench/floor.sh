#!/bin/sh
# floor.sh - mgpu-persistent's forms beside the fastest host-driven runs, per
# grid, device count and halo depth: the figures of doc/persistent.md's
# "Forms" (the device-driven floor against every host-driven program).
# jacobi, us a step, one halo row and deep halos (--halo=6), each program in
# its fastest mode (--exchange=direct, --graph).  Usage, from the build tree:
#   bench/floor.sh [SIZES] [DEVICE COUNTS]   (default: 1024 ... 16384, "1 2")
# Records go to $OUT/floor.jsonl (or ./gpu-out), the table to stdout.
set -u
out=${OUT:-./gpu-out}
mkdir -p "$out"
sizes=${1:-1024 2048 4096 8192 16384}
counts=${2:-1 2}
records=$out/floor.jsonl
: >"$records"
: >"$out/floor-err.txt"

# Steps for about a tenth of a second a run at each size (as step-cost.sh).
steps_for() {
    case $1 in
    1024) echo 20000 ;; 2048) echo 10000 ;; 4096) echo 3000 ;; 8192) echo 1000 ;; *) echo 300 ;;
    esac
}

# LABEL PROGRAM ARGS...: the run's record into $records, labelled; a run that
# failed is counted and named in floor-err.txt (its record, if any, dropped).
failed=0
run() {
    label=$1
    shift
    if "$@" --format=json >"$out/floor-run.json" 2>>"$out/floor-err.txt"; then
        sed "s/^{/{\"floor_label\": \"$label\", /" "$out/floor-run.json" >>"$records"
    else
        failed=$((failed + 1))
        echo "FAILED: $*" >>"$out/floor-err.txt"
    fi
}

for n in $sizes; do
    s=$(steps_for "$n")
    for d in $counts; do
        common="--backend=cuda --kernel=jacobi --nx=$n --ny=$n --steps=$s --devices=$d \
            --repeat=3 --verify=none"
        deep="--halo=6 --time-block=6"
        p=persistent/mgpu-persistent
        run "resident K=1" $p $common --form=resident
        run "graph K=1" $p $common --form=graph
        run "auto K=1" $p $common
        run "resident K=6 T=4" $p $common --form=resident --halo=6
        run "graph K=6" $p $common --form=graph $deep
        run "graph K=6 T=4" $p $common --form=graph --halo=6 --time-block=4
        run "auto K=6" $p $common --halo=6
        for prog in single_thread/mgpu-single pthread/mgpu-pthread openmp/mgpu-openmp \
            streams/mgpu-streams; do
            name=${prog#*/}
            run "$name K=1" $prog $common --exchange=direct
            run "$name graph K=1" $prog $common --exchange=direct --graph
            # mgpu-streams' graphs exchange one row a step.
            [ "$name" = mgpu-streams ] ||
                run "$name graph K=6" $prog $common --exchange=direct --graph $deep
        done
    done
done

# The table: per grid and device count, each run's us a step, and the
# persistent forms against the fastest host-driven run of the same depth.
rm -f "$out/floor-run.json"
python3 - "$records" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cases = {}
for r in rows:
    cases.setdefault((r["nx"], r["devices"]), []).append(r)
for (n, d), runs in sorted(cases.items()):
    print(f"== {n}^2, {d} device(s)")
    host = {}
    for r in runs:
        lab, us = r["floor_label"], r["us_per_step"]
        deep = "K=6" in lab
        if not r["program"] == "mgpu-persistent":
            host[deep] = min(host.get(deep, 1e30), us)
    for r in runs:
        lab, us = r["floor_label"], r["us_per_step"]
        deep = "K=6" in lab
        ratio = us / host[deep] if deep in host else float("nan")
        extra = r.get("form", "")
        print(f"  {lab:28s} {us:10.2f}  x{ratio:5.3f} {extra}")
EOF
if [ "$failed" -gt 0 ]; then
    echo "floor.sh: $failed run(s) failed, left out of the table ($out/floor-err.txt)" >&2
    exit 1
fi
