"""`legalize-coop-sizes{target=NAME|PATH flexible=true|false}`: rewrite cooperative-matrix programs
into the shapes and types the target natively supports (coopdialect.targets).

Policy (docs/legalize.md):

* Matrices that must share one tiling are grouped: the operands and result of an element-wise op
  or conversion, C and Result of a multiply-add, and the init value, block argument, yielded
  value and result of each `scf.for` iter_arg.
* Multiply-adds are handled in program order. With `flexible=true` (default) a problem whose
  M, N, K are multiples of a flexible-dimension granularity of the target for its types and
  scope (VK_NV_cooperative_matrix2; at Workgroup scope only for the kernel's invocation count)
  and at most the target's max dimension stays whole. Otherwise the pass picks, among the
  target's native rows with the same A/B/C/Result types, scope and saturating flag whose M, N
  and K divide the problem and that agree with tilings already chosen for the operands, the one
  with the largest M·N·K (ties: larger M·N, then larger M).
* Matrices not reaching a multiply-add get the largest native shape of their Use and type that
  divides them (A: M×K of a row with that A type, B: K×N, accumulator: M×N of C or Result).
* A split matrix of R×C with tile r×c becomes (R/r)·(C/c) tile values: loads and stores are
  split into sub-loads/stores at element offset `offset + (i·r)·stride + j·c` (RowMajor) or
  `offset + (j·c)·stride + i·r` (ColumnMajor) with the same stride; multiply-adds become chains
  over K (`acc = C[i][j]; acc = A[i][kk]·B[kk][j] + acc` for each kk); element-wise ops and
  conversions apply per tile; loop-carried matrices become one iter_arg per tile.
* Shapes that are no multiple of any native tile are first padded to the next native multiple
  with clamped tensor loads/stores on targets with tensor addressing (passes/legalize_padding.py,
  docs/legalize.md "Padding"); tensor loads/stores of split matrices are split by slicing their
  layout. Matrices that only coopmat2 ops (reduce, per-element op, ...) reach are left whole.
* Refused (CoopError naming the op, its shape and the target's nearest native shapes): shapes
  that are no multiple of any native tile and cannot be padded, K splits under SaturatingAccumulation (saturating each partial sum differs from
  saturating once) or with C and Result of different types, Arm blocked layouts of split
  matrices, and ops whose per-invocation element mapping a split would change (coop.length,
  coop.extract, coop.insert) or that carry a split matrix across anything else (func.return,
  scf.if, ...).

Raises CoopError (`file:line:col: error: 'op' op message`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from coopdialect.errors import CoopError
from coopdialect.dialects import coop, coop_nv2
from coopdialect.dialects import tensor_addr as ta
from coopdialect.targets import Target, TargetError, get_target
from coopdialect.passes.legalize_padding import pad_kernel
from coopdialect.passes.legalize_shapes import (
    ELEMENTWISE,
    Classes,
    build_classes,
    component_name,
    flexible_ok,
    is_matrix,
    mul_add_types,
    rows_for,
    saturating,
    shape_text,
    workgroup_invocations,
)

@dataclass
class _Plan:
    classes: Classes
    tile: dict[SSAValue, tuple[int, int]]  # class root -> (rows, cols) of a tile

    def tile_of(self, v: SSAValue) -> tuple[int, int]:
        return self.tile[self.classes.find(v)]

    def is_split(self, v: SSAValue) -> bool:
        # values this pass creates are native tiles and were never planned
        return is_matrix(v) and v in self.classes.parent and self.tile_of(v) != v.type.get_shape()


def plan_kernel(kernel: func.FuncOp, target: Target, flexible: bool) -> _Plan:
    """Choose a tile shape for every matrix of `kernel` (module docstring); CoopError if none."""
    cls, values, mul_adds = build_classes(kernel)
    invocations = workgroup_invocations(kernel)
    tile: dict[SSAValue, tuple[int, int]] = {}

    for op in mul_adds:
        a, b, c = op.a.type, op.b.type, op.c.type
        (m, k), n = a.get_shape(), b.columns
        types, scope, sat = mul_add_types(op), a.scope_value.value, saturating(op)
        ra, rb, rc = cls.find(op.a), cls.find(op.b), cls.find(op.c)
        fixed = (tile.get(ra), tile.get(rb), tile.get(rc))
        choice = None
        whole = ((m, k), (k, n), (m, n))
        if flexible and all(f is None or f == w for f, w in zip(fixed, whole)) and \
                flexible_ok(target, types, scope, sat, (m, n, k), invocations):
            choice = (m, n, k)
        rows = rows_for(target, types, scope, sat)
        if choice is None:
            best = None
            for r in rows:
                if m % r.m or n % r.n or k % r.k:
                    continue
                if any(f is not None and f != want for f, want in
                       zip(fixed, ((r.m, r.k), (r.k, r.n), (r.m, r.n)))):
                    continue
                if r.k != k and (sat or op.c.type.element_type != op.result.type.element_type):
                    continue  # K split: see the module docstring
                key = (r.m * r.n * r.k, r.m * r.n, r.m)
                if best is None or key > best[0]:
                    best = (key, (r.m, r.n, r.k))
            if best is not None:
                choice = best[1]
        if choice is None:
            why = ""
            if sat:
                why = " (SaturatingAccumulation: K cannot be split)"
            elif op.c.type.element_type != op.result.type.element_type:
                why = " (C and Result types differ: K cannot be split)"
            elif any(f is not None for f in fixed):
                why = " consistent with the tiling already chosen for its operands"
            all_rows = [r for r in target.native_shapes() if r.scope == scope] or list(target.native_shapes())
            pad = "" if target.tensor_addressing else \
                " (padding needs tensor addressing, which the target does not have)"
            raise CoopError(op, f"{m}x{n}x{k} {'·'.join(types)} {scope} has no native tiling on "
                                f"target '{target.name}'{why}; native shapes for these types: "
                                f"{shape_text(rows)} (all {scope} shapes: {shape_text(all_rows)})"
                                f"{pad}")
        tm, tn, tk = choice
        tile[ra], tile[rb], tile[rc] = (tm, tk), (tk, tn), (tm, tn)

    for v in values:
        root = cls.find(v)
        if root in tile:
            continue
        members = [x for x in values if cls.find(x) is root]
        rows_, cols_ = v.type.get_shape()
        if _uses_sparse(members):
            # 2:4 sparse products (sparse_mma) have no tiling here: leave their matrices whole
            tile[root] = (rows_, cols_)
            continue
        best = None
        scope = v.type.scope_value.value
        cands = None
        for x in members:
            t = x.type
            names = component_name(t.element_type)
            use = t.use_value
            shapes = set()
            for r in target.native_shapes():
                if r.scope != scope:
                    continue
                if use in (coop.Use.MatrixA, None) and r.a in names:
                    shapes.add((r.m, r.k))
                if use in (coop.Use.MatrixB, None) and r.b in names:
                    shapes.add((r.k, r.n))
                if use in (coop.Use.MatrixAcc, None) and (r.c in names or r.result in names):
                    shapes.add((r.m, r.n))
            if flexible:
                for f in target.flexible_dimensions:
                    if f.scope != scope or (scope == "Workgroup" and f.workgroup_invocations != invocations):
                        continue
                    gm, gn, gk = f.granularity
                    tm, tn, tk = f.max_dimensions or (target.flexible_max_dimension,) * 3
                    g = {coop.Use.MatrixA: [(gm, gk, tm, tk)] if f.a in names else [],
                         coop.Use.MatrixB: [(gk, gn, tk, tn)] if f.b in names else [],
                         coop.Use.MatrixAcc: [(gm, gn, tm, tn)]
                         if (f.c in names or f.result in names) else []}
                    for gr, gc, tr, tc in g.get(use, []) if use is not None else []:
                        if rows_ % gr == 0 and cols_ % gc == 0 and rows_ <= tr and cols_ <= tc:
                            shapes.add((rows_, cols_))
            cands = shapes if cands is None else cands & shapes
        for r, c in cands or ():
            if rows_ % r or cols_ % c:
                continue
            key = (r * c, r)
            if best is None or key > best[0]:
                best = (key, (r, c))
        if best is None and _uses_nv2(members):
            # coopmat2 ops (reduce, per-element ops, tensor loads ...) make shapes of their own
            # (a 2x2 reduce halves them): leave such a matrix whole, for the backend to judge
            tile[root] = (rows_, cols_)
            continue
        if best is None:
            owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
            near = sorted(cands or ())
            raise CoopError(owner, f"{rows_}x{cols_}x{v.type.element_type} "
                                   f"{(v.type.use_value or 'NV').__str__()} {scope} matrix has no "
                                   f"native tiling on target '{target.name}'; native shapes for this "
                                   f"use and type: {', '.join(f'{a}x{b}' for a, b in near) or 'none'}")
        tile[root] = best[1]
    return _Plan(cls, tile)


def _uses_sparse(members: Sequence[SSAValue]) -> bool:
    """Whether a sparse_mma op defines or uses one of `members`."""
    def sparse(op) -> bool:
        return isinstance(op, Operation) and op.name.startswith("sparse_mma.")
    return any(sparse(v.owner) or any(sparse(u.operation) for u in v.uses) for v in members)


def _uses_nv2(members: Sequence[SSAValue]) -> bool:
    """Whether a cooperative-matrix-2 op (other than a tensor load/store) defines or uses one of
    `members`."""
    kinds = tuple(k for k in coop_nv2.NV2_OPS
                  if k not in (coop_nv2.LoadTensorOp, coop_nv2.StoreTensorOp))
    return any(isinstance(v.owner, kinds) or any(isinstance(u.operation, kinds) for u in v.uses)
               for v in members)


def layout_span(v: SSAValue) -> tuple[int, ...] | None:
    """The span of layout value `v` when its chain shows it as constants, else None."""
    owner = v.owner
    if isinstance(owner, ta.LayoutConstantOp):
        return owner.state.span
    if isinstance(owner, (ta.LayoutSliceOp, ta.LayoutSetDimensionOp)):
        vals = owner.values[1::2] if isinstance(owner, ta.LayoutSliceOp) else owner.values
        spans = tuple(ta.const_u32(x) for x in vals)
        return None if None in spans else spans  # type: ignore[return-value]
    if isinstance(owner, (ta.LayoutSetStrideOp, ta.LayoutSetBlockSizeOp, ta.LayoutSetClampValueOp)):
        return layout_span(owner.input)
    return None


# --------------------------------------------------------------------------------------------
# Rewriting
# --------------------------------------------------------------------------------------------


class _Splitter:
    def __init__(self, plan: _Plan):
        self.plan = plan
        self.tiles: dict[SSAValue, list[list[SSAValue]]] = {}
        self.dead: list[Operation] = []
        self.rebuilt: set[Operation] = set()

    def grid(self, op: Operation, v: SSAValue) -> list[list[SSAValue]]:
        if v in self.tiles:
            return self.tiles[v]
        raise CoopError(op, "uses a split matrix this pass did not produce")

    def tile_type(self, v: SSAValue) -> coop.MatrixType:
        t = v.type
        r, c = self.plan.tile_of(v)
        return coop.MatrixType(r, c, t.element_type, t.scope_value, t.use_value)

    def dims(self, v: SSAValue) -> tuple[int, int, int, int]:
        r, c = self.plan.tile_of(v)
        return v.type.rows // r, v.type.columns // c, r, c

    @staticmethod
    def insert(op: Operation, new: Operation) -> Operation:
        Rewriter.insert_op(new, InsertPoint.before(op))
        return new

    def const(self, op: Operation, value: int) -> SSAValue:
        return self.insert(op, arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    def tile_offset(self, op, offset, stride, layout, i: int, j: int, r: int, c: int) -> SSAValue:
        if layout == coop.Layout.RowMajor:
            major, minor = i * r, j * c
        else:
            major, minor = j * c, i * r
        value = offset
        if major:
            t = self.insert(op, arith.MuliOp(stride, self.const(op, major))).result
            value = self.insert(op, arith.AddiOp(value, t)).result
        if minor:
            value = self.insert(op, arith.AddiOp(value, self.const(op, minor))).result
        return value

    def run_block(self, block: Block) -> None:
        for op in list(block.ops):
            self.run_op(op)

    def needs(self, op: Operation) -> bool:
        return any(self.plan.is_split(v) for v in (*op.operands, *op.results))

    def run_op(self, op: Operation) -> None:
        if isinstance(op, scf.ForOp):
            if any(self.plan.is_split(v) for v in op.results):
                return self.split_for(op)
            for region in op.regions:
                for b in region.blocks:
                    self.run_block(b)
            return
        if isinstance(op, scf.YieldOp) and op.parent_op() in self.rebuilt:
            flat = []
            for v in op.operands:
                flat += [t for row in self.grid(op, v) for t in row] if self.plan.is_split(v) else [v]
            self.insert(op, scf.YieldOp(*flat))
            self.dead.append(op)
            return
        if not self.needs(op):
            for region in op.regions:
                for b in region.blocks:
                    self.run_block(b)
            return
        if isinstance(op, coop.LoadOp):
            self.split_load(op)
        elif isinstance(op, coop.StoreOp):
            self.split_store(op)
        elif isinstance(op, coop.MulAddOp):
            self.split_mul_add(op)
        elif isinstance(op, (*ELEMENTWISE, coop.CompositeConstructOp)):
            self.split_elementwise(op)
        elif isinstance(op, (coop_nv2.LoadTensorOp, coop_nv2.StoreTensorOp)):
            self.split_tensor_memory(op)
        else:
            v = next(v for v in (*op.operands, *op.results) if self.plan.is_split(v))
            raise CoopError(op, f"cannot be split into native tiles: it uses the "
                                f"{v.type.rows}x{v.type.columns} matrix that the target needs as "
                                f"{'x'.join(map(str, self.plan.tile_of(v)))} tiles")
        self.dead.append(op)

    def _check_layout(self, op) -> None:
        if op.layout.data in coop.ARM_LAYOUTS:
            raise CoopError(op, f"a {op.layout.data.value} matrix cannot be split into native tiles "
                                "(the blocked layout is not addressed by an element offset and stride)")

    def split_load(self, op: coop.LoadOp) -> None:
        self._check_layout(op)
        gi, gj, r, c = self.dims(op.result)
        tt = self.tile_type(op.result)
        grid = []
        for i in range(gi):
            row = []
            for j in range(gj):
                off = self.tile_offset(op, op.offset, op.stride, op.layout.data, i, j, r, c)
                row.append(self.insert(op, coop.LoadOp(op.pointer, off, op.stride, op.layout.data,
                                                       tt, op.memory_access)).result)
            grid.append(row)
        self.tiles[op.result] = grid

    def split_store(self, op: coop.StoreOp) -> None:
        self._check_layout(op)
        gi, gj, r, c = self.dims(op.object)
        grid = self.grid(op, op.object)
        for i in range(gi):
            for j in range(gj):
                off = self.tile_offset(op, op.offset, op.stride, op.layout.data, i, j, r, c)
                self.insert(op, coop.StoreOp(grid[i][j], op.pointer, off, op.stride, op.layout.data,
                                             op.memory_access))

    def split_tensor_memory(self, op: coop_nv2.LoadTensorOp | coop_nv2.StoreTensorOp) -> None:
        """Tile (i, j) of r×c goes through `layout_slice(layout, i·r, r, j·c, c)` (offsets add
        up; the tensor dimensions swapped under the transposing view <2, false, 1, 0>). Only when
        the layout's span is the matrix's shape (so matrix (row, col) is span coordinate
        (row, col)) and the view, if any, is that transposing one with no state set."""
        m = op.result if isinstance(op, coop_nv2.LoadTensorOp) else op.object
        rows, cols = m.type.get_shape()
        transposed = False
        if op.view is not None:
            vt = op.view.type
            transposed = isinstance(op.view.owner, ta.CreateViewOp) and not vt.has_dims and \
                vt.perm == (1, 0)
            if not transposed:
                raise CoopError(op, "cannot be split into native tiles: only a tensor view "
                                    "<2, false, 1, 0> straight from create_view can be split")
        want = (cols, rows) if transposed else (rows, cols)
        if op.layout.type.rank != 2 or layout_span(op.layout) != want:
            raise CoopError(op, f"cannot be split into native tiles: the layout's span is not "
                                f"known to be the matrix's {rows}x{cols}")
        gi, gj, r, c = self.dims(m)
        grid = self.grid(op, op.object) if isinstance(op, coop_nv2.StoreTensorOp) or \
            self.plan.is_split(op.object) else None
        out = []
        for i in range(gi):
            row = []
            for j in range(gj):
                consts = [self.const32(op, x) for x in (i * r, r, j * c, c)]
                if transposed:
                    consts = consts[2:] + consts[:2]
                lay = self.insert(op, ta.LayoutSliceOp(op.layout, consts)).result
                if isinstance(op, coop_nv2.StoreTensorOp):
                    self.insert(op, coop_nv2.StoreTensorOp(grid[i][j], op.pointer, lay, op.view,
                                                           op.memory_access))
                else:
                    obj = grid[i][j] if grid is not None else op.object
                    row.append(self.insert(op, coop_nv2.LoadTensorOp(
                        op.pointer, obj, lay, op.view, op.decode_func, op.memory_access)).result)
            out.append(row)
        if isinstance(op, coop_nv2.LoadTensorOp):
            self.tiles[op.result] = out

    def const32(self, op: Operation, value: int) -> SSAValue:
        return self.insert(op, arith.ConstantOp(IntegerAttr(value, IntegerType(32)))).result

    def _operand_grid(self, op: Operation, v: SSAValue) -> list[list[SSAValue]]:
        return self.grid(op, v) if self.plan.is_split(v) else [[v]]

    def split_mul_add(self, op: coop.MulAddOp) -> None:
        ga, gb, gc = (self._operand_grid(op, v) for v in (op.a, op.b, op.c))
        tm, tn = self.plan.tile_of(op.result)
        rt = op.result.type
        tile_rt = coop.MatrixType(tm, tn, rt.element_type, rt.scope_value, rt.use_value)
        flags = set(op.operand_flags)
        chained = flags - {coop.MatrixOperand.CSigned}
        if coop.MatrixOperand.ResultSigned in flags:
            chained.add(coop.MatrixOperand.CSigned)
        grid = []
        for i in range(len(gc)):
            row = []
            for j in range(len(gc[0])):
                acc = gc[i][j]
                for kk in range(len(ga[0])):
                    f = flags if kk == 0 else chained
                    ordered = [x for x in coop.MatrixOperand if x in f]
                    acc = self.insert(op, coop.MulAddOp(ga[i][kk], gb[kk][j], acc, tile_rt, ordered)).result
                row.append(acc)
            grid.append(row)
        if self.plan.is_split(op.result):
            self.tiles[op.result] = grid
        else:  # only K was split: the chain's last multiply-add is the whole result
            op.result.replace_all_uses_with(grid[0][0])

    def split_elementwise(self, op: Operation) -> None:
        res = op.results[0]
        gi, gj, _, _ = self.dims(res)
        tt = self.tile_type(res)
        grids = [self.grid(op, v) if is_matrix(v) else None for v in op.operands]
        grid = []
        for i in range(gi):
            row = []
            for j in range(gj):
                operands = [g[i][j] if g is not None else v for g, v in zip(grids, op.operands)]
                new = type(op).build(operands=operands, result_types=[tt],
                                     properties=dict(op.properties), attributes=dict(op.attributes))
                row.append(self.insert(op, new).results[0])
            grid.append(row)
        self.tiles[res] = grid

    def split_for(self, op: scf.ForOp) -> None:
        old_block = op.body.blocks[0]
        inits, arg_types, shapes = [], [], []
        for init, res in zip(op.iter_args, op.results):
            if self.plan.is_split(res):
                g = self.grid(op, init)
                shapes.append((len(g), len(g[0])))
                flat = [t for row in g for t in row]
                inits += flat
                arg_types += [t.type for t in flat]
            else:
                shapes.append(None)
                inits.append(init)
                arg_types.append(init.type)
        new_block = Block(arg_types=[old_block.args[0].type, *arg_types])
        new_for = scf.ForOp(op.lb, op.ub, op.step, inits, Region(new_block))
        new_for.attributes.update(op.attributes)  # e.g. coop.pipeline_stages, for the backends
        self.insert(op, new_for)
        self.rebuilt.add(new_for)
        old_block.args[0].replace_all_uses_with(new_block.args[0])
        pos = 1
        for old_arg, shape in zip(old_block.args[1:], shapes):
            if shape is None:
                old_arg.replace_all_uses_with(new_block.args[pos])
                pos += 1
            else:
                gi, gj = shape
                flat = list(new_block.args[pos:pos + gi * gj])
                self.tiles[old_arg] = [flat[i * gj:(i + 1) * gj] for i in range(gi)]
                pos += gi * gj
        for inner in list(old_block.ops):
            inner.detach()
            new_block.add_op(inner)
        self.run_block(new_block)
        pos = 0
        for old_res, shape in zip(op.results, shapes):
            if shape is None:
                old_res.replace_all_uses_with(new_for.results[pos])
                pos += 1
            else:
                gi, gj = shape
                flat = list(new_for.results[pos:pos + gi * gj])
                self.tiles[old_res] = [flat[i * gj:(i + 1) * gj] for i in range(gi)]
                pos += gi * gj
        self.dead.append(op)

    def finish(self) -> None:
        for op in reversed(self.dead):
            for r in op.results:
                if r.uses:
                    user = next(iter(r.uses)).operation
                    raise CoopError(user, "still uses a matrix that was split into native tiles")
            op.detach()
            op.erase(safe_erase=False)


MAX_TILES_PER_OP = 4096
"""Most ops one op may be split into (a 256×256×256 multiply-add in 16×16×16 tiles is 4096)."""
MAX_TILES_PER_KERNEL = 65536
"""Most ops the split of one kernel may create in all."""


def check_expansion(kernel: func.FuncOp, plan: _Plan) -> None:
    """Refuse, before rewriting anything, a plan whose unrolling would exceed MAX_TILES_PER_OP
    for one op or MAX_TILES_PER_KERNEL in all: CoopError on the op, naming the limit. Keeps the
    pass linear in its input (a 4096×4096 matrix would otherwise become 65536 tile ops)."""
    total = 0
    for op in kernel.walk():
        count, what = 1, ""
        if isinstance(op, coop.MulAddOp) and op.a in plan.classes.parent and op.b in plan.classes.parent:
            (m, k), n = op.a.type.get_shape(), op.b.type.columns
            (tm, tk), tn = plan.tile_of(op.a), plan.tile_of(op.b)[1]
            count = -(-m // tm) * -(-n // tn) * -(-k // tk)
            what = f"a {m}x{n}x{k} multiply-add into {tm}x{tn}x{tk} tiles"
        else:
            for v in (*op.operands, *op.results):
                if is_matrix(v) and v in plan.classes.parent:
                    (r, c), (tr, tc) = v.type.get_shape(), plan.tile_of(v)
                    n_tiles = -(-r // tr) * -(-c // tc)
                    if n_tiles > count:
                        count, what = n_tiles, f"a {r}x{c} matrix into {tr}x{tc} tiles"
        total += count
        if count > MAX_TILES_PER_OP:
            raise CoopError(op, f"splitting {what} makes {count} ops, over legalize-coop-sizes' "
                                f"limit of {MAX_TILES_PER_OP} per op (MAX_TILES_PER_OP)")
        if total > MAX_TILES_PER_KERNEL:
            raise CoopError(op, f"splitting the kernel into native tiles makes more than "
                                f"{MAX_TILES_PER_KERNEL} ops (MAX_TILES_PER_KERNEL) by this op")


def legalize_kernel(kernel: func.FuncOp, target: Target, flexible: bool = True) -> None:
    """Rewrite one kernel in place (module docstring); CoopError when it cannot."""
    pad_kernel(kernel, target, flexible)  # non-multiples -> next native multiple (tensor loads)
    plan = plan_kernel(kernel, target, flexible)
    check_expansion(kernel, plan)
    splitter = _Splitter(plan)
    splitter.run_block(kernel.body.blocks[0])
    splitter.finish()


def non_native_ops(module: ModuleOp, target: Target, flexible: bool = True) -> list[str]:
    """Every multiply-add or matrix type of `module` that is not native to `target` (empty when
    the module verifies against it): the check that the pass's result obeys the target."""
    bad = []
    for kernel in module.walk():
        if not isinstance(kernel, func.FuncOp):
            continue
        inv = workgroup_invocations(kernel)
        for op in kernel.walk():
            if isinstance(op, coop.MulAddOp):
                (m, k), n = op.a.type.get_shape(), op.b.type.columns
                types, scope, sat = mul_add_types(op), op.a.type.scope_value.value, saturating(op)
                ok = any((r.m, r.n, r.k) == (m, n, k) for r in rows_for(target, types, scope, sat))
                ok = ok or (flexible and flexible_ok(target, types, scope, sat, (m, n, k), inv))
                if not ok:
                    bad.append(f"{op.name} {m}x{n}x{k} {'·'.join(types)} {scope}")
    return bad


@dataclass(frozen=True)
class LegalizeCoopSizesPass(ModulePass):
    """Split non-native cooperative-matrix shapes into the target's native tiles.

    Raises CoopError for a matrix no native shape can tile (docs/legalize.md)."""

    name = "legalize-coop-sizes"

    target: str = "h200-vulkan"
    """The target description whose native shapes the matrices are split into: a shipped name
    (`coop-opt --list-targets`) or the path of a .json file (coopdialect/targets/__init__.py
    gives the schema)."""
    flexible: bool = True
    """Keep a product whole when its M, N, K fit the target's VK_NV_cooperative_matrix2 flexible
    dimensions; false: always split into fixed native shapes."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            target = get_target(str(self.target))
        except TargetError as e:
            # a bad file is located at the file (and JSON key); an unknown name at the flag
            raise CoopError(None, f"legalize-coop-sizes: {e.detail}",
                            where=e.file or "<command line>") from None
        for kernel in list(op.walk()):
            if isinstance(kernel, func.FuncOp) and not kernel.is_declaration:
                legalize_kernel(kernel, target, self.flexible)
