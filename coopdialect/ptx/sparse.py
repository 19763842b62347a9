"""`sparse_mma.mma_sp` -> `wgmma.mma_async.sp` (sm_90a), one warpgroup (128 threads) per product.

Facts used: PTX ISA 9.7.15.6 with the metadata and fragment facts of docs/sparse.md, and
9.7.15.5.1.2 (canonical shared-memory layouts). Operands come from `coop.load` of workgroup-scope matrices:

* A (compressed values), the metadata and B loads whose only users are `sparse_mma.mma_sp` are
  deferred (`Pending`): the product stages them itself, because the shared-memory layout depends
  on the product (K-major or MN-major, SS or RS form).
* Accumulators (64xN f32, f16 or s32) are the wgmma D fragment, loaded and stored by the
  Workgroup-scope rules (wgmma.py): d_i at (16w + g + 8*((i>>1)&1), 8*(i>>2) + 2q + (i&1));
  f16 packs d_{2r}, d_{2r+1} into one .b32 for the instruction.

Shared memory, no swizzle, in 16-byte "units" (one row of an 8x16-byte core matrix); for an
operand with MN extent R (64 for A, N for B) and K extent KX (elements; K/2 for A):
* K-major (imm-trans 0): byte (mn//8)*SBO + (k//T)*LBO + (mn%8)*16 + (k%T)*es, T = 16/es,
  LBO = 128, SBO = (KX/T)*128 — the K-slices of the chain's instructions are consecutive
  core-matrix columns, so instruction s starts at s*(k_step/T)*128;
* MN-major (imm-trans 1, f16/bf16): byte (mn//8)*SBO + (k//8)*LBO + (k%8)*16 + (mn%8)*2 with
  SBO = 128, LBO = (R/8)*128 (PTX canonical layout ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)));
  instruction s starts at s*(k_step/8)*LBO.
Descriptor = ((addr & 0x3FFFF) >> 4) | (LBO>>4)<<16 | (SBO>>4)<<32; per instruction the start
field advances by start>>4 (no carry: shared addresses are < 256 KiB).

Sequence per op: bar.sync (earlier readers of the tiles are done), staging (one ld.global.v4 +
st.shared.v4 per unit when the load promises `Aligned 16`, K runs contiguously in memory and the
stride is a constant multiple of 16 bytes; else one element at a time), fence.proxy.async,
bar.sync; metadata words and RS A registers from global memory; accumulator copies; wgmma.fence;
K/k chained `wgmma.mma_async.sp`; commit_group; wait_group 0.

Metadata words (per instruction s, lane l, g = l>>2, w = warp in the warpgroup):
* f16/bf16 (k32) and tf32 (k16): eight chunks per row; p = l&1; bits [4j+3:4j] = chunk 4p+j of
  row 16w+g, bits [16+4j+3:16+4j] = the same chunk of row +8. T2/T3 get the same words as T0/T1,
  so sp-sel 0 and 1 both find theirs.
* 8-bit (k64): sixteen chunks per row; row = 16w+g+8(l&1), chunks 8((l>>1)&1)+j at bits 4j.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import gpu as xgpu
from xdsl.dialects.builtin import Float16Type, Float32Type, IndexType

from coopdialect.dialects import coop, ptx
from coopdialect.dialects import sparse_mma as sm
from coopdialect.dialects.coop import Layout, Scope
from coopdialect.ptx.coop_rules import pack8, pack16  # first: the coop rules are wrapped below
from coopdialect.ptx.kernel_lowering import (RULES, STATIC_SHARED_BYTES, Buf, Frag, KernelLowering,
                                              Scalar, op_error, rule)
from coopdialect.ptx.wgmma import check_warpgroup, staged_by_sparse_product

_prev_load = RULES[coop.LoadOp]


@dataclass
class Pending:
    """A workgroup matrix whose load is left to the sparse product that uses it."""

    ty: coop.MatrixType
    buf: Buf
    offset: Scalar
    stride: Scalar
    layout: Layout
    align: int


def _elem_bytes(t) -> int:
    return coop.bit_width(t) // 8


@rule(coop.LoadOp)
def _load(lw: KernelLowering, op: coop.LoadOp) -> None:
    t = op.result.type
    if t.scope_value == Scope.Workgroup and staged_by_sparse_product(op):
        if op.layout.data not in (Layout.RowMajor, Layout.ColumnMajor):
            raise op_error(op, f"MemoryLayout {op.layout.data.value} has no PTX lowering")
        ma = op.memory_access
        align = ma.alignment.data if ma is not None and hasattr(ma, "alignment") else 0
        lw.vmap[op.result] = Pending(t, lw.vmap[op.pointer], lw.scalar(op.offset),
                                     lw.scalar(op.stride), op.layout.data, int(align or 0))
        return
    return _prev_load(lw, op)


# ---------------------------------------------------------------------------------------------
# Address helpers
# ---------------------------------------------------------------------------------------------


def _idx(reg) -> Scalar:
    return Scalar(IndexType(), reg=reg)


def _u32_to_idx(lw: KernelLowering, key: str, make) -> Scalar:
    return _idx(lw.cached(key, lambda: lw.u64(make(), True)))


def _lane_bits(lw: KernelLowering) -> tuple[Scalar, Scalar]:
    """(l & 1, (l >> 1) & 1) as index scalars."""
    lane = lw.special("%laneid")
    b0 = _u32_to_idx(lw, "sp lane&1", lambda: lw.inst(ptx.AndOp, ".b32", [lane, lw.imm("b32", "1")],
                                                      "b32", True))

    def make_b1():
        r = lw.inst(ptx.ShrOp, ".u32", [lane, lw.imm("b32", "1")], "b32", True)
        return lw.inst(ptx.AndOp, ".b32", [r, lw.imm("b32", "1")], "b32", True)
    return b0, _u32_to_idx(lw, "sp (lane>>1)&1", make_b1)


def _gather_addresses(lw: KernelLowering, p: Pending, row_l: Scalar, col_l: Scalar,
                      positions: list[tuple[int, int]]):
    """(address register, byte offset) of logical elements (row_l + r, col_l + c) of `p`."""
    io = lw.index_op
    es = _elem_bytes(p.ty.element_type)
    maj_l, min_l = (row_l, col_l) if p.layout == Layout.RowMajor else (col_l, row_l)
    lane_idx = io("add", p.offset, io("add", io("mul", maj_l, p.stride), min_l))
    base = io("add", _idx(p.buf.base), io("mul", lane_idx, lw.idx_const(es)))
    base_reg = lw.reg(base)
    out, by_major = [], {}
    for r, c in positions:
        maj, mi = (r, c) if p.layout == Layout.RowMajor else (c, r)
        if p.stride.const is not None:
            out.append((base_reg, (maj * int(p.stride.const) + mi) * es))
            continue
        if maj not in by_major:
            by_major[maj] = lw.reg(io("add", base, io("mul", io("mul", p.stride, lw.idx_const(es)),
                                                      lw.idx_const(maj))))
        out.append((by_major[maj], mi * es))
    return out


def _ld_suffix(t) -> str:
    return {1: "u8", 2: "b16", 4: "b32"}[_elem_bytes(t)]


def _reg_kind_of(t) -> str:
    return "b16" if _elem_bytes(t) == 2 else "b32"


# ---------------------------------------------------------------------------------------------
# Shared-memory staging
# ---------------------------------------------------------------------------------------------


@dataclass
class Staged:
    addr: object  # 64-bit shared-window address register
    lbo: int
    sbo: int
    step_bytes: int  # start offset between consecutive instructions of the chain


def _stage(lw: KernelLowering, op, p: Pending, mn_is_row: bool, kmajor: bool,
           k_step: int) -> Staged:
    """Copy operand `p` (logical rows x cols; MN = rows if mn_is_row) into shared memory."""
    t = p.ty
    es = _elem_bytes(t.element_type)
    r_ext, k_ext = (t.rows, t.columns) if mn_is_row else (t.columns, t.rows)
    if kmajor:
        ux = 16 // es  # elements of one unit, along K
        lbo, sbo = 128, (k_ext // ux) * 128
        step_bytes = (k_step // ux) * 128
        xdim_is_k = True
    else:
        ux = 8  # along MN (16-bit types only)
        sbo, lbo = 128, (r_ext // 8) * 128
        step_bytes = (k_step // 8) * lbo
        xdim_is_k = False
    x_ext, y_ext = (k_ext, r_ext) if xdim_is_k else (r_ext, k_ext)
    size = r_ext * k_ext * es
    smem = lw.alloc_shared(size)
    if lw.shared_bytes > STATIC_SHARED_BYTES:
        raise op_error(op, f"the staged operands need {lw.shared_bytes} bytes of static shared "
                           f"memory, more than {STATIC_SHARED_BYTES}; use a smaller N or K per op")
    units = (x_ext // ux) * y_ext
    # Is the unit's run contiguous in global memory? X is the logical column when
    # (X is K and MN is the row) or (X is MN and MN is the column).
    x_is_col = xdim_is_k == mn_is_row
    contiguous = x_is_col == (p.layout == Layout.RowMajor)
    vector = (contiguous and p.align >= 16 and p.stride.const is not None
              and (int(p.stride.const) * es) % 16 == 0)
    # Unit order: consecutive threads take consecutive units along memory's contiguous dim.
    xb = x_ext // ux
    lw.comment(f"stage {t.rows}x{t.columns}x{t.element_type} {t.use_value.value} into shared "
               f"memory, {'K' if kmajor else 'MN'}-major, {'v4' if vector else 'scalar'} copies")
    tid = _u32_to_idx(lw, "sp tid64", lambda: lw.linear_tid())
    io = lw.index_op
    kind = _reg_kind_of(t.element_type)
    for i in range(-(-units // 128)):
        u = io("add", tid, lw.idx_const(128 * i))
        if 128 * (i + 1) > units:  # last round: surplus threads repeat the last unit (same bytes)
            u = _idx(lw.inst(ptx.MinOp, ".u64", [lw.reg(u), lw.imm("b64", str(units - 1))], "b64"))
        # (xblk, y) of the unit
        if contiguous:
            xblk, y = _divmod(lw, u, xb, swap=True)
        else:
            y, xblk = _divmod(lw, u, y_ext, swap=True)
        x = io("mul", xblk, lw.idx_const(ux))
        mn, k = (y, x) if xdim_is_k else (x, y)
        row, col = (mn, k) if mn_is_row else (k, mn)
        # shared offset of the unit's first byte
        mn_hi = _shr(lw, mn, 3)
        mn_lo = _and(lw, mn, 7)
        if kmajor:
            soff = io("add", io("mul", mn_hi, lw.idx_const(sbo)),
                      io("add", io("mul", xblk, lw.idx_const(lbo)), io("mul", mn_lo, lw.idx_const(16))))
        else:
            soff = io("add", io("mul", xblk, lw.idx_const(sbo)),
                      io("add", io("mul", _shr(lw, k, 3), lw.idx_const(lbo)),
                         io("mul", _and(lw, k, 7), lw.idx_const(16))))
        saddr = lw.reg(io("add", _idx(smem), soff))
        maj, mi = (row, col) if p.layout == Layout.RowMajor else (col, row)
        gidx = io("add", p.offset, io("add", io("mul", maj, p.stride), mi))
        gaddr = lw.reg(io("add", _idx(p.buf.base), io("mul", gidx, lw.idx_const(es))))
        if vector:
            v = lw.emit(ptx.LdOp(f".{p.buf.space}.v4.b32", gaddr, 0, [ptx.B32] * 4)).outs
            lw.emit(ptx.StOp(".shared.v4.b32", saddr, 0, list(v)))
            continue
        # element e of the unit: logical (row, col) + e along X
        for e in range(ux):
            dr, dc = ((0, e) if x_is_col else (e, 0))
            dmaj, dmi = (dr, dc) if p.layout == Layout.RowMajor else (dc, dr)
            if p.stride.const is not None:
                a, imm = gaddr, (dmaj * int(p.stride.const) + dmi) * es
            elif dmaj == 0:
                a, imm = gaddr, dmi * es
            else:
                a = lw.reg(io("add", _idx(gaddr), io("mul", io("mul", p.stride, lw.idx_const(es)),
                                                      lw.idx_const(dmaj))))
                imm = dmi * es
            v = lw.emit(ptx.LdOp(f".{p.buf.space}.{_ld_suffix(t.element_type)}", a, imm,
                                 [ptx.reg_type(kind)])).outs[0]
            st = {1: "b8", 2: "b16", 4: "b32"}[es]
            lw.emit(ptx.StOp(f".shared.{st}", saddr, e * es, [v]))
    return Staged(smem, lbo, sbo, step_bytes)


def _divmod(lw: KernelLowering, u: Scalar, d: int, swap: bool = False):
    """(u % d, u // d) as index scalars (u non-negative)."""
    if d & (d - 1) == 0:
        q = _shr(lw, u, d.bit_length() - 1)
        r = _and(lw, u, d - 1)
    else:
        q = _idx(lw.inst(ptx.DivOp, ".u64", [lw.reg(u), lw.imm("b64", str(d))], "b64"))
        r = _idx(lw.inst(ptx.RemOp, ".u64", [lw.reg(u), lw.imm("b64", str(d))], "b64"))
    return (r, q)


def _shr(lw: KernelLowering, u: Scalar, n: int) -> Scalar:
    if u.const is not None:
        return lw.idx_const(int(u.const) >> n)
    if n == 0:
        return u
    return _idx(lw.inst(ptx.ShrOp, ".u64", [lw.reg(u), lw.imm("b32", str(n))], "b64"))


def _and(lw: KernelLowering, u: Scalar, m: int) -> Scalar:
    if u.const is not None:
        return lw.idx_const(int(u.const) & m)
    return _idx(lw.inst(ptx.AndOp, ".b64", [lw.reg(u), lw.imm("b64", str(m))], "b64"))


def _descriptors(lw: KernelLowering, st: Staged, steps: int) -> list:
    """One 64-bit descriptor per instruction of the chain (computed once, in the prologue)."""
    def make():
        t = lw.inst(ptx.AndOp, ".b64", [st.addr, lw.imm("b64", "0x3FFFF")], "b64", True)
        t = lw.inst(ptx.ShrOp, ".u64", [t, lw.imm("b32", "4")], "b64", True)
        fields = (st.lbo >> 4) << 16 | (st.sbo >> 4) << 32
        return lw.inst(ptx.OrOp, ".b64", [t, lw.imm("b64", f"0x{fields:016X}")], "b64", True)
    d0 = lw.cached(f"sp desc {id(st.addr)}", make)
    out = [d0]
    for s in range(1, steps):
        out.append(lw.inst(ptx.AddOp, ".s64", [d0, lw.imm("b64", str((s * st.step_bytes) >> 4))],
                           "b64", True))
    return out


# ---------------------------------------------------------------------------------------------
# Metadata and A registers
# ---------------------------------------------------------------------------------------------


def _meta_words(lw: KernelLowering, p: Pending, fam: sm.Family, steps: int) -> list:
    g, _q, w = lw.lane_geometry()
    b0, b1 = _lane_bits(lw)
    io = lw.index_op
    row = io("add", _idx(g), io("mul", _idx(w), lw.idx_const(16)))
    words = []
    for s in range(steps):
        if fam.bits == 8:
            row_l = io("add", row, io("mul", b0, lw.idx_const(8)))
            col_l = io("add", io("mul", b1, lw.idx_const(8)), lw.idx_const(16 * s))
            pos = [(0, j) for j in range(8)]
            shifts = [4 * j for j in range(8)]
        else:
            row_l = row
            col_l = io("add", io("mul", b0, lw.idx_const(4)), lw.idx_const(8 * s))
            pos = [(0, j) for j in range(4)] + [(8, j) for j in range(4)]
            shifts = [4 * j for j in range(4)] + [16 + 4 * j for j in range(4)]
        addrs = _gather_addresses(lw, p, row_l, col_l, pos)
        word = None
        for (a, off), sh in zip(addrs, shifts):
            v = lw.emit(ptx.LdOp(f".{p.buf.space}.u8", a, off, [ptx.B32])).outs[0]
            v = lw.inst(ptx.AndOp, ".b32", [v, lw.imm("b32", "15")], "b32")
            if sh:
                v = lw.inst(ptx.ShlOp, ".b32", [v, lw.imm("b32", str(sh))], "b32")
            word = v if word is None else lw.inst(ptx.OrOp, ".b32", [word, v], "b32")
        words.append(word)
    return words


def _a_registers(lw: KernelLowering, p: Pending, fam: sm.Family, steps: int) -> list[list]:
    """The four .b32 A registers per instruction of the RS form (docs/sparse.md, "Metadata registers": the dense wgmma A layout)."""
    g, q, w = lw.lane_geometry()
    io = lw.index_op
    row_l = io("add", _idx(g), io("mul", _idx(w), lw.idx_const(16)))
    per = {16: 2, 8: 4, 32: 1}[fam.bits]  # kept values per register
    kc = fam.k // 2  # compressed columns per instruction
    col_l = io("mul", _idx(q), lw.idx_const(per))
    out = []
    for s in range(steps):
        cb = s * kc
        regs = []
        for r in range(4):
            dr = 8 * (r & 1)
            dc = cb + (kc // 2) * (r >> 1)
            pos = [(dr, dc + e) for e in range(per)]
            addrs = _gather_addresses(lw, p, row_l, col_l, pos)
            vals = [lw.emit(ptx.LdOp(f".{p.buf.space}.{_ld_suffix(p.ty.element_type)}", a, off,
                                     [ptx.reg_type(_reg_kind_of(p.ty.element_type))])).outs[0]
                    for a, off in addrs]
            regs.append(vals[0] if per == 1 else pack16(lw, *vals) if per == 2 else pack8(lw, vals))
        out.append(regs)
    return out


# ---------------------------------------------------------------------------------------------
# The product
# ---------------------------------------------------------------------------------------------


@rule(sm.MmaSpOp)
def _mma_sp(lw: KernelLowering, op: sm.MmaSpOp) -> None:
    if op.c.type.rows != 64:  # before the warpgroup count: this says what to do instead
        raise op_error(op, f"a {op.c.type.rows}-row product needs one consumer warpgroup per 64 "
                           "rows: stage its K loop (pipeline-coop-loads) for the wgmma pipeline")
    check_warpgroup(lw, op)
    fam = op.family()
    dt, at, bt = op.types()
    n, kk, steps = op.dims()
    pa, pe, pb = (lw.vmap[v] for v in (op.a, op.meta, op.b))
    for v, what in ((pa, "A"), (pe, "the metadata"), (pb, "B")):
        if not isinstance(v, Pending):
            raise op_error(op, f"{what} must come straight from a coop.load used only by "
                               "sparse_mma.mma_sp (the product stages it in shared memory)")
    c = lw.vmap[op.c]
    rs = op.a_registers is not None
    lw.comment(f"{op.name} 64x{n}x{kk} -> {steps} x wgmma.mma_async.sp.m64n{n}k{fam.k}.{dt}.{at}.{bt}"
               f"{' (A from registers)' if rs else ''}")
    lw.emit(ptx.BarSyncOp(0))
    sa = None if rs else _stage(lw, op, pa, mn_is_row=not op.trans_a, kmajor=not op.trans_a,
                                 k_step=fam.k // 2)
    sb = _stage(lw, op, pb, mn_is_row=bool(op.trans_b), kmajor=not op.trans_b, k_step=fam.k)
    lw.emit(ptx.FenceProxyAsyncOp())
    lw.emit(ptx.BarSyncOp(0))
    da = None if rs else _descriptors(lw, sa, steps)
    db = _descriptors(lw, sb, steps)
    metas = _meta_words(lw, pe, fam, steps)
    a_regs = _a_registers(lw, pa, fam, steps) if rs else None
    # Fresh accumulator registers (read and written by the chain; untouched until wait_group).
    et = op.c.type.element_type
    if isinstance(et, Float16Type):
        acc = [pack16(lw, c.regs[2 * i], c.regs[2 * i + 1]) for i in range(len(c.regs) // 2)]
    elif isinstance(et, Float32Type):
        acc = [lw.inst(ptx.MovOp, ".f32", [r], "f32") for r in c.regs]
    else:
        acc = [lw.inst(ptx.MovOp, ".b32", [r], "b32") for r in c.regs]
    sat = ".satfinite" if op.satfinite is not None else ""
    mods = f".m64n{n}k{fam.k}{sat}.{dt}.{at}.{bt}"
    lw.emit(ptx.WgmmaFenceOp())
    for s in range(steps):
        scale_d = 1 if (s > 0 or op.accumulate) else 0
        imms = [str(scale_d)]
        if fam.has_scale:
            imms += [str(op.scale_a), str(op.scale_b)]
        if fam.has_trans:
            if not rs:
                imms.append(str(op.trans_a))
            imms.append(str(op.trans_b))
        a = a_regs[s] if rs else [da[s]]
        mma = lw.emit(ptx.WgmmaMmaAsyncSpOp(mods, a, db[s], metas[s], op.sel, acc, ", ".join(imms)))
        acc = list(mma.outs)
    lw.emit(ptx.WgmmaCommitGroupOp())
    lw.emit(ptx.WgmmaWaitGroupOp(0))
    if isinstance(et, Float16Type):
        regs = []
        for r in acc:
            regs += list(lw.emit(ptx.UnpackOp(".b32", r, [ptx.B16, ptx.B16])).outs)
    else:
        regs = acc
    lw.vmap[op.result] = Frag(op.result.type, regs)


if xgpu.BarrierOp not in RULES:
    @rule(xgpu.BarrierOp)
    def _barrier(lw: KernelLowering, op) -> None:
        """`gpu.barrier` -> `bar.sync 0` (a workgroup-wide barrier, PTX 9.7.13.4)."""
        lw.emit(ptx.BarSyncOp(0))


@rule(sm.CompressOp, sm.DecompressOp)
def _no_lowering(lw: KernelLowering, op) -> None:
    raise op_error(op, "has no PTX lowering: compress on the host (or in the interpreter) and "
                       "load the compressed values and metadata with coop.load")
