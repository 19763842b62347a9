"""The staged form on any target, op by op (sm_80 ... sm_90a): `cp.async` copies + `bar.sync`.

Used where the warp-specialized wgmma pipeline (`pipelined.py`) does not apply: targets before
sm_90a, and staged kernels whose matrices are Subgroup-scope (`mma.sync` fragments loaded from
the workgroup buffers by the ordinary `coop.load` rule, which reads `.shared` like `.global`).

* `coop.alloc_workgroup` -> a static `.shared` array (16-byte aligned).
* `coop.async_copy` -> every invocation of the workgroup copies elements `t, t + n, ...` of the
  rows x cols box (t = linear invocation id, n = workgroup size): `cp.async.ca.shared.global` of
  4 bytes when the element is 4 bytes wide, else `ld.global` + `st.shared` (cp.async moves 4, 8 or
  16 bytes). PTX ISA 9.7.9.25.3.
* `coop.async_commit_group` -> `cp.async.commit_group`; `coop.async_wait_group N` ->
  `cp.async.wait_group N` then `bar.sync 0` (each thread waits for its own copies; the barrier
  makes every thread's copies visible to the whole workgroup, which the op promises).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType

from coopdialect.dialects import ptx
from coopdialect.dialects.coop_async import (
    AllocWorkgroupOp,
    AsyncCommitGroupOp,
    AsyncCopyOp,
    AsyncWaitGroupOp,
)
from coopdialect.ptx.kernel_lowering import (Buf, KernelLowering, Scalar, max_shared_bytes, op_error,
                                              rule, width)


@rule(AllocWorkgroupOp)
def _alloc(lw: KernelLowering, op: AllocWorkgroupOp) -> None:
    t = op.result.type
    size = width(t.element_type) // 8
    for d in t.get_shape():
        size *= d
    if lw.shared_bytes + size > (limit := max_shared_bytes(lw.target)):
        raise op_error(op, f"workgroup buffers of {lw.shared_bytes + size} bytes exceed the "
                           f"{limit} bytes of shared memory a block may use on {lw.target} "
                           "(fewer stages or smaller tiles)")
    lw.vmap[op.result] = Buf(t, lw.alloc_shared(size, 16), "shared")


@rule(AsyncCopyOp)
def _copy(lw: KernelLowering, op: AsyncCopyOp) -> None:
    if lw.workgroup_size is None:
        raise op_error(op, "needs a coop.workgroup_size attribute (every invocation copies)")
    x, y, z = lw.workgroup_size
    n = x * y * z
    rows, cols = op.rows.data, op.cols.data
    es = width(op.source.type.element_type) // 8
    src, dst = lw.vmap[op.source], lw.vmap[op.destination]
    io = lw.index_op
    idx = IndexType()
    soff, sstr = lw.scalar(op.source_offset), lw.scalar(op.source_stride)
    doff, dstr = lw.scalar(op.destination_offset), lw.scalar(op.destination_stride)
    lw.comment(f"{op.name} {rows}x{cols}: element t, t+{n}, ... per invocation")
    tid = Scalar(idx, reg=lw.cached("u64 linear tid", lambda: lw.u64(lw.linear_tid(), True)))
    total = rows * cols
    # for (e = tid; e < total; e += n) { r = e / cols; c = e % cols; dst[..] = src[..] }
    head = lw.new_block(["b64"])
    lw.emit(ptx.BraOp(head, [lw.reg(tid)]))
    lw.cur = head
    e = Scalar(idx, reg=head.args[0])
    done = lw.inst(ptx.SetpOp, ".ge.s64", [e.reg, lw.reg(lw.idx_const(total))], "pred")
    body, exit_ = lw.new_block(), ptx_block()
    lw.emit(ptx.CbraOp(done, exit_, body))
    lw.cur = body
    r = Scalar(idx, reg=lw.inst(ptx.DivOp, ".u64", [e.reg, lw.reg(lw.idx_const(cols))], "b64"))
    c = Scalar(idx, reg=lw.inst(ptx.RemOp, ".u64", [e.reg, lw.reg(lw.idx_const(cols))], "b64"))
    s_el = io("add", soff, io("add", io("mul", r, sstr), c))
    d_el = io("add", doff, io("add", io("mul", r, dstr), c))
    s_addr = lw.reg(io("add", Scalar(idx, reg=src.base), io("mul", s_el, lw.idx_const(es))))
    d_addr = lw.reg(io("add", Scalar(idx, reg=dst.base), io("mul", d_el, lw.idx_const(es))))
    if es == 4:
        lw.emit(ptx.CpAsyncOp(d_addr, s_addr, 4))
    else:
        kind = "b16" if es == 2 else "b32" if es == 1 else "b64"
        mod = {1: "u8", 2: "b16", 8: "b64"}[es]
        v = lw.emit(ptx.LdOp(f".global.{mod}", s_addr, 0, [ptx.reg_type(kind)])).outs[0]
        lw.emit(ptx.StOp(f".shared.{'b8' if es == 1 else mod}", d_addr, 0, [v]))
    nxt = io("add", e, lw.idx_const(n))
    lw.emit(ptx.BraOp(head, [lw.reg(nxt)]))
    lw.blocks.append(exit_)
    lw.cur = exit_


def ptx_block():
    from xdsl.ir import Block
    return Block()


@rule(AsyncCommitGroupOp)
def _commit(lw: KernelLowering, op: AsyncCommitGroupOp) -> None:
    lw.emit(ptx.CpAsyncCommitGroupOp())


@rule(AsyncWaitGroupOp)
def _wait(lw: KernelLowering, op: AsyncWaitGroupOp) -> None:
    lw.emit(ptx.CpAsyncWaitGroupOp(op.pending.data))
    lw.emit(ptx.BarSyncOp(0))
