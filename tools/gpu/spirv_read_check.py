"""Run glslang's cooperative-matrix shaders as glslang wrote them and as coopdialect's reader and
writer rewrote them, on the H200 through Vulkan, and compare both with numpy models of the GLSL.

    python tools/gpu/spirv_read_check.py build .spvread            # here: glslang, read, write, spirv-val
    python3 tools/gpu/spirv_read_check.py run .spvread --out D     # on the GPU: dispatch both, compare

`build` compiles each shader with glslangValidator, rewrites it (`deserialize` then `serialize`),
validates both binaries with spirv-val, draws small-integer inputs (every product and sum is exact
in f16/f32) and stores the numpy model's output. `run` dispatches glslang's binary and the rewrite
with the same buffers and push constants; a case passes when the rewrite's output buffers equal
glslang's bit for bit and both equal the model.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vk_check_common import bits, cli, report, save_case, write_manifest, write_spv  # noqa: E402

def _ints(rng, n, dtype, lo=-3, hi=4):
    return rng.integers(lo, hi, n).astype(dtype)


def _gemm_f16_f32(rng):
    """tools/gpu/testdata/coopmat_khr_f16_f32.comp: D = A·B + C, push constants M, N, K."""
    M, N, K = 64, 64, 64
    a, b, c = _ints(rng, M * K, np.float16), _ints(rng, K * N, np.float16), _ints(rng, M * N, np.float32)
    d = np.zeros(M * N, np.float32)
    want = (a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64) + c.reshape(M, N))
    return ([a, b, c, d], {3: want.astype(np.float32).reshape(-1)}, (N // 16, M // 16, 1),
            np.array([M, N, K], np.uint32).tobytes())


def _gemm_select(rng):
    """tests/data/raise_gemm_select.comp: a K loop, a selection on the workgroup id, an int8
    saturating MulAdd; push constants K, N (uint) and alpha (float)."""
    M = N = K = 32
    a, b = _ints(rng, M * K, np.float16), _ints(rng, K * N, np.float16)
    q = _ints(rng, 512, np.int8, -128, 128)
    d, r = np.zeros(M * N, np.float32), np.zeros(4 * 256, np.int32)
    alpha = 0.5
    ab = a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64)
    ab[:, :16] *= alpha
    ab[:, 16:] -= 1
    qa, qb = q[:256].reshape(16, 16).astype(np.int64), q[256:].reshape(16, 16).T.astype(np.int64)
    tile = np.clip(qa @ qb + 100000, -2**31, 2**31 - 1).astype(np.int32).reshape(-1)
    push = np.array([K, N], np.uint32).tobytes() + np.array([alpha], np.float32).tobytes()
    return [a, b, d, q, r], {2: ab.astype(np.float32).reshape(-1), 4: np.tile(tile, 4)}, (2, 2, 1), push


def _khr(rng):
    """tests/data/coopmat_khr.comp: c = a[0:256] · a[256:512] (16×16, row-major)."""
    a, c = _ints(rng, 512, np.float16), np.zeros(256, np.float32)
    want = a[:256].reshape(16, 16).astype(np.float64) @ a[256:].reshape(16, 16).astype(np.float64)
    return [a, c], {1: want.astype(np.float32).reshape(-1)}, (1, 1, 1), None


def _nv(rng):
    """tests/data/coopmat_nv.comp (SPV_NV_cooperative_matrix): a loop of 4 MulAdds, acc*2 - acc,
    stored as f32 and converted to f16."""
    a = _ints(rng, 4096, np.float16)
    c, h = np.zeros(256, np.float32), np.zeros(256, np.float16)
    acc = np.zeros((16, 16))
    for k in range(4):
        ma = np.array([[a[k * 16 + i * 64 + j] for j in range(16)] for i in range(16)], np.float64)
        mb = np.array([[a[k * 1024 + j * 64 + i] for j in range(16)] for i in range(16)], np.float64)
        acc += ma @ mb
    acc = acc * 2 - acc
    return [a, c, h], {1: acc.astype(np.float32).reshape(-1), 2: acc.astype(np.float16).reshape(-1)}, (1, 1, 1), None


def _trivial(rng):
    """tools/gpu/testdata/trivial.comp: o[i] = a[i]·b[i] + i for i < n (push constant n)."""
    n = 256
    a, b, o = _ints(rng, n, np.float32), _ints(rng, n, np.float32), np.zeros(n, np.float32)
    return [a, b, o], {2: a * b + np.arange(n, dtype=np.float32)}, (n // 64, 1, 1), np.array([n], np.uint32).tobytes()


CASES = {
    "gemm_f16_f32": ("tools/gpu/testdata/coopmat_khr_f16_f32.comp", _gemm_f16_f32),
    "gemm_select": ("tests/data/raise_gemm_select.comp", _gemm_select),
    "khr": ("tests/data/coopmat_khr.comp", _khr),
    "nv": ("tests/data/coopmat_nv.comp", _nv),
    "trivial": ("tools/gpu/testdata/trivial.comp", _trivial),
}


def build(args) -> None:
    sys.path.insert(0, os.getcwd())
    from coopdialect.spirv.grammar_tables import ENUMS
    from coopdialect.spirv.reader import deserialize
    from coopdialect.spirv.writer import serialize

    os.makedirs(args.folder, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    manifest: list[dict] = []
    for name, (src, model) in CASES.items():
        out = os.path.join(args.folder, f"{name}_glslang.spv")
        subprocess.run(["glslangValidator", "-V", "--target-env", "vulkan1.3",
                        f"-DSCOPE_SUBGROUP={ENUMS['Scope']['Subgroup'][0]}", "-o", out, src],
                       check=True, capture_output=True)
        with open(out, "rb") as f:
            theirs = f.read()
        write_spv(args.folder, f"{name}_glslang", theirs)
        ours = write_spv(args.folder, f"{name}_ours", serialize(deserialize(theirs, file=out)))
        inputs, expected, grid, push = model(rng)
        want = [expected.get(i, x) for i, x in enumerate(inputs)]
        save_case(args.folder, manifest, name, ours, "main", grid, inputs, want,
                  glslang=f"{name}_glslang.spv", outputs=sorted(expected),
                  push=push.hex() if push else None)
    write_manifest(args.folder, manifest, " (glslang's binary and the rewrite of each)")


def run(args) -> int:
    import json

    from vk_runner import VulkanContext

    with open(os.path.join(args.folder, "manifest.json")) as f:
        manifest = json.load(f)
    lines, failures = [], 0
    with VulkanContext() as ctx:
        info = ctx.device_info()
        lines.append(f"device: {info['name']}, driver {info['driver_version']}, Vulkan {info['api_version']}")
        for m in manifest:
            arrays = np.load(os.path.join(args.folder, m["case"] + ".npz"))
            names = sorted(arrays.files, key=lambda k: int(k.split("_")[1]))
            n = m["buffers"]
            inputs, expected = [arrays[k] for k in names[:n]], [arrays[k] for k in names[n:2 * n]]
            push = bytes.fromhex(m["push"]) if m["push"] else None
            try:
                got = {}
                for which in ("glslang", "spv"):
                    with open(os.path.join(args.folder, m[which]), "rb") as f:
                        got[which] = ctx.run_compute(f.read(), inputs, tuple(m["grid"]), entry=m["entry"],
                                                     push_constants=push)
                same = all(np.array_equal(bits(got["glslang"][i]), bits(got["spv"][i])) for i in m["outputs"])
                model = all(np.array_equal(bits(got["spv"][i]), bits(expected[i])) for i in m["outputs"])
                status = "PASS" if same and model else "FAIL"
                text = f": rewrite == glslang's binary: {same}; == numpy model: {model}"
            except Exception as e:  # noqa: BLE001 - report it and go on with the other cases
                status, text = "FAIL", f": {type(e).__name__}: {e}"
            failures += status != "PASS"
            lines.append(f"[{status}] {m['case']}{text}")
    lines.append(f"{len(manifest) - failures}/{len(manifest)} cases: the reader+writer's rewrite of glslang's "
                 "binary computes what glslang's binary computes, bit for bit, and equals the numpy model")
    return report(lines, args.out, "spirv_read_check.txt", failures)


if __name__ == "__main__":
    cli(__doc__, build, run)
