"""Addresses of matrix elements in a `coop.load`/`coop.store` memref, in every MemoryLayout the
KHR instructions take: RowMajor, ColumnMajor and the Arm blocked-interleaved layouts
(SPV_ARM_cooperative_matrix_layouts), for element positions given as `affine.Aff`s (lane or
invocation coordinates plus constants).

* RowMajor: element `offset + r*stride + c`; ColumnMajor: `offset + c*stride + r` (elements).
* RowBlockedInterleavedARM / ColumnBlockedInterleavedARM (E = component bytes, B = 16/E
  columns per block, S = Stride, the constant 1, 2 or 4; the extension text, as
  coopdialect/interpreter/arm_layouts.py and docs/arm-layouts.md state it): blocks of 4 rows
  x B columns (64 bytes, row-major inside), numbered in row-major (Row...) or column-major
  (Column...) block order; groups of S consecutive blocks interleaved by 4-byte words. Byte
  `k` of element (r, c) lies at `offset*E + g*64*S + (w*S + p)*4 + b mod 4` with
  `b = ((r mod 4)*B + c mod B)*E + k`, `j` the block number, `g, p = divmod(j, S)`, `w = b / 4`.
  Every quotient and remainder is by a power of two; with positions whose lane terms are
  single bits (`lane_bit_positions`) most of them fold at compile time. A component of 1, 2
  or 4 bytes lies in one word; an 8-byte one in two words 4*S bytes apart (one access when
  S = 1).

`element_addresses` returns, per element, a base register and the byte offsets of the
element's parts (one part, or the two words of a split 8-byte component); `load_values` and
`store_values` move them.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from coopdialect.dialects import coop, ptx
from coopdialect.dialects.coop import Layout
from coopdialect.ptx import affine as af
from coopdialect.ptx import fragments as fr
from coopdialect.ptx.affine import Aff, Arith
from coopdialect.ptx.kernel_lowering import Buf, KernelLowering, Scalar, mem_suffix, op_error, reg_kind, width

Address = tuple[SSAValue, list[int]]
"""A base register and the byte offsets from it of an element's parts (one, or two 4-byte
words of a split 8-byte Arm component, low word first)."""

ARM_BLOCK_BYTES, ARM_BLOCK_ROWS, ARM_WORD = 64, 4, 4


def lane_bit_positions(lw: KernelLowering, t: coop.MatrixType,
                       lay: fr.FragLayout) -> list[tuple[Aff, Aff]]:
    """(row, col) of each fragment element this lane holds (fragments.py's order), as Affs of
    the lane's bits: g = lane>>2 and q = lane&3 split into one atom per bit, so that the
    power-of-two divisions of the Arm layouts fold wherever the fragment allows."""
    def bit(k: int):
        def make():
            r = lw.special("%laneid")
            if k:
                r = lw.inst(ptx.ShrOp, ".u32", [r, lw.imm("b32", str(k))], "b32", True)
            r = lw.inst(ptx.AndOp, ".b32", [r, lw.imm("b32", "1")], "b32", True)
            return lw.u64(r, True)
        return af.atom(lw.cached(f"u64 lane bit {k}", make), 0, 1)
    q = af.add(bit(0), af.scale(bit(1), 2))
    g = af.add(af.add(bit(2), af.scale(bit(3), 2)), af.scale(bit(4), 4))
    rg, rq, rw = lay.row_coef
    cg, cq, cw = lay.col_coef
    if rw or cw:
        raise ValueError("lane_bit_positions: a subgroup fragment has no warp term")
    row = af.add(af.scale(g, rg), af.scale(q, rq))
    col = af.add(af.scale(g, cg), af.scale(q, cq))
    return [(af.add(row, af.const(tr + r0)), af.add(col, af.const(tc + c0)))
            for tr, tc in fr.tiles(t, lay) for r0, c0 in lay.elems]


def _fuse_lane_bits(lw: KernelLowering, x: Aff) -> Aff:
    """x with runs of lane-bit terms c*2^k*bit_k that make up a whole lane field (the lane,
    g = lane>>2 or q = lane&3) replaced by c times that field's register: one multiply-add
    instead of one per bit."""
    bit_of = {id(lw.cache[f"u64 lane bit {k}"]): k for k in range(5)
              if f"u64 lane bit {k}" in lw.cache}
    coef = {bit_of[id(a.reg)]: c for c, a in x.terms if id(a.reg) in bit_of}
    g, q, _ = lw.lane_geometry() if coef else (None, None, None)
    fields = [(0, 4, lambda: lw.cached("u64 lane", lambda: lw.u64(lw.special("%laneid"), True))),
              (2, 4, lambda: g), (0, 1, lambda: q)]
    for lo, hi, reg in fields:
        ks = range(lo, hi + 1)
        if all(k in coef and coef[k] == coef[lo] << (k - lo) for k in ks):
            c = coef[lo]
            for k in ks:
                del coef[k]
            keep = [(cc, a) for cc, a in x.terms if bit_of.get(id(a.reg)) not in ks]
            x = af.add(Aff(tuple(keep), x.const), af.scale(af.atom(reg(), 0, (2 << (hi - lo)) - 1), c))
    return x


def scalar_aff(lw: KernelLowering, s: Scalar) -> Aff:
    """A scalar as an Aff (a constant, or an atom of unknown range)."""
    if s.const is not None:
        return af.const(int(s.const))
    return af.atom(lw.reg(s), af.I64_MIN, af.I64_MAX)


def arm_stride(op: Operation, stride: Scalar) -> int:
    """The constant Stride of an Arm blocked layout (the verifier allows 1, 2 or 4)."""
    if stride.const is None or int(stride.const) not in (1, 2, 4):
        raise op_error(op, "an Arm blocked layout needs a constant Stride of 1, 2 or 4")
    return int(stride.const)


def arm_word_offsets(ar: Arith, layout: Layout, t: coop.MatrixType, stride: int, r: Aff,
                     c: Aff) -> list[Aff]:
    """Byte offsets from the matrix's first byte of element (r, c) (module docstring): one
    for a component inside one 4-byte word, two (low word, high word) for a split 8-byte one."""
    es = width(t.element_type) // 8
    bcols = 16 // es
    rq, rr = ar.divmod(r, af.const(ARM_BLOCK_ROWS))
    cq, cr = ar.divmod(c, af.const(bcols))
    b = af.scale(af.add(af.scale(rr, bcols), cr), es)
    if layout == Layout.RowBlockedInterleavedARM:
        j = af.add(af.scale(rq, t.columns // bcols), cq)
    else:
        j = af.add(af.scale(cq, t.rows // ARM_BLOCK_ROWS), rq)
    grp, p = ar.divmod(j, af.const(stride))
    w, bm = ar.divmod(b, af.const(ARM_WORD))
    first = af.add(af.add(af.scale(grp, ARM_BLOCK_BYTES * stride), af.scale(p, ARM_WORD)),
                   af.add(af.scale(w, ARM_WORD * stride), bm))
    if es <= ARM_WORD or stride == 1:
        return [first]
    return [first, af.add(first, af.const(ARM_WORD * stride))]


def element_addresses(lw: KernelLowering, op: Operation, buf: Buf, offset: Scalar,
                      stride: Scalar, layout: Layout, t: coop.MatrixType,
                      positions: list[tuple[Aff, Aff]]) -> list[Address]:
    """The address of each element at `positions` of matrix type `t` stored in `buf` from
    element `offset` in `layout` (module docstring). Elements whose addresses differ by a
    constant share one base register; the constant is the offset."""
    ar = Arith(lw)
    es = width(t.element_type) // 8
    base = af.add(af.atom(buf.base, 0, af.I64_MAX), af.scale(scalar_aff(lw, offset), es))
    arm = layout in coop.ARM_LAYOUTS
    s = arm_stride(op, stride) if arm else None
    st = None if arm else scalar_aff(lw, stride)
    out = []
    for r, c in positions:
        if arm:
            parts = [af.add(base, o) for o in arm_word_offsets(ar, layout, t, s, r, c)]
        else:
            maj, mi = (r, c) if layout == Layout.RowMajor else (c, r)
            maj_var = af.Aff(maj.terms, 0)
            # maj*stride: the constant part times stride stays affine; the lane part multiplies
            idx = af.add(af.add(ar.mul(maj_var, st), af.scale(st, maj.const)), mi)
            parts = [af.add(base, af.scale(idx, es))]
        var = _fuse_lane_bits(lw, af.Aff(parts[0].terms, 0))
        out.append((ar.reg(var), [p.const for p in parts]))
    return out


def load_values(lw: KernelLowering, buf: Buf, et, addrs: list[Address]) -> list[SSAValue]:
    """One register of element type `et` per address (a split component: two `ld.b32` joined)."""
    kind = reg_kind(et)
    out = []
    for reg, offs in addrs:
        if len(offs) == 1:
            out.append(lw.emit(ptx.LdOp(f".{buf.space}.{mem_suffix(et)}", reg, offs[0],
                                        [ptx.reg_type(kind)])).outs[0])
            continue
        lo, hi = (lw.emit(ptx.LdOp(f".{buf.space}.b32", reg, o, [ptx.B32])).outs[0] for o in offs)
        v = lw.emit(ptx.PackOp(".b64", [lo, hi], ptx.B64)).out
        out.append(v if kind == "b64" else lw.inst(ptx.MovOp, ".b64", [v], kind))
    return out


def store_values(lw: KernelLowering, buf: Buf, et, addrs: list[Address],
                 regs: list[SSAValue]) -> None:
    """Store each register at its address (a split component: its two words)."""
    for (reg, offs), v in zip(addrs, regs):
        if len(offs) == 1:
            lw.emit(ptx.StOp(f".{buf.space}.{mem_suffix(et, store=True)}", reg, offs[0], [v]))
            continue
        if reg_kind(et) != "b64":
            v = lw.inst(ptx.MovOp, ".b64", [v], "b64")
        words = lw.emit(ptx.UnpackOp(".b64", v, [ptx.B32, ptx.B32])).outs
        for o, wv in zip(offs, words):
            lw.emit(ptx.StOp(f".{buf.space}.b32", reg, o, [wv]))
