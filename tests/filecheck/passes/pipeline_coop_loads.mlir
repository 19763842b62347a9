// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3}' | filecheck %s
// RUN: coop-opt %s -p pipeline-coop-loads | filecheck %s --check-prefix=S4
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3}' | coop-opt | filecheck %s --check-prefix=ROUND
// RUN: not coop-opt %s -p 'pipeline-coop-loads{stages=1}' 2>&1 | filecheck %s --check-prefix=OPT
// A staged loop is not staged again (it carries coop.pipeline_stages; loops around it hold async ops):
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},pipeline-coop-loads{stages=2}' | filecheck %s
// The staged form (docs/staging.md): S workgroup slots per staged load, a prologue of S-1
// committed groups, wait S-2 / refill slot (t+S-1) mod S / commit / load slot t mod S, wait 0.

!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @k(%A: memref<16x128xf16>, %Bt: memref<16x128xf16>, %C: memref<16x16xf32>, %n: index)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %sg = gpu.subgroup_id : index
  %z = arith.constant 0.0 : f32
  %init = coop.composite_construct %z : f32 -> !c
  %acc = scf.for %k = %c0 to %n step %c16 iter_args(%d = %init) -> (!c) {
    %a = coop.load %A[%k], %c128, RowMajor, <Aligned 16> : memref<16x128xf16> -> !a
    %b = coop.load %Bt[%k], %c128, ColumnMajor : memref<16x128xf16> -> !b
    // not staged: the offset differs between subgroups
    %o = arith.addi %k, %sg : index
    %x = coop.load %A[%o], %c128, RowMajor : memref<16x128xf16> -> !a
    %e = coop.mul_add %a, %b, %d : !a, !b, !c -> !c
    %f = coop.mul_add %x, %b, %e : !a, !b, !c -> !c
    scf.yield %f : !c
  }
  coop.store %acc, %C[%c0], %c16, RowMajor : !c, memref<16x16xf32>
  func.return
}

// CHECK-LABEL: func.func @k
// CHECK-NEXT:  %A_stages = coop.alloc_workgroup : memref<768xf16, #coop.storage_class<Workgroup>>
// CHECK-NEXT:  %Bt_stages = coop.alloc_workgroup : memref<768xf16, #coop.storage_class<Workgroup>>
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:   %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
// prologue, iteration 0 (the trip count is dynamic: guarded)
// CHECK:       %[[P0:.*]] = arith.cmpi slt, %[[C0]], %n : index
// CHECK-NEXT:  scf.if %[[P0]] {
// CHECK-NEXT:    coop.async_copy %A[%[[C0]]], %c128 -> %A_stages[%[[C0]]], %[[C16]], rows 16, cols 16 : memref<16x128xf16> -> memref<768xf16, #coop.storage_class<Workgroup>>
// CHECK-NEXT:    coop.async_copy %Bt[%[[C0]]], %c128 -> %Bt_stages[%[[C0]]], %[[C16]], rows 16, cols 16 : memref<16x128xf16> -> memref<768xf16, #coop.storage_class<Workgroup>>
// CHECK-NEXT:  }
// CHECK-NEXT:  coop.async_commit_group
// prologue, iteration 1 -> slot 1
// CHECK-NEXT:  %[[P1:.*]] = arith.cmpi slt, %[[C16]], %n : index
// CHECK-NEXT:  scf.if %[[P1]] {
// CHECK-NEXT:    coop.async_copy %A[%[[C16]]], %c128 -> %A_stages[%[[C256]]], %[[C16]], rows 16, cols 16
// CHECK-NEXT:    coop.async_copy %Bt[%[[C16]]], %c128 -> %Bt_stages[%[[C256]]], %[[C16]], rows 16, cols 16
// CHECK-NEXT:  }
// CHECK-NEXT:  coop.async_commit_group
// the loop: wait for this iteration's group, read its slot
// CHECK-NEXT:  %acc = scf.for %k = %c0 to %n step %c16 iter_args(%d = %init) -> (!coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
// CHECK-NEXT:    coop.async_wait_group 1
// CHECK-NEXT:    %[[T:.*]] = arith.divui %k, %c16 : index
// CHECK-NEXT:    %[[SLOT:.*]] = arith.remui %[[T]], %[[C3]] : index
// CHECK-NEXT:    %[[SO:.*]] = arith.muli %[[SLOT]], %[[C256]] : index
// the refill of slot (t+2) mod 3 comes before the body, so that it lands while the body runs
// CHECK-NEXT:    %[[AHEAD:.*]] = arith.addi %k, %[[C32]] : index
// CHECK-NEXT:    %[[MORE:.*]] = arith.cmpi slt, %[[AHEAD]], %n : index
// CHECK-NEXT:    %[[T2:.*]] = arith.addi %[[T]], %[[C2]] : index
// CHECK-NEXT:    %[[NS:.*]] = arith.remui %[[T2]], %[[C3]] : index
// CHECK-NEXT:    scf.if %[[MORE]] {
// CHECK-NEXT:      %[[D1:.*]] = arith.muli %[[NS]], %[[C256]] : index
// CHECK-NEXT:      coop.async_copy %A[%[[AHEAD]]], %c128 -> %A_stages[%[[D1]]], %[[C16]], rows 16, cols 16
// CHECK-NEXT:      %[[D2:.*]] = arith.muli %[[NS]], %[[C256]] : index
// CHECK-NEXT:      coop.async_copy %Bt[%[[AHEAD]]], %c128 -> %Bt_stages[%[[D2]]], %[[C16]], rows 16, cols 16
// CHECK-NEXT:    }
// CHECK-NEXT:    coop.async_commit_group
// CHECK-NEXT:    %a = coop.load %A_stages[%[[SO]]], %[[C16]], RowMajor : memref<768xf16, #coop.storage_class<Workgroup>> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK-NEXT:    %b = coop.load %Bt_stages[%[[SO]]], %[[C16]], ColumnMajor : memref<768xf16, #coop.storage_class<Workgroup>> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
// CHECK-NEXT:    %o = arith.addi %k, %sg : index
// CHECK-NEXT:    %x = coop.load %A[%o], %c128, RowMajor : memref<16x128xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK-NEXT:    %e = coop.mul_add %a, %b, %d
// CHECK-NEXT:    %f = coop.mul_add %x, %b, %e
// CHECK-NEXT:    scf.yield %f : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT:  } {coop.pipeline_stages = 3 : i64}
// CHECK-NEXT:  coop.async_wait_group 0
// CHECK-NEXT:  coop.store %acc, %C[%c0], %c16, RowMajor

// S4:      coop.alloc_workgroup : memref<1024xf16, #coop.storage_class<Workgroup>>
// S4-COUNT-3: coop.async_commit_group
// S4:      coop.async_wait_group 2
// S4:      {coop.pipeline_stages = 4 : i64}

// ROUND: coop.async_wait_group 1
// ROUND: {coop.pipeline_stages = 3 : i64}

// OPT: <command line>: error: pipeline-coop-loads: stages must be >= 2, got 1

// A static trip count of 1 with 3 stages: iteration 0 is copied unguarded, iteration 1 does not
// exist (its group is committed empty); a loop with a store to its source is not staged.
func.func @short(%A: memref<16x128xf16>, %C: memref<16x16xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %z = arith.constant 0.0 : f32
  %init = coop.composite_construct %z : f32 -> !c
  %acc = scf.for %k = %c0 to %c16 step %c16 iter_args(%d = %init) -> (!c) {
    %a = coop.load %A[%k], %c128, RowMajor : memref<16x128xf16> -> !a
    %b = coop.load %A[%k], %c128, ColumnMajor : memref<16x128xf16> -> !b
    %e = coop.mul_add %a, %b, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }
  scf.for %k = %c0 to %c128 step %c16 {
    %a = coop.load %A[%k], %c128, RowMajor : memref<16x128xf16> -> !a
    coop.store %a, %A[%c0], %c128, RowMajor : !a, memref<16x128xf16>
  }
  coop.store %acc, %C[%c0], %c16, RowMajor : !c, memref<16x16xf32>
  func.return
}
// CHECK-LABEL: func.func @short
// CHECK:       %init = coop.composite_construct
// CHECK-NEXT:  coop.async_copy %A[%{{.*}}], %c128 -> %A_stages[%{{.*}}], %{{.*}}, rows 16, cols 16
// CHECK-NEXT:  coop.async_copy %A[%{{.*}}], %c128 -> %A_stages_{{.*}}[%{{.*}}], %{{.*}}, rows 16, cols 16
// CHECK-NEXT:  coop.async_commit_group
// CHECK-NEXT:  coop.async_commit_group
// CHECK-NEXT:  %acc = scf.for
// CHECK:       } {coop.pipeline_stages = 3 : i64}
// CHECK-NEXT:  coop.async_wait_group 0
// CHECK-NEXT:  scf.for %k_{{.*}} = %c0 to %c128 step %c16 {
// CHECK-NEXT:    %a_{{.*}} = coop.load %A[%k_{{.*}}], %c128, RowMajor
// CHECK-NEXT:    coop.store
// CHECK-NEXT:  }
