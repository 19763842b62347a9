#version 450
// SPV_NV_cooperative_matrix2 per-element op and reductions on a 16x16 f32 tile per subgroup:
// Y = X with the diagonal scaled by d (a per-element function of row, column and an extra
// operand), then each row minus its maximum (Row reduce, combine = max written without
// GLSL.std.450), the column sums of that (Column reduce into 1 x 16) and the 2x2 sums (8 x 8).
// X, Y: 16x16 tiles one after another (tile = workgroup x); S: 16 sums per tile; Q: 64 per tile.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BufX { float x[]; };
layout(set = 0, binding = 1) writeonly buffer BufY { float y[]; };
layout(set = 0, binding = 2) writeonly buffer BufS { float s[]; };
layout(set = 0, binding = 3) writeonly buffer BufQ { float q[]; };
layout(push_constant) uniform Params { float d; } p;

float scaleDiagonal(const in uint row, const in uint col, const in float v, const in float d) {
    if (row == col) {
        return v * d;
    }
    return v;
}
float maxOf(const in float a, const in float b) { return a > b ? a : b; }
float sumOf(const in float a, const in float b) { return a + b; }

void main() {
    uint base = gl_WorkGroupID.x * 256;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, x, base, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> scaled;
    coopMatPerElementNV(scaled, m, scaleDiagonal, p.d);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> rowMax;
    coopMatReduceNV(rowMax, scaled, gl_CooperativeMatrixReduceRowNV, maxOf);
    scaled = scaled - rowMax;
    coopMatStore(scaled, y, base, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 1, 16, gl_MatrixUseAccumulator> colSum;
    coopMatReduceNV(colSum, scaled, gl_CooperativeMatrixReduceColumnNV, sumOf);
    coopMatStore(colSum, s, gl_WorkGroupID.x * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> quad;
    coopMatReduceNV(quad, scaled, gl_CooperativeMatrixReduce2x2NV, sumOf);
    coopMatStore(quad, q, gl_WorkGroupID.x * 64, 8, gl_CooperativeMatrixLayoutRowMajor);
}
