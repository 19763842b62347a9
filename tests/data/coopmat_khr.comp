#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer A { float16_t a[]; };
layout(set=0, binding=1) buffer C { float c[]; };
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  acc = coopMatMulAdd(ma, mb, acc);
  coopMatStore(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
