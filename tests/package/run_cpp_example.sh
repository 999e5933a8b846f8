#!/usr/bin/env bash
# Installs the tessel just built into a temporary prefix, builds tutorials/cpp/dense_relu against
# it with find_package(tessel) (its generator applies a tuning log), runs the product program, and
# checks it loads no LLVM and that nothing it built needs the CUDA driver.
#   run_cpp_example.sh <tessel build folder> <tessel source folder>
set -euo pipefail
build="$1"
source="$2"
work="$(mktemp -d /tmp/tessel-package-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$source/tutorials/cpp/dense_relu" -B "$work/build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
# The generator applied the tuning log (a record, or the default schedule with a warning).
grep -E "dense_relu_tuned:|tessel: warning" "$work/build.log"
"$work/build/dense_relu_demo"
if ldd "$work/build/dense_relu_demo" | grep -i llvm; then
    echo "dense_relu_demo loads LLVM" >&2
    exit 1
fi
# Neither the generator (tessel::tessel) nor the product needs the CUDA driver to load.
bash "$source/tests/link/check_no_driver_dependency.sh" "$work/build"
echo "package example: ok"
