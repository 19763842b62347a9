"""The xDSL context coopdialect parses with: the dialects a kernel file may use."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect


def dialect_factories() -> dict[str, Callable[[], Dialect]]:
    """Name -> zero-argument factory for every dialect coopdialect understands.

    The factories import lazily (xDSL's registry convention), so a missing optional backend never
    breaks parsing of the others.
    """

    def builtin():
        from xdsl.dialects.builtin import Builtin
        return Builtin

    def func():
        from xdsl.dialects.func import Func
        return Func

    def arith():
        from xdsl.dialects.arith import Arith
        return Arith

    def math():
        from xdsl.dialects.math import Math
        return Math

    def scf():
        from xdsl.dialects.scf import Scf
        return Scf

    def memref():
        from xdsl.dialects.memref import MemRef
        return MemRef

    def gpu():
        from coopdialect.dialects.gpu import GPU
        return GPU

    def coop():
        from coopdialect.dialects.coop_dialect import Coop
        return Coop

    def tensor_addr():
        from coopdialect.dialects.tensor_addr import TensorAddr
        return TensorAddr

    def spirv():
        from coopdialect.dialects.spirv_dialect import SPIRV
        return SPIRV

    def ptx():
        from coopdialect.dialects.ptx import PTX
        return PTX

    def sparse_mma():
        from coopdialect.dialects.sparse_mma import SparseMma
        return SparseMma

    def test():
        from xdsl.dialects.test import Test
        return Test

    return {"builtin": builtin, "func": func, "arith": arith, "math": math, "scf": scf, "memref": memref,
            "gpu": gpu, "coop": coop, "tensor_addr": tensor_addr, "spirv": spirv, "ptx": ptx, "sparse_mma": sparse_mma,
            "test": test}


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh Context with every coopdialect dialect registered (loaded on first use)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in dialect_factories().items():
        ctx.register_dialect(name, factory)
    return ctx
