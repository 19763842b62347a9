"""Capabilities and extensions a `spirv.module` needs (SPIR-V spec 2.4 "Logical Layout", 3.31
"Capability"), derived from the instructions, types and enumerants present.

Every lookup goes through `grammar_tables`: an instruction or enumerant lists the capabilities
that enable it (any one suffices) and the extensions that provide it when the module's SPIR-V
version is older than the version in which it became core.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    FunctionType,
    IntegerType,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Operation

from coopdialect.dialects import spirv, spirv_dialect, spirv_nv2
from coopdialect.spirv.grammar_tables import (
    CAPABILITY_EXTENSIONS,
    CAPABILITY_IMPLIES,
    ENUM_ALIASES,
    ENUMS,
    INSTRUCTION_ALIASES,
    INSTRUCTIONS,
)

DEFAULT_VERSION = (1, 6)
# alternatives that a Vulkan compute module never wants when another one is listed
_AVOID = ("Kernel", "Addresses", "Linkage")
# the capability that lets a pointer into each storage class reach an 8-/16-bit member
# (SPV_KHR_8bit_storage, SPV_KHR_16bit_storage; SPV_KHR_physical_storage_buffer extends the
# StorageBuffer ones to PhysicalStorageBuffer)
_STORAGE_16 = {"StorageBuffer": "StorageBuffer16BitAccess", "PhysicalStorageBuffer": "StorageBuffer16BitAccess",
               "Uniform": "UniformAndStorageBuffer16BitAccess", "PushConstant": "StoragePushConstant16",
               "Input": "StorageInputOutput16", "Output": "StorageInputOutput16"}
_STORAGE_8 = {"StorageBuffer": "StorageBuffer8BitAccess", "PhysicalStorageBuffer": "StorageBuffer8BitAccess",
              "Uniform": "UniformAndStorageBuffer8BitAccess", "PushConstant": "StoragePushConstant8"}
_INT_CAPS = {8: "Int8", 16: "Int16", 64: "Int64"}
_FLOAT_CAPS = {16: "Float16", 64: "Float64"}
# An 8-/16-bit value without Int8/Int16/Float16 is limited to what the storage capabilities allow
# (SPV_KHR_8bit_storage / SPV_KHR_16bit_storage, 3.31 Capability): it may be the result of an
# OpLoad through such a pointer or of a width-only conversion, and an operand of a width-only
# conversion or the Object of an OpStore; any other use needs the full capability.
# spirv-val (SPIRV-Tools' limited-use check) also lets OpCopyObject copy such a value.
_LIMITED_RESULT = {"OpLoad", "OpUConvert", "OpSConvert", "OpFConvert", "OpCopyObject"}
_LIMITED_OPERAND = {"OpStore", "OpUConvert", "OpSConvert", "OpFConvert", "OpCopyObject"}
_LIMITED_ALTERNATIVES = {
    ("int", 8): "|".join(("Int8", *dict.fromkeys(_STORAGE_8.values()))),
    ("int", 16): "|".join(("Int16", *dict.fromkeys(_STORAGE_16.values()))),
    ("float", 16): "|".join(("Float16", *dict.fromkeys(_STORAGE_16.values()))),
}


def _narrow(t: Attribute) -> tuple[str, int] | None:
    """("int" | "float", width) of an 8-/16-bit scalar or vector type, else None (bf16 too: a
    bf16 value needs BFloat16TypeKHR, which its type declares, not Float16)."""
    if isinstance(t, VectorType):
        t = t.element_type
    if isinstance(t, BFloat16Type):
        return None
    if isinstance(t, IntegerType) and t.width.data in (8, 16):
        return "int", t.width.data
    if isinstance(t, AnyFloat) and t.bitwidth == 16:
        return "float", 16
    return None


@dataclass(frozen=True)
class Feature:
    """One use of something the grammar gates: `kind` is "Instruction", "Capability",
    "AnyCapability" (`name`: alternatives joined by "|") or an operand kind (StorageClass,
    BuiltIn, ...); `where` names the op using it (for messages)."""

    kind: str
    name: str
    where: str


@dataclass
class Requirements:
    """Result of `derive_requirements`: minimal capability list (implied ones removed, sorted by
    value), extension list (sorted), and the memory model to use."""

    capabilities: list[str]
    extensions: list[str]
    memory_model: str
    needs: dict[str, str]
    """capability -> name of the op that needs it (all needed capabilities, before minimisation)."""
    needed_by: dict[str, Operation]
    """capability -> the op that needs it (its first use), to locate a message."""


def version_of(module: spirv.ModuleOp) -> tuple[int, int]:
    """The module's SPIR-V version as (major, minor); default 1.6."""
    return spirv.parse_version(module.version.data) if module.version is not None else DEFAULT_VERSION


def _type_features(t: Attribute, where: str, sc: str | None = None) -> Iterator[Feature]:
    if isinstance(t, IntegerType):
        w = t.width.data
        # an 8/16-bit type held in a buffer needs the storage capability of its storage class or
        # the full Int8/Int16, which allows the type anywhere (SPV_KHR_8bit_storage,
        # SPV_KHR_16bit_storage); elsewhere (a value, a Function variable) it needs Int8/Int16
        storage = (_STORAGE_16 if w == 16 else _STORAGE_8 if w == 8 else {}).get(sc or "")
        if storage is not None:
            yield Feature("AnyCapability", f"{storage}|{_INT_CAPS[w]}", where)
        elif w != 1 and w in _INT_CAPS:
            yield Feature("Capability", _INT_CAPS[w], where)
    elif isinstance(t, VectorType):
        yield from _type_features(t.element_type, where, sc)
    elif isinstance(t, FunctionType):
        for x in (*t.inputs, *t.outputs):
            yield from _type_features(x, where)
    elif isinstance(t, spirv.PointerType):
        yield Feature("Instruction", "OpTypePointer", where)
        yield Feature("StorageClass", t.storage_class.data, where)
        yield from _type_features(t.pointee, where, t.storage_class.data)
    elif isinstance(t, spirv.RuntimeArrayType | spirv.ArrayType):
        yield Feature("Instruction", "OpTypeRuntimeArray" if isinstance(t, spirv.RuntimeArrayType) else "OpTypeArray", where)
        if t.stride.data:
            yield Feature("Decoration", "ArrayStride", where)
        yield from _type_features(t.element_type, where, sc)
    elif isinstance(t, spirv.StructType):
        if t.block.data:
            yield Feature("Decoration", "Block", where)
        if any(o.data >= 0 for o in t.offsets):
            yield Feature("Decoration", "Offset", where)
        for m in t.members:
            yield from _type_features(m, where, sc)
    elif isinstance(t, spirv.CooperativeMatrixType):
        yield Feature("Instruction", "OpTypeCooperativeMatrixKHR", where)
        yield Feature("Scope", t.scope.data, where)
        if isinstance(t.element_type, BFloat16Type):  # SPV_KHR_bfloat16, validation rules
            yield Feature("Capability", "BFloat16CooperativeMatrixKHR", where)
        yield from _type_features(t.element_type, where)
    elif isinstance(t, spirv.NVCooperativeMatrixType):
        yield Feature("Instruction", "OpTypeCooperativeMatrixNV", where)
        yield Feature("Scope", t.scope.data, where)
        yield from _type_features(t.element_type, where)
    elif isinstance(t, spirv_nv2.TensorLayoutType):
        yield Feature("Instruction", "OpTypeTensorLayoutNV", where)
        yield Feature("TensorClampMode", t.clamp_mode.data, where)
    elif isinstance(t, spirv_nv2.TensorViewType):
        yield Feature("Instruction", "OpTypeTensorViewNV", where)
    elif isinstance(t, BFloat16Type):
        # OpTypeFloat 16 BFloat16KHR: BFloat16TypeKHR (SPV_KHR_bfloat16), in any storage class
        # (no 16-bit storage capability: spirv-val and glslang agree)
        yield Feature("FPEncoding", "BFloat16KHR", where)
    elif isinstance(t, AnyFloat):
        w = t.bitwidth
        storage = _STORAGE_16.get(sc or "") if w == 16 else None
        if storage is not None:
            yield Feature("AnyCapability", f"{storage}|{_FLOAT_CAPS[w]}", where)
        elif w in _FLOAT_CAPS:
            yield Feature("Capability", _FLOAT_CAPS[w], where)


_TYPE_KEYS: dict[tuple[Attribute, str | None], tuple[tuple[str, str], ...]] = {}


def _type_keys(t: Attribute, sc: str | None = None) -> tuple[tuple[str, str], ...]:
    """(kind, name) of `_type_features(t, ..., sc)`, memoized per type (attributes are immutable)."""
    key = (t, sc)
    keys = _TYPE_KEYS.get(key)
    if keys is None:
        if len(_TYPE_KEYS) > 4096:
            _TYPE_KEYS.clear()
        keys = _TYPE_KEYS[key] = tuple((f.kind, f.name) for f in _type_features(t, "", sc))
    return keys


def _op_types(op: Operation) -> Iterator[Attribute]:
    yield from (r.type for r in op.results)
    for region in op.regions:
        for block in region.blocks:
            yield from (a.type for a in block.args)
    for name in ("type", "matrix_type", "function_type"):
        if (p := op.properties.get(name)) is not None:
            yield p


# ops that report enumerants the ENUM_PROPS scan cannot see (Tensor Addressing Operands)
_EXTRA_FEATURES = frozenset(c for c in spirv_dialect.INSTRUCTION_OPS if hasattr(c, "spirv_features"))

_ARM_LAYOUT_VALUES = {ENUMS["CooperativeMatrixLayout"][n][0]
                      for n in ("RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM")}


def _layout_features(op: Operation, where: str) -> Iterator[Feature]:
    """The layout operand is an <id> of a constant, so the grammar's enumerant gating cannot see
    it; the Arm layouts need CooperativeMatrixLayoutsARM (SPV_ARM_cooperative_matrix_layouts,
    3.X Cooperative Matrix Layout: Enabling Capabilities), which brings its extension."""
    if not isinstance(op, spirv.KHRCooperativeMatrixLoadOp | spirv.KHRCooperativeMatrixStoreOp):
        return
    owner = op.layout.owner
    if isinstance(owner, spirv.ConstantOp) and owner.value.value.data in _ARM_LAYOUT_VALUES:
        yield Feature("Capability", "CooperativeMatrixLayoutsARM", where)


def collect_features(module: spirv.ModuleOp) -> list[Feature]:
    """Everything in `module` that the grammar may gate, in walk order."""
    feats: list[Feature] = [
        Feature("AddressingModel", module.addressing_model.data, module.name),
        Feature("MemoryModel", module.memory_model.data, module.name),
    ]
    for op in module.walk():
        if op is module:
            continue
        where = op.name
        if isinstance(op, spirv.SpirvInstruction):
            feats.append(Feature("Instruction", op.OPNAME, where))
            feats.extend(_layout_features(op, where))
            if type(op) in _EXTRA_FEATURES:
                feats.extend(Feature(k, n, where) for k, n in op.spirv_features())
            for prop, kind in op.ENUM_PROPS:
                if (v := op.properties.get(prop)) is not None:
                    feats.extend(Feature(kind, n, where) for n, _ in spirv.parse_enum_operand(kind, v.data))
        elif isinstance(op, spirv.FuncOp) and op.function_control is not None:
            feats.extend(Feature("FunctionControl", n, where)
                         for n, _ in spirv.parse_enum_operand("FunctionControl", op.function_control.data))
        elif isinstance(op, spirv.EntryPointOp):
            feats.append(Feature("ExecutionModel", op.execution_model.data, where))
        elif isinstance(op, spirv.ExecutionModeOp):
            feats.append(Feature("ExecutionMode", op.execution_mode.data, where))
        elif isinstance(op, spirv.GlobalVariableOp):
            if op.built_in is not None:
                feats.append(Feature("Decoration", "BuiltIn", where))
                feats.append(Feature("BuiltIn", op.built_in.data, where))
            if op.binding is not None:
                feats.append(Feature("Decoration", "Binding", where))
                feats.append(Feature("Decoration", "DescriptorSet", where))
        limited = isinstance(op, spirv.SpirvInstruction) and op.OPNAME in _LIMITED_RESULT
        for t in _op_types(op):
            if limited and (n := _narrow(t)) is not None:
                feats.append(Feature("AnyCapability", _LIMITED_ALTERNATIVES[n], where))
            else:
                feats.extend(Feature(k, n, where) for k, n in _type_keys(t))
        if isinstance(op, spirv.SpirvInstruction) and op.OPNAME not in _LIMITED_OPERAND:
            feats.extend(Feature("Capability", _LIMITED_ALTERNATIVES[n].split("|")[0], where)
                         for v in op.operands if (n := _narrow(v.type)) is not None)
    return feats


_ENUM_KEYS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}


def _enum_keys(kind: str, text: str) -> tuple[tuple[str, str], ...]:
    keys = _ENUM_KEYS.get((kind, text))
    if keys is None:
        if len(_ENUM_KEYS) > 4096:
            _ENUM_KEYS.clear()
        keys = _ENUM_KEYS[(kind, text)] = tuple((kind, n) for n, _ in spirv.parse_enum_operand(kind, text))
    return keys


def _collect_feature_keys(module: spirv.ModuleOp) -> dict[tuple[str, str], Operation]:
    """`collect_features` without repetitions: (kind, name) -> the op of its first use, in walk
    order. Later uses of a feature never change what `derive_requirements` derives."""
    out: dict[tuple[str, str], Operation] = {
        ("AddressingModel", module.addressing_model.data): module,
    }
    out.setdefault(("MemoryModel", module.memory_model.data), module)
    add = out.setdefault
    # per (type object, where): types are usually shared between many ops
    seen_types: dict[tuple[int, str], Attribute] = {}
    instruction = spirv.SpirvInstruction
    for op in module.walk():
        if op is module:
            continue
        where = op
        if isinstance(op, instruction):
            add(("Instruction", op.OPNAME), where)
            for f in _layout_features(op, op.name):
                add((f.kind, f.name), where)
            if type(op) in _EXTRA_FEATURES:  # enumerants with <id> parameters (spirv_nv2)
                for k in op.spirv_features():
                    add(k, where)
            for prop, kind in op.ENUM_PROPS:
                if (v := op.properties.get(prop)) is not None:
                    for k in _enum_keys(kind, v.data):
                        add(k, where)
        elif isinstance(op, spirv.FuncOp) and op.function_control is not None:
            for k in _enum_keys("FunctionControl", op.function_control.data):
                add(k, where)
        elif isinstance(op, spirv.EntryPointOp):
            add(("ExecutionModel", op.execution_model.data), where)
        elif isinstance(op, spirv.ExecutionModeOp):
            add(("ExecutionMode", op.execution_mode.data), where)
        elif isinstance(op, spirv.GlobalVariableOp):
            if op.built_in is not None:
                add(("Decoration", "BuiltIn"), where)
                add(("BuiltIn", op.built_in.data), where)
            if op.binding is not None:
                add(("Decoration", "Binding"), where)
                add(("Decoration", "DescriptorSet"), where)
        limited = isinstance(op, instruction) and op.OPNAME in _LIMITED_RESULT
        for t in _op_types(op):
            if limited and (n := _narrow(t)) is not None:
                add(("AnyCapability", _LIMITED_ALTERNATIVES[n]), where)
                continue
            tk = (id(t), id(where))
            if tk in seen_types:
                continue
            seen_types[tk] = t  # keeps `t` alive, so its id is not reused
            for k in _type_keys(t):
                add(k, where)
        if isinstance(op, instruction) and op.OPNAME not in _LIMITED_OPERAND:
            # an 8-/16-bit operand outside the storage capabilities' uses (its result type may
            # not show it: OpIEqual on two loaded bytes gives a bool)
            for v in op.operands:
                if (n := _narrow(v.type)) is not None:
                    add(("Capability", _LIMITED_ALTERNATIVES[n].split("|")[0]), where)
    return out


def _vendor(name: str) -> str | None:
    """The vendor tag a name ends with (`OpCooperativeMatrixReduceNV` -> `NV`), else None."""
    m = re.search(r"(?<=[a-z0-9])([A-Z]{2,})$", name)
    return m.group(1) if m else None


_CAPABILITY_SPELLINGS: dict[str, list[str]] = {}
for _alias, _name in ENUM_ALIASES.get("Capability", {}).items():
    _CAPABILITY_SPELLINGS.setdefault(_name, []).append(_alias)


def _as_spelled(caps: tuple[str, ...], name: str, aliases: dict[str, str]) -> tuple[str, ...]:
    """Where `name` is an alias the grammar kept for an instruction or enumerant it promoted
    (OpCooperativeMatrixReduceNV, now OpCooperativeMatrixReduceEXT), its capabilities under the
    spelling of the same vendor (CooperativeMatrixReductionsNV): the module then declares the
    extension of the text the op comes from (SPV_NV_cooperative_matrix2), not the newer one."""
    vendor = _vendor(name) if name in aliases else None
    if vendor is None:
        return caps
    return tuple(next((a for a in _CAPABILITY_SPELLINGS.get(c, ()) if _vendor(a) == vendor), c)
                 for c in caps)


def _extension(name: str, exts: tuple[str, ...]) -> str:
    """The extension to declare for `name` among the ones that provide it: the one of the
    vendor `name` is spelled with (SPV_NV_... for ...NV), else the grammar's first."""
    vendor = _vendor(name)
    return next((e for e in exts if vendor and e.startswith(f"SPV_{vendor}_")), exts[0])


def _gate(f: Feature) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    if f.kind == "Instruction":
        _, _, caps, exts, version = INSTRUCTIONS[f.name]
        return _as_spelled(caps, f.name, INSTRUCTION_ALIASES), exts, version
    if f.kind == "Capability":
        return (f.name,), (), None
    if f.kind == "AnyCapability":  # any one of these (an 8-/16-bit value's limited uses)
        return tuple(f.name.split("|")), (), None
    _, caps, exts, _, version = ENUMS[f.kind][f.name]
    return _as_spelled(caps, f.name, ENUM_ALIASES.get(f.kind, {})), exts, version


def _vtuple(v: str | None) -> tuple[int, int] | None:
    return None if v is None else tuple(int(p) for p in v.split("."))  # type: ignore[return-value]


def spellings(cap: str) -> set[str]:
    """Every name of capability `cap`: its grammar name and the aliases the grammar keeps
    (CooperativeMatrixReductionsEXT, CooperativeMatrixReductionsNV)."""
    name = ENUM_ALIASES.get("Capability", {}).get(cap, cap)
    return {name, *_CAPABILITY_SPELLINGS.get(name, ())}


def implied_closure(caps: set[str] | list[str]) -> set[str]:
    """`caps` plus every capability they implicitly declare (transitively), each under all of
    its names (`spellings`)."""
    out: set[str] = set()
    todo = list(caps)
    while todo:
        c = todo.pop()
        if c not in out:
            out |= spellings(c)
            todo.extend(CAPABILITY_IMPLIES.get(c, ()))
    return out


def _needs_extension(exts: tuple[str, ...], version: str | None, module_version: tuple[int, int]) -> bool:
    core = _vtuple(version)
    return bool(exts) and (core is None or module_version < core)


def derive_requirements(module: spirv.ModuleOp) -> Requirements:
    """Compute the capabilities and extensions `module` needs.

    An instruction/enumerant gated by several capabilities is satisfied by one already declared
    on the module, else the first listed one (skipping Kernel-only ones). Implicitly declared
    capabilities are dropped from the result. Cooperative matrices imply memory model Vulkan.
    """
    mversion = version_of(module)
    declared = implied_closure([c.data for c in module.capabilities])
    uses_coop = False
    memory_model = module.memory_model.data
    # each feature once, at its first use: a repeated use never changes the outcome below
    # (needs only grows, so a gate satisfied once stays satisfied)
    keyed = _collect_feature_keys(module)
    for kind, name in keyed:
        # KHR matrices (and coopmat2, whose instructions take them) need the Vulkan memory model;
        # SPV_NV_cooperative_matrix does not (it works with GLSL450 too)
        if kind == "Instruction" and "CooperativeMatrix" in name and name.endswith("KHR"):
            uses_coop = True
    if uses_coop:
        memory_model = "Vulkan"
        renamed: dict[tuple[str, str], Operation] = {}
        for (kind, name), where in keyed.items():
            renamed.setdefault(("MemoryModel", "Vulkan") if kind == "MemoryModel" else (kind, name), where)
        keyed = renamed
    needs: dict[str, str] = {}
    needed_by: dict[str, Operation] = {}
    exts: set[str] = set()
    declared_exts = {e.data for e in module.extensions}
    for (kind, name), op in keyed.items():
        f = Feature(kind, name, op.name)
        caps, fexts, version = _gate(f)
        if caps:
            chosen = implied_closure(needs)
            if not any(c in declared or c in chosen for c in caps):
                pick = next((c for c in caps if c not in _AVOID), caps[0])
                needs.setdefault(pick, f.where)
                needed_by.setdefault(pick, op)
        if _needs_extension(fexts, version, mversion) and not declared_exts & set(fexts):
            exts.add(_extension(name, fexts))
    for cap in list(needs):
        _, _, cexts, _, cversion = ENUMS["Capability"][cap]
        if _needs_extension(cexts, cversion, mversion) and not (declared_exts | exts) & set(cexts):
            exts.add(_extension(cap, cexts))
    all_caps = {c.data for c in module.capabilities}
    for c in needs:  # once, under the spelling the module declares if it does
        if not spellings(c) & all_caps:
            all_caps.add(c)
    implied_by_others = set()
    for c in all_caps:
        implied_by_others |= implied_closure(CAPABILITY_IMPLIES.get(c, ())) - spellings(c)
    minimal = sorted(all_caps - implied_by_others, key=lambda c: (ENUMS["Capability"][c][0], c))
    return Requirements(minimal, sorted(exts | {e.data for e in module.extensions}), memory_model, needs,
                        needed_by)


def apply_requirements(module: spirv.ModuleOp) -> Requirements:
    """Set the module's capabilities, extensions and memory model from `derive_requirements`."""
    from xdsl.dialects.builtin import ArrayAttr

    req = derive_requirements(module)
    module.capabilities = ArrayAttr(StringAttr(c) for c in req.capabilities)
    module.extensions = ArrayAttr(StringAttr(e) for e in req.extensions)
    module.memory_model = StringAttr(req.memory_model)
    return req
