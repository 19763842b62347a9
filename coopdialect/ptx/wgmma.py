"""Workgroup-scope cooperative matrices, op by op, on W = n/128 warpgroups -> dense
`wgmma.mma_async` (sm_90a; PTX ISA 9.7.15). n = coop.workgroup_size invocations, a multiple of 128.

* **Accumulator** M x N, M = 64·W·R (R >= 1 blocks of 64 rows per warpgroup), N a multiple of
  8: warpgroup v owns rows 64·R·v .. 64·R·(v+1) - 1; its block b (rows from 64·(R·v + b)) is
  the wgmma D fragment, so thread t (warp w of its warpgroup, g = lane>>2, q = lane&3) holds
  element d_i of block b at row 64·(R·v + b) + 16w + g + 8·((i>>1)&1), column 8·(i>>2) + 2q +
  (i&1); registers block after block, R·N/2 per thread. f32 accumulates f16/bf16 products,
  32-bit integers s8/u8 ones; loads, stores, constructs and element-wise ops take any 8- to
  32-bit type. `coop.load`/`coop.store` address each element in its MemoryLayout
  (matrix_addressing.py: RowMajor, ColumnMajor, the Arm blocked layouts).
* **A** (M x K) and **B** (K x N), f16/bf16 or 8-bit integers, are staged into a `.shared`
  tile by every thread (`coop.load` here, `coop.load_tensor` in nv2_workgroup.py): K-major
  core matrices without swizzle (the only form 8-bit operands have), one block per K slice of
  one instruction — 32 bytes of K: 16 f16/bf16 or 32 8-bit elements. Byte kb = (k mod slice)·E
  of row mn (the M index for A, N for B; E the component bytes) of slice s lies at
  s·MN·32 + (mn/8)·SBO + (kb/16)·LBO + (mn%8)·16 + kb%16, LBO = 128, SBO = 256 (PTX ISA
  9.7.15.5.1.2). A 2-byte operand moved in 16-byte groups along M/N is staged MN-major instead
  (core matrices of 8 K rows × 16 bytes of M/N, the same LBO and SBO; wgmma's imm-trans 1):
  element (mn, k) of slice s at s·MN·32 + (mn/8)·SBO + ((k%16)/8)·LBO + (k%8)·16 + (mn%8)·2,
  so each group is one st.shared.v4 (`StagedTile.mn_major`, `mn_major_groups`). Thread t stages the elements t + j·n of the matrix, row by row (column by
  column for ColumnMajor), so neighbouring threads read neighbouring addresses. Sequence:
  `bar.sync` (earlier wgmmas have read the tile), `ld` + `st.shared`, `fence.proxy.async`
  (the async proxy must see generic-proxy writes), `bar.sync`; consecutive staged loads share
  one leading and one trailing barrier.
* **mul_add**: per K slice, 64-row block and N chunk one `wgmma.mma_async.m64nNk{16|32}`,
  chained per (block, chunk) between `wgmma.fence` and `commit_group` (no accumulator or A
  register is touched in between: ptxas injects no warpgroup.arrive/wait; each descriptor is
  advanced next to its wgmma, where ptxas keeps it in a uniform register). The wait comes
  before the first later op that reads the result (`wait_group N`, N the groups committed
  since) or is not register arithmetic of the block (`wait_group 0`;
  `KernelLowering.wait_before`): the next product and the arithmetic that does not read this
  one's result run while the tensor cores work. With `coop.pingpong` the fence is preceded by
  `KernelLowering.take_turn`. Chunks are at most 256 columns, and for 8-bit operands an N the
  integer instruction has (8, 16, 24 or a multiple of 16). A descriptor is
  `(addr & 0x3FFFF) >> 4 | (LBO>>4) << 16 | (SBO>>4) << 32`; A's block R·v + b starts
  2048·(R·v + b) bytes into each slice, B's chunk from column n0 (n0/8)·256 bytes.
* **Integers** (`.s32.{s8|u8}.{s8|u8}`, signedness from the KHR Cooperative Matrix Operands or
  the component types): without `.satfinite` the accumulation wraps (PTX ISA 9.7.15.5.2), the
  low 32 bits of A·B + C, as the interpreter computes. SaturatingAccumulation (KHR: A·B in
  range, the addition of C saturates): `.satfinite` would clamp every partial sum of the chain,
  so the chain sums A·B from zero without it (exact: a wrapped partial sum of an in-range
  total is the total) and `add.sat.s32` adds C once; signed C and Result only.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType
from xdsl.dialects import scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from coopdialect.dialects import coop, ptx
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects.coop_async import AsyncCopyTensorOp
from coopdialect.dialects import sparse_mma as sm
from coopdialect.dialects.coop import Layout, MatrixOperand, Scope, Use
from coopdialect.ptx import affine as af
from coopdialect.ptx import fragments as fr
from coopdialect.ptx.affine import Aff, Arith
from coopdialect.ptx.kernel_lowering import Frag, KernelLowering, max_shared_bytes, op_error
from coopdialect.ptx.matrix_addressing import element_addresses, load_values, scalar_aff, store_values

LBO, SBO = 128, 256
DESC_STRIDES = (LBO >> 4) << 16 | (SBO >> 4) << 32
SLICE_BYTES = 32
"""Bytes of K one wgmma.mma_async reads per row: k16 of 16-bit, k32 of 8-bit components."""
BLOCK_BYTES = 64 // 8 * SBO
"""Bytes of one 64-row block of a staged slice."""
INTEGER_N = (8, 16, 24, *range(32, 257, 16))
"""The N of `wgmma.mma_async.m64nNk32.s32` (PTX ISA 9.7.15.5.2; ptxas rejects the others)."""


def check_warpgroup(lw: KernelLowering, op) -> None:
    """One warpgroup of 128 invocations on sm_90a (the sparse products, sparse.py)."""
    if (why := fr.missing_use(op)) is not None:
        raise op_error(op, why)
    size = lw.workgroup_size
    if size is None or size[0] * size[1] * size[2] != 128:
        raise op_error(op, f"workgroup-scope matrices need exactly one warpgroup: "
                           f"coop.workgroup_size of 128 invocations, got {size}")
    if lw.target != "sm_90a":
        raise op_error(op, f"workgroup-scope matrices lower to wgmma, which needs target "
                           f"sm_90a, not {lw.target}")


def threads(lw: KernelLowering, op) -> int:
    """Invocations of the workgroup; an error unless whole warpgroups on sm_90a."""
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


def warpgroup(lw: KernelLowering, n: int) -> Aff:
    """This thread's warpgroup, linear tid >> 7, in [0, n/128)."""
    if n == 128:
        return af.const(0)
    return af.atom(lw.cached("u64 warpgroup", lambda: lw.u64(lw.warpgroup_index(), True)),
                   0, n // 128 - 1)


def acc_blocks(lw: KernelLowering, op, t: coop.MatrixType) -> tuple[int, int]:
    """(invocations, R = 64-row blocks per warpgroup) of an accumulator this layout holds; an
    error for any other Workgroup-scope matrix (module docstring)."""
    n = threads(lw, op)
    wgs = n // 128
    if t.use_value != Use.MatrixAcc or t.rows % (64 * wgs) or t.columns % 8 or t.columns < 8:
        raise op_error(op, f"workgroup-scope {t.use_value.value if t.use_value else 'NV'} "
                           f"{t.rows}x{t.columns} with {wgs} warpgroup(s): an accumulator must be "
                           f"{64 * wgs}·R x N (64-row blocks spread evenly over the warpgroups, "
                           "N a multiple of 8)")
    if coop.bit_width(t.element_type) > 32:
        raise op_error(op, f"workgroup-scope accumulator {t.element_type}: 8- to 32-bit elements "
                           "are lowered")
    return n, t.rows // (64 * wgs)


def acc_positions(lw: KernelLowering, op, t: coop.MatrixType) -> list[tuple[Aff, Aff]]:
    """(row, col) of each accumulator element this thread holds, in register order (module
    docstring), or where the lowering places them (KernelLowering.workgroup_acc_positions)."""
    own = lw.workgroup_acc_positions(op, t)
    if own is not None:
        return own
    n, blocks = acc_blocks(lw, op, t)
    lay = fr.wgmma_acc_layout(t.columns)
    g, q, w = lw.lane_geometry()
    row = af.add(af.add(af.atom(g, 0, 7), af.scale(af.atom(w, 0, 3), 16)),
                 af.scale(warpgroup(lw, n), 64 * blocks))
    col = af.scale(af.atom(q, 0, 3), 2)
    return [(af.add(row, af.const(64 * b + r0)), af.add(col, af.const(c0)))
            for b in range(blocks) for r0, c0 in lay.elems]


def construct(lw: KernelLowering, op: coop.CompositeConstructOp) -> None:
    t = op.result.type
    n = threads(lw, op)
    r = lw.reg(lw.scalar(op.constituent))
    lw.vmap[op.result] = Frag(t, [r] * (t.rows * t.columns // n))


# ---------------------------------------------------------------------------------------------
# Staged A and B
# ---------------------------------------------------------------------------------------------


@dataclass
class StagedTile:
    """A Workgroup-scope A or B staged in shared memory (module docstring)."""

    ty: coop.MatrixType
    addr: SSAValue  # 64-bit shared-window address
    mn: int  # M (A) or N (B)
    k: int
    es: int  # component bytes (2 or 1)
    mn_major: bool = False  # 16-byte core-matrix rows along M/N (wgmma imm-trans-a/b = 1)
    # 0: the no-swizzle core-matrix form above. R > 0: a B tile written by bulk tensor copies
    # (staged_tma.py) as 128-byte-swizzled panels of R rows x 128 bytes, one panel per 64
    # 2-byte components of each row, R x 128 bytes apart; the rows run along N (K-major) or
    # along K (MN-major).
    swizzle_rows: int = 0

    def desc_bits(self) -> int:
        """The descriptor's fields besides the start address (PTX ISA 9.7.15.5.1.2): LBO, SBO
        and the layout type. Swizzled K-major: SBO = 8 rows of 128 bytes (LBO unused, 1);
        swizzled MN-major (canonical ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))): LBO = the panel
        stride, SBO = 8 rows of 128 bytes."""
        if not self.swizzle_rows:
            return DESC_STRIDES
        lbo = self.swizzle_rows * 128 if self.mn_major else 16
        return 1 << 62 | (1024 >> 4) << 32 | (lbo >> 4) << 16

    def b_offset(self, s: int, n0: int) -> int:
        """Bytes from the tile's start to K slice `s` (32 bytes of K) of the N chunk from column
        `n0` (a B operand)."""
        if not self.swizzle_rows:
            return s * self.mn * SLICE_BYTES + n0 // 8 * SBO
        panel = self.swizzle_rows * 128
        if self.mn_major:  # K down the rows (16 rows a slice), N across the panels
            assert n0 % 64 == 0, n0
            return s * 16 * 128 + n0 // 64 * panel
        kb = s * SLICE_BYTES  # K across the panels, N down the rows
        return kb // 128 * panel + kb % 128 + n0 * 128


def operand_extents(op, t: coop.MatrixType) -> tuple[int, int, int]:
    """(MN, K, component bytes) of a wgmma operand; an error for types and shapes wgmma lacks."""
    et = t.element_type
    if isinstance(et, Float16Type | BFloat16Type):
        es = 2
    elif isinstance(et, IntegerType) and et.width.data == 8:
        es = 1
    else:
        raise op_error(op, f"workgroup-scope {t.use_value.value} of {et}: wgmma operands of f16, "
                           "bf16 and 8-bit integers are lowered")
    mn, k = (t.rows, t.columns) if t.use_value == Use.MatrixA else (t.columns, t.rows)
    if k % (SLICE_BYTES // es) or mn % 8:
        raise op_error(op, f"workgroup-scope {t.use_value.value} {t.rows}x{t.columns}: K must be "
                           f"a multiple of {SLICE_BYTES // es} (the wgmma K of {et}) and M/N of 8")
    return mn, k, es


def traversal(lw: KernelLowering, op, rows: int, cols: int, n: int,
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
    else:  # lines that neither divide nor are divided by n: one division per element
        for j in range(rows * cols // n):
            out.append(ar.divmod(af.add(t, af.const(j * n)), af.const(fast)))
    if by_column:
        return [(f, s) for s, f in out]
    return out


def smem_offset(ar: Arith, m_: Aff, k_: Aff, mn: int, es: int, mn_major: bool = False) -> Aff:
    """Byte offset of element (mn, k) in a staged tile (module docstring); `mn_major`: the
    MN-major no-swizzle form of 2-byte components, core matrices of 8 K rows x 16 bytes of
    MN, element (mn, k) of a slice at (mn/8)*SBO + ((k%16)/8)*LBO + (k%8)*16 + (mn%8)*2 (PTX
    ISA 9.7.15.5.1.2, canonical layout ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)))."""
    if mn_major:
        ks, kr = ar.divmod(k_, af.const(SLICE_BYTES // es))
        kh, kl = ar.divmod(kr, af.const(8))
        mh, ml = ar.divmod(m_, af.const(8))
        return af.add(af.add(af.scale(ks, mn * SLICE_BYTES), af.scale(mh, SBO)),
                      af.add(af.add(af.scale(kh, LBO), af.scale(kl, 16)), af.scale(ml, es)))
    ks, kr = ar.divmod(k_, af.const(SLICE_BYTES // es))
    kh, kl = ar.divmod(kr, af.const(16 // es))
    mh, ml = ar.divmod(m_, af.const(8))
    return af.add(af.add(af.scale(ks, mn * SLICE_BYTES), af.scale(mh, SBO)),
                  af.add(af.add(af.scale(kh, LBO), af.scale(ml, 16)), af.scale(kl, es)))


def smem_reg(lw: KernelLowering, ar: Arith, smem: SSAValue, off: Aff) -> SSAValue:
    """The register of `smem` + the variable part of `off` (its constant is the offset)."""
    var = af.Aff(off.terms, 0)
    if var.is_const:
        return smem
    key = ("stage", id(smem), ar._key(var))
    if key not in ar.memo:
        ar.memo[key] = lw.inst(ptx.AddOp, ".s64", [smem, ar.reg(var)], "b64")
    return ar.memo[key]


def store_staged(lw: KernelLowering, ar: Arith, smem: SSAValue, tile_mn: int, es: int,
                 use: Use, r: Aff, c: Aff, v: SSAValue, mn_major: bool = False) -> None:
    """`st.shared` of matrix element (r, c) of an A (M x K) or B (K x N) into its tile."""
    m_, k_ = (r, c) if use == Use.MatrixA else (c, r)
    off = smem_offset(ar, m_, k_, tile_mn, es, mn_major)
    lw.emit(ptx.StOp(f".shared.b{8 * es}", smem_reg(lw, ar, smem, off), off.const, [v]))


def _sibling_loop_slot(op) -> tuple | None:
    """Where a staged tile may reuse another loop's: (the block holding op's innermost scf.for,
    op's place among that loop body's staged loads, ...) when every use of op's result is in
    the loop's body. Two scf.for ops of one block run one after the other, so the tiles their
    bodies stage are never live at once (each is rewritten after a barrier, as from one
    iteration to the next)."""
    loop = op.parent_op()
    while loop is not None and not isinstance(loop, scf.ForOp):
        loop = loop.parent_op()
    if loop is None or loop.parent_block() is None:
        return None
    body = loop.body
    for use in op.result.uses:
        anc = use.operation
        while anc is not None and anc is not loop:
            anc = anc.parent_op()
        if anc is None:
            return None
    staged = [o for o in body.walk() if is_staged(o)]
    return (id(loop.parent_block()), staged.index(op))


def stage_buffer(lw: KernelLowering, op, size: int) -> SSAValue:
    """A 128-byte aligned `.shared` tile of `size` bytes: a new one, or the one a staged load of
    an earlier sibling loop used in the same place (`_sibling_loop_slot`); an error past the
    static limit."""
    slot = _sibling_loop_slot(op)
    pool = lw.__dict__.setdefault("_stage_pool", {})
    if slot is not None and (*slot, size) in pool:
        return pool[(*slot, size)]
    buf = _new_stage_buffer(lw, op, size)
    if slot is not None:
        pool[(*slot, size)] = buf
    return buf


def _new_stage_buffer(lw: KernelLowering, op, size: int) -> SSAValue:
    limit = max_shared_bytes(lw.target)
    if lw.shared_bytes + size > limit:
        raise op_error(op, f"staging this operand needs {lw.shared_bytes + size} bytes of shared "
                           f"memory in all, more than the {limit} a block may use on "
                           f"{lw.target}: use smaller tiles")
    return lw.alloc_shared(size, 128)


def staged_by_sparse_product(op: coop.LoadOp) -> bool:
    """A load whose only users are sparse_mma products (as A, metadata or B): the product
    stages it itself (sparse.py)."""
    uses = list(op.result.uses)
    return bool(uses) and all(isinstance(u.operation, sm.MmaSpOp) and u.index < 3 for u in uses)


def is_staged(op: Operation | None) -> bool:
    """A load of a Workgroup-scope A or B that is staged op by op (this module's coop.load,
    nv2_workgroup.py's coop.load_tensor). Consecutive staged loads share their barriers: one
    bar.sync before the first (earlier readers of both tiles are done) and one
    fence.proxy.async + bar.sync after the last (the fence orders all of the thread's earlier
    shared-memory writes for the async proxy)."""
    if not isinstance(op, coop.LoadOp | nv2.LoadTensorOp):
        return False
    t = op.result.type
    if t.scope_value != Scope.Workgroup or t.use_value not in (Use.MatrixA, Use.MatrixB):
        return False
    if isinstance(op, coop.LoadOp) and any(isinstance(u.operation, AsyncCopyTensorOp)
                                           for u in op.pointer.uses):
        return False  # its workgroup buffer is the tile (staged_workgroup.py)
    return not (isinstance(op, coop.LoadOp) and staged_by_sparse_product(op))


def begin_staging(lw: KernelLowering, op) -> None:
    if not is_staged(op.prev_op):  # else the previous staged load's barrier covers this tile
        lw.emit(ptx.BarSyncOp(0))


def end_staging(lw: KernelLowering, op) -> None:
    if not is_staged(op.next_op):  # else the next staged load's fence and barrier cover both
        lw.emit(ptx.FenceProxyAsyncOp())
        lw.emit(ptx.BarSyncOp(0))


def vector_groups(rows: int, cols: int, es: int, n: int, along_columns: bool) -> bool:
    """Whether a rows x cols tile splits into 16-byte groups (16/E consecutive elements along
    its columns, or along its rows) evenly over n invocations (`stage_vectors`' traversal)."""
    per = 16 // es
    if (cols if along_columns else rows) % per:
        return False
    fast = cols // per if along_columns else rows // per
    return (rows * cols // per) % n == 0 and (n % fast == 0 or fast % n == 0)


def _bank_order(lw: KernelLowering, lines: int, across: int, n: int) -> list | None:
    """(line, group) of each 16-byte group thread t moves, e = t + j*n, in the order that keeps
    `st.shared.v4` free of bank conflicts: a group is one 16-byte row of a core matrix (K-major
    or MN-major alike), the 8 rows of a core matrix are 8 consecutive lines, and 8 consecutive
    threads (one phase of a 16-byte store) take those 8 lines at the same group: e%8 is the
    line within 8, (e/8) % across the group, e/(8*across) the line's block of 8. Global reads
    stay in runs: each 8 threads read 16 bytes of 8 lines, the next 8 the next 16 bytes. None
    when the lines do not come in 8s or the groups do not split evenly over n threads."""
    if lines % 8 or n % 8 or (lines * across) % n:
        return None
    ar = Arith(lw)
    t = af.atom(lw.cached("u64 linear tid", lambda: lw.u64(lw.linear_tid(), True)), 0, n - 1)
    t8, lo = ar.divmod(t, af.const(8))
    out = []
    for j in range(lines * across // n):
        hi, g = ar.divmod(af.add(t8, af.const(j * (n // 8))), af.const(across))
        out.append((af.add(af.scale(hi, 8), lo), g))
    return out


def stage_vectors(lw: KernelLowering, op, t: coop.MatrixType, smem: SSAValue, mn: int, es: int,
                  n: int, along_columns: bool, group_address, wide: bool = True,
                  mn_major: bool = False, src=None, cp_async: bool = False) -> None:
    """Each thread moves 16-byte groups of 16/E consecutive elements, along the matrix's columns
    (`along_columns`) or rows: one `ld.v4.b32` from `group_address(ar, row, col)` (the first
    element's register and byte offset, 16-byte aligned; or (register, offset, keep, fill):
    where the predicate `keep` fails, the group is four `.b32` fill words; `wide` False: eight
    `ld.b16` of the same group, for a 2-byte component whose base is not 16-byte aligned: the
    same addresses, so the two paths hold no registers apart), then one `st.shared.v4.b32` when the
    group runs along K (16 contiguous bytes of a core-matrix row), else one `st.shared` per
    element (consecutive M/N rows: 16 bytes apart, SBO past each 8 rows) — unless the tile is
    MN-major (`mn_major_groups`), where a group along M/N is one 16-byte core-matrix row too.
    `src`: the Buf read (default: op's pointer). `cp_async`: a group that is one 16-byte row of
    the tile is one `cp.async.cg` of 16 bytes instead (src-size 0 where `keep` fails: zeros,
    so only for a zero fill), which the caller's `cp.async.wait_group` retires."""
    ar = Arith(lw)
    per = 16 // es
    lines, across = (t.rows, t.columns // per) if along_columns else (t.columns, t.rows // per)
    order = _bank_order(lw, lines, across, n)
    if order is not None:
        groups = [(line, af.scale(g, per)) if along_columns else (af.scale(g, per), line)
                  for line, g in order]
    elif along_columns:
        groups = [(r, af.scale(g, per)) for r, g in traversal(lw, op, t.rows, t.columns // per,
                                                               n, False)]
    else:
        groups = [(af.scale(g, per), c) for g, c in traversal(lw, op, t.rows // per, t.columns,
                                                               n, True)]
    is_a = t.use_value == Use.MatrixA
    along_k = along_columns == is_a
    buf = src if src is not None else lw.vmap[op.pointer]
    for r, c in groups:
        got = group_address(ar, r, c)
        a, off = got[:2]
        keep = got[2] if len(got) > 2 else True
        if cp_async and wide and (along_k or mn_major):
            # a discarded group has src-size 0: nothing is read (its address may lie anywhere),
            # the 16 bytes are zero-filled (as CUTLASS's cp_async_zfill)
            m_, k_ = (r, c) if is_a else (c, r)
            so = smem_offset(ar, m_, k_, mn, es, mn_major)
            # (keep False: the group is known to lie outside, as a block before the first)
            size = None if keep is True else lw.imm("b32", "0") if keep is False else lw.inst(
                ptx.SelpOp, ".b32", [lw.imm("b32", "16"), lw.imm("b32", "0"), keep], "b32")
            lw.emit(ptx.CpAsyncOp(smem_reg(lw, ar, smem, so), a, 16, size, so.const, off))
            continue
        if keep is False and got[3] is not None:
            # known to lie outside (a block before the first): the fill words, nothing read
            words = [got[3]] * 4
        else:
            if keep is not True:
                # a discarded group reads the memref's first 16 bytes instead (aligned, no
                # fault), then takes the fill words (none under Undefined: any value will do)
                if keep is False:
                    a, off = buf.base, 0
                else:
                    if off:
                        a = lw.inst(ptx.AddOp, ".s64", [a, lw.imm("b64", str(off))], "b64")
                    a, off = lw.inst(ptx.SelpOp, ".b64", [a, buf.base, keep], "b64"), 0
            if wide:
                words = lw.emit(ptx.LdOp(f".{buf.space}.v4.b32", a, off, [ptx.B32] * 4)).outs
            else:  # the same group, element by element (a base that is not 16-byte aligned)
                halves = [lw.emit(ptx.LdOp(f".{buf.space}.b16", a, off + 2 * i,
                                           [ptx.B16])).outs[0] for i in range(8)]
                words = [lw.emit(ptx.PackOp(".b32", halves[i:i + 2], ptx.B32)).out
                         for i in (0, 2, 4, 6)]
            if keep is not True and keep is not False:
                words = [lw.inst(ptx.SelpOp, ".b32", [w, got[3], keep], "b32") for w in words]
        m_, k_ = (r, c) if is_a else (c, r)
        so = smem_offset(ar, m_, k_, mn, es, mn_major)
        sa = smem_reg(lw, ar, smem, so)
        if along_k or mn_major:
            lw.emit(ptx.StOp(".shared.v4.b32", sa, so.const, list(words)))
            continue
        vals = []
        for w in words:
            if es == 2:
                vals += list(lw.emit(ptx.UnpackOp(".b32", w, [ptx.B16, ptx.B16])).outs)
            else:  # st.shared.b8 stores the low byte
                vals += [w] + [lw.inst(ptx.ShrOp, ".b32", [w, lw.imm("b32", str(8 * i))], "b32")
                               for i in (1, 2, 3)]
        for i, v in enumerate(vals):
            lw.emit(ptx.StOp(f".shared.b{8 * es}", sa, so.const + i // 8 * SBO + i % 8 * 16, [v]))


def mn_major_groups(t: coop.MatrixType, es: int, along_columns: bool) -> bool:
    """Whether 16-byte groups along the matrix's columns (rows) run along M/N and the tile is
    staged MN-major for them: 2-byte components only (wgmma transposes f16/bf16 operands, not
    8-bit ones)."""
    along_k = along_columns == (t.use_value == Use.MatrixA)
    return not along_k and es == 2


def aligned_branch(lw: KernelLowering, aligned: SSAValue, vectors, elements) -> None:
    """`vectors()` where the uniform predicate `aligned` holds, else `elements()`."""
    vec, scalar, join = lw.new_block(), Block(), Block()
    lw.emit(ptx.CbraOp(aligned, scalar, vec, negate=True))
    lw.cur = vec
    vectors()
    lw.emit(ptx.BraOp(join))
    lw.blocks.append(scalar)
    lw.cur = scalar
    elements()
    lw.emit(ptx.BraOp(join))
    lw.blocks.append(join)
    lw.cur = join


def aligned_16(lw: KernelLowering, first: Aff) -> SSAValue:
    """The predicate `first % 16 == 0` of a byte address."""
    low = lw.inst(ptx.AndOp, ".b64", [Arith(lw).reg(first), lw.imm("b64", "15")], "b64")
    return lw.inst(ptx.SetpOp, ".eq.b64", [low, lw.imm("b64", "0")], "pred")


# ---------------------------------------------------------------------------------------------
# coop.load / coop.store / coop.composite_construct
# ---------------------------------------------------------------------------------------------


def load_workgroup(lw: KernelLowering, op: coop.LoadOp) -> None:
    t = op.result.type
    buf = lw.vmap[op.pointer]
    offset, stride, layout = lw.scalar(op.offset), lw.scalar(op.stride), op.layout.data
    if t.use_value not in (Use.MatrixA, Use.MatrixB):
        pos = acc_positions(lw, op, t)
        lw.comment(f"{op.name} -> {t.rows}x{t.columns} workgroup accumulator, {layout.value}")
        addrs = element_addresses(lw, op, buf, offset, stride, layout, t, pos)
        lw.vmap[op.result] = Frag(t, load_values(lw, buf, t.element_type, addrs))
        return
    n = threads(lw, op)
    mn, k, es = operand_extents(op, t)
    pos = traversal(lw, op, t.rows, t.columns, n, layout == Layout.ColumnMajor)
    smem = stage_buffer(lw, op, mn * k * es)
    lw.comment(f"{op.name} -> {t.rows}x{t.columns} {t.use_value.value} staged in shared memory "
               f"({len(pos)} elements per invocation), {layout.value}")
    begin_staging(lw, op)

    along = {Layout.RowMajor: True, Layout.ColumnMajor: False}.get(layout)
    vector = along is not None and stride.const is not None and int(stride.const) * es % 16 == 0 \
        and vector_groups(t.rows, t.columns, es, n, along)
    mn_major = vector and mn_major_groups(t, es, along)

    def elements():
        addrs = element_addresses(lw, op, buf, offset, stride, layout, t, pos)
        vals = load_values(lw, buf, t.element_type, addrs)
        ar = Arith(lw)
        for (r, c), v in zip(pos, vals):
            store_staged(lw, ar, smem, mn, es, t.use_value, r, c, v, mn_major)

    def group_address(ar, r, c):
        reg, offs = element_addresses(lw, op, buf, offset, stride, layout, t, [(r, c)])[0]
        return reg, offs[0]

    if vector:
        # 16-byte groups when the matrix's first element is 16-byte aligned at run time
        # (uniform: Pointer and offset are the same for every invocation); rows (columns) of a
        # stride of 16 bytes keep every group aligned.
        first = af.add(af.atom(buf.base, 0, af.I64_MAX), af.scale(scalar_aff(lw, offset), es))
        aligned_branch(lw, aligned_16(lw, first),
                       lambda: stage_vectors(lw, op, t, smem, mn, es, n, along, group_address,
                                             mn_major=mn_major),
                       elements)
    else:
        elements()
    end_staging(lw, op)
    lw.vmap[op.result] = StagedTile(t, smem, mn, k, es, mn_major)


def store_workgroup(lw: KernelLowering, op: coop.StoreOp) -> None:
    t = op.object.type
    buf = lw.vmap[op.pointer]
    pos = acc_positions(lw, op, t)
    lw.comment(f"{op.name} {t.rows}x{t.columns} workgroup accumulator, {op.layout.data.value}")
    addrs = element_addresses(lw, op, buf, lw.scalar(op.offset), lw.scalar(op.stride),
                              op.layout.data, t, pos)
    store_values(lw, buf, t.element_type, addrs, list(lw.vmap[op.object].regs))


# ---------------------------------------------------------------------------------------------
# coop.mul_add
# ---------------------------------------------------------------------------------------------


def n_chunks(n: int, integer: bool) -> list[tuple[int, int]]:
    """(first column, width) of the wgmma instructions that cover N columns (module docstring)."""
    out, n0 = [], 0
    while n0 < n:
        w = min(256, n - n0)
        if integer:
            w = max(x for x in INTEGER_N if x <= w)
        out.append((n0, w))
        n0 += w
    return out


def _types(op: coop.MulAddOp) -> tuple[str, str, str]:
    """(D, A, B) type suffixes of the wgmma for this product; an error for what it lacks."""
    ta, tb, tc, tr = (v.type for v in (op.a, op.b, op.c, op.result))
    ea, eb = ta.element_type, tb.element_type
    if isinstance(ea, IntegerType) and isinstance(eb, IntegerType):
        for which, t in (("C", tc), ("Result", tr)):
            if not (isinstance(t.element_type, IntegerType) and t.element_type.width.data == 32):
                raise op_error(op, f"wgmma accumulates 8-bit products in 32-bit integers, not "
                                   f"{which} of {t.element_type}")
        return ("s32", "s8" if op.is_signed("A") else "u8", "s8" if op.is_signed("B") else "u8")
    if type(ea) is not type(eb) or not isinstance(ea, Float16Type | BFloat16Type):
        raise op_error(op, f"wgmma multiplies f16, bf16 or 8-bit integer A and B of one kind, "
                           f"not {ea} and {eb}")
    for which, t in (("C", tc), ("Result", tr)):
        if not isinstance(t.element_type, Float32Type):
            raise op_error(op, f"workgroup-scope accumulator {t.element_type} ({which}): wgmma "
                               f"products of {ea} accumulate in f32 here")
    if op.operand_flags:
        raise op_error(op, f"Cooperative Matrix Operands have no meaning for {ea} wgmma")
    et = "f16" if isinstance(ea, Float16Type) else "bf16"
    return "f32", et, et


def _descriptor(lw: KernelLowering, addr: SSAValue, bits: int = DESC_STRIDES) -> SSAValue:
    t = lw.inst(ptx.AndOp, ".b64", [addr, lw.imm("b64", "0x3FFFF")], "b64")
    t = lw.inst(ptx.ShrOp, ".u64", [t, lw.imm("b32", "4")], "b64")
    return lw.inst(ptx.OrOp, ".b64", [t, lw.imm("b64", f"0x{bits:016X}")], "b64")


def _advanced(lw: KernelLowering, desc: SSAValue, nbytes: int) -> SSAValue:
    """`desc` with its start address moved by `nbytes` (a multiple of 16; the 14-bit start
    field does not carry: shared addresses are below 256 KiB)."""
    if not nbytes:
        return desc
    return lw.inst(ptx.AddOp, ".s64", [desc, lw.imm("b64", str(nbytes >> 4))], "b64")


def _owns_registers(op: coop.MulAddOp, regs: list[SSAValue]) -> bool:
    """Whether C's registers may be overwritten: C has no use but this product, and it is a
    loop-carried value or the result of a load or product, whose registers no other value
    shares (a composite_construct repeats one register; a conversion may return its input's)."""
    c = op.c
    if len(list(c.uses)) != 1 or len(set(regs)) != len(regs):
        return False
    if isinstance(c, BlockArgument):
        return isinstance(c.owner.parent_op(), scf.ForOp)
    return isinstance(c.owner, coop.LoadOp | coop.MulAddOp | nv2.LoadTensorOp)


def _register_a(lw: KernelLowering, a: Frag, blocks: int) -> list[list[list[SSAValue]]]:
    """[block][K slice] -> the four .b32 registers of wgmma's register A: a Workgroup-scope
    f16/bf16 MatrixA whose registers are in the accumulator order (nv2_rules' convert of an
    accumulator), so that slice s of block b is its elements 8s..8s+7 of the block,
    (a_2i, a_2i+1) packed into register i (PTX ISA 9.7.15.5.1: a0, a1 at row g, k 2q, 2q+1;
    a2, a3 at row g + 8; a4..a7 the same at k + 8: the accumulator's columns 16s..16s+15)."""
    per = a.ty.columns // 2
    out = []
    for b in range(blocks):
        regs = a.regs[b * per:(b + 1) * per]
        out.append([[lw.emit(ptx.PackOp(".b32", [regs[8 * s + 2 * i], regs[8 * s + 2 * i + 1]],
                                        ptx.B32)).out for i in range(4)]
                    for s in range(a.ty.columns // 16)])
    return out


def mul_add_workgroup(lw: KernelLowering, op: coop.MulAddOp) -> None:
    a, b = lw.vmap[op.a], lw.vmap[op.b]
    in_regs = isinstance(a, Frag)
    if not (isinstance(a, StagedTile) or in_regs) or not isinstance(b, StagedTile):
        raise op_error(op, "workgroup-scope B must come from coop.load or coop.load_tensor "
                           "(staged in shared memory for wgmma), and A from those or from a "
                           "coop.convert of an accumulator (wgmma's register A)")
    ta, tb, tc = op.a.type, op.b.type, op.c.type
    n, blocks = acc_blocks(lw, op, tc)
    acc_blocks(lw, op, op.result.type)
    dt, at, bt = _types(op)
    integer = dt == "s32"
    if in_regs and (integer or lw.workgroup_acc_positions(op, ta) is not None):
        raise op_error(op, "a Workgroup-scope A in registers is f16 or bf16 in the op-by-op "
                           "accumulator layout (not 8-bit, not a staged kernel's consumer "
                           "warpgroups)")
    big_m, big_n, big_k = tc.rows, tc.columns, ta.columns
    if ta.rows != big_m or tb.columns != big_n or tb.rows != big_k:
        raise op_error(op, f"A {ta.rows}x{ta.columns} * B {tb.rows}x{tb.columns} does not give "
                           f"the {big_m}x{big_n} accumulator")
    if in_regs and big_k % 16:
        raise op_error(op, f"a Workgroup-scope A in registers needs K a multiple of 16, not "
                           f"{big_k}")
    sat = MatrixOperand.SaturatingAccumulation in op.operand_flags
    if sat and not (op.is_signed("C") and op.is_signed("Result")):
        raise op_error(op, "SaturatingAccumulation with an unsigned C or Result: add.sat "
                           "saturates to the s32 range only")
    k_inst = 16 if in_regs else SLICE_BYTES // a.es
    chunks = n_chunks(big_n, integer)
    c = lw.vmap[op.c]
    shape = ", ".join(f"m64n{w}k{k_inst}.{dt}.{at}.{bt}" for w in dict.fromkeys(w for _, w in chunks))
    slices = big_k // k_inst
    lw.comment(f"{op.name} {big_m}x{big_n}x{big_k}: {slices * blocks * len(chunks)} x "
               f"wgmma.mma_async ({shape}) per warpgroup: {slices} K slices x {blocks} 64-row "
               f"blocks x {len(chunks)} N chunks ({n // 128} warpgroups)"
               f"{', A in registers' if in_regs else ''}"
               f"{'; A*B from zero, then add.sat.s32 of C' if sat else ''}")
    kind = "b32" if integer else "f32"
    mov = ".b32" if integer else ".f32"
    # The chain reads and writes its accumulator registers in place: C's own when no other
    # value can hold them (`_owns_registers`), else fresh copies. (Copies next to a branch of
    # the staging made ptxas 13.0 serialize the wgmmas, C7511.)
    if sat:
        acc = [lw.emit(ptx.MovImmOp(".b32", "0", ptx.B32)).out for _ in c.regs]
    elif _owns_registers(op, c.regs):
        acc = list(c.regs)
    else:
        acc = [lw.inst(ptx.MovOp, mov, [r], kind) for r in c.regs]
    if in_regs:
        a_regs = _register_a(lw, a, blocks)
    else:
        a_addr = a.addr
        if n > 128:
            ar = Arith(lw)
            a_addr = ar.reg(af.add(af.atom(a.addr, 0, 0), af.scale(warpgroup(lw, n),
                                                                    blocks * BLOCK_BYTES)))
        da = _descriptor(lw, a_addr)
    if isinstance(a, StagedTile) and a.swizzle_rows:
        raise op_error(op, "a swizzled tile is a B operand only")
    db = _descriptor(lw, b.addr, b.desc_bits())
    per_block = big_n // 2
    regs = [acc[j * per_block:(j + 1) * per_block] for j in range(blocks)]
    # (block, N chunk, width, A, B): A's registers, or the offsets of A's and B's descriptors,
    # advanced just before their wgmma, where ptxas keeps them in uniform registers (computed
    # all before the first, they were held in vector registers and moved over one by one)
    steps = [(j, n0, w, a_regs[j][s] if in_regs else s * a.mn * SLICE_BYTES + j * BLOCK_BYTES,
              b.b_offset(s, n0))
             for s in range(big_k // k_inst) for j in range(blocks) for n0, w in chunks]
    descs: dict[tuple[SSAValue, int], SSAValue] = {}

    def desc(base: SSAValue, offset: int) -> SSAValue:
        if (base, offset) not in descs:
            descs[base, offset] = _advanced(lw, base, offset)
        return descs[base, offset]
    # imm-trans-a/b: 1 for a tile staged MN-major (f16/bf16 only; 8-bit tiles are K-major)
    ta_ = int(not in_regs and a.mn_major)
    imms = "1" if integer else f"1, 1, 1, {int(b.mn_major)}" if in_regs else \
        f"1, 1, 1, {ta_}, {int(b.mn_major)}"
    lw.take_turn()
    lw.emit(ptx.WgmmaFenceOp())
    for j, n0, w, a_step, b_offset in steps:
        dsa = a_step if in_regs else desc(da, a_step)
        dsb = desc(db, b_offset)
        part = regs[j][n0 // 2:(n0 + w) // 2]
        mma = lw.emit(ptx.WgmmaMmaAsyncOp(f".m64n{w}k{k_inst}.{dt}.{at}.{bt}", dsa, dsb, part,
                                          imms))
        regs[j][n0 // 2:(n0 + w) // 2] = list(mma.outs)
    lw.emit(ptx.WgmmaCommitGroupOp())
    out = [r for blk in regs for r in blk]
    if sat:
        lw.emit(ptx.WgmmaWaitGroupOp(0))
        out = [lw.inst(ptx.AddOp, ".sat.s32", [p, x], "b32") for p, x in zip(out, c.regs)]
    else:
        lw.defer_wgmma_wait(out)
    lw.vmap[op.result] = Frag(op.result.type, out)


def frag_count(lw: KernelLowering, t: coop.MatrixType) -> int:
    """Components per invocation of a Workgroup-scope matrix (coop.length)."""
    size = lw.workgroup_size
    n = size[0] * size[1] * size[2] if size else 128
    return t.rows * t.columns // n

