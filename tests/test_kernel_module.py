"""runtime.kernel_module: what a device compiles for one launch of a module's kernel."""

from pathlib import Path

import numpy as np
from xdsl.dialects import func

from coopdialect import api
from coopdialect.runtime.run import kernel_module, run_kernel

ROOT = Path(__file__).resolve().parents[1]


def _names(module) -> set[str]:
    return {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}


def test_keeps_the_kernel_and_what_it_names_transitively():
    module = api.parse_file(str(ROOT / "examples/attention.mlir"))
    before = _names(module)
    one = kernel_module(module, "attention_d64")
    # the d64 kernel names @score, @max, @maximum, @offset, @exp2_fma, @add and @lse itself
    assert _names(one) == before - {"attention_d128"}
    assert _names(module) == before  # the argument is unchanged


def test_a_callee_of_a_callee_is_kept_and_an_unnamed_function_dropped():
    text = """
func.func @leaf(%x: f32) -> f32 {
  func.return %x : f32
}
func.func @mid(%r: i32, %c: i32, %x: f32) -> f32 {
  %y = func.call @leaf(%x) : (f32) -> f32
  func.return %y : f32
}
func.func @unused(%x: f32) -> f32 {
  func.return %x : f32
}
func.func @k(%p: memref<16x16xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %m = coop.load %p[%c0], %c16, RowMajor : memref<16x16xf32> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %n = coop.per_element_op @mid(%m) : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  coop.store %n, %p[%c0], %c16, RowMajor : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, memref<16x16xf32>
  func.return
}
"""
    module = api.parse(text)
    assert _names(kernel_module(module, "k")) == {"k", "mid", "leaf"}
    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    want = a.copy()
    report = run_kernel(module, "k", [a], (1, 1, 1), "interp", check=True)
    assert all(v.ok for v in report.verdicts) and np.array_equal(a, want)
