// RUN: coop-opt %s | coop-opt | filecheck %s
// RUN: coop-opt %s --print-op-generic | coop-opt | filecheck %s

!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
!h = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
!ia = !coop.matrix<16x32xi8, Subgroup, MatrixA>
!ib = !coop.matrix<32x16xi8, Subgroup, MatrixB>
!ic = !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
!uc = !coop.matrix<16x16xui32, Subgroup, MatrixAcc>
!n = !coop.matrix<16x8xf16, Subgroup>

// CHECK-LABEL: func.func @memory
func.func @memory(%A: memref<4096xf16>, %C: memref<64x64xf32>, %W: memref<256xf16, #coop<storage_class Workgroup>>, %o: index, %s: index) {
  // CHECK: coop.load %A[%o], %s, RowMajor : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  %a = coop.load %A[%o], %s, RowMajor : memref<4096xf16> -> !a
  // CHECK: coop.load %A[%o], %s, ColumnMajor, <Volatile|Aligned 16|Nontemporal> : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
  %b = coop.load %A[%o], %s, ColumnMajor, <Nontemporal|Aligned 16|Volatile> : memref<4096xf16> -> !b
  // CHECK: coop.load %A[%o], %s, RowMajor, <MakePointerVisible Device|NonPrivatePointer>
  %v = coop.load %A[%o], %s, RowMajor, <MakePointerVisible Device|NonPrivatePointer> : memref<4096xf16> -> !a
  // CHECK: coop.load %W[%o], %s, RowMajor : memref<256xf16, #coop.storage_class<Workgroup>> -> !coop.matrix<16x8xf16, Subgroup>
  %n = coop.load %W[%o], %s, RowMajor : memref<256xf16, #coop.storage_class<Workgroup>> -> !n
  %c = coop.load %C[%o], %s, RowMajor : memref<64x64xf32> -> !c
  // CHECK: coop.store %{{.*}}, %C[%o], %s, ColumnMajor, <MakePointerAvailable Workgroup|NonPrivatePointer> : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, memref<64x64xf32>
  coop.store %c, %C[%o], %s, ColumnMajor, <MakePointerAvailable Workgroup|NonPrivatePointer> : !c, memref<64x64xf32>
  // CHECK: coop.store %n, %W[%o], %s, RowMajor : !coop.matrix<16x8xf16, Subgroup>, memref<256xf16, #coop.storage_class<Workgroup>>
  coop.store %n, %W[%o], %s, RowMajor : !n, memref<256xf16, #coop.storage_class<Workgroup>>
  func.return
}

// CHECK-LABEL: func.func @arith
func.func @arith(%a: !a, %b: !b, %c: !c, %ia: !ia, %ib: !ib, %ic: !ic, %x: f32, %n: !n) {
  // CHECK: coop.mul_add %a, %b, %c : !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
  // CHECK: coop.mul_add %ia, %ib, %ic <ASigned|BSigned|CSigned|ResultSigned|SaturatingAccumulation> :
  %id = coop.mul_add %ia, %ib, %ic <SaturatingAccumulation|ASigned|BSigned|CSigned|ResultSigned> : !ia, !ib, !ic -> !ic
  // CHECK: coop.mul_add %ia, %ib, %ic : {{.*}} -> !coop.matrix<16x16xui32, Subgroup, MatrixAcc>
  %iu = coop.mul_add %ia, %ib, %ic : !ia, !ib, !ic -> !uc
  // CHECK: %{{.*}} = coop.length : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %len = coop.length : !c
  // CHECK: coop.composite_construct %x : f32 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %f = coop.composite_construct %x : f32 -> !c
  // CHECK: coop.extract %d[3] : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %e = coop.extract %d[3] : !c
  // CHECK: coop.insert %e, %f[0] : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %g = coop.insert %e, %f[0] : !c
  // CHECK: coop.fnegate %g : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %h = coop.fnegate %g : !c
  // CHECK: coop.fadd %h, %d
  %i1 = coop.fadd %h, %d : !c
  // CHECK: coop.fsub
  %i2 = coop.fsub %i1, %d : !c
  // CHECK: coop.fmul
  %i3 = coop.fmul %i2, %d : !c
  // CHECK: coop.fdiv
  %i4 = coop.fdiv %i3, %d : !c
  // CHECK: coop.matrix_times_scalar %i4, %x : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, f32 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %i5 = coop.matrix_times_scalar %i4, %x : !c, f32 -> !c
  // CHECK: coop.snegate %id : !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  %j0 = coop.snegate %id : !ic
  // CHECK: coop.iadd
  %j1 = coop.iadd %j0, %id : !ic
  // CHECK: coop.isub
  %j2 = coop.isub %j1, %id : !ic
  // CHECK: coop.imul
  %j3 = coop.imul %j2, %id : !ic
  // CHECK: coop.sdiv
  %j4 = coop.sdiv %j3, %id : !ic
  // CHECK: coop.udiv
  %j5 = coop.udiv %j4, %id : !ic
  // CHECK: coop.fsub %n, %n : !coop.matrix<16x8xf16, Subgroup>
  %n1 = coop.fsub %n, %n : !n
  func.return
}

// CHECK-LABEL: func.func @conversions
func.func @conversions(%c: !c, %h: !h, %ic: !ic, %uc: !uc) {
  // CHECK: coop.f_convert %c : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  %0 = coop.f_convert %c : !c -> !h
  // CHECK: coop.convert_f_to_s %c : {{.*}} -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  %1 = coop.convert_f_to_s %c : !c -> !ic
  // CHECK: coop.convert_f_to_u %h : {{.*}} -> !coop.matrix<16x16xui32, Subgroup, MatrixAcc>
  %2 = coop.convert_f_to_u %h : !h -> !uc
  // CHECK: coop.convert_s_to_f %ic
  %3 = coop.convert_s_to_f %ic : !ic -> !c
  // CHECK: coop.convert_u_to_f %uc
  %4 = coop.convert_u_to_f %uc : !uc -> !h
  // CHECK: coop.s_convert %ic : {{.*}} -> !coop.matrix<16x16xi8, Subgroup, MatrixAcc>
  %5 = coop.s_convert %ic : !ic -> !coop.matrix<16x16xi8, Subgroup, MatrixAcc>
  // CHECK: coop.u_convert %uc : {{.*}} -> !coop.matrix<16x16xui16, Subgroup, MatrixAcc>
  %6 = coop.u_convert %uc : !uc -> !coop.matrix<16x16xui16, Subgroup, MatrixAcc>
  // CHECK: coop.bitcast %ic : {{.*}} -> !coop.matrix<16x16xui32, Subgroup, MatrixAcc>
  %7 = coop.bitcast %ic : !ic -> !uc
  func.return
}
