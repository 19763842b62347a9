"""`pipeline-coop-loads` is proven by the interpreter: random kernels give bit-identical outputs
before and after the pass, and the pass really staged their loads.

The random kernels: a K-style loop (sometimes inside an outer loop that runs it 1-2 times) (constant or dynamic bounds, lower bound 0..2, step 1..2,
0..7 iterations, so often fewer than S-1) whose body loads A and B matrices from global memory
at offsets affine in the induction variable (random base, multiplier and stride, RowMajor or
ColumnMajor, f16/bf16/si8/ui8/f32 elements, Subgroup or Workgroup scope, one or two subgroups)
and chains one or two `coop.mul_add` into loop-carried accumulators, sometimes with an extra load
whose offset depends on the subgroup (which must not be staged), then stores the accumulators.
The interpreter is exact and raises on any read of a copy that has not landed, on a refill of a
slot still being read and on copies left in flight, so a wrong wait count, slot or guard fails
here even when the numbers would happen to agree.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coopdialect.context import make_context
from coopdialect.errors import CoopError, CoopWarning
from coopdialect.diagnostics import LocatingParser
from coopdialect.dialects import coop, coop_async
from coopdialect.interpreter import run_kernel
from coopdialect.passes.pipeline_coop_loads import STAGES_ATTR, PipelineCoopLoadsPass
from hypothesis_profiles import scaled

# element type -> (accumulator type, numpy dtype, value range)
TYPES = {
    "f16": ("f32", np.float16, 4),
    "bf16": ("f32", ml_dtypes.bfloat16, 4),
    "f32": ("f32", np.float32, 4),
    "si8": ("i32", np.int8, 100),
    "ui8": ("i32", np.uint8, 200),
}
ACC_DTYPES = {"f32": np.float32, "i32": np.int32}


@dataclass
class Load:
    name: str  # the kernel argument
    use: str  # MatrixA / MatrixB
    rows: int
    cols: int
    layout: str
    stride: int
    base: int
    mult: int  # offset = base + mult * i
    per_subgroup: int = 0  # + per_subgroup * subgroup_id (then not stageable)

    def box(self) -> tuple[int, int]:
        return (self.rows, self.cols) if self.layout == "RowMajor" else (self.cols, self.rows)

    def size(self, ivs: list[int], subgroups: int) -> int:
        r, c = self.box()
        top = max([0] + [self.base + self.mult * i + self.per_subgroup * (subgroups - 1)
                         for i in ivs])
        return top + (r - 1) * self.stride + c


@st.composite
def kernels(draw):
    et = draw(st.sampled_from(sorted(TYPES)))
    scope = draw(st.sampled_from(["Subgroup", "Workgroup"]))
    subgroups = draw(st.sampled_from([1, 2]))
    m, n, k = (draw(st.sampled_from([8, 16])) for _ in range(3))
    lb, step = draw(st.integers(0, 2)), draw(st.integers(1, 2))
    trips = draw(st.integers(0, 7))
    dynamic = draw(st.booleans())
    chains = draw(st.integers(1, 2))
    stages = draw(st.integers(2, 5))
    outer = draw(st.integers(0, 2))  # 0: no enclosing loop; else its trip count
    loads = []
    for j in range(chains):
        for name, use, rows, cols in (("A", "MatrixA", m, k), ("B", "MatrixB", k, n)):
            layout = draw(st.sampled_from(["RowMajor", "ColumnMajor"]))
            brows, bcols = (rows, cols) if layout == "RowMajor" else (cols, rows)
            stride = bcols + draw(st.sampled_from([0, 3, 8]))
            mult = draw(st.sampled_from([0, 1, bcols, stride * brows]))
            loads.append(Load(f"{name}{j}", use, rows, cols, layout, stride,
                              draw(st.integers(0, 40)), mult))
    if subgroups > 1 and scope == "Subgroup" and draw(st.booleans()):
        # a load that differs per subgroup is not workgroup-uniform: it must stay global
        a = loads[0]
        loads[0] = Load(a.name, a.use, a.rows, a.cols, a.layout, a.stride, a.base, a.mult,
                        per_subgroup=draw(st.sampled_from([1, 7])))
    return dict(et=et, scope=scope, subgroups=subgroups, mnk=(m, n, k), lb=lb, step=step,
                trips=trips, dynamic=dynamic, loads=loads, stages=stages, outer=outer,
                seed=draw(st.integers(0, 2**31)))


def kernel_text(p: dict) -> str:
    et, scope, (m, n, k) = p["et"], p["scope"], p["mnk"]
    acc = TYPES[et][0]
    tys = {"MatrixA": f"!coop.matrix<{m}x{k}x{et}, {scope}, MatrixA>",
           "MatrixB": f"!coop.matrix<{k}x{n}x{et}, {scope}, MatrixB>"}
    tc = f"!coop.matrix<{m}x{n}x{acc}, {scope}, MatrixAcc>"
    ub = p["lb"] + p["trips"] * p["step"]
    args = [f"%{ld.name}: memref<{ld.size(ivs(p), p['subgroups'])}x{et}>" for ld in p["loads"]]
    args += [f"%C: memref<{2 * m * n}x{acc}>", "%ub: index"]
    lines = [f"func.func @k({', '.join(args)}) attributes "
             f"{{coop.workgroup_size = array<i32: {32 * p['subgroups']}, 1, 1>}} {{",
             "  %c0 = arith.constant 0 : index",
             f"  %lb = arith.constant {p['lb']} : index",
             f"  %step = arith.constant {p['step']} : index",
             f"  %cub = arith.constant {ub} : index",
             "  %sg = gpu.subgroup_id : index",
             f"  %zero = arith.constant {'0.0' if acc == 'f32' else '0'} : {acc}",
             f"  %init = coop.composite_construct %zero : {acc} -> {tc}"]
    for ld in p["loads"]:
        lines += [f"  %s_{ld.name} = arith.constant {ld.stride} : index",
                  f"  %b_{ld.name} = arith.constant {ld.base} : index",
                  f"  %m_{ld.name} = arith.constant {ld.mult} : index",
                  f"  %q_{ld.name} = arith.constant {ld.per_subgroup} : index"]
    bound = "%ub" if p["dynamic"] else "%cub"
    ind = "  "
    if p["outer"]:  # the staged loop inside another one: its pipeline runs several times
        lines += [f"  %nouter = arith.constant {p['outer']} : index",
                  "  %one = arith.constant 1 : index",
                  f"  %acc = scf.for %o = %c0 to %nouter step %one iter_args(%od = %init) -> ({tc}) {{",
                  f"    %r = scf.for %i = %lb to {bound} step %step iter_args(%d = %od) -> ({tc}) {{"]
        ind = "    "
    else:
        lines.append(f"  %acc = scf.for %i = %lb to {bound} step %step iter_args(%d = %init) -> ({tc}) {{")
    for ld in p["loads"]:
        lines += [f"{ind}  %x_{ld.name} = arith.muli %i, %m_{ld.name} : index",
                  f"{ind}  %y_{ld.name} = arith.addi %x_{ld.name}, %b_{ld.name} : index"]
        off = f"%y_{ld.name}"
        if ld.per_subgroup:
            lines += [f"{ind}  %z_{ld.name} = arith.muli %sg, %q_{ld.name} : index",
                      f"{ind}  %o_{ld.name} = arith.addi %y_{ld.name}, %z_{ld.name} : index"]
            off = f"%o_{ld.name}"
        size = ld.size(ivs(p), p["subgroups"])
        lines.append(f"{ind}  %v_{ld.name} = coop.load %{ld.name}[{off}], %s_{ld.name}, "
                     f"{ld.layout} : memref<{size}x{et}> -> {tys[ld.use]}")
    d = "%d"
    for j in range(len(p["loads"]) // 2):
        lines.append(f"{ind}  %e{j} = coop.mul_add %v_A{j}, %v_B{j}, {d} : {tys['MatrixA']}, "
                     f"{tys['MatrixB']}, {tc} -> {tc}")
        d = f"%e{j}"
    lines += [f"{ind}  scf.yield {d} : {tc}", f"{ind}}}"]
    if p["outer"]:
        lines += [f"    scf.yield %r : {tc}", "  }"]
    if scope == "Subgroup":
        lines += [f"  %cm = arith.constant {m * n} : index",
                  "  %co = arith.muli %sg, %cm : index"]
    else:
        lines.append("  %co = arith.addi %c0, %c0 : index")
    lines += [f"  %cn = arith.constant {n} : index",
              f"  coop.store %acc, %C[%co], %cn, RowMajor : {tc}, memref<{2 * m * n}x{acc}>",
              "  func.return", "}"]
    return "\n".join(lines) + "\n"


def ivs(p: dict) -> list[int]:
    return [p["lb"] + t * p["step"] for t in range(p["trips"])]


def run(text: str, p: dict, stages: int | None) -> tuple[list[np.ndarray], object]:
    module = LocatingParser(make_context(), text, "random.mlir").parse_module()
    if stages is not None:
        PipelineCoopLoadsPass(stages=stages).apply(make_context(), module)
    module.verify()
    rng = np.random.default_rng(p["seed"])
    _, dt, hi = TYPES[p["et"]]
    bufs = []
    for ld in p["loads"]:
        size = ld.size(ivs(p), p["subgroups"])
        lo = 0 if p["et"] == "ui8" else -hi
        bufs.append(rng.integers(lo, hi, size).astype(dt))
    m, n, _ = p["mnk"]
    c = np.zeros(2 * m * n, ACC_DTYPES[TYPES[p["et"]][0]])
    bufs += [c, p["lb"] + p["trips"] * p["step"]]
    run_kernel(module, "k", bufs, (1, 1, 1))
    return [c], module


@settings(max_examples=scaled(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels())
def test_pipelining_preserves_interpreter_results(p):
    text = kernel_text(p)
    before, _ = run(text, p, None)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        after, staged = run(text, p, p["stages"])
    for x, y in zip(before, after):
        assert x.tobytes() == y.tobytes(), text
    # not vacuous: every uniform load was staged, the subgroup-dependent one was not, and the
    # pass said so, for it alone
    copies = [op for op in staged.walk() if isinstance(op, coop_async.AsyncCopyOp)]
    uniform = [ld for ld in p["loads"] if not ld.per_subgroup]
    declined = [w for w in said if issubclass(w.category, CoopWarning)
                and "not staged by pipeline-coop-loads" in str(w.message)]
    assert len(declined) == len(said) == len(p["loads"]) - len(uniform), \
        [str(w.message) for w in said]
    s = p["stages"]
    guarded = p["trips"] < s - 1 and not p["dynamic"]
    prologue = sum(1 for t in range(s - 1) if not guarded or t < p["trips"])
    assert len(copies) == len(uniform) * (prologue + 1), text
    loops = [op for op in staged.walk() if op.name == "scf.for" and STAGES_ATTR in op.attributes]
    assert len(loops) == 1 and loops[0].attributes[STAGES_ATTR].value.data == s
    global_loads = [op for op in loops[0].body.walk() if isinstance(op, coop.LoadOp)
                    and not coop_async.is_workgroup(op.pointer.type)]
    assert len(global_loads) == len(p["loads"]) - len(uniform)
    for ld, box in ((ld, ld.box()) for ld in uniform):
        assert any(c.source.name_hint == ld.name and c.box == box for c in copies)


def test_stages_option_below_two_is_one_line_error():
    module = LocatingParser(make_context(), "func.func @f() { func.return }", "x.mlir").parse_module()
    with pytest.raises(CoopError, match="pipeline-coop-loads: stages must be >= 2, got 1"):
        PipelineCoopLoadsPass(stages=1).apply(make_context(), module)
