#version 450
// GL_KHR_cooperative_matrix: length(), element access, signed integer MulAdd with saturation, and
// local_size_x_id (OpExecutionModeId LocalSizeId with a specialization constant). (glslang 15.2 has no
// GL_ARM_cooperative_matrix_layouts; the Arm layouts are read from examples/gemm_f16_arm_blocked.mlir.)
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint WG = 32;
layout(set = 0, binding = 0) buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) buffer BufC { float c[]; };
layout(set = 0, binding = 2) buffer BufS { int8_t s8[]; };
layout(set = 0, binding = 3) buffer BufI { int32_t i32[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    acc = coopMatMulAdd(ma, mb, acc);
    for (int i = 0; i < acc.length(); ++i) {
        acc[i] = acc[i] + 1.0;
    }
    coopMatStore(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> sa;
    coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> sb;
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> sc;
    coopMatLoad(sa, s8, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(sb, s8, 512, 32, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(sc, i32, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    sc = coopMatMulAdd(sa, sb, sc, gl_MatrixOperandsSaturatingAccumulation);
    coopMatStore(sc, i32, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
}
