#!/usr/bin/env bash
# Makes the offline bundle the GPU host builds against (it has no network): the Debian packages of
# the third-party libraries it lacks, unpacked under DIR/usr (default DIR: .deps). Run it where
# Debian's archive is reachable, then carry DIR with the working tree; scripts/gpu-host.sh finds
# DIR/usr (CMAKE_PREFIX_PATH, LD_LIBRARY_PATH). Usage: scripts/fetch-gpu-deps.sh [DIR]
set -euo pipefail
out="${1:-.deps}"
packages=(nlohmann-json3-dev libgtest-dev googletest libcli11-dev libxgboost-dev libxgboost0
          libdmlc0)
mkdir -p "$out/download"
out="$(cd "$out" && pwd)"
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ]; then
    apt-get update -qq
fi
(cd "$out/download" && apt-get download -qq "${packages[@]}")
for deb in "$out"/download/*.deb; do dpkg-deb -x "$deb" "$out"; done
rm -rf "$out/download" "$out/usr/share/doc"
echo "offline bundle in $out ($(du -sh "$out" | cut -f1))"
