#version 450
// GL_NV_cooperative_matrix2 builtins not in coopmat2_nv.comp: every setTensorLayout*/setTensorView*
// function, a view with dimensions, a transpose, use conversions (Accumulator -> A, B), a 2x2 and a
// row-and-column reduction, a store through a view, and a load with a DecodeFunc.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) buffer BufC { float c[]; };
layout(set = 0, binding = 2) buffer BufH { float16_t h[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer DecodeBuf { float16_t v[]; };
float16_t decodeScaled(const in DecodeBuf b, const in uint32_t blockCoord[2], const in uint32_t coordInBlock[2]) {
    return b.v[coordInBlock[0] * 4 + coordInBlock[1]] * float16_t(2.0);
}
float combineAdd(const in float x, const in float y) { return x + y; }
void main() {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> ta =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    ta = setTensorLayoutDimensionNV(ta, 32, 32);
    ta = setTensorLayoutStrideNV(ta, 32, 1);
    ta = setTensorLayoutClampValueNV(ta, 7);
    tensorLayoutNV<2> tb = createTensorLayoutNV(2);
    tb = setTensorLayoutDimensionNV(tb, 8, 8);
    tb = setTensorLayoutBlockSizeNV(tb, 4, 4);
    tensorViewNV<2, true, 1, 0> tv = createTensorViewNV(2, true, 1, 0);
    tv = setTensorViewDimensionsNV(tv, 16, 16);
    tv = setTensorViewStrideNV(tv, 16, 1);
    tv = setTensorViewClipNV(tv, 0, 16, 0, 16);
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA> ma;
    coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(ta, 0, 16, 0, 16));
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoadTensorNV(mb, a, 0, tb, decodeScaled);
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
    acc = coopMatMulAdd(ma, mb, acc);
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> acc16 =
        coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator>(acc);
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA> asA =
        coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseA>(acc16);
    coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseB> asB;
    coopMatTransposeNV(asB, acc16);
    acc = coopMatMulAdd(asA, asB, acc);
    coopmat<float, gl_ScopeWorkgroup, 8, 8, gl_MatrixUseAccumulator> quad;
    coopMatReduceNV(quad, acc, gl_CooperativeMatrixReduce2x2NV, combineAdd);
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> both;
    coopMatReduceNV(both, acc, gl_CooperativeMatrixReduceRowAndColumnNV, combineAdd);
    coopMatStoreTensorNV(both, c, 0, sliceTensorLayoutNV(ta, 0, 16, 0, 16), tv);
    tensorLayoutNV<2> tq = createTensorLayoutNV(2);
    tq = setTensorLayoutDimensionNV(tq, 8, 8);
    coopMatStoreTensorNV(quad, c, 1024, tq);
}
