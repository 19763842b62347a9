#version 450
// The control flow glslang emits around cooperative matrices: a K loop with `continue` (skipped
// tiles) and `break` (a limit), a do-while, an if/else chain and a short-circuit condition, a
// local array indexed by constants, a loop-carried index, and the tile's work skipped by an early
// return. A: 16 x (16 * KT) f16 row-major tiles side by side; B: (16 * KT) x 16 f16 row-major;
// C: 16 x 16 f32 per workgroup; push constants: KT (tiles), skip (a tile index left out), limit
// (tiles summed at most), rounds (do-while count, at least 1), mode.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BufA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BufC { float c[]; };
layout(push_constant) uniform Params { uint KT; uint skip; uint limit; uint rounds; int mode; } p;

void main() {
    if (gl_WorkGroupID.x >= 3u && p.mode != 7) {
        return;
    }
    uint ld = 16 * p.KT;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    uint used = 0;
    for (uint k = 0; k < p.KT; ++k) {
        if (k == p.skip) {
            continue;
        }
        if (used >= p.limit) {
            break;
        }
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, k * 16, ld, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * 16 * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
        used++;
    }
    float scale[3] = float[3](1.0, 2.0, 0.5);
    uint r = 0;
    do {
        acc = acc * scale[1];
        r++;
    } while (r < p.rounds);
    if (p.mode == 0) {
        acc = acc * scale[2];
    } else if (p.mode == 1) {
        acc = acc + coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float(used));
    } else {
        acc = -acc;
    }
    coopMatStore(acc, c, gl_WorkGroupID.x * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
