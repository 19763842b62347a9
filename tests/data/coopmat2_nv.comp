#version 450
// GL_NV_cooperative_matrix2: tensor layouts and views, a row reduction and a per-element op.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) buffer BufC { float c[]; };
float combineMax(const in float x, const in float y) { return max(x, y); }
float addRowCol(const in uint32_t row, const in uint32_t col, const in float e, const in float s) {
    return e + float(row) * s - float(col);
}
void main() {
    tensorLayoutNV<2> ta = createTensorLayoutNV(2);
    ta = setTensorLayoutDimensionNV(ta, 64, 64);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tc =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tc = setTensorLayoutDimensionNV(tc, 64, 64);
    tensorViewNV<2, false, 1, 0> tv = createTensorViewNV(2, false, 1, 0);
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < 64; k += 16) {
        coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(ta, gl_WorkGroupID.x * 16, 16, k, 16));
        coopMatLoadTensorNV(mb, a, 0, sliceTensorLayoutNV(ta, k, 16, 0, 16), tv);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> red;
    coopMatReduceNV(red, acc, gl_CooperativeMatrixReduceRowNV, combineMax);
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> pe;
    coopMatPerElementNV(pe, red, addRowCol, 0.5);
    coopMatStoreTensorNV(pe, c, 0, sliceTensorLayoutNV(tc, 0, 16, 0, 16));
}
