"""The shape-generic GEMM kernels (coopdialect.kernels.gemm) through the staged PTX pipeline:
tensor copies as bulk tensor copies with tensor maps sized at launch, persistent tiles of run-time
trip counts, split-K, the fused epilogue — ptxas-clean, launch descriptions that say what the IR
says, the refusals of layouts a bulk copy cannot express, and host expressions equal to what
the interpreter computes."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from coopdialect import api
from coopdialect.errors import CoopError, CoopWarning
from coopdialect.host_expr import eval_host_expr
from coopdialect.kernels.gemm import GemmConfig, gemm_ir, pick_config, splitk_ir
from coopdialect.ptx.host_values import host_expr
from coopdialect.ptx.launch import describe
from coopdialect.ptx.printer import emit_ptx
from validators import ptxas

CASES = [("f16", GemmConfig(128, 256, 64, 4, True), "none"),
         ("bf16", GemmConfig(64, 64, 64, 8, False, 4), "bias"),
         ("f16", GemmConfig(64, 128, 64, 6, True), "bias_gelu")]


def _lower(dtype, cfg, epi):
    text = (splitk_ir if cfg.split_k > 1 else gemm_ir)(dtype, cfg, epi)
    module = api.parse(text, "gemm.mlir")
    api.run_pipeline(module, cfg.pipeline())
    return module


@pytest.fixture(scope="module")
def lowered():
    return {case: _lower(*case) for case in CASES}


def test_kernels_assemble_without_a_word_from_ptxas(lowered, tmp_path):
    files = []
    for i, module in enumerate(lowered.values()):
        f = tmp_path / f"k{i}.ptx"
        f.write_text(emit_ptx(module))
        files.append(f)
    for f in files:  # one ptxas run per module; any output (warning, spill info) fails
        r = subprocess.run([ptxas(), "-arch=sm_90a", str(f), "-o", str(f.with_suffix(".cubin"))],
                           capture_output=True, text=True)
        assert r.returncode == 0 and not r.stdout and not r.stderr, (f, r.stderr)


@pytest.mark.parametrize("m,n,k", [(4096, 4096, 4096), (77, 130, 72), (1, 14336, 4095)])
def test_tensor_maps_are_the_layouts_dimensions_and_strides(lowered, m, n, k):
    """A is M x K and Bt is N x K, row-major (the layouts `layout_set_dimension %l0, %M, %K` and
    `%N, %K` make): dims innermost first (K, M) and (K, N), row strides 2K bytes, boxes the
    tiles, zero fill; the grid the declared one."""
    desc = describe(lowered[CASES[0]])["kernels"][0]
    args = [0, 0, 0, m, n, k]
    maps = [p for p in desc["params"] if p["kind"] == "tensor_map"]
    assert [p["arg"] for p in maps] == [0, 1]
    ev = lambda e: eval_host_expr(e, args)  # noqa: E731
    assert [[ev(d) for d in p["global_dims"]] for p in maps] == [[k, m], [k, n]]
    assert [[ev(s) for s in p["global_strides"]] for p in maps] == [[2 * k], [2 * k]]
    assert [p["box_dims"] for p in maps] == [[64, 128], [64, 256]]
    assert {p["oob_fill"] for p in maps} == {"NONE"} and {p["swizzle"] for p in maps} == {"128B"}
    assert desc["grid"] == "persistent"
    assert [p for p in desc["params"] if p["kind"] == "scalar"] == [
        {"kind": "scalar", "arg": i, "dtype": "i32"} for i in (3, 4, 5)]


def test_split_k_reduction_and_partials_are_two_kernels(lowered):
    names = [k["name"] for k in describe(lowered[CASES[1]])["kernels"]]
    assert sorted(names) == ["gemm_bf16_bias_splitk", "gemm_bf16_bias_splitk_reduce"]
    cfg = CASES[1][1]
    assert cfg.splits(4096) == (4, 1024) and cfg.splits(100) == (2, 64) and cfg.splits(64) == (1, 64)


KERNEL = """
!L = !tensor_addr.layout<2, {mode}>
!a = !coop.matrix<64x64xf16, Workgroup, MatrixA>
!b = !coop.matrix<64x64xf16, Workgroup, MatrixB>
!c = !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
func.func @k(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>, %M: i32, %K: i32)
    attributes {{coop.workgroup_size = array<i32: 128, 1, 1>}} {{
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %t64 = arith.constant 64 : i32
  %z = arith.constant 0 : i32
  %cv = arith.constant {clamp} : i32
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_clamp_value %l0, %cv : !L
  %la = tensor_addr.layout_set_dimension %l1, %M, %K : !L
  %lb = tensor_addr.layout_set_dimension %l1, %M, %K : !L
  %vt = tensor_addr.create_view : !tensor_addr.view<2, false, 1, 0>
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %ke = arith.index_cast %K : i32 to index
  %acc = scf.for %kk = %c0 to %ke step %c64 iter_args(%d = %init) -> (!c) {{
    %k32 = arith.index_cast %kk : index to i32
    %las = tensor_addr.layout_slice %la, %z, %t64, %k32, %t64 : !L
    %lbs = tensor_addr.layout_slice %lb, %z, %t64, %k32, %t64 : !L
    %av = coop.load_tensor %A, %oa, %las : memref<?x?xf16>, !a, !L -> !a
    %bv = coop.load_tensor %B, %ob, %lbs view %vt : memref<?x?xf16>, !b, !L,
        !tensor_addr.view<2, false, 1, 0> -> !b
    %e = coop.mul_add %av, %bv, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }}
  %sixty4 = arith.constant 64 : index
  coop.store %acc, %C[%c0], %sixty4, RowMajor : !c, memref<?x?xf32>
  func.return
}}
"""


@pytest.mark.parametrize("mode,clamp,why", [
    ("ClampToEdge", 0, "clamp mode ClampToEdge is not a bulk tensor copy"),
    ("Constant", 3, "clamp mode Constant with clampValue 3"),
])
def test_layouts_a_bulk_copy_cannot_express_lower_op_by_op_with_the_reason(mode, clamp, why):
    """No bulk tensor copy (TMA) clamps to the edge or fills with 3: the kernel is lowered op by
    op instead (staged_workgroup.py: the copies' elements loaded and stored by the threads into
    the wgmma tiles), with a warning at the copy that gives the pipeline's reason."""
    module = api.parse(KERNEL.format(mode=mode, clamp=clamp), "refuse.mlir")
    with pytest.warns(CoopWarning, match=f"^refuse.mlir:\\d+:\\d+: warning: 'coop.async_copy_tensor' "
                                         f"op lowered op by op .*: {why}"):
        api.run_pipeline(module, "pipeline-coop-loads{stages=3},convert-coop-to-ptx")
    text = emit_ptx(module)
    assert "cp.async.bulk.tensor" not in text and "cp.async.wait_group 1;" in text
    assert "wgmma.mma_async" in text


def test_a_zero_filled_layout_becomes_a_bulk_tensor_copy_at_the_layout_offsets():
    module = api.parse(KERNEL.format(mode="Constant", clamp=0), "ok.mlir")
    api.run_pipeline(module, "pipeline-coop-loads{stages=3},convert-coop-to-ptx")
    text = emit_ptx(module)
    # one copy per operand in each of the S-1 = 2 prologue groups and in the loop
    assert text.count("cp.async.bulk.tensor.2d") == 2 * 3
    (k,) = describe(module)["kernels"]
    maps = [p for p in k["params"] if p["kind"] == "tensor_map"]
    args = [0, 0, 0, 100, 200]
    # A and Bt: dims (M, K) -> innermost first (K, M)
    assert [[eval_host_expr(d, args) for d in p["global_dims"]] for p in maps] == [[200, 100],
                                                                                   [200, 100]]


def test_host_expressions_equal_what_the_interpreter_computes():
    """Random arith chains over two i32 arguments: the host expression of the result, evaluated
    with Python ints, equals the interpreter's value of the same IR."""
    rng = np.random.default_rng(1)
    ops = [("arith.addi", lambda a, b: a + b), ("arith.muli", lambda a, b: a * b),
           ("arith.subi", lambda a, b: a - b), ("arith.ceildivui", lambda a, b: -(-a // b)),
           ("arith.divui", lambda a, b: a // b), ("arith.remui", lambda a, b: a % b),
           ("arith.maxui", max), ("arith.minui", min)]
    for trial in range(20):
        lines = ["func.func @f(%x: i32, %y: i32, %out: memref<1xi32>) attributes "
                 "{coop.workgroup_size = array<i32: 32, 1, 1>} {", "  %c0 = arith.constant 0 : index"]
        vals = ["%x", "%y"]
        for i in range(4):
            name, _ = ops[rng.integers(len(ops))]
            c = int(rng.integers(1, 9))
            lines.append(f"  %k{i} = arith.constant {c} : i32")
            a = vals[rng.integers(len(vals))]
            lines.append(f"  %v{i} = {name} {a}, %k{i} : i32")
            vals.append(f"%v{i}")
        lines += [f"  memref.store {vals[-1]}, %out[%c0] : memref<1xi32>", "  func.return", "}"]
        module = api.parse("\n".join(lines), "expr.mlir")
        x, y = int(rng.integers(1, 1000)), int(rng.integers(1, 1000))
        out = np.zeros(1, np.int32)
        api.run_kernel(module, "f", [x, y, out], (1, 1, 1))
        (fn,) = module.ops
        store = [op for op in fn.walk() if op.name == "memref.store"][0]
        e = host_expr(store.operands[0])
        assert e is not None and eval_host_expr(e, {0: x, 1: y}) == int(out[0]), "\n".join(lines)


def test_pick_config_reads_the_nearest_tuned_shape():
    from coopdialect.targets import load_target
    from coopdialect.tools.coop_tune import CONFIGS

    t = load_target("coopdialect/targets/sm90a-ptx-h200.json")
    tuned = list(t.gemm_tuned)
    for e in tuned:  # every measured shape gets its winner back
        assert pick_config(e["m"], e["n"], e["k"], CONFIGS, 132, tuned).name == e["config"]
    # an unmeasured shape takes the winner of the nearest measured one (log distance)
    near = min(tuned, key=lambda e: abs(np.log2(8000 / e["m"])) + abs(np.log2(8000 / e["n"]))
               + abs(np.log2(8000 / e["k"])))
    assert pick_config(8000, 8000, 8000, CONFIGS, 132, tuned).name == near["config"]
