"""The framework of the PTX lowering of one kernel `func.func` to a `ptx.kernel`: the values
(`Scalar`, `Frag`, `Buf`, ...), the rule table (`RULES`, `rule`) and `KernelLowering`, whose
value map and emission helpers every rule shares. The rule modules import it; the dispatcher
(`lower.py`) imports them.

The kernel convention (DESIGN.md): memref arguments are global buffers, read from `.param .u64`
pointers (any shape, `?` included); scalar arguments are `.param`s of their type
(`SCALAR_PARAM_TYPES`: i32 `.u32`, i64 and index `.u64`, f32 `.f32`, f16 `.b16`), read once at
entry; the parameters are in argument order; `index` is 64-bit (`.b64` registers, `.s64`/`.u64` arithmetic); `gpu` ids read
`%ctaid`/`%tid`/`%laneid`; `scf.for` becomes a header block with a `setp`/`@p bra` exit test and
a back edge whose block arguments carry the iteration values (`scf.while` likewise, its `before`
region in the header); an i1 is a predicate register (and/or/xor.pred). A subgroup-scope coop
matrix is a list of per-lane fragment registers (`coopdialect.ptx.fragments`); the coop-op rules live in
`coop_rules.py`, the workgroup-scope (wgmma) rules in `wgmma.py`, the rules of `func`, `arith`,
`scf` and `gpu` in `scalar_rules.py`.

Each source op kind has one rule (`RULES[op class](lowering, op)`), the "set of rewrites" of the
pass; the rules share this class's value map and emission helpers. Integers narrower than 32
bits live in `.b32` registers whose upper bits are unspecified: rules that need them (division,
widening, int-to-float) sign- or zero-extend first.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from coopdialect.dialects import coop, ptx
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects import gpu as cgpu
from coopdialect.dialects.coop_kernel import GRID_ATTR, SCALAR_TYPES, scalar_type_name
from coopdialect.errors import CoopError
from coopdialect.ptx.launch import arg_descs, grid_desc, scalar_param_desc

STATIC_SHARED_BYTES = 48 * 1024
"""Bytes of `.shared` a kernel may declare statically (CUDA's limit per block); past them the
kernel's arrays move into its dynamic shared memory (`KernelLowering.run`)."""
_SHARED_PER_BLOCK = {"sm_90": 232448, "sm_80": 166912, "sm_87": 166912, "sm_86": 101376,
                     "sm_89": 101376}
"""Bytes of shared memory one block may use, dynamic included (CUDA's
sharedMemPerBlockOptin: 227 KB on sm_90, 163 KB on sm_80/87, 99 KB on sm_86/89)."""


def max_shared_bytes(target: str) -> int:
    """Bytes of shared memory a kernel for `target` ("sm_80" ... "sm_90a") may use in all."""
    return _SHARED_PER_BLOCK.get(target.rstrip("a"), STATIC_SHARED_BYTES)


def where(op: Operation) -> str:
    """`file:line:col: ` of an op when it has a FileLineColLoc, else ''."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
    return ""


def op_error(op: Operation, msg: str) -> CoopError:
    """The one-line diagnostic of convert-coop-to-ptx, carrying `op`:
    `file:line:col: error: 'op' op message`."""
    return CoopError(op, msg)


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


@dataclass
class Scalar:
    """A scalar: a register, or a compile-time constant materialized on first use."""

    ty: Attribute
    reg: SSAValue | None = None
    const: int | float | None = None


@dataclass
class Frag:
    """A cooperative matrix: one register per fragment element held by this lane."""

    ty: coop.MatrixType
    regs: list[SSAValue]


@dataclass
class Skipped:
    """A value a warp role does not compute (a matrix in the copy-only producer of a staged
    kernel, `coopdialect.ptx.pipelined`); it occupies no register."""

    ty: Attribute


@dataclass
class Buf:
    """A memref: 64-bit base address (global, or the shared window) and its element type."""

    ty: MemRefType
    base: SSAValue
    space: str  # "global" | "shared"


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def reg_kind(t: Attribute) -> str:
    """Register class of a scalar type."""
    if isinstance(t, IndexType):
        return "b64"
    if isinstance(t, IntegerType):
        w = t.width.data
        return "pred" if w == 1 else "b64" if w == 64 else "b32"
    if isinstance(t, Float16Type | BFloat16Type):
        return "b16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    raise DiagnosticException(f"no PTX register class for type {t}")


def width(t: Attribute) -> int:
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, IntegerType):
        return t.width.data
    assert isinstance(t, AnyFloat)
    return t.bitwidth


def is_signed(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNED


def float_suffix(t: Attribute) -> str:
    return {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "f32",
            Float64Type: "f64"}[type(t)]


def mem_suffix(t: Attribute, store: bool = False) -> str:
    """Type suffix of ld/st for an element type."""
    if isinstance(t, Float16Type | BFloat16Type):
        return "b16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    w = width(t)
    if w >= 32:
        return f"b{w}"
    if store:
        return f"b{w}"
    return f"{'s' if is_signed(t) else 'u'}{w}"


def float_literal(t: Attribute, value: float) -> str:
    """A PTX immediate for a float constant: `0f` + 8 hex digits (f32), `0d` + 16 (f64), or `0x` + 4 for b16 moves."""
    if isinstance(t, Float32Type):
        return "0f%08X" % struct.unpack("<I", struct.pack("<f", value))[0]
    if isinstance(t, Float64Type):
        return "0d%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if isinstance(t, Float16Type):
        return "0x%04X" % struct.unpack("<H", struct.pack("<e", value))[0]
    import ml_dtypes
    import numpy as np
    return "0x%04X" % int(np.array(value, dtype=ml_dtypes.bfloat16).view(np.uint16))


# scalar kernel argument type -> its `.param` type (index is 64-bit in this lowering)
SCALAR_PARAM_TYPES = {"i32": "u32", "i64": "u64", "index": "u64", "f32": "f32", "f16": "b16"}


def scalar_param(fn: func.FuncOp, i: int, t: Attribute, pname: str) -> tuple[ptx.LdParamOp, str]:
    """The `ld.param` that reads scalar kernel argument `i` (of type `t`) from its `.param`
    `pname` at entry, and the `.param` type (SCALAR_PARAM_TYPES). CoopError on `fn` for a type
    that is no scalar argument type (coop_kernel.SCALAR_TYPES)."""
    name = scalar_type_name(t)
    if name is None:
        raise op_error(fn, f"kernel argument {i} has type {t}; a kernel parameter is a memref or "
                           f"a scalar of {', '.join(SCALAR_TYPES)}")
    ptype = SCALAR_PARAM_TYPES[name]
    return ptx.LdParamOp(pname, ptype), ptype


# ---------------------------------------------------------------------------------------------
# The lowering
# ---------------------------------------------------------------------------------------------

Rule = Callable[["KernelLowering", Operation], None]
RULES: dict[type[Operation], Rule] = {}
MIN_CTAS_ATTR = "nvvm.minctasm"
PINGPONG_ATTR = "coop.pingpong"
"""A unit attribute of a kernel: its warpgroups take turns issuing their products (CUTLASS's
ping-pong schedule), where the kernel's form allows it (`staged_tma.py`)."""
TURN_THREADS = 2 * 128
"""Threads a turn's named barrier counts: the warpgroup that takes the turn (`bar.sync`) and the
one that gives it (`bar.arrive`)."""
# Run by `KernelLowering.run` once the parameters are read and before the body is lowered
# (lw.cur is the entry block): a rule module that needs kernel-wide state sets it up here.
SETUP_HOOKS: list[Callable[["KernelLowering"], None]] = []


def rule(*classes: type[Operation]):
    """Register a lowering rule for the given source op classes."""
    def deco(fn: Rule) -> Rule:
        for c in classes:
            RULES[c] = fn
        return fn
    return deco


def is_matrix_arithmetic(op: Operation) -> bool:
    """Whether `op` computes on matrices in registers (element-wise ops, conversions, row
    reductions, per-element functions): where a warpgroup gives its turn."""
    return isinstance(op, BESIDE_WGMMA) and not isinstance(op, coop.MulAddOp
                                                           | coop.CompositeConstructOp)


def issues_products(op: Operation) -> bool:
    """Whether `op` or an op in it is a Workgroup-scope `coop.mul_add` (wgmma)."""
    return any(isinstance(o, coop.MulAddOp) and o.result.type.scope_value == coop.Scope.Workgroup
               for o in op.walk())


@dataclass
class LoopFrame:
    """An `scf.for` being lowered: its header block, induction variable and step per trip, and
    the registers beyond the loop's own values that its back edge passes (`open_loop`'s
    `extra`), read when the yield is lowered. An `scf.while` has no induction variable (None)."""

    header: Block
    iv: SSAValue | None
    step: Scalar | None
    extra: Callable[[], list[SSAValue]] = list


# ops whose lowering is register arithmetic of the current block (KernelLowering.runs_beside_wgmma),
# besides every op of the scalar dialects below
BESIDE_WGMMA = (coop.MulAddOp, coop.CompositeConstructOp, *coop.ELEMENTWISE_UNARY,
                *coop.ELEMENTWISE_BINARY, *coop.CONVERSIONS, nv2.ConvertOp, nv2.PerElementOp,
                nv2.ReduceOp)
SCALAR_DIALECTS = ("arith", "tensor_addr")


@dataclass
class KernelLowering:
    """Lowers one kernel function; `run()` returns the `ptx.kernel` op."""

    fn: func.FuncOp
    target: str = "sm_90a"
    bulk_copies: bool = True  # staged copies by the bulk tensor copy engine where they can be
    vmap: dict[SSAValue, object] = field(default_factory=dict)
    prologue: list[Operation] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    consts: dict[tuple[str, str], SSAValue] = field(default_factory=dict)
    cache: dict[str, SSAValue] = field(default_factory=dict)
    shared_bytes: int = 0
    shared_decls: list[Operation] = field(default_factory=list)
    shared_addrs: list[Operation] = field(default_factory=list)  # one mov per shared_decls entry
    loop_stack: list[LoopFrame] = field(default_factory=list)  # innermost last
    # extra `.param` CUtensorMaps a setup hook asks for: (parameter name, launch entry)
    tensor_map_params: list[tuple[str, dict]] = field(default_factory=list)
    # the registers each committed, not yet waited-for wgmma group writes, oldest first
    # (`defer_wgmma_wait`)
    wgmma_groups: list[set[SSAValue]] = field(default_factory=list)
    # warpgroups that take turns issuing their products (`take_turn`; 0: none), set by the
    # setup hook that finds the kernel's form allows it, with the ops other than register
    # arithmetic during which a warpgroup keeps its turn, and whether it holds it here
    turns: int = 0
    keeps_turn_also: Callable[[Operation], bool] = lambda op: False
    turn_held: bool = False

    def workgroup_acc_positions(self, op: Operation, t) -> list | None:
        """(row, col) `affine.Aff`s of each Workgroup-scope accumulator element this thread
        holds, in register order, when the lowering places accumulators its own way (the
        consumer warpgroups of a staged kernel); None: the op-by-op wgmma D layout
        (wgmma.acc_positions)."""
        return None

    # -- emission ----------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.cur.add_op(op)
        return op

    def inst(self, cls: type[ptx.PtxInst], mods: str, args: list[SSAValue], kind: str,
             pro: bool = False) -> SSAValue:
        """Emit `cls` with one result of register class `kind` (in the prologue if `pro`)."""
        op = cls(mods, args, [ptx.reg_type(kind)])
        (self.prologue.append(op) if pro else self.emit(op))
        return op.outs[0]

    def comment(self, text: str) -> None:
        self.emit(ptx.CommentOp(text))

    def imm(self, kind: str, literal: str) -> SSAValue:
        """A register holding an immediate, moved once at the kernel's start."""
        key = (kind, literal)
        if key not in self.consts:
            mods = {"pred": ".pred", "b16": ".b16", "b32": ".b32", "b64": ".b64",
                    "f32": ".f32", "f64": ".f64"}[kind]
            op = ptx.MovImmOp(mods, literal, ptx.reg_type(kind))
            self.prologue.append(op)
            self.consts[key] = op.out
        return self.consts[key]

    def special(self, source: str) -> SSAValue:
        """A special register (`%tid.x`, `%laneid`, ...) read into a .b32 once."""
        if source not in self.cache:
            op = ptx.MovSpecialOp(".u32", source, ptx.B32)
            self.prologue.append(op)
            self.cache[source] = op.out
        return self.cache[source]

    def cached(self, key: str, make: Callable[[], SSAValue]) -> SSAValue:
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    # -- scalars -----------------------------------------------------------------------------

    def reg(self, s: Scalar) -> SSAValue:
        """The register of a scalar, materializing a constant."""
        if s.reg is not None:
            return s.reg
        kind = reg_kind(s.ty)
        if isinstance(s.ty, AnyFloat):
            return self.imm(kind, float_literal(s.ty, float(s.const)))
        if kind == "pred":
            return self.imm(kind, "1" if s.const else "0")
        return self.imm(kind, str(int(s.const)))

    def scalar(self, v: SSAValue) -> Scalar:
        s = self.vmap[v]
        assert isinstance(s, Scalar), (v, s)
        return s

    def u64(self, r32: SSAValue, pro: bool = False) -> SSAValue:
        return self.inst(ptx.CvtOp, ".u64.u32", [r32], "b64", pro)

    def index_op(self, opname: str, a: Scalar, b: Scalar) -> Scalar:
        """64-bit index arithmetic with constant folding (`add`, `sub`, `mul`)."""
        idx = IndexType()
        if a.const is not None and b.const is not None:
            x, y = int(a.const), int(b.const)
            return Scalar(idx, const={"add": x + y, "sub": x - y, "mul": x * y}[opname])
        if opname in ("add", "sub") and b.const == 0:
            return a
        if opname == "add" and a.const == 0:
            return b
        if opname == "mul":
            if a.const == 1:
                return b
            if b.const == 1:
                return a
            if 0 in (a.const, b.const):
                return Scalar(idx, const=0)
        cls = {"add": ptx.AddOp, "sub": ptx.SubOp, "mul": ptx.MulOp}[opname]
        mods = ".lo.s64" if opname == "mul" else ".s64"
        return Scalar(idx, reg=self.inst(cls, mods, [self.reg(a), self.reg(b)], "b64"))

    def idx_const(self, n: int) -> Scalar:
        return Scalar(IndexType(), const=n)

    def udiv_const(self, x: SSAValue, d: int, w: int, rem: bool = False) -> SSAValue:
        """`x / d` (or `x % d` with `rem`) of an unsigned `w`-bit register (32 or 64) by a
        constant d >= 1, exact for every x, without a division instruction.

        ptxas (13.0) compiles `div`/`rem` by a constant, even by an immediate, as a full
        reciprocal-and-correct division (I2F, MUFU.RCP, ...; 64 bits as a call): a staged
        kernel with 3 or 5 stages divides its group indices by the stage count several times
        per iteration and ran at half the speed of 4 stages on the H200. A power of two is a
        shift or a mask; otherwise Granlund & Montgomery's multiply-high with a w-bit magic
        number (PLDI 1994, fig. 4.1): t = mulhi(m, x), q = (t + ((x - t) >> 1)) >> (l - 1),
        l = ceil(log2 d), m = floor(2^w (2^l - d) / d) + 1."""
        if d < 1 or w not in (32, 64):
            raise ValueError(f"udiv_const: divisor {d} >= 1 and width 32 or 64, got width {w}")
        kind = f"b{w}"
        if d & (d - 1) == 0:
            if rem:
                return self.inst(ptx.AndOp, f".b{w}", [x, self.imm(kind, str(d - 1))], kind)
            if d == 1:
                return x
            return self.inst(ptx.ShrOp, f".u{w}", [x, self.imm("b32", str(d.bit_length() - 1))], kind)
        l = (d - 1).bit_length()
        m = ((1 << w) * ((1 << l) - d)) // d + 1
        t = self.inst(ptx.MulOp, f".hi.u{w}", [x, self.imm(kind, hex(m))], kind)
        h = self.inst(ptx.SubOp, f".u{w}", [x, t], kind)
        h = self.inst(ptx.ShrOp, f".u{w}", [h, self.imm("b32", "1")], kind)
        h = self.inst(ptx.AddOp, f".u{w}", [t, h], kind)
        q = self.inst(ptx.ShrOp, f".u{w}", [h, self.imm("b32", str(l - 1))], kind)
        if not rem:
            return q
        qd = self.inst(ptx.MulOp, f".lo.u{w}", [q, self.imm(kind, str(d))], kind)
        return self.inst(ptx.SubOp, f".u{w}", [x, qd], kind)

    # -- lane geometry -----------------------------------------------------------------------

    def warpgroup_index(self) -> SSAValue:
        """This thread's warpgroup, linear tid >> 7 (.b32, computed once in the prologue)."""
        return self.cached("warpgroup index", lambda: self.inst(
            ptx.ShrOp, ".u32", [self.linear_tid(), self.imm("b32", "7")], "b32", True))

    def linear_tid(self) -> SSAValue:
        """Linear thread id in the workgroup (.b32)."""
        def make() -> SSAValue:
            x, y, z = self.workgroup_size
            t = self.special("%tid.x")
            if y * z > 1:
                ty = self.special("%tid.y")
                t = self.inst(ptx.MadOp, ".lo.u32", [ty, self.imm("b32", str(x)), t], "b32", True)
                if z > 1:
                    tz = self.special("%tid.z")
                    t = self.inst(ptx.MadOp, ".lo.u32", [tz, self.imm("b32", str(x * y)), t],
                                  "b32", True)
            return t
        return self.cached("linear_tid", make)

    def lane_geometry(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(g, q, w) as .b64: groupID = lane>>2, threadID_in_group = lane&3, warp in warpgroup."""
        def make_g():
            r = self.inst(ptx.ShrOp, ".u32", [self.special("%laneid"), self.imm("b32", "2")],
                          "b32", True)
            return self.u64(r, True)

        def make_q():
            r = self.inst(ptx.AndOp, ".b32", [self.special("%laneid"), self.imm("b32", "3")],
                          "b32", True)
            return self.u64(r, True)

        def make_w():
            r = self.inst(ptx.ShrOp, ".u32", [self.linear_tid(), self.imm("b32", "5")], "b32", True)
            r = self.inst(ptx.AndOp, ".b32", [r, self.imm("b32", "3")], "b32", True)
            return self.u64(r, True)
        return (self.cached("g", make_g), self.cached("q", make_q), self.cached("w", make_w))

    # -- structure ---------------------------------------------------------------------------

    def spin_wait(self, bar: SSAValue, parity: SSAValue) -> None:
        """`mbarrier.try_wait.parity` loop on the .b32 shared address `bar`: goes on once the
        phase of that parity (a .b32 register, 0 or 1) has completed."""
        loop = self.new_block()
        self.emit(ptx.BraOp(loop))
        self.cur = loop
        done = self.emit(ptx.MbarrierTryWaitParityOp(bar, parity)).out
        after = self.new_block()
        self.emit(ptx.CbraOp(done, after, loop))
        self.cur = after

    def new_block(self, arg_kinds: list[str] = ()) -> Block:
        b = Block(arg_types=[ptx.reg_type(k) for k in arg_kinds])
        self.blocks.append(b)
        return b

    def flatten(self, v: object) -> list[SSAValue]:
        if isinstance(v, Scalar):
            return [self.reg(v)]
        if isinstance(v, Frag):
            return list(v.regs)
        if isinstance(v, Skipped):
            return []
        raise DiagnosticException(f"cannot carry {type(v).__name__} through a loop")

    def unflatten(self, like: list[object], regs: list[SSAValue]) -> list[object]:
        out, i = [], 0
        for v in like:
            if isinstance(v, Scalar):
                out.append(Scalar(v.ty, reg=regs[i]))
                i += 1
            elif isinstance(v, Skipped):
                out.append(v)
            else:
                assert isinstance(v, Frag)
                n = len(v.regs)
                out.append(Frag(v.ty, list(regs[i:i + n])))
                i += n
        return out

    def lower_ops(self, block: Block) -> None:
        for op in block.ops:
            self.lower_op(op)

    def defer_wgmma_wait(self, results: list[SSAValue]) -> None:
        """The wgmma group just committed, which writes `results`, is waited for only where
        it must be (`wait_before`): the next product and the register arithmetic that does
        not read its results run while the tensor cores work."""
        self.wgmma_groups.append(set(results))

    def wait_wgmma(self, keep: int = 0) -> None:
        """`wgmma.wait_group keep`: wait until at most the `keep` latest committed groups are
        pending (groups complete in the order they were committed, PTX ISA 9.7.15.7.3)."""
        if len(self.wgmma_groups) > keep:
            self.emit(ptx.WgmmaWaitGroupOp(keep))
            del self.wgmma_groups[:len(self.wgmma_groups) - keep]

    def runs_beside_wgmma(self, op: Operation) -> bool:
        """Whether `op` may be lowered while wgmma groups are in flight, as long as it reads
        none of their results: register arithmetic of this block (no memory, barrier or
        branch; a Row reduction is warp shuffles)."""
        if op.dialect_name() in SCALAR_DIALECTS:
            return True
        return isinstance(op, BESIDE_WGMMA) and not (isinstance(op, nv2.ReduceOp)
                                                     and op.reduce.data != nv2.REDUCE_ROW)

    def wait_before(self, op: Operation) -> None:
        """The wait `op` needs: every pending group before an op that cannot run beside them;
        before one that can, the groups up to the latest whose results it reads."""
        if not self.wgmma_groups:
            return
        if not self.runs_beside_wgmma(op):
            return self.wait_wgmma()
        regs = set()
        for v in op.operands:
            regs.update(getattr(self.vmap.get(v), "regs", ()))
        read = [i for i, g in enumerate(self.wgmma_groups) if not g.isdisjoint(regs)]
        if read:
            self.wait_wgmma(len(self.wgmma_groups) - 1 - read[-1])

    # -- turns (PINGPONG_ATTR) --------------------------------------------------------------

    def _turn_barriers(self) -> tuple[SSAValue, SSAValue]:
        """(this warpgroup's barrier, the next one's): 1 + w and 1 + (w + 1) mod W."""
        def make() -> tuple[SSAValue, SSAValue]:
            w = self.warpgroup_index()
            mine = self.inst(ptx.AddOp, ".u32", [w, self.imm("b32", "1")], "b32", True)
            last = self.inst(ptx.SetpOp, ".eq.u32", [w, self.imm("b32", str(self.turns - 1))],
                             "pred", True)
            after = self.inst(ptx.AddOp, ".u32", [mine, self.imm("b32", "1")], "b32", True)
            return mine, self.inst(ptx.SelpOp, ".b32", [self.imm("b32", "1"), after, last], "b32",
                                   True)
        if "turn barriers" not in self.__dict__:  # (two registers: `cached` keeps one)
            self.__dict__["turn barriers"] = make()
        return self.__dict__["turn barriers"]

    def take_turn(self) -> None:
        """Before a warpgroup issues products: wait for its turn (`bar.sync` on its barrier,
        which the warpgroup before it arrives on when it gives the turn)."""
        if self.turns and not self.turn_held:
            self.emit(ptx.BarNamedOp("sync", self._turn_barriers()[0], TURN_THREADS))
            self.turn_held = True

    def give_turn(self) -> None:
        """Hand the turn to the next warpgroup (`bar.arrive` on its barrier)."""
        if self.turn_held:
            self.emit(ptx.BarNamedOp("arrive", self._turn_barriers()[1], TURN_THREADS))
            self.turn_held = False

    def first_turn(self) -> None:
        """At the kernel's start: the last warpgroup gives warpgroup 0 its first turn."""
        mine, _ = self._turn_barriers()
        last = self.inst(ptx.SetpOp, ".eq.u32", [mine, self.imm("b32", str(self.turns))], "pred")
        then, join = self.new_block(), Block()
        self.emit(ptx.CbraOp(last, then, join))
        self.cur = then
        self.emit(ptx.BarNamedOp("arrive", self.imm("b32", "1"), TURN_THREADS))
        self.emit(ptx.BraOp(join))
        self.blocks.append(join)
        self.cur = join

    def keeps_turn(self, op: Operation) -> bool:
        """Whether a warpgroup holding the turn keeps it over `op`: register arithmetic, loops
        (a loop that issues products takes the turn on entry and at its back edge) and what
        the setup hook allows (the bulk-copy staging, which waits on no other warpgroup's
        turn); anything else might wait on a warpgroup waiting for the turn."""
        if isinstance(op, scf.ForOp):
            return issues_products(op)
        if isinstance(op, scf.IfOp):  # (the staging's refill, for one)
            return not issues_products(op) and all(self.keeps_turn(o) for o in op.walk()
                                                   if o is not op)
        return (isinstance(op, scf.YieldOp) or self.runs_beside_wgmma(op)
                or self.keeps_turn_also(op))

    def lower_op(self, op: Operation) -> None:
        """Lower one op by its rule (a warp role of a staged kernel overrides this)."""
        if self.turns:
            if not self.keeps_turn(op) or is_matrix_arithmetic(op):
                self.give_turn()
            if isinstance(op, scf.ForOp) and issues_products(op) or (
                    isinstance(op, scf.YieldOp) and isinstance(op.parent_op(), scf.ForOp)
                    and issues_products(op.parent_op())):
                self.take_turn()
        self.wait_before(op)
        fn = RULES.get(type(op))
        if fn is None:
            raise op_error(op, f"has no PTX lowering (convert-coop-to-ptx, target {self.target})")
        try:
            fn(self, op)
        except CoopError:
            raise
        except DiagnosticException as e:  # a helper's refusal that does not know the op
            raise op_error(op, str(e)) from None
        if self.turns and (isinstance(op, scf.ForOp) and issues_products(op)
                           or isinstance(op, coop.MulAddOp) and not self.loop_stack):
            # what follows a loop or a product outside loops may wait for a copy that the last
            # warpgroup commits in the same turn (a drain, the next loop's first groups)
            self.give_turn()

    def run(self) -> ptx.KernelOp:
        fn = self.fn
        attr = fn.attributes.get("coop.workgroup_size")
        if isinstance(attr, DenseArrayBase):
            size = [int(x) for x in attr.get_values()]
            self.workgroup_size = (size + [1, 1, 1])[:3]
        else:
            self.workgroup_size = None
        name = fn.sym_name.data
        params = []
        scalar_params: dict[str, str] = {}
        entry = self.new_block()
        self.cur = entry
        for i, arg in enumerate(fn.args):
            pname = f"{name}_param_{arg.name_hint or i}"
            params.append(pname)
            if isinstance(arg.type, MemRefType):
                ld = ptx.LdParamOp(pname)
                cvta = ptx.CvtaOp(".to.global.u64", [ld.out], [ptx.B64])
                self.prologue += [ld, cvta]
                self.vmap[arg] = Buf(arg.type, cvta.outs[0], "global")
            else:
                ld, scalar_params[pname] = scalar_param(fn, i, arg.type, pname)
                self.prologue.append(ld)
                self.vmap[arg] = Scalar(arg.type, reg=ld.out)
        if self.workgroup_size is None and self._needs_workgroup_size(fn):
            raise op_error(fn, "needs a coop.workgroup_size attribute (subgroup ids, warpgroups)")
        self._check_whole_warps(fn)
        for hook in SETUP_HOOKS:
            hook(self)
        self.lower_ops(fn.body.block)
        dynamic = self._dynamic_shared(name) if self.shared_bytes > STATIC_SHARED_BYTES else 0
        first = entry.first_op
        for op in [*self.shared_decls, *self.prologue]:
            if first is None:
                entry.add_op(op)
            else:
                entry.insert_op_before(op, first)
        types = [a.type for a in fn.args]
        launch = None
        if self.tensor_map_params:  # the default description has one param per argument
            descs = [{"kind": "pointer", "arg": i} if isinstance(t, MemRefType)
                     else scalar_param_desc(i, t) for i, t in enumerate(types)]
            params += [p for p, _ in self.tensor_map_params]
            launch = json.dumps({
                "name": name, "block": list(self.workgroup_size),
                **grid_desc(fn.attributes.get(GRID_ATTR), types),
                "dynamic_shared_bytes": dynamic,
                "args": arg_descs([a.name_hint or str(i) for i, a in enumerate(fn.args)], types),
                "params": descs + [d for _, d in self.tensor_map_params]})
        return ptx.KernelOp(name, params, self.blocks, self.workgroup_size, types,
                            scalar_params=scalar_params, grid=fn.attributes.get(GRID_ATTR),
                            dynamic_shared=dynamic, launch=launch,
                            tensor_maps=[p for p, _ in self.tensor_map_params],
                            min_ctas=self._min_ctas(fn))

    def _min_ctas(self, fn: func.FuncOp) -> int:
        """The function's `nvvm.minctasm` (MLIR NVVM's spelling): workgroups per multiprocessor
        the registers must allow (`.minnctapersm`); 0 without it. CoopError for a value that is
        not a positive i32 or that needs a workgroup size."""
        attr = fn.attributes.get(MIN_CTAS_ATTR)
        if attr is None:
            return 0
        if not isinstance(attr, IntegerAttr) or attr.value.data < 1:
            raise op_error(fn, f"{MIN_CTAS_ATTR} must be a positive integer, got {attr}")
        if self.workgroup_size is None:
            raise op_error(fn, f"{MIN_CTAS_ATTR} needs a coop.workgroup_size (.reqntid)")
        return attr.value.data

    def _dynamic_shared(self, name: str) -> int:
        """Place the kernel's `.shared` arrays in its dynamic shared memory (`.extern .shared`,
        which the launch asks for): more than 48 KB cannot be declared statically. Each array
        keeps its alignment; returns the bytes the launch must give."""
        base = ptx.KernelOp.dynamic_shared_name_of(name)
        size = 0
        for decl, mov in zip(self.shared_decls, self.shared_addrs, strict=True):
            a = decl.align.data
            size = (size + a - 1) // a * a
            at = self.prologue.index(mov)
            start = ptx.MovSpecialOp(".u64", base, ptx.B64)
            off = ptx.MovImmOp(".b64", str(size), ptx.B64)
            addr = ptx.AddOp(".s64", [start.out, off.out], [ptx.B64])
            mov.out.replace_all_uses_with(addr.outs[0])
            self.prologue[at:at + 1] = [start, off, addr]
            size += decl.size.data
        self.shared_decls = []
        return size

    def _check_whole_warps(self, fn: func.FuncOp) -> None:
        """A Subgroup-scope matrix is spread over the 32 threads of a warp, and mma.sync /
        ldmatrix are `.aligned` (PTX ISA 9.7.14.5: every thread of the warp executes them), so
        a workgroup that is not whole warps has no defined result: refused at the first op
        that makes such a matrix."""
        if self.workgroup_size is None:
            return
        x, y, z = self.workgroup_size
        if (x * y * z) % 32 == 0:
            return
        for op in fn.walk():
            for r in op.results:
                if isinstance(r.type, coop.MatrixType) and r.type.scope_value == coop.Scope.Subgroup:
                    raise op_error(op, "subgroup-scope matrices need whole warps: coop.workgroup_size "
                                       f"of a multiple of 32 invocations, got {[x, y, z]}")

    def _needs_workgroup_size(self, fn: func.FuncOp) -> bool:
        return any(isinstance(op, cgpu.SubgroupIdOp | cgpu.NumSubgroupsOp | cgpu.BlockDimOp)
                   for op in fn.walk())

    def alloc_shared(self, size: int, align: int = 128) -> SSAValue:
        """A new `.shared` array of `size` bytes; returns its 64-bit shared-window address."""
        name = f"{self.fn.sym_name.data}_smem{len(self.shared_decls)}"
        self.shared_decls.append(ptx.SharedDeclOp(name, size, align))
        self.shared_bytes += size
        op = ptx.MovSpecialOp(".u64", name, ptx.B64)
        self.prologue.append(op)
        self.shared_addrs.append(op)
        return op.out
