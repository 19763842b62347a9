"""coopdialect.kernels: each generator's kernel computes numpy's product in the interpreter at a
size that is not the example's, reproduces its checked-in example, and refuses sizes that are
not multiples of its tile with a ValueError. (The Workgroup-tile GEMMs: test_gemm_wg_examples.py;
`workgroup_gemm_ir`: test_distribute_coop_workgroup.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopdialect import api
from coopdialect.interpreter.sparse_mma import compress
from coopdialect.kernels import coopmat2_gemm, gemm_subgroup, gemm_tiles, sparse_gemm

ROOT = Path(__file__).resolve().parents[1]


def _body(text: str) -> str:
    return text[text.index("!a = "):]


def test_subgroup_gemm_is_the_example_at_its_size():
    example = (ROOT / "examples/gemm_f16.mlir").read_text()
    assert _body(gemm_subgroup.gemm_f16_ir(128, 128, 256)) == _body(example)


def test_subgroup_gemm_equals_numpy():
    m, n, k = 64, 128, 48
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = rng.integers(-8, 9, (m, n)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    api.run_kernel(api.parse(gemm_subgroup.gemm_f16_ir(m, n, k, "g")), "g", [a, b, c],
                   gemm_subgroup.grid(m, n))
    assert np.array_equal(c, want.astype(np.float32))


def test_sparse_gemm_is_the_example_at_its_size():
    assert sparse_gemm.sparse_gemm_ir(256, 256, 256) == \
        (ROOT / "examples/sparse_gemm_f16.mlir").read_text()


def test_sparse_gemm_equals_numpy():
    m, n, k, tn = 64, 64, 128, 32
    rng = np.random.default_rng(4)
    dense = sparse_gemm.random_sparse_24(rng, m, k)
    assert ((dense.reshape(m, k // 4, 4) != 0).sum(axis=2) <= 2).all()
    vals, meta = compress(None, dense, 4)
    bt = rng.integers(-3, 4, (n, k)).astype(np.float16)
    c = rng.integers(-8, 9, (m, n)).astype(np.float32)
    want = dense.astype(np.float64) @ bt.T.astype(np.float64) + c
    api.run_kernel(api.parse(sparse_gemm.sparse_gemm_ir(m, n, k, tn, 64)), "sparse_gemm_f16",
                   [vals, meta, bt, c], sparse_gemm.grid(m, n, tn))
    assert np.array_equal(c, want.astype(np.float32))


def test_coopmat2_gemm_equals_numpy():
    m, n, k = 128, 256, 64
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    api.run_kernel(api.parse(coopmat2_gemm.coopmat2_gemm_ir(m, n, k, clamp="ClampToEdge")),
                   "gemm_coopmat2", [a, b, c], coopmat2_gemm.grid(m, n))
    assert np.array_equal(c, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("make", [
    lambda: gemm_subgroup.gemm_f16_ir(96, 64, 16),
    lambda: gemm_subgroup.gemm_f16_ir(64, 64, 8),
    lambda: sparse_gemm.sparse_gemm_ir(64, 128, 96),
    lambda: sparse_gemm.sparse_gemm_ir(64, 128, 64, kstep=48),
    lambda: coopmat2_gemm.coopmat2_gemm_ir(128, 128, 64),
    lambda: gemm_tiles.gemm_wg_ir(128, 256, 32),
    lambda: gemm_tiles.gemm_wg_ir(128, 256, 64, "f32"),
    lambda: gemm_tiles.sparse_gemm_wg_ir(128, 256, 64, "s8"),
    lambda: gemm_tiles.sparse_gemm_wg_ir(128, 256, 128, "f32"),
    lambda: gemm_tiles.workgroup_gemm_ir(64, 64, 64, 64, 48, 16, 128),
    lambda: gemm_tiles.workgroup_gemm_ir(0, 64, 64, 64, 64, 16, 128),
    lambda: sparse_gemm.random_sparse_24(np.random.default_rng(0), 4, 6),
])
def test_bad_sizes_and_types_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


def test_gemm_tiles_command_line():
    run = [sys.executable, "-m", "coopdialect.kernels.gemm_tiles"]
    r = subprocess.run(run + ["128", "256", "256", "f16", "--sparse", "--meta-tiles"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == gemm_tiles.sparse_gemm_wg_ir(128, 256, 256,
                                                                          meta_tiles=True)
    r = subprocess.run(run + ["100", "256", "64"], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("gemm_tiles: error: M % 128") and r.stderr.count("\n") == 1
