"""SPIR-V binary reader: bytes -> `spirv.module` (the inverse of `writer.serialize`).

Ids become SSA values or symbols, OpType* become type attributes (with their ArrayStride, Block
and Offset decorations folded in), DescriptorSet/Binding/BuiltIn fold into
`spirv.GlobalVariable`, OpPhi become block arguments, and uses of global variables inside a
function become `spirv.mlir.addressof` ops at the start of its entry block. Instruction operands
are decoded with the grammar tables (SPIR-V spec 2.3, 2.4).
"""

from __future__ import annotations

import struct

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FileLineColLoc,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    UnknownLoc,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects import spirv, spirv_dialect, spirv_general, spirv_nv2
from coopdialect.spirv.encoding import decode_enum, decode_operands, decode_string, enumerant_name, has_result
from coopdialect.spirv.errors import SpirvReadError
from coopdialect.spirv.grammar_tables import ENUMS, MAGIC_NUMBER, OPCODE_NAMES
from coopdialect.spirv.requirements import derive_requirements, implied_closure, version_of
from coopdialect.spirv.tensor_operands import TENSOR_MEMORY_OPS, decode_tensor_memory

# debug instructions dropped on reading (OpSource / OpSourceExtension are kept as spirv.Source)
# extended instruction sets a module may import (others are unknown to the validators, too)
_EXT_INST_SETS = {"GLSL.std.450"}
_IGNORED = {"OpString", "OpModuleProcessed", "OpMemberName", "OpLine", "OpNoLine"}
_FLOATS = {16: Float16Type, 32: Float32Type, 64: Float64Type}
_TYPE_DECORATIONS = {"ArrayStride", "Block", "Offset"}
_VAR_DECORATIONS = {"DescriptorSet", "Binding", "BuiltIn"}
_PARAM_DECORATIONS = {"Aliased", "Restrict"}  # on PhysicalStorageBuffer pointer parameters
# kept in spirv.GlobalVariable's `decorations` / a struct's member decorations (glslang: readonly ...)
_ACCESS_DECORATIONS = {"NonWritable", "NonReadable", "Coherent", "Volatile", "Restrict", "Aliased"}


class _Inst:
    __slots__ = ("offset", "opname", "words")

    def __init__(self, offset: int, opname: str, words: list[int]):
        self.offset = offset
        self.opname = opname
        self.words = words


class _Reader:
    def __init__(self, words: list[int], file: str = "<binary>"):
        self.words = words
        self.types: dict[int, Attribute] = {}
        self.values: dict[int, SSAValue] = {}
        self.const_ints: dict[int, int] = {}
        self.const_bools: dict[int, bool] = {}
        self.names: dict[int, str] = {}
        self.decorations: dict[int, list[tuple[str, list[int]]]] = {}
        self.member_offsets: dict[int, dict[int, int]] = {}
        self.member_decos: dict[int, dict[int, list[str]]] = {}
        self.ext_sets: dict[int, str] = {}
        self.source: spirv_general.SourceOp | None = None
        self.globals: dict[int, str] = {}
        self.functions: dict[int, str] = {}
        self.symbols: set[str] = set()
        self.entry_names: dict[int, str] = {}  # function id -> its (first) OpEntryPoint Name
        self.forward_pointers: set[int] = set()  # OpTypeForwardPointer ids not yet defined
        self.offset = 0
        self.file = StringAttr(file)

    def at(self, op: Operation, offset: int | None = None) -> Operation:
        """Stamp `op` with the location of its instruction: `file:0:W`, W its word offset."""
        op.location = FileLineColLoc(self.file, IntAttr(0), IntAttr(self.offset if offset is None else offset))
        return op

    def err(self, msg: str, offset: int | None = None) -> SpirvReadError:
        return SpirvReadError(msg, self.offset if offset is None else offset)

    # -- instruction stream ----------------------------------------------------------------------
    def split(self) -> list[_Inst]:
        out = []
        pos = 5
        n = len(self.words)
        while pos < n:
            first = self.words[pos]
            count, opcode = first >> 16, first & 0xFFFF
            if count == 0:
                raise self.err("instruction word count is 0", pos)
            if pos + count > n:
                raise self.err(f"instruction of {count} words runs past the end ({n} words)", pos)
            name = OPCODE_NAMES.get(opcode)
            if name is None:
                raise self.err(f"unknown opcode {opcode}", pos)
            out.append(_Inst(pos, name, self.words[pos + 1 : pos + count]))
            pos += count
        return out

    def sym_name(self, id_: int, fallback: str) -> str:
        base = self.names.get(id_) or fallback  # glslang names anonymous blocks ""
        name, k = base, 1
        while name in self.symbols:
            name = f"{base}_{k}"
            k += 1
        self.symbols.add(name)
        return name

    def type(self, id_: int) -> Attribute:
        t = self.types.get(id_)
        if t is None:
            if id_ in self.forward_pointers:
                raise self.err(f"id {id_} is a forward-declared pointer used before its OpTypePointer "
                               "(recursive pointer types are not supported)")
            raise self.err(f"id {id_} is not a type")
        return t

    def value_type(self, id_: int) -> Attribute:
        """The Result Type of a value: any type but a function type (SPIR-V 2.2.2: a function
        type only types an OpFunction)."""
        t = self.type(id_)
        if isinstance(t, FunctionType):
            raise self.err(f"id {id_} is a function type, which no value may have")
        return t

    def const_int(self, id_: int) -> int:
        if id_ not in self.const_ints:
            raise self.err(f"id {id_} is not an integer constant")
        return self.const_ints[id_]

    def dimension(self, id_: int) -> int:
        """A cooperative matrix type's Scope/Rows/Columns/Use: an integer constant, or a scalar
        specialization constant — read as its default value (types here hold literals, so the
        rewrite has the default where the binary had the specialization constant)."""
        v = self.values.get(id_)
        if id_ not in self.const_ints and v is not None and isinstance(v.owner, spirv_general.SpecConstantOp) \
                and isinstance(v.type, IntegerType) and v.type.width.data == 32:
            return v.owner.value.value.data
        return self.const_int(id_)

    def enum_name(self, kind: str, value: int) -> str:
        name = enumerant_name(kind, value)
        if name is None:
            raise self.err(f"unknown {kind} value {value}")
        return name

    # -- module ------------------------------------------------------------------------------------
    def read(self) -> spirv.ModuleOp:
        w = self.words
        if len(w) < 5:
            raise SpirvReadError(f"truncated header ({len(w)} words, need 5)", len(w))
        if w[0] != MAGIC_NUMBER:
            raise SpirvReadError(f"bad magic number 0x{w[0]:08x}", 0)
        major, minor = (w[1] >> 16) & 0xFF, (w[1] >> 8) & 0xFF
        if major != 1 or minor > 6 or w[1] & 0xFF0000FF:
            raise SpirvReadError(f"unsupported SPIR-V version word 0x{w[1]:08x}", 1)
        insts = self.split()
        caps: list[str] = []
        exts: list[str] = []
        memory = ("Logical", "Vulkan")
        has_memory_model = False
        module_ops: list[Operation] = []
        entry_ops: list[tuple[_Inst, list]] = []
        mode_ops: list[_Inst] = []
        i = 0
        while i < len(insts):
            inst = insts[i]
            self.offset = inst.offset
            op, ws = inst.opname, inst.words
            try:
                if op in _IGNORED:
                    pass
                elif op == "OpSource":
                    if len(ws) != 2 or self.source is not None:
                        raise ValueError("only one OpSource without file or source text is supported")
                    self.source = spirv_general.SourceOp(self.enum_name("SourceLanguage", ws[0]), ws[1])
                    module_ops.append(self.source)
                elif op == "OpSourceExtension":
                    if self.source is None:
                        raise ValueError("OpSourceExtension before OpSource is not supported")
                    self.source.extensions = ArrayAttr([*self.source.extensions, StringAttr(self.string(ws))])
                elif op == "OpExtInstImport":
                    if not ws:
                        raise ValueError("missing result id")
                    self.ext_sets[ws[0]] = self.string(ws[1:])
                    if self.ext_sets[ws[0]] not in _EXT_INST_SETS:
                        raise ValueError(f"extended instruction set '{self.ext_sets[ws[0]]}' is not supported")
                    module_ops.append(spirv_general.ExtInstImportOp(self.ext_sets[ws[0]]))
                elif op == "OpCapability":
                    caps.append(self.enum_name("Capability", self.one(ws)))
                elif op == "OpExtension":
                    exts.append(self.string(ws))
                elif op == "OpMemoryModel":
                    if has_memory_model:
                        raise ValueError("a module has exactly one OpMemoryModel (SPIR-V 2.4)")
                    has_memory_model = True
                    memory_model_at = inst.offset
                    self.count(ws, 2)
                    memory = (self.enum_name("AddressingModel", ws[0]), self.enum_name("MemoryModel", ws[1]))
                elif op == "OpEntryPoint":
                    if len(ws) < 3:
                        raise ValueError("missing operands")
                    self.entry_names.setdefault(ws[1], decode_string(ws, 2)[0])
                    entry_ops.append((inst, []))
                elif op in ("OpExecutionMode", "OpExecutionModeId"):
                    mode_ops.append(inst)
                elif op == "OpTypeForwardPointer":
                    # the pointer type follows as an OpTypePointer; types are structural here
                    self.count(ws, 2)
                    self.enum_name("StorageClass", ws[1])
                    self.forward_pointers.add(ws[0])
                elif op == "OpName":
                    if not ws:
                        raise ValueError("missing target")
                    self.names[ws[0]] = self.string(ws[1:])
                elif op == "OpDecorate":
                    self.decorate(ws)
                elif op == "OpMemberDecorate":
                    self.member_decorate(ws)
                elif op.startswith("OpType"):
                    self.read_type(op, ws)
                elif op in ("OpConstant", "OpConstantTrue", "OpConstantFalse", "OpConstantComposite"):
                    module_ops.append(self.constant(op, ws))
                elif op in ("OpSpecConstant", "OpSpecConstantTrue", "OpSpecConstantFalse"):
                    module_ops.append(self.spec_constant(op, ws))
                elif op == "OpSpecConstantComposite":
                    module_ops.append(self.constant(op, ws))
                elif op == "OpSpecConstantOp":
                    module_ops.append(self.spec_constant_op(ws))
                elif op == "OpVariable":
                    module_ops.append(self.global_variable(ws))
                elif op == "OpUndef":
                    self.count(ws, 2)
                    u = spirv.UndefOp(self.value_type(ws[0]))
                    self.define(ws[1], u.result)
                    module_ops.append(u)
                elif op == "OpFunction":
                    end = next((j for j in range(i, len(insts)) if insts[j].opname == "OpFunctionEnd"), None)
                    if end is None:
                        raise ValueError("OpFunction without OpFunctionEnd")
                    self.declare_function(inst)
                    module_ops.append(("function", insts[i:end]))  # type: ignore[arg-type]
                    i = end
                else:
                    raise ValueError(f"{op} is not supported at module level")
            except SpirvReadError:
                raise
            except (ValueError, KeyError, IndexError, TypeError, struct.error, VerifyException) as e:
                raise self.err(f"{op}: {_one_line(e)}") from None
            if module_ops and not isinstance(module_ops[-1], tuple) and module_ops[-1].location == UnknownLoc():
                self.at(module_ops[-1])
            i += 1
        self.offset = len(w)
        if not has_memory_model:
            raise self.err("missing OpMemoryModel (a module has exactly one, SPIR-V 2.4)")
        if not entry_ops and "Linkage" not in caps:
            raise self.err("no OpEntryPoint (only a module with the Linkage capability may have none, SPIR-V 2.4)")
        body: list[Operation] = []
        functions = []
        for item in module_ops:
            if isinstance(item, tuple):
                functions.append(item[1])
            else:
                body.append(item)
        for inst, _ in entry_ops:
            self.offset = inst.offset
            body.append(self.at(self.entry_point(inst.words)))
        for inst in mode_ops:
            self.offset = inst.offset
            body.append(self.at(self.execution_mode(inst.words, inst.opname == "OpExecutionModeId")))
        for finsts in functions:
            body.append(self.function(finsts))
        version = f"{major}.{minor}"
        module = spirv.ModuleOp(body, memory[0], memory[1], caps, exts, version)
        # what the module as a whole needs (its addressing and memory model) is located there
        return self.at(module, memory_model_at)

    @staticmethod
    def count(ws: list[int], n: int) -> None:
        if len(ws) != n:
            raise ValueError(f"expected {n} operand word(s), got {len(ws)}")

    def one(self, ws: list[int]) -> int:
        self.count(ws, 1)
        return ws[0]

    @staticmethod
    def string(ws: list[int]) -> str:
        s, n = decode_string(ws, 0)
        if n != len(ws):
            raise ValueError("extra words after string")
        return s

    def decorate(self, ws: list[int]) -> None:
        if len(ws) < 2:
            raise ValueError("missing operands")
        name = self.enum_name("Decoration", ws[1])
        if name not in _TYPE_DECORATIONS | _VAR_DECORATIONS | _PARAM_DECORATIONS | _ACCESS_DECORATIONS | {"SpecId"}:
            raise ValueError(f"decoration {name} is not supported")
        params = ws[2:]
        expected = 1 if name not in {"Block"} | _PARAM_DECORATIONS | _ACCESS_DECORATIONS else 0
        if len(params) != expected:
            raise ValueError(f"decoration {name} expects {expected} operand(s)")
        self.decorations.setdefault(ws[0], []).append((name, params))

    def member_decorate(self, ws: list[int]) -> None:
        if len(ws) < 3:
            raise ValueError("missing operands")
        name = self.enum_name("Decoration", ws[2])
        if name in _ACCESS_DECORATIONS and len(ws) == 3:
            self.member_decos.setdefault(ws[0], {}).setdefault(ws[1], []).append(name)
            return
        if name != "Offset" or len(ws) != 4:
            raise ValueError(f"member decoration {name} is not supported")
        self.member_offsets.setdefault(ws[0], {})[ws[1]] = ws[3]

    def deco(self, id_: int, name: str) -> list[int] | None:
        for n, params in self.decorations.get(id_, ()):
            if n == name:
                return params
        return None

    def read_type(self, op: str, ws: list[int]) -> None:
        if not ws:
            raise ValueError("missing result id")
        rid, a = ws[0], ws[1:]
        if rid in self.types or rid in self.values:
            raise ValueError(f"id {rid} defined twice")
        if op != "OpTypePointer" and rid in self.forward_pointers:
            raise ValueError(f"id {rid} was forward-declared as a pointer")
        t: Attribute
        if op == "OpTypeVoid":
            self.count(a, 0)
            t = spirv.VoidType()
        elif op == "OpTypeBool":
            self.count(a, 0)
            t = IntegerType(1)
        elif op == "OpTypeInt":
            self.count(a, 2)
            if a[0] not in (8, 16, 32, 64) or a[1] not in (0, 1):
                raise ValueError(f"OpTypeInt needs a width of 8, 16, 32 or 64 and a Signedness of 0 or 1, got {a}")
            t = IntegerType(a[0], Signedness.SIGNED if a[1] else Signedness.SIGNLESS)
        elif op == "OpTypeFloat":
            if len(a) == 2 and a[0] == 16 and a[1] == ENUMS["FPEncoding"]["BFloat16KHR"][0]:
                t = BFloat16Type()  # SPV_KHR_bfloat16
            elif len(a) != 1:
                raise ValueError("of the floating-point encodings only BFloat16KHR (16 bits) is supported")
            elif a[0] not in _FLOATS:
                raise ValueError(f"float width {a[0]} is not supported")
            else:
                t = _FLOATS[a[0]]()
        elif op == "OpTypeVector":
            self.count(a, 2)
            if a[1] not in (2, 3, 4, 8, 16):
                raise ValueError(f"a vector has 2, 3, 4, 8 or 16 components, not {a[1]}")
            t = VectorType(self.type(a[0]), [a[1]])
        elif op == "OpTypePointer":
            self.count(a, 2)
            t = spirv.PointerType(self.type(a[1]), self.enum_name("StorageClass", a[0]))
            if rid in self.forward_pointers:
                self.forward_pointers.discard(rid)
                # OpTypeForwardPointer's storage class must match (SPIR-V 3.42.6)
        elif op == "OpTypeRuntimeArray":
            self.count(a, 1)
            stride = self.deco(rid, "ArrayStride")
            t = spirv.RuntimeArrayType(self.type(a[0]), stride[0] if stride else 0)
        elif op == "OpTypeArray":
            self.count(a, 2)
            if a[1] in self.values and a[1] not in self.const_ints:
                raise ValueError("an array whose Length is a specialization constant is not supported "
                                 "(array types here have a literal length)")
            stride = self.deco(rid, "ArrayStride")
            t = spirv.ArrayType(self.const_int(a[1]), self.type(a[0]), stride[0] if stride else 0)
        elif op == "OpTypeStruct":
            offs = self.member_offsets.get(rid, {})
            decos = self.member_decos.get(rid, {})
            t = spirv.StructType([self.type(m) for m in a], [offs.get(k, -1) for k in range(len(a))],
                                 self.deco(rid, "Block") is not None,
                                 ["|".join(decos.get(k, ())) for k in range(len(a))])
        elif op == "OpTypeCooperativeMatrixKHR":
            self.count(a, 5)
            t = spirv.CooperativeMatrixType(self.dimension(a[2]), self.dimension(a[3]), self.type(a[0]),
                                            self.enum_name("Scope", self.dimension(a[1])),
                                            self.enum_name("CooperativeMatrixUse", self.dimension(a[4])))
        elif op == "OpTypeCooperativeMatrixNV":
            self.count(a, 4)
            t = spirv.NVCooperativeMatrixType(self.dimension(a[2]), self.dimension(a[3]), self.type(a[0]),
                                              self.enum_name("Scope", self.dimension(a[1])))
        elif op == "OpTypeTensorLayoutNV":
            self.count(a, 2)
            t = spirv_nv2.TensorLayoutType(self.const_int(a[0]),
                                           self.enum_name("TensorClampMode", self.const_int(a[1])))
        elif op == "OpTypeTensorViewNV":
            if len(a) < 2:
                raise ValueError("missing Dim/HasDimensions")
            if a[1] not in self.const_bools:
                raise ValueError(f"HasDimensions id {a[1]} is not a boolean constant")
            t = spirv_nv2.TensorViewType(self.const_int(a[0]), self.const_bools[a[1]],
                                         [self.const_int(p) for p in a[2:]])
        elif op == "OpTypeFunction":
            if not a:
                raise ValueError("missing return type")
            ret = self.type(a[0])
            t = FunctionType.from_lists([self.type(p) for p in a[1:]], [] if isinstance(ret, spirv.VoidType) else [ret])
        else:
            raise ValueError(f"{op} is not supported")
        self.types[rid] = t

    def constant(self, op: str, ws: list[int]) -> spirv.ConstantOp:
        if len(ws) < 2:
            raise ValueError("missing result type/id")
        t, rid, a = self.value_type(ws[0]), ws[1], ws[2:]
        if op in ("OpConstantTrue", "OpConstantFalse"):
            self.count(a, 0)
            c = spirv.ConstantOp(op == "OpConstantTrue", t)
            self.const_bools[rid] = op == "OpConstantTrue"
        elif op == "OpConstant":
            if isinstance(t, IntegerType):
                width = t.width.data
                self.count(a, 1 if width <= 32 else 2)
                raw = a[0] | (a[1] << 32 if width > 32 else 0)
                if t.signedness.data == Signedness.SIGNED and raw >> (width - 1):
                    raw -= 1 << width  # signed types hold their negative values as such
                c = spirv.ConstantOp(raw, t)
                self.const_ints[rid] = raw
            elif isinstance(t, BFloat16Type):
                self.count(a, 1)
                value = float(np.array(a[0] & 0xFFFF, dtype=np.uint16).view(ml_dtypes.bfloat16))
                c = spirv.ConstantOp(value, t)
            elif isinstance(t, Float16Type | Float32Type | Float64Type):
                width = t.bitwidth
                self.count(a, 1 if width <= 32 else 2)
                raw = a[0] | (a[1] << 32 if width > 32 else 0)
                fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
                value = struct.unpack(fmt, raw.to_bytes(width // 8, "little"))[0]
                c = spirv.ConstantOp(value, t)
            else:
                raise ValueError(f"constant of type {t} is not supported")
        else:
            parts = [self.values.get(x) for x in a]
            if not parts or any(p is None or not isinstance(p.owner, spirv_general.CONSTANT_OPS) for p in parts):
                raise ValueError("composite constant constituents must be constants")
            if op == "OpSpecConstantComposite":
                c = spirv_general.SpecConstantCompositeOp(parts, t)  # type: ignore[arg-type]
                self.define(rid, c.result)
                return c
            if len({id(p) for p in parts}) != 1 or not isinstance(parts[0].owner, spirv.ConstantOp):
                c = spirv_general.ConstantCompositeOp(parts, t)  # type: ignore[arg-type]
                if rid in self.values or rid in self.types:
                    raise ValueError(f"id {rid} defined twice")
                self.values[rid] = c.result
                return c
            scalar = parts[0].owner
            expected = 1 if isinstance(t, spirv.COOP_MATRIX_TYPES) else (
                t.get_shape()[0] if isinstance(t, VectorType) else -1)
            if len(parts) != expected or scalar.result.type != spirv.scalar_type(t):
                raise ValueError(f"composite constant does not fit {t}")
            c = spirv.ConstantOp(scalar.value.value.data, t)
        if rid in self.values or rid in self.types:
            raise ValueError(f"id {rid} defined twice")
        self.values[rid] = c.result
        return c

    def spec_constant(self, op: str, ws: list[int]) -> spirv_general.SpecConstantOp:
        """OpSpecConstant{,True,False}: a scalar default value and its SpecId."""
        if len(ws) < 2:
            raise ValueError("missing result type/id")
        t, rid, a = self.value_type(ws[0]), ws[1], ws[2:]
        if op == "OpSpecConstant":
            if not isinstance(t, IntegerType | Float16Type | Float32Type | Float64Type) or t == IntegerType(1):
                raise ValueError(f"specialization constant of type {t} is not supported")
            width = t.width.data if isinstance(t, IntegerType) else t.bitwidth
            self.count(a, 1 if width <= 32 else 2)
            raw = a[0] | (a[1] << 32 if width > 32 else 0)
            if isinstance(t, IntegerType):
                if t.signedness.data == Signedness.SIGNED and raw >> (width - 1):
                    raw -= 1 << width
                value: int | float = raw
            else:
                value = struct.unpack({16: "<e", 32: "<f", 64: "<d"}[width], raw.to_bytes(width // 8, "little"))[0]
        else:
            self.count(a, 0)
            value = op == "OpSpecConstantTrue"
        sid = self.deco(rid, "SpecId")
        c = spirv_general.SpecConstantOp(value, t, sid[0] if sid else None)
        if rid in self.values or rid in self.types:
            raise ValueError(f"id {rid} defined twice")
        self.values[rid] = c.result
        return c

    def global_variable(self, ws: list[int]) -> spirv.GlobalVariableOp:
        if len(ws) != 3:
            raise ValueError("initializers are not supported" if len(ws) > 3 else "missing operands")
        t, rid = self.type(ws[0]), ws[1]
        if not isinstance(t, spirv.PointerType):
            raise ValueError("variable type is not a pointer")
        if self.enum_name("StorageClass", ws[2]) != t.storage_class.data:
            raise ValueError("storage class differs from the pointer type's")
        name = self.sym_name(rid, f"var{rid}")
        ds, bd, bi = self.deco(rid, "DescriptorSet"), self.deco(rid, "Binding"), self.deco(rid, "BuiltIn")
        built_in = self.enum_name("BuiltIn", bi[0]) if bi else None
        extra = "|".join(n for n, _ in self.decorations.get(rid, ()) if n in _ACCESS_DECORATIONS)
        self.globals[rid] = name
        return spirv.GlobalVariableOp(name, t, ds[0] if ds else None, bd[0] if bd else None, built_in,
                                      extra or None)

    def declare_function(self, inst: _Inst) -> None:
        ws = inst.words
        self.count(ws, 4)
        if ws[1] in self.functions or ws[1] in self.values or ws[1] in self.types:
            raise ValueError(f"id {ws[1]} defined twice")
        # a function without OpName takes its entry point's name
        self.functions[ws[1]] = self.sym_name(ws[1], self.entry_names.get(ws[1]) or f"fn{ws[1]}")

    def entry_point(self, ws: list[int]) -> spirv.EntryPointOp:
        try:
            model = self.enum_name("ExecutionModel", ws[0])
            fn = self.functions[ws[1]]
            name, n = decode_string(ws, 2)
            iface = [self.globals[x] for x in ws[2 + n :]]
        except (KeyError, IndexError, ValueError) as e:
            raise self.err(f"OpEntryPoint: bad operand {e}") from None
        return spirv.EntryPointOp(model, fn, iface, name)

    def execution_mode(self, ws: list[int], with_ids: bool = False) -> spirv.ExecutionModeOp | spirv.ExecutionModeIdOp:
        opname = "OpExecutionModeId" if with_ids else "OpExecutionMode"
        try:
            fn = self.functions[ws[0]]
            if with_ids:  # OpExecutionModeId: the mode's parameters are <id>s of constants
                name = self.enum_name("ExecutionMode", ws[1])
                params = ENUMS["ExecutionMode"][name][3]
                if len(ws) != 2 + len(params) or any(k != "IdRef" for k, _ in params):
                    raise ValueError(f"ExecutionMode {name} does not take {len(ws) - 2} <id> operand(s)")
                args = []
                for w in ws[2:]:
                    if w not in self.values:
                        raise ValueError(f"id {w} is not a constant")
                    args.append(self.values[w])
                return spirv.ExecutionModeIdOp(fn, name, args)
            text, n = decode_enum("ExecutionMode", ws, 1)
            if 1 + n != len(ws):
                raise ValueError("extra operand words")
        except (KeyError, IndexError, ValueError) as e:
            raise self.err(f"{opname}: bad operand {_one_line(e)}") from None
        name, _, rest = text.partition("(")
        values = [int(v) for v in rest.rstrip(")").split(",") if v.strip()]
        return spirv.ExecutionModeOp(fn, name, values)

    def spec_constant_op(self, ws: list[int]) -> spirv_general.SpecConstantOperationOp:
        """OpSpecConstantOp: the computed instruction's operands, decoded with its grammar."""
        if len(ws) < 3:
            raise ValueError("missing result type/id/opcode")
        t, rid, opcode = self.type(ws[0]), ws[1], ws[2]
        opname = OPCODE_NAMES.get(opcode)
        if opname is None:
            raise ValueError(f"unknown opcode {opcode}")
        args: list[SSAValue] = []
        lits: list[Attribute] = []
        for kind, v in decode_operands(opname, ws[3:]):
            if kind == "id" and v in self.types and not args:
                lits.append(self.types[v])  # the type <id> of OpCooperativeMatrixLength*
            elif kind == "id":
                if lits:
                    raise ValueError(f"{opname}: <id> operand after a literal")
                if v not in self.values:
                    raise ValueError(f"id {v} is not a constant")
                args.append(self.values[v])
            elif kind == "lit":
                lits.append(IntAttr(v))
            else:
                raise ValueError(f"{opname}: operand kind {kind} is not supported")
        c = spirv_general.SpecConstantOperationOp(opname, args, lits, t)
        self.define(rid, c.result)
        return c

    def define(self, rid: int, v: SSAValue) -> None:
        if rid in self.values or rid in self.types or rid in self.functions or rid in self.forward_pointers:
            raise ValueError(f"id {rid} defined twice")
        self.values[rid] = v

    # -- functions ---------------------------------------------------------------------------------
    def function(self, insts: list[_Inst]) -> spirv.FuncOp:
        head = insts[0]
        self.offset = head.offset
        ret_t, fid, control_w, ftid = head.words
        ftype = self.type(ftid)
        if not isinstance(ftype, FunctionType):
            raise self.err("OpFunction type is not a function type")
        control, _ = decode_enum("FunctionControl", [control_w], 0)
        params: list[_Inst] = []
        k = 1
        while k < len(insts) and insts[k].opname == "OpFunctionParameter":
            params.append(insts[k])
            k += 1
        if len(params) != len(ftype.inputs):
            raise self.err("parameter count does not match the function type")
        # group into blocks
        blocks: list[tuple[_Inst, list[_Inst]]] = []
        for inst in insts[k:]:
            if inst.opname == "OpLabel":
                blocks.append((inst, []))
            elif not blocks:
                self.offset = inst.offset
                raise self.err(f"{inst.opname} outside a block")
            else:
                blocks[-1][1].append(inst)
        if not blocks:
            raise self.err("function without a body")
        block_of: dict[int, Block] = {}
        phis: dict[int, list[tuple[int, list[int]]]] = {}
        xblocks = []
        for bi, (label, body) in enumerate(blocks):
            self.offset = label.offset
            lid = self.one(label.words) if len(label.words) == 1 else None
            if lid is None:
                raise self.err("OpLabel needs one operand")
            if bi == 0:
                block = Block(arg_types=list(ftype.inputs))
                for p, arg in zip(params, block.args):
                    self.offset = p.offset
                    self.count(p.words, 2)
                    self.values[p.words[1]] = arg
                    self.hint(arg, p.words[1])
            else:
                block = Block()
                for inst in body:
                    if inst.opname != "OpPhi":
                        break
                    self.offset = inst.offset
                    ws = inst.words
                    if len(ws) < 4 or len(ws) % 2:
                        raise self.err("OpPhi: wrong operand count")
                    arg = block.insert_arg(self.value_type(ws[0]), len(block.args))
                    self.values[ws[1]] = arg
                    self.hint(arg, ws[1])
                    phis.setdefault(lid, []).append((ws[1], ws[2:]))
            block_of[lid] = block
            xblocks.append(block)
        region = Region(xblocks)
        fn = spirv.FuncOp(self.functions[fid], ftype, region,
                          None if control == "None" else control)
        self.at(fn, head.offset)
        decos = [next((n for n, _ in self.decorations.get(p.words[1] if len(p.words) > 1 else -1, ()) if n in _PARAM_DECORATIONS), "")
                 for p in params]
        if any(decos):
            from xdsl.dialects.builtin import ArrayAttr, StringAttr

            fn.properties["param_decorations"] = ArrayAttr(StringAttr(d) for d in decos)
        if self.type(ret_t) != (ftype.outputs.data[0] if ftype.outputs.data else spirv.VoidType()):
            raise self.err("OpFunction result type does not match the function type")
        addr: dict[int, SSAValue] = {}
        entry = xblocks[0]

        def value(id_: int) -> SSAValue:
            if id_ in self.values:
                return self.values[id_]
            if id_ in self.globals:
                if id_ not in addr:
                    var = self.globals[id_]
                    vt = next(op.type for op in self._global_ops if op.sym_name.data == var)
                    a = spirv.AddressOfOp(var, vt)
                    if len(addr) == 0:
                        entry.insert_op_before(a, entry.first_op) if entry.first_op else entry.add_op(a)
                    else:
                        list(addr.values())[-1].owner.parent_block().insert_op_after(a, list(addr.values())[-1].owner)
                    addr[id_] = a.pointer
                return addr[id_]
            raise self.err(f"undefined id {id_}")

        def operand(kind: str, v: object) -> object:
            if kind == "id":
                assert isinstance(v, int)
                if v in block_of:
                    return block_of[v]
                if v in self.types:
                    return self.types[v]
                if v in self.functions:  # a function operand (CombineFunc, Func, DecodeFunc)
                    return SymbolRefAttr(self.functions[v])
                return value(v)
            if kind == "enum":
                k, text = v  # type: ignore[misc]
                return ("enum", k, text)
            if kind == "lit":
                return v
            raise self.err(f"unsupported operand {kind}")

        def branch_args(src: int, target: int) -> list[SSAValue]:
            out = []
            for _, pairs in phis.get(target, ()):
                vals = [pairs[j] for j in range(0, len(pairs), 2) if pairs[j + 1] == src]
                if len(vals) != 1:
                    raise self.err(f"OpPhi in block {target} has no single entry for predecessor {src}")
                out.append(value(vals[0]))
            return out

        for (label, body), block in zip(blocks, xblocks):
            lid = label.words[0]
            for inst in body:
                self.offset = inst.offset
                op = inst.opname
                if op == "OpPhi":
                    continue
                try:
                    new = self.body_op(op, inst.words, lid, operand, branch_args, block_of)
                except SpirvReadError:
                    raise
                except (ValueError, KeyError, IndexError, TypeError, VerifyException) as e:
                    raise self.err(f"{op}: {_one_line(e)}") from None
                block.add_op(self.at(new))
        return fn

    _global_ops: list[spirv.GlobalVariableOp]

    def body_op(self, op: str, ws: list[int], lid: int, operand, branch_args, block_of) -> Operation:
        def blk(i: int) -> Block:
            if i not in block_of:
                raise ValueError(f"id {i} is not a block of this function")
            return block_of[i]

        if op == "OpBranch":
            self.count(ws, 1)
            return spirv.BranchOp(blk(ws[0]), branch_args(lid, ws[0]))
        if op == "OpBranchConditional":
            if len(ws) not in (3, 5):
                raise ValueError("expected 3 or 5 operand words")
            return spirv.BranchConditionalOp(operand("id", ws[0]), blk(ws[1]), blk(ws[2]),
                                             branch_args(lid, ws[1]), branch_args(lid, ws[2]),
                                             ws[3:] if len(ws) == 5 else None)
        if op == "OpLoopMerge":
            items = decode_operands(op, ws)
            ctl = items[2][1][1]  # type: ignore[index]
            return spirv.LoopMergeOp(blk(ws[0]), blk(ws[1]), None if ctl == "None" else ctl)
        if op == "OpSelectionMerge":
            items = decode_operands(op, ws)
            ctl = items[1][1][1]  # type: ignore[index]
            return spirv.SelectionMergeOp(blk(ws[0]), None if ctl == "None" else ctl)
        if op == "OpExtInst":
            if len(ws) < 4:
                raise ValueError("missing operands")
            if ws[2] not in self.ext_sets:
                raise ValueError(f"id {ws[2]} is not an OpExtInstImport")
            new = spirv_general.ExtInstOp(self.ext_sets[ws[2]], ws[3], [operand("id", w) for w in ws[4:]],
                                          self.type(ws[0]))
            if ws[1] in self.values or ws[1] in self.types:
                raise ValueError(f"id {ws[1]} defined twice")
            self.values[ws[1]] = new.result
            self.hint(new.result, ws[1])
            return new
        cls = spirv_dialect.OP_BY_OPNAME.get(op)
        if cls is None:
            raise ValueError("instruction is not supported in a function")
        has_type, has_id = has_result(op)
        n = int(has_type) + int(has_id)
        if len(ws) < n:
            raise ValueError("missing result type/id")
        result_types = [self.value_type(ws[0])] if has_type else []
        if cls in TENSOR_MEMORY_OPS:  # <id> parameters of an enumerant (Tensor Addressing Operands)
            new = decode_tensor_memory(cls, result_types, ws[n:], lambda w: operand("id", w))
        else:
            items = [operand(k, v) for k, v in decode_operands(op, ws[n:], self.scope_value)]
            new = cls.from_spirv(result_types, items)
        if has_id:
            rid = ws[n - 1]
            if rid in self.values or rid in self.types:
                raise ValueError(f"id {rid} defined twice")
            self.values[rid] = new.results[0]
            self.hint(new.results[0], rid)
        return new

    def scope_value(self, id_: int) -> int | None:
        """The value of the integer OpConstant that <id> `id_` names (a memory operand's Scope
        parameter), or None."""
        v = self.values.get(id_)
        owner = getattr(v, "owner", None)
        if isinstance(owner, spirv.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        return None

    def hint(self, v: SSAValue, id_: int) -> None:
        name = self.names.get(id_)
        if name:
            try:
                v.name_hint = name
            except ValueError:
                pass  # not a valid SSA name: the hint is only cosmetic


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _verify(module: spirv.ModuleOp) -> None:
    """Every op's verifier (the `spirv` dialect's validation rules), each op once, then the
    region structure; a failure is a SpirvReadError at the word of the failing op's instruction
    (word 0 for the structure)."""
    for op in module.walk(reverse=False):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            loc = op.location
            word = loc.column.data if isinstance(loc, FileLineColLoc) else 0
            raise SpirvReadError(f"invalid module: '{op.name}' op {_one_line(e)}", word) from None
    # the structure `module.verify()` checks besides each op's verifier (which the walk ran, and
    # `module.verify()` would run again): parent pointers, no empty single-block region unless
    # the op has NoTerminator
    for op in module.walk():
        for region in op.regions:
            blocks = region.blocks
            for block in blocks:
                if block.parent is not region:
                    raise SpirvReadError("invalid module: Parent pointer of block does not refer to "
                                         "containing region", 0)
                empty = True
                for child in block.ops:
                    empty = False
                    if child.parent is not block:
                        raise SpirvReadError("invalid module: Parent pointer of operation does not "
                                             "refer to containing region", 0)
                if empty and len(blocks) == 1 and not op.has_trait(NoTerminator):
                    raise SpirvReadError(f"invalid module: Operation {op.name} contains empty block in "
                                         "single-block region that expects at least a terminator", 0)


def deserialize(data: bytes, ctx=None, file: str = "<binary>") -> spirv.ModuleOp:
    """Decode and validate a SPIR-V binary into a `spirv.module`.

    `data` is little-endian 32-bit words (bytes). `ctx` is accepted for API symmetry (the ops are
    built directly). Each op is located at `file:0:W`, W the word offset of its instruction.
    Raises SpirvReadError (one line, with the word offset `word`) for a truncated or corrupt
    binary (bad magic, word count 0 or past the end, unknown opcode, undefined id, wrong
    operand count), for a module that breaks a validation rule the `spirv` dialect's verifiers
    check (the message names the rule), a module that lacks a capability or extension it needs,
    and for constructs this reader does not support; TypeError if `data` is not bytes. No other
    exception escapes."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"deserialize: the binary must be bytes, got {'None' if data is None else type(data).__name__}")
    data = bytes(data)
    if len(data) % 4:
        raise SpirvReadError(f"binary length {len(data)} bytes is not a multiple of 4", len(data) // 4)
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    reader = _Reader(words, file)
    reader._global_ops = []
    orig = reader.global_variable

    def track(ws: list[int]) -> spirv.GlobalVariableOp:
        g = orig(ws)
        reader._global_ops.append(g)
        return g

    reader.global_variable = track  # type: ignore[method-assign]
    try:
        module = reader.read()
        _verify(module)
        _check_requirements(module)
        _check_builtins(module)
    except SpirvReadError:
        raise
    except Exception as e:  # a construct the checks above missed: still the one-line read error
        raise SpirvReadError(f"cannot read: {type(e).__name__}: {_one_line(e)}", reader.offset) from None
    return module


# BuiltIns a GLCompute entry point may use (Vulkan "Built-In Variables": the others are for
# graphics stages)
_COMPUTE_BUILTINS = {"NumWorkgroups", "WorkgroupSize", "WorkgroupId", "LocalInvocationId", "GlobalInvocationId",
                     "LocalInvocationIndex", "SubgroupSize", "NumSubgroups", "SubgroupId",
                     "SubgroupLocalInvocationId", "SubgroupEqMask", "SubgroupGeMask", "SubgroupGtMask",
                     "SubgroupLeMask", "SubgroupLtMask", "DeviceIndex", "BaseInstance"}


def _check_builtins(module: spirv.ModuleOp) -> None:
    """Compute shaders only: every entry point is GLCompute (the execution modes and builtins
    checked here are those of compute), and its builtins are compute ones."""
    for op in module.ops:
        if isinstance(op, spirv.EntryPointOp) and op.execution_model.data != "GLCompute":
            loc = op.location
            raise SpirvReadError(f"execution model {op.execution_model.data} is not supported (compute shaders: "
                                 "GLCompute only)", loc.column.data if isinstance(loc, FileLineColLoc) else 0)
    for op in module.ops:
        if isinstance(op, spirv.GlobalVariableOp) and op.built_in is not None \
                and op.built_in.data not in _COMPUTE_BUILTINS:
            loc = op.location
            raise SpirvReadError(f"invalid module: BuiltIn {op.built_in.data} is not available to a GLCompute "
                                 "entry point (Vulkan built-in variables)",
                                 loc.column.data if isinstance(loc, FileLineColLoc) else 0)


def _word(op) -> int:
    """The word offset the reader stamped on `op` (0 for the module as a whole)."""
    loc = op.location
    return loc.column.data if isinstance(loc, FileLineColLoc) else 0


def _check_requirements(module: spirv.ModuleOp) -> None:
    """The capabilities, extensions and memory model the module's instructions need are declared
    (SPIR-V 2.4; the same check as the writer's)."""
    req = derive_requirements(module)
    if req.memory_model != module.memory_model.data:
        raise SpirvReadError(f"invalid module: SPV_KHR_cooperative_matrix needs memory model {req.memory_model}, "
                             f"got {module.memory_model.data}")
    declared = implied_closure([c.data for c in module.capabilities])
    exts = {e.data for e in module.extensions}
    if "Kernel" in declared:
        raise SpirvReadError("the Kernel capability (OpenCL) is not supported: compute shaders (Shader) only")
    version = version_of(module)
    for cap in sorted(declared):  # a declared capability's extension is declared too
        _, _, cexts, _, cversion = ENUMS["Capability"][cap]
        core = tuple(int(p) for p in cversion.split(".")) if cversion else None
        if cexts and (core is None or version < core) and not exts & set(cexts):
            raise SpirvReadError(f"invalid module: capability {cap} needs OpExtension {' or '.join(cexts)}")
    for cap, where in req.needs.items():
        if cap not in declared:
            raise SpirvReadError(f"invalid module: '{where}' needs capability {cap}, which OpCapability does not "
                                 "declare", _word(req.needed_by[cap]))
    missing = set(req.extensions) - {e.data for e in module.extensions}
    if missing:
        raise SpirvReadError(f"invalid module: missing OpExtension {', '.join(sorted(missing))}")
    if req.memory_model != module.memory_model.data:
        raise SpirvReadError(f"invalid module: SPV_KHR_cooperative_matrix needs memory model {req.memory_model}, "
                             f"got {module.memory_model.data}")
