"""The lock-step runner (coopdialect.interpreter.lockstep): no false races, the same numbers as
an independent numpy model whichever way the members are batched (fast paths over the member
axis, one member at a time, one workgroup per chunk), Workgroup-scope ops once per workgroup,
control flow that differs between subgroups, and the refusals."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import InterpreterError, lockstep, run_kernel
from coopdialect.interpreter import coop as coop_impl
from coopdialect.interpreter import kernel as kernel_mod
from hypothesis_profiles import scaled

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "tools"))
from race_soak import FIVE_LINE, soak  # noqa: E402


def parse(text: str, name: str = "ls.mlir"):
    module = LocatingParser(make_context(), text, name).parse_module()
    module.verify()
    return module


def kernel(args: str, body: str, wg: int) -> str:
    return (f"func.func @k({args}) attributes {{coop.workgroup_size = array<i32: {wg}, 1, 1>}} "
            f"{{\n{body}\n  func.return\n}}\n")


# --------------------------------------------------------------------------------------------
# determinism: issue 10's five-line kernel and every example
# --------------------------------------------------------------------------------------------


def test_five_line_kernel_never_races():
    module = parse(FIVE_LINE)
    x = np.random.default_rng(1).standard_normal(2048).astype(np.float16)
    for _ in range(50):  # the threaded runner failed about 4 runs in 300
        y = np.zeros(2048, np.float16)
        run_kernel(module, "k", [x, y], (1, 1, 1))
        assert np.array_equal(y.view(np.uint16), x.view(np.uint16))


def test_examples_soak_without_false_races_or_differences():
    res = soak(kernel_runs=5, example_runs=2)
    assert len(res) == 10  # the five-line kernel and the 9 example kernels
    assert {k: v for k, v in res.items() if v[1] or v[2]} == {}


# --------------------------------------------------------------------------------------------
# batching never changes a bit: a property test against numpy
# --------------------------------------------------------------------------------------------

ELEMENTWISE = {"fadd": np.add, "fsub": np.subtract, "fmul": np.multiply}


def tiles_kernel(nsub: int, tiles: int, ksteps: int, op: str) -> str:
    """Member t = block_id*nsub + subgroup_id computes C[t] = A[t] (16 x K) @ B (K x 16) + C[t]
    in K steps of 16 (Subgroup scope), then stores `op`(acc, acc) from even subgroups and acc
    from odd ones; it also scales S[t] by 3 into O[t] (arith on per-member scalars)."""
    k = 16 * ksteps
    m = "!coop.matrix<16x16x{t}, Subgroup, {u}>"
    a, b, c = m.format(t="f16", u="MatrixA"), m.format(t="f16", u="MatrixB"), \
        m.format(t="f32", u="MatrixAcc")
    return kernel(
        f"%A: memref<{tiles * 16 * k}xf16>, %B: memref<{k * 16}xf16>, "
        f"%C: memref<{tiles * 256}xf32>, %S: memref<{tiles}xf32>, %O: memref<{tiles}xf32>", f"""
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %ck = arith.constant {k} : index
  %cn = arith.constant {nsub} : index
  %sg = gpu.subgroup_id : index
  %bx = gpu.block_id x
  %w = arith.muli %bx, %cn : index
  %t = arith.addi %w, %sg : index
  %rowa = arith.muli %t, %c16 : index
  %a0 = arith.muli %rowa, %ck : index
  %co = arith.muli %t, %c256 : index
  %ci = coop.load %C[%co], %c16, RowMajor : memref<{tiles * 256}xf32> -> {c}
  %acc = scf.for %kk = %c0 to %ck step %c16 iter_args(%d = %ci) -> ({c}) {{
    %ao = arith.addi %a0, %kk : index
    %bo = arith.muli %kk, %c16 : index
    %ta = coop.load %A[%ao], %ck, RowMajor : memref<{tiles * 16 * k}xf16> -> {a}
    %tb = coop.load %B[%bo], %c16, RowMajor : memref<{k * 16}xf16> -> {b}
    %e = coop.mul_add %ta, %tb, %d : {a}, {b}, {c} -> {c}
    scf.yield %e : {c}
  }}
  %r = coop.{op} %acc, %acc : {c}
  %par = arith.remui %sg, %c2 : index
  %even = arith.cmpi eq, %par, %c0 : index
  scf.if %even {{
    coop.store %r, %C[%co], %c16, RowMajor : {c}, memref<{tiles * 256}xf32>
  }} else {{
    coop.store %acc, %C[%co], %c16, RowMajor : {c}, memref<{tiles * 256}xf32>
  }}
  %s = memref.load %S[%t] : memref<{tiles}xf32>
  %three = arith.constant 3.0 : f32
  %s3 = arith.mulf %s, %three : f32
  memref.store %s3, %O[%t] : memref<{tiles}xf32>""", wg=32 * nsub)


def tiles_reference(nsub, tiles, ksteps, op, a, b, c, s):
    """numpy: the same K steps, each a float64 16x16x16 product rounded once to f32."""
    k = 16 * ksteps
    out = c.copy().reshape(tiles, 16, 16)
    for t in range(tiles):
        acc = out[t]
        for j in range(ksteps):
            ta = a.reshape(tiles, 16, k)[t, :, 16 * j:16 * j + 16].astype(np.float64)
            tb = b.reshape(k, 16)[16 * j:16 * j + 16].astype(np.float64)
            acc = (ta @ tb + acc.astype(np.float64)).astype(np.float32)
        with np.errstate(all="ignore"):
            out[t] = ELEMENTWISE[op](acc, acc).astype(np.float32) if t % nsub % 2 == 0 else acc
    return out.reshape(-1), (s * np.float32(3)).astype(np.float32)


@settings(max_examples=scaled(12), deadline=None)
@given(nsub=st.sampled_from([1, 2, 4]), groups=st.integers(1, 3), ksteps=st.integers(1, 3),
       op=st.sampled_from(sorted(ELEMENTWISE)), scale=st.integers(0, 14),
       seed=st.integers(0, 2**16))
def test_batching_changes_no_bit(nsub, groups, ksteps, op, scale, seed):
    tiles = nsub * groups
    rng = np.random.default_rng(seed)
    # magnitudes spread over 2**-scale .. 2**scale: float64 K-sums of the exact products then
    # round (up to 2**58 apart), so the order of each sum shows in the result
    def spread(n):
        return (rng.standard_normal(n) * 2.0 ** rng.integers(-scale, scale + 1, n)).astype(
            np.float16)

    a, b = spread(tiles * 256 * ksteps), spread(256 * ksteps)
    c = rng.standard_normal(tiles * 256).astype(np.float32)
    s = rng.standard_normal(tiles).astype(np.float32)
    module = parse(tiles_kernel(nsub, tiles, ksteps, op))

    def run():
        bufs = [a, b, c.copy(), s, np.zeros(tiles, np.float32)]
        run_kernel(module, "k", bufs, (groups, 1, 1))
        return bufs[2], bufs[4]

    want_c, want_o = tiles_reference(nsub, tiles, ksteps, op, a, b, c, s)
    outs = [run()]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lockstep, "_FAST", {})  # every op one member (or group) at a time
        outs.append(run())
        mp.setattr(kernel_mod, "MAX_MEMBERS", nsub)  # and one workgroup at a time
        outs.append(run())
    for got_c, got_o in outs:
        assert got_c.view(np.uint32).tolist() == want_c.view(np.uint32).tolist()
        assert got_o.view(np.uint32).tolist() == want_o.view(np.uint32).tolist()


# --------------------------------------------------------------------------------------------
# Workgroup-scope ops once per workgroup
# --------------------------------------------------------------------------------------------

WA = "!coop.matrix<16x16xf16, Workgroup, MatrixA>"
WB = "!coop.matrix<16x16xf16, Workgroup, MatrixB>"
WC = "!coop.matrix<16x16xf32, Workgroup, MatrixAcc>"


@pytest.mark.parametrize("per_block", [False, True])
def test_workgroup_scope_mul_add_runs_once_per_workgroup(per_block, monkeypatch):
    # 3 workgroups of 4 subgroups; A's tile is the same for all (uniform) or per workgroup
    calls = []
    real = coop_impl.round_from_f64
    monkeypatch.setattr(coop_impl, "round_from_f64",
                        lambda x, dt: calls.append(np.shape(x)) or real(x, dt))
    off = "%bx = gpu.block_id x\n  %ao = arith.muli %bx, %c256 : index" if per_block else \
        "%ao = arith.constant 0 : index"
    text = kernel("%A: memref<768xf16>, %B: memref<256xf16>, %C: memref<768xf32>", f"""
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  {off}
  %bb = gpu.block_id x
  %co = arith.muli %bb, %c256 : index
  %a = coop.load %A[%ao], %c16, RowMajor : memref<768xf16> -> {WA}
  %z = arith.constant 0 : index
  %b = coop.load %B[%z], %c16, RowMajor : memref<256xf16> -> {WB}
  %c = coop.load %C[%co], %c16, RowMajor : memref<768xf32> -> {WC}
  %d = coop.mul_add %a, %b, %c : {WA}, {WB}, {WC} -> {WC}
  "gpu.barrier"() : () -> ()
  coop.store %d, %C[%co], %c16, RowMajor : {WC}, memref<768xf32>""", wg=128)
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, 768).astype(np.float16)
    b = rng.integers(-3, 4, 256).astype(np.float16)
    c = rng.integers(-3, 4, 768).astype(np.float32)
    out = c.copy()
    run_kernel(parse(text), "k", [a, b, out], (3, 1, 1))
    assert calls == [(16, 16)] * 3  # one mul_add per workgroup, not one per subgroup
    for w in range(3):
        ta = a[256 * w:256 * w + 256] if per_block else a[:256]
        want = ta.reshape(16, 16).astype(np.float64) @ b.reshape(16, 16) + c[256 * w:256 * w +
                                                                              256].reshape(16, 16)
        assert np.array_equal(out[256 * w:256 * w + 256], want.reshape(-1))


# --------------------------------------------------------------------------------------------
# control flow that differs between subgroups; refusals
# --------------------------------------------------------------------------------------------


def test_loops_whose_trip_counts_differ_between_subgroups():
    # subgroup s of workgroup w: for i < s+1+w (scf.for) and a while loop doubling 1 past 4*s
    text = kernel("%out: memref<16xi32>, %out2: memref<16xi32>", """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %sg = gpu.subgroup_id : index
  %bx = gpu.block_id x
  %n0 = arith.addi %sg, %c1 : index
  %n = arith.addi %n0, %bx : index
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %x = arith.addi %acc, %i : index
    scf.yield %x : index
  }
  %lim = arith.muli %sg, %c4 : index
  %p = scf.while (%v = %c1) : (index) -> index {
    %go = arith.cmpi ule, %v, %lim : index
    scf.condition(%go) %v : index
  } do {
  ^bb0(%v2: index):
    %d = arith.addi %v2, %v2 : index
    scf.yield %d : index
  }
  %w4 = arith.muli %bx, %c4 : index
  %slot = arith.addi %w4, %sg : index
  %si = arith.index_cast %sum : index to i32
  %pi = arith.index_cast %p : index to i32
  memref.store %si, %out[%slot] : memref<16xi32>
  memref.store %pi, %out2[%slot] : memref<16xi32>""", wg=128)
    out, out2 = np.zeros(16, np.int32), np.zeros(16, np.int32)
    run_kernel(parse(text), "k", [out, out2], (4, 1, 1))
    want = [sum(range(s + 1 + w)) for w in range(4) for s in range(4)]
    want2 = []
    for _w in range(4):
        for s in range(4):
            v = 1
            while v <= 4 * s:
                v *= 2
            want2.append(v)
    assert out.tolist() == want and out2.tolist() == want2


def test_barrier_in_a_branch_that_whole_workgroups_take():
    # workgroup 0 (both subgroups) takes the branch with the barrier; workgroup 1 does not
    sh = "memref<64xf32, #coop<storage_class Workgroup>>"
    text = kernel("%out: memref<128xf32>", f"""
  %c0 = arith.constant 0 : index
  %c63 = arith.constant 63 : index
  %sh = memref.alloc() : {sh}
  %t = gpu.thread_id x
  %g = gpu.global_id x
  %ti = arith.index_cast %t : index to i32
  %f = arith.sitofp %ti : i32 to f32
  %bx = gpu.block_id x
  %first = arith.cmpi eq, %bx, %c0 : index
  scf.if %first {{
    memref.store %f, %sh[%t] : {sh}
    "gpu.barrier"() : () -> ()
    %r = arith.subi %c63, %t : index
    %v = memref.load %sh[%r] : {sh}
    memref.store %v, %out[%g] : memref<128xf32>
  }} else {{
    memref.store %f, %out[%g] : memref<128xf32>
  }}""", wg=64)
    out = np.zeros(128, np.float32)
    run_kernel(parse(text), "k", [out], (2, 1, 1))
    assert np.array_equal(out, np.concatenate([np.arange(63, -1, -1), np.arange(64)]))


def test_lane_divergent_loop_bound_is_refused_naming_the_op():
    text = kernel("%out: memref<32xi32>", """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = gpu.lane_id : index
  scf.for %i = %c0 to %l step %c1 {
  }""", wg=32)
    with pytest.raises(InterpreterError) as e:
        run_kernel(parse(text), "k", [np.zeros(32, np.int32)], (1, 1, 1))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("ls.mlir:6:3: error: 'scf.for' op the upper bound "
                                              "differs between the invocations of a subgroup")
    assert msg.endswith("(workgroup (0, 0, 0), subgroup 0)")


def test_workgroup_collective_ops_need_the_whole_workgroup(monkeypatch):
    # the hook for workgroup-collective ops: here `gpu.barrier`'s check, with a stand-in op
    # (coop.length) registered as collective: it runs once per workgroup, with ctx.batch
    from coopdialect.dialects import coop
    from coopdialect.interpreter import common

    seen = []
    real = common.SubgroupContext.invocations_in_scope

    def spy(self, scope):
        seen.append((self.workgroup_number, len(self.batch or [self])))
        return real(self, scope)

    monkeypatch.setattr(common.SubgroupContext, "invocations_in_scope", spy)
    monkeypatch.setattr(lockstep, "WORKGROUP_COLLECTIVE", {coop.LengthOp})
    m = "!coop.matrix<16x16xf32, Subgroup, MatrixAcc>"
    ok = kernel("%out: memref<1xi32>", f"  %n = coop.length : {m}", wg=128)
    run_kernel(parse(ok), "k", [np.zeros(1, np.int32)], (2, 1, 1))
    assert seen == [(0, 4), (1, 4)]
    bad = kernel("%out: memref<1xi32>", f"""
  %c0 = arith.constant 0 : index
  %sg = gpu.subgroup_id : index
  %p = arith.cmpi eq, %sg, %c0 : index
  scf.if %p {{
    %n = coop.length : {m}
  }}""", wg=128)
    with pytest.raises(InterpreterError, match=r"'coop.length' op the barrier was abandoned: the "
                                               r"workgroup-collective op is reached by only some"):
        run_kernel(parse(bad), "k", [np.zeros(1, np.int32)], (1, 1, 1))


def test_index_switch_whose_case_differs_between_subgroups():
    text = kernel("%out: memref<4xi32>", """
  %c7 = arith.constant 7 : i32
  %c9 = arith.constant 9 : i32
  %c1 = arith.constant 1 : i32
  %sg = gpu.subgroup_id : index
  %r = scf.index_switch %sg -> i32
  case 0 {
    scf.yield %c7 : i32
  }
  case 2 {
    scf.yield %c9 : i32
  }
  default {
    scf.yield %c1 : i32
  }
  memref.store %r, %out[%sg] : memref<4xi32>""", wg=128)
    out = np.zeros(4, np.int32)
    run_kernel(parse(text), "k", [out], (1, 1, 1))
    assert out.tolist() == [7, 1, 9, 1]
