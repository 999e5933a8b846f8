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
# --- Python (issue 7): the extension, built against a virtual environment under the build folder
# (pybind11, numpy, pytest and scikit-build-core from PyPI; python3-venv from install-deps.sh),
# then pytest tests/python (the tutorials included, at a small size).
venv="$dir/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "pybind11>=2.12" numpy pytest "scikit-build-core>=0.10"
cmake -S . -B "$dir" -DTESSEL_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$(cd "$venv/bin" && pwd)/python"
cmake --build "$dir" -j "$jobs" --target _tessel _tessel_fuzz
PYTHONPATH="$dir/python" "$venv/bin/python" -m pytest -q tests/python
# --- end Python
