#!/usr/bin/env bash
# The GPU host's run (docs/cuda.md, "On the GPU host"): builds tessel there with the LLVM backend
# off and the CUDA backend on, against the offline bundle of libraries the host lacks, then runs
# the steps named on the command line, each logging to $OUT (or build/gpu-logs) and adding a line
# to the summary printed last.
#
#   scripts/fetch-gpu-deps.sh .deps      # once, on a machine with network access
#   scripts/gpu-host.sh build test fuzz sanitize bench
#   TESSEL_TUNE_SECONDS=420 scripts/gpu-host.sh build jobs   # carry build/gpu-tune between calls
#
# Steps:
#   build     configure and build build/gpu (C++ tests and the Python extension)
#   test      ctest (every GPU test runs for real there) and pytest tests/python
#   fuzz      the GPU schedule fuzzer: TESSEL_GPU_FUZZ_CASES cases (default 300) run on the GPU
#   sanitize  the GPU test binary under compute-sanitizer, memcheck then racecheck
#   bench     benchmarks/run.sh gemm_cuda softmax_cuda elementwise_cuda call_overhead_cuda
#             softmax_op_cuda layer_norm_cuda conv2d_cuda (the operator library's default schedules)
#   tutorials the GPU tutorials (05, 06) at full size on the GPU
#   tune      benchmarks/run.sh tune_gemm_cuda and tune_softmax_cuda, each tuning for at most
#             TESSEL_TUNE_SECONDS (default 240) towards TESSEL_TUNE_TRIALS (default 1000) trials,
#             resuming its log in build/gpu-tune/ (run the step again to go on), then its report;
#             the logs are copied to $OUT
#   jobs      the shipped GPU tuning logs (tuning_logs/README.md): each job file of TESSEL_TUNE_JOBS
#             (default tuning_logs/jobs/*_cuda.json) run by tessel-tune for at most
#             TESSEL_TUNE_SECONDS (default 240), resuming its logs in build/gpu-tune/<job>/ (carry
#             that folder to the next call), then distilled into $OUT/<job>.jsonl; the full logs
#             go to $OUT/gpu-tune.tar.gz
# Environment: TESSEL_JOBS (build parallelism, default the number of cores), TESSEL_DEPS (the
# bundle, default .deps), TESSEL_GPU_BUILD_DIR (the build folder, default build/gpu),
# TESSEL_GPU_FUZZ_CASES, TESSEL_FUZZ_TIMEOUT and TESSEL_SANITIZE_TIMEOUT (seconds before the fuzz
# step or one sanitizer run is cut off; 400 and 240 by default).
# Exit status: 0 when every step passed, 1 when one failed (every step named still runs), 2 for
# an unknown step or a missing bundle (nothing runs).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="${OUT:-$root/build/gpu-logs}"
mkdir -p "$out"
deps="$(cd "${TESSEL_DEPS:-.deps}" 2>/dev/null && pwd)" || {
    echo "gpu-host.sh: no offline bundle at ${TESSEL_DEPS:-.deps} (see the comment at the top)" >&2
    exit 2
}
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
jobs="${TESSEL_JOBS:-$(nproc)}"
dir="${TESSEL_GPU_BUILD_DIR:-build/gpu}"
summary=()
failed=0

# Runs "$@" with its output in $out/<name>.log; records pass/fail and the seconds it took (a
# failure makes the script's exit status 1).
step() {
    local name=$1
    shift
    local t0=$SECONDS
    echo "== gpu-host: $name"
    if "$@" >"$out/$name.log" 2>&1; then
        summary+=("$(printf '%-10s ok      %4ds' "$name" $((SECONDS - t0)))")
    else
        failed=1
        summary+=("$(printf '%-10s FAILED  %4ds  (see %s.log)' "$name" $((SECONDS - t0)) "$name")")
        tail -40 "$out/$name.log"
    fi
}

do_build() {
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_USE_LLVM=OFF \
        -DTESSEL_USE_CUDA=ON -DTESSEL_BUILD_TESTS=ON -DTESSEL_BUILD_PYTHON=ON \
        -DCMAKE_PREFIX_PATH="$deps/usr" \
        "-DPython_EXECUTABLE=$(command -v python3)" &&
        cmake --build "$dir" -j "$jobs"
}

do_test() {
    ctest --test-dir "$dir" --output-on-failure -j 8 &&
        PYTHONPATH="$dir/python" python3 -m pytest -q -rs tests/python
}

do_fuzz() {
    TESSEL_GPU_FUZZ_CASES="${TESSEL_GPU_FUZZ_CASES:-300}" timeout "${TESSEL_FUZZ_TIMEOUT:-400}" \
        "$dir/tests/tessel_test_cuda_fuzz"
}

# Every GPU test binary under compute-sanitizer, memcheck then racecheck: the corpus on the GPU
# (cuda_gpu), the runtime's launch tests (cuda) and its device-array tests (runtime, CudaRuntime.*).
# The runtime's tests make failing driver calls on purpose (a bad device ordinal, a corrupt cubin,
# a missing function) and check the decoded error, so the sanitizer's own report of API errors is
# off: a driver error the code did not expect fails its test. Each run is cut off after
# TESSEL_SANITIZE_TIMEOUT seconds (default 240) so the summary prints.
do_sanitize() {
    local limit="${TESSEL_SANITIZE_TIMEOUT:-240}" rc=0 tool bin filter
    for tool in memcheck racecheck; do
        for bin in cuda_gpu cuda runtime; do
            filter=()
            [[ $bin == runtime ]] && filter=(--gtest_filter='CudaRuntime.*')
            echo "== compute-sanitizer --tool $tool tessel_test_$bin ${filter[*]}"
            timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 1 \
                --report-api-errors no "$dir/tests/tessel_test_$bin" "${filter[@]}" || rc=1
        done
    done
    return $rc
}

do_bench() {
    local rc=0
    for b in gemm_cuda softmax_cuda elementwise_cuda call_overhead_cuda softmax_op_cuda \
        layer_norm_cuda conv2d_cuda; do
        TESSEL_BENCH_BUILD_DIR="$dir" benchmarks/run.sh "$b" || rc=1
    done
    return $rc
}

do_tune() {
    local rc=0
    for b in tune_gemm_cuda tune_softmax_cuda; do
        TESSEL_BENCH_BUILD_DIR="$dir" benchmarks/run.sh "$b" --trials "${TESSEL_TUNE_TRIALS:-1000}" \
            --max-seconds "${TESSEL_TUNE_SECONDS:-240}" || rc=1
    done
    cp build/gpu-tune/*.jsonl "$out"/ 2>/dev/null
    return $rc
}

do_jobs() {
    local rc=0 job name status
    export TESSEL_MEASURE_WORKER="$root/$dir/tools/tessel-measure/tessel-measure"
    for job in ${TESSEL_TUNE_JOBS:-tuning_logs/jobs/*_cuda.json}; do
        name=$(basename "$job" .json)
        timeout -k 60 -s TERM "${TESSEL_TUNE_SECONDS:-240}" "$dir/tools/tessel-tune/tessel-tune" \
            run "$job" --log-dir "build/gpu-tune/$name"
        status=$?
        # 124: cut off by the time limit (tessel-tune stops after the batch it measures)
        if [[ $status -ne 0 && $status -ne 124 ]]; then
            echo "gpu-host.sh: tessel-tune run $job exited with $status"
            rc=1
        fi
        "$dir/tools/tessel-tune/tessel-tune" distill "build/gpu-tune/$name" -o "$out/$name.jsonl" ||
            rc=1
    done
    tar czf "$out/gpu-tune.tar.gz" -C build gpu-tune || rc=1
    return $rc
}

do_tutorials() {
    for t in tutorials/05_gpu_gemm.py tutorials/06_gpu_softmax.py; do
        PYTHONPATH="$dir/python" python3 "$t" || return 1
    done
}

for s in "$@"; do
    case "$s" in
        build | test | fuzz | sanitize | bench | tutorials | tune | jobs) ;;
        *) echo "gpu-host.sh: unknown step '$s'" >&2; exit 2 ;;
    esac
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
for s in "$@"; do
    case "$s" in
        build) step build do_build ;;
        test) step test do_test ;;
        fuzz) step fuzz do_fuzz ;;
        sanitize) step sanitize do_sanitize ;;
        bench) step bench do_bench ;;
        tutorials) step tutorials do_tutorials ;;
        tune) step tune do_tune ;;
        jobs) step jobs do_jobs ;;
    esac
done
echo "== gpu-host summary (logs in $out)"
for line in "${summary[@]}"; do echo "$line"; done
grep -h "^BENCH" "$out"/bench.log "$out"/tune.log 2>/dev/null
grep -h "^tuned \|^curve\|trials in the log" "$out"/tune.log 2>/dev/null
grep -h "trials, weighted latency\|^weighted latency\|distill:" "$out"/jobs.log 2>/dev/null | tail -8
grep -h "GFLOP/s\|GB/s" "$out"/tutorials.log 2>/dev/null
grep -h "^schedule fuzz\|^gpu schedule fuzz\|passed on GPU" "$out"/fuzz.log 2>/dev/null
grep -h "^== compute-sanitizer\|ERROR SUMMARY\|RACECHECK SUMMARY\|tests ran\|PASSED\|FAILED" \
    "$out"/sanitize.log 2>/dev/null
grep -hE "tests passed|passed|failed" "$out"/test.log 2>/dev/null | tail -3
# The status is the steps', never the last grep's.
exit "$failed"
