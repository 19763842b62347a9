// RUN: coop-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: not coop-opt %s 2>&1 | filecheck %s --check-prefix=ONELINE
// Every verifier rule of the staged-form ops (coopdialect/dialects/coop_async.py).
// ONELINE: async_invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}
// ONELINE-NOT: Traceback

// alloc_workgroup: Workgroup storage
func.func @f() {
  %w = coop.alloc_workgroup : memref<64xf16>
  func.return
}
// CHECK: async_invalid.mlir:9:3: error: 'coop.alloc_workgroup' op the result must be a memref in #coop.storage_class<Workgroup> memory, got memref<64xf16>
// -----
// alloc_workgroup: static size
func.func @f() {
  %w = coop.alloc_workgroup : memref<?xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.alloc_workgroup' op workgroup memory has a static size
// -----
// alloc_workgroup: numerical elements
func.func @f() {
  %w = coop.alloc_workgroup : memref<64xi1, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.alloc_workgroup' op the buffer must have a scalar numerical element type, got i1
// -----
// async_copy: rows > 0
func.func @f(%A: memref<64xf16>, %o: index) {
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%o], %o -> %w[%o], %o, rows 0, cols 8 : memref<64xf16> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op rows and cols must be > 0, got rows 0, cols 8
// -----
// async_copy: cols > 0
func.func @f(%A: memref<64xf16>, %o: index) {
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%o], %o -> %w[%o], %o, rows 8, cols -1 : memref<64xf16> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op rows and cols must be > 0, got rows 8, cols -1
// -----
// async_copy: destination in Workgroup storage
func.func @f(%A: memref<64xf16>, %B: memref<64xf16>, %o: index) {
  coop.async_copy %A[%o], %o -> %B[%o], %o, rows 8, cols 8 : memref<64xf16> -> memref<64xf16>
  func.return
}
// CHECK: 'coop.async_copy' op the destination must be a memref in #coop.storage_class<Workgroup> memory, got memref<64xf16>
// -----
// async_copy: source not in Workgroup storage
func.func @f(%o: index) {
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  %v = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %v[%o], %o -> %w[%o], %o, rows 8, cols 8 : memref<64xf16, #coop.storage_class<Workgroup>> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op the source must be global memory (a kernel argument, StorageBuffer), got memref<64xf16, #coop.storage_class<Workgroup>>
// -----
// async_copy: source is a kernel argument
func.func @f(%o: index) {
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  %p = memref.alloc() : memref<64xf16>
  coop.async_copy %p[%o], %o -> %w[%o], %o, rows 8, cols 8 : memref<64xf16> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op the source must be a kernel argument (an argument of the enclosing func.func)
// -----
// async_copy: element types equal
func.func @f(%A: memref<64xf32>, %o: index) {
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%o], %o -> %w[%o], %o, rows 8, cols 8 : memref<64xf32> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op the source and destination element types must be equal, got f32 and f16
// -----
// async_copy: constant stride >= 0
func.func @f(%A: memref<64xf16>, %o: index) {
  %m = arith.constant -8 : index
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%o], %m -> %w[%o], %o, rows 8, cols 8 : memref<64xf16> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op the source stride must be >= 0, got -8
// -----
// async_copy: constant offset >= 0
func.func @f(%A: memref<64xf16>, %o: index) {
  %m = arith.constant -1 : index
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%o], %o -> %w[%m], %o, rows 8, cols 8 : memref<64xf16> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op the destination offset must be >= 0, got -1
// -----
// async_copy: a constant box inside the memref
func.func @f(%A: memref<64xf16>, %o: index) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%o], %o -> %w[%c1], %c8, rows 8, cols 8 : memref<64xf16> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy' op the 8x8 box reaches element 64 of the destination, which has 64 elements (offset 1, stride 8)
// -----
// async_copy: operand kinds
func.func @f(%A: memref<64xf16>, %o: i32) {
  %w = coop.alloc_workgroup : memref<64xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%o], %o -> %w[%o], %o, rows 8, cols 8 : memref<64xf16> -> memref<64xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: operand is used with type index, but has been previously used or defined with type i32
// -----
// async_wait_group: N >= 0
func.func @f() {
  coop.async_wait_group -1
  func.return
}
// CHECK: 'coop.async_wait_group' op the number of pending groups must be >= 0, got -1
// -----
// async_copy_tensor: the layout operand is a tensor layout
func.func @f(%A: memref<?x?xf16>, %l: index) {
  %w = coop.alloc_workgroup : memref<256xf16, #coop.storage_class<Workgroup>>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  coop.async_copy_tensor %A, %l -> %w[%c0], %c16, rows 16, cols 16 : memref<?x?xf16>, index -> memref<256xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy_tensor' op the layout must be a !tensor_addr.layout, got index
// -----
// async_copy_tensor: the box inside the destination
func.func @f(%A: memref<?x?xf16>) {
  %w = coop.alloc_workgroup : memref<256xf16, #coop.storage_class<Workgroup>>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %l = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
  coop.async_copy_tensor %A, %l -> %w[%c16], %c16, rows 16, cols 16 : memref<?x?xf16>, !tensor_addr.layout<2, Constant> -> memref<256xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy_tensor' op the 16x16 box reaches element 271 of the destination, which has 256 elements (offset 16, stride 16)
// -----
// async_copy_tensor: the source is a kernel argument
func.func @f(%l: !tensor_addr.layout<2, Constant>) {
  %w = coop.alloc_workgroup : memref<256xf16, #coop.storage_class<Workgroup>>
  %v = coop.alloc_workgroup : memref<256xf16, #coop.storage_class<Workgroup>>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  coop.async_copy_tensor %v, %l -> %w[%c0], %c16, rows 16, cols 16 : memref<256xf16, #coop.storage_class<Workgroup>>, !tensor_addr.layout<2, Constant> -> memref<256xf16, #coop.storage_class<Workgroup>>
  func.return
}
// CHECK: 'coop.async_copy_tensor' op the source must be global memory (a kernel argument, StorageBuffer), got memref<256xf16, #coop.storage_class<Workgroup>>
