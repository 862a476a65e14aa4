#!/bin/sh
# cuda-streams.sh - mgpu-streams on GPUs, on 1, 2 and all devices (at most 4):
# the overlapped step on and off, each exchange mode, CUDA graphs, the
# persistent kernel under its monitor, and the pipeline, both kernels, odd
# grids and one-row slabs: bit-identical to the CPU reference; larger grids:
# N devices bit-identical to one device.  A field four times the device memory
# allowed goes through the pipeline; the monitor reports progress while its
# kernels run, and an injected fault ends them all with exit 1 instead of a
# hang.  Skips (exit 77) when there is no usable GPU.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/streams/mgpu-streams"
err="${TMPDIR:-/tmp}/cuda-streams-err.$$"
trap 'rm -f "$err"' EXIT

require_gpus "$prog"

common="--backend=cuda --repeat=1 --warmup=0"
cpu="$common --verify=cpu"

# on_devices DEVICES: every run on DEVICES devices; the device counts (1, 2
# and all) run at once (run_at_once in lib.sh).
on_devices() {
    devices=$1
    for kernel in pattern2d jacobi; do
        for grid in "17 13 7" "1001 $((2 * devices + 2)) 4" "3 $((devices + 2)) 3"; do
            set -- $grid
            check_run "overlap=on, $devices devices, $kernel, $1 x $2" \
                "$prog" $cpu --devices=$devices --kernel=$kernel --nx=$1 --ny=$2 --steps=$3
        done
        check_run "overlap=off, $devices devices, $kernel" \
            "$prog" $cpu --overlap=off --devices=$devices --kernel=$kernel \
            --nx=101 --ny=53 --steps=5
        # an even and an odd step count: the graph replays pairs of steps
        for grid in "101 53 6" "33 $((3 * devices + 2)) 7"; do
            set -- $grid
            check_run "graph, $devices devices, $kernel, $1 x $2, $3 steps" \
                "$prog" $cpu --graph --devices=$devices --kernel=$kernel --nx=$1 --ny=$2 \
                --steps=$3
        done
        for grid in "101 53 5" "3 $((devices + 2)) 3"; do
            set -- $grid
            check_run "monitor, $devices devices, $kernel, $1 x $2" \
                "$prog" $cpu --monitor --devices=$devices --kernel=$kernel --nx=$1 --ny=$2 \
                --steps=$3
        done
        for split in "3 2" "7 4"; do
            set -- $split
            check_run "pipeline, $devices devices, $kernel, $1 chunks, $2 streams" \
                "$prog" $cpu --pipeline --chunks=$1 --streams=$2 --devices=$devices \
                --kernel=$kernel --nx=37 --ny=31 --steps=5
        done
    done
    for exchange in peer direct managed; do
        check_run "exchange=$exchange, $devices devices" \
            "$prog" $cpu --exchange=$exchange --devices=$devices --nx=129 --ny=77 --steps=9
    done
    check_run "graph, overlap=off, $devices devices" \
        "$prog" $cpu --graph --overlap=off --devices=$devices --nx=129 --ny=77 --steps=9
    [ "$devices" -gt 1 ] || return 0
    for mode in "--overlap=on" "--graph" "--monitor" "--pipeline"; do
        check_run "N vs 1 device: $mode, $devices devices, 2049 x 1031" \
            "$prog" $common --verify=device $mode --devices=$devices --nx=2049 --ny=1031 \
            --steps=20
    done
}
counts=$(printf '%s\n' 1 2 "$gpus" | awk -v n="$gpus" '$1 <= n && !seen[$1]++')
run_at_once on_devices $counts

# A field of 4096 x 4098 floats (64 MiB) through 16 MiB of device memory.
out=$(run_limited "$prog" $cpu --pipeline --device-memory=16M --devices=1 --nx=4096 \
      --ny=4098 --steps=3 --format=json 2>"$err")
code=$?
verified=$(printf '%s\n' "$out" | json_field verified)
max_error=$(printf '%s\n' "$out" | json_field max_error)
bytes=$(printf '%s\n' "$out" | json_field device_bytes)
[ "$code" -eq 0 ] && [ "$verified" = true ] && [ "$max_error" = 0 ] &&
    [ "$bytes" -le 16777216 ] 2>/dev/null
tap $? "pipeline: 64 MiB field, --device-memory=16M: $bytes bytes (exit $code, $verified)"

# The host sees the persistent kernels' progress while they run, and the
# last count is the whole run.
out=$(run_limited "$prog" $common --verify=none --monitor --devices="$gpus" --nx=2048 \
      --ny=2048 --steps=3000 --format=json 2>"$err")
code=$?
seen=$(printf '%s\n' "$out" | json_field progress_seen)
[ "$code" -eq 0 ] && [ "$seen" -ge 2 ] 2>/dev/null &&
    grep -q "monitor: 3000 of 3000 steps done" "$err"
tap $? "monitor: progress seen $seen times while running (exit $code)"
[ "$code" -eq 0 ] || sed 's/^/# /' "$err"

# A worker that fails stops every kernel: exit 1, at once, no hang.
failing=$((gpus - 1))
start=$(date +%s)
run_limited env MGPU_INJECT_FAULT=100:$failing "$prog" $common --verify=none --monitor \
    --devices="$gpus" --nx=2048 --ny=2048 --steps=100000 >/dev/null 2>"$err"
code=$?
took=$(($(date +%s) - start))
[ "$code" -eq 1 ] && grep -q "device $failing failed at step 100" "$err" && [ "$took" -lt 60 ]
tap $? "monitor: a fault on device $failing ends the run (exit $code, ${took}s)"
[ "$code" -eq 1 ] || sed 's/^/# /' "$err"

# The record says what each mode gained, measured in the same run (jacobi's
# periodic rows give even one device halos to exchange).
for check in "host_us_per_step host_us_per_step_nograph graph_gain|--graph" \
    "time_overlap_on_s time_overlap_off_s overlap_gain|--overlap=on" \
    "halo_peer_ms halo_peer_async_ms halo_async_gain|--compare-exchange --kernel=jacobi" \
    "time_serial_s upload_s compute_s download_s pipeline_bound upload_gbytes_per_s|--pipeline"; do
    fields=${check%|*} mode=${check#*|}
    out=$(run_limited "$prog" $common --verify=none $mode --devices="$gpus" --nx=1024 \
          --ny=1024 --steps=50 --format=json 2>"$err")
    missing=
    for f in $fields; do
        v=$(printf '%s\n' "$out" | json_field "$f")
        case $v in '' | null | *[!0-9.e+-]*) missing="$missing $f=$v" ;; esac
    done
    [ -z "$missing" ]
    tap $? "record of $mode:${missing:- all of $fields}"
done

echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
