#version 450
// SPV_KHR_cooperative_matrix signed 8-bit GEMM at the 16x16x32 shape: A and B in one buffer block
// (two arrays), C (int32) read and D written through a struct member, the number of K steps a
// specialization constant and the workgroup size from local_size_x_id (32 unless specialized:
// a subgroup-scope matrix needs its whole subgroup). Without
// SaturatingAccumulation the sums wrap: D = low 32 bits of A*B + C (SPV_KHR_cooperative_matrix).
// A: M x K row-major, B: K x N column-major (B^T row-major), C, D: M x N row-major, K = 32 * KSTEPS.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
layout(local_size_x = 32, local_size_x_id = 0) in;  // one subgroup, specializable
layout(constant_id = 1) const uint KSTEPS = 2;
layout(set = 0, binding = 0) readonly buffer Operands { int8_t a[64 * 64]; int8_t bt[]; } ops;
struct Tile { int32_t c[256]; };
layout(set = 0, binding = 1) readonly buffer Bias { Tile tiles[]; } bias;
layout(set = 0, binding = 2) writeonly buffer Out { int32_t d[]; } outp;
layout(push_constant) uniform Params { uint N; } p;

void main() {
    const uint K = 32 * KSTEPS;
    uint row = gl_WorkGroupID.y * 16;
    uint col = gl_WorkGroupID.x * 16;
    uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc;
    coopMatLoad(acc, bias.tiles[tile].c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (uint k = 0; k < K; k += 32) {
        coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> a;
        coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> b;
        coopMatLoad(a, ops.a, row * K + k, K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b, ops.bt, col * K + k, K, gl_CooperativeMatrixLayoutColumnMajor);
        acc = coopMatMulAdd(a, b, acc);
    }
    coopMatStore(acc, outp.d, row * p.N + col, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
