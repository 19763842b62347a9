"""Host expressions (coopdialect.host_expr) against Python's and MLIR's arithmetic.

The reference for floordiv/ceildiv/mod is written here from their definitions (math.floor /
math.ceil of the exact rational quotient; the remainder in [0, b)), not from the evaluator's
own operators, and checked on negative operands too."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import scaled
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.parser import Parser

from coopdialect.host_expr import check_host_expr, eval_host_expr, from_affine, to_text

BIG = st.integers(-(1 << 70), 1 << 70)
NONZERO = BIG.filter(lambda b: b != 0)


def _reference(op: str, a: int, b: int) -> int:
    if op == "floordiv":
        return math.floor(Fraction(a, b))
    if op == "ceildiv":
        return math.ceil(Fraction(a, b))
    if op == "mod":  # MLIR: a - b * floor(a / b) for b > 0, in [0, b)
        r = a - b * math.floor(Fraction(a, b))
        assert 0 <= r < b
        return r
    return {"add": a + b, "sub": a - b, "mul": a * b, "min": min(a, b), "max": max(a, b)}[op]


@settings(max_examples=scaled(100), deadline=None)
@given(st.sampled_from(["add", "sub", "mul", "min", "max", "floordiv", "ceildiv"]), BIG, NONZERO)
def test_binary_ops_match_exact_arithmetic(op, a, b):
    expr = {"op": op, "args": [{"arg": 3}, {"arg": 5}]}
    assert eval_host_expr(expr, {3: a, 5: b}) == _reference(op, a, b)


@settings(max_examples=scaled(100), deadline=None)
@given(BIG, st.integers(1, 1 << 40))
def test_mod_of_negative_dividends_is_non_negative(a, b):
    assert eval_host_expr({"op": "mod", "args": [a, b]}, {}) == _reference("mod", a, b)


def test_negative_floor_and_ceil_examples():
    # MLIR: -7 floordiv 2 = -4, -7 ceildiv 2 = -3, -7 mod 2 = 1, 7 floordiv -2 = -4
    ev = lambda op, a, b: eval_host_expr({"op": op, "args": [a, b]}, [])  # noqa: E731
    assert (ev("floordiv", -7, 2), ev("ceildiv", -7, 2), ev("mod", -7, 2)) == (-4, -3, 1)
    assert (ev("floordiv", 7, -2), ev("ceildiv", 7, -2)) == (-4, -3)


@pytest.mark.parametrize("expr, message", [
    ({"op": "floordiv", "args": [1, 0]}, "floordiv by zero"),
    ({"op": "ceildiv", "args": [1, 0]}, "ceildiv by zero"),
    ({"op": "mod", "args": [1, -3]}, "mod by -3"),
    ({"op": "pow", "args": [1, 2]}, "is not an int"),
    ({"arg": 9}, "no value for argument 9"),
    ({"arg": 0}, "argument 0 must be an integer"),
    (True, "is not an int"),
    ("3", "is not an int"),
])
def test_evaluation_errors(expr, message):
    with pytest.raises(ValueError, match=message):
        eval_host_expr(expr, {0: 1.5})


def _affine(text: str):
    ctx = Context()
    ctx.load_dialect(Builtin)
    return Parser(ctx, text).parse_attribute().data


@settings(max_examples=scaled(60), deadline=None)
@given(st.integers(-(1 << 40), 1 << 40), st.integers(-(1 << 40), 1 << 40), st.integers(1, 999))
def test_from_affine_agrees_with_the_map(m, n, c):
    amap = _affine(f"affine_map<()[s0, s1] -> (s0 ceildiv {c}, s1 floordiv {c}, "
                   f"(s0 - s1) mod {c}, s0 * 3 + s1 - 7)>")
    exprs = [from_affine(r, [4, 6]) for r in amap.results]
    got = [eval_host_expr(e, {4: m, 6: n}) for e in exprs]
    want = [_reference("ceildiv", m, c), _reference("floordiv", n, c),
            _reference("mod", m - n, c), 3 * m + n - 7]
    assert got == want


def test_from_affine_spells_differences_and_folds_constants():
    amap = _affine("affine_map<()[s0, s1] -> (s0 - s1, 2 * 3 + 1, s1 ceildiv 64)>")
    exprs = [from_affine(r, [3, 5]) for r in amap.results]
    assert exprs[0] == {"op": "sub", "args": [{"arg": 3}, {"arg": 5}]}
    assert exprs[1] == 7
    assert exprs[2] == {"op": "ceildiv", "args": [{"arg": 5}, 64]}
    assert to_text(exprs[2], {5: "N"}) == "ceildiv(N, 64)"
    with pytest.raises(ValueError, match="dimension d0"):
        from_affine(_affine("affine_map<(d0) -> (d0)>").results[0], [])


@pytest.mark.parametrize("expr, ok", [
    (4, True), ({"arg": 1}, True), ({"arg": 2}, False), ({"arg": True}, False),
    ({"op": "add", "args": [{"arg": 1}, 3]}, True), ({"op": "add", "args": [1]}, False),
    ({"op": "xor", "args": [1, 2]}, False), ({"op": "add", "args": [1, 2], "x": 0}, False),
    (1.5, False), ([1], False),
])
def test_check_host_expr(expr, ok):
    assert (check_host_expr(expr, lambda i: i == 1) is None) == ok


def test_check_host_expr_refuses_deep_nesting():
    e = 1
    for _ in range(100):
        e = {"op": "add", "args": [e, 1]}
    assert "deeper" in check_host_expr(e, lambda i: True)
