#!/bin/sh
# gpu-quick.sh - the quick GPU tier (make check-gpu): one run of each thing
# a change can break on GPUs, on all the machine's GPUs (2 to 4), in a few
# minutes.  The full matrix (make check on a GPU machine: cuda-*.sh) runs
# each of these across every device count, mode, kernel and grid; this tier
# keeps, for each program, every exchange mode it offers once, and puts the
# features on those runs so that each case catches something the others do
# not.  Every run must give the reference field to the bit (check_run); the
# comment above each case says what it is there to catch.  Skips (exit 77)
# without 2 usable GPUs.
#
# The grids: 1001 x 55 and 101 x 55 are odd widths (the kernels' partial
# last column group) with 53 interior rows, a prime, so the slabs of 2, 3
# or 4 devices are uneven; 3 x (D+2) gives each of D devices one interior
# row, the most devices a grid allows; 4096 x 4096 with repeats after a
# warm-up makes kernels long enough for the devices' streams to overlap, so
# that a missing wait shows as a wrong field against one device.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/threads-lib.sh"
single="$top_builddir/single_thread/mgpu-single"
pthread="$top_builddir/pthread/mgpu-pthread"
openmp="$top_builddir/openmp/mgpu-openmp"
streams="$top_builddir/streams/mgpu-streams"
fork="$top_builddir/fork/mgpu-fork"
mpi="$top_builddir/mpi/mgpu-mpi"
persistent="$top_builddir/persistent/mgpu-persistent"
p2p="$top_builddir/bench/mgpu-p2p"
compare="$top_builddir/bench/mgpu-compare"
tmp="${TMPDIR:-/tmp}/mgpu-gpu-quick.$$"
trap 'rm -rf "$tmp" "$tmp".*' EXIT
tier_started=$(milliseconds)

require_gpus "$single"
if [ "$gpus" -lt 2 ]; then
    echo "SKIP: the quick GPU tier needs 2 GPUs, this machine has $gpus (the full tests run on one)"
    exit 77
fi
D=$gpus
small=$((D + 2))
one="--backend=cuda --repeat=1 --warmup=0"
runs="--backend=cuda --repeat=2 --warmup=1" # check_control's (threads-lib.sh)
cpu="$one --verify=cpu --devices=$D"
# Against one device: repeats after a warm-up, so a race has chances to show.
vs1="--backend=cuda --repeat=3 --warmup=1 --verify=device --devices=$D --nx=4096 --ny=4096"
has_nccl=no
"$single" --list-exchanges | grep -qx nccl && has_nccl=yes
echo "# $D GPUs, NCCL: $has_nccl"
export NCCL_NVLS_ENABLE=0 # NVLink multicast stays off (mgpu sets it where unset too)

# check_fault DESCRIPTION PATTERN SEED PROGRAM ARGS...: with
# MGPU_INJECT_FAULT set in ARGS' environment (env ...), the run ends with
# exit 1 within 20 s (a run of ten million steps that ignored the fault
# would outlast run_limited's 60 s), its stderr matches PATTERN (the failed
# worker and step), and no process started with --seed=SEED is left.
check_fault() {
    cf_desc=$1 cf_pattern=$2 cf_seed=$3
    shift 3
    cf_started=$(milliseconds)
    cf_err=$(limit=60 run_limited "$@" --seed=$cf_seed --verify=none --repeat=1 --warmup=0 \
             --nx=4096 --ny=4096 --steps=10000000 2>&1 >/dev/null)
    cf_code=$?
    cf_took=$(($(milliseconds) - cf_started))
    cf_left=$(seed_holders "$cf_seed" | wc -l)
    if [ "$cf_code" -eq 1 ] && [ "$cf_took" -le 20000 ] && [ "$cf_left" -eq 0 ] &&
        printf '%s\n' "$cf_err" | grep -q -E -- "$cf_pattern"; then
        tap 0 "$cf_desc ($cf_took ms)"
    else
        tap 1 "$cf_desc (exit $cf_code, $cf_took ms, $cf_left processes left)"
        printf '%s\n' "$cf_err" | sed 's/^/# /'
        echo "# command: $*"
    fi
}

# provenance_is DESCRIPTION NAME COUNT: the last check_run's record holds
# to its schema and names COUNT GPUs, each by a UUID and a PCI bus id of
# its own, with the driver and the build it ran with (doc/record.md,
# Provenance); NAME names its file.
provenance_is() {
    printf '%s\n' "$out" >"$tmp.record-$2.json"
    schema_valid "$1: the record holds to doc/record.schema.json" \
        "$top_srcdir/doc/record.schema.json" "$tmp.record-$2.json"
    py "$1: $3 GPUs, each its own UUID and PCI bus id, the driver, the build" \
        "$tmp.record-$2.json" "
import re
g = DATA['gpu_list']
assert len(g) == $3, g
for x in g:
    assert re.fullmatch(r'GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}', x['uuid']), x
    assert re.fullmatch(r'[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}[.]0', x['pci_bus_id']), x
assert len({x['uuid'] for x in g}) == $3 and len({x['pci_bus_id'] for x in g}) == $3, g
assert DATA['gpus'] == '; '.join(x['name'] for x in g), DATA['gpus']
assert isinstance(DATA['cuda_runtime'], int) and isinstance(DATA['cuda_driver'], int), DATA
assert DATA['nvidia_driver'] is None or re.fullmatch(r'[0-9]+([.][0-9]+)+', DATA['nvidia_driver']), DATA
assert DATA['build_cuda'] != 'none' and DATA['build_cuda_archs'] != 'none', DATA"
}

# A seed of its own for each fault run, to find what outlived it.
seed_base=$((($$ % 100000) * 100))

group_single() {
    # Each mode's own copy once, on uneven slabs: the synchronous
    # cudaMemcpyPeer, the async copy ordered by events, the host-staged
    # copy, the kernel's peer stores, zero-copy host memory.
    check_run "single: peer, pattern2d, 1001 x 55" \
        "$single" $cpu --exchange=peer --kernel=pattern2d --nx=1001 --ny=55 --steps=7
    # Where the run came from: every GPU by UUID and PCI bus id.
    provenance_is "single" single $D
    # The driver API's context push instead of cudaSetDevice.
    check_run "single: peer-async, --context=driver, jacobi, 101 x 55" \
        "$single" $cpu --exchange=peer-async --context=driver --kernel=jacobi --nx=101 --ny=55 \
        --steps=5
    # One interior row a device: every row is an edge row and a halo source.
    check_run "single: staged, pattern2d, 3 x $small (one row a device)" \
        "$single" $cpu --exchange=staged --kernel=pattern2d --nx=3 --ny=$small --steps=2
    check_run "single: direct, jacobi, 1001 x 55" \
        "$single" $cpu --exchange=direct --kernel=jacobi --nx=1001 --ny=55 --steps=7
    check_run "single: mapped, pattern2d, 101 x 55" \
        "$single" $cpu --exchange=mapped --kernel=pattern2d --nx=101 --ny=55 --steps=5
    # Managed memory: one field, each kernel reading its neighbours' edge
    # rows where they live and storing jacobi's periodic rows (the GPUs of
    # this tier have concurrent managed access; without it, exit 2).
    check_run "single: managed, jacobi, 1001 x 55" \
        "$single" $cpu --exchange=managed --kernel=jacobi --nx=1001 --ny=55 --steps=7
    record_is "single: managed" exchange managed
    check_run "single: --graph, managed, jacobi, 101 x 55, 70 steps" \
        "$single" $cpu --repeat=2 --graph --exchange=managed --kernel=jacobi --nx=101 \
        --ny=55 --steps=70
    # One device: jacobi's periodic rows make it its own neighbour, and
    # auto takes direct, the step's kernel storing its own halos.
    check_run "single: 1 device, auto, jacobi, 33 x 21" \
        "$single" $one --verify=cpu --devices=1 --kernel=jacobi --nx=33 --ny=21 --steps=9
    record_is "single: auto on one device" exchange direct
    # --graph: two replays of 32 steps and 6 plain ones after, captured
    # once and replayed in both repeats.
    check_run "single: --graph, peer-async, pattern2d, 101 x 55, 70 steps" \
        "$single" $cpu --repeat=2 --graph --exchange=peer-async --kernel=pattern2d --nx=101 \
        --ny=55 --steps=70
    # Deep halos replayed from a graph, two passes a cycle, N against one.
    check_run "single: --graph --halo=4 --time-block=2, direct, N vs 1" \
        "$single" $vs1 --graph --exchange=direct --halo=4 --time-block=2 --steps=45
    if [ "$D" -ge 3 ]; then
        # An odd device count between 2 and all.
        check_run "single: 3 devices, peer-async, jacobi, 257 x 55" \
            "$single" $one --verify=cpu --devices=3 --exchange=peer-async --kernel=jacobi \
            --nx=257 --ny=55 --steps=9
    fi
    check_fault "single: MGPU_INJECT_FAULT=3:1 ends the run" "device 1 failed at step 3" \
        $((seed_base + 1)) env MGPU_INJECT_FAULT=3:1 "$single" --backend=cuda --devices=$D
}

group_threads() {
    # mgpu-pthread (10.4), each mode once; deep halos ride on two of them.
    check_run "pthread: peer, jacobi, 1001 x 55" \
        "$pthread" $cpu --exchange=peer --kernel=jacobi --nx=1001 --ny=55 --steps=7
    check_run "pthread: peer-async, pattern2d, 101 x 55, --halo=3 --time-block=3" \
        "$pthread" $cpu --exchange=peer-async --kernel=pattern2d --halo=3 --time-block=3 \
        --nx=101 --ny=55 --steps=10
    check_run "pthread: staged, jacobi, 3 x $small (one row a device)" \
        "$pthread" $cpu --exchange=staged --kernel=jacobi --nx=3 --ny=$small --steps=2
    check_run "pthread: direct, pattern2d, 1001 x 55, --halo=2 --time-block=1" \
        "$pthread" $cpu --exchange=direct --kernel=pattern2d --halo=2 --time-block=1 \
        --nx=1001 --ny=55 --steps=11
    check_run "pthread: mapped, jacobi, 101 x 55" \
        "$pthread" $cpu --exchange=mapped --kernel=jacobi --nx=101 --ny=55 --steps=5
    # Long kernels on one managed field, N against one: a missing event
    # lets a device read a neighbour's row a step early or late.
    check_run "pthread: managed, N vs 1" "$pthread" $vs1 --exchange=managed --steps=13
    check_run "pthread: managed, pattern2d, 3 x $small (one row a device)" \
        "$pthread" $cpu --exchange=managed --kernel=pattern2d --nx=3 --ny=$small --steps=2
    # Several passes a cycle with async copies: each thread's stream waits
    # for its neighbours' copies, which a missing event lets it overtake.
    check_run "pthread: peer-async --halo=4 --time-block=2, N vs 1" \
        "$pthread" $vs1 --exchange=peer-async --halo=4 --time-block=2 --steps=13
    check_run "pthread: --graph, direct, jacobi, 33 x $((D + 2)), 36 steps" \
        "$pthread" $cpu --repeat=2 --graph --exchange=direct --kernel=jacobi --nx=33 \
        --ny=$small --steps=36
    # The staged exchange in chunks (lib/exchange.c): 16384 columns 128 rows
    # deep make blocks of 8 MiB, two of the default 4 MiB chunks, which each
    # thread queues into its neighbours' halos on their streams; N against
    # one, three exchanges a run.
    check_run "pthread: staged in 4 MiB chunks, --halo=128, jacobi, N vs 1" \
        "$pthread" --backend=cuda --repeat=3 --warmup=1 --verify=device --devices=$D \
        --exchange=staged --kernel=jacobi --halo=128 --nx=16384 --ny=$((256 * D + 2)) --steps=300
    # 10.5: persistent workers stepped through two barriers while the main
    # thread computes the CPU control field.
    check_control "pthread --mode=persistent --cpu-control, peer-async" \
        "$pthread" --mode=persistent --cpu-control --exchange=peer-async \
        --devices=$D --nx=257 --ny=129 --steps=9
    check_fault "pthread: MGPU_INJECT_FAULT=3:1 ends the run" "device 1 failed at step 3" \
        $((seed_base + 2)) env MGPU_INJECT_FAULT=3:1 "$pthread" --backend=cuda --devices=$D
    check_fault "pthread --mode=persistent: MGPU_INJECT_FAULT=3:$((D - 1)) ends the run" \
        "device $((D - 1)) failed at step 3" $((seed_base + 3)) \
        env MGPU_INJECT_FAULT=3:$((D - 1)) "$pthread" --mode=persistent --backend=cuda \
        --devices=$D

    [ -x "$openmp" ] || { echo "# mgpu-openmp is not built"; return 0; }
    # mgpu-openmp (10.6), each mode once, the other kernel than pthread's.
    check_run "openmp: peer, pattern2d, 101 x 55" \
        "$openmp" $cpu --exchange=peer --kernel=pattern2d --nx=101 --ny=55 --steps=5
    check_run "openmp: peer-async, jacobi, 3 x $small (one row a device)" \
        "$openmp" $cpu --exchange=peer-async --kernel=jacobi --nx=3 --ny=$small --steps=2
    check_run "openmp: staged, pattern2d, 1001 x 55, --halo=3 --time-block=2" \
        "$openmp" $cpu --exchange=staged --kernel=pattern2d --halo=3 --time-block=2 \
        --nx=1001 --ny=55 --steps=11
    # Chunks of 1 MiB, eight a block: the pinned buffers refilled within one
    # block, each once its last chunk has left it.
    check_run "openmp: staged in 1 MiB chunks, --halo=128, pattern2d, N vs 1" \
        env MGPU_STAGING_CHUNK=1048576 "$openmp" --backend=cuda --repeat=3 --warmup=1 \
        --verify=device --devices=$D --exchange=staged --kernel=pattern2d --halo=128 \
        --nx=16384 --ny=$((256 * D + 2)) --steps=300
    check_run "openmp: direct, jacobi, 101 x 55" \
        "$openmp" $cpu --exchange=direct --kernel=jacobi --nx=101 --ny=55 --steps=5
    check_run "openmp: mapped, pattern2d, 1001 x 55" \
        "$openmp" $cpu --exchange=mapped --kernel=pattern2d --nx=1001 --ny=55 --steps=7
    check_run "openmp: managed, jacobi, 101 x 55" \
        "$openmp" $cpu --exchange=managed --kernel=jacobi --nx=101 --ny=55 --steps=5
    check_fault "openmp: managed, MGPU_INJECT_FAULT=3:1 ends the run" \
        "device 1 failed at step 3" $((seed_base + 13)) \
        env MGPU_INJECT_FAULT=3:1 "$openmp" --backend=cuda --exchange=managed --devices=$D
    check_run "openmp: --graph --halo=2 --time-block=1, peer-async, N vs 1" \
        "$openmp" $vs1 --graph --exchange=peer-async --halo=2 --time-block=1 --steps=45
    check_control "openmp --cpu-control, direct" \
        "$openmp" --cpu-control --exchange=direct --devices=$D --kernel=jacobi \
        --nx=257 --ny=129 --steps=9
    check_fault "openmp: MGPU_INJECT_FAULT=3:1 ends the run" "device 1 failed at step 3" \
        $((seed_base + 4)) env MGPU_INJECT_FAULT=3:1 "$openmp" --backend=cuda --devices=$D
}

group_streams() {
    # 11.3: the edge rows on their own streams, sent while the interior
    # computes (--overlap=on), in each mode mgpu-streams offers.
    check_run "streams: --overlap=on, peer-async, pattern2d, 1001 x 55" \
        "$streams" $cpu --overlap=on --exchange=peer-async --kernel=pattern2d --nx=1001 \
        --ny=55 --steps=7
    check_run "streams: --overlap=on, peer, jacobi, 101 x 55" \
        "$streams" $cpu --overlap=on --exchange=peer --kernel=jacobi --nx=101 --ny=55 --steps=5
    check_run "streams: --overlap=off, direct, pattern2d, 3 x $small (one row a device)" \
        "$streams" $cpu --overlap=off --exchange=direct --kernel=pattern2d --nx=3 --ny=$small \
        --steps=3
    # Deep halos overlapped: K-row bands on the high-priority streams, one
    # pass of K steps, sent as one block; on an odd grid, and N against one.
    check_run "streams: --overlap=on --halo=3 --time-block=3, direct, jacobi, 1001 x 55" \
        "$streams" $cpu --overlap=on --exchange=direct --halo=3 --time-block=3 --kernel=jacobi \
        --nx=1001 --ny=55 --steps=11
    check_run "streams: --overlap=on --halo=4 --time-block=4, peer-async, N vs 1" \
        "$streams" $vs1 --overlap=on --exchange=peer-async --halo=4 --time-block=4 --steps=23
    # Graphs of pairs of steps: an odd step count leaves one plain step.
    check_run "streams: --graph, auto, jacobi, 33 x $((3 * D + 2)), 7 steps" \
        "$streams" $cpu --graph --kernel=jacobi --nx=33 --ny=$((3 * D + 2)) --steps=7
    record_is "streams: auto on $D devices with peer access" exchange direct
    # Managed memory through the stencil domain's steps (nothing to overlap).
    check_run "streams: managed, pattern2d, 1001 x 55" \
        "$streams" $cpu --exchange=managed --kernel=pattern2d --nx=1001 --ny=55 --steps=7
    # 11.2: the kernels report progress through a monitor kernel.
    check_run "streams: --monitor, pattern2d, 101 x 55" \
        "$streams" $cpu --monitor --kernel=pattern2d --nx=101 --ny=55 --steps=5
    # 11.1: a field in pinned host memory through the device in chunks.
    check_run "streams: --pipeline, 7 chunks, 4 streams, jacobi" \
        "$streams" $cpu --pipeline --chunks=7 --streams=4 --kernel=jacobi --nx=37 --ny=31 \
        --steps=5
    check_fault "streams: MGPU_INJECT_FAULT=3:1 ends the run" "device 1 failed at step 3" \
        $((seed_base + 5)) env MGPU_INJECT_FAULT=3:1 "$streams" --backend=cuda --devices=$D
    # The monitor's kernels run on their own: a fault must still end them.
    check_fault "streams --monitor: MGPU_INJECT_FAULT=100:$((D - 1)) ends the kernels" \
        "device $((D - 1)) failed at step 100" $((seed_base + 6)) \
        env MGPU_INJECT_FAULT=100:$((D - 1)) "$streams" --monitor --backend=cuda --devices=$D
}

group_persistent() {
    # The device-driven program's resident form: both protocols, both
    # kernels; uneven slabs and one-row slabs, each flag starting from zero
    # in every repeat.
    r="--form=resident"
    check_run "persistent: resident, overlap, pattern2d, 1023 x 55" \
        "$persistent" $cpu $r --protocol=overlap --kernel=pattern2d --nx=1023 --ny=55 --steps=9
    check_run "persistent: resident, barrier, jacobi, 3 x $small (one row a device)" \
        "$persistent" $cpu $r --protocol=barrier --kernel=jacobi --nx=3 --ny=$small --steps=3
    check_run "persistent: resident, overlap, jacobi, warmup 2, repeat 3, 131 x 67" \
        "$persistent" --backend=cuda --verify=cpu --warmup=2 --repeat=3 --devices=$D $r \
        --protocol=overlap --kernel=jacobi --nx=131 --ny=67 --steps=11
    # Many flag rounds with two resident blocks a multiprocessor.
    check_run "persistent: resident, barrier, jacobi 1024 x 1024, 101 steps, 2 blocks/SM, N vs 1" \
        "$persistent" $one --verify=device --devices=$D $r --protocol=barrier --kernel=jacobi \
        --nx=1024 --ny=1024 --steps=101 --blocks-per-sm=2
    # Deep halos: K rows copied every K steps, two passes a cycle (the
    # neighbours wait for each other's copies before the second); N vs 1
    # with one pass a cycle, many cycles.
    check_run "persistent: resident, --halo=4 --time-block=2, jacobi, 1001 x 55" \
        "$persistent" $cpu $r --halo=4 --time-block=2 --kernel=jacobi --nx=1001 --ny=55 --steps=11
    check_run "persistent: resident, --halo=6 --time-block=6, pattern2d, N vs 1" \
        "$persistent" $vs1 $r --halo=6 --time-block=6 --kernel=pattern2d --steps=61
    # Passes shorter than T (5 = 2 + 2 + 1; 8 = 3 + 3 + 2) pass their
    # last levels through, with two blocks a multiprocessor where T <= 4.
    check_run "persistent: resident, --halo=5 --time-block=2 --blocks-per-sm=2, jacobi, 1001 x 55" \
        "$persistent" $cpu $r --halo=5 --time-block=2 --blocks-per-sm=2 --kernel=jacobi \
        --nx=1001 --ny=55 --steps=11
    check_run "persistent: resident, --halo=8 --time-block=3 --blocks-per-sm=2, pattern2d, N vs 1" \
        "$persistent" $vs1 $r --halo=8 --time-block=3 --blocks-per-sm=2 --kernel=pattern2d \
        --steps=61
    # The graph form: the device loops over the library's kernels (a body
    # of about 32 steps, so 77 and 101 steps run the loop, its first cycle
    # and steps left after it); one-row halos pushed by the edge strips,
    # deep halos pulled by an exchange node, with a wait before a cycle's
    # second pass.
    g="--form=graph"
    check_run "persistent: graph, pattern2d, 1023 x 55, 77 steps" \
        "$persistent" $cpu $g --kernel=pattern2d --nx=1023 --ny=55 --steps=77
    record_is "persistent: the graph form said so" form graph
    check_run "persistent: graph, jacobi, 3 x $small (one row a device), warmup 2, repeat 3" \
        "$persistent" --backend=cuda --verify=cpu --warmup=2 --repeat=3 --devices=$D $g \
        --kernel=jacobi --nx=3 --ny=$small --steps=40
    check_run "persistent: graph, jacobi 1024 x 1024, 101 steps, N vs 1" \
        "$persistent" $one --verify=device --devices=$D $g --kernel=jacobi --nx=1024 --ny=1024 \
        --steps=101
    check_run "persistent: graph, --halo=5 --time-block=2, jacobi, 1001 x 55" \
        "$persistent" $cpu $g --halo=5 --time-block=2 --kernel=jacobi --nx=1001 --ny=55 \
        --steps=75
    check_run "persistent: graph, --halo=6 (T auto), pattern2d, N vs 1" \
        "$persistent" $vs1 $g --halo=6 --kernel=pattern2d --steps=97
    record_is "persistent: the graph form's auto T is K" time_block 6
    check_fault "persistent: MGPU_INJECT_FAULT=100:1 is refused before the launch" \
        "device 1 .*step 100" $((seed_base + 7)) \
        env MGPU_INJECT_FAULT=100:1 "$persistent" --backend=cuda --devices=$D
    # A slow middle device (MGPU_INJECT_DELAY): at every exchange its
    # neighbours run ahead, and only the counters keep them from overwriting
    # the rows it has yet to copy (the deep kernel's two waits a cycle) or
    # to read (the graph form's pushed rows).
    check_run "persistent: device $((D / 2)) slow, resident, --halo=4 --time-block=2, pattern2d, 1023 x 55" \
        env MGPU_INJECT_DELAY=300:$((D / 2)) "$persistent" $cpu $r --halo=4 --time-block=2 \
        --kernel=pattern2d --nx=1023 --ny=55 --steps=41
    check_run "persistent: device $((D / 2)) slow, graph, jacobi, 1023 x 55" \
        env MGPU_INJECT_DELAY=300:$((D / 2)) "$persistent" $cpu $g --kernel=jacobi --nx=1023 \
        --ny=55 --steps=41
    check_run "persistent: device $((D / 2)) slow, graph, --halo=6 --time-block=2, pattern2d" \
        env MGPU_INJECT_DELAY=300:$((D / 2)) "$persistent" $cpu $g --halo=6 --time-block=2 \
        --kernel=pattern2d --nx=1023 --ny=55 --steps=41
    # A device that stops answering: its neighbours give up at --wait-limit
    # and every block of every kernel leaves at one barrier (the abort path
    # on the devices, which no host check covers), the sleeper too, long
    # before its 30 s are over (check_fault's 20 s); the graph form's loops
    # end at their next test.
    check_fault "persistent: a device silent for 30 s, resident, --halo=4 --time-block=2, --wait-limit=1" \
        "waited more than 1 s" $((seed_base + 11)) \
        env MGPU_INJECT_DELAY=30000000:$((D / 2)) "$persistent" --backend=cuda --devices=$D \
        $r --wait-limit=1 --halo=4 --time-block=2
    check_fault "persistent: a device silent for 30 s, graph, --wait-limit=1" \
        "waited more than 1 s" $((seed_base + 12)) \
        env MGPU_INJECT_DELAY=30000000:$((D / 2)) "$persistent" --backend=cuda --devices=$D \
        $g --wait-limit=1
}

group_fork() {
    # 10.2: a process a device; auto takes ipc where the GPUs reach each
    # other's memory (every lent machine), which the runs below then use.
    check_run "fork: auto, pattern2d, 101 x 55" \
        "$fork" $cpu --kernel=pattern2d --nx=101 --ny=55 --steps=5
    record_is "fork: auto on $D devices with peer access" exchange ipc
    check_run "fork: staged, jacobi, 3 x $small (one row a device)" \
        "$fork" $cpu --exchange=staged --kernel=jacobi --nx=3 --ny=$small --steps=2
    # IPC halos ordered by device-side signals, two passes a cycle: the
    # neighbour's pulls and the next pass's writes must wait for each other.
    check_run "fork: ipc --halo=4 --time-block=2, N vs 1" \
        "$fork" $vs1 --exchange=ipc --halo=4 --time-block=2 --steps=13
    if [ "$has_nccl" = yes ]; then
        check_run "fork: nccl, pattern2d, 1001 x 55, --halo=4 --time-block=4" \
            "$fork" $cpu --exchange=nccl --kernel=pattern2d --halo=4 --time-block=4 --nx=1001 \
            --ny=55 --steps=9
    fi
    check_fault "fork: MGPU_INJECT_FAULT=3:1 ends every worker" "device 1 failed at step 3" \
        $((seed_base + 8)) env MGPU_INJECT_FAULT=3:1 "$fork" --backend=cuda --devices=$D
}

group_mpi() {
    if [ ! -x "$mpi" ] || ! mpi_launcher cuda; then
        echo "# mgpu-mpi is not built or there is no mpirun: its cases are left out"
        return 0
    fi
    # 10.3: a rank a device.  auto takes ipc on one node, with deep halos.
    check_run "mpi: -np $D, auto, jacobi, 1001 x 55, --halo=4 --time-block=2" \
        $launch -np $D "$mpi" $cpu --kernel=jacobi --halo=4 --time-block=2 --nx=1001 --ny=55 \
        --steps=11
    record_is "mpi: auto on one node" exchange ipc
    # Each rank tells its own GPU: D GPUs, none twice.
    provenance_is "mpi: -np $D" mpi $D
    # A GPU for each rank, as srun --gpus-per-task=1 gives: every rank sees
    # one device 0, and auto must still find (by UUID and an IPC handle
    # each rank maps) that the GPUs reach each other and take ipc, the
    # kernels storing their edge rows into a GPU their process does not see.
    own_gpu='CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-$SLURM_LOCALID}}'
    check_run "mpi: -np $D, a GPU of its own a rank (CUDA_VISIBLE_DEVICES), auto, pattern2d" \
        $launch -np $D sh -c "$own_gpu"' exec "$0" "$@"' "$mpi" $cpu --kernel=pattern2d \
        --nx=1001 --ny=55 --steps=9
    record_is "mpi: auto, a GPU of its own a rank" exchange ipc
    provenance_is "mpi: -np $D, a GPU of its own a rank" mpi-own $D
    # Ranks on one GPU must not be joined by IPC signals: refused by UUID.
    mpi_rejects "mpi: ipc with every rank on GPU 0 (CUDA_VISIBLE_DEVICES=0) is a usage error" \
        "^mgpu-mpi: --exchange=ipc: ranks 0 and 1 drive one GPU" $D \
        env CUDA_VISIBLE_DEVICES=0 "$mpi" $one --exchange=ipc --nx=65 --ny=65 --steps=2
    check_run "mpi: -np $D, staged --overlap, pattern2d, 3 x $small (one row a device)" \
        $launch -np $D "$mpi" $cpu --exchange=staged --overlap --kernel=pattern2d --nx=3 \
        --ny=$small --steps=2
    check_run "mpi: -np $D, ipc, N vs 1" \
        $launch -np $D "$mpi" $vs1 --exchange=ipc --steps=13
    if [ "$has_nccl" = yes ]; then
        # The communicator's id sent by MPI_Bcast; two passes a cycle.
        check_run "mpi: -np $D, nccl, pattern2d, 101 x 55, --halo=4 --time-block=2" \
            $launch -np $D "$mpi" $cpu --exchange=nccl --kernel=pattern2d --halo=4 \
            --time-block=2 --nx=101 --ny=55 --steps=11
    fi
    # mpi (device buffers handed to MPI) needs a CUDA-aware MPI: run it
    # where there is one, else it must be a usage error, never a crash.
    if [ "$(printf '%s\n' "$out" | json_field cuda_aware)" = true ]; then
        check_run "mpi: -np $D, mpi, jacobi, 101 x 55" \
            $launch -np $D "$mpi" $cpu --exchange=mpi --kernel=jacobi --nx=101 --ny=55 --steps=5
    else
        mpi_rejects "mpi: --exchange=mpi without a CUDA-aware MPI is a usage error" \
            "^mgpu-mpi: --exchange=mpi: .*--exchange=staged" $D "$mpi" $one --exchange=mpi \
            --nx=65 --ny=65 --steps=2
    fi
    # A failing rank whose neighbour waits for it on its device (ipc).
    check_fault "mpi: MGPU_INJECT_FAULT=3:1 under ipc ends the job" "rank 1 on .*step 3" \
        $((seed_base + 9)) env MGPU_INJECT_FAULT=3:1 $launch -np $D "$mpi" --backend=cuda \
        --exchange=ipc
}

group_nccl() {
    [ "$has_nccl" = yes ] || { echo "# this build has no NCCL: its cases are left out"; return 0; }
    # NCCL in the in-process programs: one group per part and exchange.
    check_run "single: nccl, jacobi, 101 x 55, --halo=4 --time-block=2" \
        "$single" $cpu --exchange=nccl --kernel=jacobi --halo=4 --time-block=2 --nx=101 \
        --ny=55 --steps=11
    record_is "single: nccl" exchange nccl
    check_run "pthread: nccl, pattern2d, 3 x $small (one row a device)" \
        "$pthread" $cpu --exchange=nccl --kernel=pattern2d --nx=3 --ny=$small --steps=2
    check_run "streams: nccl, jacobi, 1001 x 55" \
        "$streams" $cpu --exchange=nccl --kernel=jacobi --nx=1001 --ny=55 --steps=7
    if [ -x "$openmp" ]; then
        check_run "openmp: nccl, N vs 1" "$openmp" $vs1 --exchange=nccl --steps=13
    fi
    # A worker that fails leaves the others' transfers waiting on NCCL.
    check_fault "pthread: nccl, MGPU_INJECT_FAULT=3:1 ends the run" "device 1 failed at step 3" \
        $((seed_base + 10)) env MGPU_INJECT_FAULT=3:1 "$pthread" --backend=cuda --exchange=nccl \
        --devices=$D
}

group_copies() {
    if [ ! -x "$p2p" ] || [ ! -x "$compare" ]; then
        echo "# mgpu-p2p and mgpu-compare are not built (no jansson): their cases are left out"
        return 0
    fi
    # mgpu-p2p: every matrix, each copy verified by the program (exit 1 on
    # a wrong byte), shaped D x D.
    run_limited "$p2p" --backend=cuda --bytes=16M --sizes=4K:1M --repeat=1 --format=json \
        >"$tmp.p2p.json" 2>"$tmp.p2p.err"
    code=$?
    tap "$code" "p2p: $D GPUs, 16 MiB copies, every copy verified (exit $code)"
    [ "$code" -eq 0 ] || sed 's/^/# /' "$tmp.p2p.err"
    py "p2p: every matrix $D x $D, every pair with peer access measured" "$tmp.p2p.json" "
n = DATA['devices']
f = DATA['figures']
assert n == $D and DATA['backend'] == 'cuda', (n, DATA['backend'])
for key in ('peer_access', 'link', 'peer_bw_one_way', 'staged_bw_one_way', 'peer_latency_us'):
    m = f[key]['value']
    assert len(m) == n and all(len(r) == n for r in m), key
for a in range(n):
    for b in range(n):
        if a != b and f['peer_access']['value'][a][b]:
            assert f['peer_bw_one_way']['value'][a][b] > 0, (a, b)"
    # The check kernel itself: a corrupted byte must be caught.
    MGPU_P2P_CORRUPT=1 run_limited "$p2p" --backend=cuda --devices=1 --bytes=1M --sizes=none \
        --repeat=1 --warmup=0 >/dev/null 2>"$tmp.p2p.err"
    code=$?
    [ "$code" -eq 1 ] && grep -q "verification failed: .*1 of 1048576 bytes wrong" "$tmp.p2p.err"
    tap $? "p2p: MGPU_P2P_CORRUPT=1 caught, exit 1 (exit $code)"
    # mgpu-compare drives the programs on GPUs: one strategy on 1 and D.
    run_limited "$compare" --backend=cuda --strategies=streams --devices=1,$D --nx=512 \
        --ny=512 --steps=10 --repeat=1 --output="$tmp.compare" >/dev/null 2>"$tmp.compare.err"
    code=$?
    tap "$code" "compare: streams on 1 and $D GPUs (exit $code)"
    [ "$code" -eq 0 ] || tail -5 "$tmp.compare.err" | sed 's/^/# /'
    py "compare: every run ok and verified on 1 and $D devices" "$tmp.compare/results.json" "
runs = DATA['runs']
assert {r['devices'] for r in runs} == {1, $D}, runs
assert all(r['status'] == 'ok' and r['verified'] is True and r['backend'] == 'cuda' for r in runs), runs
g = DATA['metadata']['gpu_list']
assert len(g) == $D and len({x['uuid'] for x in g}) == $D and all(x['pci_bus_id'] for x in g), g"
    schema_valid "compare: results.json holds to doc/results.schema.json" \
        "$top_srcdir/doc/results.schema.json" "$tmp.compare/results.json"
}

# run_group NAME: one group of cases; the groups run at once, each mostly
# waiting for CUDA to start in its processes (BENCHMARKS.md section 7).
run_group() {
    "group_$1"
}
run_at_once run_group single threads streams persistent fork mpi nccl copies
echo "# the quick tier took $(($(milliseconds) - tier_started)) ms on $D GPUs"
echo "1..$tap_count"
[ "$tap_failed" -eq 0 ]
