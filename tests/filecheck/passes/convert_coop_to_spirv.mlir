// RUN: coop-opt %s -p convert-coop-to-spirv | filecheck %s
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv -o %t.spv && spirv-val --target-env vulkan1.3 %t.spv
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv-asm | filecheck %s --check-prefix=ASM
// Every coop op, the gpu ids, arith and scf.if/scf.for in one kernel, lowered with flavor=khr.

!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
!h = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
!i = !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
func.func @everything(%A: memref<4096xf16>, %C: memref<4096xf32>, %I: memref<256xi32>)
    attributes {coop.workgroup_size = array<i32: 64, 2, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %half = arith.constant 0.5 : f32
  %wx = gpu.block_id x
  %ty = gpu.thread_id y
  %sg = gpu.subgroup_id : index
  %ns = gpu.num_subgroups : index
  %ln = gpu.lane_id : index
  %bd = gpu.block_dim x
  %gd = gpu.grid_dim z
  %o1 = arith.muli %sg, %c16 : index
  %o2 = arith.addi %o1, %wx : index
  %o3 = arith.subi %o2, %wx : index
  %o4 = arith.divui %o3, %c1 : index
  %o5 = arith.remui %o4, %c64 : index
  %o = arith.divsi %o5, %c1 : index
  %a = coop.load %A[%o], %c16, RowMajor : memref<4096xf16> -> !a
  %b = coop.load %A[%o], %c16, ColumnMajor, <Aligned 16|Nontemporal> : memref<4096xf16> -> !b
  %z = coop.composite_construct %half : f32 -> !c
  %cmp = arith.cmpi ult, %sg, %ns : index
  %acc = scf.if %cmp -> (!c) {
    %d = coop.mul_add %a, %b, %z : !a, !b, !c -> !c
    scf.yield %d : !c
  } else {
    scf.yield %z : !c
  }
  %r = scf.for %k = %c0 to %c64 step %c16 iter_args(%x = %acc) -> (!c) {
    %s = coop.fadd %x, %z : !c
    %t = coop.fsub %s, %z : !c
    %u = coop.fmul %t, %z : !c
    %v = coop.fdiv %u, %s : !c
    %w = coop.fnegate %v : !c
    %y = coop.matrix_times_scalar %w, %half : !c, f32 -> !c
    scf.yield %y : !c
  }
  %e = coop.extract %r[0] : !c
  %e2 = arith.mulf %e, %half : f32
  %r2 = coop.insert %e2, %r[1] : !c
  %len = coop.length : !c
  %h = coop.f_convert %r2 : !c -> !h
  %ic = coop.convert_f_to_s %r2 : !c -> !i
  %j = coop.iadd %ic, %ic : !i
  %j2 = coop.isub %j, %ic : !i
  %j3 = coop.imul %j2, %ic : !i
  %j4 = coop.sdiv %j3, %ic : !i
  %j5 = coop.udiv %j4, %ic : !i
  %j6 = coop.snegate %j5 : !i
  %f = coop.convert_s_to_f %j6 : !i -> !c
  coop.store %f, %C[%o], %c16, RowMajor : !c, memref<4096xf32>
  coop.store %j6, %I[%c0], %c16, ColumnMajor : !i, memref<256xi32>
  func.return
}

// CHECK:      spirv.module Logical Vulkan requires [{{.*}}"CooperativeMatrixKHR"{{.*}}] extensions ["SPV_KHR_cooperative_matrix"]
// CHECK-DAG:  spirv.GlobalVariable @everything_A bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
// CHECK-DAG:  spirv.GlobalVariable @everything_C bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0]), Block>, StorageBuffer>
// CHECK-DAG:  spirv.GlobalVariable @everything_I bind(0, 2)
// CHECK-DAG:  spirv.GlobalVariable @everything_WorkgroupId built_in("WorkgroupId")
// CHECK-DAG:  spirv.GlobalVariable @everything_LocalInvocationId built_in("LocalInvocationId")
// CHECK-DAG:  spirv.GlobalVariable @everything_SubgroupId built_in("SubgroupId")
// CHECK-DAG:  spirv.GlobalVariable @everything_NumSubgroups built_in("NumSubgroups")
// CHECK-DAG:  spirv.GlobalVariable @everything_SubgroupLocalInvocationId built_in("SubgroupLocalInvocationId")
// CHECK-DAG:  spirv.GlobalVariable @everything_NumWorkgroups built_in("NumWorkgroups")
// CHECK:      spirv.EntryPoint "GLCompute" @everything
// CHECK:      spirv.ExecutionMode @everything "LocalSize", 64, 2, 1
// CHECK:      spirv.func @everything()
// CHECK:        spirv.UDiv
// CHECK:        spirv.UMod
// CHECK:        spirv.SDiv
// CHECK:        spirv.KHR.CooperativeMatrixLoad {{.*}} -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>
// CHECK:        spirv.KHR.CooperativeMatrixLoad {{.*}}memory_operand = "Aligned(16)|Nontemporal"{{.*}} -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>
// CHECK:        spirv.CompositeConstruct
// CHECK:        spirv.ULessThan
// CHECK:        spirv.SelectionMerge ^[[MERGE:.*]]
// CHECK:        spirv.BranchConditional
// CHECK:        spirv.KHR.CooperativeMatrixMulAdd
// CHECK:        spirv.Branch ^[[MERGE]]
// CHECK:      ^[[MERGE]]({{.*}}: !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>):
// CHECK:        spirv.Branch ^[[HEADER:.*]](
// CHECK:      ^[[HEADER]]({{.*}}: i32, {{.*}}: !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>):
// CHECK:        spirv.SLessThan
// CHECK:        spirv.LoopMerge ^[[EXIT:.*]], ^[[CONT:.*]]
// CHECK:        spirv.BranchConditional {{.*}}, ^[[BODY:.*]], ^[[EXIT]]
// CHECK:        spirv.FAdd
// CHECK:        spirv.FSub
// CHECK:        spirv.FMul
// CHECK:        spirv.FDiv
// CHECK:        spirv.FNegate
// CHECK:        spirv.MatrixTimesScalar
// CHECK:        spirv.Branch ^[[CONT]]
// CHECK:        spirv.IAdd
// CHECK:        spirv.Branch ^[[HEADER]]
// CHECK:        spirv.CompositeExtract {{.*}} {indices = array<i32: 0>} : (!spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>) -> f32
// CHECK:        spirv.FMul
// CHECK:        spirv.CompositeInsert {{.*}} {indices = array<i32: 1>}
// CHECK:        spirv.KHR.CooperativeMatrixLength {{.*}}matrix_type = !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK:        spirv.FConvert
// CHECK:        spirv.ConvertFToS
// CHECK:        spirv.IAdd
// CHECK:        spirv.ISub
// CHECK:        spirv.IMul
// CHECK:        spirv.SDiv
// CHECK:        spirv.UDiv
// CHECK:        spirv.SNegate
// CHECK:        spirv.ConvertSToF
// CHECK:        spirv.KHR.CooperativeMatrixStore
// CHECK:        spirv.KHR.CooperativeMatrixStore
// CHECK:        spirv.Return

// ASM: OpCapability CooperativeMatrixKHR
// ASM: OpMemoryModel Logical Vulkan
// ASM: OpEntryPoint GLCompute %everything "everything"
// ASM: OpExecutionMode %everything LocalSize 64 2 1
// ASM: OpDecorate %everything_A Binding 0
// ASM: OpSelectionMerge
// ASM: OpLoopMerge
// ASM: OpCooperativeMatrixStoreKHR
