#version 450
// SPV_NV_cooperative_matrix2 per-element op and reductions on a 32x32 f32 tile per subgroup
// (every matrix a multiple of 16x16, the H200's granularity): Y = X with the diagonal scaled by d
// (a per-element function of row, column and an extra operand), then each row minus its maximum
// (Row reduce, the maximum written without GLSL.std.450), the column sums of that (Column reduce
// into 16 x 32: every row the sums) and its 2x2 sums (16 x 16).
// X, Y: 32x32 tiles one after another (tile = workgroup x); S: 16x32 per tile; Q: 16x16 per tile.
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
    uint tile = gl_WorkGroupID.x;
    coopmat<float, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, x, tile * 1024, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator> scaled;
    coopMatPerElementNV(scaled, m, scaleDiagonal, p.d);
    coopmat<float, gl_ScopeSubgroup, 32, 32, gl_MatrixUseAccumulator> rowMax;
    coopMatReduceNV(rowMax, scaled, gl_CooperativeMatrixReduceRowNV, maxOf);
    scaled = scaled - rowMax;
    coopMatStore(scaled, y, tile * 1024, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 32, gl_MatrixUseAccumulator> colSum;
    coopMatReduceNV(colSum, scaled, gl_CooperativeMatrixReduceColumnNV, sumOf);
    coopMatStore(colSum, s, tile * 512, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> quad;
    coopMatReduceNV(quad, scaled, gl_CooperativeMatrixReduce2x2NV, sumOf);
    coopMatStore(quad, q, tile * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
