"""bf16 through SPIR-V (SPV_KHR_bfloat16): `OpTypeFloat 16 BFloat16KHR`, capabilities
BFloat16TypeKHR / BFloat16CooperativeMatrixKHR, only for a target whose description says
`"bfloat16": true`. Checked by spirv-val (SPIRV-Tools 2026.4 knows the extension), the reader
(writer -> reader -> writer byte-identical) and the interpreter (the raised module computes what
the source did, bit for bit)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from coopdialect import api
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.writer import serialize
from coopdialect.targets import TargetError, parse_target, get_target
from coopdialect.kernels.gemm_tiles import gemm_wg_ir
from validators import spirv_dis, spirv_val

# A KHR subgroup bf16 GEMM with a bf16 result: loads, a multiply-add, conversions both ways, a
# splat of a bf16 constant: every bf16 use SPV_KHR_bfloat16 allows.
SUBGROUP = """
!a = !coop.matrix<16x16xbf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xbf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
!d = !coop.matrix<16x16xbf16, Subgroup, MatrixAcc>
func.func @gemm_bf16(%A: memref<16x32xbf16>, %B: memref<32x16xbf16>, %C: memref<16x16xbf16>,
                     %D: memref<16x16xbf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %off = arith.constant 256 : index
  %half = arith.constant 0.5 : bf16
  %c = coop.load %C[%c0], %c16, RowMajor : memref<16x16xbf16> -> !d
  %cf = coop.f_convert %c : !d -> !c
  %a0 = coop.load %A[%c0], %c32, RowMajor : memref<16x32xbf16> -> !a
  %b0 = coop.load %B[%c0], %c16, RowMajor : memref<32x16xbf16> -> !b
  %a1 = coop.load %A[%c16], %c32, RowMajor : memref<16x32xbf16> -> !a
  %b1 = coop.load %B[%off], %c16, ColumnMajor : memref<32x16xbf16> -> !b
  %p = coop.mul_add %a0, %b0, %cf : !a, !b, !c -> !c
  %q = coop.mul_add %a1, %b1, %p : !a, !b, !c -> !c
  %r = coop.f_convert %q : !c -> !d
  coop.store %r, %D[%c0], %c16, RowMajor : !d, memref<16x16xbf16>
  %s = coop.composite_construct %half : bf16 -> !d
  coop.store %s, %C[%c0], %c16, RowMajor : !d, memref<16x16xbf16>
  func.return
}
"""


def _dis(data: bytes, tmp_path: Path) -> str:
    return spirv_dis(data, tmp_path)


@pytest.mark.parametrize("which", ["subgroup", "workgroup"])
def test_bf16_modules_are_valid_and_round_trip(which, tmp_path):
    src = SUBGROUP if which == "subgroup" else gemm_wg_ir(128, 256, 128, "bf16")
    data = api.compile_to_spirv(api.parse(src, f"{which}.mlir"))
    spirv_val(data, tmp_path, f"bf16_{which}.spv")
    text = _dis(data, tmp_path)
    assert "OpTypeFloat 16 BFloat16KHR" in text
    assert 'OpExtension "SPV_KHR_bfloat16"' in text
    # BFloat16CooperativeMatrixKHR implicitly declares BFloat16TypeKHR
    assert "OpCapability BFloat16CooperativeMatrixKHR" in text
    assert "Float16\n" not in text.replace("BFloat16", "")  # bf16 needs no Float16
    assert serialize(deserialize(data)) == data


def test_raised_bf16_module_computes_what_the_source_does(tmp_path):
    """write -> read -> raise-spirv-to-coop -> interpret: every output bit as the source IR's
    (random bf16 data: the products are exact in f32, the K sum rounds once per multiply-add in
    both, the conversions round to nearest even in both)."""
    bf = ml_dtypes.bfloat16

    def buffers():
        r = np.random.default_rng(7)
        return [r.standard_normal(s).astype(bf) for s in ((16, 32), (32, 16), (16, 16))] + \
            [np.zeros((16, 16), bf)]

    want = buffers()
    api.run_kernel(api.parse(SUBGROUP, "s.mlir"), "gemm_bf16", want, (1, 1, 1))
    data = api.compile_to_spirv(api.parse(SUBGROUP, "s.mlir"))
    raised = api.read_spirv(data, "s.spv", raise_to_coop=True)
    got = [b.reshape(-1) for b in buffers()]  # the raised kernel takes memref<?xbf16>
    (name,) = [op.sym_name.data for op in raised.walk() if op.name == "func.func"
               and "coop.workgroup_size" in op.attributes]
    api.run_kernel(raised, name, got, (1, 1, 1))
    for w, g in zip(want, got):
        assert w.reshape(-1).view(np.uint16).tolist() == g.view(np.uint16).tolist()
    assert not np.array_equal(want[3].view(np.uint16), np.zeros((16, 16), np.uint16))
    assert np.all(want[2].astype(np.float32) == 0.5)


def test_bf16_needs_a_target_that_has_it():
    m = api.parse(SUBGROUP, "s.mlir")
    with pytest.raises(Exception, match="which target 'arm-mali' does not have"):
        api.run_pipeline(m, "convert-coop-to-spirv{target=arm-mali}")


def test_target_descriptions_say_which_devices_have_bf16():
    assert get_target("h200-vulkan").bfloat16 and not get_target("arm-mali").bfloat16
    data = {"name": "t", "description": "d", "source": "s", "api": "vulkan", "subgroup_size": 32,
            "layouts": ["RowMajor"], "flexible_dimensions": [], "tensor_addressing": False,
            "cooperative_matrix": [{"m": 16, "n": 16, "k": 16, "a": "bf16", "b": "bf16", "c": "f32",
                                    "result": "f32", "saturating": False, "scope": "Subgroup"}]}
    with pytest.raises(TargetError, match=r"\$\.bfloat16: a Vulkan device with bf16 cooperative "
                                          "matrices has VK_KHR_shader_bfloat16"):
        parse_target(data)
    assert parse_target({**data, "bfloat16": True}).bfloat16


def test_nv_flavor_refuses_bf16_matrices(tmp_path, capsys):
    """SPV_KHR_bfloat16's BFloat16CooperativeMatrixKHR is for OpTypeCooperativeMatrixKHR only (and
    VK_NV_cooperative_matrix lists no bf16 component type): flavor=nv refuses at the first op."""
    from coopdialect.tools.coop_opt import main

    src = tmp_path / "s.mlir"
    src.write_text(SUBGROUP)
    out = tmp_path / "nv.spv"
    with pytest.raises(SystemExit) as e:
        main([str(src), "-p", "convert-coop-to-spirv{flavor=nv}", "-t", "spirv", "-o", str(out)])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{src}:13:3: error: 'coop.load' op" in err
    assert "bf16 cooperative matrices need flavor=khr" in err and not out.exists()


ROOT = Path(__file__).resolve().parent.parent
_M, _N, _K = 130, 260, 70  # the any-shape kernels' tiles cut on every edge


def _any_shape(text: str) -> tuple[str, list, tuple[int, int, int]]:
    r = np.random.default_rng(11)
    bf = ml_dtypes.bfloat16
    bufs = [r.standard_normal((_M, _K)).astype(bf), r.standard_normal((_N, _K)).astype(bf),
            np.zeros((_M, _N), bf)]
    if "%bias" in text:
        bufs.append(r.standard_normal(_N).astype(bf))
    return text, bufs + [np.int32(_M), np.int32(_N), np.int32(_K)], (-(-_N // 256), -(-_M // 128), 1)


def _case(which: str):
    if which == "gemm_bf16_wg":  # examples/gemm_bf16_wg.mlir's generator at one tile
        r = np.random.default_rng(12)
        bf = ml_dtypes.bfloat16
        return gemm_wg_ir(128, 256, 128, "bf16"), [r.standard_normal((128, 128)).astype(bf),
                                                   r.standard_normal((256, 128)).astype(bf),
                                                   np.zeros((128, 256), bf)], (1, 1, 1)
    if which == "gemm_any_bf16_plain":
        from coopdialect.kernels.gemm import gemm_ir
        return _any_shape(gemm_ir("bf16"))
    return _any_shape((ROOT / "examples/gemm_any_bf16.mlir").read_text())


@pytest.mark.parametrize("which", ["gemm_bf16_wg", "gemm_any_bf16_plain", "gemm_any_bf16"])
def test_raised_bf16_examples_compute_what_the_source_does(which, tmp_path):
    """The bf16 example kernels (Workgroup-scope coopmat2 GEMM; any-shape GEMM through clamped
    tensor layouts, with and without the bias + GELU epilogue) written to SPIR-V (spirv-val),
    read back, raised and interpreted: the same bf16 output as the source IR. Bit for bit without
    GELU; with it, within erf's bound and one bf16 step, since SPIR-V has no erf and the module
    carries an f32 approximation of it (coopdialect/math_bounds.py; tests/test_math_raise.py)
    where the interpreter's erf is correctly rounded."""
    text, bufs, grid = _case(which)
    source = api.parse(text, f"{which}.mlir")
    (kernel,) = [op.sym_name.data for op in source.walk() if op.name == "func.func"
                 and "coop.workgroup_size" in op.attributes]
    want = [b.copy() for b in bufs]
    api.run_kernel(source, kernel, want, grid)
    data = api.compile_to_spirv(api.parse(text, f"{which}.mlir"))
    spirv_val(data, tmp_path, f"{which}.spv")
    raised = api.read_spirv(data, f"{which}.spv", raise_to_coop=True)
    got = [b.reshape(-1).copy() if isinstance(b, np.ndarray) else b for b in bufs]
    api.run_kernel(raised, kernel, got, grid)
    d_want, d_got = want[2].reshape(-1), got[2]
    assert np.count_nonzero(d_want.view(np.uint16)) > 0.99 * d_want.size  # every tile written
    if which != "gemm_any_bf16":
        assert d_want.view(np.uint16).tolist() == d_got.view(np.uint16).tolist()
    else:
        # |gelu' - gelu| <= |x|/2 * |erf' - erf| <= |x| 2^-22 (math_bounds: absolute 2^-21 for
        # |x/sqrt 2| >= 1, relative below) before the f32 -> bf16 rounding, which may then round the
        # two apart by one bf16 step; x = A @ B + bias (f64 here: a bound, not the kernel's value)
        a, bt, bias = (b.astype(np.float64) for b in (bufs[0], bufs[1], bufs[3]))
        x = np.abs(a @ bt.T + bias).reshape(-1)
        w, g = d_want.astype(np.float64), d_got.astype(np.float64)
        step = 2.0 ** (np.floor(np.log2(np.maximum(np.maximum(abs(w), abs(g)), 2.0 ** -126))) - 7)
        assert np.all(np.abs(w - g) <= step + x * 2.0 ** -20)
        assert np.count_nonzero(w != g) < 0.05 * w.size  # most outputs round the same
