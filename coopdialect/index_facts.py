"""Facts about index values provable from their arith definitions: a known divisor, a constant
residue, a range, whether an offset stays inside one row.

Target-neutral: the SPIR-V lowering of staged copies uses them to prove 16-byte alignment and
row structure (passes/convert_coop_async_to_spirv.py), the PTX pipeline to prove that copies of
contiguous rows may be re-viewed as wider rows (coopdialect/ptx/pipelined.py).
"""

from __future__ import annotations

from math import gcd

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, SSAValue

from coopdialect.dialects import coop


def known_divisor(v: SSAValue) -> int:
    """A positive number that provably divides `v` (1 when nothing is known; 0 stands for 0)."""
    if isinstance(v, BlockArgument):
        parent = v.owner.parent_op()
        if isinstance(parent, scf.ForOp) and v.index == 0:  # lb + j*step
            return gcd(known_divisor(parent.lb), known_divisor(parent.step)) or 1
        return 1
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return abs(op.value.value.data)
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        return gcd(known_divisor(op.lhs), known_divisor(op.rhs)) or 1
    if isinstance(op, arith.MuliOp):
        return known_divisor(op.lhs) * known_divisor(op.rhs)
    if isinstance(op, arith.IndexCastOp):
        return known_divisor(op.input)
    return 1


def divides(d: int, v: SSAValue) -> bool:
    k = known_divisor(v)
    return k % d == 0


def known_residue(v: SSAValue, p: int) -> int | None:
    """`v mod p` if it is provably a constant, else None."""
    if known_divisor(v) % p == 0:
        return 0
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data % p
    if isinstance(op, arith.AddiOp):
        a, b = known_residue(op.lhs, p), known_residue(op.rhs, p)
        return None if a is None or b is None else (a + b) % p
    if isinstance(op, arith.MuliOp):
        a, b = known_residue(op.lhs, p), known_residue(op.rhs, p)
        return None if a is None or b is None else (a * b) % p
    return None


def terms(v: SSAValue) -> list[SSAValue]:
    op = v.owner
    if isinstance(op, arith.AddiOp):
        return terms(op.lhs) + terms(op.rhs)
    return [v]


def value_range(v: SSAValue) -> tuple[int, int] | None:
    """Bounds [lo, hi] of a non-negative index value, when provable."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        c = op.value.value.data
        return (c, c)
    if isinstance(op, arith.RemUIOp) and (k := coop.constant_int(op.rhs)) is not None and k > 0:
        return (0, k - 1)
    if isinstance(op, arith.DivUIOp) and (k := coop.constant_int(op.rhs)) is not None and k > 0:
        r = value_range(op.lhs)
        return None if r is None else (r[0] // k, r[1] // k)
    if isinstance(op, arith.MuliOp | arith.AddiOp):
        a, b = value_range(op.lhs), value_range(op.rhs)
        if a is None or b is None or min(a[0], b[0]) < 0:
            return None
        if isinstance(op, arith.MuliOp):
            return (a[0] * b[0], a[1] * b[1])
        return (a[0] + b[0], a[1] + b[1])
    return None


def row_fits(offset: SSAValue, pitch: int, span: int) -> bool:
    """Whether `offset mod pitch + span <= pitch` provably holds: the terms of `offset` that are
    not multiples of `pitch` stay within [0, pitch - span]."""
    lo = hi = 0
    for t in terms(offset):
        if known_divisor(t) % pitch == 0:
            continue
        r = value_range(t)
        if r is None or r[0] < 0:
            return False
        lo, hi = lo + r[0], hi + r[1]
    return hi + span <= pitch
