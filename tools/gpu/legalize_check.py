"""legalize-coop-sizes on the H200: compile here, run there through Vulkan, compare with the interpreter.

    python tools/gpu/legalize_check.py prepare      # here (needs xdsl): writes .legalizecheck/
    python tools/gpu/legalize_check.py run $OUT     # on the device (numpy + vk_runner only)

`prepare` lowers each case with `legalize-coop-sizes{...},convert-coop-to-spirv`, runs spirv-val on
the module, interprets the unlowered kernel on the same inputs and saves inputs, the
interpreter's outputs and the .spv. `run` dispatches each .spv and compares the output buffer
with the interpreter's, bit for bit (integer-valued data: exact in any summation order) and, for
the random-float case, by the largest absolute difference. Results: $OUT/legalize_check.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DIR = ROOT / ".legalizecheck"

# name, example, kernel, pipeline, grid
CASES = [
    ("large_split", "gemm_f16_64_large", "legalize-coop-sizes{target=h200-vulkan flexible=false}", (1, 1, 1)),
    ("large_flexible", "gemm_f16_64_large", "legalize-coop-sizes{target=h200-vulkan}", (1, 1, 1)),
    ("gemm_f16", "gemm_f16", "legalize-coop-sizes{target=h200-vulkan}", (2, 2, 1)),
    ("gemm_s8", "gemm_s8", "legalize-coop-sizes{target=h200-vulkan}", (4, 2, 1)),
]


def _inputs(module, kernel: str, rng, kind: str):
    from coopdialect.interpreter.common import numpy_dtype

    fn = next(op for op in module.walk() if getattr(op, "sym_name", None) is not None
              and op.sym_name.data == kernel)
    out = []
    for arg in fn.body.blocks[0].args:
        t = arg.type
        dt = numpy_dtype(t.element_type)
        shape = t.get_shape()
        if dt.kind == "f" or "float" in dt.name:
            if kind == "float":
                x = rng.uniform(-1, 1, shape).astype(dt)
            else:
                x = rng.integers(-3, 4, shape).astype(dt)
        else:
            x = rng.integers(-20, 21, shape).astype(dt)
        out.append(x)
    return out


def prepare() -> None:
    from coopdialect import api
    from coopdialect.interpreter import run_kernel

    DIR.mkdir(exist_ok=True)
    tools = Path(os.environ.get("SPIRV_TOOLS_CACHE", Path.home() / ".cache/coopdialect/spirv-tools")) / "bin"
    manifest = []
    rng = np.random.default_rng(2026)
    for name, example, pipeline, grid in CASES:
        path = str(ROOT / "examples" / f"{example}.mlir")
        spv = api.compile_to_spirv(api.run_pipeline(api.parse_file(path), pipeline))
        (DIR / f"{name}.spv").write_bytes(spv)
        subprocess.run([str(tools / "spirv-val"), "--target-env", "vulkan1.3", str(DIR / f"{name}.spv")],
                       check=True)
        kinds = ["int", "float"] if name == "large_split" else ["int"]
        for kind in kinds:
            bufs = _inputs(api.parse_file(path), example, rng, kind)
            ins = [b.copy() for b in bufs]
            run_kernel(api.parse_file(path), example, bufs, grid)  # the unlowered kernel
            np.savez(DIR / f"{name}_{kind}.npz", *ins, *[b for b in bufs])
            manifest.append({"case": name, "kind": kind, "entry": example, "grid": grid,
                             "pipeline": pipeline, "nbuf": len(bufs)})
    (DIR / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"prepared {len(manifest)} runs in {DIR}")


def run(out: str) -> None:
    sys.path.insert(0, str(ROOT / "tools" / "gpu"))
    from vk_runner import VulkanContext

    manifest = json.loads((DIR / "manifest.json").read_text())
    results = []
    with VulkanContext() as ctx:
        for m in manifest:
            data = np.load(DIR / f"{m['case']}_{m['kind']}.npz")
            arrays = [data[f"arr_{i}"] for i in range(2 * m["nbuf"])]
            ins, want = arrays[:m["nbuf"]], arrays[m["nbuf"]:]
            spv = (DIR / f"{m['case']}.spv").read_bytes()
            rec = dict(m)
            try:
                got = ctx.run_compute(spv, ins, tuple(m["grid"]), entry=m["entry"])
                g, w = got[-1], want[-1]
                rec["bit_exact"] = bool(g.tobytes() == w.tobytes())
                rec["max_abs_diff"] = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64))))
                rec["max_abs_value"] = float(np.max(np.abs(w.astype(np.float64))))
            except Exception as e:  # report, keep going
                rec["error"] = f"{type(e).__name__}: {e}"
            results.append(rec)
            print(json.dumps(rec))
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "legalize_check.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    if sys.argv[1:2] == ["prepare"]:
        prepare()
    elif sys.argv[1:2] == ["run"] and len(sys.argv) == 3:
        run(sys.argv[2])
    else:
        sys.exit(__doc__)
