"""raise-spirv-to-coop on Workgroup (`shared`) variables and workgroup barriers: each shared
variable becomes a `coop.alloc_workgroup` buffer (natural layout), OpControlBarrier with
Workgroup execution scope `gpu.barrier`. tests/data/shared_exchange.comp: two subgroups trade
their products through shared memory, which only a real workgroup barrier makes right."""

from __future__ import annotations

import subprocess

from pathlib import Path

import numpy as np
from cli import run_coop_opt
from test_raise_spirv import raised
from test_spirv_read import glslang
from validators import ptxas, spirv_val

from coopdialect import api
from coopdialect.ptx.printer import emit_ptx

ROOT = Path(__file__).resolve().parents[1]
SRC = "tests/data/shared_exchange.comp"


def _model(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C_s = (A_{1-s} B)^T for the two 16-row halves of A (the shader's header)."""
    p = [a[16 * s:16 * s + 16].astype(np.float64) @ b.astype(np.float64) for s in range(2)]
    return np.concatenate([p[1].T, p[0].T]).astype(np.float32)


def test_subgroups_exchange_products_through_shared_memory():
    module, name = raised(glslang(SRC))
    text = str(module)
    assert "coop.alloc_workgroup : memref<512xf32, #coop.storage_class<Workgroup>>" in text
    assert text.count("gpu.barrier") == 1
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (32, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    c = np.zeros((32, 16), np.float32)
    api.run_kernel(module, name, [a.reshape(-1), b.reshape(-1), c.reshape(-1)], (1, 1, 1))
    np.testing.assert_array_equal(c, _model(a, b))


def test_the_raised_exchange_lowers_through_both_backends(tmp_path):
    module, _ = raised(glslang(SRC))
    spirv_val(api.compile_to_spirv(module.clone()), tmp_path, "exchange.spv")
    ptx = module.clone()
    api.run_pipeline(ptx, "convert-coop-to-ptx")
    f = tmp_path / "exchange.ptx"
    f.write_text(emit_ptx(ptx))
    r = subprocess.run([ptxas(), "-arch=sm_90a", str(f), "-o", str(tmp_path / "x.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_subgroup_barrier_is_refused_in_one_line(tmp_path):
    src = tmp_path / "subgroup_barrier.comp"
    src.write_text((ROOT / SRC).read_text().replace("    barrier();", "    subgroupBarrier();"))
    f = tmp_path / "shader.spv"
    f.write_bytes(glslang(str(src)))
    r = run_coop_opt([str(f), "-p", "raise-spirv-to-coop"])
    line = r.stderr.strip()
    assert r.returncode == 1 and "\n" not in line and line.startswith(f"{f}:0:"), line
    assert "a barrier of Execution scope Subgroup" in line, line
