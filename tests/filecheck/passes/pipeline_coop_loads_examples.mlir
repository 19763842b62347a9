// The staged form of the Workgroup-tile GEMM examples (docs/staging.md), as the backends see it.
// RUN: coop-opt %S/../../../examples/gemm_f16_wg.mlir -p pipeline-coop-loads | filecheck %s --check-prefix=DENSE
// RUN: coop-opt %S/../../../examples/sparse_gemm_f16_wg.mlir -p 'pipeline-coop-loads{stages=3}' | filecheck %s --check-prefix=SPARSE

// DENSE:      %A_stages = coop.alloc_workgroup : memref<32768xf16, #coop.storage_class<Workgroup>>
// DENSE-NEXT: %Bt_stages = coop.alloc_workgroup : memref<65536xf16, #coop.storage_class<Workgroup>>
// DENSE-COUNT-3: coop.async_copy %A[%{{.*}}], %K -> %A_stages[%{{.*}}], %{{.*}}, rows 128, cols 64 : memref<8192x8192xf16> -> memref<32768xf16, #coop.storage_class<Workgroup>>
// DENSE:      scf.for %k0 = %c0 to %K step %tk
// DENSE-NEXT:   coop.async_wait_group 2
// DENSE:        coop.async_copy %Bt[%{{.*}}], %K -> %Bt_stages[%{{.*}}], %{{.*}}, rows 256, cols 64
// DENSE:        coop.async_commit_group
// DENSE-NEXT:   %a = coop.load %A_stages[%{{.*}}], %{{.*}}, RowMajor : memref<32768xf16, #coop.storage_class<Workgroup>> -> !coop.matrix<128x64xf16, Workgroup, MatrixA>
// DENSE-NEXT:   %b = coop.load %Bt_stages[%{{.*}}], %{{.*}}, ColumnMajor : memref<65536xf16, #coop.storage_class<Workgroup>> -> !coop.matrix<64x256xf16, Workgroup, MatrixB>
// DENSE-NEXT:   %r = coop.mul_add %a, %b, %c
// DENSE-NEXT:   scf.yield %r
// DENSE-NEXT: } {coop.pipeline_stages = 4 : i64}
// DENSE-NEXT: coop.async_wait_group 0
// DENSE-NEXT: %out = coop.f_convert %acc

// values, metadata (ui8) and B are all staged: 3 buffers of 3 slots
// SPARSE:      %A_stages = coop.alloc_workgroup : memref<12288xf16, #coop.storage_class<Workgroup>>
// SPARSE-NEXT: %E_stages = coop.alloc_workgroup : memref<6144xui8, #coop.storage_class<Workgroup>>
// SPARSE-NEXT: %Bt_stages = coop.alloc_workgroup : memref<49152xf16, #coop.storage_class<Workgroup>>
// SPARSE:      coop.async_copy %A[%{{.*}}], %lda -> %A_stages[%{{.*}}], %{{.*}}, rows 128, cols 32 : memref<8192x4096xf16> -> memref<12288xf16, #coop.storage_class<Workgroup>>
// SPARSE:      coop.async_copy %E[%{{.*}}], %lde -> %E_stages[%{{.*}}], %{{.*}}, rows 128, cols 16 : memref<8192x2048xui8> -> memref<6144xui8, #coop.storage_class<Workgroup>>
// SPARSE:      coop.async_copy %Bt[%{{.*}}], %K -> %Bt_stages[%{{.*}}], %{{.*}}, rows 256, cols 64 : memref<8192x8192xf16> -> memref<49152xf16, #coop.storage_class<Workgroup>>
// SPARSE:      scf.for %i = %c0 to %nk step %c1
// SPARSE-NEXT:   coop.async_wait_group 1
// SPARSE:        %ve = coop.load %E_stages[%{{.*}}], %{{.*}}, RowMajor : memref<6144xui8, #coop.storage_class<Workgroup>> -> !coop.matrix<128x16xui8, Workgroup, MatrixA>
// SPARSE:        %r = sparse_mma.mma_sp %va, %ve, %vb, %c
// SPARSE:      } {coop.pipeline_stages = 3 : i64}
// SPARSE-NEXT: coop.async_wait_group 0
