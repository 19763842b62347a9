"""The Workgroup-tile GEMM examples, staged, on a device against the interpreter (docs/staging.md).

    python3 -P tools/gpu/stage_check.py [--device cuda|vulkan|interp] [--size 512] [--out DIR]

For each kernel of coopdialect.kernels.gemm_tiles (dense f16, dense bf16, 2:4 sparse f16) at
M = N = K = size and each stage count 2..4, runs

    coop-run K.mlir --grid N/256,M/128,1 --device D --pipeline 'pipeline-coop-loads{stages=S}' --check

on small-integer inputs (valid 2:4 metadata for the sparse kernel), so the device's result must
equal the interpreter's on the ORIGINAL (unstaged) kernel bit for bit: the check covers the
staging pass and the backend's lowering of the staged form together. Prints one line per run and
`stage_check: N/N PASS`; exit status 1 if any run fails. `--device vulkan` checks the dense
kernels through the SPIR-V backend (the sparse one is PTX-only); `--device interp` runs the same
on the interpreter (no GPU): staged kernel vs original.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
META = [i | (j << 2) for i in range(4) for j in range(i + 1, 4)]  # the six valid 2:4 values


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "vulkan", "interp"])
    ap.add_argument("--size", type=int, default=512, help="M = N = K (multiple of 256)")
    ap.add_argument("--out", help="directory for the kernels and inputs (default: a temp dir)")
    a = ap.parse_args(argv)
    from coopdialect.kernels import gemm_tiles as gen
    out = Path(a.out or tempfile.mkdtemp(prefix="stage_check_"))
    out.mkdir(parents=True, exist_ok=True)
    n = a.size
    kernels = [("gemm_f16_wg", gen.gemm_wg_ir(n, n, n, "f16"), []),
               ("gemm_bf16_wg", gen.gemm_wg_ir(n, n, n, "bf16"), []),
               ("sparse_gemm_f16_wg", gen.sparse_gemm_wg_ir(n, n, n, "f16"), ["E"])]
    rng = np.random.default_rng(0)
    meta = out / "meta.npy"
    np.save(meta, rng.choice(META, (n, n // 4)).astype(np.uint8))
    results = []
    for name, text, needs_meta in kernels:
        if a.device == "vulkan" and needs_meta:
            continue  # 2:4 sparse MMA is PTX-only (wgmma.mma_async.sp)
        src = out / f"{name}.mlir"
        src.write_text(text)
        for stages in (2, 3, 4):
            # -P: the installed coopdialect, not the source tree (tools/gpu/run_examples.sh)
            cmd = [sys.executable, "-P", "-m", "coopdialect.tools.coop_run", str(src),
                   "--grid", f"{n // 256},{n // 128},1", "--device", a.device,
                   "--pipeline", f"pipeline-coop-loads{{stages={stages}}}", "--check"]
            cmd += [x for arg in needs_meta for x in ("--input", f"{arg}={meta}")]
            r = subprocess.run(cmd, capture_output=True, text=True)
            verdict = [ln for ln in r.stdout.splitlines() if ln.startswith("check:")]
            ok = r.returncode == 0 and len(verdict) == 1 and verdict[0].startswith("check: PASS")
            detail = verdict[0] if verdict else (r.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{name} {n}^3 stages={stages} {a.device}: {'PASS' if ok else 'FAIL'} ({detail})")
            results.append(ok)
    print(f"stage_check: {sum(results)}/{len(results)} PASS")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
