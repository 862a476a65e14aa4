#!/bin/sh
# run-bench.sh - `make bench`: time every built strategy on 1 to all devices
# with each exchange mode, each run against one device in the same run, and
# print the records as one CSV table.  Defaults finish in minutes on GPUs
# and on the host backend alike; MGPU_BENCH_ARGS adds options to every run.
set -u
top_builddir=${1:-.}
single="$top_builddir/single_thread/mgpu-single"

probe=$("$single" --nx=3 --ny=3 --steps=1 --devices=1 --verify=none --repeat=1 --warmup=0 \
        --format=json) || exit 1
backend=$(printf '%s\n' "$probe" | sed -n 's/.*"backend": *"\([a-z]*\)".*/\1/p')
if [ "$backend" = cuda ]; then
    devices=$(printf '%s\n' "$probe" | sed -n 's/.*"backend_reason": *"\([0-9]*\) .*/\1/p')
    grid="--nx=16384 --ny=16384 --steps=200"
else
    devices=2
    grid="--nx=1024 --ny=1024 --steps=20"
fi
echo "# make bench: $backend backend, $devices device(s), $grid ${MGPU_BENCH_ARGS:-}" >&2
header=
n=1
while [ "$n" -le "$devices" ]; do
    for exchange in peer peer-async staged direct mapped; do
        [ "$n" -eq 1 ] && [ "$exchange" != peer-async ] && continue
        # shellcheck disable=SC2086
        "$single" $grid ${MGPU_BENCH_ARGS:-} --devices=$n --exchange=$exchange --baseline \
            --verify=none --format=csv $header || exit 1
        header=--no-header
    done
    n=$((n + 1))
done
