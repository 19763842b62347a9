// Scalar kernel arguments as one push-constant block, checked on spirv-dis's own disassembly:
// member k is the k-th scalar argument at the next offset aligned to its size (f16 at 0, i64 at
// 8, index as a 32-bit int at 16, f32 at 20, i32 at 24); memref j is binding j; the f16 member
// needs StoragePushConstant16, the i64 Int64.
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
!m = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
!f = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @scale(%A: memref<?xf16>, %s: f16, %n: i64, %B: memref<?x16xf32>, %x: index, %f: f32,
                 %m: i32) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c16 = arith.constant 16 : index
  %ni = arith.index_cast %n : i64 to index
  %mi = arith.index_cast %m : i32 to index
  %o = arith.addi %ni, %x : index
  %o2 = arith.addi %o, %mi : index
  %a = coop.load %A[%o2], %c16, RowMajor : memref<?xf16> -> !m
  %b = coop.matrix_times_scalar %a, %s : !m, f16 -> !m
  coop.store %b, %A[%o2], %c16, RowMajor : !m, memref<?xf16>
  %c = coop.load %B[%o2], %c16, RowMajor : memref<?x16xf32> -> !f
  %d = coop.matrix_times_scalar %c, %f : !f, f32 -> !f
  coop.store %d, %B[%o2], %c16, RowMajor : !f, memref<?x16xf32>
  func.return
}
// CHECK-DAG:  OpCapability Int64
// CHECK-DAG:  OpCapability StoragePushConstant16
// CHECK:      OpEntryPoint GLCompute %scale "scale" %scale_A %scale_B %scale_push_constants
// CHECK:      OpDecorate %{{.*}} ArrayStride 4
// CHECK-NEXT: OpDecorate %[[B:[_a-z0-9]+]] Block
// CHECK-NEXT: OpMemberDecorate %[[B]] 0 Offset 0
// CHECK-NEXT: OpDecorate %[[PC:[_a-z0-9]+]] Block
// CHECK-NEXT: OpMemberDecorate %[[PC]] 0 Offset 0
// CHECK-NEXT: OpMemberDecorate %[[PC]] 1 Offset 8
// CHECK-NEXT: OpMemberDecorate %[[PC]] 2 Offset 16
// CHECK-NEXT: OpMemberDecorate %[[PC]] 3 Offset 20
// CHECK-NEXT: OpMemberDecorate %[[PC]] 4 Offset 24
// CHECK-DAG:  OpDecorate %scale_A Binding 0
// CHECK-DAG:  OpDecorate %scale_B Binding 1
// CHECK-DAG:  %[[ULONG:[a-z0-9_]+]] = OpTypeInt 64 0
// CHECK-DAG:  %[[PC]] = OpTypeStruct %half %[[ULONG]] %uint %float %uint
// CHECK-DAG:  %[[PTR:[_a-zA-Z0-9]+]] = OpTypePointer PushConstant %[[PC]]
// CHECK-DAG:  %scale_push_constants = OpVariable %[[PTR]] PushConstant
// CHECK:      %scale = OpFunction
// CHECK:      OpAccessChain %_ptr_PushConstant_half %scale_push_constants %uint_0
// CHECK:      OpLoad %half
