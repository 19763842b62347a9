"""Workgroup-scope cooperative matrices over one or more warpgroups, with tensor addressing.

A workgroup of W = n/128 warpgroups (n = coop.workgroup_size invocations, a multiple of 128):

* Accumulator M×N (f32, M = 64·W, N a multiple of 8 in 8..256): warpgroup v owns rows
  64v..64v+63 as the wgmma D fragment (`fragments.wgmma_acc_layout`), so thread t holds
  element d_i at (64·(t>>7) + 16w + g + 8·((i>>1)&1), 8·(i>>2) + 2q + (i&1)).
  `composite_construct` gives each thread M·N/n copies.
* A (M×K) and B (K×N) of f16/bf16, K a multiple of 16, from `coop.load_tensor`: staged into a
  `.shared` tile, one block per 16-wide K slice, each block the K-major no-swizzle core-matrix
  layout of wgmma.py (element (mn, k) of slice s at s·MN·32 + (mn/8)·256 + (k/8)·128 +
  (mn%8)·16 + (k%8)·2 bytes; LBO 128, SBO 256). Every thread stages elements e = t + j·n of
  the matrix traversed row by row (column by column when the view permutes), so neighbouring
  threads read neighbouring columns: contiguous memory for a row-major layout. Each element's
  address is tensor_rules.element_address (all clamp modes, views, blocks); where the layout
  promises contiguous rows, a uniform run-time alignment test picks a path with one
  ld.global.v4 per 8 columns (`_vector_condition`). Sequence:
  `bar.sync` (the previous product has read the tile), loads, `st.shared`, `fence.proxy.async`,
  `bar.sync`; consecutive staged loads (A then B) share one leading and one trailing barrier.
* mul_add with staged A and B: each warpgroup issues K/16 chained
  `wgmma.mma_async.m64nNk16.f32` on its 64 rows of A (descriptor + 2048·v bytes) and all of
  B, between `wgmma.fence` and `commit_group`/`wait_group 0` (as wgmma.py). An A that is a
  `coop.convert` of an f16/bf16 accumulator (nv2_rules) stays in registers: the accumulator's
  elements of columns 16s..16s+15 are wgmma's register A fragment of K slice s, so the same
  chain takes A as four packed .b32 registers per slice (the RS form, as FlashAttention's P·V).
* store_tensor / load_tensor of an accumulator: per element, as at subgroup scope.

Object of a staged A/B load must be uniform (a composite_construct) when an element can be
clipped or discarded: its value is then written for those elements.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import Block, SSAValue

import coopdialect.ptx.coop_rules  # noqa: F401  (the rules wrapped below)
import coopdialect.ptx.tensor_rules  # noqa: F401  (the rules wrapped below)
from coopdialect.dialects import coop, ptx
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects.coop import Scope, Use
from coopdialect.ptx import affine as af
from coopdialect.ptx import fragments as fr
from coopdialect.ptx.affine import Aff, Arith
from coopdialect.ptx.box_access import load_box, plain_box, store_box
from coopdialect.ptx.kernel_lowering import RULES, Frag, KernelLowering, op_error, rule
from coopdialect.ptx.tensor_rules import (_check_store_blocks, address, element_address, load_elements,
                                          store_elements)

LBO, SBO = 128, 256
DESC_STRIDES = (LBO >> 4) << 16 | (SBO >> 4) << 32


@dataclass
class StagedTile:
    """A workgroup A or B operand staged in shared memory (see the module docstring)."""

    ty: coop.MatrixType
    addr: SSAValue  # 64-bit shared-window address
    mn: int  # M (A) or N (B)
    k: int


def _threads(lw: KernelLowering, op) -> int:
    if (why := fr.missing_use(op)) is not None:
        raise op_error(op, why)
    size = lw.workgroup_size
    n = size[0] * size[1] * size[2] if size else 0
    if n == 0 or n % 128:
        raise op_error(op, f"workgroup-scope matrices need whole warpgroups: coop.workgroup_size "
                           f"of a multiple of 128 invocations, got {size}")
    if lw.target != "sm_90a":
        raise op_error(op, f"workgroup-scope matrices lower to wgmma, which needs target sm_90a, "
                           f"not {lw.target}")
    return n


def _warpgroup(lw: KernelLowering, n: int) -> Aff:
    def make():
        r = lw.inst(ptx.ShrOp, ".u32", [lw.linear_tid(), lw.imm("b32", "7")], "b32", True)
        return lw.u64(r, True)
    return af.atom(lw.cached("u64 warpgroup", make), 0, n // 128 - 1)


def check_acc(lw: KernelLowering, op, t: coop.MatrixType, mma: bool = False) -> int:
    """Threads of the workgroup; CoopError unless `t` is an accumulator this layout holds (one
    element per register: f32 for a wgmma product (`mma`), any 8- to 32-bit type otherwise)."""
    n = _threads(lw, op)
    wgs = n // 128
    if t.use_value != Use.MatrixAcc or t.rows != 64 * wgs or t.columns % 8 or \
            not 8 <= t.columns <= 256:
        raise op_error(op, f"workgroup-scope {t.use_value.value if t.use_value else 'NV'} "
                           f"{t.rows}x{t.columns} with {wgs} warpgroup(s): the accumulator must "
                           f"be {64 * wgs}xN (64 rows per warpgroup, N = 8..256, multiple of 8)")
    if mma and not isinstance(t.element_type, Float32Type):
        raise op_error(op, f"workgroup-scope accumulator {t.element_type}: wgmma products "
                           "accumulate in f32")
    if coop.bit_width(t.element_type) > 32:
        raise op_error(op, f"workgroup-scope accumulator {t.element_type}: 8- to 32-bit elements "
                           "are lowered")
    return n


def acc_positions(lw: KernelLowering, op, t: coop.MatrixType) -> list[tuple[Aff, Aff]]:
    """(row, col) of each accumulator element this thread holds (module docstring), or where
    the lowering places them (KernelLowering.workgroup_acc_positions)."""
    own = lw.workgroup_acc_positions(op, t)
    if own is not None:
        return own
    n = check_acc(lw, op, t)
    lay = fr.wgmma_acc_layout(t.columns)
    g, q, w = lw.lane_geometry()
    row = af.add(af.add(af.atom(g, 0, 7), af.scale(af.atom(w, 0, 3), 16)),
                 af.scale(_warpgroup(lw, n), 64))
    col = af.scale(af.atom(q, 0, 3), 2)
    return [(af.add(row, af.const(r0)), af.add(col, af.const(c0))) for r0, c0 in lay.elems]


_prev_construct = RULES[coop.CompositeConstructOp]
_prev_mul_add = RULES[coop.MulAddOp]
_prev_load_tensor = RULES[nv2.LoadTensorOp]
_prev_store_tensor = RULES[nv2.StoreTensorOp]


@rule(coop.CompositeConstructOp)
def _construct(lw: KernelLowering, op: coop.CompositeConstructOp) -> None:
    t = op.result.type
    if t.scope_value != Scope.Workgroup or lw.workgroup_size is None:
        return _prev_construct(lw, op)
    n = _threads(lw, op)
    r = lw.reg(lw.scalar(op.constituent))
    lw.vmap[op.result] = Frag(t, [r] * (t.rows * t.columns // n))


def _operand_extents(op, t: coop.MatrixType) -> tuple[int, int]:
    if not isinstance(t.element_type, Float16Type | BFloat16Type):
        raise op_error(op, f"workgroup-scope {t.use_value.value} of {t.element_type}: wgmma "
                           "operands of f16 and bf16 are lowered")
    mn, k = (t.rows, t.columns) if t.use_value == Use.MatrixA else (t.columns, t.rows)
    if k % 16 or mn % 8:
        raise op_error(op, f"workgroup-scope {t.use_value.value} {t.rows}x{t.columns}: K must be "
                           "a multiple of 16 and M/N of 8")
    return mn, k


def _traversal(lw: KernelLowering, op, rows: int, cols: int, n: int,
               by_column: bool) -> list[tuple[Aff, Aff]]:
    """(row, col) of the elements thread t stages: e = t + j*n, row-major (or column-major)."""
    fast, slow = (rows, cols) if by_column else (cols, rows)
    if (rows * cols) % n:
        raise op_error(op, f"a {rows}x{cols} tile does not split evenly over {n} invocations")
    t = af.atom(lw.cached("u64 linear tid", lambda: lw.u64(lw.linear_tid(), True)), 0, n - 1)
    ar = Arith(lw)
    out = []
    if n % fast == 0:
        ts, tf = ar.divmod(t, af.const(fast))
        for j in range(rows * cols // n):
            out.append((af.add(ts, af.const(j * (n // fast))), tf))
    elif fast % n == 0:
        per = fast // n
        for j in range(rows * cols // n):
            out.append((af.const(j // per), af.add(t, af.const(n * (j % per)))))
    else:
        raise op_error(op, f"cannot spread {fast}-element lines over {n} invocations")
    if by_column:
        return [(f, s) for s, f in out]
    return out


def _uniform_object(lw: KernelLowering, op) -> SSAValue | None:
    obj = lw.vmap[op.object]
    regs = set(obj.regs) if isinstance(obj, Frag) else set()
    return regs.pop() if len(regs) == 1 else None


def load_tensor_workgroup(lw: KernelLowering, op: nv2.LoadTensorOp) -> None:
    t = op.result.type
    buf = lw.vmap[op.pointer]
    layout = lw.vmap[op.layout]
    view = lw.vmap[op.view] if op.view is not None else None
    if t.use_value == Use.MatrixAcc:
        pos = acc_positions(lw, op, t)
        lw.comment(f"{op.name} -> {t.rows}x{t.columns} workgroup accumulator")
        obj = list(lw.vmap[op.object].regs)
        if view is None and op.decode_func is None and plain_box(layout, t.rows, t.columns, True):
            regs = load_box(lw, buf, layout, t, pos, obj)
        else:
            regs = load_elements(lw, op, buf, layout, view, pos, t.columns, obj, t.element_type)
        lw.vmap[op.result] = Frag(t, regs)
        return
    n = _threads(lw, op)
    mn, k = _operand_extents(op, t)
    by_column = view is not None and view.perm != tuple(range(len(view.perm)))
    pos = _traversal(lw, op, t.rows, t.columns, n, by_column)
    fill = _uniform_object(lw, op)
    if fill is None:
        # Object's elements are only read for clipped or discarded elements; with a
        # non-uniform Object we cannot know which thread holds them.
        if view is not None or layout.mode.value == "Constant":
            raise op_error(op, "a staged workgroup-scope load that may clip or discard elements "
                               "needs a uniform Object (a coop.composite_construct)")
        fill = lw.imm("b16", "0")
    smem = lw.alloc_shared(mn * k * 2, 128)
    lw.comment(f"{op.name} -> {t.rows}x{t.columns} {t.use_value.value} staged in shared memory "
               f"({len(pos)} elements per invocation), clamp {layout.mode.value}"
               f"{', view' if view else ''}")
    if not _is_staged(op.prev_op):  # else the previous staged load's barrier covers this tile
        lw.emit(ptx.BarSyncOp(0))
    aligned = _vector_condition(lw, op, t, buf, layout, view, n)
    if aligned is None:
        _stage_elements(lw, op, t, buf, layout, view, pos, fill, smem, mn)
    else:
        # 16-byte rows when the tensor's rows are 16-byte aligned at run time (uniform)
        vec, scalar, join = lw.new_block(), Block(), Block()
        lw.emit(ptx.CbraOp(aligned, scalar, vec, negate=True))
        lw.cur = vec
        _stage_vectors(lw, op, t, buf, layout, n, smem, mn)
        lw.emit(ptx.BraOp(join))
        lw.blocks.append(scalar)
        lw.cur = scalar
        _stage_elements(lw, op, t, buf, layout, view, pos, fill, smem, mn)
        lw.emit(ptx.BraOp(join))
        lw.blocks.append(join)
        lw.cur = join
    if not _is_staged(op.next_op):  # else the next staged load's fence and barrier cover both
        lw.emit(ptx.FenceProxyAsyncOp())
        lw.emit(ptx.BarSyncOp(0))
    lw.vmap[op.result] = StagedTile(t, smem, mn, k)


def _is_staged(op) -> bool:
    """A load_tensor of a workgroup-scope A or B (staged into shared memory by this module).
    Consecutive staged loads share their barriers: one bar.sync before the first (earlier
    readers of both tiles are done) and one fence.proxy.async + bar.sync after the last (the
    fence orders all of the thread's earlier shared-memory writes for the async proxy)."""
    if not isinstance(op, nv2.LoadTensorOp):
        return False
    t = op.result.type
    return t.scope_value == Scope.Workgroup and t.use_value in (Use.MatrixA, Use.MatrixB)


def _smem_offset(ar: Arith, m_: Aff, k_: Aff, mn: int) -> Aff:
    """Byte offset of element (mn, k) in the staged tile (module docstring)."""
    ks, kr = ar.divmod(k_, af.const(16))
    kh, kl = ar.divmod(kr, af.const(8))
    mh, ml = ar.divmod(m_, af.const(8))
    return af.add(af.add(af.scale(ks, mn * 32), af.scale(mh, SBO)),
                  af.add(af.add(af.scale(kh, LBO), af.scale(ml, 16)), af.scale(kl, 2)))


def _smem_reg(lw: KernelLowering, ar: Arith, smem: SSAValue, off: Aff) -> SSAValue:
    var = af.Aff(off.terms, 0)
    if var.is_const:
        return smem
    key = ("stage", id(smem), ar._key(var))
    if key not in ar.memo:
        ar.memo[key] = lw.inst(ptx.AddOp, ".s64", [smem, ar.reg(var)], "b64")
    return ar.memo[key]


def _stage_elements(lw, op, t, buf, layout, view, pos, fill, smem, mn) -> None:
    """One element per instruction, any layout and view (tensor_rules.load_elements)."""
    vals = load_elements(lw, op, buf, layout, view, pos, t.columns, [fill] * len(pos),
                         t.element_type)
    ar = Arith(lw)
    for (r, c), v in zip(pos, vals):
        m_, k_ = (r, c) if t.use_value == Use.MatrixA else (c, r)
        off = _smem_offset(ar, m_, k_, mn)
        lw.emit(ptx.StOp(".shared.b16", _smem_reg(lw, ar, smem, off), off.const, [v]))


def _vector_condition(lw, op, t, buf, layout, view, n):
    """The run-time predicate under which 8 consecutive matrix columns are 8 consecutive,
    16-byte aligned memref elements (then `_stage_vectors` may move them as one
    ld.global.v4.b32), or None when the layout does not promise contiguity at compile time.

    Contiguity: clamp mode Undefined (in-bounds coordinates), no view, Dim 2, block sizes 1,
    stride (S, 1) with S % 8 == 0, span[1] % 8 == 0 (8 columns stay in one span row), columns
    % 8 == 0, and a memref of fewer than 2^32 - 8 elements (so the uint32 index cannot wrap
    between valid elements). Alignment: the index of a group's first element is congruent to
    offset[1] modulo 8, so it is aligned iff (base + 2*offset[1]) % 16 == 0 — the same for
    every thread."""
    ints = [b.const if b.is_const else None for b in layout.block_size]
    st, sp = layout.stride, layout.span
    size = 1
    for d in buf.ty.get_shape():
        size *= d
    if not buf.ty.has_static_shape():  # unknown size: the uint32 index may wrap
        size = 0
    ok = (layout.mode.value == "Undefined" and view is None and len(st) == 2
          and ints == [1, 1] and st[1].is_const and st[1].const == 1 and st[0].is_const
          and st[0].const % 8 == 0 and sp[1].is_const and sp[1].const % 8 == 0
          and t.columns % 8 == 0 and 0 < size < 2**32 - 8
          and coop.bit_width(buf.ty.element_type) == 16
          and (t.rows * t.columns // 8) % n == 0)
    if not ok:
        return None
    ar = Arith(lw)
    first = lw.inst(ptx.MadOp, ".lo.s64", [ar.reg(layout.offset[1]), lw.imm("b64", "2"),
                                           buf.base], "b64")
    low = lw.inst(ptx.AndOp, ".b64", [first, lw.imm("b64", "15")], "b64")
    return lw.inst(ptx.SetpOp, ".eq.b64", [low, lw.imm("b64", "0")], "pred")


def _stage_vectors(lw, op, t, buf, layout, n, smem, mn) -> None:
    """Each thread moves groups of 8 columns: ld.global.v4.b32, then st.shared.v4.b32 (A: the
    8 columns are 8 consecutive K, contiguous in the core matrix) or 8 st.shared.b16 (B: 8
    consecutive N, 16 bytes apart)."""
    ar = Arith(lw)
    groups = _traversal(lw, op, t.rows, t.columns // 8, n, False)
    es = 2
    for r, g8 in groups:
        c = af.scale(g8, 8)
        e = element_address(ar, layout, None, r, c, t.columns, False)
        a, off = address(ar, buf, e.index, es)
        words = lw.emit(ptx.LdOp(f".{buf.space}.v4.b32", a, off, [ptx.B32] * 4)).outs
        if t.use_value == Use.MatrixA:
            so = _smem_offset(ar, r, c, mn)
            lw.emit(ptx.StOp(".shared.v4.b32", _smem_reg(lw, ar, smem, so), so.const,
                             list(words)))
            continue
        so = _smem_offset(ar, c, r, mn)
        sa = _smem_reg(lw, ar, smem, so)
        for i, w in enumerate(words):
            lo, hi = lw.emit(ptx.UnpackOp(".b32", w, [ptx.B16, ptx.B16])).outs
            lw.emit(ptx.StOp(".shared.b16", sa, so.const + 32 * i, [lo]))
            lw.emit(ptx.StOp(".shared.b16", sa, so.const + 32 * i + 16, [hi]))


def store_tensor_workgroup(lw: KernelLowering, op: nv2.StoreTensorOp) -> None:
    t = op.object.type
    buf = lw.vmap[op.pointer]
    layout = lw.vmap[op.layout]
    _check_store_blocks(op, layout)
    view = lw.vmap[op.view] if op.view is not None else None
    pos = acc_positions(lw, op, t)
    if view is None and plain_box(layout, t.rows, t.columns):
        return store_box(lw, op, buf, layout, t, pos, list(lw.vmap[op.object].regs))
    lw.comment(f"{op.name} {t.rows}x{t.columns} workgroup accumulator, clamp "
               f"{layout.mode.value}{', view' if view else ''}")
    store_elements(lw, op, buf, layout, view, pos, t.columns, list(lw.vmap[op.object].regs))


def _descriptor(lw: KernelLowering, addr: SSAValue) -> SSAValue:
    t = lw.inst(ptx.AndOp, ".b64", [addr, lw.imm("b64", "0x3FFFF")], "b64")
    t = lw.inst(ptx.ShrOp, ".u64", [t, lw.imm("b32", "4")], "b64")
    return lw.inst(ptx.OrOp, ".b64", [t, lw.imm("b64", f"0x{DESC_STRIDES:016X}")], "b64")


def _register_a(lw: KernelLowering, op, a: Frag) -> list[list[SSAValue]]:
    """The A operand of each K slice of 16 as the four .b32 registers of wgmma's register form:
    a Workgroup-scope MatrixA whose registers are in the accumulator order (nv2_rules' convert
    of an accumulator), so that slice s is elements 8s..8s+7, (a_2i, a_2i+1) packed into
    register i (PTX ISA 9.7.15.5.1: a0, a1 at row g, k 2q, 2q+1; a2, a3 at row g + 8; a4..a7 the
    same at k + 8: the accumulator's elements of columns 16s..16s+15)."""
    t = a.ty
    wgs = _threads(lw, op) // 128
    if t.rows != 64 * wgs or t.columns % 16 or coop.bit_width(t.element_type) != 16:
        raise op_error(op, f"workgroup-scope MatrixA {t.rows}x{t.columns}x{t.element_type} in "
                           f"registers with {wgs} warpgroup(s): must be {64 * wgs}xK, K a "
                           "multiple of 16, of f16 or bf16")
    if lw.workgroup_acc_positions(op, t) is not None:
        raise op_error(op, "a Workgroup-scope A in registers needs the op-by-op accumulator "
                           "layout (not that of a staged kernel's consumer warpgroups)")
    regs = a.regs
    return [[lw.emit(ptx.PackOp(".b32", [regs[8 * s + 2 * i], regs[8 * s + 2 * i + 1]],
                                ptx.B32)).out for i in range(4)]
            for s in range(t.columns // 16)]


@rule(coop.MulAddOp)
def _mul_add(lw: KernelLowering, op: coop.MulAddOp) -> None:
    a, b = lw.vmap[op.a], lw.vmap[op.b]
    if not isinstance(a, StagedTile) and not isinstance(b, StagedTile):
        return _prev_mul_add(lw, op)
    in_regs = isinstance(a, Frag) and op.a.type.scope_value == Scope.Workgroup
    if not (isinstance(a, StagedTile) or in_regs) or not isinstance(b, StagedTile):
        raise op_error(op, "workgroup-scope B must come from coop.load_tensor, and A from "
                           "coop.load_tensor or a coop.convert of an accumulator")
    ta, tb, tc = op.a.type, op.b.type, op.c.type
    n = check_acc(lw, op, tc, mma=True)
    check_acc(lw, op, op.result.type, mma=True)
    if type(ta.element_type) is not type(tb.element_type):
        raise op_error(op, "wgmma needs A and B of the same type")
    if op.operand_flags:
        raise op_error(op, "Cooperative Matrix Operands have no meaning for f16/bf16 wgmma")
    et = "f16" if isinstance(ta.element_type, Float16Type) else "bf16"
    N, K = tb.columns, ta.columns
    c = lw.vmap[op.c]
    lw.comment(f"{op.name} {ta.rows}x{N}x{K}: {K // 16} x wgmma.mma_async.m64n{N}k16 per "
               f"warpgroup ({n // 128} warpgroups), A in "
               f"{'registers' if in_regs else 'shared memory'}")
    ar = Arith(lw)
    operands = []
    if in_regs:
        a_slices = _register_a(lw, op, a)
    else:
        wg = _warpgroup(lw, n)
        a_base = ar.reg(af.add(af.atom(a.addr, 0, 0), af.scale(wg, 64 // 8 * SBO))) \
            if n > 128 else a.addr
    acc = [lw.inst(ptx.MovOp, ".f32", [r], "f32") for r in c.regs]
    for s in range(K // 16):
        db = b.addr if s == 0 else lw.inst(ptx.AddOp, ".s64", [b.addr, lw.imm(
            "b64", str(s * b.mn * 32))], "b64")
        if in_regs:
            operands.append((a_slices[s], _descriptor(lw, db)))
            continue
        da = a_base if s == 0 else lw.inst(ptx.AddOp, ".s64", [a_base, lw.imm(
            "b64", str(s * a.mn * 32))], "b64")
        operands.append((_descriptor(lw, da), _descriptor(lw, db)))
    lw.emit(ptx.WgmmaFenceOp())
    for da, db in operands:
        mma = lw.emit(ptx.WgmmaMmaAsyncOp(f".m64n{N}k16.f32.{et}.{et}", da, db, acc))
        acc = list(mma.outs)
    lw.emit(ptx.WgmmaCommitGroupOp())
    lw.emit(ptx.WgmmaWaitGroupOp(0))
    lw.vmap[op.result] = Frag(op.result.type, acc)


@rule(nv2.LoadTensorOp)
def _load_tensor(lw: KernelLowering, op: nv2.LoadTensorOp) -> None:
    if op.result.type.scope_value != Scope.Workgroup:
        return _prev_load_tensor(lw, op)
    load_tensor_workgroup(lw, op)


@rule(nv2.StoreTensorOp)
def _store_tensor(lw: KernelLowering, op: nv2.StoreTensorOp) -> None:
    if op.object.type.scope_value != Scope.Workgroup:
        return _prev_store_tensor(lw, op)
    store_tensor_workgroup(lw, op)
