#!/usr/bin/env bash
# Installs what the build needs, builds tessel with its tests, and runs every test, in legs:
#   release   the LLVM backend (the configuration users get): the C++ suites
#   python    the Python extension and pytest, in the release build folder
#   nollvm    a second build with TESSEL_USE_LLVM=OFF, so the LLVM-free path (the GPU host's build,
#             runtime-only consumers) cannot rot
#   asan      AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer, LLVM and CUDA (NVRTC)
#             backends on: the C++ suites, the schedule fuzzers on a fresh seed (printed)
#   tsan      ThreadSanitizer: the concurrency tests only (parallel builds, the thread pool, parallel
#             kernels), in a build of only the targets that hold them
# Each leg prints its wall and CPU (user+sys) time; a summary of all legs closes the run.
# Build folders: build/release (TESSEL_BUILD_DIR), build/nollvm, build/asan, build/tsan.
# Parallelism: TESSEL_JOBS (default: the number of cores). TESSEL_SKIP_NOLLVM=1 and
# TESSEL_SKIP_SANITIZERS=1 skip legs (for quick local runs; CI runs them all).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --llvm
jobs="${TESSEL_JOBS:-$(nproc)}"
dir="${TESSEL_BUILD_DIR:-build/release}"
launcher=()
if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    # Paths under the clone are hashed relative to the build folder, so that the LLVM-free leg
    # (build/nollvm) finds the release leg's objects (build/release): same depth, same paths.
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
fi

# --- Leg timing: wall seconds, and the CPU time (user+sys) of every process the leg waited for.
legs_summary=()
leg_name=""
children_cpu() {  # sets cpu_now: user+sys seconds of this shell's finished children (line 2
    local file        # of bash's `times`; called directly, not in $(...), which would be a subshell)
    file="$(mktemp)"
    times >"$file"
    cpu_now="$(awk 'NR == 2 { split($0, t, /[ ms]+/); print t[1] * 60 + t[2] + t[3] * 60 + t[4] }' "$file")"
    rm -f "$file"
}
leg_begin() {
    leg_name="$1"
    leg_wall0=$SECONDS
    children_cpu
    leg_cpu0="$cpu_now"
    echo "== tessel [$1]: $2"
}
leg_end() {
    local wall=$((SECONDS - leg_wall0)) cpu
    children_cpu
    cpu="$(awk -v a="$cpu_now" -v b="$leg_cpu0" 'BEGIN { printf "%d", a - b }')"
    legs_summary+=("$(printf '%-8s wall %3dm%02ds   cpu (user+sys) %3dm%02ds' "$leg_name" \
        $((wall / 60)) $((wall % 60)) $((cpu / 60)) $((cpu % 60)))")
    echo "== tessel [$leg_name]: done in ${wall}s wall, ${cpu}s CPU"
    leg_name=""
}
print_summary() {
    local status=$?
    [ -n "$leg_name" ] && legs_summary+=("$(printf '%-8s FAILED after %ds' "$leg_name" \
        $((SECONDS - leg_wall0)))")
    echo "== tessel: legs ($jobs jobs; total ${SECONDS}s wall)"
    [ ${#legs_summary[@]} -gt 0 ] && printf '   %s\n' "${legs_summary[@]}"
    return $status
}
trap print_summary EXIT

leg_begin release "build and test with the LLVM backend ($dir)"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=ON -DTESSEL_WERROR=ON \
    -DTESSEL_USE_LLVM=ON "${launcher[@]}"
cmake --build "$dir" -j "$jobs"
ctest --test-dir "$dir" --output-on-failure -j "$jobs"
leg_end

# --- Python (issue 7): the extension, built against a virtual environment under the build folder
# (pybind11, numpy, ml_dtypes, pytest, pytest-xdist, scikit-build-core, and onnx and
# onnxruntime for tests/python/test_frontend_onnx.py, and ray for test_distributed.py, from PyPI; python3-venv
# from install-deps.sh), then pytest tests/python (the tutorials included, at a small size), one
# worker more than the jobs (every test writes under its own tmp_path): the tests that wait (on
# the Ray cluster, the daemon, their worker processes) leave a core idle that the third fills
# (2 cores: 286 s against 380 s with two workers; docs/perf/ci-time.md).
leg_begin python "Python extension and pytest"
venv="$dir/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "pybind11>=2.12" numpy ml_dtypes pytest pytest-xdist \
    "scikit-build-core>=0.10" onnx onnxruntime "ray>=2.52"
cmake -S . -B "$dir" -DTESSEL_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$(cd "$venv/bin" && pwd)/python"
cmake --build "$dir" -j "$jobs" --target _tessel _tessel_fuzz
# Ray for tests/python/test_distributed.py, which must run here (TESSEL_TEST_REQUIRE_RAY): its
# tests share one local cluster, on one pytest worker (--dist loadgroup keeps an xdist_group
# together).
TESSEL_TEST_REQUIRE_RAY=1 PYTHONPATH="$dir/python" "$venv/bin/python" -m pytest -q \
    -n "$((jobs + 1))" --dist loadgroup tests/python
# The Python modules need no CUDA driver to load either (tests/link).
ctest --test-dir "$dir" --output-on-failure -L '^link$'
leg_end
# --- end Python

if [ "${TESSEL_SKIP_NOLLVM:-0}" != 1 ]; then
    leg_begin nollvm "build and test without LLVM (build/nollvm)"
    # No benchmarks: the release leg builds them, and the GPU host builds them without LLVM.
    cmake -S . -B build/nollvm -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=ON \
        -DTESSEL_WERROR=ON -DTESSEL_USE_LLVM=OFF -DTESSEL_BUILD_BENCHMARKS=OFF "${launcher[@]}"
    cmake --build build/nollvm -j "$jobs"
    ctest --test-dir build/nollvm --output-on-failure -j "$jobs"
    leg_end
fi

# --- Sanitizers (issue 26). The `asan` and `tsan` presets: -O1 -g1 (line tables for the reports),
# assertions on, no benchmarks. A report fails the test that produced it, and so the run:
# -fno-sanitize-recover=all (CMake) makes every UBSan report fatal, ASan and TSan stop at the first
# report, LeakSanitizer fails the process at exit. Suppressions (tests/sanitizers/*.supp) are for
# third-party code only, each with its reason.
if [ "${TESSEL_SKIP_SANITIZERS:-0}" != 1 ]; then
    supp="$(pwd)/tests/sanitizers"
    # .ci/run sets ON: CI has the CUDA toolkit, and the NVRTC compile tests must run there.
    cuda="${TESSEL_SANITIZE_CUDA:-AUTO}"

    leg_begin asan "AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer (build/asan)"
    cmake --preset asan -DTESSEL_USE_LLVM=ON -DTESSEL_USE_CUDA=$cuda -DTESSEL_WERROR=ON \
        "${launcher[@]}"
    cmake --build build/asan -j "$jobs"
    # A fresh seed each run, printed so that a failure can be replayed:
    #   TESSEL_FUZZ_SEED=<seed> TESSEL_GPU_FUZZ_SEED=<seed> ctest --preset asan -L fuzz
    seed="${TESSEL_SANITIZE_FUZZ_SEED:-$(( (RANDOM << 15 | RANDOM) ))}"
    echo "== tessel [asan]: fuzzer seed $seed (replay: TESSEL_FUZZ_SEED=$seed TESSEL_GPU_FUZZ_SEED=$seed)"
    # malloc_context_size=8: ASan records the stack of every allocation and free; at its default
    # depth of 30 frames that was a third of the time of the allocation-heavy tests (the schedule
    # search, the simplifier). A report still has the whole stack of the bad access; replay with
    # ASAN_OPTIONS=malloc_context_size=30 for deeper allocation and free stacks.
    ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:strict_init_order=1:abort_on_error=0:malloc_context_size=8" \
    LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    TESSEL_FUZZ_SEED="$seed" TESSEL_GPU_FUZZ_SEED="$seed" \
    TESSEL_FUZZ_CASES="${TESSEL_SANITIZE_FUZZ_CASES:-300}" \
    TESSEL_GPU_FUZZ_CASES="${TESSEL_SANITIZE_GPU_FUZZ_CASES:-40}" \
        ctest --test-dir build/asan --output-on-failure -j "$jobs"
    leg_end

    # The concurrency tests: every runtime test (thread pool, time evaluator, modules) and every
    # codegen test (parallel builds from several threads, JIT-compiled parallel kernels; the rest
    # costs under a minute and runs JIT'd code where TSan's heap layout faults reads out of
    # bounds). A new concurrency test (the tuner's measurement pool, ...) joins by its target here
    # and a name that tsan_tests matches.
    # The tuner: the evolutionary search breeds and scores on a thread pool, and a tuning runs it
    # between measurements (its workers are tessel-measure processes); with search_ahead a round
    # measures on a thread of its own while the next is searched (daemon.SearchAhead).
    tsan_targets=(tessel_test_runtime tessel_test_codegen tessel_test_auto_schedule tessel_test_tune
                  tessel_test_daemon tessel-measure)
    tsan_tests='^runtime\.|^codegen\.|^auto_schedule\.EvolutionarySearch|^tune\.TuneSmallGemm'
    tsan_tests+='|^daemon\.SearchAhead'
    leg_begin tsan "ThreadSanitizer: the concurrency tests (build/tsan: ${tsan_targets[*]})"
    cmake --preset tsan -DTESSEL_USE_LLVM=ON -DTESSEL_USE_CUDA=$cuda -DTESSEL_WERROR=ON \
        "${launcher[@]}"
    cmake --build build/tsan -j "$jobs" --target "${tsan_targets[@]}"
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp" \
        ctest --test-dir build/tsan --output-on-failure -j "$jobs" -R "$tsan_tests" \
        --no-tests=error
    leg_end
fi
