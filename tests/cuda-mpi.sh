#!/bin/sh
# cuda-mpi.sh - mgpu-mpi on the GPUs of one host: 1, 2 and 4 ranks (as many
# as there are GPUs), both kernels, staged and (when the MPI is CUDA-aware)
# mpi exchanges, with and without --overlap: bit-identical to the CPU
# reference on odd grids, to one device on a larger one.  Without a
# CUDA-aware MPI, --exchange=mpi must be refused with exit 2, never crash.
# A failing rank ends the job with exit 1.  Skips (exit 77) without
# mgpu-mpi, mpirun or a usable GPU.
. "$top_srcdir/tests/lib.sh"
prog="$top_builddir/mpi/mgpu-mpi"
tmp="${TMPDIR:-/tmp}/mgpu-cuda-mpi.$$"
trap 'rm -f "$tmp.out" "$tmp.err"' EXIT

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
[ "$aware" = yes ] && exchanges="staged mpi"

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

if [ "$aware" != yes ]; then
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
    MGPU_INJECT_FAULT=3:1 run_limited $launch -np 2 "$prog" $common --nx=1025 --ny=1025 \
        --steps=10 >"$tmp.out" 2>"$tmp.err"
    code=$?
    if [ "$code" -eq 1 ] && grep -q "^mgpu-mpi: rank 1 on .*step 3" "$tmp.err"; then
        tap 0 "fault on rank 1 of 2 GPUs: exit 1"
    else
        tap 1 "fault on rank 1 of 2 GPUs: exit $code"
        sed 's/^/# /' "$tmp.err"
    fi
fi
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
