"""The `ptx` dialect: one operation per PTX instruction that coopdialect emits.

SSA values are virtual registers of type `!ptx.reg<KIND>` with KIND one of `pred`, `b16`,
`b32`, `b64`, `f32`, `f64` (PTX ISA 5.2 "Types"; the printer declares them as `.reg .KIND`).
An instruction op carries its PTX modifiers verbatim in the `mods` property (for example
`mods = ".global.f32"` on `ptx.ld`), so the op name plus `mods` is the PTX opcode. Control flow
is a multi-block region in `ptx.kernel`: `ptx.bra` (with successor operands; the printer turns
block arguments into register copies) and `ptx.cbra` (`@%p bra`, PTX ISA 9.7.12.1).

Generic syntax only: this dialect is an output format, printed as PTX by
`coopdialect.ptx.printer`, never written by hand.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (UNKNOWN_LOC, AffineMapAttr, ArrayAttr, DictionaryAttr, IntAttr,
                                   StringAttr, UnitAttr)
from xdsl.ir import (Attribute, Block, Dialect, Operation, ParametrizedAttribute, Region, SSAValue,
                     TypeAttribute)
from xdsl.ir.core import ErasedSSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    successor_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, OpTrait
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.op_family import op_class

REG_KINDS = ("pred", "b16", "b32", "b64", "f32", "f64")


@irdl_attr_definition
class RegType(ParametrizedAttribute, TypeAttribute):
    """A virtual register of one PTX register class: `!ptx.reg<b32>` (PTX ISA 5.1.1 .reg)."""

    name = "ptx.reg"
    kind: StringAttr

    def __init__(self, kind: str):
        super().__init__(StringAttr(kind))

    def verify(self) -> None:
        if self.kind.data not in REG_KINDS:
            raise VerifyException(f"register class must be one of {REG_KINDS}, got {self.kind.data}")


PRED, B16, B32, B64, F32, F64 = (RegType(k) for k in REG_KINDS)
_REG_TYPES = dict(zip(REG_KINDS, (PRED, B16, B32, B64, F32, F64)))


def reg_type(kind: str) -> RegType:
    """`RegType(kind)`, the one instance per register class (a lowering asks for it per
    instruction; attributes are immutable values, so every op may share it)."""
    return _REG_TYPES.get(kind) or RegType(kind)


@functools.lru_cache(maxsize=4096)
def _string(text: str) -> StringAttr:
    """`StringAttr(text)`, shared by the ops with the same modifiers or literal."""
    return StringAttr(text)


@functools.lru_cache(maxsize=4096)
def _int(value: int) -> IntAttr:
    """`IntAttr(value)`, shared likewise (offsets, counts)."""
    return IntAttr(value)


def reg_kind(value: SSAValue) -> str:
    assert isinstance(value.type, RegType), value.type
    return value.type.kind.data


class PtxOp(IRDLOperation):
    """Base of the ops that print as PTX statements."""

    PTX_VERSION: ClassVar[tuple[int, int]] = (6, 0)
    """Lowest `.version` that has this statement in the form coopdialect emits."""

    def __init__(self, *, operands=None, result_types=None, properties=None, attributes=None,
                 successors=None, regions=None):
        # a register-only op (`_register_shape_verifier`) given one SSA value per single operand
        # and a list per variadic group: what IRDL's builder would make of it, without its
        # generic matching; anything else (an Operation for a value, a wrong count) goes to IRDL
        shape = type(self).__dict__.get("_register_shape")
        if shape is not None and not attributes and not successors and not regions:
            flat = _flatten(operands or (), shape[0], SSAValue)
            types = _flatten(result_types or (), shape[1], Attribute)
            if flat is not None and types is not None:
                Operation.__init__(self, operands=flat, result_types=types,
                                   properties={k: v for k, v in (properties or {}).items()
                                               if v is not None}, location=UNKNOWN_LOC)
                return
        super().__init__(operands=operands, result_types=result_types, properties=properties,
                         attributes=attributes, successors=successors, regions=regions)

    def verify(self, verify_nested_ops: bool = True) -> None:
        """`Operation.verify`: for an op with no region or successor that does not end its block
        (nearly every instruction) that is its erased-operand check and `verify_`, done here
        directly; the others take `Operation.verify`'s terminator and successor checks."""
        if self.regions or self._successors or self._next_op is None:
            return super().verify(verify_nested_ops)
        for operand in self._operands:
            if isinstance(operand, ErasedSSAValue):
                raise ValueError("Erased SSA value is used by the operation")
        try:
            self.verify_()
        except VerifyException as err:
            self.emit_error(f"Operation does not verify: {err}", err)


def _flatten(entries, variadic: tuple[bool, ...], kind: type) -> list | None:
    """`entries` (one per definition) flattened, or None unless each single one is a `kind` and
    each variadic one a list or tuple of them."""
    if len(entries) != len(variadic):
        return None
    flat = []
    for entry, var in zip(entries, variadic):
        if var:
            if not isinstance(entry, list | tuple) or not all(isinstance(x, kind) for x in entry):
                return None
            flat.extend(entry)
        elif isinstance(entry, kind):
            flat.append(entry)
        else:
            return None
    return flat


# --------------------------------------------------------------------------------------------
# Kernel structure
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(IRDLOperation):
    """`.visible .entry NAME(.param ... P0, ...)` with the body's blocks (PTX ISA 11.1.1).

    `params` are the parameter names in order: `.param .u64` pointers, except those listed in
    `tensor_maps`, which are `.param .align 64 .b8 NAME[128]` CUtensorMap objects (PTX ISA
    5.5.8), and those `scalar_params` maps to their type (`u32`, `u64`, `f32`, `b16`: `.param
    .u32 NAME`, the value of a scalar kernel argument). `reqntid` is the `.reqntid x, y, z` directive (from `coop.workgroup_size`);
    a warp-specialized kernel has `maxntid` + `minnctapersm 1` instead (a register cap at entry,
    which `setmaxnreg` needs). `min_ctas` (with `reqntid`) is `.minnctapersm N`: ptxas keeps the
    registers low enough for N CTAs per multiprocessor (the source function's `nvvm.minctasm`). `dynamic_shared` is the bytes of `.extern .shared` memory the
    kernel uses (the launch asks for them); `cluster` the `.reqnctapercluster x, y, z` CTAs per
    cluster (PTX ISA 11.4.4). `launch` is the launch description (JSON text,
    `coopdialect.ptx.launch`) when the host must do more than pass one pointer per argument.
    `arg_types` are the source function's argument types, one per argument (memrefs and
    scalars: what `coopdialect.ptx.launch.describe` reports as the kernel's arguments); `grid`
    the source function's declared grid (`coop.grid`), which the launch description gives as
    host expressions.
    """

    name = "ptx.kernel"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr)
    reqntid = opt_prop_def(ArrayAttr)
    maxntid = opt_prop_def(ArrayAttr)
    tensor_maps = opt_prop_def(ArrayAttr)
    dynamic_shared = opt_prop_def(IntAttr)
    launch = opt_prop_def(StringAttr)
    arg_types = opt_prop_def(ArrayAttr)
    cluster = opt_prop_def(ArrayAttr)
    min_ctas = opt_prop_def(IntAttr)
    scalar_params = opt_prop_def(DictionaryAttr)
    grid = opt_prop_def(AffineMapAttr)
    body = region_def()

    def __init__(self, sym_name: str, params: Sequence[str], blocks: Sequence[Block],
                 reqntid: Sequence[int] | None = None,
                 arg_types: Sequence[Attribute] | None = None, *,
                 maxntid: Sequence[int] | None = None, tensor_maps: Sequence[str] = (),
                 dynamic_shared: int = 0, launch: str | None = None,
                 cluster: Sequence[int] | None = None,
                 scalar_params: dict[str, str] | None = None,
                 grid: AffineMapAttr | None = None, min_ctas: int = 0):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "params": ArrayAttr([StringAttr(p) for p in params]),
        }
        if reqntid is not None:
            props["reqntid"] = ArrayAttr([IntAttr(x) for x in reqntid])
        if arg_types is not None:
            props["arg_types"] = ArrayAttr(list(arg_types))
        if maxntid is not None:
            props["maxntid"] = ArrayAttr([IntAttr(x) for x in maxntid])
        if tensor_maps:
            props["tensor_maps"] = ArrayAttr([StringAttr(p) for p in tensor_maps])
        if dynamic_shared:
            props["dynamic_shared"] = IntAttr(dynamic_shared)
        if launch is not None:
            props["launch"] = StringAttr(launch)
        if cluster is not None:
            props["cluster"] = ArrayAttr([IntAttr(x) for x in cluster])
        if scalar_params:
            props["scalar_params"] = DictionaryAttr({k: StringAttr(v)
                                                     for k, v in scalar_params.items()})
        if grid is not None:
            props["grid"] = grid
        if min_ctas:
            props["min_ctas"] = IntAttr(min_ctas)
        super().__init__(properties=props, regions=[Region(list(blocks))])

    def param_type(self, param: str) -> str:
        """The `.param` type of a parameter: `u64` (a pointer), `tensormap` or a scalar's type."""
        if self.tensor_maps is not None and any(p.data == param for p in self.tensor_maps):
            return "tensormap"
        if self.scalar_params is not None and param in self.scalar_params.data:
            return self.scalar_params.data[param].data
        return "u64"

    @property
    def dynamic_shared_name(self) -> str:
        """The `.extern .shared` array of this kernel (declared at module scope)."""
        return self.dynamic_shared_name_of(self.sym_name.data)

    @staticmethod
    def dynamic_shared_name_of(kernel: str) -> str:
        """The `.extern .shared` array of kernel `kernel`."""
        return f"{kernel}_dsmem"


@irdl_op_definition
class SharedDeclOp(PtxOp):
    """`.shared .align ALIGN .b8 NAME[SIZE];` inside a kernel (PTX ISA 5.1.5); SIZE in bytes."""

    name = "ptx.shared_decl"
    sym_name = prop_def(StringAttr)
    size = prop_def(IntAttr)
    align = prop_def(IntAttr)

    def __init__(self, sym_name: str, size: int, align: int = 128):
        super().__init__(properties={"sym_name": StringAttr(sym_name), "size": IntAttr(size),
                                     "align": IntAttr(align)})


@dataclass(frozen=True)
class InPlaceResults(OpTrait):
    """The op writes results into registers it reads: `pairs(op)` gives (result, operand) pairs,
    and the printer names each result with its operand's register, so leaving SSA needs no copy
    (a wgmma accumulator; `ptx.prmt_into`)."""

    pairs: Callable[[Operation], Iterable[tuple[SSAValue, SSAValue]]]


# --------------------------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------------------------


class PtxInst(PtxOp):
    """Base of the plain instructions: `OPCODE MODS dst, src...;` (register operands only)."""

    OPCODE: ClassVar[str] = ""
    args = var_operand_def(RegType)
    outs = var_result_def(RegType)
    mods = prop_def(StringAttr)

    def __init__(self, mods: str, args: Sequence[SSAValue], out_types: Sequence[RegType]):
        args = list(args)
        if all(isinstance(a, SSAValue) for a in args):
            # what IRDL's builder makes of one variadic operand and one variadic result, without
            # its generic argument matching (a lowering builds thousands of these)
            Operation.__init__(self, operands=args, result_types=list(out_types),
                               properties={"mods": _string(mods)}, location=UNKNOWN_LOC)
        else:  # an Operation stands for its result: IRDL's builder resolves it
            super().__init__(operands=[args], result_types=[list(out_types)],
                             properties={"mods": _string(mods)})


def _inst(cls_name: str, opcode: str, doc: str, version: tuple[int, int] = (6, 0)):
    return op_class(cls_name, PtxInst, f"ptx.{opcode.replace('.', '_')}", doc, __name__,
                    OPCODE=opcode, PTX_VERSION=version)


AddOp = _inst("AddOp", "add", "`add` (9.7.1.1 integer, 9.7.3.1 float, 9.7.4.1 half).")
SubOp = _inst("SubOp", "sub", "`sub`.")
MulOp = _inst("MulOp", "mul", "`mul` (`.lo` for integers).")
MadOp = _inst("MadOp", "mad", "`mad` (`.lo` for integers): d = a*b + c.")
FmaOp = _inst("FmaOp", "fma", "`fma.rn`: fused float multiply-add.")
DivOp = _inst("DivOp", "div", "`div` (`.rn` for floats).")
RemOp = _inst("RemOp", "rem", "`rem` (integer remainder).")
NegOp = _inst("NegOp", "neg", "`neg`.")
MinOp = _inst("MinOp", "min", "`min`.")
MaxOp = _inst("MaxOp", "max", "`max`.")
AndOp = _inst("AndOp", "and", "`and` (bitwise; .pred too).")
OrOp = _inst("OrOp", "or", "`or`.")
XorOp = _inst("XorOp", "xor", "`xor`.")
NotOp = _inst("NotOp", "not", "`not`.")
ShlOp = _inst("ShlOp", "shl", "`shl` (shift amount in a .b32 register).")
ShrOp = _inst("ShrOp", "shr", "`shr` (.s = arithmetic, .u = logical).")
CvtOp = _inst("CvtOp", "cvt", "`cvt` (9.7.9.21): type conversion with rounding modifiers in mods.")
CvtaOp = _inst("CvtaOp", "cvta", "`cvta.to.global.u64`: generic to global address.")
SetpOp = _inst("SetpOp", "setp", "`setp.CMP.TYPE p, a, b` (9.7.6.1): result is a .pred.")
SelpOp = _inst("SelpOp", "selp", "`selp.TYPE d, a, b, p`: d = p ? a : b.")
PrmtOp = _inst("PrmtOp", "prmt", "`prmt.b32 d, a, b, sel` (9.7.8.7): byte permute; sel register.")
MovOp = _inst("MovOp", "mov", "`mov` of a register, or pack/unpack `{a,b}` (see `ptx.pack`).")


@irdl_op_definition
class PrmtIntoOp(PtxOp):
    """`prmt.b32 INTO, a, b, sel` (9.7.8.7) whose result is the next value of the register
    `into` (printed as that register, `InPlaceResults`, as a wgmma accumulator is): a value that must stay
    in one register across a loop's back edge, which a block-argument copy would move. The 2:4
    pipeline keeps the sp-meta words of a batch still in flight this way (`pipelined._c_mma_sp`)."""

    name = "ptx.prmt_into"
    traits = traits_def(InPlaceResults(lambda op: [(op.out, op.into)]))
    args = var_operand_def(RegType)
    into = operand_def(RegType)
    out = result_def(RegType)
    mods = prop_def(StringAttr)

    def __init__(self, mods: str, args: Sequence[SSAValue], into: SSAValue):
        super().__init__(operands=[list(args), into], result_types=[into.type],
                         properties={"mods": _string(mods)})


@irdl_op_definition
class MovImmOp(PtxOp):
    """`mov.TYPE d, IMM;` where IMM is printed literally (`5`, `0x3C00`, `0f3F800000`)."""

    name = "ptx.mov_imm"
    mods = prop_def(StringAttr)
    imm = prop_def(StringAttr)
    out = result_def(RegType)

    def __init__(self, mods: str, imm: str, out_type: RegType):
        super().__init__(result_types=[out_type],
                         properties={"mods": _string(mods), "imm": _string(imm)})


@irdl_op_definition
class MovSpecialOp(PtxOp):
    """`mov.u32 d, %tid.x;` — a special register (PTX ISA 10) or a variable's address."""

    name = "ptx.mov_special"
    mods = prop_def(StringAttr)
    source = prop_def(StringAttr)
    out = result_def(RegType)

    def __init__(self, mods: str, source: str, out_type: RegType):
        super().__init__(result_types=[out_type],
                         properties={"mods": _string(mods), "source": _string(source)})


@irdl_op_definition
class PackOp(PtxOp):
    """`mov.b32 d, {a, b};` — pack two .b16 into a .b32 (low half first, PTX ISA 9.7.9.10)."""

    name = "ptx.pack"
    mods = prop_def(StringAttr)
    args = var_operand_def(RegType)
    out = result_def(RegType)

    def __init__(self, mods: str, args: Sequence[SSAValue], out_type: RegType):
        super().__init__(operands=[list(args)], result_types=[out_type],
                         properties={"mods": _string(mods)})


@irdl_op_definition
class UnpackOp(PtxOp):
    """`mov.b32 {a, b}, d;` — split a .b32 into two .b16 (low half first)."""

    name = "ptx.unpack"
    mods = prop_def(StringAttr)
    arg = operand_def(RegType)
    outs = var_result_def(RegType)

    def __init__(self, mods: str, arg: SSAValue, out_types: Sequence[RegType]):
        super().__init__(operands=[arg], result_types=[list(out_types)],
                         properties={"mods": _string(mods)})


@irdl_op_definition
class LdParamOp(PtxOp):
    """`ld.param.TYPE d, [PARAM];` (9.7.9.8) — read a kernel parameter: TYPE `u64` (a pointer,
    the default; an i64/index scalar), `u32`, `f32` or `b16` (scalars), into a register of
    class `PARAM_REGS[TYPE]`."""

    name = "ptx.ld_param"
    param = prop_def(StringAttr)
    type = opt_prop_def(StringAttr)
    out = result_def(RegType)

    PARAM_REGS: ClassVar[dict[str, str]] = {"u64": "b64", "u32": "b32", "f32": "f32", "b16": "b16"}

    def __init__(self, param: str, type: str = "u64"):
        props: dict[str, Attribute] = {"param": StringAttr(param)}
        if type != "u64":
            props["type"] = StringAttr(type)
        super().__init__(result_types=[RegType(self.PARAM_REGS[type])], properties=props)

    @property
    def param_type(self) -> str:
        return self.type.data if self.type is not None else "u64"

    def verify_(self) -> None:
        t = self.param_type
        if t not in self.PARAM_REGS or reg_kind(self.out) != self.PARAM_REGS[t]:
            raise VerifyException(f"ld.param.{t} needs a .{self.PARAM_REGS.get(t, '?')} register")


@irdl_op_definition
class LdOp(PtxOp):
    """`ld.SPACE{.v2|.v4}.TYPE d, [addr+offset];` (9.7.9.8); offset in bytes; several results = vector."""

    name = "ptx.ld"
    mods = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(RegType)
    outs = var_result_def(RegType)

    def __init__(self, mods: str, addr: SSAValue, offset: int, out_types: Sequence[RegType]):
        super().__init__(operands=[addr], result_types=[list(out_types)],
                         properties={"mods": _string(mods), "offset": _int(offset)})


@irdl_op_definition
class StOp(PtxOp):
    """`st.SPACE{.v2|.v4}.TYPE [addr+offset], a;` (9.7.9.10); offset in bytes."""

    name = "ptx.st"
    mods = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(RegType)
    values = var_operand_def(RegType)

    def __init__(self, mods: str, addr: SSAValue, offset: int, values: Sequence[SSAValue]):
        super().__init__(operands=[addr, list(values)],
                         properties={"mods": _string(mods), "offset": _int(offset)})


@irdl_op_definition
class BarSyncOp(PtxOp):
    """`bar.sync ID;` — CTA barrier (9.7.13.4)."""

    name = "ptx.bar_sync"
    barrier = prop_def(IntAttr)

    def __init__(self, barrier: int = 0):
        super().__init__(properties={"barrier": IntAttr(barrier)})


@irdl_op_definition
class BarNamedOp(PtxOp):
    """`bar.sync a, b;` or `bar.arrive a, b;` (PTX ISA 9.7.13.1, bar/barrier) with the barrier
    number `a` in a register (0-15) and `b` threads (a multiple of 32): `sync` arrives and waits
    until b threads have arrived on barrier a, `arrive` only arrives. Two groups of warps take
    turns with one barrier each (KernelLowering.take_turn / give_turn)."""

    name = "ptx.bar_named"
    mode = prop_def(StringAttr)  # "sync" or "arrive"
    count = prop_def(IntAttr)
    barrier = operand_def(RegType)

    def __init__(self, mode: str, barrier: SSAValue, count: int):
        if mode not in ("sync", "arrive") or count % 32:
            raise ValueError(f"bar.{mode} with {count} threads")
        super().__init__(operands=[barrier], properties={"mode": _string(mode),
                                                         "count": IntAttr(count)})


@irdl_op_definition
class MmaSyncOp(PtxOp):
    """`mma.sync.aligned.SHAPE.row.col{.satfinite}.D.A.B.C {d}, {a}, {b}, {c};` (9.7.14.5.14).

    `a_count`/`b_count` split the operand list into the A, B and C register vectors.
    """

    name = "ptx.mma_sync"
    PTX_VERSION: ClassVar[tuple[int, int]] = (7, 0)
    mods = prop_def(StringAttr)
    a_count = prop_def(IntAttr)
    b_count = prop_def(IntAttr)
    args = var_operand_def(RegType)
    outs = var_result_def(RegType)

    def __init__(self, mods: str, a: Sequence[SSAValue], b: Sequence[SSAValue],
                 c: Sequence[SSAValue], out_types: Sequence[RegType]):
        super().__init__(operands=[[*a, *b, *c]], result_types=[list(out_types)],
                         properties={"mods": _string(mods), "a_count": IntAttr(len(a)),
                                     "b_count": IntAttr(len(b))})

    def groups(self) -> tuple[Sequence[SSAValue], Sequence[SSAValue], Sequence[SSAValue]]:
        na, nb = self.a_count.data, self.b_count.data
        args = list(self.args)
        return args[:na], args[na:na + nb], args[na + nb:]


WgmmaFenceOp = op_class(
    "WgmmaFenceOp", PtxOp, "ptx.wgmma_fence",
    "`wgmma.fence.sync.aligned;` — orders register accesses before wgmma (9.7.15.5.1).", __name__,
    PTX_VERSION=(8, 0))


WgmmaCommitGroupOp = op_class("WgmmaCommitGroupOp", PtxOp, "ptx.wgmma_commit_group",
                              "`wgmma.commit_group.sync.aligned;` (9.7.15.6.1).", __name__,
                              PTX_VERSION=(8, 0))


@irdl_op_definition
class WgmmaWaitGroupOp(PtxOp):
    """`wgmma.wait_group.sync.aligned N;` — N groups may stay in flight (9.7.15.6.2)."""

    name = "ptx.wgmma_wait_group"
    PTX_VERSION: ClassVar[tuple[int, int]] = (8, 0)
    pending = prop_def(IntAttr)

    def __init__(self, pending: int = 0):
        super().__init__(properties={"pending": IntAttr(pending)})


@irdl_op_definition
class WgmmaMmaAsyncOp(PtxOp):
    """`wgmma.mma_async.sync.aligned.SHAPE.D.A.B {d}, a, b-desc, scale-d, ...;` (9.7.15.5.2).

    `a` is the A operand: one `.b64` shared-memory descriptor, or (A in registers, the "RS" form)
    four `.b32` registers of two 16-bit elements each in the fragment layout of 9.7.15.5.1. The
    accumulator registers are read and written: result i is printed with the register of
    operand `acc[i]` (the lowering gives each accumulator operand no other use afterwards).
    `imms` are the trailing immediates: scale-d, imm-scale-a, imm-scale-b, imm-trans-a,
    imm-trans-b (descriptor A) or scale-d, imm-scale-a, imm-scale-b, imm-trans-b (register A);
    scale-d alone for the integer types. PTX 8.0; 8.4 for the .s8.u8/.u8.s8 mixes.
    """

    name = "ptx.wgmma_mma_async"
    traits = traits_def(InPlaceResults(lambda op: zip(op.outs, op.acc)))
    mods = prop_def(StringAttr)
    imms = prop_def(StringAttr)
    a_count = prop_def(IntAttr)
    args = var_operand_def(RegType)
    outs = var_result_def(RegType)

    def __init__(self, mods: str, a: SSAValue | Sequence[SSAValue], desc_b: SSAValue,
                 acc: Sequence[SSAValue], imms: str | None = None):
        a = [a] if isinstance(a, SSAValue) else list(a)
        if imms is None:
            imms = "1, 1, 1, 0, 0" if len(a) == 1 else "1, 1, 1, 0"
        super().__init__(operands=[[*a, desc_b, *acc]], result_types=[[v.type for v in acc]],
                         properties={"mods": _string(mods), "imms": _string(imms),
                                     "a_count": IntAttr(len(a))})

    def verify_(self) -> None:
        if self.a_count.data not in (1, 4):
            raise VerifyException(f"wgmma.mma_async takes A as one descriptor or four registers, "
                                  f"got {self.a_count.data}")

    @property
    def a(self) -> Sequence[SSAValue]:
        return list(self.args)[:self.a_count.data]

    @property
    def desc_a(self) -> SSAValue | None:
        """A's shared-memory descriptor; None for A in registers."""
        return self.args[0] if self.a_count.data == 1 else None

    @property
    def desc_b(self) -> SSAValue:
        return self.args[self.a_count.data]

    @property
    def acc(self) -> Sequence[SSAValue]:
        return list(self.args)[self.a_count.data + 1:]

    @property
    def PTX_VERSION(self) -> tuple[int, int]:  # noqa: N802 (the printer's per-op version hook)
        mixed = ".s8.u8" in self.mods.data or ".u8.s8" in self.mods.data
        return (8, 4) if mixed else (8, 0)


FenceProxyAsyncOp = op_class(
    "FenceProxyAsyncOp", PtxOp, "ptx.fence_proxy_async",
    "`fence.proxy.async.shared::cta;` — generic-proxy writes visible to the async proxy (9.7.13.4.x).",
    __name__, PTX_VERSION=(8, 0))


@irdl_op_definition
class CommentOp(PtxOp):
    """`// TEXT` — keeps source names readable in the output."""

    name = "ptx.comment"
    text = prop_def(StringAttr)

    def __init__(self, text: str):
        super().__init__(properties={"text": StringAttr(text)})


@irdl_op_definition
class BraOp(PtxOp):
    """`bra.uni TARGET;` with block arguments (the printer copies them into the target's registers)."""

    name = "ptx.bra"
    args = var_operand_def(RegType)
    target = successor_def()
    traits = traits_def(IsTerminator())

    def __init__(self, target: Block, args: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(args)], successors=[target])


@irdl_op_definition
class CbraOp(PtxOp):
    """`@%p bra TAKEN;` then fall through to (or `bra` to) OTHER; `negate` prints `@!%p`.

    Neither successor may take block arguments.
    """

    name = "ptx.cbra"
    pred = operand_def(RegType)
    negate = opt_prop_def(UnitAttr)
    taken = successor_def()
    other = successor_def()
    traits = traits_def(IsTerminator())

    def __init__(self, pred: SSAValue, taken: Block, other: Block, negate: bool = False):
        super().__init__(operands=[pred], successors=[taken, other],
                         properties={"negate": UnitAttr()} if negate else {})

    def verify_(self) -> None:
        if reg_kind(self.pred) != "pred":
            raise VerifyException("ptx.cbra needs a .pred register")
        for b in (self.taken, self.other):
            if b.args:
                raise VerifyException("ptx.cbra successors cannot take block arguments")


@irdl_op_definition
class RetOp(PtxOp):
    """`ret;`"""

    name = "ptx.ret"
    traits = traits_def(IsTerminator())


@irdl_op_definition
class WgmmaMmaAsyncSpOp(IRDLOperation):
    """`wgmma.mma_async.sp.sync.aligned.SHAPE.D.A.B {d}, a, b-desc, sp-meta, sp-sel, IMMS;` (9.7.15.6.3).

    `args` = the A operand (one `.b64` descriptor, or four `.b32` registers for the RS form),
    b-desc, sp-meta (`.b32`), then the accumulator registers (read and written: result i is
    printed with the register of accumulator operand i, as for `ptx.wgmma_mma_async`).
    `sp_sel` is the immediate sparsity selector; `imms` the trailing immediates (scale-d,
    imm-scale-a/b, imm-trans-a/b as the type has them). PTX 8.2; 8.4 for the .s8.u8/.u8.s8 mixes.
    """

    name = "ptx.wgmma_mma_async_sp"
    traits = traits_def(InPlaceResults(lambda op: zip(op.outs, op.acc)))
    mods = prop_def(StringAttr)
    imms = prop_def(StringAttr)
    sp_sel = prop_def(IntAttr)
    a_count = prop_def(IntAttr)
    args = var_operand_def(RegType)
    outs = var_result_def(RegType)

    def __init__(self, mods: str, a: Sequence[SSAValue], desc_b: SSAValue, meta: SSAValue,
                 sp_sel: int, acc: Sequence[SSAValue], imms: str):
        super().__init__(operands=[[*a, desc_b, meta, *acc]], result_types=[[v.type for v in acc]],
                         properties={"mods": _string(mods), "imms": _string(imms),
                                     "sp_sel": IntAttr(sp_sel), "a_count": IntAttr(len(a))})

    @property
    def PTX_VERSION(self) -> tuple[int, int]:  # noqa: N802 (the printer's per-op version hook)
        mixed = ".s8.u8" in self.mods.data or ".u8.s8" in self.mods.data
        return (8, 4) if mixed else (8, 2)

    @property
    def a(self) -> Sequence[SSAValue]:
        return list(self.args)[:self.a_count.data]

    @property
    def desc_b(self) -> SSAValue:
        return self.args[self.a_count.data]

    @property
    def meta(self) -> SSAValue:
        return self.args[self.a_count.data + 1]

    @property
    def acc(self) -> Sequence[SSAValue]:
        return list(self.args)[self.a_count.data + 2:]



# --------------------------------------------------------------------------------------------
# Hopper asynchronous machinery: mbarriers, the bulk tensor copy engine, register reallocation
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class MbarrierInitOp(PtxOp):
    """`mbarrier.init.shared::cta.b64 [addr], count;` (PTX ISA 9.7.13.15.9); `addr` is a .b32
    shared-window address, `count` the expected arrivals per phase."""

    name = "ptx.mbarrier_init"
    PTX_VERSION: ClassVar[tuple[int, int]] = (7, 8)
    addr = operand_def(RegType)
    offset = prop_def(IntAttr)
    count = prop_def(IntAttr)

    def __init__(self, addr: SSAValue, offset: int, count: int):
        super().__init__(operands=[addr], properties={"offset": _int(offset), "count": IntAttr(count)})


@irdl_op_definition
class MbarrierArriveOp(PtxOp):
    """`mbarrier.arrive{.expect_tx}.shared::cta.b64 _, [addr]{, tx};` (9.7.13.15.13): one arrival;
    with `expect_tx` > 0 the phase also waits for that many bytes of asynchronous copies.
    With `remote`, `mbarrier.arrive.shared::cluster.b64 _, [addr];`: an arrival on a barrier of
    another CTA of the cluster (`addr` from `mapa`), with the default `.release.cta` semantics:
    `.release.cluster` makes ptxas put a cluster-scope MEMBAR before every arrival, which Nsight
    Compute showed stalling the consumer warps 34-43% of their time (docs/performance.md). The
    arrival only says that this CTA's wgmma reads of the slot are complete (`wgmma.wait_group`),
    which needs no cluster-wide ordering of its memory accesses."""

    name = "ptx.mbarrier_arrive"
    PTX_VERSION: ClassVar[tuple[int, int]] = (8, 0)
    addr = operand_def(RegType)
    expect_tx = prop_def(IntAttr)
    remote = opt_prop_def(UnitAttr)

    def __init__(self, addr: SSAValue, expect_tx: int = 0, remote: bool = False):
        props: dict[str, Attribute] = {"expect_tx": IntAttr(expect_tx)}
        if remote:
            props["remote"] = UnitAttr()
        super().__init__(operands=[addr], properties=props)


@irdl_op_definition
class MbarrierExpectTxOp(PtxOp):
    """`mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], tx;` (PTX ISA 9.7.13.15.11):
    the current phase also waits for `tx` more bytes of asynchronous copies, without an
    arrival (the group's arrival comes once all its copies are issued)."""

    name = "ptx.mbarrier_expect_tx"
    PTX_VERSION: ClassVar[tuple[int, int]] = (8, 0)
    addr = operand_def(RegType)
    tx = prop_def(IntAttr)

    def __init__(self, addr: SSAValue, tx: int):
        super().__init__(operands=[addr], properties={"tx": IntAttr(tx)})


@irdl_op_definition
class MbarrierTryWaitParityOp(PtxOp):
    """`mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity;` (9.7.13.15.16): `p` is true
    once the phase of the given parity (a .b32 register, 0 or 1) has completed."""

    name = "ptx.mbarrier_try_wait_parity"
    PTX_VERSION: ClassVar[tuple[int, int]] = (7, 8)
    addr = operand_def(RegType)
    parity = operand_def(RegType)
    out = result_def(RegType)

    def __init__(self, addr: SSAValue, parity: SSAValue):
        super().__init__(operands=[addr, parity], result_types=[PRED])


FenceMbarrierInitOp = op_class(
    "FenceMbarrierInitOp", PtxOp, "ptx.fence_mbarrier_init",
    "`fence.mbarrier_init.release.cluster;` — makes mbarrier.init visible to the async proxy "
    "(9.7.13.4).", __name__, PTX_VERSION=(8, 0))


@irdl_op_definition
class CpAsyncBulkTensorOp(PtxOp):
    """`cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    [dst], [tmap, {c0, ...}], [mbar];` (9.7.9.25.5.2): copies the tensor map's box at the
    coordinates (innermost first, elements, .b32) into shared memory at `dst` (.b32 shared-window
    address) and completes that many bytes on the mbarrier `mbar`. `tmap` is the generic address
    of a CUtensorMap kernel parameter (`cvta.param`)."""

    name = "ptx.cp_async_bulk_tensor"
    PTX_VERSION: ClassVar[tuple[int, int]] = (8, 0)
    dst = operand_def(RegType)
    tmap = operand_def(RegType)
    mbar = operand_def(RegType)
    coords = var_operand_def(RegType)
    cta_mask = var_operand_def(RegType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, dst: SSAValue, tmap: SSAValue, coords: Sequence[SSAValue], mbar: SSAValue,
                 cta_mask: SSAValue | None = None):
        """With `cta_mask` (a .b16), `.multicast::cluster`: the box lands at the same offset of
        every CTA of the cluster in the mask, completing bytes on each one's `mbar`."""
        super().__init__(operands=[dst, tmap, mbar, list(coords),
                                   [cta_mask] if cta_mask is not None else []])


@irdl_op_definition
class CpAsyncOp(PtxOp):
    """`cp.async.ca.shared.global [dst+offset], [src+src_offset], size[, src_size];` (PTX ISA
    9.7.9.25.3): an asynchronous copy of 4, 8 or 16 bytes from global to shared memory by this
    thread, in its current cp.async group. The offsets are bytes; with `src_size` (a .b32
    register, 0 ... size) only that many bytes are read and the rest of the destination is
    zero-filled (src_size 0: zeros, nothing read). 16-byte copies use `.cg` (cached in L2 only,
    which the ISA allows for 16 bytes alone), others `.ca`."""

    name = "ptx.cp_async"
    PTX_VERSION: ClassVar[tuple[int, int]] = (7, 0)
    dst = operand_def(RegType)
    src = operand_def(RegType)
    src_size = opt_operand_def(RegType)
    size = prop_def(IntAttr)
    offset = prop_def(IntAttr)
    src_offset = prop_def(IntAttr)

    def __init__(self, dst: SSAValue, src: SSAValue, size: int, src_size: SSAValue | None = None,
                 offset: int = 0, src_offset: int = 0):
        super().__init__(operands=[dst, src, [src_size] if src_size is not None else []],
                         properties={"size": IntAttr(size), "offset": _int(offset),
                                     "src_offset": IntAttr(src_offset)})

    def verify_(self) -> None:
        if self.size.data not in (4, 8, 16):
            raise VerifyException(f"cp.async copies 4, 8 or 16 bytes, not {self.size.data}")


CpAsyncCommitGroupOp = op_class(
    "CpAsyncCommitGroupOp", PtxOp, "ptx.cp_async_commit_group",
    "`cp.async.commit_group;` — closes this thread's group of cp.async copies (9.7.9.25.4).",
    __name__, PTX_VERSION=(7, 0))


@irdl_op_definition
class CpAsyncWaitGroupOp(PtxOp):
    """`cp.async.wait_group N;` (9.7.9.25.5): all but this thread's N newest groups completed."""

    name = "ptx.cp_async_wait_group"
    PTX_VERSION: ClassVar[tuple[int, int]] = (7, 0)
    pending = prop_def(IntAttr)

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntAttr(pending)})


@irdl_op_definition
class MapaOp(PtxOp):
    """`mapa.shared::cluster.u32 d, a, rank;` (9.7.9.18): the shared::cluster address of the
    variable at CTA-local address `a` in the CTA of the cluster with rank `rank` (.b32)."""

    name = "ptx.mapa"
    PTX_VERSION: ClassVar[tuple[int, int]] = (7, 8)
    addr = operand_def(RegType)
    rank = operand_def(RegType)
    out = result_def(RegType)

    def __init__(self, addr: SSAValue, rank: SSAValue):
        super().__init__(operands=[addr, rank], result_types=[B32])


@irdl_op_definition
class BarrierClusterOp(PtxOp):
    """`barrier.cluster.arrive.release;` then `barrier.cluster.wait.acquire;` (9.7.13.3): every
    thread of the cluster meets here (not `.aligned`: warps may be diverged)."""

    name = "ptx.barrier_cluster"
    PTX_VERSION: ClassVar[tuple[int, int]] = (8, 0)


@irdl_op_definition
class SetmaxnregOp(PtxOp):
    """`setmaxnreg.{inc|dec}.sync.aligned.u32 N;` (9.7.17.1, sm_90a): the warpgroup's per-thread
    register budget becomes N (a multiple of 8 in 24..256)."""

    name = "ptx.setmaxnreg"
    PTX_VERSION: ClassVar[tuple[int, int]] = (8, 0)
    action = prop_def(StringAttr)
    count = prop_def(IntAttr)

    def __init__(self, action: str, count: int):
        super().__init__(properties={"action": StringAttr(action), "count": IntAttr(count)})

    def verify_(self) -> None:
        if self.action.data not in ("inc", "dec"):
            raise VerifyException("setmaxnreg action must be inc or dec")
        n = self.count.data
        if n % 8 or not 24 <= n <= 256:
            raise VerifyException(f"setmaxnreg count must be a multiple of 8 in 24..256, got {n}")


PTX = Dialect(
    "ptx",
    [KernelOp, SharedDeclOp, AddOp, SubOp, MulOp, MadOp, FmaOp, DivOp, RemOp, NegOp, MinOp, MaxOp,
     AndOp, OrOp, XorOp, NotOp, ShlOp, ShrOp, CvtOp, CvtaOp, SetpOp, SelpOp, PrmtOp, PrmtIntoOp, MovOp,
     MovImmOp, MovSpecialOp, PackOp, UnpackOp, LdParamOp, LdOp, StOp, BarSyncOp, BarNamedOp,
     MmaSyncOp,
     WgmmaFenceOp, WgmmaCommitGroupOp, WgmmaWaitGroupOp, WgmmaMmaAsyncOp, WgmmaMmaAsyncSpOp, FenceProxyAsyncOp,
     CommentOp, BraOp, CbraOp, RetOp, MbarrierInitOp, MbarrierArriveOp, MbarrierExpectTxOp, MbarrierTryWaitParityOp,
     FenceMbarrierInitOp, CpAsyncBulkTensorOp, SetmaxnregOp, MapaOp, BarrierClusterOp, CpAsyncOp, CpAsyncCommitGroupOp,
     CpAsyncWaitGroupOp],
    [RegType],
)


# --------------------------------------------------------------------------------------------
# Warp-level data exchange (cooperative-matrix-2 reductions and relayouts, ptx/nv2_rules.py)
# --------------------------------------------------------------------------------------------

ShflSyncOp = _inst("ShflSyncOp", "shfl.sync",
                   "`shfl.sync.MODE.b32 d, a, b, c, membermask;` (9.7.9.6): b = lane or lane "
                   "mask, c = clamp/segment mask, all as registers.")
BarWarpSyncOp = _inst("BarWarpSyncOp", "bar.warp.sync",
                      "`bar.warp.sync membermask;` (9.7.13.3): warp barrier that also orders "
                      "the participating threads' memory accesses.")

PTX = Dialect(PTX.name, [*PTX.operations, ShflSyncOp, BarWarpSyncOp], list(PTX.attributes))


# --------------------------------------------------------------------------------------------
# Special functions and float helpers (the math dialect's lowering, ptx/math_rules.py)
# --------------------------------------------------------------------------------------------

Ex2Op = _inst("Ex2Op", "ex2", "`ex2.approx{.ftz}.f32 d, a` (9.7.3.21): 2^a, at most 2 ulp from the "
              "correctly rounded result.")
Lg2Op = _inst("Lg2Op", "lg2", "`lg2.approx{.ftz}.f32 d, a` (9.7.3.20): log2(a), absolute error 2^-22 "
              "in (0.5, 2), relative error 2^-22 elsewhere.")
SqrtOp = _inst("SqrtOp", "sqrt", "`sqrt.rn.f32` / `sqrt.rn.f64` (9.7.3.15): correctly rounded square root.")
RsqrtOp = _inst("RsqrtOp", "rsqrt", "`rsqrt.approx.f32 d, a` (9.7.3.16): 1/sqrt(a), relative error "
                "2^-22.9.")
TanhOp = _inst("TanhOp", "tanh", "`tanh.approx.f32 d, a` (9.7.3.22, sm_75): relative error 2^-11.",
               (7, 0))
AbsOp = _inst("AbsOp", "abs", "`abs.f32` / `abs.f64` (9.7.3.6): |a|.")
CopysignOp = _inst("CopysignOp", "copysign", "`copysign.f32 d, a, b` (9.7.3.2): |b| with the sign of a.")

PTX = Dialect(PTX.name, [*PTX.operations, Ex2Op, Lg2Op, SqrtOp, RsqrtOp, TanhOp, AbsOp, CopysignOp],
              list(PTX.attributes))


# --------------------------------------------------------------------------------------------
# Verification without IRDL's generic matching
# --------------------------------------------------------------------------------------------


def _register_shape_verifier(cls: type[IRDLOperation]) -> Callable[[Operation], None] | None:
    """A `verify_` that checks what `cls`'s IRDL definition checks, or None where the definition
    is not of the one shape it handles: `!ptx.reg` operands and results (at most one variadic
    group of each, no optional ones), properties of one attribute class each, no region,
    successor, attribute definition, option or trait; the class's own verifier runs after it.
    A lowering builds
    thousands of such ops and verifies each; an op the fast check does not accept goes to IRDL's
    verifier, which raises its own error."""
    from xdsl.irdl import BaseAttr, OperandDef, OptPropertyDef, PropertyDef, RangeOf, ResultDef
    from xdsl.irdl import VarOperandDef, VarResultDef
    from xdsl.irdl.constraints import EqIntConstraint, RangeLengthConstraint

    op_def = cls.get_irdl_definition()
    if list(op_def.traits) or op_def.regions or op_def.successors or op_def.attributes or op_def.options:
        return None
    # IRDL's verify_ runs the definition's checks, then the class's own verify_ (Operation's no-op
    # where it has none): the op's own checks are kept, after the fast ones
    cells = dict(zip(cls.verify_.__code__.co_freevars, cls.verify_.__closure__ or ()))
    if set(cells) != {"op_def", "custom_verify"} or cells["op_def"].cell_contents is not op_def:
        return None
    custom = cells["custom_verify"].cell_contents
    custom = None if custom is Operation.verify_ else custom

    one = RangeLengthConstraint(RangeOf(BaseAttr(RegType)), EqIntConstraint(1))

    def counts(defs, single: type, var: type) -> tuple[int, bool] | None:
        n, variadic = 0, False
        for _, d in defs:
            if type(d) is single and d.constr == one:
                n += 1
            elif type(d) is var and d.constr == RangeOf(BaseAttr(RegType)) and not variadic:
                variadic = True
            else:
                return None
        return n, variadic

    operands = counts(op_def.operands, OperandDef, VarOperandDef)
    results = counts(op_def.results, ResultDef, VarResultDef)
    if operands is None or results is None:
        return None
    kinds: dict[str, type] = {}
    required = set()
    for name, d in op_def.properties.items():
        if type(d) not in (PropertyDef, OptPropertyDef) or type(d.constr) is not BaseAttr:
            return None
        kinds[name] = d.constr.attr
        if type(d) is PropertyDef:
            required.add(name)
    (n_operands, var_operands), (n_results, var_results) = operands, results
    cls._register_shape = (tuple(type(d) is VarOperandDef for _, d in op_def.operands),
                           tuple(type(d) is VarResultDef for _, d in op_def.results))

    def fits(op: Operation) -> bool:
        # plain loops: this runs for every instruction a lowering builds
        ops, res = op._operands, op.results  # noqa: SLF001 - the tuple `operands` views
        if not (len(ops) >= n_operands if var_operands else len(ops) == n_operands):
            return False
        if not (len(res) >= n_results if var_results else len(res) == n_results):
            return False
        if op.regions or op._successors:  # noqa: SLF001
            return False
        for v in ops:
            if type(v.type) is not RegType:
                return False
        for r in res:
            if type(r.type) is not RegType:
                return False
        props = op.properties
        for k in required:
            if k not in props:
                return False
        for k, v in props.items():
            kind = kinds.get(k)
            if kind is None or not isinstance(v, kind):
                return False
        return True

    def verify_(op: Operation) -> None:
        if not fits(op):
            op_def.verify(op)
        if custom is not None:
            custom(op)

    return verify_


for _op in PTX.operations:
    if (_verify := _register_shape_verifier(_op)) is not None:
        _op.verify_ = _verify
    else:
        assert not issubclass(_op, PtxInst), _op

