"""Grammar-driven encoding of SPIR-V operands (SPIR-V spec 2.2.1 "Instructions", 2.3 "Physical
Layout"). Word counts are in 32-bit words; strings are UTF-8, nul-terminated, padded to a word."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from coopdialect.spirv.grammar_tables import ENUM_ALIASES, ENUMS, INSTRUCTIONS, OPERAND_KINDS

ID_KINDS = ("IdRef", "IdScope", "IdMemorySemantics")


def encode_string(s: str) -> list[int]:
    """A LiteralString as words (little-endian bytes, at least one nul)."""
    data = s.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]


def decode_string(words: Sequence[int], pos: int) -> tuple[str, int]:
    """Decode a LiteralString starting at `pos`; returns (text, words consumed).
    Raises ValueError when no nul terminator is found."""
    raw = bytearray()
    i = pos
    while i < len(words):
        raw += words[i].to_bytes(4, "little")
        i += 1
        if 0 in raw[-4:]:
            return raw[: raw.index(0)].decode(errors="replace"), i - pos
    raise ValueError("unterminated string")


def encode_enum(kind: str, text: str, scope_id: Callable[[int], object] | None = None) -> list:
    """Encode an enum operand text ("A|B(3)") of grammar kind `kind`: the value word, then the
    parameters of each named enumerant (bits in increasing value order for a BitEnum). An IdScope
    parameter (a Scope name in the text) becomes `scope_id(value)`, the <id> of a constant
    holding it; ValueError without `scope_id`."""
    from coopdialect.dialects.spirv_types import parse_enum_operand

    def words_of(name: str, params: list[int]) -> list:
        out = []
        for (pkind, _), p in zip(ENUMS[kind][name][3], params):
            if pkind == "IdScope":
                if scope_id is None:
                    raise ValueError(f"{kind} {name}: a scope parameter needs an <id> here")
                out.append(scope_id(p))
            else:
                out.append(p)
        return out

    items = parse_enum_operand(kind, text)
    if OPERAND_KINDS[kind] == "ValueEnum":
        if len(items) != 1:
            raise ValueError(f"{kind} takes one enumerant, got '{text}'")
        name, params = items[0]
        return [ENUMS[kind][name][0], *words_of(name, params)]
    value = 0
    params_by_bit: list[tuple[int, list]] = []
    for name, params in items:
        v = ENUMS[kind][name][0]
        value |= v
        params_by_bit.append((v, words_of(name, params)))
    words = [value]
    for _, params in sorted(params_by_bit):
        words.extend(params)
    return words


_NAME_CACHE: dict[str, dict[int, str]] = {}


def enumerant_name(kind: str, value: int) -> str | None:
    """Grammar name of `value` in enum `kind` (None if unknown): never an alias (ENUM_ALIASES),
    and where two enumerants share a value the first in sort order wins."""
    if kind not in _NAME_CACHE:
        primary: dict[int, str] = {}
        aliases = ENUM_ALIASES.get(kind, {})
        for name, entry in ENUMS[kind].items():
            if name not in aliases:
                primary.setdefault(entry[0], name)
        _NAME_CACHE[kind] = primary
    return _NAME_CACHE[kind].get(value)


def decode_enum(kind: str, words: Sequence[int], pos: int,
                scope_of: Callable[[int], int | None] | None = None) -> tuple[str, int]:
    """Decode an enum operand at `pos` to its text form; returns (text, words consumed). An
    IdScope parameter is written as the name of the Scope that `scope_of(<id>)` finds in the
    constant the <id> names. Raises ValueError for an unknown value, or a parameter that is
    neither a literal nor (with `scope_of`) the <id> of a Scope constant."""
    value = words[pos]
    used = 1
    if OPERAND_KINDS[kind] == "ValueEnum":
        names = [(value, enumerant_name(kind, value))]
    else:
        names = []
        if value == 0:
            names = [(0, enumerant_name(kind, 0))]
        bit = 1
        while bit <= value:
            if value & bit:
                names.append((bit, enumerant_name(kind, bit)))
            bit <<= 1
    parts = []
    for v, name in names:
        if name is None:
            raise ValueError(f"unknown {kind} value {v}")
        params = ENUMS[kind][name][3]
        vals = []
        for pkind, _ in params:
            if pkind not in ("LiteralInteger", "IdScope") or (pkind == "IdScope" and scope_of is None):
                raise ValueError(f"{kind} {name} has a {pkind} parameter (unsupported)")
            if pos + used >= len(words):
                raise ValueError(f"missing parameter of {kind} {name}")
            if pkind == "IdScope":
                scope = scope_of(words[pos + used])
                sname = None if scope is None else enumerant_name("Scope", scope)
                if sname is None:
                    raise ValueError(f"{kind} {name}: its scope <id> {words[pos + used]} is not "
                                     "a constant holding a Scope")
                vals.append(sname)
            else:
                vals.append(words[pos + used])
            used += 1
        parts.append(name + (f"({', '.join(map(str, vals))})" if vals else ""))
    return "|".join(parts), used


def operand_layout(opname: str) -> tuple[tuple[str, str, str], ...]:
    """Grammar operands of `opname` after IdResultType/IdResult."""
    return tuple(o for o in INSTRUCTIONS[opname][1] if o[0] not in ("IdResultType", "IdResult"))


def has_result(opname: str) -> tuple[bool, bool]:
    """(has result type, has result id) for `opname`."""
    kinds = [o[0] for o in INSTRUCTIONS[opname][1]]
    return "IdResultType" in kinds, "IdResult" in kinds


def encode_operands(opname: str, items: Sequence[object], id_of: Callable[[object], object],
                    scope_id: Callable[[int], object] | None = None) -> list[object]:
    """Encode `items` (see `SpirvInstruction.spirv_operands`) following the grammar operand list.

    Id operands go through `id_of` (which may return a placeholder); ints are literals; strings
    LiteralStrings; ("enum", kind, text) enum operands. Raises ValueError when the items do not
    match the grammar (missing required operand, extra operand, wrong kind)."""
    out: list[object] = []
    i = 0
    skipped = ""
    for kind, quant, name in operand_layout(opname):
        label = name or kind
        while True:
            if i < len(items) and skipped:
                # optional operands are positional: a later one cannot follow an absent one
                raise ValueError(f"{opname}: operand '{label}' needs the optional operand '{skipped}' before it")
            if i >= len(items):
                if quant == "":
                    raise ValueError(f"{opname}: missing operand '{label}'")
                break
            item = items[i]
            cat = OPERAND_KINDS[kind]
            if kind in ID_KINDS:
                ok = not isinstance(item, (int, str, tuple))
            elif kind == "LiteralString":
                ok = isinstance(item, str)
            elif cat in ("ValueEnum", "BitEnum"):
                ok = isinstance(item, tuple) and item[1] == kind
            elif kind in ("LiteralInteger", "LiteralContextDependentNumber"):
                ok = isinstance(item, int) and not isinstance(item, bool)
            else:
                raise ValueError(f"{opname}: operand kind {kind} is not supported")
            if not ok:
                if quant == "":
                    raise ValueError(f"{opname}: operand '{label}' has the wrong kind")
                if quant == "?":
                    skipped = label
                break
            if kind in ID_KINDS:
                out.append(id_of(item))
            elif kind == "LiteralString":
                out.extend(encode_string(item))  # type: ignore[arg-type]
            elif cat in ("ValueEnum", "BitEnum"):
                out.extend(encode_enum(kind, item[2], scope_id))  # type: ignore[index]
            else:
                out.append(item & 0xFFFFFFFF)  # type: ignore[operator]
            i += 1
            if quant != "*":
                break
    if i != len(items):
        raise ValueError(f"{opname}: {len(items) - i} operand(s) too many")
    return out


def decode_operands(opname: str, words: Sequence[int],
                    scope_of: Callable[[int], int | None] | None = None) -> list[tuple[str, object]]:
    """Split the operand words of `opname` (after result type/id) into (kind, value) pairs:
    ids as ("id", n), literals ("lit", n), strings ("str", s), enums ("enum", (kind, text)).
    Raises ValueError for too few / too many words or unsupported operand kinds."""
    out: list[tuple[str, object]] = []
    pos = 0
    for kind, quant, name in operand_layout(opname):
        while pos < len(words) or quant == "":
            if pos >= len(words):
                raise ValueError(f"missing operand '{name or kind}'")
            cat = OPERAND_KINDS[kind]
            if kind in ID_KINDS:
                out.append(("id", words[pos]))
                pos += 1
            elif kind == "LiteralString":
                s, n = decode_string(words, pos)
                out.append(("str", s))
                pos += n
            elif cat in ("ValueEnum", "BitEnum"):
                text, n = decode_enum(kind, words, pos, scope_of)
                out.append(("enum", (kind, text)))
                pos += n
            elif kind in ("LiteralInteger", "LiteralContextDependentNumber"):
                out.append(("lit", words[pos]))
                pos += 1
            else:
                raise ValueError(f"operand kind {kind} is not supported")
            if quant != "*":
                break
    if pos != len(words):
        raise ValueError(f"{len(words) - pos} operand word(s) too many")
    return out
