// RUN: coop-opt %s | coop-opt | filecheck %s
// RUN: coop-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: coop-opt %s --print-op-generic | coop-opt | filecheck %s
// The staged form: workgroup buffers, asynchronous box copies, commit and wait (docs/staging.md).

!wa = memref<24576xf16, #coop.storage_class<Workgroup>>
func.func @staged(%A: memref<8192x8192xf16>, %aoff: index, %doff: index)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %lda = arith.constant 8192 : index
  %c64 = arith.constant 64 : index
  %wa = coop.alloc_workgroup : !wa
  coop.async_copy %A[%aoff], %lda -> %wa[%doff], %c64, rows 128, cols 64 : memref<8192x8192xf16> -> !wa
  coop.async_commit_group
  coop.async_wait_group 2
  coop.async_wait_group 0 {note}
  %w2 = coop.alloc_workgroup : memref<4x8xi8, #coop<storage_class Workgroup>>
  func.return
}
// CHECK-LABEL: func.func @staged
// CHECK:      %wa = coop.alloc_workgroup : memref<24576xf16, #coop.storage_class<Workgroup>>
// CHECK-NEXT: coop.async_copy %A[%aoff], %lda -> %wa[%doff], %c64, rows 128, cols 64 : memref<8192x8192xf16> -> memref<24576xf16, #coop.storage_class<Workgroup>>
// CHECK-NEXT: coop.async_commit_group
// CHECK-NEXT: coop.async_wait_group 2
// CHECK-NEXT: coop.async_wait_group 0 {note}
// CHECK-NEXT: %w2 = coop.alloc_workgroup : memref<4x8xi8, #coop.storage_class<Workgroup>>
// GENERIC: "coop.alloc_workgroup"() : () -> memref<24576xf16, #coop.storage_class<Workgroup>>
// GENERIC: "coop.async_copy"(%A, %aoff, %lda, %wa, %doff, %c64) <{rows = #builtin.int<128>, cols = #builtin.int<64>}>
// GENERIC: "coop.async_commit_group"() : () -> ()
// GENERIC: "coop.async_wait_group"() <{pending = #builtin.int<2>}> : () -> ()
