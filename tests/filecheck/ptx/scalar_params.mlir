// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx-launch | filecheck %s --check-prefix=LAUNCH
// Scalar kernel arguments are .params of their type, in argument order among the pointers
// (i32 .u32, i64 and index .u64, f32 .f32, f16 .b16), each read once at entry; the launch
// description lists them as scalar arguments and params, and the declared grid as host
// expressions over the integer scalars (here %n, %x, %m).
!m = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
func.func @scale(%A: memref<?xf16>, %s: f16, %n: i64, %x: index, %f: f32, %m: i32)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>,
                coop.grid = affine_map<()[s0, s1, s2] -> (s0 ceildiv 4, s1 - s2, 1)>} {
  %c16 = arith.constant 16 : index
  %ni = arith.index_cast %n : i64 to index
  %mi = arith.index_cast %m : i32 to index
  %o = arith.addi %ni, %x : index
  %o2 = arith.addi %o, %mi : index
  %a = coop.load %A[%o2], %c16, RowMajor : memref<?xf16> -> !m
  %b = coop.matrix_times_scalar %a, %s : !m, f16 -> !m
  coop.store %b, %A[%o2], %c16, RowMajor : !m, memref<?xf16>
  func.return
}
// CHECK:      .visible .entry scale(
// CHECK-NEXT:   .param .u64 scale_param_A,
// CHECK-NEXT:   .param .b16 scale_param_s,
// CHECK-NEXT:   .param .u64 scale_param_n,
// CHECK-NEXT:   .param .u64 scale_param_x,
// CHECK-NEXT:   .param .f32 scale_param_f,
// CHECK-NEXT:   .param .u32 scale_param_m
// CHECK-NEXT: )
// CHECK:      ld.param.u64 %rd[[A:[0-9]+]], [scale_param_A];
// CHECK-NEXT: cvta.to.global.u64 %rd{{[0-9]+}}, %rd[[A]];
// CHECK-NEXT: ld.param.b16 %h{{[0-9]+}}, [scale_param_s];
// CHECK-NEXT: ld.param.u64 %rd{{[0-9]+}}, [scale_param_n];
// CHECK-NEXT: ld.param.u64 %rd{{[0-9]+}}, [scale_param_x];
// CHECK-NEXT: ld.param.f32 %f{{[0-9]+}}, [scale_param_f];
// CHECK-NEXT: ld.param.u32 %r{{[0-9]+}}, [scale_param_m];

// LAUNCH:      "grid": "dispatch",
// LAUNCH-NEXT: "grid_dims": [
// LAUNCH-NEXT:  {
// LAUNCH-NEXT:   "op": "ceildiv",
// LAUNCH-NEXT:   "args": [
// LAUNCH-NEXT:    {
// LAUNCH-NEXT:     "arg": 2
// LAUNCH-NEXT:    },
// LAUNCH-NEXT:    4
// LAUNCH-NEXT:   ]
// LAUNCH-NEXT:  },
// LAUNCH-NEXT:  {
// LAUNCH-NEXT:   "op": "sub",
// LAUNCH-NEXT:   "args": [
// LAUNCH-NEXT:    {
// LAUNCH-NEXT:     "arg": 3
// LAUNCH-NEXT:    },
// LAUNCH-NEXT:    {
// LAUNCH-NEXT:     "arg": 5
// LAUNCH-NEXT:    }
// LAUNCH-NEXT:   ]
// LAUNCH-NEXT:  },
// LAUNCH-NEXT:  1
// LAUNCH-NEXT: ],
// LAUNCH:      "name": "A",
// LAUNCH-NEXT: "dtype": "f16",
// LAUNCH-NEXT: "shape": [
// LAUNCH-NEXT:  null
// LAUNCH-NEXT: ]
// LAUNCH:      "name": "s",
// LAUNCH-NEXT: "dtype": "f16",
// LAUNCH-NEXT: "scalar": true
// LAUNCH:      "name": "x",
// LAUNCH-NEXT: "dtype": "index",
// LAUNCH-NEXT: "scalar": true
// LAUNCH:      "params": [
// LAUNCH-NEXT:  {
// LAUNCH-NEXT:   "kind": "pointer",
// LAUNCH-NEXT:   "arg": 0
// LAUNCH-NEXT:  },
// LAUNCH-NEXT:  {
// LAUNCH-NEXT:   "kind": "scalar",
// LAUNCH-NEXT:   "arg": 1,
// LAUNCH-NEXT:   "dtype": "f16"
// LAUNCH-NEXT:  },
