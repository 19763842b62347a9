"""Every PTX the suite emits goes through `ptxas -arch=sm_90a` (DESIGN.md: real tools check).

Cases: both example GEMMs, the randomized fragment cases (every mma.sync type and both
accumulate types, load/store layouts, element-wise ops, conversions) and the wgmma cases of
tests/ptx_cases.py, plus the GEMM at sm_80. ptxas must exit 0 and print nothing: an info
C7519/C7517 (an injected warpgroup.arrive/wait) means a missing wgmma fence. A missing ptxas
is a failure, not a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ptx_cases import (compile_case, elementwise_cases, example_cases, fragment_cases,
                                             wgmma_cases)
import parsed

PTXAS_FALLBACK = "/usr/local/bin/ptxas"


def find_ptxas() -> str:
    found = shutil.which("ptxas") or (PTXAS_FALLBACK if os.access(PTXAS_FALLBACK, os.X_OK) else None)
    if found is None:
        pytest.fail("ptxas not found on PATH nor at /usr/local/bin/ptxas: install the CUDA "
                    "toolkit's ptxas (CUDA >= 12.0) to validate the PTX backend")
    return found


def _ptxas(ptxas: str, path: Path, arch: str = "sm_90a") -> tuple[int, str]:
    r = subprocess.run([ptxas, f"-arch={arch}", str(path), "-o", os.devnull],
                       capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def _assemble_clean(ptxas: str, paths: list[Path], arch: str = "sm_90a") -> list[str]:
    """ptxas on all `paths` in one process (it takes several input files, as one compilation
    unit: their kernels' names must differ); when it fails or says anything, each file again
    alone, to name the culprits. [] when all are clean."""
    r = subprocess.run([ptxas, f"-arch={arch}", *map(str, paths), "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode == 0 and not (r.stdout + r.stderr).strip():
        return []
    bad = [f"{p.name}: rc={rc}\n{out}" for p in paths for rc, out in [_ptxas(ptxas, p, arch)]
           if rc or out]
    return bad or [f"ptxas on all files: rc={r.returncode}\n{r.stdout}{r.stderr}"]


def test_every_emitted_ptx_assembles(tmp_path: Path) -> None:
    ptxas = find_ptxas()
    cases = example_cases() + fragment_cases(60) + elementwise_cases() + wgmma_cases()
    paths = []
    for c in cases:
        p = tmp_path / f"{c.name}.ptx"
        p.write_text(compile_case(c))
        paths.append(p)
    bad = _assemble_clean(ptxas, paths)
    assert not bad, "ptxas rejected or warned about:\n" + "\n".join(bad)
    assert len(paths) >= 60


def test_sm80_target_assembles(tmp_path: Path) -> None:
    ptxas = find_ptxas()
    for c in example_cases():
        p = tmp_path / f"{c.name}_sm80.ptx"
        text = compile_case(c, target="sm_80")
        assert ".target sm_80" in text and ".version 7.0" in text
        p.write_text(text)
        rc, out = _ptxas(ptxas, p, "sm_80")
        assert rc == 0 and not out, out


EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.mlir"))
VK_PIPELINE = ["pipeline-coop-loads{stages=2}", "distribute-coop-workgroup",
               "legalize-coop-sizes{target=sm90a-ptx flexible=false}"]
STAGED_ONLY = {"sparse_gemm_f16_wg", "sparse_gemm_f16_tiles_wg"}
"""2:4 products of 128 rows: the warp-specialized wgmma pipeline takes them (one consumer
warpgroup per 64 rows); op by op, sparse_mma.mma_sp runs on one warpgroup of 64 rows."""


def _legalized_route(stem: str) -> list[str]:
    """The example legalized for sm90a-ptx in the pipeline its PTX route takes
    (tests/test_legalize_examples.py checks the pass itself): the Workgroup-tile GEMMs (*_wg)
    staged after legalize-coop-sizes, the Vulkan Workgroup GEMMs (*_vk) staged and distributed
    over subgroups before it. What the PTX target description calls native is what the PTX
    backend takes."""
    before, after = [], []
    if stem.endswith("_wg"):
        after = ["pipeline-coop-loads{stages=4}"]
    elif stem.endswith("_vk") and "_coopmat2" not in stem:
        before = ["pipeline-coop-loads{stages=2}", "distribute-coop-workgroup"]
    return ["fold-tensor-views", *before, "legalize-coop-sizes{target=sm90a-ptx}", *after]


def _pipelines(ex: Path) -> list[list[str]]:
    """The pass lists before convert-coop-to-ptx an example is assembled with: as written and
    after fold-tensor-views (op by op), and the pipeline its header or docs/ptx.md gives it:
    the Workgroup-tile GEMMs (*_wg) staged for the wgmma pipeline, the Vulkan-style *_vk
    GEMMs through their Vulkan pipeline's first passes (staged, distributed over subgroups,
    legalized to mma.sync tiles: the op-by-op staged path); and `_legalized_route`, unless
    legalize-coop-sizes refuses the example for sm90a-ptx (LEGALIZE_REFUSED, whose refusals
    tests/test_legalize_examples.py checks)."""
    from test_legalize_examples import LEGALIZE_REFUSED

    out = [] if ex.stem in STAGED_ONLY else [[], ["fold-tensor-views"]]
    if ex.stem.endswith("_wg"):
        out.append(["pipeline-coop-loads{stages=4}"])
    elif ex.stem.endswith("_vk") and "_coopmat2" not in ex.stem:
        out.append(VK_PIPELINE)
    if "sm90a-ptx" not in LEGALIZE_REFUSED.get(ex.name, ((),))[0]:
        out.append(_legalized_route(ex.stem))
    return out


def test_examples_are_there() -> None:
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_assembles(tmp_path: Path, ex: Path) -> None:
    """Every file in examples/ through convert-coop-to-ptx and ptxas -arch=sm_90a, clean, in
    each of its `_pipelines`: the GEMMs (f16, bf16, s8; subgroup and Workgroup scope, the Arm
    blocked layouts), sparse, and the cooperative-matrix-2 / tensor-addressing ones. A route
    whose IR before convert-coop-to-ptx is that of an earlier one (legalize-coop-sizes leaves
    most examples as they are) is assembled once: the lowering is a function of its input."""
    from coopdialect.ptx import emit_ptx
    from coopdialect.runtime.device import lower

    ptxas = find_ptxas()
    module = parsed.parse(ex.read_text(), str(ex))
    seen_ir, seen, paths, routes = set(), set(), [], {}
    for i, passes in enumerate(_pipelines(ex)):
        before = lower(module, ",".join(passes), "")
        ir = str(before)
        if ir in seen_ir:
            continue  # nothing to fold: the same IR gives the same PTX (the lowering is a function)
        seen_ir.add(ir)
        text = emit_ptx(lower(before, None, "convert-coop-to-ptx"))
        if text in seen:
            continue
        seen.add(text)
        p = tmp_path / f"{ex.stem}_{i}.ptx"
        p.write_text(text)
        paths.append(p)
        routes[p] = ",".join(passes) or "as written"
    # one file at a time: the variants' kernels have the same name
    bad = [f"{p.name} ({routes[p]}): rc={rc}\n{out}" for p in paths for rc, out in [_ptxas(ptxas, p)]
           if rc or out]
    assert not bad, "ptxas rejected or warned about:\n" + "\n".join(bad)


@pytest.mark.parametrize("stem", sorted(STAGED_ONLY))
def test_staged_only_examples_are_refused_op_by_op(stem: str) -> None:
    """Op by op, the 128-row 2:4 products are one located line that names the way out."""
    from coopdialect import api
    from coopdialect.diagnostics import format_error

    ex = Path(__file__).resolve().parents[1] / "examples" / f"{stem}.mlir"
    m = parsed.parse(ex.read_text(), str(ex))
    with pytest.raises(Exception) as e:
        api.run_pipeline(m, "convert-coop-to-ptx")
    line = format_error(e.value)
    assert line.startswith(f"{ex}:") and "\n" not in line
    assert "stage its K loop (pipeline-coop-loads)" in line
