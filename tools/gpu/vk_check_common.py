"""What the Vulkan check scripts share (vk_gemm_check, decode_check, tensor_check).

Each script has a `build` step here (compile with coopdialect, spirv-val, run the interpreter) and
a `run` step on the GPU machine (the runtime's Vulkan device, coopdialect.runtime.vulkan). A built
folder holds:

* `<name>.spv`: the modules (`write_spv` validates each with spirv-val);
* `<case>.npz`: `arr_0 .. arr_{n-1}` the n input buffers, `arr_n .. arr_{2n-1}` the same buffers
  after the interpreter ran the kernel, then any extra arrays the script keeps (`save_case`);
* `manifest.json`: one dict per case with at least `case`, `spv`, `entry`, `grid`, `buffers`.

`run_cases` dispatches every case and lets the script's `check` judge the GPU's buffers;
`report` prints and saves the lines; `cli` is the two-command line interface.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # gpu_check_common


def write_spv(folder: str, name: str, spv: bytes) -> str:
    """Write `folder/name.spv` and validate it (spirv-val, Vulkan 1.3); returns the file name."""
    path = os.path.join(folder, f"{name}.spv")
    with open(path, "wb") as f:
        f.write(spv)
    subprocess.run(["spirv-val", "--target-env", "vulkan1.3", path], check=True)
    return f"{name}.spv"


def save_case(folder: str, manifest: list[dict], case: str, spv: str, entry: str, grid,
              inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
              extra: Sequence[np.ndarray] = (), **info) -> None:
    """Store one case's buffers and append its manifest entry (`info` adds script-specific keys)."""
    np.savez(os.path.join(folder, f"{case}.npz"), *inputs, *expected, *extra)
    manifest.append({"case": case, "spv": spv, "entry": entry, "grid": list(grid),
                     "buffers": len(inputs), **info})


def write_manifest(folder: str, manifest: list[dict], note: str = "") -> None:
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"built {len(manifest)} cases in {folder}{note}")


@dataclass
class Case:
    """One built case as `run_cases` hands it to a script's check."""

    meta: dict
    inputs: list[np.ndarray]
    expected: list[np.ndarray]
    extra: list[np.ndarray]


def bits(a: np.ndarray) -> np.ndarray:
    """The array's elements as unsigned integers of the same width (bit-exact comparisons)."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def run_cases(folder: str, check: Callable[[Case, list[np.ndarray]], tuple[str, str]]
              ) -> tuple[list[str], int]:
    """Dispatch every case of `folder` on the GPU; `check(case, gpu_buffers)` gives
    (status, text after the case name). Returns the report lines and the number of cases whose
    status is not PASS. A dispatch that raises is a FAIL with the error's text."""
    from coopdialect.runtime.vulkan import VulkanDevice

    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    lines, failures = [], 0
    with VulkanDevice() as dev:
        info = dev.ctx.device_info()
        lines.append(f"device: {info['name']}, driver {info['driver_version']}, Vulkan {info['api_version']}")
        for m in manifest:
            arrays = np.load(os.path.join(folder, m["case"] + ".npz"))
            n, names = m["buffers"], sorted(arrays.files, key=lambda k: int(k.split("_")[1]))
            case = Case(m, [arrays[k] for k in names[:n]], [arrays[k] for k in names[n:2 * n]],
                        [arrays[k] for k in names[2 * n:]])
            with open(os.path.join(folder, m["spv"]), "rb") as f:
                prog = dev.load(f.read())
            try:
                got = [dev.upload(a) for a in case.inputs]
                dev.launch(prog, m["entry"], got, tuple(m["grid"]))
                status, text = check(case, got)
            except Exception as e:  # noqa: BLE001 - report it and go on with the other cases
                status, text = "FAIL", f": {type(e).__name__}: {e}"
            failures += status != "PASS"
            lines.append(f"[{status}] {m['case']}{text}")
    return lines, failures


def report(lines: list[str], out: str | None, file_name: str, failures: int) -> int:
    """Print the lines, save them as OUT/FILE_NAME when `out` is given; the exit status."""
    from gpu_check_common import report as write_report  # the PTX checks' report, same format

    return write_report(lines, Path(out) if out else None, file_name, failures)


def cli(doc: str, build: Callable[[argparse.Namespace], None], run: Callable[[argparse.Namespace], int],
        build_args: Callable[[argparse.ArgumentParser], None] = lambda p: None,
        run_args: Callable[[argparse.ArgumentParser], None] = lambda p: None) -> None:
    """`SCRIPT build FOLDER [--seed N ...]` / `SCRIPT run FOLDER [--out D ...]`."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("folder")
    b.add_argument("--seed", type=int, default=2026)
    build_args(b)
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--out")
    run_args(r)
    args = ap.parse_args()
    if args.cmd == "build":
        build(args)
    else:
        sys.exit(run(args))
