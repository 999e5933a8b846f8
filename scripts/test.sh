#!/usr/bin/env bash
# Installs what the build needs, builds tessel with its tests, and runs every test: first with the
# LLVM backend (the configuration users get) — the C++ suites, then the Python extension and
# pytest — then a second build with TESSEL_USE_LLVM=OFF, so the LLVM-free path (the GPU host's
# build, runtime-only consumers) cannot rot.
# Build folders: build/release and build/nollvm (override the first with TESSEL_BUILD_DIR).
# Parallelism: TESSEL_JOBS (default: the number of cores). TESSEL_SKIP_NOLLVM=1 skips the second
# build (for quick local runs; CI runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --llvm
jobs="${TESSEL_JOBS:-$(nproc)}"
dir="${TESSEL_BUILD_DIR:-build/release}"
launcher=()
if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

echo "== tessel: build and test with the LLVM backend ($dir)"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=ON -DTESSEL_WERROR=ON \
    -DTESSEL_USE_LLVM=ON "${launcher[@]}"
cmake --build "$dir" -j "$jobs"
ctest --test-dir "$dir" --output-on-failure -j "$jobs"

# --- Python (issue 7): the extension, built against a virtual environment under the build folder
# (pybind11, numpy, pytest and scikit-build-core from PyPI; python3-venv from install-deps.sh),
# then pytest tests/python (the tutorials included, at a small size).
echo "== tessel: Python extension and pytest"
venv="$dir/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "pybind11>=2.12" numpy pytest "scikit-build-core>=0.10"
cmake -S . -B "$dir" -DTESSEL_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$(cd "$venv/bin" && pwd)/python"
cmake --build "$dir" -j "$jobs" --target _tessel _tessel_fuzz
PYTHONPATH="$dir/python" "$venv/bin/python" -m pytest -q tests/python
# --- end Python

if [ "${TESSEL_SKIP_NOLLVM:-0}" != 1 ]; then
    echo "== tessel: build and test without LLVM (build/nollvm)"
    cmake -S . -B build/nollvm -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=ON \
        -DTESSEL_WERROR=ON -DTESSEL_USE_LLVM=OFF "${launcher[@]}"
    cmake --build build/nollvm -j "$jobs"
    ctest --test-dir build/nollvm --output-on-failure -j "$jobs"
fi
