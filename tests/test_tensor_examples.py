"""The tensor-addressing examples, interpreted and compared with numpy (integer data, so every
result is exact), before and after fold-tensor-views."""

from __future__ import annotations

import os

import numpy as np
import pytest

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import run_kernel
from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass

EX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples")


def _module(name: str, fold: bool):
    path = os.path.join(EX, name)
    ctx = make_context()
    m = LocatingParser(ctx, open(path).read(), path).parse_module()
    m.verify()
    if fold:
        FoldTensorViewsPass().apply(ctx, m)
        m.verify()
    return m


@pytest.mark.parametrize("fold", [False, True])
def test_gemm_coopmat2(fold):
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    Bt = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    C = np.zeros((256, 256), np.float32)
    run_kernel(_module("gemm_coopmat2_f16.mlir", fold), "gemm_coopmat2", [A, Bt, C], (2, 2, 1))
    assert np.array_equal(C, A.astype(np.float32) @ Bt.astype(np.float32).T)


@pytest.mark.parametrize("fold", [False, True])
def test_conv_patch(fold):
    rng = np.random.default_rng(1)
    img = rng.integers(-100, 100, (64, 64)).astype(np.float16)
    o1 = np.zeros((64, 64), np.float16)
    o2 = np.zeros((64, 64), np.float16)
    run_kernel(_module("conv_patch_clamped.mlir", fold), "conv_patch", [img, o1, o2], (4, 4, 1))
    ys = np.arange(64)
    for ty in range(4):
        for tx in range(4):
            yy = ty * 16 - 1 + np.arange(16)
            xx = tx * 16 - 1 + np.arange(16)
            edge = img[np.clip(yy, 0, 63)[:, None], np.clip(xx, 0, 63)[None, :]]
            const = np.where(((yy < 0)[:, None]) | ((xx < 0)[None, :]), np.float16(1.0),
                             img[np.clip(yy, 0, 63)[:, None], np.clip(xx, 0, 63)[None, :]])
            assert np.array_equal(o1[ty * 16:ty * 16 + 16, tx * 16:tx * 16 + 16], edge)
            assert np.array_equal(o2[ty * 16:ty * 16 + 16, tx * 16:tx * 16 + 16], const)
    del ys


@pytest.mark.parametrize("fold", [False, True])
def test_softmax_rows(fold):
    rng = np.random.default_rng(2)
    X = rng.integers(-50, 50, (64, 16)).astype(np.float32)
    Y = np.zeros_like(X)
    P = np.zeros((32, 8), np.float32)
    run_kernel(_module("softmax_rows.mlir", fold), "softmax_rows", [X, Y, P], (1, 4, 1))
    s = X - X.max(1, keepdims=True)
    assert np.array_equal(Y, (s / (-s).sum(1, keepdims=True)).astype(np.float32))
    assert np.array_equal(P, X.reshape(32, 2, 8, 2).sum((1, 3)))


@pytest.mark.parametrize("name,kernel,tile", [
    ("gemm_f16_coopmat2_vk.mlir", "gemm_f16_coopmat2_vk", (128, 256)),
    ("gemm_s8_coopmat2_vk.mlir", "gemm_s8_coopmat2_vk", (256, 128))])
def test_vulkan_coopmat2_gemm_examples(name, kernel, tile, tmp_path):
    """The Vulkan benchmark's coopmat2 GEMMs (written at 8192³) at 512³: the interpreter equals
    numpy before and after fold-tensor-views (s8 over the full range: wrapping s32 sums), and
    the compiled module passes spirv-val with tensor-addressed loads and, for s8, the signedness
    operands on the multiply-add."""
    import subprocess

    from coopdialect import api

    s, (tm, tn) = 512, tile
    text = open(os.path.join(EX, name)).read().replace("8192", str(s))
    rng = np.random.default_rng(4)
    if "f16" in name:
        a = rng.integers(-4, 5, (s, s)).astype(np.float16)
        b = rng.integers(-4, 5, (s, s)).astype(np.float16)
        ref = a.astype(np.float32) @ b.astype(np.float32)
    else:
        a = rng.integers(-128, 128, (s, s), dtype=np.int8)
        b = rng.integers(-128, 128, (s, s), dtype=np.int8)
        ref = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    for pipeline in ("", "fold-tensor-views"):
        m = api.parse(text, name)
        if pipeline:
            api.run_pipeline(m, pipeline)
        c = np.full((s, s), 7, ref.dtype)  # poisoned: every element must be written
        api.run_kernel(m, kernel, [a, b, c], (s // tn, s // tm, 1))
        assert np.array_equal(c, ref), pipeline
    m = api.parse(text, name)
    api.run_pipeline(m, "fold-tensor-views")
    spv = tmp_path / "k.spv"
    spv.write_bytes(api.compile_to_spirv(m))
    subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(spv)], check=True)
    dis = subprocess.run(["spirv-dis", str(spv)], check=True, capture_output=True, text=True).stdout
    assert dis.count("OpCooperativeMatrixLoadTensorNV") == 2
    if "s8" in name:
        assert "MatrixASignedComponentsKHR|MatrixBSignedComponentsKHR" in dis
