"""The order of a staged kernel's tiles (`pipelined.py`): workgroup ids remapped in groups of
`raster_group` tile rows (whole clusters along y), so that concurrently running CTAs share A and
B tiles in L2 (`remap_block_ids`), and the persistent CTA's loop over the dispatch's tiles
(`tile_loop`)."""

from __future__ import annotations


from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, SSAValue

from coopdialect.dialects import ptx
from coopdialect.dialects import gpu as cgpu
from coopdialect.ptx.kernel_lowering import RULES, KernelLowering, Scalar
from coopdialect.ptx.pipelined_roles import CONSUMER_RULES, PRODUCER_RULES, RoleLowering


def remap_block_ids(lw: KernelLowering, group: int, cluster_m: int = 1,
                     tile: tuple[SSAValue, SSAValue, SSAValue] | None = None) -> None:
    """Workgroup ids (x, y) in grouped order: `group` consecutive y rows share each sweep of x.
    With clusters of `cluster_m` along y, whole clusters are remapped (the pair keeps x and
    consecutive y). `tile`: (linear tile index, grid x, grid y) of a persistent CTA's tile
    instead of the CTA's own ids."""
    e = lw.inst
    if tile is not None:
        lin, nx, ny = tile
    else:
        x, y = lw.special("%ctaid.x"), lw.special("%ctaid.y")
        nx, ny = lw.special("%nctaid.x"), lw.special("%nctaid.y")
    if cluster_m > 1:
        sh = lw.imm("b32", str(cluster_m.bit_length() - 1))
        y = e(ptx.ShrOp, ".u32", [y, sh], "b32")
        ny = e(ptx.ShrOp, ".u32", [ny, sh], "b32")
        group = max(1, group // cluster_m)
    if tile is None:
        lin = e(ptx.MadOp, ".lo.u32", [y, nx, x], "b32")
    per = e(ptx.MulOp, ".lo.u32", [nx, lw.imm("b32", str(group))], "b32")
    gid = e(ptx.DivOp, ".u32", [lin, per], "b32")
    first = e(ptx.MulOp, ".lo.u32", [gid, lw.imm("b32", str(group))], "b32")
    rows = e(ptx.SubOp, ".u32", [ny, first], "b32")
    rows = e(ptx.MinOp, ".u32", [rows, lw.imm("b32", str(group))], "b32")
    inner = e(ptx.RemOp, ".u32", [lin, per], "b32")
    ry = e(ptx.AddOp, ".u32", [first, e(ptx.RemOp, ".u32", [inner, rows], "b32")], "b32")
    rx = e(ptx.DivOp, ".u32", [inner, rows], "b32")
    if cluster_m > 1:
        rank = e(ptx.AndOp, ".b32", [lw.special("%ctaid.y"), lw.imm("b32", str(cluster_m - 1))], "b32")
        ry = e(ptx.MadOp, ".lo.u32", [ry, lw.imm("b32", str(cluster_m)), rank], "b32")
    lw.block_ids = {"x": lw.u64(rx), "y": lw.u64(ry)}


def _block_id(lw: RoleLowering, op: cgpu.BlockIdOp) -> None:
    ids = lw.block_ids
    if ids is not None and op.dim in ids:
        lw.vmap[op.result] = Scalar(IndexType(), reg=ids[op.dim])
        return
    RULES[cgpu.BlockIdOp](lw, op)


def tile_loop(lw: RoleLowering, fn: func.FuncOp, raster_group: int) -> None:
    """A persistent CTA's role: `for (t = ctaid.x, g = 0; t < X * Y; t += nctaid.x, g += G)`
    over the dispatch grid's tiles (X, Y: the `grid` parameters), each the function body with
    the workgroup ids of tile t (remapped as `remap_block_ids`) and its groups numbered after the
    g groups of the CTA's earlier tiles (G: the tile's trip count, `RoleLowering.tile_trips`,
    known at run time only when the loop's bounds are); then the function's return."""
    e = lw.inst
    nx, ny = lw.sh["grid_x"], lw.sh["grid_y"]
    total = e(ptx.MulOp, ".lo.u32", [nx, ny], "b32")
    header = lw.new_block(["b32", "b32"])
    lw.emit(ptx.BraOp(header, [lw.special("%ctaid.x"), lw.imm("b32", "0")]))
    lw.cur = header
    t, n = header.args
    body, exit_ = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(e(ptx.SetpOp, ".ge.u32", [t, total], "pred"), exit_, body))
    lw.cur = body
    remap_block_ids(lw, raster_group, 1, (t, nx, ny))
    lw.goff = n
    lw.rotation = lw.mod_stages(lw.goff)
    ret = fn.body.block.last_op
    for op in fn.body.block.ops:
        if op is not ret:
            lw.lower_op(op)
    nt = e(ptx.AddOp, ".u32", [t, lw.special("%nctaid.x")], "b32")
    nn = e(ptx.AddOp, ".u32", [n, lw.tile_trips()], "b32")
    lw.emit(ptx.BraOp(header, [nt, nn]))
    lw.blocks.append(exit_)
    lw.cur = exit_
    lw.goff = None
    lw.lower_op(ret)


PRODUCER_RULES[cgpu.BlockIdOp] = _block_id
CONSUMER_RULES[cgpu.BlockIdOp] = _block_id
