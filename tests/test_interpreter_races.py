"""The interpreter's data-race detection (coopdialect.interpreter.races): racy kernels raise a
one-line InterpreterError naming the op, the buffer and an element; race-free ones (a barrier
between the accesses, idempotent Workgroup-scope stores) run and give numpy's result."""

from __future__ import annotations

import numpy as np
import pytest

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import InterpreterError, run_kernel

A = "!coop.matrix<16x16xf16, Workgroup, MatrixA>"
B = "!coop.matrix<16x16xf16, Workgroup, MatrixB>"
C = "!coop.matrix<16x16xf32, Workgroup, MatrixAcc>"
S = "!coop.matrix<16x16xf32, Subgroup, MatrixAcc>"


def run(args: str, body: str, buffers, grid=(1, 1, 1), wg: int = 128) -> None:
    text = (f"func.func @k({args}) attributes {{coop.workgroup_size = array<i32: {wg}, 1, 1>}} "
            f"{{\n  %c0 = arith.constant 0 : index\n  %c16 = arith.constant 16 : index\n{body}\n"
            "  func.return\n}\n")
    module = LocatingParser(make_context(), text, "race.mlir").parse_module()
    module.verify()
    run_kernel(module, "k", buffers, grid)


def raises(match: str, *a, **kw) -> str:
    with pytest.raises(InterpreterError, match=match) as e:
        run(*a, **kw)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("race.mlir:")
    return msg


GEMM_ARGS = "%A: memref<256xf16>, %B: memref<256xf16>, %C: memref<256xf32>"


def gemm_body(barrier: bool) -> str:
    """C += A*B in place with Workgroup-scope matrices (4 subgroups each run all of it)."""
    return f"""
  %a = coop.load %A[%c0], %c16, RowMajor : memref<256xf16> -> {A}
  %b = coop.load %B[%c0], %c16, RowMajor : memref<256xf16> -> {B}
  %c = coop.load %C[%c0], %c16, RowMajor : memref<256xf32> -> {C}
  %d = coop.mul_add %a, %b, %c : {A}, {B}, {C} -> {C}
  {'"gpu.barrier"() : () -> ()' if barrier else ''}
  coop.store %d, %C[%c0], %c16, RowMajor : {C}, memref<256xf32>"""


def gemm_inputs():
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, 256).astype(np.float16)
    b = rng.integers(-3, 4, 256).astype(np.float16)
    c = rng.integers(-3, 4, 256).astype(np.float32)
    want = c.reshape(16, 16) + a.reshape(16, 16).astype(np.float64) @ b.reshape(16, 16)
    return [a, b, c], want.reshape(-1)


def test_in_place_workgroup_update_without_barrier_races():
    bufs, _ = gemm_inputs()
    msg = raises("data race", GEMM_ARGS, gemm_body(False), bufs)
    assert "'coop.store' op" in msg and "element [0] of %C (argument 2)" in msg


def test_in_place_workgroup_update_with_barrier_is_correct():
    bufs, want = gemm_inputs()
    run(GEMM_ARGS, gemm_body(True), bufs)
    assert np.array_equal(bufs[2], want)


def test_idempotent_workgroup_store_copies_are_accepted():
    # every subgroup stores the identical Workgroup matrix: the modelled single store
    out = np.zeros(256, np.float32)
    run("%out: memref<256xf32>", f"""
  %x = arith.constant 1.5 : f32
  %m = coop.composite_construct %x : f32 -> {C}
  coop.store %m, %out[%c0], %c16, RowMajor : {C}, memref<256xf32>""", [out])
    assert np.all(out == 1.5)


def test_workgroup_store_copies_with_different_values_race():
    msg = raises("different value", "%out: memref<256xf32>", f"""
  %sg = gpu.subgroup_id : index
  %i = arith.index_cast %sg : index to i32
  %x = arith.sitofp %i : i32 to f32
  %m = coop.composite_construct %x : f32 -> {C}
  coop.store %m, %out[%c0], %c16, RowMajor : {C}, memref<256xf32>""", [np.zeros(256, np.float32)])
    assert "'coop.store' op" in msg and "subgroup 1)" in msg


def test_two_workgroup_scope_stores_to_one_element_race():
    raises("another Workgroup-scope store", "%out: memref<256xf32>", f"""
  %x = arith.constant 1.5 : f32
  %m = coop.composite_construct %x : f32 -> {C}
  coop.store %m, %out[%c0], %c16, RowMajor : {C}, memref<256xf32>
  coop.store %m, %out[%c0], %c16, RowMajor : {C}, memref<256xf32>""", [np.zeros(256, np.float32)])


def test_two_workgroups_writing_one_element_race():
    msg = raises("workgroups are not ordered", "%out: memref<4xi32>", """
  %g = gpu.block_id x
  %v = arith.index_cast %g : index to i32
  memref.store %v, %out[%c0] : memref<4xi32>""", [np.zeros(4, np.int32)], grid=(2, 1, 1), wg=32)
    assert "'memref.store' op" in msg and "element [0] of %out" in msg
    assert "workgroup (0, 0, 0)" in msg and "(workgroup (1, 0, 0), subgroup 0)" in msg


def test_two_workgroups_same_subgroup_matrix_store_race():
    raises("written|wrote", "%out: memref<256xf32>", f"""
  %x = arith.constant 1.0 : f32
  %m = coop.composite_construct %x : f32 -> {S}
  coop.store %m, %out[%c0], %c16, RowMajor : {S}, memref<256xf32>""",
           [np.zeros(256, np.float32)], grid=(1, 2, 1), wg=32)


def test_one_subgroup_stores_another_loads_races():
    msg = raises("data race", "%buf: memref<2xf32>, %out: memref<2xf32>", """
  %sg = gpu.subgroup_id : index
  %i = arith.index_cast %sg : index to i32
  %x = arith.sitofp %i : i32 to f32
  memref.store %x, %buf[%sg] : memref<2xf32>
  %v = memref.load %buf[%c0] : memref<2xf32>
  memref.store %v, %out[%sg] : memref<2xf32>""",
                 [np.zeros(2, np.float32), np.zeros(2, np.float32)], wg=64)
    assert "'memref.load' op" in msg and "element [0] of %buf" in msg
    assert "subgroup 0 of this workgroup wrote" in msg


def test_subgroup_matrix_store_then_other_subgroup_load_races():
    msg = raises("data race", "%buf: memref<512xf32>, %out: memref<512xf32>", f"""
  %sg = gpu.subgroup_id : index
  %c256 = arith.constant 256 : index
  %o = arith.muli %sg, %c256 : index
  %x = arith.constant 1.0 : f32
  %m = coop.composite_construct %x : f32 -> {S}
  coop.store %m, %buf[%o], %c16, RowMajor : {S}, memref<512xf32>
  %l = coop.load %buf[%c0], %c16, RowMajor : memref<512xf32> -> {S}
  coop.store %l, %out[%o], %c16, RowMajor : {S}, memref<512xf32>""",
                 [np.zeros(512, np.float32), np.zeros(512, np.float32)], wg=64)
    assert "'coop.load' op" in msg and "subgroup 0 of this workgroup wrote" in msg


def test_write_after_read_by_another_subgroup_races():
    # subgroup 0 reads buf[1] before subgroup 1 writes it: unordered on a GPU
    msg = raises("read", "%buf: memref<2xf32>, %out: memref<2xf32>", """
  %sg = gpu.subgroup_id : index
  %c1 = arith.constant 1 : index
  %v = memref.load %buf[%c1] : memref<2xf32>
  memref.store %v, %out[%sg] : memref<2xf32>
  %x = arith.constant 7.0 : f32
  memref.store %x, %buf[%sg] : memref<2xf32>""",
                 [np.zeros(2, np.float32), np.zeros(2, np.float32)], wg=64)
    assert "'memref.store' op" in msg and "element [1] of %buf" in msg


def test_workgroup_memory_race_and_barrier():
    sh = "memref<64xf32, #coop<storage_class Workgroup>>"
    body = f"""
  %sh = memref.alloc() : {sh}
  %t = gpu.thread_id x
  %ti = arith.index_cast %t : index to i32
  %f = arith.sitofp %ti : i32 to f32
  memref.store %f, %sh[%t] : {sh}
  BARRIER
  %c63 = arith.constant 63 : index
  %r = arith.subi %c63, %t : index
  %v = memref.load %sh[%r] : {sh}
  memref.store %v, %out[%t] : memref<64xf32>"""
    msg = raises("data race", "%out: memref<64xf32>", body.replace("BARRIER", ""),
                 [np.zeros(64, np.float32)], wg=64)
    assert "workgroup memory of memref.alloc %sh" in msg
    out = np.zeros(64, np.float32)
    run("%out: memref<64xf32>", body.replace("BARRIER", '"gpu.barrier"() : () -> ()'), [out], wg=64)
    assert np.array_equal(out, np.arange(63, -1, -1, dtype=np.float32))


def test_reads_of_unwritten_elements_and_barrier_epochs_do_not_race():
    # all subgroups of both workgroups read A; each writes only its own row, a barrier apart
    # from the reads of the other subgroups' rows
    a = np.arange(4, dtype=np.float32)
    out = np.zeros((2, 4), np.float32)
    run("%a: memref<4xf32>, %out: memref<2x4xf32>", """
  %g = gpu.block_id x
  %sg = gpu.subgroup_id : index
  %c2 = arith.constant 2 : index
  %w = arith.muli %g, %c2 : index
  %j = arith.addi %w, %sg : index
  %v = memref.load %a[%j] : memref<4xf32>
  memref.store %v, %out[%g, %j] : memref<2x4xf32>
  "gpu.barrier"() : () -> ()
  %u = memref.load %out[%g, %j] : memref<2x4xf32>
  "gpu.barrier"() : () -> ()
  memref.store %u, %out[%g, %j] : memref<2x4xf32>""", [a, out], grid=(2, 1, 1), wg=64)
    assert np.array_equal(out, [[0, 1, 0, 0], [0, 0, 2, 3]])
