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
    # tessel-measure: the tuner's measurement worker (the tune_*_cuda benchmarks).
    cmake --build "$dir" -j "${TESSEL_JOBS:-$(nproc)}" --target _tessel tessel-measure
    PYTHONPATH="$dir/python" exec python3 "benchmarks/$name.py" "$@"
fi
scripts/install-deps.sh --llvm --bench >/dev/null
dir="${TESSEL_BENCH_BUILD_DIR:-build/bench}"
if [ -f "benchmarks/$name.py" ]; then
    # CPU Python benchmarks (tune_gemm_cpu, ops_default_cpu, gemm_lowp_cpu, call_overhead)
    # compare tessel with other Python packages (TVM, NumPy) in a virtual environment of their
    # own, $dir/venv, installed from benchmarks/requirements.txt (again only when that file
    # changed), with the Python extension built against it, LLVM on.
    venv="$dir/venv"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    stamp="$venv/.tessel-requirements"
    if ! cmp -s benchmarks/requirements.txt "$stamp"; then
        "$venv/bin/python" -m pip install -q --disable-pip-version-check -r benchmarks/requirements.txt
        cp benchmarks/requirements.txt "$stamp"
    fi
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
        -DTESSEL_BUILD_BENCHMARKS=ON -DTESSEL_USE_LLVM=ON -DTESSEL_BUILD_PYTHON=ON \
        "-DPython_EXECUTABLE=$(cd "$venv/bin" && pwd)/python" >/dev/null
    # tessel-measure: the tuner's measurement worker (docs/tuning.md, "Where the worker is");
    # tessel_bench_onednn: oneDNN's matmul primitive for ctypes (support/onednn_matmul.cpp).
    # tessel-tune: tune_cluster_scaling runs its jobs.
    cmake --build "$dir" -j "${TESSEL_JOBS:-$(nproc)}" --target _tessel tessel-measure \
        tessel_bench_onednn tessel-tune
    TESSEL_MEASURE_WORKER="$(cd "$dir/tools/tessel-measure" && pwd)/tessel-measure"
    TESSEL_BENCH_ONEDNN="$(cd "$dir/benchmarks" && pwd)/libtessel_bench_onednn.so"
    export TESSEL_MEASURE_WORKER TESSEL_BENCH_ONEDNN
    PYTHONPATH="$(cd "$dir/python" && pwd)" exec "$venv/bin/python" "benchmarks/$name.py" "$@"
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_BENCHMARKS=ON \
    -DTESSEL_USE_LLVM=ON >/dev/null
cmake --build "$dir" -j "${TESSEL_JOBS:-$(nproc)}" --target "bench_$name"
"$dir/benchmarks/bench_$name" "$@"
