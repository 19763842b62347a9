"""Parsed IR that tests share: `parse(text, name)` and `parse_file(path)` are coopdialect.api's,
but each (text, name) is parsed once per test process and every call gets a clone of it.

xDSL's parser spends ~0.5 ms per op (attention.mlir: 0.12 s), `Operation.clone` a tenth of
that, and the suite parses the same examples hundreds of times. A clone is the module the
parser makes: the same ops, attributes, properties, `file:line:col` locations and SSA names
(its generic print with locations is identical), and the caller may change it freely. A text
that does not parse raises as `api.parse` does, every time. The tests of the parser itself call
`coopdialect.api` directly.
"""

from __future__ import annotations

import functools
import os

from xdsl.dialects.builtin import ModuleOp

from coopdialect import api


@functools.lru_cache(maxsize=128)
def _parsed(text: str, name: str) -> ModuleOp:
    return api.parse(text, name)


def parse(text: str, name: str = "<string>") -> ModuleOp:
    """`api.parse(text, name)`: a fresh module (a clone of the one parsed first)."""
    return _parsed(text, name).clone()


def parse_file(path: str | os.PathLike) -> ModuleOp:
    """`api.parse_file(path)`: a fresh module (a clone of the one parsed first)."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), os.fsdecode(path))
