#!/usr/bin/env bash
# Installs what the build needs, builds tessel with its tests, and runs every test.
# Build folder: build/release (override with TESSEL_BUILD_DIR). Parallelism: TESSEL_JOBS (default:
# the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --llvm
jobs="${TESSEL_JOBS:-$(nproc)}"
dir="${TESSEL_BUILD_DIR:-build/release}"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=ON -DTESSEL_WERROR=ON \
    -DTESSEL_USE_LLVM=ON
cmake --build "$dir" -j "$jobs"
ctest --test-dir "$dir" --output-on-failure -j "$jobs"
