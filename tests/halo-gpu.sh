# halo-gpu.sh - the deep-halo matrix on GPUs, sourced by cuda-halo.sh (the
# in-process strategies) and cuda-halo-procs.sh (the multi-process ones),
# each of which fits one device call: --halo=K (1..4) and --time-block=T
# (1..K), the exchange modes each program takes, both kernels, on 1 to all
# devices (at most 4): odd and uneven grids bit-identical to the CPU
# reference, a larger one N devices bit-identical to one.  The caller sets
# $programs (paths under the build tree) and has sourced tests/lib.sh.
single="$top_builddir/single_thread/mgpu-single"

require_gpus "$single"

common="--backend=cuda --repeat=1 --warmup=0"

# mgpu-mpi runs when it is asked for, was built and there is an mpirun;
# mode mpi when the MPI library takes device memory.
mpi_modes=
case " $programs " in
*" mpi/mgpu-mpi "*)
    if [ -x "$top_builddir/mpi/mgpu-mpi" ] && mpi_launcher cuda; then
        probe=$(run_limited $launch -np 1 "$top_builddir/mpi/mgpu-mpi" $common --nx=3 --ny=3 \
                --steps=1 --verify=none --format=json 2>&1)
        mpi_modes=staged
        [ "$(printf '%s\n' "$probe" | json_field cuda_aware)" = true ] && mpi_modes="staged mpi"
        echo "# mgpu-mpi: modes $mpi_modes"
    else
        echo "# mgpu-mpi is not built or there is no mpirun: its runs are left out"
    fi
    ;;
esac

on_devices() {
    devices=$1
    turn=0
    for p in $programs; do
        prog=$top_builddir/$p
        [ -x "$prog" ] || continue
        # A program that mpirun starts, once a device.
        prefix=
        modes="peer peer-async staged direct mapped"
        case $p in
        streams/mgpu-streams) modes="peer peer-async direct" ;;
        fork/mgpu-fork)
            # ipc between two devices needs peer access, which auto takes.
            modes=staged
            out=$(run_limited "$prog" $common --devices=$devices --nx=17 --ny=13 --steps=2 \
                  --verify=none --format=json 2>&1)
            [ "$(printf '%s\n' "$out" | json_field exchange)" = ipc ] && modes="staged ipc"
            ;;
        mpi/mgpu-mpi)
            [ -n "$mpi_modes" ] || continue
            modes=$mpi_modes
            prefix="$launch -np $devices"
            ;;
        esac
        # Each K and T meets one mode and kernel in turn; K=3 T=3 meets all.
        for halo in 1 2 3 4; do
            for block in 1 2 3 4; do
                set -- $modes
                shift $((turn % $#))
                kernel=pattern2d
                [ $((turn % 2)) -eq 1 ] && kernel=jacobi
                turn=$((turn + 1))
                # T above K is a usage error (halo-host.tap checks it).
                [ "$block" -le "$halo" ] || continue
                check_run "$p: cuda vs cpu, K=$halo T=$block, $1, $devices devices, $kernel" \
                    $prefix "$prog" $common --verify=cpu --exchange=$1 --devices=$devices \
                    --kernel=$kernel --halo=$halo --time-block=$block --nx=1001 \
                    --ny=$((53 + devices)) --steps=11
            done
        done
        for exchange in $modes; do
            for kernel in pattern2d jacobi; do
                check_run "$p: cuda vs cpu, K=3 T=3, $exchange, $devices devices, $kernel" \
                    $prefix "$prog" $common --verify=cpu --exchange=$exchange \
                    --devices=$devices --kernel=$kernel --halo=3 --time-block=3 --nx=130 \
                    --ny=$((40 + devices)) --steps=10
            done
        done
        # --graph replays whole pairs of cycles after a first cycle issued
        # plainly, and a tail of plain steps follows the last replay.
        case $p in
        single_thread/* | pthread/* | openmp/*)
            for kt in 2:1 3:2 4:4 5:3; do
                for exchange in peer-async direct; do
                    kernel=pattern2d
                    [ $((turn % 2)) -eq 1 ] && kernel=jacobi
                    turn=$((turn + 1))
                    desc="$p: cuda vs cpu, --graph K=${kt%:*} T=${kt#*:}, $exchange, $devices devices, $kernel"
                    check_run "$desc" "$prog" $common --verify=cpu --exchange=$exchange \
                        --devices=$devices --kernel=$kernel --graph --halo=${kt%:*} \
                        --time-block=${kt#*:} --nx=257 --ny=$((37 + devices)) --steps=83
                    replayed=$(printf '%s\n' "$out" | json_field graph_steps)
                    [ "${replayed:-0}" -ge $((2 * ${kt%:*})) ] 2>/dev/null
                    tap $? "$desc: the record says a replay ran $replayed steps"
                done
            done
            [ "$devices" -gt 1 ] &&
                check_run "$p: N vs 1 device, --graph K=4 T=2, $devices devices, 4096 x 4096, repeats" \
                    "$prog" --backend=cuda --repeat=3 --warmup=1 --verify=device --graph \
                    --exchange=direct --devices=$devices --halo=4 --time-block=2 --nx=4096 \
                    --ny=4096 --steps=45
            ;;
        esac
        # mgpu-streams --overlap=on: each device's edge bands of K rows on
        # their own streams, sent while the rows between compute; on an odd
        # grid, and N devices against one in repeats long enough for a
        # missing wait to show.
        case $p in
        streams/*)
            for halo in 2 3 4; do
                for exchange in $modes; do
                    kernel=pattern2d
                    [ $((turn % 2)) -eq 1 ] && kernel=jacobi
                    turn=$((turn + 1))
                    check_run "$p: cuda vs cpu, --overlap=on K=$halo, $exchange, $devices devices, $kernel" \
                        "$prog" $common --verify=cpu --exchange=$exchange --devices=$devices \
                        --kernel=$kernel --overlap=on --halo=$halo --time-block=$halo \
                        --nx=1001 --ny=$((53 + devices)) --steps=11
                done
            done
            if [ "$devices" -gt 1 ]; then
                for halo in 2 4; do
                    for exchange in peer-async direct; do
                        check_run "$p: N vs 1 device, --overlap=on K=$halo, $exchange, $devices devices, 4096 x 4096, repeats" \
                            "$prog" --backend=cuda --repeat=3 --warmup=1 --verify=device \
                            --overlap=on --exchange=$exchange --devices=$devices --halo=$halo \
                            --time-block=$halo --nx=4096 --ny=4096 --steps=23
                    done
                done
            fi
            ;;
        esac
        check_run "$p: N vs 1 device, K=4 T=4, $devices devices, 4099 x 2051" \
            $prefix "$prog" $common --verify=device --devices=$devices --halo=4 --time-block=4 \
            --nx=4099 --ny=2051 --steps=21
        # Several passes a cycle (T < K), where one device writes into the
        # other's halos (or pulls from its buffers): kernels long enough for
        # the devices' streams to overlap, and repeats after a warm-up, so
        # that a missing wait shows.
        [ "$devices" -gt 1 ] || continue
        for exchange in $modes; do
            case $exchange in peer-async | direct | ipc) ;; *) continue ;; esac
            for kt in 4:2 3:2; do
                check_run "$p: N vs 1 device, K=${kt%:*} T=${kt#*:}, $exchange, $devices devices, 4096 x 4096, repeats" \
                    $prefix "$prog" --backend=cuda --repeat=3 --warmup=1 --verify=device \
                    --exchange=$exchange --devices=$devices --halo=${kt%:*} \
                    --time-block=${kt#*:} --nx=4096 --ny=4096 --steps=13
            done
        done
    done
}
run_at_once on_devices
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
