#!/bin/sh
# gpu-session.sh - the GPU work of a session in few calls: build with the
# README's commands, run the GPU tests on 2 GPUs and on all of them, and
# the benchmarks recorded in BENCHMARKS.md.  Logs and results go to $OUT (or
# ./gpu-out).  STAGES picks what runs (default: build quick, the quick GPU
# tier that every GPU change runs; the others: quick2 check2 checkall
# gpu2-a to gpu2-e, gpu-a to gpu-e, kernels tune blocked p2p compare sizes
# stepcost streams mpi big peerdiag floor stagedchunks).  Run from the
# source tree.  quick is `make check-gpu' on all the GPUs, quick2 on the
# first two.  The full GPU tests (the GPU scripts run one at a time: their
# lock) come in five stages, each one device call: gpu2-* on 2 GPUs, gpu-*
# on all.  compare, sizes and stepcost are the comparison on 1, 2 and all
# the GPUs that doc/compare-*/ and doc/step-cost-*/ hold.
# The host tests are CI's; check2 and checkall run the whole suite, which
# on a machine of many cores slows the host tests beside the GPU scripts
# past their time limits (BENCHMARKS.md section 12).
set -u
out=${OUT:-./gpu-out}
mkdir -p "$out"
stages=${STAGES:-build quick}
log() { echo "== $(date +%T) $*" | tee -a "$out/summary.txt"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=false
export NCCL_NVLS_ENABLE=0

nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv >"$out/gpus.csv" 2>&1
nvidia-smi topo -m >"$out/topo.txt" 2>&1
ngpu=$(($(wc -l <"$out/gpus.csv") - 1))
log "$ngpu GPUs: $(sed -n 2p "$out/gpus.csv")"
# The device counts the multi-GPU stages run: 2 and all, once each.
counts=$( [ "$ngpu" -gt 2 ] && echo "2 $ngpu" || echo 2)
# mgpu-compare's: one device, then those.
compare_devices=1,$(echo $counts | tr ' ' ,)

# make TARGET (check or check-gpu), how long it took, its summary and the
# failing cases into the summary.
check() { # NAME TARGET [make args...]
    name=$1 target=$2
    shift 2
    log "make $target ($name)"
    started=$(date +%s)
    # A limit under the device call's, so that the logs of an unfinished
    # suite still come back (each test's log says how long each run took).
    # make and its tests are a process group of their own, killed at once
    # with SIGKILL: make stopped by a catchable signal deletes the logs of
    # the tests it was running, those that tell where the time went.
    setsid make -j16 "$target" "$@" >"check-$name.log" 2>&1 &
    make_pid=$!
    setsid sh -c 'sleep "$1" && kill -9 "-$2"' watchdog "${CHECK_LIMIT:-540}" "$make_pid" \
        >/dev/null 2>&1 &
    watchdog=$!
    wait "$make_pid"
    code=$?
    kill -9 "-$watchdog" 2>/dev/null
    echo "make $target exit $code in $(($(date +%s) - started)) s (137: stopped after" \
        "${CHECK_LIMIT:-540} s)" | tee -a "$out/summary.txt"
    grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)|^(FAIL|ERROR|SKIP):' "check-$name.log" |
        tee -a "$out/summary.txt"
    for f in tests/*.log; do
        grep -q -E '^not ok|^FAIL' "$f" 2>/dev/null &&
            { echo "--- $f"; grep -E '^not ok|^FAIL|^#' "$f" | head -20; }
    done >>"$out/summary.txt"
    tar czf "$out/logs-$name.tgz" "check-$name.log" tests/*.log test-suite.log 2>/dev/null
}

# gpu_check STAGE TEST...: those tests, as a machine of 2 GPUs (gpu2-*) or
# of all of them (gpu-*).
gpu_check() {
    name=$1
    shift
    case $name in
    gpu2-*) CUDA_VISIBLE_DEVICES=0,1 check "$name" check TESTS="$*" ;;
    *) check "$name" check TESTS="$*" ;;
    esac
}

csv() { # PROGRAM ARGS: one CSV record line per run into $out/bench.csv
    "$@" --format=csv --no-header >>"$out/bench.csv" 2>>"$out/bench-err.txt" ||
        echo "FAILED: $*" | tee -a "$out/summary.txt"
}

# hold_gpus: once, before the first stage that times runs, a context on
# each GPU for the rest of the session, so that each run does not pay the
# driver's set-up of every GPU it sees (tests/gpu-hold.c; runs time
# themselves inside the process, so their figures do not change);
# MGPU_GPU_HOLD=0 leaves the GPUs unheld, as in the tests.
held=no
hold_gpus() {
    [ $held = yes ] || [ "${MGPU_GPU_HOLD:-1}" = 0 ] && return
    held=yes
    make tests/gpu-hold >/dev/null 2>&1 && { tests/gpu-hold $$ </dev/null >/dev/null 2>&1 & }
}

# libtool for ./bootstrap where the machine has none (libtoolize): a tree
# that `dpkg -x` made of Debian's libtool and autotools-dev packages, carried
# in; MGPU_LIBTOOL_ROOT names it (default /tmp/libtool-root), and
# doc/contributing.md ("GPU tests") says how to make it.  Its libtoolize
# finds its files through _lt_pkgdatadir, libtoolize's own override of
# where they are installed, here links into the carried tree.
use_carried_libtool() {
    command -v libtoolize >/dev/null 2>&1 && return 0
    root=${MGPU_LIBTOOL_ROOT:-/tmp/libtool-root}
    case $root in /*) ;; *) root=$PWD/$root ;; esac
    if [ ! -x "$root/usr/bin/libtoolize" ]; then
        log "no libtoolize here, and none in $root/usr/bin (MGPU_LIBTOOL_ROOT)"
        return 1
    fi
    lt_data=$(mktemp -d "${TMPDIR:-/tmp}/mgpu-libtool.XXXXXX")
    ln -s "$root/usr/share/libtool/build-aux" "$lt_data/build-aux"
    ln -s "$root/usr/share/aclocal" "$lt_data/m4"
    # Must be a folder that is not empty; only libtoolize --ltdl reads it.
    ln -s "$root/usr/share/libtool/build-aux" "$lt_data/libltdl"
    _lt_pkgdatadir=$lt_data
    PATH=$root/usr/bin:$PATH
    ACLOCAL_PATH=$root/usr/share/aclocal${ACLOCAL_PATH:+:$ACLOCAL_PATH}
    export _lt_pkgdatadir PATH ACLOCAL_PATH
    log "libtool from $root: $(libtoolize --version | sed 1q)"
}

for stage in $stages; do
    case $stage in
    build | quick* | check* | gpu*) ;;
    *) hold_gpus ;;
    esac
    case $stage in
    build)
        log "build"
        use_carried_libtool || exit 1
        (./bootstrap && ./configure --with-cuda-arch=sm_90 && make -j32) >"$out/build.log" 2>&1 ||
            { tail -30 "$out/build.log"; exit 1; }
        ;;
    quick) check "quick-${ngpu}gpus" check-gpu ;;
    quick2) CUDA_VISIBLE_DEVICES=0,1 check quick-2gpus check-gpu ;;
    check2) CUDA_VISIBLE_DEVICES=0,1 check 2gpus check ;;
    checkall) check "${ngpu}gpus" check ;;
    # The GPU tests in five stages, each meant to fit a device call of 10
    # minutes on 4 H100s (BENCHMARKS.md section 19: the first of them with
    # cuda-persistent.sh 465 s; cuda-halo.sh and cuda-p2p.sh about 440 s;
    # cuda-nccl.sh 242 s): the unit tests and the in-process strategies;
    # the deep-halo matrix of the in-process strategies and the copies;
    # NCCL and fork (which starts 2N+1 CUDA processes a run); mpi (N+1) and
    # the deep halos of processes; the device-driven program.
    gpu2-a | gpu-a)
        gpu_check "$stage" tests/test-cuda-lib tests/test-cuda-blocked tests/cuda-single.sh \
            tests/cuda-threads.sh tests/cuda-streams.sh
        ;;
    gpu2-b | gpu-b) gpu_check "$stage" tests/cuda-halo.sh tests/cuda-p2p.sh ;;
    gpu2-c | gpu-c) gpu_check "$stage" tests/cuda-nccl.sh tests/cuda-fork.sh ;;
    gpu2-d | gpu-d) gpu_check "$stage" tests/cuda-mpi.sh tests/cuda-halo-procs.sh ;;
    gpu2-e | gpu-e) gpu_check "$stage" tests/cuda-persistent.sh ;;
    kernels)
        log "one GPU: the kernels against the copy ceiling"
        for k in pattern2d jacobi; do
            for n in 8192 16384 32768; do
                csv single_thread/mgpu-single --backend=cuda --devices=1 --kernel=$k --nx=$n \
                    --ny=$n --steps=200 --repeat=5 --verify=none
            done
        done
        ;;
    p2p)
        log "mgpu-p2p"
        for n in $counts; do
            bench/mgpu-p2p --backend=cuda --devices=$n --bytes=256M >"$out/p2p-$n.txt" 2>&1
            echo "mgpu-p2p $n exit $?" | tee -a "$out/summary.txt"
        done
        (cd "$out" && tar czf p2p.tgz p2p-*.txt && rm -f p2p-*.txt)
        ;;
    compare)
        # KERNELS: which kernels (default both), one comparison each.
        for k in ${KERNELS:-pattern2d jacobi}; do
            log "mgpu-compare, $k, 16384 x 16384, 1000 steps"
            mkdir -p "$out/compare-$k"
            bench/mgpu-compare --backend=cuda --devices="$compare_devices" --nx=16384 \
                --ny=16384 --kernel=$k --steps=1000 --repeat=3 --output="$out/compare-$k" \
                >"$out/compare-$k.txt" 2>&1
            echo "compare $k exit $?" | tee -a "$out/summary.txt"
        done
        ;;
    sizes)
        log "mgpu-compare, jacobi, 1024 to 16384 squared"
        mkdir -p "$out/sizes"
        bench/mgpu-compare --backend=cuda --devices="$compare_devices" \
            --sizes=1024:16384 --kernel=jacobi --output="$out/sizes" >"$out/sizes.txt" 2>&1
        echo "sizes exit $?" | tee -a "$out/summary.txt"
        ;;
    stepcost)
        # PEER: a checkout of multi-gpu-programming-models, run beside.
        log "bench/step-cost.sh on $ngpu devices${PEER:+, beside $PEER}"
        OUT="$out/stepcost" sh bench/step-cost.sh "1024 2048 4096 8192 16384" "$ngpu" \
            >"$out/stepcost.txt" 2>&1
        echo "step-cost exit $?" | tee -a "$out/summary.txt"
        ;;
    floor)
        log "bench/floor.sh: mgpu-persistent's forms beside the host-driven programs"
        OUT="$out/floor" sh bench/floor.sh "1024 2048 4096 8192 16384" "$(echo 1 $counts)" \
            >"$out/floor.txt" 2>&1
        echo "floor exit $?" | tee -a "$out/summary.txt"
        ;;
    streams)
        log "mgpu-streams figures"
        for n in $counts; do
            csv streams/mgpu-streams --backend=cuda --devices=$n --nx=16384 --ny=16384 \
                --steps=1000 --baseline --compare-exchange --repeat=3 --verify=none
        done
        csv streams/mgpu-streams --backend=cuda --devices=2 --nx=1024 --ny=1024 --steps=5000 \
            --graph --repeat=5 --verify=none
        for chunks in 0 96; do
            csv streams/mgpu-streams --backend=cuda --devices=1 --pipeline --nx=46341 \
                --ny=46341 --steps=4 --device-memory=4G --chunks=$chunks --repeat=3 --verify=none
        done
        ;;
    mpi)
        log "mgpu-mpi, 16384 x 16384, 1000 steps"
        for n in $counts; do
            for overlap in "" --overlap; do
                csv mpirun --allow-run-as-root --oversubscribe --bind-to none -np $n \
                    mpi/mgpu-mpi --backend=cuda --nx=16384 --ny=16384 --steps=1000 \
                    --repeat=3 --baseline --verify=none $overlap
            done
        done
        ;;
    tune)
        log "tools/kernel-tune: variants against the library kernel, then timings"
        nvcc -O3 -std=c++17 -arch=sm_90 -DMGPU_HAVE_CUDA -Ilib -o kernel-tune \
            tools/kernel-tune.cu >"$out/tune.txt" 2>&1 &&
            ./kernel-tune check >>"$out/tune.txt" 2>&1
        echo "kernel-tune check exit $?" | tee -a "$out/summary.txt"
        # TUNE_GRIDS: NXxNY words (a width that is not a multiple of 4 takes
        # the kernel's per-load path).
        for grid in ${TUNE_GRIDS:-16384x16384 16383x16384}; do
            ./kernel-tune time ${grid%x*} ${grid#*x} 200 >>"$out/tune.txt" 2>&1
        done
        tail -5 "$out/tune.txt" >>"$out/summary.txt"
        ;;
    blocked)
        log "tools/blocked-tune: the blocked kernel's shapes checked, then on the whole field and a slab"
        make tools/blocked-tune >"$out/blocked.txt" 2>&1 && tools/blocked-tune check >>"$out/blocked.txt" 2>&1
        echo "blocked-tune check exit $?" | tee -a "$out/summary.txt"
        for n in $counts; do
            tools/blocked-tune slab 16384 16384 $n >>"$out/blocked.txt" 2>&1
        done
        ;;
    big)
        log "50000 x 50000 on 2 GPUs"
        csv single_thread/mgpu-single --backend=cuda --devices=2 --nx=50000 --ny=50000 \
            --steps=20 --repeat=2 --warmup=1 --verify=device
        ;;
    stagedchunks)
        # The stencil's staged exchange with its blocks whole
        # (MGPU_STAGING_CHUNK=0) and in chunks of 1, 2 and 4 MiB (the
        # default), on 2 GPUs: 16384 columns 128 and 512 rows deep, blocks of
        # 8 and 32 MiB, 10 and 4 exchanges a run; exchange_s is the
        # exchanges alone.  One JSON record a line, a file a chunk.
        log "the staged exchange whole and in chunks, 16384 x 16384, --halo=128 and 512"
        for chunk in 0 1048576 2097152 4194304; do
            for deep in "--halo=128 --steps=1280" "--halo=512 --steps=2048"; do
                for prog in single_thread/mgpu-single pthread/mgpu-pthread; do
                    MGPU_STAGING_CHUNK=$chunk $prog --backend=cuda --devices=2 \
                        --exchange=staged --kernel=jacobi --nx=16384 --ny=16384 $deep \
                        --repeat=5 --verify=none --format=json \
                        >>"$out/staged-chunk-$chunk.jsonl" 2>>"$out/bench-err.txt" ||
                        echo "FAILED: MGPU_STAGING_CHUNK=$chunk $prog $deep" |
                        tee -a "$out/summary.txt"
                done
            done
        done
        ;;
    peerdiag)
        log "the peer mode under compute-sanitizer"
        compute-sanitizer --tool memcheck --print-limit 20 single_thread/mgpu-single \
            --backend=cuda --devices=2 --exchange=peer --nx=4096 --ny=4096 --steps=100 \
            --repeat=1 --warmup=1 --baseline --verify=device >"$out/peerdiag.txt" 2>&1
        echo "sanitizer exit $?" | tee -a "$out/summary.txt"
        tail -5 "$out/peerdiag.txt" | tee -a "$out/summary.txt"
        for r in 1 2; do
            csv single_thread/mgpu-single --backend=cuda --devices=2 --exchange=peer \
                --nx=16384 --ny=16384 --steps=1000 --repeat=3 --baseline --verify=none
        done
        ;;
    esac
done
log "done"
