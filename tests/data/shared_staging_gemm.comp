#version 450
// KHR coopmat GEMM staging A and B tiles through shared memory, with the Vulkan memory model:
// glslang writes MakePointerAvailable/MakePointerVisible memory operands with a Scope <id>.
// C[M,N] = A[M,K] * B[K,N]; A, B f16 row-major, C f32 row-major. 64 invocations (2 subgroups),
// a 32x16 tile of C per workgroup: subgroup s computes rows 16*s .. 16*s+15.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_KHR_shader_subgroup_basic : enable
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; } p;
shared float16_t sa[32 * 16];
shared float16_t sb[16 * 16];
void main() {
    uint tm = gl_WorkGroupID.y * 32;
    uint tn = gl_WorkGroupID.x * 16;
    uint s = gl_SubgroupID;
    uint t = gl_LocalInvocationID.x;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += 16) {
        for (uint i = t; i < 32 * 16; i += 64) {
            uint r = i / 16, col = i % 16;
            sa[i] = a[(tm + r) * p.K + k + col];
        }
        for (uint i = t; i < 16 * 16; i += 64) {
            uint r = i / 16, col = i % 16;
            sb[i] = b[(k + r) * p.N + tn + col];
        }
        barrier();
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, sa, s * 16 * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, sb, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
        barrier();
    }
    coopMatStore(acc, c, (tm + s * 16) * p.N + tn, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
