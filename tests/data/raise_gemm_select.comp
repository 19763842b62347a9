#version 450
// For raise-spirv-to-coop: a K loop of KHR f16 MulAdds (push-constant bounds and strides), a
// selection on the workgroup id that carries the accumulator, and a signed 8-bit MulAdd with
// SaturatingAccumulation. D = A·B scaled by alpha in workgroup column 0, minus 1 elsewhere;
// R[tile] = Q_A·Q_B + 2147483000 per workgroup, each sum saturated to int32 (SPV_KHR_cooperative_matrix:
// the products exact, their addition to C saturating with Result's signedness): a positive Q_A·Q_B
// row-column product above 647 gives INT32_MAX.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BufD { float d[]; };
layout(set = 0, binding = 3) readonly buffer BufQ { int8_t q[]; };
layout(set = 0, binding = 4) writeonly buffer BufR { int32_t r[]; };
layout(push_constant) uniform PC { uint K; uint N; float alpha; } pc;
void main() {
    uint tn = gl_WorkGroupID.x * 16;
    uint tm = gl_WorkGroupID.y * 16;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < pc.K; k += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, tm * pc.K + k, pc.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * pc.N + tn, pc.N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    if (gl_WorkGroupID.x == 0u) {
        acc = acc * pc.alpha;
    } else {
        acc = acc - coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
    }
    coopMatStore(acc, d, tm * pc.N + tn, pc.N, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> qa;
    coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> qb;
    coopMatLoad(qa, q, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(qb, q, 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> qc =
        coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(2147483000);
    qc = coopMatMulAdd(qa, qb, qc, gl_MatrixOperandsSaturatingAccumulation);
    uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    coopMatStore(qc, r, tile * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
