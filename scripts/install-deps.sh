#!/usr/bin/env bash
# Installs the Debian 12 packages tessel's build and tests need. Idempotent: packages already
# present are skipped, and apt is not touched at all when nothing is missing. Uses sudo when not
# run as root.
#
#   scripts/install-deps.sh            # build + test dependencies
#   scripts/install-deps.sh --llvm     # also LLVM 19 (the CPU backend; llvm-19-dev)
#   scripts/install-deps.sh --bench    # also the benchmarks' reference libraries (oneDNN, OpenBLAS)
set -euo pipefail

packages=(g++ cmake ninja-build libgtest-dev nlohmann-json3-dev python3-venv python3-dev libxgboost-dev)
packages+=(libcli11-dev)  # the command lines of tools/tessel-tune, tessel-measure, tessel-demo
packages+=(ccache)  # scripts/test.sh: the LLVM-free leg takes the release leg's objects from it
for arg in "$@"; do
    case "$arg" in
        --llvm) packages+=(llvm-19-dev) ;;
        --bench) packages+=(libdnnl-dev libopenblas-dev) ;;
        *) echo "install-deps.sh: unknown option '$arg'" >&2; exit 2 ;;
    esac
done

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all present (${packages[*]})"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
