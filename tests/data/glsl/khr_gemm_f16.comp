#version 450
// SPV_KHR_cooperative_matrix f16 GEMM written the usual way: named buffer blocks, sizes and scales
// in push constants, a bounds check that returns early, the K loop in a helper that takes the
// accumulator `inout` (glslang passes it as a pointer), C = alpha * A*B + beta * C.
// A: M x K f16 row-major, B: K x N f16 row-major, C: M x N f32 row-major; one subgroup per 16x16
// tile of C, workgroup (x, y) = tile column, tile row.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer MatA { float16_t data[]; } matA;
layout(set = 0, binding = 1) readonly buffer MatB { float16_t data[]; } matB;
layout(set = 0, binding = 2) buffer MatC { float data[]; } matC;
layout(push_constant) uniform Params { uint M; uint N; uint K; float alpha; float beta; } p;

const uint T = 16;

void accumulate(inout coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> acc, uint row, uint col) {
    for (uint k = 0; k < p.K; k += T) {
        coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseB> b;
        coopMatLoad(a, matA.data, row * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b, matB.data, k * p.N + col, p.N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(a, b, acc);
    }
}

void main() {
    uint row = gl_WorkGroupID.y * T;
    uint col = gl_WorkGroupID.x * T;
    if (row >= p.M || col >= p.N) {
        return;
    }
    coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator>(0.0);
    accumulate(acc, row, col);
    coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> c;
    coopMatLoad(c, matC.data, row * p.N + col, p.N, gl_CooperativeMatrixLayoutRowMajor);
    acc = acc * p.alpha + c * p.beta;
    coopMatStore(acc, matC.data, row * p.N + col, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
