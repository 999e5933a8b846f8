#!/usr/bin/env bash
# Builds sgemm_warp_tiled.cu's variants into DIR (one cubin each; ptxas's report beside).
set -euo pipefail
dir="${1:?usage: build_variants.sh DIR}"
mkdir -p "$dir"
cd "$(dirname "$0")"
for v in "db0_bk8:-DREG_DB=0" "db1_bk8:-DREG_DB=1" "db0_bk8_nobounds:-DREG_DB=0 -DMINB=0" \
         "db1_bk8_nobounds:-DREG_DB=1 -DMINB=0" "db0_bk16:-DREG_DB=0 -DBK=16" \
         "db1_bk16:-DREG_DB=1 -DBK=16" "step6map_db0_bk8:-DSTEP6_MAP=1 -DREG_DB=0" \
         "step6map_db0_bk8_nobounds:-DSTEP6_MAP=1 -DREG_DB=0 -DMINB=0" \
         "step6map_db1_bk8:-DSTEP6_MAP=1 -DREG_DB=1"; do
    name=${v%%:*}
    # shellcheck disable=SC2086
    nvcc -cubin -arch=sm_90 -O3 ${v#*:} -Xptxas -v sgemm_warp_tiled.cu -o "$dir/$name.cubin" \
        2>&1 | grep -E "registers|spill" | sed "s/^/$name: /"
done
