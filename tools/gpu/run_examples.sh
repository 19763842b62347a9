#!/usr/bin/env bash
# Every example through `coop-run --check` on the GPU machine: --device cuda for each example the
# PTX backend accepts, --device vulkan for each one the SPIR-V backend accepts (the 64x64 GEMM via
# legalize-coop-sizes: 64x64 is no native H200 shape; the DecodeFunc kernels on Q4_0 blocks
# (tests/test_decode_func.make_q4_0: exact products), unfolded and folded, replace decode_check.py).
# Logs: OUT/<case>.log, summary OUT/examples.txt.
#
#   bash tools/gpu/run_examples.sh OUT     # coopdialect importable (tools/gpu_wheelhouse.sh says how)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: run_examples.sh OUT}
mkdir -p "$out"
: > "$out/examples.txt"
# inputs random data cannot give: Q4_0 blocks (f16 scales) and valid 2:4 metadata (PTX 9.7.15.6.1)
python3 -P - "$out" <<'PY'
import sys; sys.path.insert(0, "tests")
import numpy as np
from test_decode_func import make_q4_0
np.save(f"{sys.argv[1]}/q4_0.npy", make_q4_0(np.random.default_rng(1))[0])
np.save(f"{sys.argv[1]}/meta24.npy", np.random.default_rng(2).choice(
    np.array([0x4, 0x8, 0xC, 0x9, 0xD, 0xE], np.uint8), (256, 64)))
PY
fails=0
run() {  # NAME COOP-RUN-ARGS...
    local name=$1; shift
    if python3 -P -m coopdialect.tools.coop_run "$@" >"$out/$name.log" 2>&1; then s=PASS; else s=FAIL; fails=$((fails + 1)); fi
    echo "$s $name: coop-run $*" | tee -a "$out/examples.txt"
    grep -E '^(check|bench):|error:' "$out/$name.log" | sed 's/^/    /' | tee -a "$out/examples.txt"
}
E=examples
run cuda_gemm_f16 $E/gemm_f16.mlir --grid 2,2,1 --device cuda --check --bench 20
run cuda_gemm_f16_64_large $E/gemm_f16_64_large.mlir --grid 1,1,1 --device cuda --check
run cuda_gemm_s8 $E/gemm_s8.mlir --grid 4,2,1 --device cuda --check --bench 20
# one module, sizes as scalar arguments (.params), the grid it declares, two shapes
DYN1="--arg M=1024 --arg N=512 --arg K=256 --shape A=1024x256 --shape B=256x512 --shape C=1024x512"
DYN2="--arg M=192 --arg N=320 --arg K=80 --shape A=192x80 --shape B=80x320 --shape C=192x320"
run cuda_gemm_dynamic_1024x512x256 $E/gemm_dynamic.mlir --device cuda --check --bench 20 $DYN1
run cuda_gemm_dynamic_192x320x80 $E/gemm_dynamic.mlir --device cuda --check $DYN2
run cuda_sparse_gemm_f16 $E/sparse_gemm_f16.mlir --grid 2,4,1 --device cuda --check --input E=$out/meta24.npy --bench 20
# the coopmat2 / tensor-addressing examples through PTX too (one IR, two backends: docs/ptx.md)
run cuda_gemm_coopmat2_f16 $E/gemm_coopmat2_f16.mlir --grid 2,2,1 --device cuda --check --bench 20
run cuda_conv_patch_clamped $E/conv_patch_clamped.mlir --grid 4,4,1 --device cuda --check
run cuda_softmax_rows $E/softmax_rows.mlir --grid 1,4,1 --device cuda --check
run cuda_dequant_q4 $E/block_decode_load.mlir --kernel dequant_q4 --grid 8,4,1 --device cuda --check --input Q=$out/q4_0.npy
run cuda_gemm_q4 $E/block_decode_load.mlir --kernel gemm_q4 --grid 2,4,1 --device cuda --check --input Q=$out/q4_0.npy
# the *_wg / *_vk examples are 8192^3 (too large to interpret): tools/gpu/stage_check.py and
# benchmarks/bench_ptx.py / vk_gemm_bench.py check their kernels at 512^3
run vk_gemm_f16 $E/gemm_f16.mlir --grid 2,2,1 --device vulkan --check --bench 20
run vk_gemm_f16_nv $E/gemm_f16.mlir --grid 2,2,1 --device vulkan --check --pipeline 'convert-coop-to-spirv{flavor=nv}'
run vk_gemm_s8 $E/gemm_s8.mlir --grid 4,2,1 --device vulkan --check
run vk_gemm_dynamic_1024x512x256 $E/gemm_dynamic.mlir --device vulkan --check --bench 20 $DYN1
run vk_gemm_dynamic_192x320x80 $E/gemm_dynamic.mlir --device vulkan --check $DYN2
run vk_gemm_s8_nv $E/gemm_s8.mlir --grid 4,2,1 --device vulkan --check --pipeline 'convert-coop-to-spirv{flavor=nv}'
run vk_gemm_f16_64_large_split $E/gemm_f16_64_large.mlir --grid 1,1,1 --device vulkan --check --pipeline 'legalize-coop-sizes{target=h200-vulkan flexible=false}'
run vk_gemm_f16_64_large_flexible $E/gemm_f16_64_large.mlir --grid 1,1,1 --device vulkan --check --pipeline 'legalize-coop-sizes{target=h200-vulkan}'
run vk_gemm_coopmat2_f16 $E/gemm_coopmat2_f16.mlir --grid 2,2,1 --device vulkan --check --bench 20
run vk_gemm_coopmat2_f16_folded $E/gemm_coopmat2_f16.mlir --grid 2,2,1 --device vulkan --check --pipeline fold-tensor-views
run vk_conv_patch_clamped $E/conv_patch_clamped.mlir --grid 4,4,1 --device vulkan --check
run vk_softmax_rows $E/softmax_rows.mlir --grid 1,4,1 --device vulkan --check
run vk_dequant_q4 $E/block_decode_load.mlir --kernel dequant_q4 --grid 8,4,1 --device vulkan --check --input Q=$out/q4_0.npy
run vk_gemm_q4 $E/block_decode_load.mlir --kernel gemm_q4 --grid 2,4,1 --device vulkan --check --input Q=$out/q4_0.npy
run vk_dequant_q4_folded $E/block_decode_load.mlir --kernel dequant_q4 --grid 8,4,1 --device vulkan --check --input Q=$out/q4_0.npy --pipeline fold-tensor-views
run vk_gemm_q4_folded $E/block_decode_load.mlir --kernel gemm_q4 --grid 2,4,1 --device vulkan --check --input Q=$out/q4_0.npy --pipeline fold-tensor-views
echo "$fails failed" | tee -a "$out/examples.txt"
[[ $fails == 0 ]]
