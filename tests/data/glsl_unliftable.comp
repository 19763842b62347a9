#version 450
// sign() is GLSL.std.450 FSign, which raise-spirv-to-coop does not lift.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer BufA { float a[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    a[i] = sign(a[i]);
}
