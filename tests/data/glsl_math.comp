#version 450
// GLSL.std.450 built-ins on storage-buffer floats and ints, for raise-spirv-to-coop:
// o[16 i + j] = f_j(a[i]) (a[i] > 0), q[4 i + j] = g_j(k[i]).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BufA { float a[]; };
layout(set = 0, binding = 1) readonly buffer BufB { float b[]; };
layout(set = 0, binding = 2) writeonly buffer BufO { float o[]; };
layout(set = 0, binding = 3) readonly buffer BufK { int k[]; };
layout(set = 0, binding = 4) writeonly buffer BufQ { int q[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float x = a[i], y = b[i];
    o[16 * i + 0] = exp(y);
    o[16 * i + 1] = exp2(y);
    o[16 * i + 2] = log(x);
    o[16 * i + 3] = log2(x);
    o[16 * i + 4] = sqrt(x);
    o[16 * i + 5] = inversesqrt(x);
    o[16 * i + 6] = tanh(y);
    o[16 * i + 7] = abs(y);
    o[16 * i + 8] = fma(x, y, 1.0);
    o[16 * i + 9] = floor(y);
    o[16 * i + 10] = ceil(y);
    o[16 * i + 11] = trunc(y);
    o[16 * i + 12] = roundEven(4.0 * y);
    o[16 * i + 13] = min(x, y);
    o[16 * i + 14] = max(x, y);
    o[16 * i + 15] = clamp(y, -0.5, x);
    q[4 * i + 0] = abs(k[i]);
    q[4 * i + 1] = min(k[i], 3);
    q[4 * i + 2] = max(k[i], -3);
    q[4 * i + 3] = clamp(k[i], -2, 2);
}
