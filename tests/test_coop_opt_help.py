"""`coop-opt --help`, `--help-all` and `--list-targets`: what they print is what the passes and
target descriptions accept.

The references are independent of the help code: each option name and default the help prints
is fed back through `-p 'pass{option=default}'` and must build the same pass as `-p pass`; each
target row comes from the JSON files read here directly.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from coopdialect.passes import get_all_passes
from coopdialect.tools import coop_opt

ROOT = Path(__file__).resolve().parent.parent


def _run(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as e:
        coop_opt.main(list(argv))
    assert e.value.code in (0, None)
    return capsys.readouterr().out


def _options_in_help(text: str) -> dict[str, dict[str, tuple[str, str]]]:
    """{pass: {option: (type, default)}} as printed under each pass of the help."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        if m := re.fullmatch(r"  ([a-z][a-z0-9-]+)", line):
            current = out.setdefault(m.group(1), {})
        elif current is not None and (m := re.fullmatch(r"      ([a-z0-9-]+): (\w+) = (\S+)", line)):
            current[m.group(1)] = (m.group(2), m.group(3))
    return out


def test_help_leads_with_coop_passes_and_every_option(capsys):
    text = _run(capsys, "--help")
    passes = _options_in_help(text)
    assert list(passes) == list(get_all_passes())
    # the options printed are exactly the pass's dataclass fields, with their documented meaning
    for name, factory in get_all_passes().items():
        cls = factory()
        fields = {f.name.replace("_", "-") for f in dataclasses.fields(cls)}
        assert set(passes[name]) == fields, name
    # the coop passes come before the option list; xDSL's passes are not listed
    assert text.index("convert-coop-to-ptx\n") < text.index("options:")
    assert "csl-stencil" not in text and "convert-riscv" not in text


def test_every_option_has_a_meaning(capsys):
    text = _run(capsys, "--help")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.fullmatch(r"      [a-z0-9-]+: \w+ = \S+", line):
            assert lines[i + 1].startswith("          ") and "(undocumented)" not in lines[i + 1], line


@pytest.mark.parametrize("pass_name", list(get_all_passes()))
def test_printed_defaults_are_the_passes_defaults(capsys, tmp_path, pass_name):
    """`-p 'pass{opt=default,...}'` with the printed names and defaults must be accepted and build
    the same pass as plain `-p pass`."""
    from xdsl.utils.arg_spec import parse_spec

    printed = _options_in_help(_run(capsys, "--help"))[pass_name]
    cls = get_all_passes()[pass_name]()
    if not printed:
        return
    spec = pass_name + "{" + " ".join(f"{k}={v}" for k, (_, v) in printed.items()) + "}"
    assert cls.from_spec(parse_spec(spec)) == cls()


def test_help_all_lists_xdsl_passes_and_targets(capsys):
    text = re.sub(r"(?<=[a-z])-\s*\n\s*", "-", _run(capsys, "--help-all"))  # argparse's wrapping
    assert text.startswith("usage: coop-opt ")
    assert "csl-stencil" in text and "convert-scf-to-cf" in text
    assert "riscv-asm" in text and "ptx-launch" in text
    assert "convert-coop-to-ptx\n" in text


def test_list_targets_gives_every_native_shape(capsys):
    text = _run(capsys, "--list-targets")
    for path in sorted((ROOT / "coopdialect" / "targets").glob("*.json")):
        data = json.loads(path.read_text())
        block = text.split(f"  {data['name']}  (", 1)[1].split("\n\n", 1)[0]
        assert f"subgroup size {data['subgroup_size']}" in block
        for row in data["cooperative_matrix"]:
            assert (f"{row['m']}x{row['n']}x{row['k']} {row['a']}*{row['b']}+{row['c']}->"
                    f"{row['result']}") in block, (path.name, row)
        for row in data.get("ptx", {}).get("wgmma", []):
            assert f"wgmma: m{row['m']}nNk{row['k']} {row['a']}*{row['b']}" in block
        assert block.count("flexible:") == len(data["flexible_dimensions"])
        for row in data["flexible_dimensions"]:
            top = "x".join(map(str, row["max"])) if "max" in row else data["flexible_max_dimension"]
            assert (f"flexible: multiples of {'x'.join(map(str, row['granularity']))} up to {top}, "
                    f"{row['a']}*{row['b']}+{row['c']}->{row['result']} ({row['scope']}") in block
