#!/usr/bin/env bash
# Builds the experiments' variants into DIR: sgemm_warp_tiled.cu's as sgemm_<name>.cubin and
# hgemm_l2_bound.cu's as hgemm_<name>.cubin (nvcc -cubin for sm_90; ptxas's report printed).
set -euo pipefail
dir="${1:?usage: build_variants.sh DIR}"
mkdir -p "$dir"
cd "$(dirname "$0")"
build() {  # SOURCE PREFIX NAME OPTIONS...
    local src=$1 prefix=$2 name=$3
    shift 3
    nvcc -cubin -arch=sm_90 -O3 "$@" -Xptxas -v "$src" -o "$dir/${prefix}_$name.cubin" 2>&1 |
        grep -E "registers|spill" | sed "s/^/$prefix $name: /"
}
build sgemm_warp_tiled.cu sgemm db0_bk8 -DREG_DB=0
build sgemm_warp_tiled.cu sgemm db1_bk8 -DREG_DB=1
build sgemm_warp_tiled.cu sgemm db0_bk8_nobounds -DREG_DB=0 -DMINB=0
build sgemm_warp_tiled.cu sgemm db1_bk8_nobounds -DREG_DB=1 -DMINB=0
build sgemm_warp_tiled.cu sgemm db0_bk16 -DREG_DB=0 -DBK=16
build sgemm_warp_tiled.cu sgemm db1_bk16 -DREG_DB=1 -DBK=16
build sgemm_warp_tiled.cu sgemm step6map_db0_bk8 -DSTEP6_MAP=1 -DREG_DB=0
build sgemm_warp_tiled.cu sgemm step6map_db0_bk8_nobounds -DSTEP6_MAP=1 -DREG_DB=0 -DMINB=0
build sgemm_warp_tiled.cu sgemm step6map_db1_bk8 -DSTEP6_MAP=1 -DREG_DB=1
# A kept as it is in memory ([m][k]), read KV k steps at a time; cp.async stages (STAGES)
km="-DA_KMAJOR=1 -DREG_DB=0"
build sgemm_warp_tiled.cu sgemm step6map_kmajor_kv4 $km -DSTEP6_MAP=1 -DKV=4
build sgemm_warp_tiled.cu sgemm step6map_kmajor_kv2 $km -DSTEP6_MAP=1 -DKV=2
build sgemm_warp_tiled.cu sgemm kmajor_kv4 $km -DKV=4
for stages in 2 3 4; do
    build sgemm_warp_tiled.cu sgemm "step6map_kmajor_kv4_stages$stages" $km -DSTEP6_MAP=1 \
        -DSTAGES=$stages
done
build sgemm_warp_tiled.cu sgemm step6map_kmajor_kv2_stages3 $km -DSTEP6_MAP=1 -DKV=2 -DSTAGES=3
build sgemm_warp_tiled.cu sgemm step6map_kmajor_kv4_stages3_fetchfirst $km -DSTEP6_MAP=1 \
    -DSTAGES=3 -DFETCH_FIRST=1
build sgemm_warp_tiled.cu sgemm step6map_kmajor_kv4_stages3_bk16 $km -DSTEP6_MAP=1 -DSTAGES=3 \
    -DBK=16
build sgemm_warp_tiled.cu sgemm kmajor_kv4_stages3 $km -DSTAGES=3
for stages in 3 4; do
    build hgemm_l2_bound.cu hgemm "stages${stages}" -DSTAGES=$stages
    build hgemm_l2_bound.cu hgemm "stages${stages}_half_b" -DSTAGES=$stages -DHALF_B=1
done
build hgemm_l2_bound.cu hgemm stages4_no_fetch -DSTAGES=4 -DNO_FETCH=1
build hgemm_l2_bound.cu hgemm stages4_no_fetch_no_sync -DSTAGES=4 -DNO_FETCH=1 -DNO_SYNC=1
build hgemm_l2_bound.cu hgemm stages3_bk64 -DSTAGES=3 -DBK=64
build hgemm_l2_bound.cu hgemm stages3_bk64_no_fetch -DSTAGES=3 -DBK=64 -DNO_FETCH=1
build hgemm_l2_bound.cu hgemm stages3_bk64_half_b -DSTAGES=3 -DBK=64 -DHALF_B=1
build hgemm_l2_bound.cu hgemm stages4_bk64 -DSTAGES=4 -DBK=64
# The fetch spread over the mma steps (INTERLEAVE), fragments double-buffered (FRAG_DB)
for stages in 3 4; do
    build hgemm_l2_bound.cu hgemm "stages${stages}_bk64_interleave" -DSTAGES=$stages -DBK=64 \
        -DINTERLEAVE=1
    build hgemm_l2_bound.cu hgemm "stages${stages}_bk64_fragdb" -DSTAGES=$stages -DBK=64 -DFRAG_DB=1
    build hgemm_l2_bound.cu hgemm "stages${stages}_bk64_interleave_fragdb" -DSTAGES=$stages \
        -DBK=64 -DINTERLEAVE=1 -DFRAG_DB=1
done
build hgemm_l2_bound.cu hgemm stages4_interleave_fragdb -DSTAGES=4 -DINTERLEAVE=1 -DFRAG_DB=1
# Warp specialisation (hgemm_ws.cu): a producer warp, mbarriers instead of block barriers
for stages in 3 4; do
    build hgemm_ws.cu hgemm "ws_stages${stages}_bk64" -DSTAGES=$stages -DBK=64
    build hgemm_ws.cu hgemm "ws_stages${stages}_bk64_half_b" -DSTAGES=$stages -DBK=64 -DHALF_B=1
done
build hgemm_ws.cu hgemm ws_stages4_bk32 -DSTAGES=4 -DBK=32
build hgemm_ws.cu hgemm ws_stages4_bk32_half_b -DSTAGES=4 -DBK=32 -DHALF_B=1
for p in 2 4; do
    build hgemm_ws.cu hgemm "ws_p${p}_stages4_bk64" -DPRODUCERS=$p -DSTAGES=4 -DBK=64
    build hgemm_ws.cu hgemm "ws_p${p}_stages4_bk64_half_b" -DPRODUCERS=$p -DSTAGES=4 -DBK=64 \
        -DHALF_B=1
done
build hgemm_ws.cu hgemm ws_p4_stages3_bk64 -DPRODUCERS=4 -DSTAGES=3 -DBK=64
build hgemm_ws.cu hgemm ws_p4_stages4_bk32 -DPRODUCERS=4 -DSTAGES=4 -DBK=32
# Bulk row copies (BULK), and B multicast to clusters of two (MCAST)
for stages in 3 4; do
    build hgemm_ws.cu hgemm "ws_bulk_stages${stages}_bk64" -DBULK=1 -DSTAGES=$stages
    build hgemm_ws.cu hgemm "ws_mcast_stages${stages}_bk64" -DBULK=1 -DMCAST=1 -DSTAGES=$stages
done
build hgemm_ws.cu hgemm ws_bulk_stages4_bk64_half_b -DBULK=1 -DHALF_B=1
build hgemm_ws.cu hgemm ws_mcast_stages4_bk32 -DBULK=1 -DMCAST=1 -DBK=32
# TMA tensor copies (hgemm_tma.cu, sm_90a), with B multicast to clusters of two (MCAST)
tma() {  # NAME OPTIONS...
    local name=$1
    shift
    nvcc -cubin -arch=sm_90a -O3 "$@" -Xptxas -v hgemm_tma.cu -o "$dir/hgemm_tma_$name.cubin" \
        2>&1 | grep -E "registers|spill" | sed "s/^/hgemm tma_$name: /"
}
for stages in 3 4; do
    tma "stages${stages}_bk64" -DSTAGES=$stages
    tma "mcast_stages${stages}_bk64" -DSTAGES=$stages -DMCAST=1
done
