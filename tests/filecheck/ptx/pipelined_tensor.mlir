// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3 strict=true}' | filecheck %s --check-prefix=STAGED
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx{persistent=true}' -t ptx | filecheck %s
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx{persistent=true}' -t ptx-launch | filecheck %s --check-prefix=LAUNCH
// examples/gemm_any.mlir's form at 64x64 tiles: the tensor loads are staged into
// coop.async_copy_tensor (B's transposing view: the copy takes Bt's span, the slot is read
// ColumnMajor), each copy is one bulk tensor copy at the layout's offsets, the tensor maps'
// sizes are host expressions of %M and %K, the K loop's trip count is a run-time value that each
// persistent tile adds to the CTA's group count, and the tile is stored through its layout.
// STAGED: coop.async_copy_tensor %A, %{{.*}} -> %A_stages[%{{.*}}], %{{.*}}, rows 64, cols 64 : memref<?x?xf16>, !tensor_addr.layout<2, Constant>
// STAGED: coop.async_copy_tensor %Bt, %{{.*}} -> %Bt_stages[%{{.*}}], %{{.*}}, rows 64, cols 64
// STAGED: coop.load %A_stages[%{{.*}}], %{{.*}}, RowMajor
// STAGED: coop.load %Bt_stages[%{{.*}}], %{{.*}}, ColumnMajor
// STAGED: {coop.pipeline_stages = 3 : i64}
// CHECK: .param .u32 gemm_param_M,
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: whole rows when it is inside the tensor and pair-aligned
// CHECK: st.global.b32
// LAUNCH: "grid": "persistent"
// LAUNCH: "kind": "tensor_map",
// LAUNCH-NEXT: "arg": 0,
// LAUNCH: "global_dims": [
// LAUNCH-NEXT: {
// LAUNCH-NEXT: "arg": 5
// LAUNCH: "arg": 3
// LAUNCH: "global_strides": [
// LAUNCH-NEXT: {
// LAUNCH-NEXT: "op": "mul",
!L = !tensor_addr.layout<2, Constant>
!Vt = !tensor_addr.view<2, false, 1, 0>
!a = !coop.matrix<64x64xf16, Workgroup, MatrixA>
!b = !coop.matrix<64x64xf16, Workgroup, MatrixB>
!c = !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<64x64xf16, Workgroup, MatrixAcc>
func.func @gemm(%A: memref<?x?xf16>, %Bt: memref<?x?xf16>, %D: memref<?x?xf16>,
                %M: i32, %N: i32, %K: i32)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>,
                coop.grid = affine_map<()[s0, s1, s2] -> (s1 ceildiv 64, s0 ceildiv 64, 1)>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %t64 = arith.constant 64 : i32
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %M, %K : !L
  %lb = tensor_addr.layout_set_dimension %l0, %N, %K : !L
  %ld = tensor_addr.layout_set_dimension %l0, %M, %N : !L
  %vt = tensor_addr.create_view : !Vt
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %x = arith.index_cast %wx : index to i32
  %y = arith.index_cast %wy : index to i32
  %row0 = arith.muli %y, %t64 : i32
  %col0 = arith.muli %x, %t64 : i32
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %kend = arith.index_cast %K : i32 to index
  %acc = scf.for %k = %c0 to %kend step %c64 iter_args(%cc = %init) -> (!c) {
    %k32 = arith.index_cast %k : index to i32
    %las = tensor_addr.layout_slice %la, %row0, %t64, %k32, %t64 : !L
    %lbs = tensor_addr.layout_slice %lb, %col0, %t64, %k32, %t64 : !L
    %av = coop.load_tensor %A, %oa, %las : memref<?x?xf16>, !a, !L -> !a
    %bv = coop.load_tensor %Bt, %ob, %lbs view %vt : memref<?x?xf16>, !b, !L, !Vt -> !b
    %r = coop.mul_add %av, %bv, %cc : !a, !b, !c -> !c
    scf.yield %r : !c
  }
  %out = coop.f_convert %acc : !c -> !d
  %lds = tensor_addr.layout_slice %ld, %row0, %t64, %col0, %t64 : !L
  coop.store_tensor %out, %D, %lds : !d, memref<?x?xf16>, !L
  func.return
}
