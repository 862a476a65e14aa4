#!/bin/sh
# cuda-threads.sh - mgpu-pthread (both modes) and mgpu-openmp on GPUs, one
# host thread per device: every exchange mode on 1 to all devices (at most
# 4) with both kernels on odd, uneven and the smallest grids, bit-identical
# to the CPU reference; a larger grid on N devices bit-identical to one
# device; the CPU control beside the devices equal to their result.
# Skips (exit 77) when there is no usable GPU.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/threads-lib.sh"
pthread="$top_builddir/pthread/mgpu-pthread"
openmp="$top_builddir/openmp/mgpu-openmp"

require_gpus "$pthread"

# The ways to drive the devices: PROGRAM and its options, one per word.
strategies="$pthread,--mode=step $pthread,--mode=persistent"
[ -x "$openmp" ] && strategies="$strategies $openmp," || echo "# mgpu-openmp is not built"

runs="--backend=cuda --repeat=2 --warmup=1"
exchanges="peer peer-async staged direct mapped managed"
kernels="pattern2d jacobi"

# count WORD...: how many words.
count() {
    echo $#
}

# on_devices DEVICES: every run on DEVICES devices; the device counts run at
# once (run_at_once in lib.sh).  The grids take turns across the
# device counts as when they ran one after the other: DEVICES starts at the
# turn that the counts before it left, one turn per exchange, strategy and
# kernel.
on_devices() {
    devices=$1
    turn=$(((devices - 1) * $(count $exchanges) * $(count $strategies) * $(count $kernels)))
    for exchange in $exchanges; do
        for strategy in $strategies; do
            prog=${strategy%%,*} mode=${strategy#*,}
            name="$(basename "$prog")${mode:+ $mode}"
            for kernel in $kernels; do
                case $((turn % 4)) in
                0) nx=17 ny=13 steps=7 ;;
                1) nx=1001 ny=7 steps=3 ;;
                2) nx=101 ny=53 steps=5 ;;
                3) nx=3 ny=$((devices + 2)) steps=2 ;;
                esac
                turn=$((turn + 1))
                check_run "$name, cuda vs cpu: $exchange, $devices devices, $kernel, $nx x $ny" \
                    "$prog" $mode $runs --verify=cpu --exchange=$exchange \
                    --devices=$devices --kernel=$kernel --nx=$nx --ny=$ny --steps=$steps
            done
            if [ "$devices" -gt 1 ]; then
                check_run "$name, $devices devices vs 1: $exchange, 2049 x 1031" \
                    "$prog" $mode $runs --verify=device --exchange=$exchange \
                    --devices=$devices --nx=2049 --ny=1031 --steps=20
            fi
        done
    done
    # --graph: two replays and steps left over, one and three left; the
    # capture is made once and run twice.
    for prog in "$pthread" "$openmp"; do
        [ -x "$prog" ] || continue
        for exchange in peer-async direct; do
            for grid in "101 53 70 pattern2d" "33 $((devices + 2)) 36 jacobi"; do
                set -- $grid
                check_run "$(basename "$prog") graph: $exchange, $devices devices, $4, $1 x $2" \
                    "$prog" --backend=cuda --repeat=2 --warmup=0 --verify=cpu --graph \
                    --exchange=$exchange --devices=$devices --kernel=$4 --nx=$1 --ny=$2 \
                    --steps=$3
            done
        done
    done
    check_control "pthread persistent --cpu-control, $devices devices" \
        "$pthread" --mode=persistent --cpu-control --devices=$devices --nx=257 --ny=129 --steps=9
    if [ -x "$openmp" ]; then
        check_control "openmp --cpu-control, $devices devices" \
            "$openmp" --cpu-control --devices=$devices --kernel=jacobi --nx=257 --ny=129 \
            --steps=9
    fi
}
run_at_once on_devices
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
