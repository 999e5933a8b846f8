#!/usr/bin/env bash
# Builds (Release, build/bench) and runs one benchmark: benchmarks/run.sh NAME [args...]
# The benchmarks are listed in benchmarks/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: benchmarks/run.sh NAME (see benchmarks/README.md)}"
shift
if [[ "$name" == *_cuda ]]; then
    # GPU benchmarks are Python programs measuring tessel against PyTorch in one process (the GPU
    # host has PyTorch and no network: no install step). They use the Python extension of a build
    # with the CUDA backend; the LLVM backend is not needed (the GPU host has no LLVM).
    dir="${TESSEL_BENCH_BUILD_DIR:-build/gpu}"
    prefix=()
    [ -d .deps/usr ] && prefix=("-DCMAKE_PREFIX_PATH=$PWD/.deps/usr")
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_USE_CUDA=ON \
        -DTESSEL_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$(command -v python3)" "${prefix[@]}" >/dev/null
    cmake --build "$dir" -j "${TESSEL_JOBS:-$(nproc)}" --target _tessel
    PYTHONPATH="$dir/python" exec python3 "benchmarks/$name.py" "$@"
fi
scripts/install-deps.sh --llvm --bench >/dev/null
dir="${TESSEL_BENCH_BUILD_DIR:-build/bench}"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_BENCHMARKS=ON \
    -DTESSEL_USE_LLVM=ON >/dev/null
cmake --build "$dir" -j "${TESSEL_JOBS:-$(nproc)}" --target "bench_$name"
"$dir/benchmarks/bench_$name" "$@"
