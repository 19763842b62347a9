#version 450
// GL_NV_cooperative_matrix: fcoopmatNV load/mulAdd/store in a loop, element-wise ops, a conversion.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) buffer BufC { float c[]; };
layout(set = 0, binding = 2) buffer BufH { float16_t h[]; };
void main() {
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    for (uint k = 0; k < 4; ++k) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> mb;
        coopMatLoadNV(ma, a, k * 16, 64, false);
        coopMatLoadNV(mb, a, k * 1024, 64, true);
        acc = coopMatMulAddNV(ma, mb, acc);
    }
    acc = acc * 2.0 - acc;
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> acc16 = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc);
    coopMatStoreNV(acc, c, 0, 16, false);
    coopMatStoreNV(acc16, h, 0, 16, false);
}
