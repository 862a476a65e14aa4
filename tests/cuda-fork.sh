#!/bin/sh
# cuda-fork.sh - mgpu-fork on GPUs: one worker process per device, halos
# staged through pinned shared memory or moved device to device by CUDA IPC,
# 1 to all devices (at most 4), both kernels, odd grids (from 3 devices on,
# one kernel per grid): bit-identical to the CPU reference; a larger grid: N
# devices bit-identical to one device.  auto picks ipc where the devices
# have peer access, and a failing worker stops the run.  Skips (exit 77)
# when there is no usable GPU.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/fork/mgpu-fork"

require_gpus "$prog"

common="--backend=cuda --repeat=1 --warmup=0"

# on_devices DEVICES: every run on DEVICES devices; the device counts run at
# once (run_at_once in lib.sh).
on_devices() {
    devices=$1
    modes="staged ipc"
    # ipc between two devices needs peer access; without it, ipc is a usage
    # error that says so, and auto must pick staged.
    out=$(run_limited "$prog" $common --devices=$devices --nx=17 --ny=13 --steps=2 \
          --verify=none --format=json 2>&1)
    auto=$(printf '%s\n' "$out" | json_field exchange)
    if [ "$auto" = staged ] && [ "$devices" -gt 1 ]; then
        echo "# $devices devices: no peer access between all of them, ipc is not tested"
        err=$(run_limited "$prog" $common --exchange=ipc --devices=$devices --nx=17 --ny=13 \
              --steps=2 2>&1 >/dev/null)
        code=$?
        case $err in
        *"no peer access"*) [ "$code" -eq 2 ] ;;
        *) false ;;
        esac
        tap $? "ipc without peer access on $devices devices: exit 2 naming it (exit $code)"
        modes=staged
    else
        [ "$auto" = ipc ]
        tap $? "auto on $devices devices with peer access is ipc (exchange=$auto)"
    fi
    for exchange in $modes; do
        turn=0
        for grid in "17 13 7" "101 53 5" "1001 7 3" "3 $((devices + 2)) 2"; do
            set -- $grid
            turn=$((turn + 1))
            kernels="pattern2d jacobi"
            # From 3 devices on, where each run starts 2N+1 CUDA processes
            # (the workers of the timed steps, those of the exchanges alone,
            # the parent for the copy ceiling), the kernels take turns.
            if [ "$devices" -ge 3 ]; then
                [ $((turn % 2)) -eq 1 ] && kernels=pattern2d || kernels=jacobi
            fi
            for kernel in $kernels; do
                check_run "cuda vs cpu: $exchange, $devices devices, $kernel, $1 x $2" \
                    "$prog" $common --verify=cpu --exchange=$exchange --devices=$devices \
                    --kernel=$kernel --nx=$1 --ny=$2 --steps=$3
            done
        done
        check_run "cuda N vs 1 device: $exchange, $devices devices, jacobi, 2049 x 1031" \
            "$prog" $common --verify=device --exchange=$exchange --devices=$devices \
            --kernel=jacobi --nx=2049 --ny=1031 --steps=20
        check_run "cuda: $exchange, $devices devices, repeats, warm-ups and baseline" \
            "$prog" --backend=cuda --verify=cpu --exchange=$exchange --devices=$devices \
            --nx=257 --ny=129 --steps=10 --repeat=3 --warmup=2 --baseline
    done
}
run_at_once on_devices

# A worker that fails on its device: exit 1 naming the device and the step,
# within seconds (CUDA's start in every worker included), no process left.
if [ "$gpus" -ge 2 ]; then
    seed=$((($$ % 100000) * 100 + 1))
    start=$(date +%s)
    err=$(MGPU_INJECT_FAULT=3:1 run_limited "$prog" --backend=cuda --devices=$gpus \
          --nx=4096 --ny=4096 --steps=1000000 --verify=none --seed=$seed 2>&1 >/dev/null)
    code=$?
    t=$(($(date +%s) - start))
    [ "$code" -eq 1 ] && [ "$t" -le 10 ]
    tap $? "cuda fault 3:1 on $gpus devices: exit 1 within 10 s (exit $code after ${t} s)"
    case $err in
    *"device 1 failed at step 3"*) tap 0 "cuda fault: the message names device and step" ;;
    *) tap 1 "cuda fault: the message names device and step: $err" ;;
    esac
    left=$(seed_holders $seed | wc -l)
    [ "$left" -eq 0 ]
    tap $? "cuda fault: no process left ($left)"
fi
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
