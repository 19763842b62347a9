// RUN: coop-opt %s --split-input-file --verify-diagnostics -p convert-coop-to-spirv | filecheck %s
// RUN: not coop-opt %s -p convert-coop-to-spirv -o %t.spv 2>&1 | filecheck %s --check-prefix=ONELINE
// RUN: not test -e %t.spv
// What convert-coop-to-spirv refuses, each with a one-line located error and no output file.

// ONELINE: convert_coop_to_spirv_invalid.mlir:8:1: error: 'func.func' op a kernel needs `coop.workgroup_size = array<i32: x, y, z>`
// ONELINE-NOT: Traceback
func.func @no_size(%A: memref<16xf32>) {
  func.return
}
// CHECK: convert_coop_to_spirv_invalid.mlir:8:1: error: 'func.func' op a kernel needs `coop.workgroup_size = array<i32: x, y, z>`

// -----
func.func @nv_in_khr(%A: memref<256xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %m = coop.load %A[%c0], %c16, RowMajor : memref<256xf16> -> !coop.matrix<16x16xf16, Subgroup>
  func.return
}
// CHECK: error: 'coop.load' op !coop.matrix<16x16xf16, Subgroup> has no Use: NV matrices need convert-coop-to-spirv{flavor=nv}

// -----
func.func @scalar_arg(%A: memref<256xf16>, %n: i1) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  func.return
}
// CHECK: error: 'func.func' op kernel argument 1 must be a memref or a scalar of i32, i64, index, f32, f16, got i1

// -----
func.func @signed_scalar(%A: memref<256xf16>, %n: si32) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  func.return
}
// CHECK: error: 'func.func' op kernel argument 1 must be a memref or a scalar of i32, i64, index, f32, f16, got si32

// -----
func.func @big_push_constants(%A: memref<?xf16>, %a0: i64, %a1: i64, %a2: i64, %a3: i64, %a4: i64, %a5: i64, %a6: i64, %a7: i64, %a8: i64, %a9: i64, %a10: i64, %a11: i64, %a12: i64, %a13: i64, %a14: i64, %a15: i64, %a16: i32) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  func.return
}
// CHECK: error: 'func.func' op the scalar arguments need 132 bytes of push constants; Vulkan guarantees 128 (maxPushConstantsSize)

// -----
func.func @workgroup_arg(%A: memref<256xf16, #coop<storage_class Workgroup>>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  func.return
}
// CHECK: error: 'func.func' op kernel argument 0 must be a storage buffer (a memref without memory space)

// -----
func.func @returns(%A: memref<256xf32>) -> f32 attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %x = arith.constant 1.0 : f32
  func.return %x : f32
}
// CHECK: error: 'func.return' op kernels return nothing; write results to a memref

// -----
func.func @big_index(%A: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %x = arith.constant 4294967296 : index
  func.return
}
// CHECK: error: 'arith.constant' op index constant 4294967296 does not fit the 32-bit SPIR-V index

// -----
func.func @unsupported(%A: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %x = memref.load %A[%c0] : memref<256xf32>
  func.return
}
// CHECK: error: 'memref.load' op has no lowering to SPIR-V

// -----
func.func @pointer_visible(%A: memref<256xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %m = coop.load %A[%c0], %c16, RowMajor, <MakePointerVisible Device|NonPrivatePointer> : memref<256xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: error: 'coop.load' op the SPIR-V writer does not encode the Scope <id> of MakePointerVisible yet

// -----
func.func @matrix_buffer(%A: memref<4x!coop.matrix<16x16xf16, Subgroup, MatrixA>>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  func.return
}
// CHECK: error: 'func.func' op kernel argument 0 must be a memref of scalars, got element type !coop.matrix<16x16xf16, Subgroup, MatrixA>

// -----
func.func @bool_add(%A: memref<256xi32>, %n: i32) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %z = arith.constant 0 : i32
  %a = arith.cmpi slt, %n, %z : i32
  %b = arith.addi %a, %a : i1
  func.return
}
// CHECK: error: 'arith.addi' op arith.addi of i1 has no SPIR-V lowering (andi, ori, xori do)
