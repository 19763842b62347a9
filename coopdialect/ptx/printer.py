"""PTX text printer for the `ptx` dialect: `emit_ptx(module) -> str` and the `-t ptx` target.

The output is a complete module (`.version`, `.target`, `.address_size 64`, one `.visible
.entry` per `ptx.kernel`). It is deterministic: registers are numbered per class in program
order (`%p` pred, `%h` b16, `%r` b32, `%rd` b64, `%f` f32, `%fd` f64), blocks are labelled
`$L__<kernel>_<n>`, and the lowering's `ptx.comment` ops keep the source's SSA names readable.

Out of SSA: a `ptx.bra` with successor operands becomes register copies (a parallel copy, through
temporaries where a source is also a destination) in front of the branch. A result of an op with
the `InPlaceResults` trait shares the register of its operand (a `wgmma.mma_async` accumulator,
which the instruction reads and writes; a `ptx.prmt_into` result and its `into` register).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from coopdialect.dialects import ptx

PREFIX = {"pred": "%p", "b16": "%h", "b32": "%r", "b64": "%rd", "f32": "%f", "f64": "%fd"}

# Lowest PTX ISA version that knows each target (PTX ISA "Release notes" / target table).
TARGET_VERSION = {"sm_80": (7, 0), "sm_86": (7, 1), "sm_89": (7, 8), "sm_90": (7, 8),
                  "sm_90a": (8, 0)}
DEFAULT_TARGET = "sm_90a"


class _Names:
    """Register names per class, assigned in program order."""

    def __init__(self) -> None:
        self.count = {k: 0 for k in PREFIX}
        self.names: dict[SSAValue, str] = {}

    def fresh(self, kind: str) -> str:
        n = self.count[kind]
        self.count[kind] = n + 1
        return f"{PREFIX[kind]}{n}"

    def define(self, value: SSAValue) -> None:
        kind = value.type.kind.data if type(value.type) is ptx.RegType else ptx.reg_kind(value)
        self.names[value] = self.fresh(kind)

    def __getitem__(self, value: SSAValue) -> str:
        return self.names[value]


def _vec(names: list[str]) -> str:
    return "{" + ", ".join(names) + "}"


def _addr(base: str, offset: int) -> str:
    if offset == 0:
        return f"[{base}]"
    return f"[{base}+{offset}]" if offset > 0 else f"[{base}{offset}]"


def _plain_text(op: ptx.PtxInst, n: _Names) -> str:
    # a PtxInst's results are its `outs` and its operands its `args` (one variadic group each):
    # read directly, not through IRDL's accessors, for the bulk of a kernel's instructions
    names = n.names
    regs = [names[v] for v in op.results]
    regs += [names[v] for v in op._operands]  # noqa: SLF001
    return f"{op.OPCODE}{op.mods.data} {', '.join(regs)};"


_TEXT: dict[type, object] = {}
"""Op class -> `_plain_text` for the PtxInst classes, `_inst_text_of` for the others."""


def _inst_text(op: Operation, n: _Names) -> str:
    """One instruction's text, without indentation."""
    fn = _TEXT.get(type(op))
    if fn is None:
        fn = _TEXT[type(op)] = _plain_text if isinstance(op, ptx.PtxInst) else _inst_text_of
    return fn(op, n)


def _inst_text_of(op: Operation, n: _Names) -> str:
    """`_inst_text` of an op that is not a PtxInst."""
    if isinstance(op, ptx.PrmtIntoOp):
        return f"prmt{op.mods.data} {', '.join(n[v] for v in (op.out, *op.args))};"
    if isinstance(op, ptx.MovImmOp):
        return f"mov{op.mods.data} {n[op.out]}, {op.imm.data};"
    if isinstance(op, ptx.MovSpecialOp):
        return f"mov{op.mods.data} {n[op.out]}, {op.source.data};"
    if isinstance(op, ptx.PackOp):
        return f"mov{op.mods.data} {n[op.out]}, {_vec([n[v] for v in op.args])};"
    if isinstance(op, ptx.UnpackOp):
        return f"mov{op.mods.data} {_vec([n[v] for v in op.outs])}, {n[op.arg]};"
    if isinstance(op, ptx.LdParamOp):
        return f"ld.param.{op.param_type} {n[op.out]}, [{op.param.data}];"
    if isinstance(op, ptx.LdOp):
        outs = [n[v] for v in op.outs]
        dst = outs[0] if len(outs) == 1 else _vec(outs)
        return f"ld{op.mods.data} {dst}, {_addr(n[op.addr], op.offset.data)};"
    if isinstance(op, ptx.StOp):
        vals = [n[v] for v in op.values]
        src = vals[0] if len(vals) == 1 else _vec(vals)
        return f"st{op.mods.data} {_addr(n[op.addr], op.offset.data)}, {src};"
    if isinstance(op, ptx.BarSyncOp):
        return f"bar.sync {op.barrier.data};"
    if isinstance(op, ptx.BarNamedOp):
        return f"bar.{op.mode.data} {n[op.barrier]}, {op.count.data};"
    if isinstance(op, ptx.MmaSyncOp):
        a, b, c = op.groups()
        groups = [[n[v] for v in g] for g in (op.outs, a, b, c)]
        return f"mma.sync.aligned{op.mods.data} " + ", ".join(_vec(g) for g in groups) + ";"
    if isinstance(op, ptx.WgmmaFenceOp):
        return "wgmma.fence.sync.aligned;"
    if isinstance(op, ptx.WgmmaCommitGroupOp):
        return "wgmma.commit_group.sync.aligned;"
    if isinstance(op, ptx.WgmmaWaitGroupOp):
        return f"wgmma.wait_group.sync.aligned {op.pending.data};"
    if isinstance(op, ptx.WgmmaMmaAsyncOp):
        d = _vec([n[v] for v in op.outs])
        a = [n[v] for v in op.a]
        return (f"wgmma.mma_async.sync.aligned{op.mods.data} {d}, "
                f"{a[0] if len(a) == 1 else _vec(a)}, {n[op.desc_b]}, {op.imms.data};")
    if isinstance(op, ptx.WgmmaMmaAsyncSpOp):
        a = [n[v] for v in op.a]
        return (f"wgmma.mma_async.sp.sync.aligned{op.mods.data} {_vec([n[v] for v in op.outs])}, "
                f"{a[0] if len(a) == 1 else _vec(a)}, {n[op.desc_b]}, {n[op.meta]}, "
                f"{op.sp_sel.data}, {op.imms.data};")
    if isinstance(op, ptx.FenceProxyAsyncOp):
        return "fence.proxy.async.shared::cta;"
    if isinstance(op, ptx.MbarrierInitOp):
        return f"mbarrier.init.shared::cta.b64 {_addr(n[op.addr], op.offset.data)}, {op.count.data};"
    if isinstance(op, ptx.MbarrierArriveOp):
        if op.remote is not None:
            return f"mbarrier.arrive.shared::cluster.b64 _, [{n[op.addr]}];"
        if op.expect_tx.data:
            return (f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [{n[op.addr]}], "
                    f"{op.expect_tx.data};")
        return f"mbarrier.arrive.shared::cta.b64 _, [{n[op.addr]}];"
    if isinstance(op, ptx.MbarrierExpectTxOp):
        return f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{n[op.addr]}], {op.tx.data};"
    if isinstance(op, ptx.MbarrierTryWaitParityOp):
        return (f"mbarrier.try_wait.parity.shared::cta.b64 {n[op.out]}, [{n[op.addr]}], "
                f"{n[op.parity]};")
    if isinstance(op, ptx.FenceMbarrierInitOp):
        return "fence.mbarrier_init.release.cluster;"
    if isinstance(op, ptx.CpAsyncBulkTensorOp):
        coords = ", ".join(n[c] for c in op.coords)
        mc, mask = (".multicast::cluster", f", {n[op.cta_mask[0]]}") if op.cta_mask else ("", "")
        return (f"cp.async.bulk.tensor.{len(op.coords)}d.shared::cluster.global.tile"
                f".mbarrier::complete_tx::bytes{mc} [{n[op.dst]}], [{n[op.tmap]}, {{{coords}}}], "
                f"[{n[op.mbar]}]{mask};")
    if isinstance(op, ptx.CpAsyncOp):
        cache = "cg" if op.size.data == 16 else "ca"
        off = f"+{op.offset.data}" if op.offset.data else ""
        soff = f"+{op.src_offset.data}" if op.src_offset.data else ""
        tail = f", {n[op.src_size]}" if op.src_size is not None else ""
        return (f"cp.async.{cache}.shared.global [{n[op.dst]}{off}], [{n[op.src]}{soff}], "
                f"{op.size.data}{tail};")
    if isinstance(op, ptx.CpAsyncCommitGroupOp):
        return "cp.async.commit_group;"
    if isinstance(op, ptx.CpAsyncWaitGroupOp):
        return f"cp.async.wait_group {op.pending.data};"
    if isinstance(op, ptx.MapaOp):
        return f"mapa.shared::cluster.u32 {n[op.out]}, {n[op.addr]}, {n[op.rank]};"
    if isinstance(op, ptx.BarrierClusterOp):
        return "barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;"
    if isinstance(op, ptx.SetmaxnregOp):
        return f"setmaxnreg.{op.action.data}.sync.aligned.u32 {op.count.data};"
    if isinstance(op, ptx.CommentOp):
        return f"// {op.text.data}"
    raise DiagnosticException(f"ptx printer: cannot print '{op.name}'")


_CONTROL = (ptx.SharedDeclOp, ptx.BraOp, ptx.CbraOp, ptx.RetOp)
"""The ops `_KernelPrinter.print` writes itself (declarations, branches, ret); _inst_text the rest."""


class _KernelPrinter:
    def __init__(self, kernel: ptx.KernelOp):
        self.kernel = kernel
        self.names = _Names()
        self.blocks = list(kernel.body.blocks)
        self.labels = {b: f"$L__{kernel.sym_name.data}_{i}" for i, b in enumerate(self.blocks)}
        in_place_of: dict[type, ptx.InPlaceResults | None] = {}  # traits are per class
        for block in self.blocks:
            for arg in block.args:
                self.names.define(arg)
            for op in block.ops:
                cls = type(op)
                if cls not in in_place_of:
                    in_place_of[cls] = op.get_trait(ptx.InPlaceResults)
                in_place = in_place_of[cls]
                if in_place is not None:  # e.g. a wgmma accumulator: read and written
                    for res, src in in_place.pairs(op):
                        self.names.names[res] = self.names[src]
                    continue
                for res in op.results:
                    self.names.define(res)

    def _copies(self, target: Block, args: list[SSAValue], out: list[str]) -> None:
        """Parallel copy of `args` into `target`'s block-argument registers."""
        moves = [(self.names[d], self.names[s], ptx.reg_kind(d))
                 for d, s in zip(target.args, args) if self.names[d] != self.names[s]]
        dests = {d for d, _, _ in moves}
        staged = []
        for d, s, kind in moves:
            if s in dests:  # would be overwritten before it is read
                t = self.names.fresh(kind)
                out.append(f"\tmov.{kind} {t}, {s};")
                s = t
            staged.append((d, s, kind))
        out.extend(f"\tmov.{kind} {d}, {s};" for d, s, kind in staged)

    def print(self) -> str:
        body: list[str] = []
        shared: list[str] = []
        for i, block in enumerate(self.blocks):
            nxt = self.blocks[i + 1] if i + 1 < len(self.blocks) else None
            if i > 0:
                body.append(f"{self.labels[block]}:")
            for op in block.ops:
                if type(op) not in _CONTROL:  # the bulk: one instruction line
                    body.append("\t" + _inst_text(op, self.names))
                elif isinstance(op, ptx.SharedDeclOp):
                    shared.append(f"\t.shared .align {op.align.data} .b8 {op.sym_name.data}"
                                  f"[{op.size.data}];")
                elif isinstance(op, ptx.BraOp):
                    self._copies(op.target, list(op.args), body)
                    if op.target is not nxt:
                        body.append(f"\tbra.uni {self.labels[op.target]};")
                elif isinstance(op, ptx.CbraOp):
                    neg = "!" if op.negate is not None else ""
                    body.append(f"\t@{neg}{self.names[op.pred]} bra {self.labels[op.taken]};")
                    if op.other is not nxt:
                        body.append(f"\tbra.uni {self.labels[op.other]};")
                elif isinstance(op, ptx.RetOp):
                    body.append("\tret;")
                else:
                    raise AssertionError(op.name)
        k = self.kernel
        params = ",\n".join(f"\t.param .align 64 .b8 {p.data}[128]"
                            if k.param_type(p.data) == "tensormap"
                            else f"\t.param .{k.param_type(p.data)} {p.data}" for p in k.params)
        head = []
        if k.dynamic_shared is not None:
            head.append(f".extern .shared .align 1024 .b8 {k.dynamic_shared_name}[];")
        head += [f".visible .entry {k.sym_name.data}(", params, ")"]
        if k.reqntid is not None:
            head.append(".reqntid " + ", ".join(str(x.data) for x in k.reqntid))
            if k.min_ctas is not None:
                head.append(f".minnctapersm {k.min_ctas.data}")
        if k.maxntid is not None:
            head.append(".maxntid " + ", ".join(str(x.data) for x in k.maxntid))
            head.append(".minnctapersm 1")
        if k.cluster is not None:
            head.append(".reqnctapercluster " + ", ".join(str(x.data) for x in k.cluster))
        head.append("{")
        decls = [f"\t.reg .{kind} {PREFIX[kind]}<{c}>;"
                 for kind, c in self.names.count.items() if c]
        return "\n".join([*head, *decls, *shared, "", *body, "}", ""])


def module_target(module: ModuleOp) -> str:
    """The `.target` recorded by convert-coop-to-ptx (`ptx.target` module attribute)."""
    t = module.attributes.get("ptx.target")
    return t.data if isinstance(t, StringAttr) else DEFAULT_TARGET


def required_version(module: ModuleOp, target: str) -> tuple[int, int]:
    """Highest PTX_VERSION of the ops used, and at least the target's first version."""
    version = TARGET_VERSION.get(target, (8, 0))
    for op in module.walk():
        version = max(version, getattr(op, "PTX_VERSION", (6, 0)))  # per op (wgmma.sp)
    return version


def emit_ptx(module: ModuleOp) -> str:
    """PTX text of a module holding `ptx.kernel` ops (the output of convert-coop-to-ptx).

    Raises DiagnosticException when the module has no kernel or holds ops other than `ptx`.
    """
    kernels = [op for op in module.ops if isinstance(op, ptx.KernelOp)]
    if not kernels:
        raise DiagnosticException("emit_ptx: no ptx.kernel in the module (run convert-coop-to-ptx)")
    for op in module.ops:
        if not isinstance(op, ptx.KernelOp):
            raise DiagnosticException(f"emit_ptx: '{op.name}' is not a ptx op; lower it first")
    target = module_target(module)
    major, minor = required_version(module, target)
    out = [
        "// Generated by coopdialect (convert-coop-to-ptx).",
        f".version {major}.{minor}",
        f".target {target}",
        ".address_size 64",
        "",
    ]
    out.extend(_KernelPrinter(k).print() for k in kernels)
    return "\n".join(out)


@dataclass(frozen=True)
class PtxTarget(Target):
    """`coop-opt -t ptx`: writes the module as PTX text (see `emit_ptx`)."""

    name = "ptx"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_ptx(module))


def emit_to_string(module: ModuleOp) -> str:
    """Same as `emit_ptx`, through the Target interface (for tests)."""
    buf = io.StringIO()
    PtxTarget().emit(Context(), module, buf)
    return buf.getvalue()
