"""Generate ``coopdialect/spirv/grammar_tables.py`` from the Khronos ``spirv.core.grammar.json``.

Usage::

    python tools/gen_spirv_tables.py [GRAMMAR_JSON] [-o OUTPUT]

GRAMMAR_JSON defaults to ``$SPIRV_GRAMMAR``, else ``$SPIRV_TOOLS_CACHE/spirv.core.grammar.json``,
else ``~/.cache/coopdialect/spirv-tools/spirv.core.grammar.json``. The output is a pure function
of the grammar (sorted keys, ``repr`` of plain tuples/dicts), so regenerating is byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "coopdialect" / "spirv" / "grammar_tables.py"


def default_grammar_path() -> Path:
    """Where the grammar is looked for when no path is given (env first, then the user cache)."""
    if os.environ.get("SPIRV_GRAMMAR"):
        return Path(os.environ["SPIRV_GRAMMAR"])
    if os.environ.get("SPIRV_TOOLS_CACHE"):
        return Path(os.environ["SPIRV_TOOLS_CACHE"]) / "spirv.core.grammar.json"
    return Path.home() / ".cache" / "coopdialect" / "spirv-tools" / "spirv.core.grammar.json"


def _t(xs) -> tuple:
    return tuple(xs or ())


def _version(entry: dict) -> str | None:
    v = entry.get("version")
    return None if v in (None, "None") else v


def render(grammar: dict) -> str:
    """Return the text of the generated module for a parsed grammar."""
    version = f"{grammar['major_version']}.{grammar['minor_version']} rev {grammar['revision']}"
    instructions = {}
    for ins in grammar["instructions"]:
        operands = tuple(
            (o["kind"], o.get("quantifier", ""), o.get("name", "").strip("'")) for o in ins.get("operands", ())
        )
        instructions[ins["opname"]] = (
            ins["opcode"],
            operands,
            _t(ins.get("capabilities")),
            _t(ins.get("extensions")),
            _version(ins),
        )
    kinds = {}
    enums = {}
    aliases: dict[str, dict[str, str]] = {}
    for kind in grammar["operand_kinds"]:
        kinds[kind["kind"]] = kind["category"]
        if kind["category"] not in ("ValueEnum", "BitEnum"):
            continue
        table = {}
        for e in kind["enumerants"]:
            value = e["value"]
            if isinstance(value, str):
                value = int(value, 0)
            params = tuple((p["kind"], p.get("quantifier", "")) for p in e.get("parameters", ()))
            entry = (value, _t(e.get("capabilities")), _t(e.get("extensions")), params, _version(e))
            table[e["enumerant"]] = entry
            for alias in e.get("aliases", ()):
                aliases.setdefault(kind["kind"], {})[alias] = e["enumerant"]
        enums[kind["kind"]] = table
    implies = {}
    cap_ext = {}
    for name, (_, caps, exts, _, _) in enums["Capability"].items():
        implies[name] = caps  # a capability's "capabilities" are the ones it implicitly declares
        cap_ext[name] = exts
    opcode_names = {}
    for name, (opcode, *_rest) in sorted(instructions.items()):
        opcode_names.setdefault(opcode, name)  # aliases share an opcode: keep the first name

    def block(name: str, doc: str, value: dict) -> str:
        # one sorted entry per line: small diffs between grammar versions, stable bytes
        lines = [f"# {doc}", f"{name} = {{"]
        for key in sorted(value):
            item = value[key]
            if isinstance(item, dict):
                lines.append(f"    {key!r}: {{")
                lines.extend(f"        {k!r}: {item[k]!r}," for k in sorted(item))
                lines.append("    },")
            else:
                lines.append(f"    {key!r}: {item!r},")
        lines.append("}")
        return "\n".join(lines) + "\n"

    parts = [
        '"""SPIR-V grammar tables. GENERATED FILE: do not edit.\n\n'
        f"Grammar: spirv.core.grammar.json version {version}.\n"
        "Regenerate with: python tools/gen_spirv_tables.py <spirv.core.grammar.json>\n"
        '"""\n',
        f"MAGIC_NUMBER = {int(grammar['magic_number'], 0)}\n",
        f"GRAMMAR_VERSION = ({grammar['major_version']}, {grammar['minor_version']}, {grammar['revision']})\n",
        block(
            "INSTRUCTIONS",
            "opname -> (opcode, ((operand kind, quantifier, name), ...), capabilities, extensions, version)",
            instructions,
        ),
        block("OPCODE_NAMES", "opcode -> opname (first in sort order when several share an opcode)", opcode_names),
        block("OPERAND_KINDS", "operand kind -> category (ValueEnum, BitEnum, Id, Literal, Composite)", kinds),
        block(
            "ENUMS",
            "enum kind -> enumerant -> (value, capabilities, extensions, "
            "((parameter kind, quantifier), ...), version)",
            enums,
        ),
        block("ENUM_ALIASES", "enum kind -> alias -> enumerant", aliases),
        block("CAPABILITY_IMPLIES", "capability -> capabilities it implicitly declares", implies),
        block("CAPABILITY_EXTENSIONS", "capability -> extensions that enable it", cap_ext),
    ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("grammar", nargs="?", type=Path, default=None)
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    args = ap.parse_args(argv)
    path = args.grammar or default_grammar_path()
    if not path.is_file():
        print(f"error: SPIR-V grammar not found at {path} (set SPIRV_GRAMMAR or SPIRV_TOOLS_CACHE)", file=sys.stderr)
        return 1
    text = render(json.loads(path.read_text()))
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
