"""Lowering of one kernel `func.func` to a `ptx.kernel` (used by convert-coop-to-ptx).

The kernel convention (DESIGN.md): memref arguments are global buffers, read from `.param .u64`
pointers; `index` is 64-bit (`.b64` registers, `.s64`/`.u64` arithmetic); `gpu` ids read
`%ctaid`/`%tid`/`%laneid`; `scf.for` becomes a header block with a `setp`/`@p bra` exit test and
a back edge whose block arguments carry the iteration values (`scf.while` likewise, its `before`
region in the header); an i1 is a predicate register (and/or/xor.pred). A subgroup-scope coop matrix is a
list of per-lane fragment registers (`coopdialect.ptx.fragments`); the coop-op rules live in
`coop_rules.py`, the workgroup-scope (wgmma) rules in `wgmma.py`.

Each source op kind has one rule (`RULES[op class](lowering, op)`), the "set of rewrites" of the
pass; the rules share this class's value map and emission helpers. Integers narrower than 32
bits live in `.b32` registers whose upper bits are unspecified: rules that need them (division,
widening, int-to-float) sign- or zero-extend first.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from coopdialect.diagnostics import CoopError
from coopdialect.dialects import coop, ptx
from coopdialect.dialects import gpu as cgpu
from coopdialect.dialects.ptx import RegType


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


@dataclass
class SharedTile:
    """A workgroup-scope A/B operand staged in shared memory for wgmma (see wgmma.py)."""

    ty: coop.MatrixType
    addr: SSAValue  # 64-bit shared-window address of the tile
    sbo: int
    lbo: int


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


# ---------------------------------------------------------------------------------------------
# The lowering
# ---------------------------------------------------------------------------------------------

Rule = Callable[["KernelLowering", Operation], None]
RULES: dict[type[Operation], Rule] = {}


def rule(*classes: type[Operation]):
    """Register a lowering rule for the given source op classes."""
    def deco(fn: Rule) -> Rule:
        for c in classes:
            RULES[c] = fn
        return fn
    return deco


@dataclass
class LoopFrame:
    """An `scf.for` being lowered: its header block, induction variable and step per trip, and
    the registers beyond the loop's own values that its back edge passes (`open_loop`'s
    `extra`), read when the yield is lowered. An `scf.while` has no induction variable (None)."""

    header: Block
    iv: SSAValue | None
    step: Scalar | None
    extra: Callable[[], list[SSAValue]] = list


@dataclass
class KernelLowering:
    """Lowers one kernel function; `run()` returns the `ptx.kernel` op."""

    fn: func.FuncOp
    target: str = "sm_90a"
    vmap: dict[SSAValue, object] = field(default_factory=dict)
    prologue: list[Operation] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    consts: dict[tuple[str, str], SSAValue] = field(default_factory=dict)
    cache: dict[str, SSAValue] = field(default_factory=dict)
    shared_bytes: int = 0
    shared_decls: list[Operation] = field(default_factory=list)
    loop_stack: list[LoopFrame] = field(default_factory=list)  # innermost last

    # -- emission ----------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.cur.add_op(op)
        return op

    def inst(self, cls: type[ptx.PtxInst], mods: str, args: list[SSAValue], kind: str,
             pro: bool = False) -> SSAValue:
        """Emit `cls` with one result of register class `kind` (in the prologue if `pro`)."""
        op = cls(mods, args, [RegType(kind)])
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
            op = ptx.MovImmOp(mods, literal, RegType(kind))
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

    def new_block(self, arg_kinds: list[str] = ()) -> Block:
        b = Block(arg_types=[RegType(k) for k in arg_kinds])
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

    def lower_op(self, op: Operation) -> None:
        """Lower one op by its rule (a warp role of a staged kernel overrides this)."""
        fn = RULES.get(type(op))
        if fn is None:
            raise op_error(op, f"has no PTX lowering (convert-coop-to-ptx, target {self.target})")
        try:
            fn(self, op)
        except CoopError:
            raise
        except DiagnosticException as e:  # a helper's refusal that does not know the op
            raise op_error(op, str(e)) from None

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
        entry = self.new_block()
        self.cur = entry
        for i, arg in enumerate(fn.args):
            if not isinstance(arg.type, MemRefType):
                raise op_error(fn, f"kernel argument {i} has type {arg.type}; only memrefs "
                                   "(global buffers) can be kernel parameters")
            pname = f"{name}_param_{arg.name_hint or i}"
            params.append(pname)
            ld = ptx.LdParamOp(pname)
            cvta = ptx.CvtaOp(".to.global.u64", [ld.out], [ptx.B64])
            self.prologue += [ld, cvta]
            self.vmap[arg] = Buf(arg.type, cvta.outs[0], "global")
        if self.workgroup_size is None and self._needs_workgroup_size(fn):
            raise op_error(fn, "needs a coop.workgroup_size attribute (subgroup ids, warpgroups)")
        self.lower_ops(fn.body.block)
        first = entry.first_op
        for op in [*self.shared_decls, *self.prologue]:
            if first is None:
                entry.add_op(op)
            else:
                entry.insert_op_before(op, first)
        return ptx.KernelOp(name, params, self.blocks, self.workgroup_size,
                            [a.type for a in fn.args])

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
        return op.out


# ---------------------------------------------------------------------------------------------
# func, arith, scf, gpu
# ---------------------------------------------------------------------------------------------


@rule(func.ReturnOp)
def _return(lw: KernelLowering, op: func.ReturnOp) -> None:
    if op.arguments:
        raise op_error(op, "a kernel returns nothing; write results to a memref")
    lw.emit(ptx.RetOp())


@rule(arith.ConstantOp)
def _constant(lw: KernelLowering, op: arith.ConstantOp) -> None:
    v = op.value
    t = op.result.type
    if isinstance(t, AnyFloat):
        lw.vmap[op.result] = Scalar(t, const=float(v.value.data))
    elif isinstance(t, IndexType | IntegerType):
        lw.vmap[op.result] = Scalar(t, const=int(v.value.data))
    else:
        raise op_error(op, f"constant of type {t} has no PTX lowering")


_INT_BIN = {
    arith.AddiOp: ("add", "s", lambda x, y: x + y),
    arith.SubiOp: ("sub", "s", lambda x, y: x - y),
    arith.MuliOp: ("mul.lo", "s", lambda x, y: x * y),
    arith.DivUIOp: ("div", "u", lambda x, y: x // y),
    arith.DivSIOp: ("div", "s", lambda x, y: int(x / y)),
    arith.RemUIOp: ("rem", "u", lambda x, y: x % y),
    arith.RemSIOp: ("rem", "s", lambda x, y: x - y * int(x / y)),
    arith.AndIOp: ("and", "b", lambda x, y: x & y),
    arith.OrIOp: ("or", "b", lambda x, y: x | y),
    arith.XOrIOp: ("xor", "b", lambda x, y: x ^ y),
    arith.ShLIOp: ("shl", "b", lambda x, y: x << y),
    arith.ShRUIOp: ("shr", "u", lambda x, y: x >> y),
    arith.ShRSIOp: ("shr", "s", lambda x, y: x >> y),
    arith.MinUIOp: ("min", "u", min),
    arith.MaxUIOp: ("max", "u", max),
    arith.MinSIOp: ("min", "s", min),
    arith.MaxSIOp: ("max", "s", max),
}
_OPCLS = {"add": ptx.AddOp, "sub": ptx.SubOp, "mul.lo": ptx.MulOp, "div": ptx.DivOp,
          "rem": ptx.RemOp, "and": ptx.AndOp, "or": ptx.OrOp, "xor": ptx.XorOp, "shl": ptx.ShlOp,
          "shr": ptx.ShrOp, "min": ptx.MinOp, "max": ptx.MaxOp}


@rule(*_INT_BIN)
def _int_binary(lw: KernelLowering, op: Operation) -> None:
    name, sign, fold = _INT_BIN[type(op)]
    a, b = lw.scalar(op.lhs), lw.scalar(op.rhs)
    t = op.result.type
    w = width(t)
    if w == 1 and name in ("and", "or", "xor"):  # i1: predicate logic (flags of lifted SPIR-V)
        ca, c = a.const, b.const
        if ca is not None and c is not None:
            lw.vmap[op.result] = Scalar(t, const=fold(int(ca), int(c)) & 1)
            return
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(_OPCLS[name], ".pred", [lw.reg(a), lw.reg(b)], "pred"))
        return
    if w not in (32, 64):
        raise op_error(op, f"scalar {t} arithmetic: only 32/64-bit integers and index")
    unsigned_div = sign == "u" and name in ("div", "rem")
    ca, c = a.const, b.const
    if unsigned_div:  # constants are kept signed (as arith.constant prints them): read unsigned
        ca, c = (None if v is None else int(v) % (1 << w) for v in (ca, c))
    if ca is not None and c is not None and not (name in ("div", "rem") and c == 0):
        r = fold(int(ca), int(c))
        if unsigned_div and r >= 1 << (w - 1):
            r -= 1 << w
        lw.vmap[op.result] = Scalar(t, const=r)
        return
    if isinstance(t, IndexType) and name in ("add", "sub", "mul.lo"):
        lw.vmap[op.result] = lw.index_op(name.split(".")[0], a, b)
        return
    if unsigned_div and c is not None and c > 0:
        # Unsigned division by a constant without a division instruction (udiv_const): the
        # loop indices of staged kernels divide by their step and stage count every iteration.
        r = lw.udiv_const(lw.reg(a), int(c), w, rem=name == "rem")
        lw.vmap[op.result] = Scalar(t, reg=r)
        return
    rb = lw.reg(b)
    if name in ("shl", "shr"):  # the shift amount is a .u32
        rb = lw.inst(ptx.CvtOp, ".u32.u64", [rb], "b32") if w == 64 else rb
    mods = f".{name.split('.', 1)[1]}" if "." in name else ""
    lw.vmap[op.result] = Scalar(t, reg=lw.inst(_OPCLS[name], f"{mods}.{sign}{w}",
                                               [lw.reg(a), rb], reg_kind(t)))


_CMP = {"eq": "eq", "ne": "ne", "slt": "lt", "sle": "le", "sgt": "gt", "sge": "ge",
        "ult": "lo", "ule": "ls", "ugt": "hi", "uge": "hs"}


@rule(arith.CmpiOp)
def _cmpi(lw: KernelLowering, op: arith.CmpiOp) -> None:
    pred = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"][op.predicate.value.data]
    t = op.lhs.type
    w = width(t)
    sign = "u" if pred[0] == "u" or pred in ("eq", "ne") else "s"
    p = lw.inst(ptx.SetpOp, f".{_CMP[pred]}.{sign}{w}",
                [lw.reg(lw.scalar(op.lhs)), lw.reg(lw.scalar(op.rhs))], "pred")
    lw.vmap[op.result] = Scalar(op.result.type, reg=p)


# arith.cmpf predicate -> PTX setp comparison (ISA 9.7.4.2: ordered, and the `u` unordered forms)
_CMPF = {"oeq": "eq", "ogt": "gt", "oge": "ge", "olt": "lt", "ole": "le", "one": "ne", "ord": "num",
         "ueq": "equ", "ugt": "gtu", "uge": "geu", "ult": "ltu", "ule": "leu", "une": "neu", "uno": "nan"}


@rule(arith.CmpfOp)
def _cmpf(lw: KernelLowering, op: arith.CmpfOp) -> None:
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    if pred not in _CMPF:
        raise op_error(op, f"cmpf {pred} has no PTX lowering")
    p = lw.inst(ptx.SetpOp, f".{_CMPF[pred]}.f{width(op.lhs.type)}",
                [lw.reg(lw.scalar(op.lhs)), lw.reg(lw.scalar(op.rhs))], "pred")
    lw.vmap[op.result] = Scalar(op.result.type, reg=p)


@rule(arith.SelectOp)
def _select(lw: KernelLowering, op: arith.SelectOp) -> None:
    t = op.result.type
    kind = reg_kind(t)
    if kind == "pred":  # no selp.pred: (c and a) or (not c and b)
        c = lw.reg(lw.scalar(op.cond))
        x = lw.inst(ptx.AndOp, ".pred", [c, lw.reg(lw.scalar(op.lhs))], "pred")
        nc = lw.inst(ptx.NotOp, ".pred", [c], "pred")
        y = lw.inst(ptx.AndOp, ".pred", [nc, lw.reg(lw.scalar(op.rhs))], "pred")
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(ptx.OrOp, ".pred", [x, y], "pred"))
        return
    d = lw.inst(ptx.SelpOp, f".{kind}", [lw.reg(lw.scalar(op.lhs)), lw.reg(lw.scalar(op.rhs)),
                                         lw.reg(lw.scalar(op.cond))], kind)
    lw.vmap[op.result] = Scalar(t, reg=d)


@rule(arith.IndexCastOp)
def _index_cast(lw: KernelLowering, op: Operation) -> None:
    src, t = lw.scalar(op.input), op.result.type
    if src.const is not None:
        lw.vmap[op.result] = Scalar(t, const=src.const)
        return
    ws, wd = width(op.input.type), width(t)
    sign = "s" if isinstance(op, arith.IndexCastOp) else "u"
    if ws == wd:
        lw.vmap[op.result] = Scalar(t, reg=src.reg)
    elif wd > ws:
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(ptx.CvtOp, f".{sign}{wd}.{sign}{ws}",
                                                   [src.reg], reg_kind(t)))
    else:
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(ptx.CvtOp, f".u{wd}.u{ws}", [src.reg],
                                                   reg_kind(t)))


_FLOAT_BIN = {arith.AddfOp: "add", arith.SubfOp: "sub", arith.MulfOp: "mul", arith.DivfOp: "div"}


@rule(*_FLOAT_BIN)
def _float_binary(lw: KernelLowering, op: Operation) -> None:
    from coopdialect.ptx.coop_rules import float_binary
    t = op.result.type
    d = float_binary(lw, _FLOAT_BIN[type(op)], t, lw.reg(lw.scalar(op.lhs)),
                     lw.reg(lw.scalar(op.rhs)))
    lw.vmap[op.result] = Scalar(t, reg=d)


def open_loop(lw: KernelLowering, op: scf.ForOp,
              extra: Sequence[SSAValue] = ()) -> tuple[Block, SSAValue, list, Block]:
    """The header of `op`'s loop: (header, induction variable, carried values, exit block),
    with lw.cur at the start of the body; the body's yield branches back to the header. The
    registers `extra` are carried too, after the loop's own values: the header's last
    len(extra) arguments, which the back edge passes (`LoopFrame.extra`)."""
    lb, ub = lw.scalar(op.lb), lw.scalar(op.ub)
    inits = [lw.vmap[v] for v in op.iter_args]
    flat = [lw.reg(lb)] + [r for v in inits for r in lw.flatten(v)] + list(extra)
    header = lw.new_block([ptx.reg_kind(r) for r in flat])
    lw.emit(ptx.BraOp(header, flat))
    body, exit_ = lw.new_block(), Block()
    lw.cur = header
    iv = header.args[0]
    # MLIR scf.for compares signed; exit when iv >= ub.
    p = lw.inst(ptx.SetpOp, ".ge.s64", [iv, lw.reg(ub)], "pred")
    lw.emit(ptx.CbraOp(p, exit_, body))
    lw.cur = body
    own = list(header.args[1:len(header.args) - len(extra)])
    return header, iv, lw.unflatten(inits, own), exit_


@rule(scf.ForOp)
def _for(lw: KernelLowering, op: scf.ForOp) -> None:
    step = lw.scalar(op.step)
    header, iv, carried, exit_ = open_loop(lw, op)
    block = op.body.block
    lw.vmap[block.args[0]] = Scalar(IndexType(), reg=iv)
    for arg, v in zip(block.args[1:], carried):
        lw.vmap[arg] = v
    lw.loop_stack.append(LoopFrame(header, iv, step))
    lw.lower_ops(block)
    lw.loop_stack.pop()
    lw.blocks.append(exit_)
    lw.cur = exit_
    for res, v in zip(op.results, carried):
        lw.vmap[res] = v


@rule(scf.WhileOp)
def _while(lw: KernelLowering, op: scf.WhileOp) -> None:
    """`scf.while` -> a header block running `before` and branching on its `scf.condition` to the
    `after` block (whose yield branches back) or past the loop; the condition's values are the
    results."""
    inits = [lw.vmap[v] for v in op.arguments]
    flat = [r for v in inits for r in lw.flatten(v)]
    header = lw.new_block([ptx.reg_kind(r) for r in flat])
    lw.emit(ptx.BraOp(header, flat))
    lw.cur = header
    before = op.before_region.block
    for arg, v in zip(before.args, lw.unflatten(inits, list(header.args))):
        lw.vmap[arg] = v
    cond = before.last_op
    assert isinstance(cond, scf.ConditionOp)
    for o in before.ops:
        if o is not cond:
            lw.lower_op(o)
    values = [lw.vmap[v] for v in cond.args]
    body, exit_ = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(lw.reg(lw.scalar(cond.condition)), body, exit_))
    lw.cur = body
    for arg, v in zip(op.after_region.block.args, values):
        lw.vmap[arg] = v
    lw.loop_stack.append(LoopFrame(header, None, None))
    lw.lower_ops(op.after_region.block)
    lw.loop_stack.pop()
    lw.blocks.append(exit_)
    lw.cur = exit_
    for res, v in zip(op.results, values):
        lw.vmap[res] = v


@rule(scf.IfOp)
def _if(lw: KernelLowering, op: scf.IfOp) -> None:
    """`scf.if` -> `@!p bra` around the then-block (and an else-block); results are the join
    block's arguments, written by each branch (the printer's parallel copies)."""
    cond = lw.reg(lw.scalar(op.cond))
    then_b = lw.new_block()
    has_else = bool(op.false_region.blocks) and len(op.false_region.block.ops) > 1
    else_b = lw.new_block() if has_else or op.results else None
    join = Block()
    lw.emit(ptx.CbraOp(cond, then_b, else_b or join))
    outs: list[list[object]] = []
    for blk, region in ((then_b, op.true_region), (else_b, op.false_region)):
        if blk is None:
            continue
        lw.cur = blk
        yielded: list[object] = []
        for o in region.block.ops:
            if isinstance(o, scf.YieldOp):
                yielded = [lw.vmap[v] for v in o.arguments]
            else:
                lw.lower_op(o)
        outs.append(yielded)
        regs = [r for v in yielded for r in lw.flatten(v)]
        if op.results and not join.args:
            for r in regs:
                join.insert_arg(r.type, len(join.args))
        lw.emit(ptx.BraOp(join, regs))
    lw.blocks.append(join)
    lw.cur = join
    if op.results:
        for res, v in zip(op.results, lw.unflatten(outs[0], list(join.args))):
            lw.vmap[res] = v


@rule(scf.YieldOp)
def _yield(lw: KernelLowering, op: scf.YieldOp) -> None:
    frame = lw.loop_stack[-1]
    regs = [r for v in op.arguments for r in lw.flatten(lw.vmap[v])]
    if frame.iv is not None:  # scf.for: the next induction variable first (scf.while: none)
        regs.insert(0, lw.reg(lw.index_op("add", Scalar(IndexType(), reg=frame.iv), frame.step)))
    lw.emit(ptx.BraOp(frame.header, regs + frame.extra()))


@rule(cgpu.BlockIdOp, cgpu.ThreadIdOp, cgpu.GridDimOp, cgpu.BlockDimOp, cgpu.GlobalIdOp)
def _dim_id(lw: KernelLowering, op: Operation) -> None:
    d = op.dim
    if isinstance(op, cgpu.BlockDimOp) and lw.workgroup_size is not None:
        lw.vmap[op.result] = lw.idx_const(lw.workgroup_size["xyz".index(d)])
        return
    if isinstance(op, cgpu.GlobalIdOp):
        r = lw.inst(ptx.MadOp, ".lo.u32", [lw.special(f"%ctaid.{d}"), lw.special(f"%ntid.{d}"),
                                           lw.special(f"%tid.{d}")], "b32", True)
    else:
        sreg = {cgpu.BlockIdOp: "%ctaid", cgpu.ThreadIdOp: "%tid", cgpu.GridDimOp: "%nctaid",
                cgpu.BlockDimOp: "%ntid"}[type(op)]
        r = lw.special(f"{sreg}.{d}")
    lw.vmap[op.result] = Scalar(IndexType(), reg=lw.cached(f"u64 {op.name} {d}",
                                                           lambda: lw.u64(r, True)))


@rule(cgpu.SubgroupIdOp, cgpu.LaneIdOp, cgpu.SubgroupSizeOp, cgpu.NumSubgroupsOp)
def _subgroup_id(lw: KernelLowering, op: Operation) -> None:
    if isinstance(op, cgpu.SubgroupSizeOp):
        lw.vmap[op.result] = lw.idx_const(32)
        return
    if isinstance(op, cgpu.NumSubgroupsOp):
        x, y, z = lw.workgroup_size
        lw.vmap[op.result] = lw.idx_const((x * y * z + 31) // 32)
        return
    if isinstance(op, cgpu.LaneIdOp):
        r = lw.special("%laneid")
        lw.vmap[op.result] = Scalar(IndexType(), reg=lw.cached("u64 lane", lambda: lw.u64(r, True)))
        return

    def make() -> SSAValue:
        r = lw.inst(ptx.ShrOp, ".u32", [lw.linear_tid(), lw.imm("b32", "5")], "b32", True)
        return lw.u64(r, True)
    lw.vmap[op.result] = Scalar(IndexType(), reg=lw.cached("u64 subgroup", make))


def lower_function(fn: func.FuncOp, target: str, options=None) -> ptx.KernelOp:
    """Lower one kernel function (see the module docstring); raises DiagnosticException.

    A kernel in the staged form (`pipeline-coop-loads`) becomes the warp-specialized wgmma
    pipeline of `coopdialect.ptx.pipelined` (`options`: its `Options`).
    """
    import coopdialect.ptx.coop_rules  # noqa: F401  (registers the coop rules)
    import coopdialect.ptx.wgmma  # noqa: F401
    import coopdialect.ptx.sparse  # noqa: F401  (after coop_rules: wraps coop.load/store)
    import coopdialect.ptx.nv2_workgroup  # noqa: F401  (coopmat2 + tensor addressing)
    import coopdialect.ptx.staged_generic  # noqa: F401  (the staged form op by op)
    from coopdialect.ptx import pipelined

    options = options or pipelined.Options()
    plan = pipelined.analyze(fn, target, options.cluster_m, options.persistent)
    if plan is not None:
        return pipelined.lower_staged(fn, target, plan, options)
    return KernelLowering(fn, target).run()
