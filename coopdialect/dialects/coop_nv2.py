"""Cooperative-matrix-2 ops of the `coop` dialect (SPV_NV_cooperative_matrix2).

Added to the `Coop` dialect's op list (coopdialect/dialects/coop_dialect.py). Syntax:

```
%r = coop.load_tensor %buf, %obj, %layout [view %v] [decode @f] [, #coop.memory_access<...>]
       : memref<...>, !M, !tensor_addr.layout<...> [, !tensor_addr.view<...>] -> !M
coop.store_tensor %m, %buf, %layout [view %v] [, #coop.memory_access<...>]
       : !M, memref<...>, !tensor_addr.layout<...> [, !tensor_addr.view<...>]
%r = coop.reduce Row|Column %m, @combine : !Acc -> !Acc2          (Row, Column, Row|Column, 2x2)
%r = coop.convert %acc : !coop.matrix<..., MatrixAcc> -> !coop.matrix<..., MatrixA|MatrixB>
%r = coop.transpose %acc : !coop.matrix<RxCxT, S, MatrixAcc> -> !coop.matrix<CxRxT, S, MatrixB>
%r = coop.per_element_op @f(%m, %extra...) : !M, T1, ... -> !M
```

Addressing (load_tensor/store_tensor): the memref is the array `Pointer` points into; the element
index that matrixCoordToTensorElement[WithView] returns counts elements of the memref's element
type. Functions are `func.func` symbols:

* DecodeFunc: `(memref-of-Pointer, i32 index, i32 blockCoord[0..Dim-1]..., i32
  coordInBlock[0..Dim-1]...) -> Component Type`. The spec's first parameter, a pointer
  `Pointer + index * sizeof(pointee)`, is (the memref, the index) here; its two arrays are passed
  as Dim scalars each. With a DecodeFunc the memref's element type may differ from the component
  type (it is the decode function's pointee).
* CombineFunc: `(T, T) -> T`, T the component type.
* Per-element Func: `(i32 row, i32 col, T element, extra...) -> T`; a matrix extra operand passes
  its element (parameter type = its component type), any other operand passes itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import IntAttr, IntegerType, MemRefType, SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure, SymbolTable
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.coop import (
    MatrixType,
    MemoryAccessAttr,
    Scope,
    StorageClass,
    StorageClassAttr,
    Use,
    _check_memory_access,
    _check_pointer,
)
from coopdialect.dialects.tensor_addr import (
    LayoutConstantOp,
    LayoutSetBlockSizeOp,
    TensorLayoutType,
    TensorViewType,
    const_u32,
    LAYOUT_SET_OPS,
)

WORKGROUP_SIZE_ATTR = "coop.workgroup_size"

# Cooperative Matrix Reduce Mode bits (values as in the extension's table)
REDUCE_ROW, REDUCE_COLUMN, REDUCE_2X2 = 0x1, 0x2, 0x4
_REDUCE_NAMES = ((REDUCE_ROW, "Row"), (REDUCE_COLUMN, "Column"), (REDUCE_2X2, "2x2"))


def reduce_mode_str(mask: int) -> str:
    return "|".join(n for b, n in _REDUCE_NAMES if mask & b)


def _m(v: SSAValue) -> MatrixType:
    assert isinstance(v.type, MatrixType)
    return v.type


def lookup_func(op: Operation, ref: SymbolRefAttr, what: str) -> func.FuncOp:
    found = SymbolTable.lookup_symbol(op, ref)
    if not isinstance(found, func.FuncOp):
        raise VerifyException(f"{what} @{ref.string_value()} must name an OpFunction "
                              "(a func.func in the module)")
    return found


def _is_i32(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 32


def check_workgroup_scope(op: Operation, *types: Attribute) -> None:
    """Workgroup-scope matrices need the workgroup size specified (SPV_NV_cooperative_matrix2
    2.16.1: "the workgroup size must have already been specified in the module")."""
    if not any(isinstance(t, MatrixType) and t.scope_value == Scope.Workgroup for t in types):
        return
    f = op.parent_op()
    while f is not None and not isinstance(f, func.FuncOp):
        f = f.parent_op()
    if f is not None and WORKGROUP_SIZE_ATTR not in f.attributes:
        raise VerifyException(
            "a Workgroup-scope cooperative matrix needs the workgroup size to be specified: the "
            f"enclosing function has no '{WORKGROUP_SIZE_ATTR}' attribute"
        )


def layout_block_sizes(layout: SSAValue) -> tuple[int | None, ...] | None:
    """Block sizes of a layout value, following its chain: None when the chain is not visible
    (e.g. a function argument); an entry is None when that operand is not a constant."""
    v = layout
    while True:
        owner = v.owner
        if isinstance(owner, LayoutConstantOp):
            return owner.state.block_size
        if isinstance(owner, LayoutSetBlockSizeOp):
            return tuple(const_u32(x) for x in owner.values)
        if isinstance(owner, LAYOUT_SET_OPS):
            v = owner.input
            continue
        t = v.type
        if isinstance(owner, Operation) and owner.name == "tensor_addr.create_layout" and \
                isinstance(t, TensorLayoutType):
            return (1,) * t.rank
        return None


class _TensorMemoryOp(IRDLOperation):
    def _check_addressing(self, inst: str, matrix: MatrixType) -> None:
        lt = self.layout.type
        if not isinstance(lt, TensorLayoutType):
            raise VerifyException(f"TensorLayout must be a tensor layout (OpTypeTensorLayoutNV), "
                                  f"got {lt} ({inst})")
        if self.view is not None:
            vt = self.view.type
            if not isinstance(vt, TensorViewType):
                raise VerifyException(f"the TensorView operand must be a tensor view "
                                      f"(OpTypeTensorViewNV), got {vt} ({inst})")
            if not vt.has_dims and vt.rank != lt.rank:
                # linearToViewCoord/viewCoordToLinear read t.span[0..VDim-1] when hasDimensions
                # is false, which only names the layout's span when the ranks agree.
                raise VerifyException(
                    f"a tensor view with HasDimensions false uses the layout's span, so its Dim "
                    f"({vt.rank}) must equal the layout's Dim ({lt.rank}) ({inst})")
        check_workgroup_scope(self, matrix)


@irdl_op_definition
class LoadTensorOp(_TensorMemoryOp):
    """Tensor-addressed load (OpCooperativeMatrixLoadTensorNV); see the module docstring."""

    name = "coop.load_tensor"
    pointer = operand_def(MemRefType)
    object = operand_def(MatrixType)
    layout = operand_def()
    view = opt_operand_def()
    decode_func = opt_prop_def(SymbolRefAttr)
    memory_access = opt_prop_def(MemoryAccessAttr)
    result = result_def(MatrixType)
    assembly_format = (
        "$pointer `,` $object `,` $layout (`view` $view^)? (`decode` $decode_func^)? "
        "(`,` $memory_access^)? attr-dict `:` type($pointer) `,` type($object) `,` type($layout) "
        "(`,` type($view)^)? `->` type($result)"
    )

    def __init__(self, pointer: SSAValue, obj: SSAValue, layout: SSAValue,
                 view: SSAValue | None = None, decode_func: str | SymbolRefAttr | None = None,
                 memory_access: MemoryAccessAttr | None = None):
        if isinstance(decode_func, str):
            decode_func = SymbolRefAttr(decode_func)
        super().__init__(operands=[pointer, obj, layout, view], result_types=[obj.type],
                         properties={"decode_func": decode_func, "memory_access": memory_access})

    def verify_(self) -> None:
        inst = "OpCooperativeMatrixLoadTensorNV"
        m = _m(self.result)
        if self.object.type != m:
            raise VerifyException(f"Object must have the same type as Result Type: "
                                  f"{self.object.type} vs {m} ({inst})")
        self._check_addressing(inst, m)
        _check_memory_access(self, self.memory_access, True, inst)
        if self.decode_func is None:
            _check_pointer(self, self.pointer, m, inst)
            return
        lt = self.layout.type
        assert isinstance(lt, TensorLayoutType)
        space = self.pointer.type.memory_space
        if isinstance(space, StorageClassAttr) and space.data != StorageClass.StorageBuffer:
            # the DecodeFunc's first parameter is a PhysicalStorageBuffer pointer into Pointer's
            # memory: a Workgroup buffer has no such address
            raise VerifyException(f"a DecodeFunc needs Pointer in buffer memory (its first parameter is a "
                                  f"PhysicalStorageBuffer pointer), got {space.data.value} storage ({inst})")
        f = lookup_func(self, self.decode_func, "DecodeFunc")
        ins, outs = f.function_type.inputs.data, f.function_type.outputs.data
        want = 2 + 2 * lt.rank
        if len(outs) != 1 or outs[0] != m.element_type:
            raise VerifyException(f"The DecodeFunc's return type must match the component type "
                                  f"of the result matrix type ({m.element_type}) ({inst})")
        if len(ins) != want or ins[0] != self.pointer.type or not all(_is_i32(t) for t in ins[1:]):
            raise VerifyException(
                f"DecodeFunc must take (the Pointer's memref {self.pointer.type}, i32 index, "
                f"{lt.rank} i32 blockCoord, {lt.rank} i32 coordInBlock): {want} parameters "
                f"({inst})")


@irdl_op_definition
class StoreTensorOp(_TensorMemoryOp):
    """Tensor-addressed store (OpCooperativeMatrixStoreTensorNV); see the module docstring."""

    name = "coop.store_tensor"
    object = operand_def(MatrixType)
    pointer = operand_def(MemRefType)
    layout = operand_def()
    view = opt_operand_def()
    decode_func = opt_prop_def(SymbolRefAttr)
    memory_access = opt_prop_def(MemoryAccessAttr)
    assembly_format = (
        "$object `,` $pointer `,` $layout (`view` $view^)? (`decode` $decode_func^)? "
        "(`,` $memory_access^)? attr-dict `:` type($object) `,` type($pointer) `,` "
        "type($layout) (`,` type($view)^)?"
    )

    def __init__(self, obj: SSAValue, pointer: SSAValue, layout: SSAValue,
                 view: SSAValue | None = None, memory_access: MemoryAccessAttr | None = None):
        super().__init__(operands=[obj, pointer, layout, view],
                         properties={"memory_access": memory_access})

    def verify_(self) -> None:
        inst = "OpCooperativeMatrixStoreTensorNV"
        m = _m(self.object)
        if self.decode_func is not None:
            raise VerifyException(f"DecodeFunc is not allowed with {inst}")
        self._check_addressing(inst, m)
        _check_pointer(self, self.pointer, m, inst)
        _check_memory_access(self, self.memory_access, False, inst)
        sizes = layout_block_sizes(self.layout)
        if sizes is not None:
            for i, b in enumerate(sizes):
                if b is not None and b > 1:
                    raise VerifyException(
                        f"a block size larger than 1 must not be used with {inst} (it would lead "
                        f"to data races): blockSize[{i}] = {b}")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce rows, columns, all, or 2x2 neighborhoods (OpCooperativeMatrixReduceNV).

    `%r = coop.reduce Row %m, @max : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> ->
    !coop.matrix<16x1xf32, Subgroup, MatrixAcc>`. Row: every element of result row r combines row
    r of Matrix; Column: of column c; Row|Column: of all of Matrix; 2x2: result (r, c) combines
    (2r, 2c), (2r+1, 2c), (2r, 2c+1), (2r+1, 2c+1).
    """

    name = "coop.reduce"
    matrix = operand_def(MatrixType)
    reduce = prop_def(IntAttr)
    combine_func = prop_def(SymbolRefAttr)
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    def __init__(self, matrix: SSAValue, reduce: int, combine: str | SymbolRefAttr,
                 result_type: MatrixType):
        if isinstance(combine, str):
            combine = SymbolRefAttr(combine)
        super().__init__(operands=[matrix], result_types=[result_type],
                         properties={"reduce": IntAttr(reduce), "combine_func": combine})

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        mask = 0
        start = parser.pos
        while True:
            if (n := parser.parse_optional_integer(allow_boolean=False)) is not None:
                tail = parser.parse_optional_identifier()
                if n != 2 or tail != "x2":
                    parser.raise_error("expected a Cooperative Matrix Reduce Mode: Row, Column "
                                       "or 2x2", start, parser.pos)
                mask |= REDUCE_2X2
            else:
                word = parser.parse_identifier()
                bits = {"Row": REDUCE_ROW, "Column": REDUCE_COLUMN}.get(word)
                if bits is None:
                    parser.raise_error("expected a Cooperative Matrix Reduce Mode: Row, Column "
                                       "or 2x2", start, parser.pos)
                mask |= bits
            if not parser.parse_optional_punctuation("|"):
                break
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        sym = parser.parse_symbol_name()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        op = cls(parser.resolve_operand(operand, t), mask, SymbolRefAttr(sym.data), rt)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {reduce_mode_str(self.reduce.data)} ")
        printer.print_operand(self.matrix)
        printer.print_string(", ")
        printer.print_attribute(self.combine_func)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.matrix.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        inst = "OpCooperativeMatrixReduceNV"
        mask = self.reduce.data
        if mask == 0 or mask & ~0x7:
            raise VerifyException(f"Reduce must be a combination of Row (0x1), Column (0x2) and "
                                  f"2x2 (0x4), got {mask:#x} ({inst})")
        if mask & REDUCE_2X2 and mask & (REDUCE_ROW | REDUCE_COLUMN):
            raise VerifyException(f"It is invalid to combine 2x2 with Row or Column ({inst})")
        m, r = _m(self.matrix), _m(self.result)
        if m.element_type != r.element_type:
            raise VerifyException(f"The type of Matrix must have the same Component Type as "
                                  f"Result Type: {m.element_type} vs {r.element_type} ({inst})")
        if m.use_value != Use.MatrixAcc or r.use_value != Use.MatrixAcc:
            raise VerifyException(f"The type of Matrix and Result Type must each have Use of "
                                  f"MatrixAccumulatorKHR ({inst})")
        if m.scope_value != r.scope_value:
            raise VerifyException(f"The type of Matrix and Result Type must have matching Scope "
                                  f"({inst})")
        if mask == REDUCE_2X2 and (r.rows * 2 != m.rows or r.columns * 2 != m.columns):
            raise VerifyException(f"If Reduce includes 2x2, the dimensions of ResultType must be "
                                  f"half of the dimensions of Matrix: {m.rows}x{m.columns} -> "
                                  f"{r.rows}x{r.columns} ({inst})")
        if mask == REDUCE_ROW and r.rows != m.rows:
            raise VerifyException(f"If Reduce equals Row, then Result Type must have the same "
                                  f"number of rows as Matrix ({m.rows} vs {r.rows}) ({inst})")
        if mask == REDUCE_COLUMN and r.columns != m.columns:
            raise VerifyException(f"If Reduce equals Column, then Result Type must have the same "
                                  f"number of columns as Matrix ({m.columns} vs {r.columns}) "
                                  f"({inst})")
        check_workgroup_scope(self, m, r)
        f = lookup_func(self, self.combine_func, "CombineFunc")
        ins, outs = f.function_type.inputs.data, f.function_type.outputs.data
        t = m.element_type
        if len(ins) != 2 or any(x != t for x in ins) or len(outs) != 1 or outs[0] != t:
            raise VerifyException(f"CombineFunc must be an OpFunction with two parameters whose "
                                  f"types and result type all match the component type of Matrix "
                                  f"({t}) ({inst})")


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Change the Use of an accumulator to A or B (OpCooperativeMatrixConvertNV)."""

    name = "coop.convert"
    matrix = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())
    assembly_format = "$matrix attr-dict `:` type($matrix) `->` type($result)"

    def __init__(self, matrix: SSAValue, result_type: MatrixType):
        super().__init__(operands=[matrix], result_types=[result_type])

    def verify_(self) -> None:
        inst = "OpCooperativeMatrixConvertNV"
        m, r = _m(self.matrix), _m(self.result)
        if (m.element_type, m.scope_value, m.rows, m.columns) != (
                r.element_type, r.scope_value, r.rows, r.columns):
            raise VerifyException(f"The type of Matrix must have the same Component Type, Scope, "
                                  f"Rows, and Columns as Result Type ({inst})")
        if r.use_value not in (Use.MatrixA, Use.MatrixB):
            raise VerifyException(f"The Use of Result Type must be MatrixAKHR or MatrixBKHR "
                                  f"({inst})")
        if m.use_value != Use.MatrixAcc:
            raise VerifyException(f"the Use of Matrix must be MatrixAccumulatorKHR ({inst})")
        check_workgroup_scope(self, m)


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Accumulator (R×C) to a transposed MatrixB (C×R) (OpCooperativeMatrixTransposeNV).

    The component types must be equal too (coopdialect's reading: the text lists only Scope and
    the swapped sizes, and gives no conversion semantics; use a conversion op first)."""

    name = "coop.transpose"
    matrix = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())
    assembly_format = "$matrix attr-dict `:` type($matrix) `->` type($result)"

    def __init__(self, matrix: SSAValue, result_type: MatrixType):
        super().__init__(operands=[matrix], result_types=[result_type])

    def verify_(self) -> None:
        inst = "OpCooperativeMatrixTransposeNV"
        m, r = _m(self.matrix), _m(self.result)
        if m.scope_value != r.scope_value:
            raise VerifyException(f"The type of Matrix must have the same Scope as Result Type "
                                  f"({inst})")
        if (m.rows, m.columns) != (r.columns, r.rows):
            raise VerifyException(f"Matrix must have Rows and Columns swapped relative to Result "
                                  f"Type: {m.rows}x{m.columns} vs {r.rows}x{r.columns} ({inst})")
        if r.use_value != Use.MatrixB:
            raise VerifyException(f"The Use of Result Type must be MatrixBKHR ({inst})")
        if m.use_value != Use.MatrixAcc:
            raise VerifyException(f"the Use of Matrix must be MatrixAccumulatorKHR ({inst})")
        if m.element_type != r.element_type:
            raise VerifyException(f"Matrix and Result Type must have the same Component Type "
                                  f"(coopdialect; convert the type first) ({inst})")
        check_workgroup_scope(self, m)


@irdl_op_definition
class PerElementOp(IRDLOperation):
    """Apply a function to every element (OpCooperativeMatrixPerElementOpNV).

    `%r = coop.per_element_op @f(%m, %s, %other) : !M, f32, !M -> !M`; Func gets (row, col,
    element, extra...) for each element.
    """

    name = "coop.per_element_op"
    matrix = operand_def(MatrixType)
    extra = var_operand_def()
    func = prop_def(SymbolRefAttr)
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    def __init__(self, fn: str | SymbolRefAttr, matrix: SSAValue, extra: Sequence[SSAValue] = ()):
        if isinstance(fn, str):
            fn = SymbolRefAttr(fn)
        super().__init__(operands=[matrix, list(extra)], result_types=[matrix.type],
                         properties={"func": fn})

    @classmethod
    def parse(cls, parser: Parser) -> PerElementOp:
        sym = parser.parse_symbol_name()
        names = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                  parser.parse_unresolved_operand)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        if len(types) != len(names):
            parser.raise_error(f"{len(names)} operands but {len(types)} types")
        ops = [parser.resolve_operand(n, t) for n, t in zip(names, types)]
        op = cls.build(operands=[ops[0], ops[1:]], result_types=[rt],
                       properties={"func": SymbolRefAttr(sym.data)})
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.func)
        printer.print_string("(")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.operands], printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        inst = "OpCooperativeMatrixPerElementOpNV"
        m = _m(self.matrix)
        if self.result.type != m:
            raise VerifyException(f"Result Type must match the type of Matrix ({inst})")
        check_workgroup_scope(self, m)
        f = lookup_func(self, self.func, "Func")
        ins, outs = f.function_type.inputs.data, f.function_type.outputs.data
        t = m.element_type
        if len(outs) != 1 or outs[0] != t:
            raise VerifyException(f"Func's return type must match the component type of Matrix "
                                  f"({t}) ({inst})")
        if len(ins) < 3 or not _is_i32(ins[0]) or not _is_i32(ins[1]) or ins[2] != t:
            raise VerifyException(f"Func's first two parameters must be 32-bit integer types and "
                                  f"its third parameter type must match the component type of "
                                  f"Matrix ({t}) ({inst})")
        if len(ins) != 3 + len(self.extra):
            raise VerifyException(f"Func takes {len(ins) - 3} additional parameters but "
                                  f"{len(self.extra)} optional operands are given ({inst})")
        for i, (v, p) in enumerate(zip(self.extra, ins[3:])):
            if isinstance(v.type, MatrixType):
                if v.type != m:
                    raise VerifyException(f"an additional cooperative matrix operand must have "
                                          f"the type of Matrix: operand {i} is {v.type} ({inst})")
                if p != t:
                    raise VerifyException(f"the component type of additional matrix operand {i} "
                                          f"must match the type of parameter {3 + i} of Func "
                                          f"({p}) ({inst})")
            elif v.type != p:
                raise VerifyException(f"additional operand {i} has type {v.type} but parameter "
                                      f"{3 + i} of Func has type {p} ({inst})")


NV2_OPS = (LoadTensorOp, StoreTensorOp, ReduceOp, ConvertOp, TransposeOp, PerElementOp)
