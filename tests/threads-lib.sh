# threads-lib.sh - what the tests of the thread strategies (mgpu-pthread,
# mgpu-openmp) share: the host-backend matrix.  Sourced after tests/lib.sh.

# Every run repeats: the workers (or OpenMP threads) take the team through a
# warm-up and two timed runs from the initial field, each after a reset.
runs="--backend=host --verify=cpu --repeat=2 --warmup=1"

# thread_matrix LABEL GRIDS PROGRAM ARGS...: PROGRAM ARGS in every exchange
# mode on 1 to 4 devices with both kernels: bit-identical to the CPU
# reference.  Each combination runs GRIDS grids ("odd": odd, prime or
# uneven slabs, taking turns; "smallest": one interior row per device).
thread_matrix() {
    label=$1 grids=$2
    shift 2
    turn=0
    for exchange in peer peer-async staged direct mapped managed; do
        for devices in 1 2 3 4; do
            for kernel in pattern2d jacobi; do
                for grid in $grids; do
                    if [ "$grid" = smallest ]; then
                        nx=3 ny=$((devices + 2)) steps=2
                    else
                        case $((turn % 3)) in
                        0) nx=17 ny=13 steps=7 ;;
                        1) nx=31 ny=7 steps=4 ;;
                        2) nx=101 ny=53 steps=5 ;;
                        esac
                        turn=$((turn + 1))
                    fi
                    check_run "$label: $exchange, $devices devices, $kernel, $nx x $ny" \
                        "$@" $runs --exchange=$exchange --devices=$devices \
                        --kernel=$kernel --nx=$nx --ny=$ny --steps=$steps
                done
            done
        done
    done
}

# check_control DESCRIPTION PROGRAM ARGS...: a run with the CPU control
# field computed beside the devices: verified bit-identical, the control
# equal to the result (control_max_error 0), and its time measured.
check_control() {
    desc=$1
    shift
    out=$(run_limited "$@" $runs --format=json 2>&1)
    code=$?
    verified=$(printf '%s\n' "$out" | json_field verified)
    control=$(printf '%s\n' "$out" | json_field control_max_error)
    cpu_s=$(printf '%s\n' "$out" | json_field cpu_control_s)
    hidden=$(printf '%s\n' "$out" | json_field cpu_control_hidden)
    if [ "$code" -eq 0 ] && [ "$verified" = true ] && [ "$control" = 0 ] &&
        awk -v s="$cpu_s" -v h="$hidden" 'BEGIN { exit !(s > 0 && h >= 0 && h <= 1) }'; then
        tap 0 "$desc"
    else
        tap 1 "$desc (exit $code, verified=$verified, control_max_error=$control," \
            "cpu_control_s=$cpu_s, cpu_control_hidden=$hidden)"
        printf '%s\n' "$out" | sed 's/^/# /'
        echo "# command: $*"
    fi
}
