"""Generate ``coopdialect/spirv/grammar_tables.py`` from the Khronos ``spirv.core.grammar.json``
and the grammar of the GLSL.std.450 extended instruction set.

Usage::

    python tools/gen_spirv_tables.py [GRAMMAR_JSON] [--glsl GLSL_GRAMMAR_JSON] [-o OUTPUT]

GRAMMAR_JSON defaults to ``$SPIRV_GRAMMAR``, else ``$SPIRV_TOOLS_CACHE/spirv.core.grammar.json``,
else ``~/.cache/coopdialect/spirv-tools-forky/spirv.core.grammar.json``. GLSL_GRAMMAR_JSON defaults to
``$SPIRV_GLSL_GRAMMAR``, else ``extinst.glsl.std.450.grammar.json`` in the directory of the core
grammar (its symbolic link followed: SPIRV-Headers installs both in ``include/spirv/unified1``).
The output is a pure function of the grammars (sorted keys, ``repr`` of plain tuples/dicts), so
regenerating is byte-identical.
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
    return Path.home() / ".cache" / "coopdialect" / "spirv-tools-forky" / "spirv.core.grammar.json"


GLSL_GRAMMAR_NAME = "extinst.glsl.std.450.grammar.json"


def default_glsl_grammar_path(core: Path) -> Path:
    """The GLSL.std.450 grammar: ``$SPIRV_GLSL_GRAMMAR``, else next to the (resolved) core grammar."""
    if os.environ.get("SPIRV_GLSL_GRAMMAR"):
        return Path(os.environ["SPIRV_GLSL_GRAMMAR"])
    return core.resolve().parent / GLSL_GRAMMAR_NAME


def _t(xs) -> tuple:
    return tuple(xs or ())


def _version(entry: dict) -> str | None:
    v = entry.get("version")
    return None if v in (None, "None") else v


def render(grammar: dict, glsl: dict) -> str:
    """Return the text of the generated module for the parsed core and GLSL.std.450 grammars."""
    version = f"{grammar['major_version']}.{grammar['minor_version']} rev {grammar['revision']}"
    instructions = {}
    instruction_aliases = {}
    for ins in grammar["instructions"]:
        for alias in ins.get("aliases", ()):
            instruction_aliases[alias] = ins["opname"]
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
    # An alias (a name the grammar kept when an instruction or enumerant was promoted, e.g.
    # OpCooperativeMatrixReduceNV -> OpCooperativeMatrixReduceEXT) is looked up like its target:
    # the tables hold it as a key with the target's entry. Reverse maps (OPCODE_NAMES, and
    # enumerant names by value) give the grammar's own name only.
    for alias, name in instruction_aliases.items():
        instructions.setdefault(alias, instructions[name])
    for kind, table in aliases.items():
        for alias, name in table.items():
            enums[kind].setdefault(alias, enums[kind][name])
    implies = {}
    cap_ext = {}
    for name, (_, caps, exts, _, _) in enums["Capability"].items():
        implies[name] = caps  # a capability's "capabilities" are the ones it implicitly declares
        cap_ext[name] = exts
    glsl_instructions = {
        ins["opname"]: (
            ins["opcode"],
            tuple((o["kind"], o.get("quantifier", ""), o.get("name", "").strip("'")) for o in ins.get("operands", ())),
            _t(ins.get("capabilities")),
        )
        for ins in glsl["instructions"]
    }
    opcode_names = {}
    for name, (opcode, *_rest) in sorted(instructions.items()):
        if name not in instruction_aliases:
            opcode_names.setdefault(opcode, name)  # two opnames may share an opcode: keep the first

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
        f"Grammar: spirv.core.grammar.json version {version}; "
        f"{GLSL_GRAMMAR_NAME} version {glsl['version']} rev {glsl['revision']}.\n"
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
        block("INSTRUCTION_ALIASES", "alias opname -> opname", instruction_aliases),
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
        f"GLSL_STD_450_VERSION = ({glsl['version']}, {glsl['revision']})\n",
        block(
            "GLSL_STD_450",
            "GLSL.std.450 extended instruction -> (instruction number, ((operand kind, quantifier, "
            "name), ...), capabilities)",
            glsl_instructions,
        ),
    ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("grammar", nargs="?", type=Path, default=None)
    ap.add_argument("--glsl", type=Path, default=None, help="extinst.glsl.std.450.grammar.json")
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    args = ap.parse_args(argv)
    path = args.grammar or default_grammar_path()
    if not path.is_file():
        print(f"error: SPIR-V grammar not found at {path} (set SPIRV_GRAMMAR or SPIRV_TOOLS_CACHE)", file=sys.stderr)
        return 1
    glsl_path = args.glsl or default_glsl_grammar_path(path)
    if not glsl_path.is_file():
        print(f"error: GLSL.std.450 grammar not found at {glsl_path} (set SPIRV_GLSL_GRAMMAR or pass --glsl)",
              file=sys.stderr)
        return 1
    text = render(json.loads(path.read_text()), json.loads(glsl_path.read_text()))
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
