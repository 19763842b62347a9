// Integer min/max as GLSL.std.450 SMin/SMax/UMin/UMax, and andi/ori/xori of i1 as the logical
// instructions (OpTypeBool takes no bitwise ones); checked on spirv-dis's disassembly.
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
!f = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @mask(%r: i32, %c: i32, %x: f32, %n: i32) -> f32 {
  %lo = arith.minsi %r, %c : i32
  %hi = arith.maxsi %r, %c : i32
  %ulo = arith.minui %lo, %n : i32
  %uhi = arith.maxui %hi, %n : i32
  %a = arith.cmpi slt, %ulo, %uhi : i32
  %b = arith.cmpi sgt, %c, %n : i32
  %and = arith.andi %a, %b : i1
  %or = arith.ori %and, %b : i1
  %xor = arith.xori %or, %a : i1
  %z = arith.constant 0.0 : f32
  %y = arith.select %xor, %z, %x : f32
  func.return %y : f32
}
func.func @k(%F: memref<256xf32>, %n: i32) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %f = coop.load %F[%c0], %c16, RowMajor : memref<256xf32> -> !f
  %g = coop.per_element_op @mask(%f, %n) : !f, i32 -> !f
  coop.store %g, %F[%c0], %c16, RowMajor : !f, memref<256xf32>
  func.return
}
// CHECK:       [[GLSL:%[0-9]+]] = OpExtInstImport "GLSL.std.450"
// CHECK:       %mask = OpFunction
// CHECK:       [[R:%[0-9]+]] = OpFunctionParameter %uint
// CHECK-NEXT:  [[C:%[0-9]+]] = OpFunctionParameter %uint
// CHECK-NEXT:  [[X:%[0-9]+]] = OpFunctionParameter %float
// CHECK-NEXT:  [[N:%[0-9]+]] = OpFunctionParameter %uint
// CHECK:       [[LO:%[0-9]+]] = OpExtInst %uint [[GLSL]] SMin [[R]] [[C]]
// CHECK-NEXT:  [[HI:%[0-9]+]] = OpExtInst %uint [[GLSL]] SMax [[R]] [[C]]
// CHECK-NEXT:  [[ULO:%[0-9]+]] = OpExtInst %uint [[GLSL]] UMin [[LO]] [[N]]
// CHECK-NEXT:  [[UHI:%[0-9]+]] = OpExtInst %uint [[GLSL]] UMax [[HI]] [[N]]
// CHECK-NEXT:  [[A:%[0-9]+]] = OpSLessThan %bool [[ULO]] [[UHI]]
// CHECK-NEXT:  [[B:%[0-9]+]] = OpSGreaterThan %bool [[C]] [[N]]
// CHECK-NEXT:  [[AND:%[0-9]+]] = OpLogicalAnd %bool [[A]] [[B]]
// CHECK-NEXT:  [[OR:%[0-9]+]] = OpLogicalOr %bool [[AND]] [[B]]
// CHECK-NEXT:  [[XOR:%[0-9]+]] = OpLogicalNotEqual %bool [[OR]] [[A]]
// CHECK-NEXT:  OpSelect %float [[XOR]] %float_0 [[X]]
