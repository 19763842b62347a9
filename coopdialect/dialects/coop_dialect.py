"""The `coop` Dialect object: the ops and attributes of `coop.py` (SPV_KHR/NV_cooperative_matrix),
`coop_nv2.py` (SPV_NV_cooperative_matrix2) and `coop_async.py` (the staged form), registered as
one dialect. It sits above the three modules, which import only downward (coop_nv2 and coop_async
build on coop)."""

from __future__ import annotations

from xdsl.ir import Dialect

from coopdialect.dialects.coop import (
    CONVERSIONS,
    ELEMENTWISE_BINARY,
    ELEMENTWISE_UNARY,
    CompositeConstructOp,
    ExtractOp,
    InsertOp,
    LayoutAttr,
    LengthOp,
    LoadOp,
    MatrixOperandsAttr,
    MatrixTimesScalarOp,
    MatrixType,
    MemoryAccessAttr,
    MulAddOp,
    ScopeAttr,
    StorageClassAttr,
    StoreOp,
    UseAttr,
)
from coopdialect.dialects.coop_async import ASYNC_OPS
from coopdialect.dialects.coop_nv2 import NV2_OPS

Coop = Dialect(
    "coop",
    [
        LoadOp,
        StoreOp,
        MulAddOp,
        LengthOp,
        CompositeConstructOp,
        ExtractOp,
        InsertOp,
        *ELEMENTWISE_UNARY,
        *ELEMENTWISE_BINARY,
        MatrixTimesScalarOp,
        *CONVERSIONS,
        *NV2_OPS,
        *ASYNC_OPS,
    ],
    [ScopeAttr, UseAttr, LayoutAttr, StorageClassAttr, MatrixOperandsAttr, MatrixType,
     MemoryAccessAttr],
)
