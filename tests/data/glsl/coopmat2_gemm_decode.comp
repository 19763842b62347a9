#version 450
// SPV_NV_cooperative_matrix2 + SPV_NV_tensor_addressing GEMM at workgroup scope: A is stored in
// 8-bit blocks and read through a DecodeFunc (block loads), B and C through tensor layouts and
// slices. C = decode(Q) * B, one 64x16 tile of C per workgroup of 128 invocations (a whole
// warpgroup, which wgmma needs 64 rows of; the H200 Vulkan granularity there is 32x16x16).
//
// Q holds A (M x K) in blocks of 32 consecutive elements of a row, 36 bytes each (Q8Block): byte 0
// a scale s, bytes 1..32 the elements as 8-bit two's complement q, 3 bytes unused; element value =
// q * s / 16. Blocks are stored row by row (K / 32 per row). The DecodeFunc's pointer is Pointer +
// index * sizeof(Q8Block), so the layout's strides count blocks (K / 32, 1), and the 3 unused bytes
// are members: without them Q8Block would be 33 bytes. The buffer is read as words and the
// DecodeFunc reads bytes: 8-bit storage only (StorageBuffer8BitAccess, no Int8).
// B: K x N f16 row-major, C: M x N f32 row-major; M a multiple of 64, K of 32, N of 16.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer BufQ { uint q[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BufC { float c[]; };
layout(push_constant) uniform Params { uint M; uint N; uint K; } p;
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Q8Block { uint8_t s; uint8_t v[32]; uint8_t pad[3]; };

float16_t decodeQ8(const in Q8Block blk, const in uint blockCoord[2], const in uint coordInBlock[2]) {
    int v = int(uint(blk.v[coordInBlock[1]]));
    v -= (v & 128) * 2;
    return float16_t(v) * float16_t(uint(blk.s)) * float16_t(0.0625);
}

void main() {
    tensorLayoutNV<2> tq = createTensorLayoutNV(2);
    tq = setTensorLayoutBlockSizeNV(tq, 1, 32);
    tq = setTensorLayoutDimensionNV(tq, p.M, p.K);
    tq = setTensorLayoutStrideNV(tq, p.K / 32, 1);
    tensorLayoutNV<2> tb = createTensorLayoutNV(2);
    tb = setTensorLayoutDimensionNV(tb, p.K, p.N);
    tensorLayoutNV<2> tc = createTensorLayoutNV(2);
    tc = setTensorLayoutDimensionNV(tc, p.M, p.N);
    uint row = gl_WorkGroupID.y * 64;
    uint col = gl_WorkGroupID.x * 16;
    coopmat<float, gl_ScopeWorkgroup, 64, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, 64, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += 16) {
        coopmat<float16_t, gl_ScopeWorkgroup, 64, 16, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseB> bm;
        coopMatLoadTensorNV(a, q, 0, sliceTensorLayoutNV(tq, row, 64, k, 16), decodeQ8);
        coopMatLoadTensorNV(bm, b, 0, sliceTensorLayoutNV(tb, k, 16, col, 16));
        acc = coopMatMulAdd(a, bm, acc);
    }
    coopMatStoreTensorNV(acc, c, 0, sliceTensorLayoutNV(tc, row, 64, col, 16));
}
