"""Workgroup-scope coop ops on one warpgroup (128 threads) -> dense `wgmma.mma_async` (sm_90a).

Supported: `A` 64x16 and `B` 16xN of f16 or bf16, accumulator 64xN f32 (N a multiple of 8,
8..256), i.e. one `wgmma.mma_async.m64nNk16.f32.T.T` per `coop.mul_add`.

* A/B loads stage the tile into a `.shared` array in the K-major, non-swizzled core-matrix
  layout (element (row, k) at `(row/8)*256 + (k/8)*128 + (row%8)*16 + (k%8)*2` bytes; row = M
  index for A, N index for B; LBO = 128, SBO = 256; PTX ISA 9.7.15.5.1.2): `bar.sync`
  (earlier wgmmas and readers are done with the array), one `ld.global`/`st.shared` per element
  and thread, `fence.proxy.async.shared::cta` (the async proxy must see the generic-proxy
  writes), `bar.sync`.
* The accumulator is the wgmma D fragment (`fragments.wgmma_acc_layout`), loaded and stored
  per lane like a subgroup fragment.
* mul_add: copy C into fresh registers, `wgmma.fence`, `wgmma.mma_async` (descriptors
  `addr>>4 | 8<<16 | 16<<32`, scale-d 1, no negation, no transpose), `wgmma.commit_group`,
  `wgmma.wait_group 0` — so no register is touched between fence and wait, and ptxas injects
  no warpgroup.arrive/wait (C7519/C7517).
"""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IndexType

from coopdialect.dialects import coop, ptx
from coopdialect.dialects.coop import Layout, Use
from coopdialect.ptx import fragments as fr
from coopdialect.ptx.frag_addressing import element_addresses, positions
from coopdialect.ptx.kernel_lowering import Frag, KernelLowering, Scalar, SharedTile, op_error, reg_kind

LBO, SBO = 128, 256
DESC_STRIDES = (LBO >> 4) << 16 | (SBO >> 4) << 32


def check_warpgroup(lw: KernelLowering, op) -> None:
    if (why := fr.missing_use(op)) is not None:
        raise op_error(op, why)
    size = lw.workgroup_size
    if size is None or size[0] * size[1] * size[2] != 128:
        raise op_error(op, f"workgroup-scope matrices need exactly one warpgroup: "
                           f"coop.workgroup_size of 128 invocations, got {size}")
    if lw.target != "sm_90a":
        raise op_error(op, f"workgroup-scope matrices lower to wgmma, which needs target "
                           f"sm_90a, not {lw.target}")


def _acc_layout(op, t: coop.MatrixType) -> fr.FragLayout:
    if t.use_value != Use.MatrixAcc or t.rows != 64 or t.columns % 8 or not 8 <= t.columns <= 256:
        raise op_error(op, f"workgroup-scope {t.use_value.value if t.use_value else 'NV'} "
                           f"{t.rows}x{t.columns}: wgmma needs A 64x16, B 16xN, accumulator 64xN "
                           f"(N = 8..256, multiple of 8)")
    if not isinstance(t.element_type, Float32Type):
        raise op_error(op, f"workgroup-scope accumulator {t.element_type}: only f32 is lowered")
    return fr.wgmma_acc_layout(t.columns)


def _operand_rows(op, t: coop.MatrixType) -> int:
    """The M (A) or N (B) extent of a wgmma operand tile; error unless 64x16 / 16xN f16|bf16."""
    if not isinstance(t.element_type, Float16Type | BFloat16Type):
        raise op_error(op, f"wgmma operands of {t.element_type}: only f16 and bf16 are lowered")
    if t.use_value == Use.MatrixA and t.get_shape() == (64, 16):
        return 64
    if t.use_value == Use.MatrixB and t.rows == 16 and t.columns % 8 == 0 and t.columns <= 256:
        return t.columns
    raise op_error(op, f"workgroup-scope {t.use_value.value} {t.rows}x{t.columns}: wgmma needs "
                       "A 64x16 and B 16xN (N = 8..256, multiple of 8)")


def _tid_index(lw: KernelLowering) -> tuple[Scalar, Scalar]:
    """(k = tid & 15, row0 = tid >> 4) as index scalars."""
    def mk(opcls, mods, imm):
        def make():
            r = lw.inst(opcls, mods, [lw.linear_tid(), lw.imm("b32", imm)], "b32", True)
            return lw.u64(r, True)
        return make
    k = lw.cached("wg k", mk(ptx.AndOp, ".b32", "15"))
    row0 = lw.cached("wg row0", mk(ptx.ShrOp, ".u32", "4"))
    return Scalar(IndexType(), reg=k), Scalar(IndexType(), reg=row0)


def load_workgroup(lw: KernelLowering, op: coop.LoadOp) -> None:
    t = op.result.type
    check_warpgroup(lw, op)
    if t.use_value == Use.MatrixAcc:
        lay = _acc_layout(op, t)
        buf = lw.vmap[op.pointer]
        lw.comment(f"{op.name} -> 64x{t.columns} wgmma accumulator, {op.layout.data.value}")
        addrs = element_addresses(lw, buf, lw.scalar(op.offset), lw.scalar(op.stride),
                                  op.layout.data, t, lay, positions(t, lay))
        regs = [lw.emit(ptx.LdOp(f".{buf.space}.f32", a, off, [ptx.F32])).outs[0]
                for a, off in addrs]
        lw.vmap[op.result] = Frag(t, regs)
        return
    rows = _operand_rows(op, t)
    buf = lw.vmap[op.pointer]
    smem = lw.alloc_shared(rows * 16 * 2)
    lw.comment(f"{op.name} -> {t.rows}x{t.columns} {t.use_value.value} staged in shared memory")
    k, row0 = _tid_index(lw)
    off, stride = lw.scalar(op.offset), lw.scalar(op.stride)
    # Memory index = off + row*stride + k when rows are contiguous along K, else off + k*stride + row.
    k_contig = (op.layout.data == Layout.RowMajor) == (t.use_value == Use.MatrixA)
    io = lw.index_op
    if k_contig:
        base = io("add", off, io("add", io("mul", row0, stride), k))
        step = io("mul", stride, lw.idx_const(8))
    else:
        base = io("add", off, io("add", io("mul", k, stride), row0))
        step = lw.idx_const(8)
    gaddr = io("add", Scalar(IndexType(), reg=buf.base), io("mul", base, lw.idx_const(2)))
    # smem = tile + (k>>3)*128 + row0*16 + (k&7)*2 = tile + (k>>3)*112 + k*2 + row0*16
    k_hi = Scalar(IndexType(), reg=lw.inst(ptx.ShrOp, ".u64",
                                           [lw.reg(k), lw.imm("b32", "3")], "b64"))
    soff = io("add", io("mul", k_hi, lw.idx_const(112)),
              io("add", io("mul", k, lw.idx_const(2)), io("mul", row0, lw.idx_const(16))))
    saddr = lw.reg(io("add", Scalar(IndexType(), reg=smem), soff))
    lw.emit(ptx.BarSyncOp(0))
    gbase = lw.reg(gaddr)
    for j in range(rows // 8):
        jstep = io("mul", step, lw.idx_const(2 * j))
        if jstep.const is not None:
            a, imm = gbase, int(jstep.const)
        else:
            a, imm = lw.reg(io("add", Scalar(IndexType(), reg=gbase), jstep)), 0
        v = lw.emit(ptx.LdOp(f".{buf.space}.b16", a, imm, [ptx.B16])).outs[0]
        lw.emit(ptx.StOp(".shared.b16", saddr, j * SBO, [v]))
    lw.emit(ptx.FenceProxyAsyncOp())
    lw.emit(ptx.BarSyncOp(0))
    lw.vmap[op.result] = SharedTile(t, smem, SBO, LBO)


def store_workgroup(lw: KernelLowering, op: coop.StoreOp) -> None:
    t = op.object.type
    check_warpgroup(lw, op)
    lay = _acc_layout(op, t)
    buf = lw.vmap[op.pointer]
    frag = lw.vmap[op.object]
    lw.comment(f"{op.name} 64x{t.columns} wgmma accumulator, {op.layout.data.value}")
    addrs = element_addresses(lw, buf, lw.scalar(op.offset), lw.scalar(op.stride),
                              op.layout.data, t, lay, positions(t, lay))
    for (a, off), r in zip(addrs, frag.regs):
        lw.emit(ptx.StOp(f".{buf.space}.f32", a, off, [r]))


def _descriptor(lw: KernelLowering, tile: SharedTile):
    def make():
        t = lw.inst(ptx.AndOp, ".b64", [tile.addr, lw.imm("b64", "0x3FFFF")], "b64", True)
        t = lw.inst(ptx.ShrOp, ".u64", [t, lw.imm("b32", "4")], "b64", True)
        return lw.inst(ptx.OrOp, ".b64", [t, lw.imm("b64", f"0x{DESC_STRIDES:016X}")], "b64",
                       True)
    return lw.cached(f"desc {id(tile.addr)}", make)


def mul_add_workgroup(lw: KernelLowering, op: coop.MulAddOp) -> None:
    check_warpgroup(lw, op)
    ta, tb, tc, tr = (v.type for v in (op.a, op.b, op.c, op.result))
    _operand_rows(op, ta)
    n = _operand_rows(op, tb)
    _acc_layout(op, tc)
    _acc_layout(op, tr)
    if type(ta.element_type) is not type(tb.element_type):
        raise op_error(op, "wgmma needs A and B of the same type")
    if op.operand_flags:
        raise op_error(op, "Cooperative Matrix Operands have no meaning for f16/bf16 wgmma")
    a, b, c = (lw.vmap[v] for v in (op.a, op.b, op.c))
    et = "f16" if isinstance(ta.element_type, Float16Type) else "bf16"
    lw.comment(f"{op.name} 64x{n}x16 -> wgmma.mma_async.m64n{n}k16.f32.{et}.{et}")
    da, db = _descriptor(lw, a), _descriptor(lw, b)
    # Fresh accumulator registers: the instruction reads and writes them, and nothing else
    # may touch them between wgmma.fence and wgmma.wait_group.
    acc = [lw.inst(ptx.MovOp, ".f32", [r], reg_kind(Float32Type())) for r in c.regs]
    lw.emit(ptx.WgmmaFenceOp())
    mma = lw.emit(ptx.WgmmaMmaAsyncOp(f".m64n{n}k16.f32.{et}.{et}", da, db, acc))
    lw.emit(ptx.WgmmaCommitGroupOp())
    lw.emit(ptx.WgmmaWaitGroupOp(0))
    lw.vmap[op.result] = Frag(tr, list(mma.outs))
