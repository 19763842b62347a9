"""The warp-specialized wgmma pipeline (coopdialect/ptx/pipelined.py) through ptxas, its launch
description against the kernel's memrefs, and its refusals.

Its numbers are checked on the GPU (benchmarks/bench_ptx.py: bit-exact against the interpreter
at 512^3 and against torch on integer data at 4096/8192); here every variant must assemble with
`ptxas -arch=sm_90a -v` with no spill and no warning or C75xx info, so the emitted fences and
register budgets are right.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from coopdialect import api
from coopdialect.ptx.launch import describe
from coopdialect.ptx.printer import emit_ptx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "gpu"))
from gen_gemm_wg import gemm_wg_ir, sparse_gemm_wg_ir  # noqa: E402

from test_ptx_ptxas import find_ptxas  # noqa: E402


def lower(ir: str, stages: int, extra: str = ""):
    m = api.parse(ir)
    api.run_pipeline(m, f"pipeline-coop-loads{{stages={stages}}},convert-coop-to-ptx{extra}")
    return m


@pytest.mark.parametrize("dt,stages,bm,bn", [("f16", 4, 128, 256), ("bf16", 3, 128, 256),
                                             ("f16", 2, 64, 128), ("bf16", 4, 192, 128)])
def test_pipeline_assembles_without_spills(tmp_path: Path, dt: str, stages: int, bm: int,
                                           bn: int) -> None:
    m = lower(gemm_wg_ir(2 * bm, 2 * bn, 512, dt, TM=bm, TN=bn), stages)
    p = tmp_path / "k.ptx"
    p.write_text(emit_ptx(m))
    r = subprocess.run([find_ptxas(), "-arch=sm_90a", "-v", str(p), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "0 bytes spill stores, 0 bytes spill loads" in out, out
    noise = [ln for ln in out.splitlines()
             if not re.match(r"ptxas info\s+: (Compiling|Function properties|Used|Compile time|\d+ bytes gmem)", ln)
             and "bytes stack frame" not in ln]
    assert not noise, out


@pytest.mark.parametrize("dt,stages", [("f16", 4), ("bf16", 3), ("e4m3", 4), ("s8", 2)])
def test_sparse_pipeline_assembles_without_spills(tmp_path: Path, dt: str, stages: int) -> None:
    m = lower(sparse_gemm_wg_ir(256, 512, 512, dt), stages)
    text = emit_ptx(m)
    assert text.count("wgmma.mma_async.sp.sync.aligned") == 2  # K step / instruction K
    # no sparse batch stays in flight: the sp-meta registers are read while wgmma.sp runs
    assert "wgmma.wait_group.sync.aligned 1;" not in text
    p = tmp_path / "k.ptx"
    p.write_text(text)
    r = subprocess.run([find_ptxas(), "-arch=sm_90a", "-v", str(p), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "0 bytes spill stores" in r.stdout + r.stderr, r.stdout + r.stderr
    (k,) = describe(m)["kernels"]
    swz = {p["arg"]: p["swizzle"] for p in k["params"] if p["kind"] == "tensor_map"}
    # compressed A rows are K/2 values (64 bytes for f16 K=64 and for 8-bit K=128): 64B swizzle;
    # metadata bytes unswizzled; B rows 128 bytes
    assert swz == {0: "64B", 1: "NONE", 2: "128B"}


def test_too_many_stages_refused() -> None:
    m = api.parse(gemm_wg_ir(128, 256, 1024, "f16"))
    with pytest.raises(Exception) as e:
        api.run_pipeline(m, "pipeline-coop-loads{stages=5},convert-coop-to-ptx")
    assert "more than the 232448" in str(e.value)


def test_launch_description_matches_the_kernel() -> None:
    M, N, K = 256, 512, 320
    m = lower(gemm_wg_ir(M, N, K, "f16"), 4)
    (k,) = describe(m)["kernels"]
    assert k["block"] == [384, 1, 1]  # one producer + two consumer warpgroups for 128 rows
    # four slots of A (128x64) and B (256x64) f16, 4 full + 4 empty mbarriers, alignment slack
    assert k["dynamic_shared_bytes"] == 4 * (128 * 64 + 256 * 64) * 2 + 8 * 8 + 1024
    a, bt, d = k["params"]
    assert a == {"kind": "tensor_map", "arg": 0, "data_type": "FLOAT16", "global_dims": [K, M],
                 "global_strides": [K * 2], "box_dims": [64, 128], "element_strides": [1, 1],
                 "interleave": "NONE", "swizzle": "128B", "l2_promotion": "L2_256B",
                 "oob_fill": "NONE"}
    assert bt["global_dims"] == [K, N] and bt["box_dims"] == [64, 256]
    assert d == {"kind": "pointer", "arg": 2}
    text = emit_ptx(m)
    # the .entry parameters are in the description's order and kinds
    params = re.findall(r"\.param (?:\.align 64 \.b8 (\w+)\[128\]|\.u64 (\w+))", text)
    assert [bool(t) for t, _ in params] == [True, True, False]
    assert json.loads(json.dumps(k)) == k


def test_staged_kernel_refused_on_sm80(tmp_path: Path) -> None:
    src = tmp_path / "k.mlir"
    src.write_text(gemm_wg_ir(128, 256, 128, "f16"))
    out = tmp_path / "k.ptx"
    r = subprocess.run([str(Path(sys.executable).parent / "coop-opt"), str(src), "-p",
                        "pipeline-coop-loads{stages=2},convert-coop-to-ptx{target=sm_80}",
                        "-t", "ptx", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 1 and not out.exists()
    line = r.stderr.strip()
    # before sm_90a the staged form lowers op by op into static shared memory, where the two
    # stages of a 128x256 tile (96 KB) do not fit
    assert "\n" not in line and "exceed the 48 KB of static shared memory" in line, line
    # located at the staged loop (the user's scf.for), not inside the message
    assert re.match(rf"{re.escape(str(src))}:\d+:\d+: error: ", line), line


def test_register_budget_checked() -> None:
    m = api.parse(gemm_wg_ir(128, 256, 128, "f16"))
    with pytest.raises(Exception) as e:
        api.run_pipeline(m, "pipeline-coop-loads{stages=2},convert-coop-to-ptx{consumer_registers=256}")
    assert "register budget" in str(e.value)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_subgroup_staged_kernel_lowers_op_by_op(tmp_path: Path, target: str) -> None:
    """Subgroup-scope staged kernels (and every staged kernel before sm_90a) take the op-by-op
    path: cp.async copies by every invocation, cp.async.wait_group + bar.sync, mma.sync."""
    src = (Path(__file__).resolve().parents[1] / "examples" / "gemm_f16_vk.mlir").read_text()
    m = api.parse(src.replace("8192", "256"))
    api.run_pipeline(m, "pipeline-coop-loads{stages=2},distribute-coop-workgroup,"
                        "legalize-coop-sizes{target=sm90a-ptx flexible=false},"
                        f"convert-coop-to-ptx{{target={target}}}")
    text = emit_ptx(m)
    assert f".target {target}" in text
    assert "cp.async.wait_group 0;" in text and "cp.async.commit_group;" in text
    assert "mma.sync.aligned.m16n8k16" in text and "cp.async.bulk" not in text
    assert re.search(r"\.shared \.align 16 \.b8 \w+\[\d+\];", text)
    p = tmp_path / "k.ptx"
    p.write_text(text)
    r = subprocess.run([find_ptxas(), "-arch=sm_90a", str(p), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr
