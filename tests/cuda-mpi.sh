#!/bin/sh
# cuda-mpi.sh - mgpu-mpi on the GPUs of one host: 1, 2 and 4 ranks (as many
# as there are GPUs), both kernels, staged and (when the MPI is CUDA-aware)
# mpi exchanges, with and without --overlap; and the ranks' CUDA IPC (ipc,
# what --exchange=auto takes on one node) on 1, 2 and 4 ranks, with one-row
# and 4-row halos: bit-identical to the CPU reference on odd grids, to one
# device on a larger one.  Without a CUDA-aware MPI, --exchange=mpi must be
# refused with exit 2, never crash; so must ipc with --overlap.  A failing
# rank ends the job with exit 1; under ipc, with its neighbour waiting for
# it, within 2 seconds of its failure and with no process left.  With NCCL
# in the build, the ranks' NCCL communicator (nccl) on 1 and 2 ranks, and a
# failing rank under it ends the job within 2 s of a healthy run's time.
# Skips (exit 77) without mgpu-mpi, mpirun or a usable GPU.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/mpi/mgpu-mpi"
tmp="${TMPDIR:-/tmp}/mgpu-cuda-mpi.$$"
trap 'rm -f "$tmp.out" "$tmp.err" "$tmp.stamped"' EXIT

if [ ! -x "$prog" ]; then
    echo "SKIP: mgpu-mpi is not built (configure found no MPI)"
    exit 77
fi
if ! mpi_launcher cuda; then
    echo "SKIP: no mpirun"
    exit 77
fi

probe=$(run_limited $launch -np 1 "$prog" --backend=cuda --nx=3 --ny=3 --steps=1 \
        --verify=none --repeat=1 --warmup=0 --format=json 2>&1)
if [ $? -ne 0 ]; then
    echo "SKIP: no usable GPU: $probe"
    exit 77
fi
gpus=$(printf '%s\n' "$probe" | json_field backend_reason | sed 's/ .*//')
aware=$(printf '%s\n' "$probe" | json_field cuda_aware)
gpu_lock
echo "# $gpus GPU(s), CUDA-aware MPI: $aware"
exchanges=staged
[ "$aware" = true ] && exchanges="staged mpi"

common="--backend=cuda --repeat=1 --warmup=0"
for ranks in 1 2 4; do
    [ "$ranks" -le "$gpus" ] 2>/dev/null || continue
    for exchange in $exchanges; do
        for overlap in "" --overlap; do
            how="-np $ranks, $exchange${overlap:+, overlap}"
            for kernel in pattern2d jacobi; do
                for grid in "17 13 7" "101 53 5" "3 $((ranks + 2)) 2"; do
                    set -- $grid
                    check_run "cuda vs cpu: $how, $kernel, $1 x $2" \
                        $launch -np $ranks "$prog" $common --verify=cpu --exchange=$exchange \
                        $overlap --kernel=$kernel --nx=$1 --ny=$2 --steps=$3
                done
            done
            check_run "cuda N vs 1 device: $how, 2049 x 1031" \
                $launch -np $ranks "$prog" $common --verify=device --exchange=$exchange \
                $overlap --nx=2049 --ny=1031 --steps=20
        done
    done
done

# ipc: 1 rank (jacobi is its own neighbour), 2 and 4 (as many as there are
# GPUs), on grids whose slabs are uneven; halos of 1 row, and of
# 4 with one pass a cycle (T = K) and with two (T < K: the ranks also wait
# for each other's pulls); step counts that end a cycle early.  auto takes
# ipc, every rank being on this node, where the GPUs reach each other's
# memory (the one-device baseline, rank 0 alone, too); where they do not,
# ipc is a usage error that says so.
ipc_ranks=0
for ranks in 1 2 4; do
    [ "$ranks" -le "$gpus" ] 2>/dev/null || continue
    run_limited $launch -np $ranks "$prog" $common --verify=cpu --baseline --nx=65 --ny=33 \
        --steps=4 --format=json >"$tmp.out" 2>"$tmp.err"
    code=$?
    got="$(json_field exchange <"$tmp.out") $(json_field node_ranks <"$tmp.out") $(json_field verified <"$tmp.out")"
    if [ "$ranks" -gt 1 ] && [ "$code" -eq 0 ] && [ "${got%% *}" != ipc ]; then
        echo "# no peer access between the GPUs: ipc is not run on $ranks ranks"
        mpi_rejects "ipc without peer access on $ranks ranks: a usage error" \
            "^mgpu-mpi: --exchange=ipc: rank .*no peer access" $ranks "$prog" $common \
            --exchange=ipc --nx=17 --ny=13 --steps=2
        continue
    fi
    want="ipc 0$([ "$ranks" -gt 1 ] && echo "-$((ranks - 1))") true"
    if [ "$code" -eq 0 ] && [ "$got" = "$want" ]; then
        tap 0 "-np $ranks, --exchange=auto: $want"
    else
        tap 1 "-np $ranks, --exchange=auto: exit $code, '$got', expected '$want'"
        sed 's/^/# /' "$tmp.err"
    fi
    ipc_ranks=$ranks
    for kernel in pattern2d jacobi; do
        for depth in "1 1" "4 4" "4 2"; do
            for grid in "17 21 9" "101 53 11"; do
                set -- $depth $grid
                check_run "cuda vs cpu: -np $ranks, ipc, $kernel, --halo=$1 --time-block=$2, $3 x $4" \
                    $launch -np $ranks "$prog" $common --verify=cpu --exchange=ipc \
                    --kernel=$kernel --halo=$1 --time-block=$2 --nx=$3 --ny=$4 --steps=$5
            done
        done
    done
    check_run "cuda N vs 1 device: -np $ranks, ipc, --halo=4, 2049 x 1031" \
        $launch -np $ranks "$prog" $common --verify=device --exchange=ipc --halo=4 \
        --nx=2049 --ny=1031 --steps=20
done
mpi_rejects "ipc with --overlap: a usage error" "^mgpu-mpi: --overlap: .*--exchange=ipc" 1 \
    "$prog" $common --exchange=ipc --overlap --nx=65 --ny=65

# nccl: the ranks of one NCCL communicator, whose id rank 0 sends the others
# (MPI_Bcast): 1 rank (jacobi is its own neighbour) and 2, on odd grids
# whose slabs are uneven (and one row deep); halos of 1 row, and of 4 with
# two passes a cycle; bit-identical to the CPU reference, and a larger grid
# on 2 ranks to one device, the record saying nccl.  --exchange=auto takes
# ipc above, never nccl.  Skipped where the build has no NCCL.
export NCCL_NVLS_ENABLE=0 # NVLink multicast stays off (mgpu sets it where unset)
nccl_ranks=0
if ! "$prog" --list-exchanges | grep -qx nccl; then
    echo "# this build has no NCCL (configure --with-nccl): nccl is not run"
else
    for ranks in 1 2; do
        [ "$ranks" -le "$gpus" ] 2>/dev/null || continue
        nccl_ranks=$ranks
        for kernel in pattern2d jacobi; do
            for run in "1 1 17 13 7" "1 1 101 53 5" "1 1 3 $((ranks + 2)) 2" \
                "4 2 17 21 9" "4 2 101 53 11"; do
                set -- $run
                check_run "cuda vs cpu: -np $ranks, nccl, $kernel, --halo=$1 --time-block=$2, $3 x $4" \
                    $launch -np $ranks "$prog" $common --verify=cpu --exchange=nccl \
                    --kernel=$kernel --halo=$1 --time-block=$2 --nx=$3 --ny=$4 --steps=$5
            done
        done
    done
    if [ "$nccl_ranks" -ge 2 ]; then
        run_limited $launch -np 2 "$prog" $common --verify=device --exchange=nccl --kernel=jacobi \
            --halo=4 --time-block=2 --nx=2049 --ny=1031 --steps=20 --format=json \
            >"$tmp.out" 2>"$tmp.err"
        code=$?
        got="$(json_field exchange <"$tmp.out") $(json_field verified <"$tmp.out")"
        if [ "$code" -eq 0 ] && [ "$got" = "nccl true" ]; then
            tap 0 "cuda N vs 1 device: -np 2, nccl, jacobi, --halo=4, 2049 x 1031: $got"
        else
            tap 1 "cuda N vs 1 device: -np 2, nccl, jacobi, --halo=4, 2049 x 1031: exit $code, \
'$got'"
            sed 's/^/# /' "$tmp.out" "$tmp.err"
        fi
    fi
    mpi_rejects "nccl with --overlap: a usage error" "^mgpu-mpi: --overlap: .*--exchange=nccl" 1 \
        "$prog" $common --exchange=nccl --overlap --nx=65 --ny=65
fi

if [ "$aware" != true ]; then
    run_limited $launch -np 2 "$prog" $common --exchange=mpi --nx=65 --ny=65 --steps=2 \
        >"$tmp.out" 2>"$tmp.err"
    code=$?
    if [ "$code" -eq 2 ] && grep -q "^mgpu-mpi: --exchange=mpi: .*--exchange=staged" "$tmp.err"
    then
        tap 0 "--exchange=mpi without a CUDA-aware MPI: refused, exit 2"
    else
        tap 1 "--exchange=mpi without a CUDA-aware MPI: exit $code"
        sed 's/^/# /' "$tmp.err"
    fi
fi

if [ "$gpus" -ge 2 ] 2>/dev/null; then
    MGPU_INJECT_FAULT=3:1 run_limited $launch -np 2 "$prog" $common --exchange=staged \
        --nx=1025 --ny=1025 --steps=10 >"$tmp.out" 2>"$tmp.err"
    code=$?
    if [ "$code" -eq 1 ] && grep -q "^mgpu-mpi: rank 1 on .*step 3" "$tmp.err"; then
        tap 0 "fault on rank 1 of 2 GPUs, staged: exit 1"
    else
        tap 1 "fault on rank 1 of 2 GPUs, staged: exit $code"
        sed 's/^/# /' "$tmp.err"
    fi
fi
if [ "$ipc_ranks" -ge 2 ]; then
    # ipc: rank 1 fails at step 100 of 400 while rank 0 waits for it, on
    # its device for rank 1's signals.  Every line of
    # stderr is stamped as it comes; the pipe ends only once every process
    # that holds it (mpirun, its daemon, both ranks) has exited, so the time
    # from the first line about rank 1's failure (its own, or mpirun's
    # notice of MPI_Abort, whichever comes first) to that end is how long
    # anything outlived the failure.
    marker=9$$
    {
        MGPU_INJECT_FAULT=100:1 run_limited $launch -np 2 "$prog" $common --exchange=ipc \
            --verify=none --nx=4097 --ny=4097 --steps=400 --seed=$marker 2>&1 >/dev/null
        echo "exit $?"
    } | while IFS= read -r line; do
        echo "$(milliseconds) $line"
    done >"$tmp.stamped"
    ended=$(milliseconds)
    code=$(sed -n 's/^[0-9]* exit //p' "$tmp.stamped")
    failed=$(grep -m 1 "rank 1" "$tmp.stamped" | cut -d' ' -f1)
    took=$((ended - ${failed:-0}))
    left=$(seed_holders $marker)
    if [ "$code" = 1 ] && [ -n "$failed" ] && [ "$took" -le 2000 ] && [ -z "$left" ] &&
        grep -q "^[0-9]* mgpu-mpi: rank 1 on .*step 100" "$tmp.stamped"; then
        tap 0 "fault on rank 1 of 2 GPUs, ipc: exit 1, all gone $took ms after it"
    else
        tap 1 "fault on rank 1 of 2 GPUs, ipc: exit $code, gone $took ms after it, left: $left"
        sed 's/^/# /' "$tmp.stamped"
    fi
fi
if [ "$nccl_ranks" -ge 2 ]; then
    # nccl: rank 1 fails at step 3 of a million, leaving rank 0's transfers
    # waiting for it on the device; the job ends with exit 1 within 2 s of
    # a healthy run's time (a few steps: mpirun, CUDA and the communicators
    # started, more phases than the failed run reaches), no process left.
    marker=8$$
    args="$common --exchange=nccl --verify=none --nx=4096 --ny=4096 --seed=$marker"
    started=$(milliseconds)
    run_limited $launch -np 2 "$prog" $args --steps=4 >/dev/null 2>&1
    healthy=$(($(milliseconds) - started))
    started=$(milliseconds)
    MGPU_INJECT_FAULT=3:1 run_limited $launch -np 2 "$prog" $args --steps=1000000 \
        >"$tmp.out" 2>"$tmp.err"
    code=$?
    took=$(($(milliseconds) - started))
    left=$(seed_holders $marker)
    if [ "$code" -eq 1 ] && [ "$took" -le $((healthy + 2000)) ] && [ -z "$left" ] &&
        grep -q "^mgpu-mpi: rank 1 on .*step 3" "$tmp.err"; then
        tap 0 "fault on rank 1 of 2 GPUs, nccl: exit 1 in $took ms, a healthy run $healthy ms"
    else
        tap 1 "fault on rank 1 of 2 GPUs, nccl: exit $code in $took ms, a healthy run \
$healthy ms, left: $left"
        sed 's/^/# /' "$tmp.err"
    fi
fi
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
