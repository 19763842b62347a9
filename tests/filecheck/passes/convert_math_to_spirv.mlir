// The math dialect as GLSL.std.450 extended instructions (one OpExtInstImport, the instruction
// numbers of the Khronos grammar), erf as its f32 sequence; checked on spirv-dis's disassembly.
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
// RUN: coop-opt %s -p convert-coop-to-spirv -t mlir | filecheck %s --check-prefix=IR
!f = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
!h = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
func.func @f32ops(%r: i32, %c: i32, %x: f32) -> f32 {
  %e = math.exp %x : f32
  %e2 = math.exp2 %e : f32
  %l = math.log %e2 : f32
  %l2 = math.log2 %l : f32
  %s = math.sqrt %l2 : f32
  %q = math.rsqrt %s : f32
  %t = math.tanh %q : f32
  %a = math.absf %t : f32
  %m = math.fma %a, %x, %t : f32
  %fl = math.floor %m : f32
  %ce = math.ceil %fl : f32
  %tr = math.trunc %ce : f32
  %re = math.roundeven %tr : f32
  %mx = arith.maxnumf %re, %x : f32
  %mn = arith.minnumf %mx, %x : f32
  func.return %mn : f32
}
func.func @erf(%r: i32, %c: i32, %x: f32) -> f32 {
  %y = math.erf %x : f32
  func.return %y : f32
}
func.func @erf16(%r: i32, %c: i32, %x: f16) -> f16 {
  %y = math.erf %x : f16
  %z = math.exp %y : f16
  func.return %z : f16
}
func.func @k(%F: memref<256xf32>, %H: memref<256xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %f = coop.load %F[%c0], %c16, RowMajor : memref<256xf32> -> !f
  %f2 = coop.per_element_op @f32ops(%f) : !f -> !f
  %f3 = coop.per_element_op @erf(%f2) : !f -> !f
  coop.store %f3, %F[%c0], %c16, RowMajor : !f, memref<256xf32>
  %h = coop.load %H[%c0], %c16, RowMajor : memref<256xf16> -> !h
  %h2 = coop.per_element_op @erf16(%h) : !h -> !h
  coop.store %h2, %H[%c0], %c16, RowMajor : !h, memref<256xf16>
  func.return
}
// IR:          spirv.ExtInst %{{.*}} {set = "GLSL.std.450", instruction = #builtin.int<27>} : (f32) -> f32
// CHECK:       [[GLSL:%[0-9]+]] = OpExtInstImport "GLSL.std.450"
// CHECK-NOT:   OpExtInstImport
// CHECK:       %f32ops = OpFunction
// CHECK:       [[X:%[0-9]+]] = OpFunctionParameter %float
// CHECK:       [[E:%[0-9]+]] = OpExtInst %float [[GLSL]] Exp [[X]]
// CHECK-NEXT:  [[E2:%[0-9]+]] = OpExtInst %float [[GLSL]] Exp2 [[E]]
// CHECK-NEXT:  [[L:%[0-9]+]] = OpExtInst %float [[GLSL]] Log [[E2]]
// CHECK-NEXT:  [[L2:%[0-9]+]] = OpExtInst %float [[GLSL]] Log2 [[L]]
// CHECK-NEXT:  [[S:%[0-9]+]] = OpExtInst %float [[GLSL]] Sqrt [[L2]]
// CHECK-NEXT:  [[Q:%[0-9]+]] = OpExtInst %float [[GLSL]] InverseSqrt [[S]]
// CHECK-NEXT:  [[T:%[0-9]+]] = OpExtInst %float [[GLSL]] Tanh [[Q]]
// CHECK-NEXT:  [[A:%[0-9]+]] = OpExtInst %float [[GLSL]] FAbs [[T]]
// CHECK-NEXT:  [[M:%[0-9]+]] = OpExtInst %float [[GLSL]] Fma [[A]] [[X]] [[T]]
// CHECK-NEXT:  [[FL:%[0-9]+]] = OpExtInst %float [[GLSL]] Floor [[M]]
// CHECK-NEXT:  [[CE:%[0-9]+]] = OpExtInst %float [[GLSL]] Ceil [[FL]]
// CHECK-NEXT:  [[TR:%[0-9]+]] = OpExtInst %float [[GLSL]] Trunc [[CE]]
// CHECK-NEXT:  [[RE:%[0-9]+]] = OpExtInst %float [[GLSL]] RoundEven [[TR]]
// CHECK-NEXT:  [[MX:%[0-9]+]] = OpExtInst %float [[GLSL]] NMax [[RE]] [[X]]
// CHECK-NEXT:  [[MN:%[0-9]+]] = OpExtInst %float [[GLSL]] NMin [[MX]] [[X]]
// CHECK-NEXT:  OpReturnValue [[MN]]
// erf: both pieces, then a select on |x| < 1
// CHECK:       %erf = OpFunction
// CHECK:       [[EX:%[0-9]+]] = OpFunctionParameter %float
// CHECK:       [[AX:%[0-9]+]] = OpExtInst %float [[GLSL]] FAbs [[EX]]
// CHECK:       [[Z:%[0-9]+]] = OpFMul %float [[EX]] [[EX]]
// CHECK:       [[SMALL:%[0-9]+]] = OpFMul %float [[EX]] {{%[0-9]+}}
// CHECK:       OpFDiv %float %float_1
// CHECK:       [[NZ:%[0-9]+]] = OpFNegate %float [[Z]]
// CHECK:       OpExtInst %float [[GLSL]] Exp [[NZ]]
// CHECK:       [[IN:%[0-9]+]] = OpFOrdLessThan %bool [[AX]] %float_1
// CHECK-NEXT:  [[R:%[0-9]+]] = OpSelect %float [[IN]] [[SMALL]] {{%[0-9]+}}
// CHECK-NEXT:  OpReturnValue [[R]]
// f16 erf: widened, computed in f32, rounded once; exp natively in f16
// CHECK:       %erf16 = OpFunction
// CHECK:       [[HX:%[0-9]+]] = OpFunctionParameter %half
// CHECK:       OpFConvert %float [[HX]]
// CHECK:       [[HR:%[0-9]+]] = OpFConvert %half
// CHECK-NEXT:  OpExtInst %half [[GLSL]] Exp [[HR]]
