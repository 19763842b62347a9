// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=h200-vulkan}' 2>&1 | filecheck %s
// A 20x16 window at offset 5 with stride 16 wraps past a row of 16 elements: no 2-D tensor
// layout describes it (OpTensorLayoutSetStrideNV's stride rule).
func.func @f(%A: memref<1024xf16>, %C: memref<1024xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %o = arith.constant 0 : index
  %o5 = arith.constant 5 : index
  %s = arith.constant 16 : index
  %a = coop.load %A[%o5], %s, RowMajor : memref<1024xf16> -> !coop.matrix<20x16xf16, Subgroup, MatrixA>
  %b = coop.load %A[%o], %s, RowMajor : memref<1024xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
  %c = coop.load %C[%o], %s, RowMajor : memref<1024xf32> -> !coop.matrix<20x16xf32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %c : !coop.matrix<20x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<20x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<20x16xf32, Subgroup, MatrixAcc>
  coop.store %d, %C[%o], %s, RowMajor : !coop.matrix<20x16xf32, Subgroup, MatrixAcc>, memref<1024xf32>
  func.return
}
// CHECK: padding_stride_rule.mlir:8:3: error: 'coop.load' op cannot be padded through a tensor layout: offset 5 and stride 16 put the 20x16 window across a row of 16 elements (the layout's stride rule needs stride >= offset mod stride + 16)
