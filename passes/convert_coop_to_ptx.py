"""`convert-coop-to-ptx{target=sm_90a}`: lower kernel functions to the `ptx` dialect.

Every `func.func` with a body becomes a `ptx.kernel` (functions that cooperative-matrix-2 ops
call are inlined into their callers, not kernels); the module gets a `ptx.target` attribute
that the printer writes as `.target`. `coopdialect.ptx.lower` dispatches to the rules:
`coopdialect.ptx.kernel_lowering` (kernel convention), `scalar_rules` (arith, scf, gpu ids),
`coop_rules` (subgroup fragments, mma.sync), `wgmma` (warpgroup matrices), `pipelined` (the staged
form as a warp-specialized wgmma pipeline) and `staged_generic` (the staged form op by op).

Checked up front, each a one-line CoopError on the op: the kernel interface shared with
convert-coop-to-spirv (`coop_kernel.check_kernel_interface`: memref arguments, a valid
`coop.workgroup_size`), a module with nothing to lower (no kernel, or already lowered), and the
size of every matrix: a fragment of more than `MAX_FRAGMENT_ELEMENTS` elements per invocation
(R·C / 32 at Subgroup scope, R·C / workgroup invocations at Workgroup scope) is refused — it
would unroll into that many registers and loads per invocation (sm_90 has 255 registers per
thread), so the lowering stays linear in the input. A shape or type the target cannot do is
refused by the rules, naming the op and its location.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from coopdialect.errors import CoopError

TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
MAX_FRAGMENT_ELEMENTS = 512
"""Most matrix elements one invocation may hold (a 64×256 f32 wgmma accumulator over a
warpgroup holds 128; a 64×64 Subgroup matrix 128)."""


def check_fragment_sizes(fn: func.FuncOp, workgroup_size: tuple[int, int, int]) -> None:
    """CoopError on the first op of `fn` whose matrix operand or result would hold more than
    MAX_FRAGMENT_ELEMENTS elements per invocation."""
    from coopdialect.dialects import coop

    x, y, z = workgroup_size
    seen: set = set()
    for op in fn.walk():
        for v in (*op.results, *op.operands):
            t = v.type
            if t in seen or not isinstance(t, coop.MatrixType):
                continue
            seen.add(t)
            per = 32 if t.scope_value.value == "Subgroup" else x * y * z
            elements = -(-t.rows * t.columns // per)
            if elements > MAX_FRAGMENT_ELEMENTS:
                raise CoopError(op, f"a {t.rows}x{t.columns} {t.scope_value.value} matrix is "
                                    f"{elements} elements per invocation, over the PTX lowering's "
                                    f"limit of {MAX_FRAGMENT_ELEMENTS} (MAX_FRAGMENT_ELEMENTS); "
                                    "split it with legalize-coop-sizes first")


@dataclass(frozen=True)
class ConvertCoopToPtxPass(ModulePass):
    """Lower coop kernels to PTX ops (see the module docstring; docs/ptx.md).

    The options after `target` shape the warp-specialized pipeline that a staged kernel becomes
    (`coopdialect/ptx/pipelined.py` and its `pipelined_*` parts); kernels without the staged form ignore them.
    """

    name = "convert-coop-to-ptx"

    target: str = "sm_90a"
    """The PTX `.target` the module is written for (sm_80 ... sm_90a); wgmma and the 2:4 sparse
    product need sm_90a."""
    producer_registers: int = 40
    """`setmaxnreg` register budget per thread of the producer warpgroup (the one that issues
    the copies)."""
    consumer_registers: int = 0
    """`setmaxnreg` register budget per thread of each consumer warpgroup; 0 = the most that fits
    beside the producer, capped at 232 (232 with two consumer warpgroups and 40 for the
    producer)."""
    raster_group: int = 16
    """Tile rows per sweep of the remapped workgroup ids (grouped rasterization for L2 reuse);
    16 measured best on the H200 (2:4 f16 8192^3: 930.6 TFLOP/s against 885.4 with 8)."""
    cluster_m: int = 1
    """CTAs per cluster along M (1 or 2); with 2 the pair multicasts its shared B tiles (measured
    slower on the H200)."""
    sparse_batch: int = 1
    """K steps of a 2:4 product per wgmma group (the `wgmma.mma_async.sp` instructions that one
    `wgmma.commit_group` closes, PTX ISA 9.7.15.6): 1 or 2; with 2 the consumers' loop runs two
    iterations per trip."""
    sparse_in_flight: int = 1
    """2:4 batches left running at each `wgmma.wait_group` (0 or 1); with 1 a trip of the
    consumers' loop runs two batches, each batch's metadata registers live until the wait that
    retires it. A trip count that does not allow it falls back to 0."""
    bulk_copies: bool = True
    """Where the warp-specialized pipeline refuses a staged kernel and it is lowered op by op,
    copy its tensor boxes with the bulk tensor copy engine into 128-byte-swizzled tiles, waited
    for on mbarriers (`coopdialect/ptx/staged_tma.py`), where the kernel allows it; false: every
    thread's `cp.async` copies and a barrier per wait (`staged_workgroup.py`)."""
    persistent: bool = False
    """One CTA per multiprocessor loops over the dispatch's tiles, the producer filling the next
    tile's stages while the consumers store the last (launch grid rule "persistent": the host
    passes the dispatch grid as a kernel parameter, docs/runtime.md)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from coopdialect.dialects.coop_kernel import check_kernel_interface
        from coopdialect.ptx.lower import lower_function
        from coopdialect.ptx.inline_calls import inlined_functions
        from coopdialect.ptx.pipelined_plan import Options

        if self.target not in TARGETS:
            raise CoopError(None, f"convert-coop-to-ptx: unknown target '{self.target}' (one of "
                                  f"{', '.join(TARGETS)})", where="<command line>")
        if self.raster_group < 1:
            raise CoopError(None, f"convert-coop-to-ptx: raster-group must be >= 1, got "
                                  f"{self.raster_group}", where="<command line>")
        if self.sparse_batch not in (1, 2):
            raise CoopError(None, f"convert-coop-to-ptx: sparse-batch must be 1 or 2, got "
                                  f"{self.sparse_batch}", where="<command line>")
        if self.sparse_in_flight not in (0, 1):
            raise CoopError(None, f"convert-coop-to-ptx: sparse-in-flight must be 0 or 1, got "
                                  f"{self.sparse_in_flight}", where="<command line>")
        options = Options(**{f.name: getattr(self, f.name) for f in fields(Options)})
        if "ptx.target" in op.attributes:
            raise CoopError(op, "is already lowered to PTX: convert-coop-to-ptx found nothing to lower")
        callees = inlined_functions(op)  # DecodeFunc/CombineFunc/Func: inlined, not kernels
        funcs = [fn for fn in op.ops if isinstance(fn, func.FuncOp)]
        others = [o for o in op.ops if not isinstance(o, func.FuncOp)]
        if others:
            raise CoopError(others[0], "convert-coop-to-ptx lowers func.func kernels only; this op "
                                       "cannot appear at module level")
        kernels_src = [fn for fn in funcs if not fn.is_declaration and fn.sym_name.data not in callees]
        if not kernels_src:
            raise CoopError(op, "no func.func kernel to lower (convert-coop-to-ptx found nothing "
                                "to lower)")
        for fn in kernels_src:
            size = check_kernel_interface(fn)
            check_fragment_sizes(fn, size)
        kernels = [lower_function(fn, self.target, options) for fn in kernels_src]
        for old in list(op.ops):
            old.detach()
            old.erase()
        for k in kernels:
            op.body.block.add_op(k)
        op.attributes["ptx.target"] = StringAttr(self.target)
