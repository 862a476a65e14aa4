#!/bin/sh
# fuzz-from.sh - mgpu-compare --from's reader under libFuzzer (fuzz-from.c),
# bounded: FUZZ_SECONDS (default 10) of random and mutated inputs, started
# from the results.json files in doc/; one input in four is also given to
# the reader as a file, regular or of a kind no results.json is (a FIFO, a
# link to one, a folder, a file past the size limit), which must be
# refused at once.  Skips (77) where configure found no compiler that
# builds libFuzzer targets (clang -fsanitize=fuzzer).
. "$top_srcdir/tests/lib.sh"
fuzzer="$top_builddir/tests/fuzz-from"
if [ ! -x "$top_builddir/bench/mgpu-compare" ]; then
    echo "SKIP: mgpu-compare is not built (configure found no jansson)"
    exit 77
fi
if [ ! -x "$fuzzer" ]; then
    echo "SKIP: no libFuzzer: configure found no C compiler that links -fsanitize=fuzzer" \
        "(install clang and libclang-rt-dev, see tools/install-deps)"
    exit 77
fi
tmp="${TMPDIR:-/tmp}/mgpu-fuzz-from.$$"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/corpus" "$tmp/seeds"
n=0
# -max_len: the seeds are up to ~130 kB (doc/compare-h100x4/jacobi/ and
# pattern2d/); mutations may grow them a little.  A longer file would reach
# the fuzzer cut short, JSON no longer: such a seed
# (doc/compare-h100x4/sizes/, 650 kB) is left out.
max_len=262144
for f in "$top_srcdir"/doc/*/results.json "$top_srcdir"/doc/*/*/results.json; do
    [ -f "$f" ] && [ "$(wc -c <"$f")" -le $max_len ] && cp "$f" "$tmp/seeds/$((n += 1)).json"
done
# A few more seeds: the shapes a results file takes at its edges.
printf '[]\n' >"$tmp/seeds/empty-array.json"
printf '[{"program": "mgpu-single", "strategy": "single", "exchange": "auto", "devices": 1, "backend": "host", "kernel": "pattern2d", "nx": 3, "ny": 3, "steps": 1, "repeats": 1, "status": "ok", "time_s": 1e-6, "verified": null, "reason": "\\u00e9\\ud83d\\ude00"}]\n' \
    >"$tmp/seeds/small.json"
# A run's gpu_list, the one nested field a run may have (doc/record.md).
printf '{"schema": 1, "metadata": {"gpu_list": null}, "runs": [{"program": "mgpu-single", "strategy": "single", "exchange": "auto", "devices": 2, "backend": "cuda", "kernel": "jacobi", "nx": 5, "ny": 5, "steps": 1, "repeats": 1, "status": "ok", "time_s": 1e-6, "gpu_list": [{"device": 0, "name": "A", "uuid": "GPU-00000000-0000-0000-0000-000000000000", "pci_bus_id": "0000:1b:00.0"}, {"device": 1, "name": "B", "uuid": null, "pci_bus_id": null}]}]}\n' \
    >"$tmp/seeds/gpu-list.json"
"$fuzzer" -max_total_time="${FUZZ_SECONDS:-10}" -max_len=$max_len -timeout=10 \
    -rss_limit_mb=1024 -print_final_stats=1 "$tmp/corpus" "$tmp/seeds" >"$tmp/log" 2>&1
status=$?
grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done|#[0-9]+ *DONE)' "$tmp/log"
if [ "$status" -ne 0 ]; then
    tail -40 "$tmp/log"
    echo "FAIL: the fuzzer found an input that crashes, hangs or breaks a rule (exit $status)"
    exit 1
fi
echo "PASS: $(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log") inputs, no crash"
