"""The staged form on Hopper: a warp-specialized TMA + mbarrier + wgmma pipeline (sm_90a).

Input: a kernel after `pipeline-coop-loads` (docs/staging.md): workgroup buffers filled by
`coop.async_copy` in committed groups, one `scf.for` marked `coop.pipeline_stages = S` whose
iterations wait for their group (`coop.async_wait_group`), load Workgroup-scope A/B matrices from
slot `i mod S` and `coop.mul_add` them into a Workgroup-scope accumulator.

Output: one CTA of `128 * (C + 1)` threads: C consumer warpgroups, each owning 64 rows of the
accumulator (64, 128 or 192 rows: C = rows / 64) or 128 rows as two 64-row blocks (256 rows:
C = 2; four 64-row consumers would start with 96 registers a thread, too few):

* **producer** (warpgroup 0, `setmaxnreg.dec` to `producer_registers`; one thread works): runs
  the kernel's copy slice — the same IR with every matrix op dropped — and turns each group of
  copies into `mbarrier.arrive.expect_tx` on `full[g mod S]` plus one
  `cp.async.bulk.tensor.2d` per copy (the tensor map of the source argument, box = the copy's
  rows x cols, swizzled by its row width: 32, 64 or 128 bytes; sparsity metadata unswizzled);
  before refilling a slot it waits on `empty[g mod S]`.
* **consumers** (warpgroups 1..C, `setmaxnreg.inc` to `consumer_registers`): run the IR with the
  copies dropped; `coop.async_wait_group` waits on `full[g mod S]` (parity `(g / S) & 1`); an A/B
  load from a workgroup buffer is a wgmma shared-memory descriptor (K-major, swizzled,
  SBO = 8 rows); each `coop.mul_add` is K/16 `wgmma.mma_async.m64nNk16` per 64-row block of
  the consumer, committed, then `wgmma.wait_group 1` — so one batch is in flight while the next
  stage's copy lands — after which the previous stage is released (`mbarrier.arrive` on
  `empty`, one per warp). A `sparse_mma.mma_sp` is the same with `wgmma.mma_async.sp` and
  sp-meta words packed from the metadata tile; since the hardware reads the sp-meta register
  while the instruction runs, a 2:4 batch stays in flight only where the loop keeps its words:
  with `sparse_in_flight` 1 (the default) the consumers run a loop of constant, even trip count
  two batches per trip, each closed by `wgmma.wait_group 1`, and keep every word in its
  register until the wait that retires its batch (`pipelined_loop._unrolled_for`); otherwise a
  batch ends with `wgmma.wait_group 0` and releases its own stage, and with `sparse_batch` 2 a
  trip's two iterations issue their K steps as one batch.
* `persistent` (`pipelined_tiles.tile_loop`): one CTA per multiprocessor; each role loops over the
  dispatch's tiles (the grid comes as two kernel parameters), group k of the CTA's n-th tile is
  n * G + k (G: the tile's K steps), and the IR's slot `i mod S` is rotated by (n * G) mod S in
  every buffer's ring, so the barrier phases run on across tiles; the producer fills the next
  tile's stages while the consumers store the last tile.
* `cluster_m = 2` pairs CTAs along workgroup y: each copies half of the boxes both read into
  both (multicast), and releases stages on both CTAs' barriers (measured slower; not default).

Group numbering is static: the function body's commits before the staged loop count P, each
iteration commits c, so the copies/waits of iteration i refer to group `P + i*c + k`. Workgroup
ids are remapped in groups of `raster_group` tile rows (a bijection of the grid: workgroups are
independent, so their order is the compiler's to choose) so that concurrently running CTAs
share A and B tiles in L2. The launch description (`coopdialect.ptx.launch`) says how the host
encodes the tensor maps and how much dynamic shared memory to ask for.

This module is the kernel itself (`lower_staged`: parameters, barriers, the two roles); its parts:
`pipelined_plan.py` (the analysis), `pipelined_roles.py` (the role lowering and its rule tables),
`pipelined_producer.py`, `pipelined_consumer.py` (dense wgmma), `pipelined_sparse.py` (2:4),
`pipelined_loop.py` (the staged loop), `pipelined_tiles.py` (tile order, the persistent loop),
`pipelined_launch.py` (the launch parameters).
"""

from __future__ import annotations

import json

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, MemRefType
from xdsl.ir import Block, Operation, SSAValue

import coopdialect.ptx.pipelined_consumer  # noqa: F401  (registers the consumers' rules)
import coopdialect.ptx.pipelined_epilogue  # noqa: F401  (registers the consumers' tensor stores)
import coopdialect.ptx.pipelined_loop  # noqa: F401  (registers the staged loop's rule)
import coopdialect.ptx.pipelined_producer  # noqa: F401  (registers the producer's rules)
import coopdialect.ptx.pipelined_sparse  # noqa: F401  (registers the 2:4 consumer rule)
from coopdialect.dialects import ptx
from coopdialect.dialects.coop_kernel import GRID_ATTR
from coopdialect.ptx.kernel_lowering import RULES, Buf, KernelLowering, Scalar, op_error, scalar_param
from coopdialect.ptx.launch import arg_descs, grid_desc, scalar_param_desc
from coopdialect.ptx.pipelined_launch import tensor_map_param, used_directly
from coopdialect.ptx.pipelined_plan import Options, Plan, launch_registers, pool, sparse_schedule
from coopdialect.ptx.pipelined_roles import CONSUMER_RULES, PRODUCER_RULES, RoleLowering
from coopdialect.ptx.pipelined_tiles import remap_block_ids, tile_loop


def lower_staged(fn: func.FuncOp, target: str, plan: Plan, options: Options = Options()) -> ptx.KernelOp:
    """The warp-specialized kernel of a staged function (see the module docstring)."""
    name = fn.sym_name.data
    C, S = plan.consumers, plan.stages
    threads = 128 * (C + 1)
    preg, creg = options.budgets(C)
    if preg * 128 + creg * 128 * C > pool(C) or not 24 <= preg <= 256 or not 24 <= creg <= 256:
        raise op_error(fn, f"register budget: {preg} x 128 producer + {creg} x {128 * C} consumer "
                           f"registers must each be 24..256 and fit the {pool(C)} the CTA is "
                           f"launched with ({launch_registers(C)} per thread)")
    schedule = sparse_schedule(plan, options)
    blocks: list[Block] = []
    prologue: list[Operation] = []
    shared: dict = {"consts": {}, "cache": {}}
    entry = Block()
    blocks.append(entry)
    base = KernelLowering(fn, target)
    base.blocks, base.prologue, base.consts, base.cache = blocks, prologue, shared["consts"], shared["cache"]
    base.cur = entry

    params, tmaps, launch_params = [], [], []
    arg_regs: dict[int, SSAValue] = {}
    tmap_regs: dict[int, SSAValue] = {}
    args = list(fn.args)
    scalar_regs: dict[int, SSAValue] = {}
    scalar_params: dict[str, str] = {}
    for i, arg in enumerate(args):
        hint = arg.name_hint or str(i)
        if not isinstance(arg.type, MemRefType):
            pname = f"{name}_param_{hint}"
            params.append(pname)
            ld, scalar_params[pname] = scalar_param(fn, i, arg.type, pname)
            prologue.append(ld)
            scalar_regs[i] = ld.out
            launch_params.append(scalar_param_desc(i, arg.type))
            continue
        if i in plan.sources:
            pname = f"{name}_tmap_{hint}"
            params.append(pname)
            tmaps.append(pname)
            mov = ptx.MovImmOp(".b64", pname, ptx.B64)
            cvta = ptx.CvtaOp(".param.u64", [mov.out], [ptx.B64])
            prologue += [mov, cvta]
            tmap_regs[i] = cvta.outs[0]
            launch_params.append(tensor_map_param(fn, i, plan))
        if i not in plan.sources or used_directly(fn, arg):
            pname = f"{name}_param_{hint}"
            params.append(pname)
            ld = ptx.LdParamOp(pname)
            cvta = ptx.CvtaOp(".to.global.u64", [ld.out], [ptx.B64])
            prologue += [ld, cvta]
            arg_regs[i] = cvta.outs[0]
            launch_params.append({"kind": "pointer", "arg": i})

    grid_regs = {}
    if plan.persistent:  # the dispatch grid the tiles come from
        for d in "xy":
            pname = f"{name}_grid_{d}"
            params.append(pname)
            ld = ptx.LdParamOp(pname)
            cvt = ptx.CvtOp(".u32.u64", [ld.out], [ptx.B32])
            prologue += [ld, cvt]
            grid_regs[f"grid_{d}"] = cvt.outs[0]
            launch_params.append({"kind": "grid", "dim": d})
    e = base.inst
    tid = base.special("%tid.x")
    wg = e(ptx.ShrOp, ".u32", [tid, base.imm("b32", "7")], "b32")
    smem = base.emit(ptx.MovImmOp(".u32", f"{name}_dsmem", ptx.B32)).out
    smem = e(ptx.AddOp, ".u32", [smem, base.imm("b32", "1023")], "b32")
    smem = e(ptx.AndOp, ".b32", [smem, base.imm("b32", "-1024")], "b32")
    full = e(ptx.AddOp, ".u32", [smem, base.imm("b32", str(plan.barrier_offset))], "b32")
    empty = e(ptx.AddOp, ".u32", [full, base.imm("b32", str(8 * S))], "b32")
    lane = e(ptx.AndOp, ".b32", [tid, base.imm("b32", "31")], "b32")
    # thread 0 initializes the barriers: full[s] expects the producer's arrival (+ bytes),
    # empty[s] one arrival per consumer warp.
    is0 = e(ptx.SetpOp, ".eq.u32", [tid, base.imm("b32", "0")], "pred")
    init, after = Block(), Block()
    base.emit(ptx.CbraOp(is0, init, after))
    blocks.append(init)
    base.cur = init
    for s in range(S):
        base.emit(ptx.MbarrierInitOp(full, 8 * s, 1))
        base.emit(ptx.MbarrierInitOp(empty, 8 * s, 4 * C * plan.cluster_m))
    base.emit(ptx.FenceMbarrierInitOp())
    base.emit(ptx.BraOp(after))
    blocks.append(after)
    base.cur = after
    if plan.cluster_m > 1:  # the peer may multicast into this CTA once its barriers exist
        base.emit(ptx.BarrierClusterOp())
        rank = base.inst(ptx.AndOp, ".b32", [base.special("%ctaid.y"), base.imm("b32", "1")], "b32")
        peer = base.inst(ptx.XorOp, ".b32", [rank, base.imm("b32", "1")], "b32")
    else:
        base.emit(ptx.BarSyncOp(0))
        rank = peer = None
    if not plan.persistent:
        remap_block_ids(base, options.raster_group, plan.cluster_m)
    is_prod = e(ptx.SetpOp, ".eq.u32", [wg, base.imm("b32", "0")], "pred")
    prod, cons = Block(), Block()
    base.emit(ptx.CbraOp(is_prod, prod, cons))

    # Consumer lane geometry: row = 64*blocks*(wg-1) + 16*warp + g, col = 2*q (wgmma D layout).
    sh = dict(shared, smem=smem, full=full, empty=empty, lane=lane, rank=rank, peer=peer, **grid_regs)

    def role(kind: str, start: Block) -> None:
        blocks.append(start)
        lw = RoleLowering(fn, target, kind, plan, sh, blocks, prologue)
        lw.cur = start
        lw.block_ids = None if plan.persistent else base.block_ids  # persistent: per tile
        for i, arg in enumerate(args):
            if i in tmap_regs:
                lw.vmap[arg] = Buf(arg.type, tmap_regs[i], "tensormap")
            if i in arg_regs:
                lw.vmap[arg] = Buf(arg.type, arg_regs[i], "global")
            if i in scalar_regs:
                lw.vmap[arg] = Scalar(arg.type, reg=scalar_regs[i])
        if kind == "producer":
            if C > 1:  # with one consumer the register file is no constraint
                lw.emit(ptx.SetmaxnregOp("dec", preg // 8 * 8))
            not0 = lw.inst(ptx.SetpOp, ".ne.u32", [tid, lw.imm("b32", "0")], "pred")
            work, done = lw.new_block(), lw.new_block()
            lw.emit(ptx.CbraOp(not0, done, work))
            lw.cur = done
            if plan.cluster_m > 1:
                lw.emit(ptx.BarrierClusterOp())
            lw.emit(ptx.RetOp())
            lw.cur = work
        else:
            if C > 1:
                lw.emit(ptx.SetmaxnregOp("inc", creg // 8 * 8))
            c = lw.inst(ptx.SubOp, ".u32", [wg, lw.imm("b32", "1")], "b32")
            ltid = lw.inst(ptx.AndOp, ".b32", [tid, lw.imm("b32", "127")], "b32")
            warp = lw.inst(ptx.ShrOp, ".u32", [ltid, lw.imm("b32", "5")], "b32")
            g = lw.inst(ptx.ShrOp, ".u32", [lane, lw.imm("b32", "2")], "b32")
            q = lw.inst(ptx.AndOp, ".b32", [lane, lw.imm("b32", "3")], "b32")
            row = lw.inst(ptx.MadOp, ".lo.u32", [c, lw.imm("b32", str(64 * plan.blocks)), g], "b32")
            row = lw.inst(ptx.MadOp, ".lo.u32", [warp, lw.imm("b32", "16"), row], "b32")
            col = lw.inst(ptx.ShlOp, ".b32", [q, lw.imm("b32", "1")], "b32")
            lw.sh["acc_row"] = lw.u64(row)
            lw.sh["acc_col"] = lw.u64(col)
            lw.sh.update(consumer=c, warp=warp, g=g)
            lw.batch, lw.in_flight = schedule
            lw.unroll = lw.batch * (1 + lw.in_flight)
        if plan.persistent:
            tile_loop(lw, fn, options.raster_group)
        else:
            lw.lower_ops(fn.body.block)

    role("producer", prod)
    role("consumer", cons)
    first = entry.first_op
    for op in prologue:
        if first is None:
            entry.add_op(op)
        else:
            entry.insert_op_before(op, first)
    types = [a.type for a in fn.args]
    grid = ({"grid": "persistent"} if plan.persistent
            else grid_desc(fn.attributes.get(GRID_ATTR), types))
    launch = {"name": name, "block": [threads, 1, 1], **grid,
              **({"cluster": [1, plan.cluster_m, 1]} if plan.cluster_m > 1 else {}),
              "dynamic_shared_bytes": plan.smem_bytes,
              "args": arg_descs([a.name_hint or str(i) for i, a in enumerate(fn.args)], types),
              "params": launch_params}
    return ptx.KernelOp(name, params, blocks, None, types,
                        maxntid=[threads, 1, 1], tensor_maps=tmaps,
                        dynamic_shared=plan.smem_bytes, launch=json.dumps(launch),
                        cluster=[1, plan.cluster_m, 1] if plan.cluster_m > 1 else None,
                        scalar_params=scalar_params)


def _return(lw: RoleLowering, op: func.ReturnOp) -> None:
    if lw.plan.cluster_m > 1:  # neither CTA of a pair leaves while the other may still write to it
        lw.emit(ptx.BarrierClusterOp())
    RULES[func.ReturnOp](lw, op)


def workgroup_size_of(fn: func.FuncOp) -> list[int] | None:
    attr = fn.attributes.get("coop.workgroup_size")
    if isinstance(attr, DenseArrayBase):
        return [int(x) for x in attr.get_values()]
    return None


PRODUCER_RULES[func.ReturnOp] = _return
CONSUMER_RULES[func.ReturnOp] = _return
