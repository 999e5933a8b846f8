#!/usr/bin/env bash
# Builds (Release, build/bench) and runs one benchmark: benchmarks/run.sh NAME [args...]
# The benchmarks are listed in benchmarks/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: benchmarks/run.sh NAME (see benchmarks/README.md)}"
shift
scripts/install-deps.sh --llvm --bench >/dev/null
dir="${TESSEL_BENCH_BUILD_DIR:-build/bench}"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_BENCHMARKS=ON \
    -DTESSEL_USE_LLVM=ON >/dev/null
cmake --build "$dir" -j "${TESSEL_JOBS:-$(nproc)}" --target "bench_$name"
"$dir/benchmarks/bench_$name" "$@"
