// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx-launch | filecheck %s
// The launch description (docs/runtime.md): block = coop.workgroup_size, one pointer param per
// memref argument in order, the arguments' element types and shapes.
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
func.func @copy_tile(%In: memref<16x32xf16>, %Out: memref<512xf16>)
    attributes {coop.workgroup_size = array<i32: 64, 2, 1>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c16 = arith.constant 16 : index
  %m = coop.load %In[%c0], %c32, RowMajor : memref<16x32xf16> -> !a
  coop.store %m, %Out[%c0], %c16, RowMajor : !a, memref<512xf16>
  func.return
}
// CHECK:      "format": "coopdialect-ptx-launch",
// CHECK-NEXT: "version": 1,
// CHECK:      "name": "copy_tile",
// CHECK-NEXT: "block": [
// CHECK-NEXT:   64,
// CHECK-NEXT:   2,
// CHECK-NEXT:   1
// CHECK:      "grid": "dispatch",
// CHECK-NEXT: "dynamic_shared_bytes": 0,
// CHECK:      "name": "In",
// CHECK-NEXT: "dtype": "f16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT:   16,
// CHECK-NEXT:   32
// CHECK:      "name": "Out",
// CHECK-NEXT: "dtype": "f16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT:   512
// CHECK:      "params": [
// CHECK-NEXT:   {
// CHECK-NEXT:     "kind": "pointer",
// CHECK-NEXT:     "arg": 0
// CHECK:          "kind": "pointer",
// CHECK-NEXT:     "arg": 1
