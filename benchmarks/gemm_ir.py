"""The dense GEMM kernel of examples/gemm_f16_wg.mlir at any size, as a user writes it.

D = A * Bt^T with A M x K and Bt N x K (B column-major) in f16 or bf16, D M x N in the same type;
one workgroup per 128 x 256 tile of D with Workgroup-scope matrices (A 128x64, B 64x256, an f32
accumulator), a K loop of step 64. Grid (N/256, M/128, 1). Nothing target-specific: staging and
the Hopper machinery are the compiler's (`pipeline-coop-loads`, `convert-coop-to-ptx`).

    python benchmarks/gemm_ir.py M N K [f16|bf16] > K.mlir
"""
import sys


def dense_gemm(M, N, K, dt="f16", BM=128, BN=256, BK=64):
    return f"""!a = !coop.matrix<{BM}x{BK}x{dt}, Workgroup, MatrixA>
!b = !coop.matrix<{BK}x{BN}x{dt}, Workgroup, MatrixB>
!c = !coop.matrix<{BM}x{BN}xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<{BM}x{BN}x{dt}, Workgroup, MatrixAcc>
func.func @gemm(%A: memref<{M}x{K}x{dt}>, %Bt: memref<{N}x{K}x{dt}>, %D: memref<{M}x{N}x{dt}>) attributes {{coop.workgroup_size = array<i32: 256, 1, 1>}} {{
  %c0 = arith.constant 0 : index
  %cK = arith.constant {K} : index
  %cN = arith.constant {N} : index
  %cBK = arith.constant {BK} : index
  %cBM = arith.constant {BM} : index
  %cBN = arith.constant {BN} : index
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %m0 = arith.muli %wy, %cBM : index
  %n0 = arith.muli %wx, %cBN : index
  %a0 = arith.muli %m0, %cK : index
  %b0 = arith.muli %n0, %cK : index
  %z = arith.constant 0.0 : f32
  %cinit = coop.composite_construct %z : f32 -> !c
  %acc = scf.for %k = %c0 to %cK step %cBK iter_args(%c = %cinit) -> (!c) {{
    %ao = arith.addi %a0, %k : index
    %bo = arith.addi %b0, %k : index
    %a = coop.load %A[%ao], %cK, RowMajor : memref<{M}x{K}x{dt}> -> !a
    %b = coop.load %Bt[%bo], %cK, ColumnMajor : memref<{N}x{K}x{dt}> -> !b
    %r = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
    scf.yield %r : !c
  }}
  %h = coop.f_convert %acc : !c -> !d
  %doff0 = arith.muli %m0, %cN : index
  %doff = arith.addi %doff0, %n0 : index
  coop.store %h, %D[%doff], %cN, RowMajor : !d, memref<{M}x{N}x{dt}>
  func.return
}}
"""
if __name__ == "__main__":
    a = sys.argv[1:]
    print(dense_gemm(int(a[0]), int(a[1]), int(a[2]), a[3] if len(a) > 3 else "f16"), end="")
