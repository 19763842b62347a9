#version 450
// KHR cooperative matrices: load/store/mulAdd in a loop, element-wise ops, conversions, a helper
// function (OpFunctionCall), a specialization constant and gl_WorkGroupSize.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint K_TILES = 4;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BufC { float c[]; };
layout(set = 0, binding = 3) buffer BufH { float16_t h[]; };
layout(set = 0, binding = 4) buffer BufI { int8_t q[]; int32_t r[]; };
layout(push_constant) uniform PC { uint stride; float alpha; } pc;

coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> scaled(
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m, float s) {
    return m * s;
}

void main() {
    uint base = gl_WorkGroupID.x * 16 * gl_WorkGroupSize.x;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < K_TILES; ++k) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, base + k * 16, pc.stride, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * 16 * pc.stride, pc.stride, gl_CooperativeMatrixLayoutColumnMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    acc = scaled(acc, pc.alpha) + acc - acc / acc;
    acc = -acc;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc16 =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(acc);
    for (int i = 0; i < acc16.length(); ++i) {
        acc16[i] = max(acc16[i], float16_t(0.0));
    }
    coopMatStore(acc, c, base, pc.stride, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(acc16, h, base, pc.stride, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> qa;
    coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> qb;
    coopMatLoad(qa, q, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(qb, q, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> qc =
        coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0);
    qc = coopMatMulAdd(qa, qb, qc, gl_MatrixOperandsSaturatingAccumulation);
    coopMatStore(qc, r, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
