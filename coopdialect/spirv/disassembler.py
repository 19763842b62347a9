"""A SPIR-V disassembler driven by the generated grammar tables (`coop-opt -t spirv-asm`).

The text follows spirv-dis's syntax (`%id = OpName %type operands`, enums by name, strings quoted,
`OpName`d ids printed by their name), so it reads like the Khronos tool's output and spirv-as can
assemble it back; it needs no external tool.
"""

from __future__ import annotations

import struct

import numpy as np

from coopdialect.spirv.encoding import decode_string, enumerant_name, has_result, operand_layout
from coopdialect.spirv.grammar_tables import ENUMS, MAGIC_NUMBER, OPCODE_NAMES, OPERAND_KINDS


def _words(data: bytes) -> list[int]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"disassemble: the binary must be bytes, got {'None' if data is None else type(data).__name__}")
    data = bytes(data)
    if len(data) < 20 or len(data) % 4:
        raise ValueError("not a SPIR-V binary: length must be a multiple of 4 bytes and >= 20")
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    if words[0] != MAGIC_NUMBER:
        raise ValueError(f"not a little-endian SPIR-V binary (magic {words[0]:#010x})")
    return words


def _instructions(words: list[int]):
    pos = 5
    while pos < len(words):
        count, opcode = words[pos] >> 16, words[pos] & 0xFFFF
        if count == 0 or pos + count > len(words):
            raise ValueError(f"word {pos}: bad instruction word count {count}")
        if opcode not in OPCODE_NAMES:
            raise ValueError(f"word {pos}: unknown opcode {opcode}")
        yield pos, OPCODE_NAMES[opcode], words[pos + 1 : pos + count]
        pos += count


def disassemble(data: bytes) -> str:
    """SPIR-V assembly text of `data` (a binary module, bytes). Raises ValueError on a malformed
    binary (one line: the word offset of the instruction at fault), TypeError if `data` is not
    bytes."""
    words = _words(data)
    names: dict[int, str] = {}
    float_width: dict[int, int] = {}
    for pos, opname, ops in _instructions(words):
        try:
            if opname == "OpName":
                names[ops[0]] = decode_string(ops, 1)[0]
            elif opname == "OpTypeFloat":
                float_width[ops[0]] = ops[1]
        except (IndexError, ValueError, UnicodeDecodeError):
            raise ValueError(f"word {pos}: {opname}: too few operand words ({len(ops)})") from None

    def ref(n: int) -> str:
        return f"%{names.get(n, n)}"

    version = words[1]
    lines = [
        "; SPIR-V",
        f"; Version: {(version >> 16) & 0xFF}.{(version >> 8) & 0xFF}",
        f"; Generator: {words[2]:#010x}",
        f"; Bound: {words[3]}",
        f"; Schema: {words[4]}",
    ]
    for pos, opname, ops in _instructions(words):
        try:
            head, parts = _instruction(opname, ops, ref, float_width)
        except (ValueError, IndexError, KeyError) as e:
            # an instruction shorter than its operands (the word count ends it too early)
            raise ValueError(f"word {pos}: {opname}: {e if not isinstance(e, IndexError) else 'too few operand words'}"
                             ) from None
        text = "".join(head) + " ".join(parts)
        lines.append(text.rjust(len(text) + max(0, 15 - len("".join(head)))) if head else " " * 15 + text)
    return "\n".join(lines) + "\n"


def _instruction(opname: str, ops: list[int], ref, float_width: dict[int, int]) -> tuple[list[str], list[str]]:
    """(`%id = ` or nothing, the opname and operand tokens) of one instruction."""
    has_type, has_id = has_result(opname)
    head = []
    i = 0
    result_type = None
    if has_type:
        result_type = ops[i]
        i += 1
    if has_id:
        head.append(f"{ref(ops[i])} = ")
        i += 1
    rest = ops[i:]
    parts = [opname] + ([ref(result_type)] if result_type is not None else [])
    if opname in ("OpConstant", "OpSpecConstant") and result_type in float_width:
        parts.append(_float_literal(rest, float_width[result_type]))
    elif opname in ("OpConstant", "OpSpecConstant"):
        parts.append(str(rest[0] if len(rest) == 1 else rest[0] | rest[1] << 32))
    else:
        parts += _operands(opname, rest, ref)
    return head, parts


def _float_literal(words: list[int], width: int) -> str:
    if width == 16:
        value = np.array([words[0] & 0xFFFF], np.uint16).view(np.float16)[0]
    elif width == 32:
        value = np.array([words[0]], np.uint32).view(np.float32)[0]
    else:
        value = np.array([words[0] | words[1] << 32], np.uint64).view(np.float64)[0]
    return repr(float(value))


def _operands(opname: str, words: list[int], ref) -> list[str]:
    """Operand words of `opname` (after result type and id) as assembly tokens."""
    out: list[str] = []
    pos = 0
    for kind, quant, _name in operand_layout(opname):
        while pos < len(words) or quant == "":
            text, pos = _operand(kind, words, pos, ref)
            out.append(text)
            if quant != "*":
                break
    if pos != len(words):
        raise ValueError(f"{len(words) - pos} operand word(s) too many")
    return out


_PAIRS = {"PairIdRefIdRef": ("IdRef", "IdRef"),
          "PairLiteralIntegerIdRef": ("LiteralInteger", "IdRef"),
          "PairIdRefLiteralInteger": ("IdRef", "LiteralInteger")}


def _operand(kind: str, words: list[int], pos: int, ref) -> tuple[str, int]:
    category = OPERAND_KINDS[kind]
    if category == "Id":
        return ref(words[pos]), pos + 1
    if kind.startswith("Pair"):  # PairIdRefIdRef, PairLiteralIntegerIdRef, PairIdRefLiteralInteger
        first, second = _PAIRS[kind]
        a, pos = _operand(first, words, pos, ref)
        b, pos = _operand(second, words, pos, ref)
        return f"{a} {b}", pos
    if kind == "LiteralString":
        text, used = decode_string(words, pos)
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"', pos + used
    if category in ("ValueEnum", "BitEnum"):
        value = words[pos]
        pos += 1
        if category == "ValueEnum":
            members = [value]
        else:
            members = [b for b in (1 << i for i in range(32)) if value & b] or [0]
        names, params = [], []
        for v in members:
            name = enumerant_name(kind, v)
            if name is None:
                raise ValueError(f"unknown {kind} value {v}")
            names.append(name)
            for pkind, _ in ENUMS[kind][name][3]:
                text, pos = _operand(pkind, words, pos, ref)
                params.append(text)
        return " ".join(["|".join(names), *params]), pos
    return str(words[pos]), pos + 1
