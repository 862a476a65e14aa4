#!/bin/sh
# two-hosts-nccl.sh - issue 45 item 3, for a GPU session: mgpu-mpi on 2 GPUs
# as two hosts (tools/two-hosts: network namespaces, a veth pair), NCCL
# kept off its in-machine paths so that it takes its network one (sockets
# over the veth pair), beside the same 2 ranks on one host (doc/multi-host.md,
# BENCHMARKS.md section 28).
#
# Where the machine refuses network namespaces (tools/two-hosts fails),
# the two-host runs are made on one host with the same NCCL settings over
# the loopback device, and how.txt and the summary say so.  Each run's
# record, its NCCL_DEBUG=INFO lines (which name the transport of each
# channel: "via NET/Socket" is the network path) and the summary go to $OUT
# (or ./gpu-out/two-hosts).  Run from the built source tree, as root:
#
#   sh bench/two-hosts-nccl.sh
#
# SIZES, STEPS, EXCHANGES and BACKEND change what runs (default 4096 16384,
# 1000, "staged nccl", cuda); WHERE=one-host takes the one-host way even
# where namespaces work; BACKEND=host EXCHANGES="staged mpi" SIZES=64
# rehearses the plumbing on a machine without GPUs.
set -u
out=${OUT:-./gpu-out}/two-hosts
sizes=${SIZES:-4096 16384}
steps=${STEPS:-1000}
exchanges=${EXCHANGES:-staged nccl}
backend=${BACKEND:-cuda}
mkdir -p "$out" || exit 1
log() { echo "== $(date +%T) $*" | tee -a "$out/summary.txt"; }

# NCCL's network path: no NVLink or PCIe peer copies, no shared memory, no
# InfiniBand, no NVLink multicast; its sockets on the veth pair (mgpu0 on
# one host, mgpu1 on the other) or, on one host, the loopback device.
net_env="NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
# One GPU a rank, by its rank in the job: on two hosts both would be local
# rank 0 and take GPU 0.
rank_gpu='CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_RANK exec "$0" "$@"'
forward="-x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE -x NCCL_IB_DISABLE -x NCCL_NVLS_ENABLE \
-x NCCL_DEBUG -x NCCL_DEBUG_FILE -x NCCL_SOCKET_IFNAME"

if [ "${WHERE:-}" = one-host ]; then
    where=one-host
    echo "one host (WHERE=one-host): NCCL over sockets on lo, P2P and SHM off" >"$out/how.txt"
elif tools/two-hosts --timeout=30 true 2>"$out/namespaces.err"; then
    where=two-hosts
    echo "two hosts: network namespaces mgpu-node1, mgpu-node2 on a veth pair" >"$out/how.txt"
else
    where=one-host
    echo "one host: network namespaces refused ($(cat "$out/namespaces.err")); NCCL over" \
        "sockets on lo, P2P and SHM off" >"$out/how.txt"
fi
log "$(cat "$out/how.txt")"

# run NAME PLACE EXCHANGE N: mgpu-mpi on 2 ranks at N x N; PLACE is
# two-hosts (through tools/two-hosts), one-host-net (one host, NCCL kept to
# sockets on lo) or one-host (one host, NCCL and MPI as they choose).
run() {
    name=$1 place=$2 exchange=$3 n=$4
    # NCCL writes its INFO lines to stdout, where the record goes: to a file a
    # rank instead (%h host, %p process).
    export NCCL_DEBUG_FILE="$out/$name.nccl.%h.%p"
    args="--backend=$backend --nx=$n --ny=$n --steps=$steps --repeat=3 --baseline \
--exchange=$exchange --format=json"
    case $place in
    two-hosts)
        cmd="env $net_env NCCL_SOCKET_IFNAME=mgpu mpirun -np 2 --hostfile \"\$MGPU_HOSTFILE\" \
--map-by node --rank-by slot --bind-to none $forward sh -c '$rank_gpu' mpi/mgpu-mpi $args"
        tools/two-hosts --timeout=600 sh -c "$cmd" >"$out/$name.json" 2>"$out/$name.err"
        ;;
    one-host-net)
        env $net_env NCCL_SOCKET_IFNAME=lo OMPI_MCA_plm_rsh_agent=false OMPI_MCA_btl=tcp,self \
            timeout 600 mpirun -np 2 --bind-to none $forward sh -c "$rank_gpu" mpi/mgpu-mpi \
            $args >"$out/$name.json" 2>"$out/$name.err"
        ;;
    one-host)
        OMPI_MCA_plm_rsh_agent=false timeout 600 mpirun -np 2 --bind-to none \
            sh -c "$rank_gpu" mpi/mgpu-mpi $args >"$out/$name.json" 2>"$out/$name.err"
        ;;
    esac
    code=$?
    fields=
    for key in exchange verified max_error hosts node_ranks us_per_step exchange_share efficiency; do
        fields="$fields $key=$(sed -n "s/.*\"$key\": *\"\{0,1\}\([^,\"}]*\).*/\1/p" "$out/$name.json")"
    done
    transport=$(cat "$out/$name".nccl.* "$out/$name.err" 2>/dev/null |
        grep -o 'via NET/[A-Za-z]*\|via P2P[^ ]*\|via SHM[^ ]*' | sort -u | tr '\n' ' ')
    log "$name: exit $code$fields${transport:+ nccl: $transport}"
}

for n in $sizes; do
    for exchange in $exchanges; do
        if [ "$where" = two-hosts ]; then
            run "two-hosts-$exchange-$n" two-hosts $exchange $n
        else
            run "one-host-net-$exchange-$n" one-host-net $exchange $n
        fi
    done
    # Beside them, the same 2 ranks on one host as they run there.
    for exchange in ipc nccl; do
        [ "$backend" = cuda ] || exchange=mpi
        run "one-host-$exchange-$n" one-host $exchange $n
    done
done
