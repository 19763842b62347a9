#version 450
// SPV_NV_cooperative_matrix GEMM (GL_NV_cooperative_matrix): named blocks, the tile size a
// specialization constant (the matrix types' Rows and Columns: its default, 16, is what the reader
// and the raising take), a K loop with B loaded column-major, an f32 result and its f16
// conversion; workgroup (x, y) = tile column, tile row.
// A: M x K f16 row-major, Bt: N x K f16 row-major (B column-major), C: M x N f32, H: M x N f16.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer InputA { float16_t x[]; } inputA;
layout(set = 0, binding = 1) readonly buffer InputB { float16_t x[]; } inputB;
layout(set = 0, binding = 2) writeonly buffer OutputC { float x[]; } outputC;
layout(set = 0, binding = 3) writeonly buffer OutputH { float16_t x[]; } outputH;
layout(push_constant) uniform Params { uint M; uint N; uint K; } p;
layout(constant_id = 0) const uint T = 16;

void main() {
    uvec2 tile = gl_WorkGroupID.xy * T;
    fcoopmatNV<32, gl_ScopeSubgroup, T, T> acc = fcoopmatNV<32, gl_ScopeSubgroup, T, T>(0.0);
    for (uint k = 0; k < p.K; k += T) {
        fcoopmatNV<16, gl_ScopeSubgroup, T, T> a;
        fcoopmatNV<16, gl_ScopeSubgroup, T, T> b;
        coopMatLoadNV(a, inputA.x, tile.y * p.K + k, p.K, false);
        coopMatLoadNV(b, inputB.x, tile.x * p.K + k, p.K, true);
        acc = coopMatMulAddNV(a, b, acc);
    }
    coopMatStoreNV(acc, outputC.x, tile.y * p.N + tile.x, p.N, false);
    fcoopmatNV<16, gl_ScopeSubgroup, T, T> h = fcoopmatNV<16, gl_ScopeSubgroup, T, T>(acc);
    coopMatStoreNV(h, outputH.x, tile.y * p.N + tile.x, p.N, false);
}
