#!/bin/sh
# cuda-nccl.sh - the exchange mode nccl on GPUs, in every program that has
# it but mgpu-mpi (tests/cuda-mpi.sh): mgpu-single (both contexts),
# -pthread (both modes), -openmp, -streams and -fork, on 1 to all devices
# (at most 4), both kernels, odd and uneven grids, one-row halos and
# --halo=4 (time blocks 4 and 2): bit-identical to the CPU reference; a
# larger grid on N devices bit-identical to one device; the record says
# nccl.  A worker (thread or process) that fails ends the run with exit 1
# within 2 s of a healthy run's time, no process left.
# Skips (exit 77) without NCCL in the build, or without a usable GPU.
. "$top_srcdir/tests/lib.sh"
# NVLink multicast stays off (mgpu sets it where unset; so does the test).
export NCCL_NVLS_ENABLE=0
single="$top_builddir/single_thread/mgpu-single"
pthread="$top_builddir/pthread/mgpu-pthread"
openmp="$top_builddir/openmp/mgpu-openmp"
streams="$top_builddir/streams/mgpu-streams"
fork="$top_builddir/fork/mgpu-fork"

if ! "$single" --list-exchanges | grep -qx nccl; then
    echo "SKIP: this build has no NCCL (configure --with-nccl)"
    exit 77
fi
require_gpus "$single"

# The ways to drive the devices: PROGRAM and its options, one per word.
strategies="$single, $single,--context=driver $pthread,--mode=step $pthread,--mode=persistent \
$streams, $fork,"
[ -x "$openmp" ] && strategies="$strategies $openmp," || echo "# mgpu-openmp is not built"

runs="--backend=cuda --exchange=nccl --repeat=2 --warmup=1"

# on_devices DEVICES: every run on DEVICES devices; the device counts run at
# once (run_at_once in lib.sh).  The grids take turns; each slab
# of a --halo=4 grid holds 4 rows or more, and ny-2 leaves the slabs uneven.
on_devices() {
    devices=$1
    turn=$devices
    for strategy in $strategies; do
        prog=${strategy%%,*} mode=${strategy#*,}
        name="$(basename "$prog")${mode:+ $mode}"
        for kernel in pattern2d jacobi; do
            turn=$((turn + 1))
            case $((turn % 3)) in
            0) grid="17 13 7" deep="17 $((4 * devices + 3)) 9" ;;
            1) grid="101 53 5" deep="101 53 11" ;;
            2) grid="1001 $((devices + 2)) 3" deep="33 $((5 * devices + 4)) 6" ;;
            esac
            set -- $grid
            check_run "$name, nccl, $devices devices, $kernel, $1 x $2, $3 steps" \
                "$prog" $mode $runs --verify=cpu --devices=$devices --kernel=$kernel \
                --nx=$1 --ny=$2 --steps=$3
            set -- $deep
            block=4
            [ $((turn % 2)) -eq 0 ] && block=2
            check_run "$name, nccl, $devices devices, $kernel, $1 x $2, $3 steps, --halo=4 \
--time-block=$block" \
                "$prog" $mode $runs --verify=cpu --devices=$devices --kernel=$kernel \
                --nx=$1 --ny=$2 --steps=$3 --halo=4 --time-block=$block
        done
        if [ "$devices" -gt 1 ]; then
            check_run "$name, nccl, $devices devices vs 1: jacobi, 2049 x 1031" \
                "$prog" $mode $runs --verify=device --devices=$devices --kernel=jacobi \
                --nx=2049 --ny=1031 --steps=20
        fi
    done
}
run_at_once on_devices

# The record names the transport that ran.
for prog in $single $fork; do
    got=$(run_limited "$prog" --backend=cuda --exchange=nccl --devices=$gpus --nx=65 --ny=33 \
          --steps=2 --repeat=1 --warmup=0 --verify=none --format=json 2>&1 | json_field exchange)
    [ "$got" = nccl ]
    tap $? "$(basename "$prog") on $gpus devices records exchange nccl (exchange=$got)"
done

# A worker that fails mid-run: exit 1 naming the device and the step, no
# process left, and soon: a healthy run of a few steps (its start, CUDA's
# and the communicators' included, and more phases than the failed run
# reaches) takes T; the failed one may take T + 2 s.  The failure at step 3
# of a run of a million steps leaves the other workers' transfers waiting
# for one that never sends.
if [ "$gpus" -ge 2 ]; then
    for strategy in $fork, $pthread,--mode=step $pthread,--mode=persistent $openmp, $single,; do
        prog=${strategy%%,*} mode=${strategy#*,}
        [ -x "$prog" ] || continue
        name="$(basename "$prog")${mode:+ $mode}"
        seed=$((($$ % 100000) * 100 + 2))
        args="--backend=cuda --exchange=nccl --devices=$gpus --nx=4096 --ny=4096 --verify=none \
--repeat=1 --warmup=0"
        started=$(milliseconds)
        run_limited "$prog" $mode $args --steps=4 >/dev/null 2>&1
        healthy=$(($(milliseconds) - started))
        started=$(milliseconds)
        err=$(MGPU_INJECT_FAULT=3:1 run_limited "$prog" $mode $args --steps=1000000 \
              --seed=$seed 2>&1 >/dev/null)
        code=$?
        took=$(($(milliseconds) - started))
        [ "$code" -eq 1 ] && [ "$took" -le $((healthy + 2000)) ]
        tap $? "$name, nccl, fault 3:1 on $gpus devices: exit 1 (exit $code) in $took ms, a \
healthy run $healthy ms"
        case $err in
        *"device 1 failed at step 3"*) tap 0 "$name, nccl fault: the message names device and step" ;;
        *) tap 1 "$name, nccl fault: the message names device and step: $err" ;;
        esac
        left=$(seed_holders $seed | wc -l)
        [ "$left" -eq 0 ]
        tap $? "$name, nccl fault: no process left ($left)"
    done
fi
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
