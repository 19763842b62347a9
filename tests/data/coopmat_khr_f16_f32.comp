#version 450
// KHR cooperative-matrix GEMM test for vk_runner.
// D[M,N] = A[M,K] * B[K,N] + C[M,N]; A, B f16 row-major, C, D f32 row-major.
// One subgroup (32 invocations) per workgroup computes one 16x16 tile of D with
// 16x16x16 f16*f16+f32 coopMatMulAdd steps along K.  Grid = (N/16, M/16, 1).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) readonly buffer BufC { float c[]; };
layout(set = 0, binding = 3) writeonly buffer BufD { float d[]; };
layout(push_constant) uniform PC { uint M; uint N; uint K; } pc;
void main() {
    uint tn = gl_WorkGroupID.x * 16;
    uint tm = gl_WorkGroupID.y * 16;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc;
    coopMatLoad(acc, c, tm * pc.N + tn, pc.N, gl_CooperativeMatrixLayoutRowMajor);
    for (uint k = 0; k < pc.K; k += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, tm * pc.K + k, pc.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * pc.N + tn, pc.N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStore(acc, d, tm * pc.N + tn, pc.N, gl_CooperativeMatrixLayoutRowMajor);
}
