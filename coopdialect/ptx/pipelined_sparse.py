"""The consumers' 2:4 sparse products in a staged kernel (`pipelined.py`): `sparse_mma.mma_sp`
as `wgmma.mma_async.sp`, its sp-meta words packed from the metadata tile
(ptx-wgmma-sparse.md section 3), batches of several K steps (`Deferred`, issued by the batch's
last iteration), and the retirement of each batch's words to a scratch word of shared memory
after the wait that retires the batch (`retire_meta`), so that ptxas keeps them in their
registers while the hardware reads them."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import SSAValue

from coopdialect.dialects import ptx
from coopdialect.dialects import sparse_mma as sm
from coopdialect.ptx.kernel_lowering import Frag, op_error, width
from coopdialect.ptx.pipelined_consumer import commit_and_release, split_blocks, tile_descriptor
from coopdialect.ptx.pipelined_roles import CONSUMER_RULES, MetaTile, RoleLowering, SwizzledTile


@dataclass
class Deferred:
    """A 2:4 product of an iteration that is not the last of its batch
    (`pipelined_loop._unrolled_for`): its wgmma.mma_async.sp, not issued yet, as (modifiers, sel,
    immediates, A descriptor, B descriptor, sp-meta word, 64-row block) on the accumulator
    registers `regs`."""

    regs: list
    issue: list


def _nibbles(lw: RoleLowering, x: SSAValue) -> SSAValue:
    """Four metadata bytes (one chunk each, low nibble significant) -> bytes 0 and 2 of the
    result hold chunks 0|1<<4 and 2|3<<4 (the other bytes are don't-care; `_meta_word` picks
    bytes 0 and 2 with one `prmt`). Three instructions: this runs on the consumers' path from
    one 2:4 batch's `wgmma.wait_group 0` to the next batch's issue, where every instruction
    shows in the kernel's speed."""
    low = lw.inst(ptx.AndOp, ".b32", [x, lw.imm("b32", str(0x0F0F0F0F))], "b32")
    sh = lw.inst(ptx.ShrOp, ".u32", [low, lw.imm("b32", "4")], "b32")
    return lw.inst(ptx.OrOp, ".b32", [low, sh], "b32")


def _meta_word(lw: RoleLowering, e: MetaTile, fam, s: int, block: int = 0,
               into: SSAValue | None = None) -> SSAValue:
    """The sp-meta register of instruction `s` for this thread (ptx-wgmma-sparse.md section 3),
    written into the register `into` if given (`ptx.prmt_into`)."""
    g = lw.sh["g"]
    lane = lw.sh["lane"]
    # rows relative to this consumer's 64 (the MatrixA load already added 64 * consumer rows)
    r0 = lw.inst(ptx.MadOp, ".lo.u32", [lw.sh["warp"], lw.imm("b32", "16"), g], "b32")
    p = lw.inst(ptx.AndOp, ".b32", [lane, lw.imm("b32", "1")], "b32")
    rb = e.row_bytes
    if fam.k == 32 and fam.group == 4:  # f16/bf16: chunks 8s+4p..+3 of rows r and r+8
        col = lw.inst(ptx.MadOp, ".lo.u32", [p, lw.imm("b32", "4"), lw.imm("b32", str(8 * s))], "b32")
        a0 = lw.inst(ptx.MadOp, ".lo.u32", [r0, lw.imm("b32", str(rb)), col], "b32")
        a0 = lw.inst(ptx.AddOp, ".u32", [a0, e.addr], "b32")
        x = lw.emit(ptx.LdOp(".shared.b32", a0, 64 * block * rb, [ptx.B32])).outs[0]
        y = lw.emit(ptx.LdOp(".shared.b32", a0, (64 * block + 8) * rb, [ptx.B32])).outs[0]
    elif fam.k == 64:  # 8-bit types: row r + 8(l&1), chunks 16s + 8((l>>1)&1) + 0..7
        r = lw.inst(ptx.MadOp, ".lo.u32", [p, lw.imm("b32", "8"), r0], "b32")
        h = lw.inst(ptx.ShrOp, ".u32", [lane, lw.imm("b32", "1")], "b32")
        h = lw.inst(ptx.AndOp, ".b32", [h, lw.imm("b32", "1")], "b32")
        col = lw.inst(ptx.MadOp, ".lo.u32", [h, lw.imm("b32", "8"), lw.imm("b32", str(16 * s))], "b32")
        a0 = lw.inst(ptx.MadOp, ".lo.u32", [r, lw.imm("b32", str(rb)), col], "b32")
        a0 = lw.inst(ptx.AddOp, ".u32", [a0, e.addr], "b32")
        x = lw.emit(ptx.LdOp(".shared.b32", a0, 64 * block * rb, [ptx.B32])).outs[0]
        y = lw.emit(ptx.LdOp(".shared.b32", a0, 64 * block * rb + 4, [ptx.B32])).outs[0]
    else:
        raise AssertionError(fam)
    # bytes 0 and 2 of x's pairs, then of y's: x's 16 bits of nibbles low, y's high
    sel = lw.imm("b32", str(0x6420))
    args = [_nibbles(lw, x), _nibbles(lw, y), sel]
    if into is not None:
        return lw.emit(ptx.PrmtIntoOp(".b32", args, into)).out
    return lw.inst(ptx.PrmtOp, ".b32", args, "b32")


def retire_meta(lw: RoleLowering) -> None:
    """Store the sp-meta words of the batch just retired to the scratch words of shared memory
    (`Plan.scratch_offset`; nothing reads them): a use after the `wgmma.wait_group` that retires
    the batch, so ptxas keeps each word in its register until then
    (`pipelined_loop._unrolled_for`). A store, not arithmetic: ptxas may move arithmetic above the
    wait, but no shared-memory store above a `wgmma.wait_group` (the wgmma reads shared memory)."""
    words, lw.live_meta = lw.live_meta, []
    base = lw.inst(ptx.AddOp, ".u32", [lw.sh["smem"], lw.imm("b32", str(lw.plan.scratch_offset))], "b32")
    while words:  # st.shared.v4 / .v2 / scalar, each over the same SCRATCH_BYTES
        n = next(n for n in (4, 2, 1) if n <= len(words))
        lw.emit(ptx.StOp(".shared" + (f".v{n}" if n > 1 else "") + ".b32", base, 0, words[:n]))
        words = words[n:]


def _c_mma_sp(lw: RoleLowering, op: sm.MmaSpOp) -> None:
    a, e, b, c = (lw.vmap[v] for v in (op.a, op.meta, op.b, op.c))
    if not (isinstance(a, SwizzledTile) and isinstance(b, SwizzledTile) and isinstance(e, MetaTile)):
        raise op_error(op, "in a staged kernel A, the metadata and B must come from workgroup buffers")
    fam = op.family()
    if fam.k == 16 or op.trans_a or op.trans_b or op.a_registers is not None:
        raise op_error(op, "the wgmma pipeline does tf32, transposed and register-A sparse "
                           "products not yet (f16, bf16 and 8-bit K-major only)")
    if not isinstance(op.c.type.element_type, Float32Type | IntegerType):
        raise op_error(op, "the wgmma pipeline keeps f32 or s32 accumulators")
    dt, at, bt = op.types()
    n, kk, steps = op.dims()
    sat = ".satfinite" if op.satfinite is not None else ""
    mods = f".m64n{n}k{fam.k}{sat}.{dt}.{at}.{bt}"
    ea = width(op.a.type.element_type) // 8
    nb = lw.plan.blocks
    lw.comment(f"{op.name} {op.c.type.rows}x{n}x{kk} -> {nb * steps} x wgmma.mma_async.sp{mods}")
    into = [None] * (steps * nb)
    if lw.in_flight and lw.part // lw.batch == lw.unroll // lw.batch - 1:
        # the trip's last batch runs on across the back edge: its words go into the carried
        # registers (pipelined_loop._unrolled_for)
        first = lw.part % lw.batch * steps * nb
        into = lw.tied[first:first + steps * nb]
    metas = [[_meta_word(lw, e, fam, s, j, into[s * nb + j]) for j in range(nb)] for s in range(steps)]
    imms = ["1"]
    if fam.has_scale:
        imms += [str(op.scale_a), str(op.scale_b)]
    if fam.has_trans:
        imms += ["0", "0"]
    issue = []
    for s in range(steps):
        db = tile_descriptor(lw, b, s * fam.k * ea)
        for j in range(nb):
            da = tile_descriptor(lw, a, s * (fam.k // 2) * ea + 64 * j * a.row_bytes)
            issue.append((mods, op.sel, ", ".join(imms), da, db, metas[s][j], j))
    if (lw.part + 1) % lw.batch:  # issued with the batch's last iteration (_unrolled_for)
        lw.vmap[op.result] = Deferred(list(c.regs), issue)
        return
    if isinstance(c, Deferred):
        issue = c.issue + issue
    blocks = split_blocks(c.regs, nb)
    lw.emit(ptx.WgmmaFenceOp())
    for mods_, sel, imm, da, db, meta, j in issue:
        mma = lw.emit(ptx.WgmmaMmaAsyncSpOp(mods_, [da], db, meta, sel, blocks[j], imm))
        blocks[j] = list(mma.outs)
    regs = [r for blk in blocks for r in blk]
    # The sp-meta register is read while the instruction runs, and ptxas (13.0) neither tracks
    # it nor injects a wait, so a later metadata word may land in the same physical register.
    # Measured on the H200: with one sparse batch in flight and nothing else done, 14-99% of
    # the outputs were wrong depending on register allocation. So no batch stays in flight,
    # unless the loop keeps each word live until its batch retires (lw.in_flight).
    commit_and_release(lw, lw.in_flight, len(issue) // (steps * nb))
    if lw.in_flight:
        retire_meta(lw)
        lw.live_meta = [t[5] for t in issue]
    lw.vmap[op.result] = Frag(op.result.type, regs)


CONSUMER_RULES[sm.MmaSpOp] = _c_mma_sp
