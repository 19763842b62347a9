"""The coop interpreter agrees bit for bit with the independent numpy model of the PTX cases.

tests/gpu/test_gpu_ptx.py takes the GPU's expected outputs from the interpreter and checks them
against the numpy model of tests/ptx_cases.py first; this guards that agreement in
CI on a small sample of each kind: mma (every MMA_TYPES entry: f16/bf16/s8/u8, both accumulate
types, SaturatingAccumulation), element-wise ops (float, signed, unsigned, scalar), conversions
(float<->int both directions, narrowing, bitcast) and one wgmma (Workgroup-scope) GEMM.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from ptx_cases import (CONVERSIONS, MMA_TYPES, ModelMismatch, check_model,
                                             convert_case, elementwise_case, interpreter_outputs,
                                             mma_case, wgmma_case)


def _gens(seed: int):
    return random.Random(seed), np.random.default_rng(seed)


@pytest.mark.parametrize("index", range(len(MMA_TYPES)),
                         ids=[f"{a}x{b}->{c}{f.strip()}" for a, b, c, f, _ in MMA_TYPES])
def test_mma_cases(index: int) -> None:
    case = mma_case(0, *_gens(index), MMA_TYPES[index], ksteps=2)
    check_model(case, interpreter_outputs(case))


@pytest.mark.parametrize("which", [("fdiv", "f16"), ("fadd", "bf16"), ("fmul", "f32"),
                                   ("matrix_times_scalar", "bf16"), ("sdiv", "si8"),
                                   ("udiv", "ui32"), ("imul", "ui8"), ("snegate", "si32")],
                         ids="-".join)
def test_elementwise_cases(which) -> None:
    case = elementwise_case(0, *_gens(31), which)
    check_model(case, interpreter_outputs(case))


@pytest.mark.parametrize("which", [CONVERSIONS[i] for i in (0, 2, 5, 6, 10, 13, 16)],
                         ids=lambda w: f"{w[0]}-{w[1]}-{w[2]}")
def test_convert_cases(which) -> None:
    case = convert_case(0, *_gens(17), which)
    check_model(case, interpreter_outputs(case))


def test_wgmma_case() -> None:
    case = wgmma_case(9, "bf16", 24, 32, "ColumnMajor", "RowMajor")
    check_model(case, interpreter_outputs(case))


def test_a_disagreement_names_the_case() -> None:
    case = convert_case(0, *_gens(17), CONVERSIONS[0])
    out = interpreter_outputs(case)
    (i, buf), = out.items()
    buf[case.buffers[i].size // 2] += buf.dtype.type(1)
    with pytest.raises(ModelMismatch, match=case.name):
        check_model(case, out)
