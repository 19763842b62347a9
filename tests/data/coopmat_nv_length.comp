#version 450
// GL_NV_cooperative_matrix: length() as a constant expression (OpSpecConstantOp
// OpCooperativeMatrixLengthNV) and as an instruction; element access; unsigned integer matrices.
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) buffer BufC { float c[]; };
layout(set = 0, binding = 2) buffer BufU { uint8_t u8[]; };
layout(set = 0, binding = 3) buffer BufI { uint32_t u32[]; };
void main() {
    fcoopmatNV<32, SCOPE_SUBGROUP, 16, 16> acc;
    const int LEN = acc.length();
    coopMatLoadNV(acc, c, 0, 16, false);
    for (int i = 0; i < LEN; ++i) {
        acc[i] = acc[i] * 2.0;
    }
    c[256 + gl_LocalInvocationID.x] = float(acc.length());
    coopMatStoreNV(acc, c, 0, 16, true);
    ucoopmatNV<8, SCOPE_SUBGROUP, 16, 32> ua;
    ucoopmatNV<8, SCOPE_SUBGROUP, 32, 16> ub;
    ucoopmatNV<32, SCOPE_SUBGROUP, 16, 16> uc = ucoopmatNV<32, SCOPE_SUBGROUP, 16, 16>(0);
    coopMatLoadNV(ua, u8, 0, 32, false);
    coopMatLoadNV(ub, u8, 512, 16, false);
    uc = coopMatMulAddNV(ua, ub, uc);
    coopMatStoreNV(uc, u32, 0, 16, false);
}
