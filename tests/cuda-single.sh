#!/bin/sh
# cuda-single.sh - mgpu-single on GPUs: every exchange mode on 1 to all
# devices (at most 4), both kernels, odd grids: bit-identical to the CPU
# reference; larger grids: N devices bit-identical to one device.
# Skips (exit 77) when there is no usable GPU.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/single_thread/mgpu-single"

require_gpus "$prog"

common="--backend=cuda --repeat=1 --warmup=0"

# on_devices DEVICES: every run on DEVICES devices; the device counts run at
# once (run_at_once in lib.sh).
on_devices() {
    devices=$1
    for exchange in peer peer-async staged direct mapped managed; do
        for kernel in pattern2d jacobi; do
            for grid in "17 13 7" "101 53 5" "1001 7 3" "3 $((devices + 2)) 2"; do
                set -- $grid
                check_run "cuda vs cpu: $exchange, $devices devices, $kernel, $1 x $2" \
                    "$prog" $common --verify=cpu --exchange=$exchange --devices=$devices \
                    --kernel=$kernel --nx=$1 --ny=$2 --steps=$3
            done
        done
        check_run "cuda N vs 1 device: $exchange, $devices devices, 2049 x 1031" \
            "$prog" $common --verify=device --exchange=$exchange --devices=$devices \
            --nx=2049 --ny=1031 --steps=20
    done
    check_run "context=driver, $devices devices" \
        "$prog" $common --verify=cpu --context=driver --devices=$devices \
        --nx=129 --ny=77 --steps=9
    # --graph: two replays and steps left over (70), one replay and three
    # left (36), too short for one (2); captured once, run twice.
    for exchange in peer-async direct; do
        for kernel in pattern2d jacobi; do
            for grid in "101 53 70" "33 $((devices + 2)) 36" "17 13 2"; do
                set -- $grid
                check_run "graph: $exchange, $devices devices, $kernel, $1 x $2, $3 steps" \
                    "$prog" --backend=cuda --repeat=2 --warmup=0 --verify=cpu --graph \
                    --exchange=$exchange --devices=$devices --kernel=$kernel --nx=$1 --ny=$2 \
                    --steps=$3
            done
        done
    done
}
run_at_once on_devices
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
