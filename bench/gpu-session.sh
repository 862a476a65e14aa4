#!/bin/sh
# gpu-session.sh - one call on a GPU machine: build with the README's
# commands, run `make check`, then the benchmarks of BENCHMARKS.md.  Logs go
# to $OUT (or ./gpu-out).  STAGES picks what runs: check, bench1, bench2,
# big (default: all).  Run from the source tree.
set -u
out=${OUT:-./gpu-out}
mkdir -p "$out"
stages=${STAGES:-check bench1 bench2 big}
log() { echo "== $*" | tee -a "$out/summary.txt"; }

nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm,clocks.max.mem --format=csv \
    >"$out/gpus.csv" 2>&1
nvidia-smi topo -m >"$out/topo.txt" 2>&1
cat "$out/gpus.csv"
ngpu=$(($(wc -l <"$out/gpus.csv") - 1))

log "build"
(./bootstrap && ./configure --with-cuda-arch=sm_90 && make -j16) >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
single=./single_thread/mgpu-single
csv_header() {
    $single --nx=3 --ny=3 --steps=1 --devices=1 --verify=none --repeat=1 --warmup=0 \
        --format=csv | head -1
}

for stage in $stages; do
    case $stage in
    check)
        log "make check"
        make -j8 check >"$out/check.log" 2>&1
        echo "make check exit $?" | tee -a "$out/summary.txt"
        grep -E '^(# |PASS|FAIL|SKIP|ERROR)' "$out/check.log" | grep -v '^PASS' |
            tee -a "$out/summary.txt"
        cp test-suite.log "$out/" 2>/dev/null
        for f in tests/*.log; do
            grep -q -E 'not ok|FAIL' "$f" && { echo "--- $f"; grep -E 'not ok|FAIL' "$f" | head; }
        done >>"$out/summary.txt"
        ;;
    bench1)
        log "one GPU: kernel effective bandwidth against the copy ceiling"
        csv_header >"$out/bench1.csv"
        for k in pattern2d jacobi; do
            for n in 8192 16384 32768; do
                $single --backend=cuda --devices=1 --kernel=$k --nx=$n --ny=$n --steps=200 \
                    --repeat=5 --verify=none --format=csv --no-header |
                    tee -a "$out/bench1.csv"
            done
        done
        ;;
    bench2)
        log "2..$ngpu GPUs, 16384 x 16384, 1000 steps, each mode against one GPU"
        csv_header >"$out/bench2.csv"
        n=2
        while [ "$n" -le "$ngpu" ]; do
            for ex in peer peer-async staged direct mapped; do
                $single --backend=cuda --devices=$n --exchange=$ex --nx=16384 --ny=16384 \
                    --steps=1000 --repeat=3 --baseline --verify=none --format=csv --no-header |
                    tee -a "$out/bench2.csv"
            done
            n=$((n * 2))
        done
        ;;
    big)
        log "50000 x 50000 on 2 GPUs (64-bit indexing, slab-only memory)"
        $single --backend=cuda --devices=2 --nx=50000 --ny=50000 --steps=20 --repeat=1 \
            --warmup=0 --verify=device --format=json | tee -a "$out/big.json"
        ;;
    esac
done
$single --help | head -1 >/dev/null
log "done"
