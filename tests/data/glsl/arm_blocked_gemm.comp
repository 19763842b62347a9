#version 450
// SPV_ARM_cooperative_matrix_layouts through glslang's GL_KHR_cooperative_matrix constants: A read
// RowBlockedInterleavedARM and B ColumnBlockedInterleavedARM with Stride 2, C row-major.
// A (16 x 16 f16) is stored as rows in pairs: element (r, c) at (r / 2) * 32 + c * 2 + r % 2;
// B (16 x 16) as columns in pairs: element (r, c) at (c / 2) * 32 + r * 2 + c % 2.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BufC { float c[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, 2, gl_CooperativeMatrixLayoutRowBlockedInterleavedARM);
    coopMatLoad(mb, b, 0, 2, gl_CooperativeMatrixLayoutColumnBlockedInterleavedARM);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    acc = coopMatMulAdd(ma, mb, acc);
    coopMatStore(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
