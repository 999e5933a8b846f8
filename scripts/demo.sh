#!/usr/bin/env bash
# Installs what the build needs, builds tessel, and runs its main job (tools/tessel-demo.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --llvm
dir="${TESSEL_BUILD_DIR:-build/release}"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$dir" -j "${TESSEL_JOBS:-$(nproc)}" --target tessel-demo tessel-measure
"$dir/tools/tessel-demo" "$@"
