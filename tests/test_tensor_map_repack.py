"""The host's repack of an operand whose tensor map would have a row stride the driver refuses
(cuTensorMapEncodeTiled: global strides are multiples of 16 bytes): the plan, against the
numbers of the product it serves, without a driver."""

from __future__ import annotations

import functools
import json

import pytest

from coopdialect import api
from coopdialect.ptx.launch import describe
from coopdialect.runtime.cuda_params import LaunchError, parse_launch, repack_plan, repacked


@functools.cache
def _launch_json(persistent: bool) -> str:
    module = api.parse_file("examples/gemm_any.mlir")
    p = "{persistent=true}" if persistent else ""
    api.run_pipeline(module, f"pipeline-coop-loads{{stages=4}},convert-coop-to-ptx{p}")
    return json.dumps(describe(module))


def _launch(persistent: bool = True):
    """A fresh launch description of gemm_any (the lowering, done once, is only read)."""
    return parse_launch(json.loads(_launch_json(persistent)))["gemm_f16"]


@pytest.mark.parametrize("m,n,k", [(4095, 4095, 4095), (100, 64, 9), (8, 8, 4097)])
def test_odd_k_repacks_both_operands_to_16_byte_rows(m, n, k):
    launch = _launch()
    a, bt, d = 0x10000, 0x20000000, 0x30000000
    plan = repack_plan(launch, [a, bt, d, m, n, k])
    # A is M x K and Bt is N x K, f16, row-major: rows of 2K bytes, a multiple of 16 only when
    # K is a multiple of 8
    assert [(r.src, r.rows, r.width, r.src_pitch, r.pitch) for r in plan] == [
        (a, m, 2 * k, 2 * k, -(-2 * k // 16) * 16), (bt, n, 2 * k, 2 * k, -(-2 * k // 16) * 16)]
    tmaps = [i for i, p in enumerate(launch.params) if p["kind"] == "tensor_map"]
    assert [r.param for r in plan] == tmaps
    for r in plan:
        q = repacked(launch.params[r.param], r)
        assert q["global_strides"] == [r.pitch] and r.pitch % 16 == 0 and r.pitch >= r.width
        assert r.bytes == r.rows * r.pitch


def test_aligned_k_needs_no_repack():
    launch = _launch()
    assert repack_plan(launch, [0, 0, 0, 4096, 4096, 4096]) == []
    assert repack_plan(launch, [0, 0, 0, 1000, 1000, 1000]) == []  # 2000 bytes = 125 * 16


def test_a_tensor_map_argument_also_written_through_a_pointer_is_not_repacked():
    launch = _launch()
    p = next(p for p in launch.params if p["kind"] == "tensor_map")
    launch.params.append({"kind": "pointer", "arg": p["arg"]})
    with pytest.raises(LaunchError, match="global_strides \\[8190\\] must be multiples of 16"):
        repack_plan(launch, [0, 0, 0, 64, 64, 4095])
