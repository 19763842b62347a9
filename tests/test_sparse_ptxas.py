"""Every variant of `wgmma.mma_async.sp` that convert-coop-to-ptx emits goes through ptxas.

Variants (tests/sparse_cases.py `ptxas_variants`): every (.atype, .btype, .dtype) of the
instruction (f16->f16/f32, bf16, tf32, e4m3/e5m2 in all four mixes -> f16/f32, s8/u8 in all four
mixes -> s32) x SS and RS x three N per type (8, 40, 256 for floats; 24, 48, 256 for integers),
and each of {sp-sel 1 where it exists, scale-d 0, negation (floats) or .satfinite (integers),
imm-trans-b / imm-trans-a (f16/bf16, SS only for A)} with SS and with RS at one of the N (which
N turns with the option and the type combination), with 1-2 chained instructions.
All kernels of one type combination form one module; `ptxas -arch=sm_90a` must exit 0 and print
NOTHING (C7519/C7517 infos = a missing wgmma fence/wait). A missing ptxas is a failure.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from coopdialect import api
from sparse_cases import kernel_ir, ptxas_variants, type_combos
from validators import ptxas as find_ptxas


def _module(combo) -> tuple[str, list]:
    vs = [v for v in ptxas_variants() if (v.at, v.bt, v.dt) == combo]
    text = "\n".join(kernel_ir(v, f"k{i}") for i, v in enumerate(vs))
    return api.compile_to_ptx(api.parse(text, f"{combo}")), vs


def test_every_type_combination_is_a_variant() -> None:
    assert len(type_combos()) == 16
    vs = ptxas_variants()
    assert {(v.at, v.bt, v.dt) for v in vs} == set(type_combos())
    for combo in type_combos():
        mine = [v for v in vs if (v.at, v.bt, v.dt) == combo]
        ns = {v.n for v in mine}
        # mine[0] is a variant without options: those equal to it but for N and form
        plain = {(v.n, v.rs) for v in mine if v == replace(mine[0], n=v.n, rs=v.rs, steps=v.steps)}
        assert len(ns) == 3 and plain == {(n, rs) for n in ns for rs in (False, True)}, combo
    # every option meets both forms, and every N of its family over the combinations
    for field, value in (("sel", 1), ("scale_d", False), ("neg_a", True), ("satfinite", True),
                         ("trans_b", True), ("trans_a", True)):
        with_it = [v for v in vs if getattr(v, field) == value]
        assert with_it and {v.rs for v in with_it} == ({False} if field == "trans_a" else
                                                       {False, True}), field
        for ints in (False, True):
            got = {v.n for v in with_it if (v.dt == "s32") == ints}
            assert not got or got == ({24, 48, 256} if ints else {8, 40, 256}), (field, got)


# one test per type combination, so that parallel workers share them out
@pytest.mark.parametrize("combo", type_combos(), ids="-".join)
def test_every_variant_assembles(tmp_path: Path, combo) -> None:
    ptx, vs = _module(combo)
    assert ptx.count("wgmma.mma_async.sp.sync.aligned") >= len(vs)
    path = tmp_path / "m.ptx"
    path.write_text(ptx)
    r = subprocess.run([find_ptxas(), "-arch=sm_90a", str(path), "-o", os.devnull],
                       capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 0 and not out, f"{combo}: rc={r.returncode}: {out[:2000]}"


def test_versions() -> None:
    """.version 8.2 for wgmma.sp; 8.4 for the .s8.u8 / .u8.s8 mixes (PTX ISA notes)."""
    from sparse_cases import Variant
    ptx = api.compile_to_ptx(api.parse(kernel_ir(Variant("s8", "s8", "s32")), "x"))
    assert ".version 8.2" in ptx and ".target sm_90a" in ptx
    ptx = api.compile_to_ptx(api.parse(kernel_ir(Variant("s8", "u8", "s32")), "x"))
    assert ".version 8.4" in ptx


@pytest.mark.parametrize("target", ["sm_90", "sm_80"])
def test_target_gate(target: str) -> None:
    from xdsl.utils.exceptions import DiagnosticException

    from sparse_cases import Variant
    with pytest.raises(DiagnosticException, match="sm_90a"):
        api.compile_to_ptx(api.parse(kernel_ir(Variant("f16", "f16", "f32")), "x"), target)
