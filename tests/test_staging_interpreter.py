"""The interpreter's staged form (coopdialect.interpreter.coop_async): asynchronous box copies into
workgroup memory give numpy's values once waited for, and every misuse (a missing or misplaced
wait, a copy into memory another subgroup reads, a copy left pending at return, a copy that is
not workgroup-collective) is a one-line InterpreterError naming the op."""

from __future__ import annotations

import numpy as np
import pytest

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import InterpreterError, run_kernel

WG = "memref<1280xf16, #coop.storage_class<Workgroup>>"
M = "!coop.matrix<16x16xf16, Subgroup, MatrixA>"
MW = "!coop.matrix<16x16xf16, Workgroup, MatrixA>"


def run(body: str, buffers, wg: int = 64, grid=(1, 1, 1)) -> None:
    """Kernel @k(%A: 64x64 f16 source, %D: 32x256 f16 output) with `body`; 2 subgroups by default."""
    text = ("func.func @k(%A: memref<64x64xf16>, %D: memref<32x256xf16>) attributes "
            f"{{coop.workgroup_size = array<i32: {wg}, 1, 1>}} {{\n"
            "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            "  %c16 = arith.constant 16 : index\n  %c64 = arith.constant 64 : index\n"
            "  %c256 = arith.constant 256 : index\n"
            f"  %w = coop.alloc_workgroup : {WG}\n{body}\n  func.return\n}}\n")
    module = LocatingParser(make_context(), text, "stage.mlir").parse_module()
    module.verify()
    run_kernel(module, "k", buffers, grid)


def raises(match: str, body: str, **kw) -> str:
    a, d = inputs()
    with pytest.raises(InterpreterError, match=match) as e:
        run(body, [a, d], **kw)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("stage.mlir:"), msg
    return msg


def inputs():
    rng = np.random.default_rng(1)
    return rng.integers(-100, 100, (64, 64)).astype(np.float16), np.zeros((32, 256), np.float16)


def pipelined(stages: int, steps: int, wait: int | None = None) -> str:
    """A multi-buffered loop: step i copies the 16x16 block (i, i) of A into slot i % stages,
    waits, loads it (Subgroup scope: every subgroup reads it) and subgroup s stores it to the
    block (s, i) of D; copies run `stages - 1` steps ahead."""
    wait = stages - 2 if wait is None else wait
    pro = []
    for k in range(stages - 1):
        pro.append(f"""
  %po{k} = arith.constant {k * 16 * 64 + k * 16} : index
  %ps{k} = arith.constant {k * 256} : index
  coop.async_copy %A[%po{k}], %c64 -> %w[%ps{k}], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group""")
    return "".join(pro) + f"""
  %S = arith.constant {stages} : index
  %ahead = arith.constant {stages - 1} : index
  %n = arith.constant {steps} : index
  %blk = arith.constant {16 * 64 + 16} : index
  %sg = gpu.subgroup_id : index
  scf.for %i = %c0 to %n step %c1 {{
    coop.async_wait_group {wait}
    %slot = arith.remui %i, %S : index
    %so = arith.muli %slot, %c256 : index
    %m = coop.load %w[%so], %c16, RowMajor : {WG} -> {M}
    %sg16 = arith.muli %sg, %c16 : index
    %dr = arith.muli %sg16, %c256 : index
    %dc = arith.muli %i, %c16 : index
    %do = arith.addi %dr, %dc : index
    coop.store %m, %D[%do], %c256, RowMajor : {M}, memref<32x256xf16>
    %j = arith.addi %i, %ahead : index
    %more = arith.cmpi ult, %j, %n : index
    scf.if %more {{
      %jo = arith.muli %j, %blk : index
      %js = arith.remui %j, %S : index
      %jso = arith.muli %js, %c256 : index
      coop.async_copy %A[%jo], %c64 -> %w[%jso], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
    }}
    coop.async_commit_group
  }}
  coop.async_wait_group 0"""


def want(a: np.ndarray, steps: int, subgroups: int = 2) -> np.ndarray:
    d = np.zeros((32, 256), np.float16)
    for s in range(subgroups):
        for i in range(steps):
            d[16 * s:16 * s + 16, 16 * i:16 * i + 16] = a[16 * i:16 * i + 16, 16 * i:16 * i + 16]
    return d


@pytest.mark.parametrize("stages,steps", [(2, 4), (3, 4), (4, 2), (4, 1), (3, 0)])
def test_pipelined_copies_give_the_source_blocks(stages, steps):
    a, d = inputs()
    run(pipelined(stages, steps), [a, d])
    assert np.array_equal(d, want(a, steps))


def test_wait_that_leaves_the_needed_group_pending_is_reported():
    # wait S-1 instead of S-2: the group of the current step is still pending when it is loaded
    msg = raises(r"reads element \[\d+\] of workgroup memory that the coop.async_copy at "
                 r"stage.mlir:\d+:\d+ \(group 0\) has not completed", pipelined(3, 4, wait=2))
    assert "'coop.load' op" in msg


def test_load_before_any_wait_is_reported():
    raises("reads element .* has not completed", f"""
  coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  %m = coop.load %w[%c0], %c16, RowMajor : {WG} -> {M}
  coop.async_wait_group 0""")


def test_uncommitted_copy_is_not_completed_by_a_wait():
    raises("reads element .* \\(group 0\\) has not completed", f"""
  coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_wait_group 0
  %m = coop.load %w[%c0], %c16, RowMajor : {WG} -> {M}
  coop.async_commit_group
  coop.async_wait_group 0""")


def test_store_into_a_pending_destination_is_reported():
    raises("'coop.store' op writes element .* has not completed", f"""
  %m = coop.load %A[%c0], %c64, RowMajor : memref<64x64xf16> -> {MW}
  coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.store %m, %w[%c0], %c16, RowMajor : {MW}, {WG}
  coop.async_wait_group 0""")


def test_second_copy_into_a_pending_destination_is_reported():
    raises("'coop.async_copy' op writes element \\[16\\] .* has not completed", f"""
  coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_copy %A[%c0], %c64 -> %w[%c16], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_wait_group 0""")


def test_copy_into_memory_another_subgroup_read_in_the_same_interval_races():
    # every subgroup reads slot 0, then (no barrier) slot 0 is refilled: a data race on a GPU
    raises("data race: the workgroup-collective coop.async_copy writes element .* of the "
           "workgroup memory %w .*, which .* read", f"""
  coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_wait_group 0
  %m = coop.load %w[%c0], %c16, RowMajor : {WG} -> {M}
  coop.async_copy %A[%c16], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_wait_group 0""")


def test_refill_after_a_wait_is_race_free_and_exact():
    a, d = inputs()
    run(f"""
  coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_wait_group 0
  %m = coop.load %w[%c0], %c16, RowMajor : {WG} -> {MW}
  coop.async_wait_group 0
  coop.async_copy %A[%c16], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_wait_group 0
  %n = coop.load %w[%c0], %c16, RowMajor : {WG} -> {MW}
  coop.store %m, %D[%c0], %c256, RowMajor : {MW}, memref<32x256xf16>
  coop.store %n, %D[%c16], %c256, RowMajor : {MW}, memref<32x256xf16>""", [a, d])
    got = d.reshape(-1)
    for r in range(16):
        assert np.array_equal(got[r * 256:r * 256 + 16], a[r, :16])
        assert np.array_equal(got[r * 256 + 16:r * 256 + 32], a[r, 16:32])


def test_returning_with_pending_copies_is_reported():
    msg = raises("the workgroup returned with 1 asynchronous copies not complete "
                 r"\(this one is in group 0, which no coop.async_wait_group retired\)", f"""
  coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group""")
    assert "'coop.async_copy' op" in msg and "workgroup (0, 0, 0)" in msg


def test_copy_with_subgroup_dependent_operands_is_not_collective():
    raises("coop.async_copy is workgroup-collective, but subgroup 1", f"""
  %sg = gpu.subgroup_id : index
  %o = arith.muli %sg, %c16 : index
  coop.async_copy %A[%o], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_wait_group 0""")


def test_out_of_bounds_copy_is_reported():
    raises("out-of-bounds copy: the 16x16 box reaches element 5104 of the source, which has "
           "4096 elements", f"""
  %o = arith.constant {63 * 64 + 48 + 64 - 15} : index
  %z = arith.addi %o, %c0 : index
  coop.async_copy %A[%z], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  coop.async_commit_group
  coop.async_wait_group 0""", wg=32)


def test_workgroup_buffers_are_per_workgroup_and_zero_filled():
    # workgroup 1 never copies: its buffer must read as zeros, not as workgroup 0's data
    a, d = inputs()
    run(f"""
  %x = gpu.block_id x
  %first = arith.cmpi eq, %x, %c0 : index
  scf.if %first {{
    coop.async_copy %A[%c0], %c64 -> %w[%c0], %c16, rows 16, cols 16 : memref<64x64xf16> -> {WG}
  }}
  coop.async_commit_group
  coop.async_wait_group 0
  %m = coop.load %w[%c0], %c16, RowMajor : {WG} -> {MW}
  %o = arith.muli %x, %c16 : index
  coop.store %m, %D[%o], %c256, RowMajor : {MW}, memref<32x256xf16>""", [a, d], grid=(2, 1, 1))
    got = d.reshape(-1)
    for r in range(16):
        assert np.array_equal(got[r * 256:r * 256 + 16], a[r, :16])
        assert not got[r * 256 + 16:r * 256 + 32].any()
