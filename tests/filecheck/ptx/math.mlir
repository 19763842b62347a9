// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// The math dialect in a per-element function, inlined per fragment register: special functions
// of f32 on the MUFU instructions (exp with its exact argument split), f16 through f32 and one
// cvt.rn, the exact ops as single instructions; erf of f16, and of f32 with fastmath<afn>, by the
// fast sequence (one ex2.approx.ftz, no division).
!f = !coop.matrix<16x8xf32, Subgroup, MatrixAcc>
!h = !coop.matrix<16x8xf16, Subgroup, MatrixAcc>
!b = !coop.matrix<16x8xbf16, Subgroup, MatrixAcc>
func.func @f32ops(%r: i32, %c: i32, %x: f32) -> f32 {
  %e = math.exp %x : f32
  %e2 = math.exp2 %e : f32
  %l = math.log %e2 : f32
  %l2 = math.log2 %l : f32
  %s = math.sqrt %l2 : f32
  %q = math.rsqrt %s : f32
  %a = math.absf %q : f32
  %m = math.fma %a, %x, %q : f32
  %fl = math.floor %m : f32
  %mx = arith.maxnumf %fl, %x : f32
  %er = math.erf %mx fastmath<afn> : f32
  func.return %er : f32
}
func.func @f16ops(%r: i32, %c: i32, %x: f16) -> f16 {
  %t = math.tanh %x : f16
  %e = math.exp %t : f16
  %a = math.absf %e : f16
  %m = math.fma %a, %x, %t : f16
  %er = math.erf %m : f16
  func.return %er : f16
}
func.func @bf16ops(%r: i32, %c: i32, %x: bf16) -> bf16 {
  %l = math.log %x : bf16
  %t = math.roundeven %l : bf16
  func.return %t : bf16
}
func.func @k(%F: memref<128xf32>, %H: memref<128xf16>, %B: memref<128xbf16>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %f = coop.load %F[%c0], %c8, RowMajor : memref<128xf32> -> !f
  %f2 = coop.per_element_op @f32ops(%f) : !f -> !f
  coop.store %f2, %F[%c0], %c8, RowMajor : !f, memref<128xf32>
  %h = coop.load %H[%c0], %c8, RowMajor : memref<128xf16> -> !h
  %h2 = coop.per_element_op @f16ops(%h) : !h -> !h
  coop.store %h2, %H[%c0], %c8, RowMajor : !h, memref<128xf16>
  %b = coop.load %B[%c0], %c8, RowMajor : memref<128xbf16> -> !b
  %b2 = coop.per_element_op @bf16ops(%b) : !b -> !b
  coop.store %b2, %B[%c0], %c8, RowMajor : !b, memref<128xbf16>
  func.return
}
// CHECK:      .entry k(
// log2(e) split in two f32 constants, ln 2, and the overflow threshold of 2^hi
// CHECK-DAG:  mov.f32 [[L1:%f[0-9]+]], 0f3FB8AA3B;
// CHECK-DAG:  mov.f32 [[L2:%f[0-9]+]], 0f32A57060;
// CHECK-DAG:  mov.f32 [[LN2:%f[0-9]+]], 0f3F317218;
// CHECK-DAG:  mov.f32 [[T128:%f[0-9]+]], 0f43000000;
// the fast erf's clamp 4, 1 and its split 1/16
// CHECK-DAG:  mov.f32 [[C4:%f[0-9]+]], 0f40800000;
// CHECK-DAG:  mov.f32 [[ONE:%f[0-9]+]], 0f3F800000;
// CHECK-DAG:  mov.f32 [[SPLIT:%f[0-9]+]], 0f3D800000;
// CHECK:      // coop.per_element_op @f32ops
// exp: hi = x*L1, lo = x*L1 - hi + x*L2 exactly, 2^hi (1 + lo ln 2)
// CHECK:      mul.rn.f32 [[HI:%f[0-9]+]], [[X:%f[0-9]+]], [[L1]];
// CHECK-NEXT: neg.f32 [[NHI:%f[0-9]+]], [[HI]];
// CHECK-NEXT: fma.rn.f32 [[LO:%f[0-9]+]], [[X]], [[L1]], [[NHI]];
// CHECK-NEXT: fma.rn.f32 [[LO2:%f[0-9]+]], [[X]], [[L2]], [[LO]];
// CHECK-NEXT: ex2.approx.f32 [[E:%f[0-9]+]], [[HI]];
// CHECK-NEXT: mul.rn.f32 [[C:%f[0-9]+]], [[LO2]], [[LN2]];
// CHECK-NEXT: fma.rn.f32 [[FIX:%f[0-9]+]], [[E]], [[C]], [[E]];
// CHECK-NEXT: abs.f32 [[AHI:%f[0-9]+]], [[HI]];
// CHECK-NEXT: setp.lt.f32 [[P:%p[0-9]+]], [[AHI]], [[T128]];
// CHECK-NEXT: selp.f32 [[EXP:%f[0-9]+]], [[FIX]], [[E]], [[P]];
// CHECK-NEXT: ex2.approx.f32 [[E2:%f[0-9]+]], [[EXP]];
// CHECK-NEXT: lg2.approx.f32 [[LG:%f[0-9]+]], [[E2]];
// CHECK-NEXT: mul.rn.f32 [[LOG:%f[0-9]+]], [[LG]], [[LN2]];
// CHECK-NEXT: lg2.approx.f32 [[LOG2:%f[0-9]+]], [[LOG]];
// CHECK-NEXT: sqrt.rn.f32 [[SQ:%f[0-9]+]], [[LOG2]];
// CHECK-NEXT: rsqrt.approx.f32 [[RS:%f[0-9]+]], [[SQ]];
// CHECK-NEXT: abs.f32 [[AB:%f[0-9]+]], [[RS]];
// CHECK-NEXT: fma.rn.f32 [[FMA:%f[0-9]+]], [[AB]], [[X]], [[RS]];
// CHECK-NEXT: cvt.rmi.f32.f32 [[FL:%f[0-9]+]], [[FMA]];
// CHECK-NEXT: max.f32 [[MX:%f[0-9]+]], [[FL]], [[X]];
// erf with afn: x's sign on 1 - 2^p(min(|x|, 4)), p by Horner (a^5 .. a^1), one ex2.approx.ftz
// CHECK-NEXT: abs.f32 [[EA:%f[0-9]+]], [[MX]];
// CHECK-NEXT: min.NaN.f32 [[EC:%f[0-9]+]], [[EA]], [[C4]];
// CHECK-NEXT: fma.rn.f32 [[H1:%f[0-9]+]], {{%f[0-9]+}}, [[EC]], {{%f[0-9]+}};
// CHECK-NEXT: fma.rn.f32 [[H2:%f[0-9]+]], [[H1]], [[EC]], {{%f[0-9]+}};
// CHECK-NEXT: fma.rn.f32 [[H3:%f[0-9]+]], [[H2]], [[EC]], {{%f[0-9]+}};
// CHECK-NEXT: fma.rn.f32 [[H4:%f[0-9]+]], [[H3]], [[EC]], {{%f[0-9]+}};
// CHECK-NEXT: mul.rn.f32 [[EP:%f[0-9]+]], [[EC]], [[H4]];
// CHECK-NEXT: ex2.approx.ftz.f32 [[EE:%f[0-9]+]], [[EP]];
// CHECK-NEXT: sub.rn.f32 [[E1:%f[0-9]+]], [[ONE]], [[EE]];
// CHECK-NEXT: copysign.f32 {{%f[0-9]+}}, [[MX]], [[E1]];
// CHECK-NOT:  div.rn.f32
// f16: tanh.approx in f32, one cvt.rn; exp through ex2.approx.ftz of the rounded product (an
// f16 operand is never an f32 subnormal); the sign-bit mask for absf; fma natively; erf by the
// fast sequence with its Taylor piece below 1/16 selected
// CHECK:      // coop.per_element_op @f16ops
// CHECK:      cvt.f32.f16 [[W:%f[0-9]+]], [[HX:%h[0-9]+]];
// CHECK-NEXT: tanh.approx.f32 [[TW:%f[0-9]+]], [[W]];
// CHECK-NEXT: cvt.rn.f16.f32 [[T:%h[0-9]+]], [[TW]];
// CHECK-NEXT: cvt.f32.f16 [[TW2:%f[0-9]+]], [[T]];
// CHECK-NEXT: mul.rn.f32 [[Y:%f[0-9]+]], [[TW2]], [[L1]];
// CHECK-NEXT: ex2.approx.ftz.f32 [[EW:%f[0-9]+]], [[Y]];
// CHECK-NEXT: cvt.rn.f16.f32 [[EH:%h[0-9]+]], [[EW]];
// CHECK-NEXT: and.b16 [[AH:%h[0-9]+]], [[EH]], {{%h[0-9]+}};
// CHECK-NEXT: fma.rn.f16 [[M:%h[0-9]+]], [[AH]], [[HX]], [[T]];
// CHECK-NEXT: cvt.f32.f16 [[MW:%f[0-9]+]], [[M]];
// CHECK-NEXT: abs.f32 [[MA:%f[0-9]+]], [[MW]];
// CHECK-NEXT: min.NaN.f32 [[MC:%f[0-9]+]], [[MA]], [[C4]];
// CHECK-COUNT-4: fma.rn.f32
// CHECK-NEXT: mul.rn.f32 [[MP:%f[0-9]+]], [[MC]], {{%f[0-9]+}};
// CHECK-NEXT: ex2.approx.ftz.f32 [[ME:%f[0-9]+]], [[MP]];
// CHECK-NEXT: sub.rn.f32 [[M1:%f[0-9]+]], [[ONE]], [[ME]];
// CHECK-NEXT: copysign.f32 [[BIG:%f[0-9]+]], [[MW]], [[M1]];
// CHECK-NEXT: mul.rn.f32 [[Z:%f[0-9]+]], [[MW]], [[MW]];
// CHECK-NEXT: fma.rn.f32 [[TP:%f[0-9]+]], [[Z]], {{%f[0-9]+}}, {{%f[0-9]+}};
// CHECK-NEXT: mul.rn.f32 [[SMALL:%f[0-9]+]], [[MW]], [[TP]];
// CHECK-NEXT: setp.lt.f32 [[IN:%p[0-9]+]], [[MA]], [[SPLIT]];
// CHECK-NEXT: selp.f32 [[ER:%f[0-9]+]], [[SMALL]], [[BIG]], [[IN]];
// CHECK-NEXT: cvt.rn.f16.f32 {{%h[0-9]+}}, [[ER]];
// bf16: log in f32; roundeven through f32 (exact)
// CHECK:      // coop.per_element_op @bf16ops
// CHECK:      cvt.f32.bf16 [[BW:%f[0-9]+]], {{%h[0-9]+}};
// CHECK-NEXT: lg2.approx.f32 [[BL:%f[0-9]+]], [[BW]];
// CHECK-NEXT: mul.rn.f32 [[BLN:%f[0-9]+]], [[BL]], [[LN2]];
// CHECK-NEXT: cvt.rn.bf16.f32 [[BH:%h[0-9]+]], [[BLN]];
// CHECK-NEXT: cvt.f32.bf16 [[BW2:%f[0-9]+]], [[BH]];
// CHECK-NEXT: cvt.rni.f32.f32 [[BR:%f[0-9]+]], [[BW2]];
// CHECK-NEXT: cvt.rn.bf16.f32 {{%h[0-9]+}}, [[BR]];
