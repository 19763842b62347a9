"""Host expressions: integers the host computes from a launch's scalar arguments.

A kernel's declared grid (`coop.grid`) and, in a launch description, a tensor map's sizes may
depend on the kernel's scalar arguments. They travel as JSON-able values of this small language:

* an int literal: `64`;
* `{"arg": i}`: the value of the kernel's argument i (a scalar integer argument; i counts every
  argument, memrefs included, from 0);
* `{"op": OP, "args": [e1, e2]}` with OP one of `add`, `sub`, `mul`, `floordiv`, `ceildiv`,
  `mod`, `min`, `max`.

Values are exact Python ints (no overflow). `floordiv` rounds toward negative infinity, `ceildiv`
toward positive infinity and `mod` is the non-negative remainder of a positive divisor: MLIR's
affine semantics (`floorDiv`, `ceilDiv`, `mod` of mlir/Support/MathExtras.h), which the affine
maps that declare grids use. A zero divisor, or `mod` by a negative number (undefined in MLIR),
is a ValueError.

`from_affine(expr, symbol_args)` builds an expression from an xDSL AffineExpr whose symbol k
stands for argument `symbol_args[k]`; `eval_host_expr(expr, scalars)` evaluates one;
`check_host_expr(expr, nargs)` says what is wrong with a malformed one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Union

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

HostExpr = Union[int, dict]
"""An int literal, `{"arg": i}` or `{"op": ..., "args": [e1, e2]}` (see the module docstring)."""

MAX_DEPTH = 64
"""Deepest nesting `check_host_expr` accepts (a launch description is read from a file)."""


def _floordiv(a: int, b: int) -> int:
    if b == 0:
        raise ValueError("host expression: floordiv by zero")
    return a // b  # Python's // rounds toward negative infinity, as MLIR's floorDiv


def _ceildiv(a: int, b: int) -> int:
    if b == 0:
        raise ValueError("host expression: ceildiv by zero")
    return -(-a // b)


def _mod(a: int, b: int) -> int:
    if b <= 0:
        raise ValueError(f"host expression: mod by {b} (MLIR defines mod for a positive divisor)")
    return a % b  # in [0, b) for b > 0, as MLIR's mod


OPS: dict[str, Callable[[int, int], int]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": _floordiv,
    "ceildiv": _ceildiv, "mod": _mod, "min": min, "max": max,
}

_AFFINE_OPS = {AffineBinaryOpKind.Add: "add", AffineBinaryOpKind.Mul: "mul",
               AffineBinaryOpKind.FloorDiv: "floordiv", AffineBinaryOpKind.CeilDiv: "ceildiv",
               AffineBinaryOpKind.Mod: "mod"}


def _int(v: object, what: str) -> int:
    if isinstance(v, bool):
        raise ValueError(f"{what} must be an integer, got {v!r}")
    try:
        return operator.index(v)  # int, numpy integers
    except TypeError:
        raise ValueError(f"{what} must be an integer, got {type(v).__name__} {v!r}") from None


def eval_host_expr(expr: HostExpr, scalars: Mapping[int, int] | Sequence[int]) -> int:
    """The value of `expr` (an exact Python int) where `{"arg": i}` is `scalars[i]` (a mapping
    from argument index to value, or a sequence indexed by argument index).

    Raises ValueError for a malformed expression, an argument `scalars` lacks or that is not an
    integer, and a zero divisor or `mod` by a negative number."""
    if isinstance(expr, bool):
        raise ValueError(f"host expression: {expr!r} is not an int, {{'arg': i}} or {{'op': ...}}")
    if isinstance(expr, int):
        return expr
    if not isinstance(expr, dict):
        raise ValueError(f"host expression: {expr!r} is not an int, {{'arg': i}} or {{'op': ...}}")
    if "arg" in expr:
        i = expr["arg"]
        try:
            value = scalars[i]
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"host expression: no value for argument {i!r}") from None
        return _int(value, f"argument {i}")
    op, args = expr.get("op"), expr.get("args")
    if op not in OPS or not isinstance(args, list) or len(args) != 2:
        raise ValueError(f"host expression: {expr!r} is not an int, {{'arg': i}} or "
                         f"{{'op': one of {', '.join(OPS)}, 'args': [e1, e2]}}")
    return OPS[op](eval_host_expr(args[0], scalars), eval_host_expr(args[1], scalars))


def check_host_expr(expr: object, arg_ok: Callable[[int], bool], depth: int = 0) -> str | None:
    """What is wrong with `expr` as a host expression (None when nothing): its shape, an
    operator outside OPS, or an `{"arg": i}` for which `arg_ok(i)` is false (say, i is not an
    integer scalar argument)."""
    if depth > MAX_DEPTH:
        return f"nests deeper than {MAX_DEPTH} levels"
    if isinstance(expr, bool) or not isinstance(expr, int | dict):
        return f"{expr!r} is not an int, {{\"arg\": i}} or {{\"op\": ..., \"args\": [e1, e2]}}"
    if isinstance(expr, int):
        return None
    if "arg" in expr:
        i = expr["arg"]
        if set(expr) != {"arg"} or isinstance(i, bool) or not isinstance(i, int) or not arg_ok(i):
            return f"{expr!r} does not name an integer scalar argument"
        return None
    op, args = expr.get("op"), expr.get("args")
    if set(expr) != {"op", "args"} or op not in OPS:
        return f"{expr!r} is not {{\"op\": one of {', '.join(OPS)}, \"args\": [e1, e2]}}"
    if not isinstance(args, list) or len(args) != 2:
        return f"operator {op} takes two operands, got {args!r}"
    for a in args:
        if (why := check_host_expr(a, arg_ok, depth + 1)) is not None:
            return why
    return None


def is_constant(expr: HostExpr) -> bool:
    """True when `expr` names no argument (its value is known without the launch's scalars)."""
    if isinstance(expr, dict):
        return "arg" not in expr and all(is_constant(a) for a in expr.get("args", []))
    return True


def from_affine(expr: AffineExpr, symbol_args: Sequence[int]) -> HostExpr:
    """The host expression of an xDSL AffineExpr without dims, symbol k being argument
    `symbol_args[k]`. `x + y * -1` becomes `sub` (how MLIR spells a difference); constant
    subexpressions fold. Raises ValueError for a dim, or a symbol past `symbol_args`."""
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    if isinstance(expr, AffineSymExpr):
        if not 0 <= expr.position < len(symbol_args):
            raise ValueError(f"symbol s{expr.position} has no argument ({len(symbol_args)} "
                             "symbols)")
        return {"arg": symbol_args[expr.position]}
    if isinstance(expr, AffineDimExpr):
        raise ValueError(f"dimension d{expr.position}: a host expression has symbols only")
    assert isinstance(expr, AffineBinaryOpExpr), expr
    op = _AFFINE_OPS[expr.kind]
    lhs = from_affine(expr.lhs, symbol_args)
    rhs_expr = expr.rhs
    if (op == "add" and isinstance(rhs_expr, AffineBinaryOpExpr)
            and rhs_expr.kind == AffineBinaryOpKind.Mul
            and isinstance(rhs_expr.rhs, AffineConstantExpr) and rhs_expr.rhs.value == -1):
        op, rhs = "sub", from_affine(rhs_expr.lhs, symbol_args)
    else:
        rhs = from_affine(rhs_expr, symbol_args)
    out = {"op": op, "args": [lhs, rhs]}
    if is_constant(out):
        return eval_host_expr(out, {})
    return out


def to_text(expr: HostExpr, names: Mapping[int, str] | None = None) -> str:
    """`expr` as readable text (`ceildiv(N, 64)`), arguments by `names` (else `arg<i>`)."""
    if isinstance(expr, int):
        return str(expr)
    if "arg" in expr:
        i = expr["arg"]
        return (names or {}).get(i, f"arg{i}")
    a, b = (to_text(x, names) for x in expr["args"])
    infix = {"add": "+", "sub": "-", "mul": "*"}
    if expr["op"] in infix:
        return f"({a} {infix[expr['op']]} {b})"
    return f"{expr['op']}({a}, {b})"
