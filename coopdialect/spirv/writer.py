"""SPIR-V binary writer: `spirv.module` -> bytes (SPIR-V spec 2.3 "Physical Layout", 2.4
"Logical Layout of a Module").

Layout: header; OpCapability; OpExtension; OpMemoryModel; OpEntryPoint; OpExecutionMode; OpName;
decorations; types and constants; global variables; functions. Types and constants are one
deduplicated set emitted in a canonical order (dependencies first, then sorted by their printed
form), so where the IR keeps a constant (module or function) does not change the bytes. Ids are
numbered in order of first appearance in the final word stream, which makes the output a pure
function of the IR and lets writer -> reader -> writer be byte-identical.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    FloatAttr,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    SymbolRefAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from coopdialect.dialects import spirv, spirv_general, spirv_nv2
from coopdialect.spirv.encoding import encode_enum, encode_operands, encode_string, has_result
from coopdialect.spirv.errors import SpirvEmitError
from coopdialect.spirv.grammar_tables import ENUMS, INSTRUCTIONS, MAGIC_NUMBER
from coopdialect.spirv.tensor_operands import TENSOR_MEMORY_OPS, encode_tensor_memory
from coopdialect.spirv.requirements import _op_types, derive_requirements, implied_closure, version_of

GENERATOR_MAGIC = 0
"""Header word 2 (generator id): 0 = not registered with Khronos."""


class _Ref:
    """Placeholder for an id, numbered when the whole module is assembled."""

    __slots__ = ("key",)

    def __init__(self, key: object):
        self.key = key


Word = int | _Ref


_CANONICAL: dict[Attribute, Attribute] = {}


def canonical_type(t: Attribute) -> Attribute:
    """The type as the binary sees it: unsigned integers become signless (both encode with
    Signedness 0), recursively inside composite types."""
    c = _CANONICAL.get(t)
    if c is None:
        if len(_CANONICAL) > 4096:
            _CANONICAL.clear()
        c = _CANONICAL[t] = _canonical_type(t)
    return c


def _canonical_type(t: Attribute) -> Attribute:
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED:
        return IntegerType(t.width.data)
    if isinstance(t, VectorType):
        return VectorType(canonical_type(t.element_type), t.get_shape())
    if isinstance(t, spirv.PointerType):
        return spirv.PointerType(canonical_type(t.pointee), t.storage_class)
    if isinstance(t, spirv.RuntimeArrayType):
        return spirv.RuntimeArrayType(canonical_type(t.element_type), t.stride.data)
    if isinstance(t, spirv.ArrayType):
        return spirv.ArrayType(t.length.data, canonical_type(t.element_type), t.stride.data)
    if isinstance(t, spirv.StructType):
        return spirv.StructType([canonical_type(m) for m in t.members], [o.data for o in t.offsets], bool(t.block.data),
                                [d.data for d in t.member_decorations])
    if isinstance(t, spirv.CooperativeMatrixType):
        return spirv.CooperativeMatrixType(t.rows.data, t.columns.data, canonical_type(t.element_type),
                                           t.scope.data, t.use.data)
    if isinstance(t, spirv.NVCooperativeMatrixType):
        return spirv.NVCooperativeMatrixType(t.rows.data, t.columns.data, canonical_type(t.element_type), t.scope.data)
    if isinstance(t, FunctionType):
        return FunctionType.from_lists([canonical_type(x) for x in t.inputs], [canonical_type(x) for x in t.outputs])
    return t


def scalar_words(value: IntegerAttr | FloatAttr, t: Attribute) -> list[int]:
    """Literal words of a scalar constant of type `t` (low-order word first, spec 2.2.1)."""
    if isinstance(t, IntegerType):
        width = t.width.data
        v = value.value.data & ((1 << width) - 1)
        return [v] if width <= 32 else [v & 0xFFFFFFFF, v >> 32]
    if isinstance(t, BFloat16Type):  # SPV_KHR_bfloat16: the upper half of the f32 encoding
        return [int(np.array(value.value.data, dtype=ml_dtypes.bfloat16).view(np.uint16))]
    if isinstance(t, AnyFloat):
        width = t.bitwidth
        fmt = {16: "<e", 32: "<f", 64: "<d"}.get(width)
        if fmt is None:
            raise ValueError(f"no encoding for float width {width}")
        raw = int.from_bytes(struct.pack(fmt, value.value.data), "little")
        return [raw] if width <= 32 else [raw & 0xFFFFFFFF, raw >> 32]
    raise ValueError(f"no scalar constant of type {t}")


class _Writer:
    def __init__(self, module: spirv.ModuleOp):
        self.module = module
        self.names: list[list[Word]] = []
        self.annotations: list[list[Word]] = []
        self.globals: list[list[Word]] = []
        self.emitted: set[object] = set()
        self.symbols: dict[str, object] = {}
        self.where = module.name
        # id(object) -> (object, ref): the object is kept so that its id is not reused
        self._type_refs: dict[int, tuple[Attribute, _Ref]] = {}
        self._value_refs: dict[int, tuple[SSAValue, _Ref]] = {}

    # -- helpers -------------------------------------------------------------------------------
    def fail(self, msg: str) -> SpirvEmitError:
        return SpirvEmitError(f"'{self.where}': {msg}")

    @staticmethod
    def ins(opname: str, operands: list[Word]) -> list[Word]:
        return [INSTRUCTIONS[opname][0], *operands]

    # -- types and constants --------------------------------------------------------------------
    def type_id(self, t: Attribute) -> _Ref:
        hit = self._type_refs.get(id(t))
        if hit is not None:
            return hit[1]
        ref = self._type_id(t)
        self._type_refs[id(t)] = (t, ref)
        return ref

    def _type_id(self, t: Attribute) -> _Ref:
        t = canonical_type(t)
        key = ("type", t)
        if key in self.emitted:
            return _Ref(key)
        ref = _Ref(key)
        if isinstance(t, IntegerType):
            inst = ("OpTypeBool", []) if t.width.data == 1 else (
                "OpTypeInt", [t.width.data, int(t.signedness.data == Signedness.SIGNED)])
        elif isinstance(t, BFloat16Type):  # SPV_KHR_bfloat16
            inst = ("OpTypeFloat", [16, ENUMS["FPEncoding"]["BFloat16KHR"][0]])
        elif isinstance(t, AnyFloat):
            if t.bitwidth not in (16, 32, 64):
                raise self.fail(f"unsupported float type {t}")
            inst = ("OpTypeFloat", [t.bitwidth])
        elif isinstance(t, VectorType):
            if len(t.get_shape()) != 1 or t.get_num_scalable_dims():
                raise self.fail(f"only fixed 1-D vectors are supported, got {t}")
            inst = ("OpTypeVector", [self.type_id(t.element_type), t.get_shape()[0]])
        elif isinstance(t, spirv.VoidType):
            inst = ("OpTypeVoid", [])
        elif isinstance(t, spirv.PointerType):
            inst = ("OpTypePointer", [*encode_enum("StorageClass", t.storage_class.data), self.type_id(t.pointee)])
        elif isinstance(t, spirv.RuntimeArrayType):
            inst = ("OpTypeRuntimeArray", [self.type_id(t.element_type)])
        elif isinstance(t, spirv.ArrayType):
            inst = ("OpTypeArray", [self.type_id(t.element_type), self.const_id(IntegerAttr(t.length.data, 32),
                                                                                IntegerType(32))])
        elif isinstance(t, spirv.StructType):
            inst = ("OpTypeStruct", [self.type_id(m) for m in t.members])
        elif isinstance(t, spirv.CooperativeMatrixType):
            i32 = IntegerType(32)
            inst = ("OpTypeCooperativeMatrixKHR", [
                self.type_id(t.element_type),
                self.const_id(IntegerAttr(ENUMS["Scope"][t.scope.data][0], i32), i32),
                self.const_id(IntegerAttr(t.rows.data, i32), i32),
                self.const_id(IntegerAttr(t.columns.data, i32), i32),
                self.const_id(IntegerAttr(ENUMS["CooperativeMatrixUse"][t.use.data][0], i32), i32)])
        elif isinstance(t, spirv.NVCooperativeMatrixType):
            i32 = IntegerType(32)
            inst = ("OpTypeCooperativeMatrixNV", [
                self.type_id(t.element_type),
                self.const_id(IntegerAttr(ENUMS["Scope"][t.scope.data][0], i32), i32),
                self.const_id(IntegerAttr(t.rows.data, i32), i32),
                self.const_id(IntegerAttr(t.columns.data, i32), i32)])
        elif isinstance(t, spirv_nv2.TensorLayoutType):
            i32 = IntegerType(32)
            inst = ("OpTypeTensorLayoutNV", [
                self.const_id(IntegerAttr(t.dim.data, i32), i32),
                self.const_id(IntegerAttr(ENUMS["TensorClampMode"][t.clamp_mode.data][0], i32), i32)])
        elif isinstance(t, spirv_nv2.TensorViewType):
            i32, i1 = IntegerType(32), IntegerType(1)
            inst = ("OpTypeTensorViewNV", [
                self.const_id(IntegerAttr(t.dim.data, i32), i32),
                self.const_id(IntegerAttr(t.has_dimensions.data, i1), i1),
                *(self.const_id(IntegerAttr(p, i32), i32) for p in t.perm)])
        elif isinstance(t, FunctionType):
            if len(t.outputs) > 1:
                raise self.fail("a function returns at most one value")
            ret = self.type_id(t.outputs.data[0] if t.outputs.data else spirv.VoidType())
            inst = ("OpTypeFunction", [ret, *(self.type_id(x) for x in t.inputs)])
        else:
            raise self.fail(f"type {t} has no SPIR-V encoding")
        self.emitted.add(key)
        self.globals.append(self.ins(inst[0], [ref, *inst[1]]))
        self.decorate_type(t, ref)
        return ref

    def decorate_type(self, t: Attribute, ref: _Ref) -> None:
        if isinstance(t, spirv.RuntimeArrayType | spirv.ArrayType) and t.stride.data:
            self.annotations.append(self.ins("OpDecorate", [ref, *encode_enum("Decoration", f"ArrayStride({t.stride.data})")]))
        if isinstance(t, spirv.StructType):
            if t.block.data:
                self.annotations.append(self.ins("OpDecorate", [ref, *encode_enum("Decoration", "Block")]))
            for i, off in enumerate(t.offsets):
                if off.data >= 0:
                    self.annotations.append(self.ins("OpMemberDecorate", [ref, i, *encode_enum("Decoration", f"Offset({off.data})")]))
            for i, deco in enumerate(t.member_decorations):
                for part in deco.data.split("|") if deco.data else ():
                    self.annotations.append(self.ins("OpMemberDecorate", [ref, i, *encode_enum("Decoration", part)]))

    def const_id(self, value: IntegerAttr | FloatAttr, t: Attribute) -> _Ref:
        t = canonical_type(t)
        scalar_t = spirv.scalar_type(t)
        try:
            words = tuple(scalar_words(value, scalar_t)) if scalar_t != IntegerType(1) else (value.value.data,)
        except (ValueError, OverflowError) as e:
            raise self.fail(str(e)) from None
        key = ("const", t, words)
        if key in self.emitted:
            return _Ref(key)
        ref = _Ref(key)
        if scalar_t != t:
            if not isinstance(t, (*spirv.COOP_MATRIX_TYPES, VectorType)):
                raise self.fail(f"no splat constant of type {t}")
            elem = self.const_id(value, scalar_t)
            count = 1 if isinstance(t, spirv.COOP_MATRIX_TYPES) else t.get_shape()[0]
            tid = self.type_id(t)
            self.globals.append(self.ins("OpConstantComposite", [tid, ref, *([elem] * count)]))
        elif scalar_t == IntegerType(1):
            tid = self.type_id(t)
            self.globals.append(self.ins("OpConstantTrue" if words[0] else "OpConstantFalse", [tid, ref]))
        else:
            tid = self.type_id(t)
            self.globals.append(self.ins("OpConstant", [tid, ref, *words]))
        self.emitted.add(key)
        return ref

    def scope_id(self, scope: int) -> _Ref:
        """The <id> of the 32-bit unsigned constant holding Scope value `scope` (a memory
        operand's MakePointerAvailable/Visible parameter)."""
        t = IntegerType(32, Signedness.UNSIGNED)
        return self.const_id(IntegerAttr(scope, t), t)

    def composite_id(self, op: spirv_general.CompositeConstant) -> _Ref:
        """A non-splat OpConstantComposite, deduplicated by type and constituent ids."""
        parts = [self.value_id(c) for c in op.constituents]
        t = canonical_type(op.result.type)
        spec = isinstance(op, spirv_general.SpecConstantCompositeOp)
        key = ("speccomposite", _key(op.result)) if spec else (
            "composite", t, tuple(p.key if type(p.key) is tuple else _key(p.key) for p in parts))
        if key not in self.emitted:
            tid = self.type_id(t)
            self.globals.append(self.ins("OpSpecConstantComposite" if spec else "OpConstantComposite",
                                         [tid, _Ref(key), *parts]))
            self.emitted.add(key)
        return _Ref(key)

    def spec_constant_id(self, op: spirv_general.SpecConstantOp) -> _Ref:
        """A specialization constant: never deduplicated (each has its own SpecId)."""
        key = ("spec", _key(op.result))
        if key not in self.emitted:
            t = canonical_type(op.result.type)
            tid = self.type_id(t)
            ref = _Ref(key)
            if t == IntegerType(1):
                self.globals.append(self.ins("OpSpecConstantTrue" if op.value.value.data else "OpSpecConstantFalse",
                                             [tid, ref]))
            else:
                try:
                    words = scalar_words(op.value, t)
                except (ValueError, OverflowError) as e:
                    raise self.fail(str(e)) from None
                self.globals.append(self.ins("OpSpecConstant", [tid, ref, *words]))
            if op.spec_id is not None:
                self.annotations.append(self.ins("OpDecorate", [ref, *encode_enum("Decoration", f"SpecId({op.spec_id.data})")]))
            self.emitted.add(key)
        return _Ref(key)

    def spec_constant_operation_id(self, op: spirv_general.SpecConstantOperationOp) -> _Ref:
        """OpSpecConstantOp: never deduplicated (it may depend on specialization)."""
        key = ("specop", _key(op.result))
        if key not in self.emitted:
            args = [self.value_id(a) for a in op.args]
            tail = [x.data if isinstance(x, IntAttr) else self.type_id(x) for x in op.literals]
            tid = self.type_id(op.result.type)
            self.globals.append(self.ins("OpSpecConstantOp", [tid, _Ref(key), INSTRUCTIONS[op.opcode.data][0],
                                                              *args, *tail]))
            self.emitted.add(key)
        return _Ref(key)

    def undef_id(self, t: Attribute) -> _Ref:
        t = canonical_type(t)
        key = ("undef", t)
        if key not in self.emitted:
            tid = self.type_id(t)
            self.globals.append(self.ins("OpUndef", [tid, _Ref(key)]))
            self.emitted.add(key)
        return _Ref(key)

    # -- values ---------------------------------------------------------------------------------
    def value_id(self, v: object) -> _Ref:
        hit = self._value_refs.get(id(v))
        if hit is not None:
            return hit[1]
        if type(v) is OpResult and not _is_hoisted(type(v.owner)):
            return _Ref(v)  # the common case: the result of an instruction in a function
        ref = self._value_id(v)
        if isinstance(v, SSAValue) and isinstance(v.owner, _HOISTED):
            # constants, variables and module-level undefs: the same id at every use
            self._value_refs[id(v)] = (v, ref)
        return ref

    def _value_id(self, v: object) -> _Ref:
        if isinstance(v, Block):
            return _Ref(v)
        if isinstance(v, SSAValue):
            owner = v.owner
            if isinstance(owner, spirv.ConstantOp):
                return self.const_id(owner.value, owner.result.type)
            if isinstance(owner, spirv.AddressOfOp):
                sym = owner.variable.root_reference.data
                if sym not in self.symbols:
                    raise self.fail(f"unknown symbol @{sym}")
                return _Ref(self.symbols[sym])
            if isinstance(owner, spirv.UndefOp) and owner.parent_op() is self.module:
                return self.undef_id(owner.result.type)
            if isinstance(owner, spirv_general.CompositeConstant):
                return self.composite_id(owner)
            if isinstance(owner, spirv_general.SpecConstantOp):
                return self.spec_constant_id(owner)
            if isinstance(owner, spirv_general.SpecConstantOperationOp):
                return self.spec_constant_operation_id(owner)
            return _Ref(v)
        if isinstance(v, SymbolRefAttr):  # a function operand (CombineFunc, Func, DecodeFunc)
            return self.sym(v.root_reference.data, spirv.FuncOp)
        if isinstance(v, Attribute):
            return self.type_id(v)
        raise self.fail(f"cannot encode operand {v!r}")

    # -- module ---------------------------------------------------------------------------------
    def write(self) -> bytes:
        m = self.module
        req = derive_requirements(m)
        declared = implied_closure([c.data for c in m.capabilities])
        for cap, where in req.needs.items():
            if cap not in declared:
                raise SpirvEmitError(f"'{where}': needs capability {cap}, which spirv.module does not declare")
        missing = set(req.extensions) - {e.data for e in m.extensions}
        if missing:
            raise SpirvEmitError(f"'{m.name}': missing extension(s) {', '.join(sorted(missing))}")
        if req.memory_model != m.memory_model.data:
            raise SpirvEmitError(f"'{m.name}': cooperative matrices need memory model {req.memory_model}")

        ops = list(m.body.block.ops)
        for op in ops:
            if isinstance(op, spirv.GlobalVariableOp | spirv.FuncOp):
                name = op.sym_name.data
                if name in self.symbols:
                    raise SpirvEmitError(f"'{op.name}': duplicate symbol @{name}")
                self.symbols[name] = ("sym", name)

        # Types and constants: one canonical, placement-independent order.
        roots: dict[str, Callable[[], object]] = {}
        seen_types: dict[int, Attribute] = {}  # id -> type (kept alive, so ids are not reused)
        printed: dict[Attribute, str] = {}  # canonical type -> its root key
        for op in m.walk():
            self.where = op.name
            if isinstance(op, spirv.ConstantOp):
                t = canonical_type(op.result.type)
                st = spirv.scalar_type(t)
                try:
                    words = scalar_words(op.value, st) if st != IntegerType(1) else [op.value.value.data]
                except (ValueError, OverflowError) as e:
                    raise self.fail(str(e)) from None
                # keyed by the encoded bits, so a value that was rounded on reading sorts the same
                roots.setdefault(f"1 {t} {words}", lambda op=op: self.const_id(op.value, op.result.type))
            elif isinstance(op, spirv.UndefOp) and op.parent_op() is m:
                roots.setdefault(f"2 {canonical_type(op.result.type)}", lambda op=op: self.undef_id(op.result.type))
            elif isinstance(op, spirv_general.SpecConstantOp | spirv_general.SpecConstantOperationOp
                            | spirv_general.SpecConstantCompositeOp):
                # in IR order (each is distinct), before the composites that may use them
                roots[f"3 {len(roots):08d}"] = lambda op=op: self.value_id(op.result)
            elif isinstance(op, spirv_general.CompositeConstant):
                roots.setdefault(f"4 {self.composite_sort_key(op)}", lambda op=op: self.value_id(op.result))
            for t in _types_of(op):
                if id(t) in seen_types:
                    continue
                seen_types[id(t)] = t
                ct = canonical_type(t)
                key = printed.get(ct)
                if key is None:
                    key = printed[ct] = f"0 {ct}"
                roots.setdefault(key, lambda ct=ct: self.type_id(ct))
        for key in sorted(roots):
            roots[key]()

        entry_points: list[list[Word]] = []
        modes: list[list[Word]] = []
        functions: list[list[Word]] = []
        # variables, then entry points and modes, then functions: names and decorations come out
        # in an order that does not depend on how module-level ops are interleaved
        for op in ops:
            if isinstance(op, spirv.GlobalVariableOp):
                self.where = op.name
                self.global_variable(op)
        for op in ops:
            self.where = op.name
            if isinstance(op, spirv.GlobalVariableOp):
                pass
            elif isinstance(op, spirv.EntryPointOp):
                fn = self.sym(op.fn.root_reference.data, spirv.FuncOp)
                iface = [self.sym(s.root_reference.data, spirv.GlobalVariableOp) for s in op.interface]
                entry_points.append(self.ins("OpEntryPoint", [
                    *encode_enum("ExecutionModel", op.execution_model.data), fn,
                    *encode_string(op.entry_point_name), *iface]))
            elif isinstance(op, spirv.ExecutionModeOp):
                fn = self.sym(op.fn.root_reference.data, spirv.FuncOp)
                text = f"{op.execution_mode.data}({', '.join(str(v.data) for v in op.values)})" if op.values else op.execution_mode.data
                modes.append(self.ins("OpExecutionMode", [fn, *encode_enum("ExecutionMode", text)]))
            elif isinstance(op, spirv.ExecutionModeIdOp):
                fn = self.sym(op.fn.root_reference.data, spirv.FuncOp)
                modes.append(self.ins("OpExecutionModeId", [fn, ENUMS["ExecutionMode"][op.execution_mode.data][0],
                                                            *(self.value_id(a) for a in op.args)]))
            elif isinstance(op, spirv.FuncOp):
                functions.extend(self.function(op))
            elif isinstance(op, spirv.ConstantOp | spirv.UndefOp | spirv_general.CompositeConstant
                            | spirv_general.SpecConstantOp | spirv_general.SpecConstantOperationOp
                            | spirv_general.ExtInstImportOp | spirv_general.SourceOp):
                pass
            else:
                raise SpirvEmitError(f"'{op.name}': not allowed at spirv.module level")

        header_insts: list[list[Word]] = []
        for cap in m.capabilities:
            header_insts.append(self.ins("OpCapability", encode_enum("Capability", cap.data)))
        for ext in m.extensions:
            header_insts.append(self.ins("OpExtension", encode_string(ext.data)))
        for name in self.ext_inst_sets():
            header_insts.append(self.ins("OpExtInstImport", [_Ref(("extinst", name)), *encode_string(name)]))
        header_insts.append(self.ins("OpMemoryModel", [*encode_enum("AddressingModel", m.addressing_model.data),
                                                       *encode_enum("MemoryModel", m.memory_model.data)]))
        sources: list[list[Word]] = []
        for op in ops:
            if isinstance(op, spirv_general.SourceOp):  # debug section 7a (spec 2.4)
                sources.append(self.ins("OpSource", [*encode_enum("SourceLanguage", op.language.data), op.version.data]))
                sources += [self.ins("OpSourceExtension", encode_string(e.data)) for e in op.extensions]
        stream = [*header_insts, *entry_points, *modes, *sources, *self.names, *self.annotations, *self.globals,
                  *functions]
        return _assemble(stream, version_of(m))

    def composite_sort_key(self, op: Operation) -> str:
        """Printable, placement-independent key of a constant (its type and encoded bits)."""
        t = canonical_type(op.results[0].type)
        if isinstance(op, spirv.ConstantOp):
            st = spirv.scalar_type(t)
            return f"c({t} {scalar_words(op.value, st) if st != IntegerType(1) else [op.value.value.data]})"
        if isinstance(op, spirv_general.CompositeConstant):
            return f"cc({t} [{', '.join(self.composite_sort_key(c.owner) for c in op.constituents)}])"
        spec = [o for o in self.module.walk() if isinstance(o, spirv_general.SpecConstantOp)]
        return f"s({spec.index(op)})"

    def sym(self, name: str, kind: type) -> _Ref:
        target = self.module_symbol(name)
        if not isinstance(target, kind):
            raise self.fail(f"@{name} is not a {kind.name}")
        return _Ref(("sym", name))

    def module_symbol(self, name: str):
        for op in self.module.body.block.ops:
            if isinstance(op, spirv.GlobalVariableOp | spirv.FuncOp) and op.sym_name.data == name:
                return op
        raise self.fail(f"unknown symbol @{name}")

    def ext_inst_sets(self) -> list[str]:
        """Imported sets: the `spirv.ExtInstImport`s in IR order, then other sets that
        `spirv.ExtInst`s use, sorted."""
        listed = [op.set.data for op in self.module.body.block.ops if isinstance(op, spirv_general.ExtInstImportOp)]
        used = {op.set.data for op in self.module.walk() if isinstance(op, spirv_general.ExtInstOp)}
        return list(dict.fromkeys(listed)) + sorted(used - set(listed))

    def global_variable(self, op: spirv.GlobalVariableOp) -> None:
        ref = _Ref(("sym", op.sym_name.data))
        self.names.append(self.ins("OpName", [ref, *encode_string(op.sym_name.data)]))
        if op.descriptor_set is not None and op.binding is not None:
            self.annotations.append(self.ins("OpDecorate", [ref, *encode_enum("Decoration", f"DescriptorSet({op.descriptor_set.data})")]))
            self.annotations.append(self.ins("OpDecorate", [ref, *encode_enum("Decoration", f"Binding({op.binding.data})")]))
        if op.built_in is not None:
            self.annotations.append(self.ins("OpDecorate", [ref, ENUMS["Decoration"]["BuiltIn"][0],
                                                           *encode_enum("BuiltIn", op.built_in.data)]))
        if op.decorations is not None:
            for part in op.decorations.data.split("|"):
                self.annotations.append(self.ins("OpDecorate", [ref, *encode_enum("Decoration", part)]))
        tid = self.type_id(op.type)
        self.globals.append(self.ins("OpVariable", [tid, ref, *encode_enum("StorageClass", op.type.storage_class.data)]))

    def function(self, fn: spirv.FuncOp) -> list[list[Word]]:
        self.where = fn.name
        fref = _Ref(("sym", fn.sym_name.data))
        self.names.append(self.ins("OpName", [fref, *encode_string(fn.sym_name.data)]))
        ftype = fn.function_type
        ret = ftype.outputs.data[0] if ftype.outputs.data else spirv.VoidType()
        control = fn.function_control.data if fn.function_control else "None"
        out = [self.ins("OpFunction", [self.type_id(ret), fref, *encode_enum("FunctionControl", control),
                                       self.type_id(ftype)])]
        blocks = list(fn.body.blocks)
        decos = fn.param_decorations.data if fn.param_decorations is not None else ()
        for i, arg in enumerate(blocks[0].args):
            out.append(self.ins("OpFunctionParameter", [self.type_id(arg.type), _Ref(arg)]))
            self.name_value(arg)
            if i < len(decos) and decos[i].data:  # Aliased / Restrict on a pointer parameter
                self.annotations.append(self.ins("OpDecorate", [_Ref(arg), *encode_enum("Decoration", decos[i].data)]))
        for block in blocks:
            out.append(self.ins("OpLabel", [_Ref(block)]))
            if block is not blocks[0]:
                out.extend(self.phis(block, blocks))
            elif block.uses:
                raise SpirvEmitError(f"'{fn.name}' @{fn.sym_name.data}: the entry block cannot be a branch target")
            for op in block.ops:
                self.where = op.name
                if isinstance(op, _HOISTED_IN_FUNCTION):
                    continue
                if not isinstance(op, spirv.SpirvInstruction):
                    raise SpirvEmitError(f"'{op.name}': not a SPIR-V instruction op")
                out.append(self.instruction(op))
                for r in op.results:
                    self.name_value(r)
        out.append(self.ins("OpFunctionEnd", []))
        return out

    def name_value(self, v: SSAValue) -> None:
        if v.name_hint:
            self.names.append(self.ins("OpName", [_Ref(v), *encode_string(v.name_hint)]))

    def phis(self, block: Block, blocks: list[Block]) -> list[list[Word]]:
        incoming: list[list[tuple[SSAValue, Block]]] = [[] for _ in block.args]
        seen_from: set[Block] = set()
        for pred in blocks:
            term = pred.last_op
            if term is None:
                continue
            groups: list[tuple[Block, list[SSAValue]]] = []
            if isinstance(term, spirv.BranchOp):
                groups = [(term.target, list(term.args))]
            elif isinstance(term, spirv.BranchConditionalOp):
                groups = [(term.true_target, list(term.true_args)), (term.false_target, list(term.false_args))]
            hits = [args for target, args in groups if target is block]
            if not hits:
                continue
            if len(hits) == 2 and hits[0] != hits[1]:
                raise SpirvEmitError(f"'{term.name}': both edges to one block must pass the same arguments")
            args = hits[0]
            if len(args) != len(block.args):
                raise SpirvEmitError(f"'{term.name}': passes {len(args)} argument(s) to a block with {len(block.args)}")
            seen_from.add(pred)
            for i, a in enumerate(args):
                incoming[i].append((a, pred))
        out = []
        for arg, pairs in zip(block.args, incoming):
            if not pairs:
                raise SpirvEmitError("'spirv.func': a block with arguments has no predecessor")
            words: list[Word] = [self.type_id(arg.type), _Ref(arg)]
            for value, pred in pairs:
                words += [self.value_id(value), _Ref(pred)]
            out.append(self.ins("OpPhi", words))
            self.name_value(arg)
        return out

    def instruction(self, op: spirv.SpirvInstruction) -> list[Word]:
        opname = op.OPNAME
        layout = _RESULT_LAYOUT.get(opname)
        if layout is None:
            layout = _RESULT_LAYOUT[opname] = has_result(opname)
        has_type, has_id = layout
        words: list[Word] = []
        if len(op.results) != int(has_id):
            raise SpirvEmitError(f"'{op.name}': wrong number of results for {op.OPNAME}")
        if has_type:
            words.append(self.type_id(op.results[0].type))
        if has_id:
            words.append(_Ref(op.results[0]))
        try:
            if isinstance(op, spirv_general.ExtInstOp):
                return [INSTRUCTIONS[opname][0], *words, _Ref(("extinst", op.set.data)), op.instruction.data,
                        *(self.value_id(a) for a in op.arguments)]
            if isinstance(op, TENSOR_MEMORY_OPS):
                return [INSTRUCTIONS[op.OPNAME][0], *words, *encode_tensor_memory(op, self.value_id)]
            items = op.spirv_operands()
            if _ids_only(opname, items):
                words += [self.value_id(item) for item in items]
            else:
                words += encode_operands(opname, items, self.value_id,  # type: ignore[arg-type]
                                         self.scope_id)
        except (ValueError, Exception) as e:
            if isinstance(e, SpirvEmitError):
                raise
            raise SpirvEmitError(f"'{op.name}': {e}") from None
        return [INSTRUCTIONS[op.OPNAME][0], *words]


_RESULT_LAYOUT: dict[str, tuple[bool, bool]] = {}
_HOISTED = (spirv.ConstantOp, spirv.AddressOfOp, spirv.UndefOp, spirv_general.CompositeConstant,
            spirv_general.SpecConstantOp, spirv_general.SpecConstantOperationOp)
# emitted with the module's constants or variables, never in place (a function-level Undef is)
_HOISTED_IN_FUNCTION = (spirv.ConstantOp, spirv.AddressOfOp, spirv_general.CompositeConstant,
                        spirv_general.SpecConstantOp, spirv_general.SpecConstantOperationOp)
_HOISTED_TYPES: dict[type, bool] = {}


def _is_hoisted(cls: type) -> bool:
    hoisted = _HOISTED_TYPES.get(cls)
    if hoisted is None:
        hoisted = _HOISTED_TYPES[cls] = issubclass(cls, _HOISTED)
    return hoisted


_IDS_ONLY: dict[tuple[str, int], bool] = {}


def _ids_only(opname: str, items: list[object]) -> bool:
    """Whether `encode_operands(opname, items, id_of)` is just `[id_of(i) for i in items]`: all
    items are `<id>` operands (no literal, string or enum), and the grammar takes that many ids.
    Which branch `encode_operands` takes depends only on that, so the answer is cached per
    (instruction, operand count) after one dry run; anything else goes through the encoder."""
    for item in items:
        if isinstance(item, int | str | tuple):
            return False
    key = (opname, len(items))
    ok = _IDS_ONLY.get(key)
    if ok is None:
        try:
            out = encode_operands(opname, items, lambda item: item)
            ok = len(out) == len(items) and all(a is b for a, b in zip(out, items))
        except ValueError:
            ok = False
        _IDS_ONLY[key] = ok
    return ok


def _types_of(op) -> list[Attribute]:
    if isinstance(op, _HOISTED_IN_FUNCTION):
        return []  # their types are emitted with the constant / variable
    types = list(_op_types(op))
    types += [o.type for o in op.operands if not isinstance(o.owner, spirv.AddressOfOp)]
    if isinstance(op, spirv.FuncOp):
        types += [op.function_type]
        if not op.function_type.outputs.data:
            types.append(spirv.VoidType())
    return types


def _assemble(stream: list[list[Word]], version: tuple[int, int]) -> bytes:
    numbers: dict[object, int] = {}
    by_ref: dict[int, int] = {}  # id(_Ref) -> number (the refs live in `stream` meanwhile)
    words: list[int] = []
    for inst in stream:
        opcode, *operands = inst
        encoded = []
        for w in operands:
            if type(w) is _Ref:
                n = by_ref.get(id(w))
                if n is None:
                    k = w.key
                    if type(k) is not tuple:
                        k = _key(k)
                    n = numbers.get(k)
                    if n is None:
                        n = numbers[k] = len(numbers) + 1
                    by_ref[id(w)] = n
                encoded.append(n)
            else:
                encoded.append(w)
        count = 1 + len(encoded)
        if count > 0xFFFF:
            raise SpirvEmitError("instruction too long")
        words.append((count << 16) | opcode)  # type: ignore[operator]
        words.extend(encoded)
    header = [MAGIC_NUMBER, (version[0] << 16) | (version[1] << 8), GENERATOR_MAGIC, len(numbers) + 1, 0]
    return struct.pack(f"<{len(header) + len(words)}I", *header, *words)


def _key(k: object) -> object:
    # SSA values and blocks compare by identity; attribute keys by value
    return ("obj", id(k)) if isinstance(k, SSAValue | Block) else k


_CALLER_VERIFIED: ContextVar[bool] = ContextVar("coopdialect_spirv_caller_verified", default=False)


@contextmanager
def verified_by_caller() -> Iterator[None]:
    """Within this block `serialize` does not verify the module again: for a driver that has just
    verified the whole IR (coop-opt verifies after its last pass) and changes nothing before
    emitting it."""
    token = _CALLER_VERIFIED.set(True)
    try:
        yield
    finally:
        _CALLER_VERIFIED.reset(token)


def serialize(module: spirv.ModuleOp) -> bytes:
    """Encode a verified `spirv.module` as a SPIR-V binary (little-endian 32-bit words).

    Verifies the module first (except inside `verified_by_caller()`). Raises SpirvEmitError (one
    line, naming the op) for anything that cannot be written as a valid module: a missing
    capability/extension, an unknown symbol, a type without encoding, operands that do not fit
    the grammar, a non-SPIR-V op."""
    if not _CALLER_VERIFIED.get():
        module.verify()
    return _Writer(module).write()
