#version 450
// Two subgroups exchange their accumulators through shared memory: subgroup s computes
// A_s * B (A_s: rows 16s .. 16s+15 of a 32x16 A, B 16x16), stores it to its half of a shared
// tile, and after the workgroup barrier writes the other subgroup's product, read column-major
// (transposed), to rows 16s .. 16s+15 of C: C_s = (A_{1-s} B)^T.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_KHR_shader_subgroup_basic : enable
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
shared float tile[2 * 16 * 16];
void main() {
    uint s = gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, s * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    acc = coopMatMulAdd(ma, mb, acc);
    coopMatStore(acc, tile, s * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> other;
    coopMatLoad(other, tile, (1 - s) * 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatStore(other, c, s * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
