"""`distribute-coop-workgroup{grid=MxN subgroup_size=32}`: split a kernel's Workgroup-scope
cooperative matrices into one Subgroup-scope block per subgroup (docs/vulkan.md, "Staged GEMMs").

A Workgroup-scope GEMM tile (the coopmat2 form: A BM×BK, B BK×BN, accumulator BM×BN, shared by
the whole workgroup) is what a user writes and what `pipeline-coop-loads` can stage (its loads
are the same in every invocation). Drivers without a fast workgroup-scope path (or targets
without one at all) want the classic structure instead: the W/subgroup_size subgroups of the
workgroup form an M×N grid, subgroup s = (s div N, s mod N) owns rows [r·BM/M, (r+1)·BM/M) and
columns [c·BN/N, (c+1)·BN/N) of the accumulator, and reads the matching rows of A and columns of
B. `legalize-coop-sizes{flexible=false}` then splits the blocks into native KHR tiles
(several accumulators per subgroup). This pass is that distribution, as a set of rewrites:

* `coop.load` / `coop.store` of a Workgroup-scope matrix with Use MatrixA (R×C): the subgroup's
  (R/M)×C block, at `offset + r·(R/M)·stride` (RowMajor) or `offset + r·(R/M)` (ColumnMajor);
  MatrixB (R×C): the R×(C/N) block at `offset + c·(C/N)` (RowMajor) / `+ c·(C/N)·stride`;
  MatrixAccumulator: the (R/M)×(C/N) block at the sum of both displacements.
* `coop.mul_add`, `coop.composite_construct`, element-wise ops and conversions of such matrices,
  and `scf.for` iter_args / results / yields carrying them: the same op on the block types.
* Every other op is left alone; any other use of a Workgroup-scope matrix (tensor loads,
  reduce, extract, ...) is refused with one line naming the op.

`grid=auto` (default) picks the factorization M·N = W/subgroup_size whose blocks are closest to
square (ties: more subgroups along N), among those dividing BM and BN into multiples of 16.
Kernels with no Workgroup-scope matrix are unchanged. Proof: tests/test_distribute_coop_workgroup.py
(interpreter before = after on random GEMM tiles, staged and unstaged).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from coopdialect.errors import CoopError
from coopdialect.dialects import coop, gpu

_SAME_SHAPE = (*coop.ELEMENTWISE_UNARY, *coop.ELEMENTWISE_BINARY, *coop.CONVERSIONS,
               coop.CompositeConstructOp, coop.MatrixTimesScalarOp, coop.MulAddOp)


def _is_wg(t) -> bool:
    return isinstance(t, coop.MatrixType) and t.scope_value == coop.Scope.Workgroup


@dataclass
class _Grid:
    m: int
    n: int

    def block(self, t: coop.MatrixType) -> coop.MatrixType:
        use = t.use_value
        rows = t.rows // self.m if use in (coop.Use.MatrixA, coop.Use.MatrixAcc) else t.rows
        cols = t.columns // self.n if use in (coop.Use.MatrixB, coop.Use.MatrixAcc) else t.columns
        return coop.MatrixType(rows, cols, t.element_type, coop.Scope.Subgroup, use)


def _choose_grid(kernel: func.FuncOp, subgroups: int, mats: list[coop.MatrixType], spec: str) -> _Grid:
    bm = {t.rows for t in mats if t.use_value in (coop.Use.MatrixA, coop.Use.MatrixAcc)}
    bn = {t.columns for t in mats if t.use_value in (coop.Use.MatrixB, coop.Use.MatrixAcc)}

    def fits(m: int, n: int) -> bool:
        return all(r % (16 * m) == 0 for r in bm) and all(c % (16 * n) == 0 for c in bn)

    if spec != "auto":
        try:
            m, n = (int(x) for x in spec.lower().split("x"))
        except ValueError:
            raise CoopError(None, f"distribute-coop-workgroup: grid must be MxN or auto, got "
                                  f"'{spec}'", where="<command line>") from None
        if m * n != subgroups or not fits(m, n):
            raise CoopError(kernel, f"grid {m}x{n} does not split the workgroup's {subgroups} "
                                    f"subgroups over the tiles (rows {sorted(bm)}, columns "
                                    f"{sorted(bn)}) in multiples of 16")
        return _Grid(m, n)
    best = None
    for m in range(1, subgroups + 1):
        if subgroups % m or not fits(m, subgroups // m):
            continue
        n = subgroups // m
        wtm, wtn = max(bm or {16}) // m, max(bn or {16}) // n
        key = (abs(wtm - wtn), -n)
        if best is None or key < best[0]:
            best = (key, _Grid(m, n))
    if best is None:
        raise CoopError(kernel, f"no grid of {subgroups} subgroups splits the Workgroup-scope "
                                f"tiles (rows {sorted(bm)}, columns {sorted(bn)}) in multiples of 16")
    return best[1]


class _Distribute:
    def __init__(self, kernel: func.FuncOp, spec: str, subgroup_size: int):
        self.kernel = kernel
        attr = kernel.attributes.get("coop.workgroup_size")
        if not isinstance(attr, DenseArrayBase):
            raise CoopError(kernel, "a kernel needs `coop.workgroup_size = array<i32: x, y, z>`")
        x, y, z = (int(v) for v in attr.get_values())
        invocations = x * y * z
        if invocations % subgroup_size:
            raise CoopError(kernel, f"{invocations} invocations are not whole subgroups of "
                                    f"{subgroup_size}")
        self.subgroups = invocations // subgroup_size
        self.spec = spec
        self.rewriter = Rewriter()
        self.sg_row: SSAValue | None = None
        self.sg_col: SSAValue | None = None

    def matrices(self) -> list[coop.MatrixType]:
        found = []
        for op in self.kernel.walk():
            for v in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
                if _is_wg(v.type):
                    found.append(v.type)
        return found

    def run(self) -> None:
        mats = self.matrices()
        if not mats:
            return
        self.grid = _choose_grid(self.kernel, self.subgroups, mats, self.spec)
        entry = self.kernel.body.blocks[0]
        # (row, column) of this subgroup in the grid, computed once at the kernel's entry
        ops: list[Operation] = [sg := gpu.SubgroupIdOp(),
                                n := arith.ConstantOp(IntegerAttr(self.grid.n, IndexType())),
                                r := arith.DivUIOp(sg.result, n.result),
                                c := arith.RemUIOp(sg.result, n.result)]
        self.rewriter.insert_op(ops, InsertPoint.at_start(entry))
        self.sg_row, self.sg_col = r.result, c.result
        # decide on the types as written, then rewrite (retyping a loop's results first would
        # hide that the store after it stores a Workgroup-scope matrix)
        plan = [(op, self.kind(op), op.object.type if isinstance(op, coop.StoreOp) else None)
                for op in self.kernel.walk()]
        for op, kind, stored in plan:
            if kind == "split_store":
                self.move(op, stored)
            elif kind is not None:
                getattr(self, kind)(op)

    # -- rewrites ---------------------------------------------------------------------------

    def kind(self, op: Operation) -> str | None:
        """Which rewrite `op` gets (None: left alone); raises for ops that cannot be split."""
        if isinstance(op, coop.LoadOp) and _is_wg(op.result.type):
            return "split_load"
        if isinstance(op, coop.StoreOp) and _is_wg(op.object.type):
            return "split_store"
        if isinstance(op, _SAME_SHAPE):
            return "retype_results"
        if isinstance(op, scf.ForOp):
            return "retype_loop"
        if not isinstance(op, scf.YieldOp) and any(_is_wg(v.type) for v in (*op.operands, *op.results)):
            raise CoopError(op, "distribute-coop-workgroup cannot split a Workgroup-scope "
                                "matrix used by this op")
        return None

    def split_load(self, op: coop.LoadOp) -> None:
        self.move(op, op.result.type)
        self.retype(op.result)

    def retype_results(self, op: Operation) -> None:
        for res in op.results:
            self.retype(res)

    def retype_loop(self, op: scf.ForOp) -> None:
        for v in (*op.results, *op.body.blocks[0].args[1:]):
            self.retype(v)

    def retype(self, v: SSAValue) -> None:
        if _is_wg(v.type):
            Rewriter.replace_value_with_new_type(v, self.grid.block(v.type))

    def move(self, op: coop.LoadOp | coop.StoreOp, t: coop.MatrixType) -> None:
        """Displace the offset to this subgroup's block."""
        block = self.grid.block(t)
        use, row_major = t.use_value, op.layout.data == coop.Layout.RowMajor
        if op.layout.data not in (coop.Layout.RowMajor, coop.Layout.ColumnMajor):
            raise CoopError(op, f"distribute-coop-workgroup splits RowMajor and ColumnMajor "
                                f"matrices only, not {op.layout.data.value}")
        new: list[Operation] = []

        def index(k: int) -> SSAValue:
            c = arith.ConstantOp(IntegerAttr(k, IndexType()))
            new.append(c)
            return c.result

        def times(a: SSAValue, b: SSAValue) -> SSAValue:
            m = arith.MuliOp(a, b)
            new.append(m)
            return m.result

        terms = []
        # rows of the block are `stride` apart in RowMajor, adjacent in ColumnMajor
        if block.rows != t.rows:
            row = times(self.sg_row, index(block.rows))
            terms.append(times(row, op.stride) if row_major else row)
        if block.columns != t.columns:
            col = times(self.sg_col, index(block.columns))
            terms.append(col if row_major else times(col, op.stride))
        offset = op.offset
        for term in terms:
            add = arith.AddiOp(offset, term)
            new.append(add)
            offset = add.result
        self.rewriter.insert_op(new, InsertPoint.before(op))
        operands = list(op.operands)
        operands[1 if isinstance(op, coop.LoadOp) else 2] = offset
        op.operands = operands


@dataclass(frozen=True)
class DistributeCoopWorkgroupPass(ModulePass):
    """Split Workgroup-scope matrices into per-subgroup blocks (see the module docstring).

    Raises CoopError for a Workgroup-scope matrix used by an op it cannot split, or a grid that
    does not divide the tiles."""

    name = "distribute-coop-workgroup"

    grid: str = "auto"
    """The subgroups' arrangement over the accumulator: `MxN` (M along rows, N along columns;
    M*N = the kernel's subgroups) or `auto` (the factorization whose blocks are closest to
    square, each a multiple of 16)."""
    subgroup_size: int = 32
    """Invocations per subgroup: the kernel's subgroups are its workgroup size / this."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for k in op.body.blocks[0].ops:
            if isinstance(k, func.FuncOp) and not k.is_declaration:
                _Distribute(k, self.grid, self.subgroup_size).run()

