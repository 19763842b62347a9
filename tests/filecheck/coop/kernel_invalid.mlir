// RUN: coop-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not coop-opt %s 2>&1 | filecheck %s --check-prefix=ONELINE
// The declared grid (`coop.grid`), checked by the kernel-attribute verifier: an affine map of no
// dimensions, one symbol per integer scalar argument (i32, i64, index, in argument order) and
// three results (x, y, z), on a func.func; one located line otherwise.
// ONELINE: kernel_invalid.mlir:9:1: error: 'func.func' op 'coop.grid' has 2 symbols, but the kernel has 3 integer scalar arguments (i32, i64, index): one symbol each, in argument order
// ONELINE-NOT: Traceback

func.func @symbols(%A: memref<?xf16>, %M: i32, %s: f32, %N: index, %K: i64)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>,
                coop.grid = affine_map<()[s0, s1] -> (s0, s1, 1)>} {
  func.return
}
// CHECK: 'func.func' op 'coop.grid' has 2 symbols, but the kernel has 3 integer scalar arguments (i32, i64, index): one symbol each, in argument order

// -----
func.func @results(%M: i32) attributes {coop.grid = affine_map<()[s0] -> (s0, 1)>} {
  func.return
}
// CHECK: 'func.func' op 'coop.grid' must have three results (x, y, z), got 2

// -----
func.func @dims(%M: i32) attributes {coop.grid = affine_map<(d0)[s0] -> (s0, d0, 1)>} {
  func.return
}
// CHECK: 'func.func' op 'coop.grid' has 1 dimensions; the grid is a function of symbols only: affine_map<()[s0, ...] -> (x, y, z)>

// -----
func.func @not_a_map(%M: i32) attributes {coop.grid = array<i32: 1, 1, 1>} {
  func.return
}
// CHECK: 'func.func' op 'coop.grid' must be affine_map<()[s0, ...] -> (x, y, z)>, got array<i32: 1, 1, 1>

// -----
"test.op"() {coop.grid = affine_map<()[] -> (1, 1, 1)>} : () -> ()
// CHECK: 'test.op' op 'coop.grid' belongs on a func.func kernel
