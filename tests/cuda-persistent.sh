#!/bin/sh
# cuda-persistent.sh - mgpu-persistent on GPUs, on 1, 2 and all devices (at
# most 4): both protocols, deep halos, both kernels, odd widths, uneven slabs, one-row
# slabs (the smallest grid each device count allows), 1, 2 and odd step
# counts: bit-identical to the CPU reference; larger grids: bit-identical to
# the library's kernel on one device.  Every run also times the exchanges
# alone (the driver's compute=0 run), and repeated runs after warm-ups check
# that the flags start from zero each time.  An injected fault and --steps=0
# are refused the library's way.  A slow device (MGPU_INJECT_DELAY) changes
# nothing in the field, and a silent one stops the run at --wait-limit.
# Skips (exit 77) when there is no usable GPU.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/persistent/mgpu-persistent"
err="${TMPDIR:-/tmp}/cuda-persistent-err.$$"
trap 'rm -f "$err"' EXIT

# Whether there is a GPU is asked of mgpu-single, so that mgpu-persistent's
# own failure on a GPU fails the test instead of skipping it.
require_gpus "$top_builddir/single_thread/mgpu-single"

common="--backend=cuda --repeat=1 --warmup=0"
cpu="$common --verify=cpu"
res="--form=resident"
graph="--form=graph"

# on_devices DEVICES: every run on DEVICES devices; the device counts run at
# once (run_at_once in lib.sh), sharing the GPUs.
on_devices() {
    devices=$1
    small=$((devices + 2))
    for protocol in overlap barrier; do
        for kernel in pattern2d jacobi; do
            # odd and prime sizes (nx % 4 != 0: the last column group is
            # partial), uneven slabs, one interior row per device, a width of
            # one warp's tile and of one tile plus one column, one-row slabs
            # so wide that a warp has several edge tiles to do, and slabs of
            # 3 and 4 rows so wide that the warps left after the edge tiles
            # are fewer than a row's tiles (each interior strip a tile wide)
            for grid in "17 13 7" "257 131 9" "1023 37 5" "3 $small 3" "4 $small 4" \
                "129 $((2 * devices + 3)) 6" "128 $small 2" "600001 $small 3" \
                "600001 $((3 * devices + 3)) 3"; do
                set -- $grid
                check_run "$protocol, $devices devices, $kernel, $1 x $2, $3 steps" \
                    "$prog" $cpu $res --protocol=$protocol --devices=$devices --kernel=$kernel \
                    --nx=$1 --ny=$2 --steps=$3
            done
            for steps in 1 2; do
                check_run "$protocol, $devices devices, $kernel, $steps step(s)" \
                    "$prog" $cpu $res --protocol=$protocol --devices=$devices --kernel=$kernel \
                    --nx=33 --ny=21 --steps=$steps
            done
            # the flags and buffers are reset for every run: 2 warm-ups, 3 runs
            check_run "$protocol, $devices devices, $kernel, warmup 2, repeat 3" \
                "$prog" --backend=cuda --verify=cpu --warmup=2 --repeat=3 $res \
                --protocol=$protocol --devices=$devices --kernel=$kernel \
                --nx=131 --ny=67 --steps=11
            check_run "$protocol, N vs 1 device: $devices devices, $kernel, 2049 x 1031" \
                "$prog" $common $res --verify=device --protocol=$protocol --devices=$devices \
                --kernel=$kernel --nx=2049 --ny=1031 --steps=20
        done
        check_run "$protocol, $devices devices, jacobi 1024 x 1024, 101 steps, 2 blocks/SM" \
            "$prog" $common $res --verify=device --protocol=$protocol --devices=$devices \
            --kernel=jacobi --nx=1024 --ny=1024 --steps=101 --blocks-per-sm=2
    done
    # Deep halos (deep-cuda.cu): K rows copied every K steps, passes of T
    # steps; one pass a cycle (T = K) and several (T < K: the neighbours
    # wait for each other's copies before a second pass), T = 1, and T not
    # dividing K (a short last pass).  On the smallest grid each depth
    # allows (K rows a part, uneven), odd widths, and step counts that end
    # in the middle of a cycle or before the first ends.
    # A pass shorter than T (T not dividing K, or the run's end) runs its
    # levels and passes the rest through.  With one block a multiprocessor and
    # two (where T <= 4 fits two; a deeper kernel takes one all the same): the
    # strips are shared among twice the warps.
    for bps in 1 2; do
        for kernel in pattern2d jacobi; do
            for depth in "2 2" "4 4" "4 2" "5 2" "3 1" "8 3"; do
                set -- $depth
                for grid in "17 $(($1 * devices + 3)) $((2 * $1 + 1))" "1023 53 $(($1 - 1))" \
                    "129 $((2 * $1 * devices + 5)) 1"; do
                    set -- $depth $grid
                    check_run "--halo=$1 --time-block=$2 --blocks-per-sm=$bps, $devices devices, $kernel, $3 x $4, $5 steps" \
                        "$prog" $cpu $res --halo=$1 --time-block=$2 --blocks-per-sm=$bps --devices=$devices \
                        --kernel=$kernel --nx=$3 --ny=$4 --steps=$5
                done
            done
            check_run "--halo=4 --time-block=2 --blocks-per-sm=$bps, $devices devices, $kernel, warmup 2, repeat 3" \
                "$prog" --backend=cuda --verify=cpu --warmup=2 --repeat=3 $res --halo=4 \
                --time-block=2 --blocks-per-sm=$bps --devices=$devices --kernel=$kernel --nx=131 --ny=67 --steps=11
            # T = 6 takes one block a multiprocessor whatever is asked.
            depths="6:6 8:4"
            [ "$bps" -eq 2 ] && depths="4:4 8:4"
            for depth in $depths; do
                set -- $(echo "$depth" | tr : ' ')
                check_run "--halo=$1 --time-block=$2 --blocks-per-sm=$bps, N vs 1 device: $devices devices, $kernel, 2049 x 1031" \
                    "$prog" $common $res --verify=device --halo=$1 --time-block=$2 --blocks-per-sm=$bps \
                    --devices=$devices --kernel=$kernel --nx=2049 --ny=1031 --steps=37
            done
        done
    done
    # The graph form (looped-cuda.cu): the device's loop over the library's
    # kernels, a body of about 32 steps (whole pairs of cycles) after the
    # first cycle, and the steps left after the loop; step counts below,
    # at and above a body, so that runs with no loop, one iteration and
    # several, with and without steps after it, are all checked.  One-row
    # halos pushed by the edge strips of the one-step kernel; deep halos
    # pulled by an exchange node, T = K, T < K (a wait before the second
    # pass), T not dividing K, T = 1, T auto (K).
    for kernel in pattern2d jacobi; do
        for grid in "17 13 7" "257 131 33" "1023 37 77" "3 $small 40" "4 $small 101" \
            "129 $((2 * devices + 3)) 66" "600001 $small 3" "600001 $((3 * devices + 3)) 35"; do
            set -- $grid
            check_run "graph, $devices devices, $kernel, $1 x $2, $3 steps" \
                "$prog" $cpu $graph --devices=$devices --kernel=$kernel --nx=$1 --ny=$2 --steps=$3
        done
        check_run "graph, $devices devices, $kernel, warmup 2, repeat 3" \
            "$prog" --backend=cuda --verify=cpu --warmup=2 --repeat=3 $graph --devices=$devices \
            --kernel=$kernel --nx=131 --ny=67 --steps=75
        check_run "graph, N vs 1 device: $devices devices, $kernel, 2049 x 1031" \
            "$prog" $common $graph --verify=device --devices=$devices --kernel=$kernel --nx=2049 \
            --ny=1031 --steps=101
        for depth in "2 2" "4 4" "4 2" "5 2" "3 1" "8 3" "6 auto"; do
            set -- $depth
            for grid in "17 $(($1 * devices + 3)) $((2 * $1 + 1))" "1023 53 $((10 * $1 + 3))" \
                "129 $((2 * $1 * devices + 5)) 1"; do
                set -- $depth $grid
                check_run "graph --halo=$1 --time-block=$2, $devices devices, $kernel, $3 x $4, $5 steps" \
                    "$prog" $cpu $graph --halo=$1 --time-block=$2 --devices=$devices \
                    --kernel=$kernel --nx=$3 --ny=$4 --steps=$5
            done
        done
        check_run "graph --halo=8, N vs 1 device: $devices devices, $kernel, 2049 x 1031" \
            "$prog" $common $graph --verify=device --halo=8 --devices=$devices --kernel=$kernel \
            --nx=2049 --ny=1031 --steps=99
    done
}
counts=$(printf '%s\n' 1 2 "$gpus" | awk -v n="$gpus" '$1 <= n && !seen[$1]++')
run_at_once on_devices $counts

# The exchanges alone were timed: the record has a positive exchange_s.
out=$(run_limited "$prog" $common --verify=none --devices="$gpus" --kernel=jacobi --nx=1024 \
      --ny=1024 --steps=200 --format=json 2>"$err")
code=$?
exchange_s=$(printf '%s\n' "$out" | json_field exchange_s)
program=$(printf '%s\n' "$out" | json_field program)
strategy=$(printf '%s\n' "$out" | json_field strategy)
exchange=$(printf '%s\n' "$out" | json_field exchange)
[ "$code" -eq 0 ] && [ "$program" = mgpu-persistent ] && [ "$strategy" = device-driven ] &&
    [ "$exchange" = direct ] && awk -v x="$exchange_s" 'BEGIN { exit !(x > 0) }'
tap $? "record: $program, $strategy, $exchange, exchange_s $exchange_s (exit $code)"
[ "$code" -eq 0 ] || sed 's/^/# /' "$err"

# Two blocks a multiprocessor where the deep kernel's registers allow them
# (T <= 4: its launch bounds keep it to 128 a thread), one where not (T = 8).
blocks_of() { # --halo=K --time-block=T --blocks-per-sm=B
    run_limited "$prog" $common $res --verify=none --nx=1024 --ny=1024 --steps=8 --format=json \
        "$@" 2>"$err" | json_field blocks
}
one4=$(blocks_of --halo=4 --time-block=4 --blocks-per-sm=1)
two4=$(blocks_of --halo=4 --time-block=4 --blocks-per-sm=2)
one8=$(blocks_of --halo=8 --time-block=8 --blocks-per-sm=1)
two8=$(blocks_of --halo=8 --time-block=8 --blocks-per-sm=2)
[ -n "$one4" ] && [ "$two4" = $((2 * one4)) ] && [ -n "$one8" ] && [ "$two8" = "$one8" ]
tap $? "--blocks-per-sm=2: $one4 -> $two4 blocks at T = 4, $one8 -> $two8 at T = 8"

# --form=auto: the record says which form ran; an option of the resident
# kernel's own takes the resident form.
for what in "" "--halo=6" "--protocol=barrier" "--halo=4 --blocks-per-sm=2"; do
    form=$(run_limited "$prog" $common --verify=none --nx=1024 --ny=1024 --steps=8 --format=json \
        $what 2>"$err" | json_field form)
    case $what in
    --protocol* | *blocks-per-sm*) want=resident ;;
    *) want=graph ;;
    esac
    [ "$form" = "$want" ]
    tap $? "--form=auto${what:+ $what}: the record says $form"
done

# --steps=0 is outside the common range (1..): a usage error.
run_limited "$prog" $common --steps=0 >/dev/null 2>"$err"
code=$?
[ "$code" -eq 2 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q -- '--steps' "$err"
tap $? "--steps=0: exit 2 with one line (exit $code)"

# An injected fault: the host checks every part and step before it launches,
# so the run ends at once with exit 1 and the library's one line; with deep
# halos too.
if [ "$gpus" -ge 2 ]; then
    for what in "$res" "$res --halo=4 --time-block=2" "$graph" "$graph --halo=4"; do
        started=$(milliseconds)
        run_limited env MGPU_INJECT_FAULT=100:1 "$prog" $common --verify=none --devices=2 \
            --nx=2048 --ny=2048 --steps=1000000 $what >/dev/null 2>"$err"
        code=$?
        took=$(($(milliseconds) - started))
        [ "$code" -eq 1 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'device 1 .*step 100' "$err"
        tap $? "MGPU_INJECT_FAULT=100:1${what:+ $what}: exit 1 with one line ($code, $took ms)"
        sed 's/^/# /' "$err"
    done
fi

# A slow neighbour (MGPU_INJECT_DELAY=US:DEVICE): one device sleeps after
# each wait for its neighbours, before it reads what they gave, so that at
# every exchange they run ahead of it and only the counters keep them from
# overwriting rows it has yet to read: the one-row halos it reads (both
# protocols), the edge rows it copies (deep, one pass a cycle), and those
# rows again before their second pass (T < K).  A middle device where there
# are more than 2, with two neighbours; jacobi's periodic rows give every
# device two.  Bit-identical to the CPU reference.
if [ "$gpus" -ge 2 ]; then
    slow=$((gpus / 2))
    for what in "$res --protocol=overlap" --protocol=barrier "$res --halo=4 --time-block=4" \
        "$res --halo=4 --time-block=2" "$res --halo=5 --time-block=2" \
        "--halo=5 --time-block=2 --blocks-per-sm=2" "$graph" "$graph --halo=4 --time-block=4" \
        "$graph --halo=5 --time-block=2"; do
        for kernel in pattern2d jacobi; do
            check_run "slow device $slow (MGPU_INJECT_DELAY=300:$slow), $what, $gpus devices, $kernel" \
                env MGPU_INJECT_DELAY=300:$slow "$prog" $cpu $what --devices="$gpus" \
                --kernel=$kernel --nx=1023 --ny=53 --steps=41
        done
    done

    # A neighbour that stops answering: device $slow sleeps 30 s (from its
    # start, and again at its first wait); its neighbours give up after
    # --wait-limit=1, raise the STOP word, and every kernel leaves, the
    # sleeper too (it looks at the STOP word while it sleeps), each block at
    # the same barrier: exit 1 with the one line naming the wait, in well
    # under the 30 s (a kernel left behind would hang the run).
    for what in "$res --protocol=overlap" --protocol=barrier "$res --halo=4 --time-block=4" \
        "$res --halo=4 --time-block=2" "--halo=4 --time-block=2 --blocks-per-sm=2" "$graph" \
        "$graph --halo=4 --time-block=2"; do
        started=$(milliseconds)
        limit=90 run_limited env MGPU_INJECT_DELAY=30000000:$slow "$prog" $common \
            --verify=none --devices="$gpus" --wait-limit=1 $what --nx=2048 --ny=2048 \
            --steps=100000 >/dev/null 2>"$err"
        code=$?
        took=$(($(milliseconds) - started))
        [ "$code" -eq 1 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'waited more than 1 s' "$err" &&
            [ "$took" -lt 10000 ]
        tap $? "device $slow silent for 30 s, $what: --wait-limit=1 ends the run (exit $code, $took ms)"
        sed 's/^/# /' "$err"
    done
fi

# MGPU_INJECT_DELAY names what it accepts.
run_limited env MGPU_INJECT_DELAY=300:$gpus "$prog" $common --devices="$gpus" --nx=64 --ny=64 \
    --steps=2 >/dev/null 2>"$err"
code=$?
[ "$code" -eq 2 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'MGPU_INJECT_DELAY.*DEVICE from 0' "$err"
tap $? "MGPU_INJECT_DELAY=300:$gpus (no such device): exit 2 with one line (exit $code)"
sed 's/^/# /' "$err"

echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
