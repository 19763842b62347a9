"""What `coop-opt --help` says about coopdialect's passes and target descriptions.

Everything is read from the code, so the help cannot drift from it:

* a pass's summary is the first paragraph of its module's docstring, after the
  "`name{...}`:" that opens it;
* its options are the pass dataclass's fields (`xdsl.passes.get_pass_option_infos`: name, type,
  default), each explained by the docstring written under the field (the attribute-docstring
  convention; `option_docs` reads it from the class source);
* `--list-targets` prints each shipped target description (coopdialect/targets/*.json) with its
  native shapes.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
import textwrap
from dataclasses import dataclass

from xdsl.passes import ModulePass, get_pass_option_infos


@dataclass(frozen=True)
class PassOption:
    """One option of a pass: its command-line name (`-p 'pass{name=value}'`), type, default
    (as the command line spells it) and meaning."""

    name: str
    type: str
    default: str | None
    doc: str


def option_docs(cls: type) -> dict[str, str]:
    """Field name -> the string literal written right under the field in `cls`'s body."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    docs = {}
    for stmt, nxt in zip(body, body[1:]):
        if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            docs[stmt.target.id] = inspect.cleandoc(nxt.value.value)
    return docs


def pass_options(cls: type[ModulePass]) -> list[PassOption]:
    """The options of pass class `cls`, in declaration order; a field without a docstring has
    an empty `doc` (tests/test_coop_opt_help.py requires one for every option)."""
    docs = option_docs(cls)
    return [PassOption(info.name.replace("_", "-"), info.expected_type.strip("'"),
                       info.default_value, docs.get(info.name, ""))
            for info in get_pass_option_infos(cls)
            if info.name in {f.name for f in dataclasses.fields(cls)}]


def pass_summary(cls: type[ModulePass]) -> str:
    """The first paragraph of the pass module's docstring, without its opening "`name`:"."""
    doc = inspect.getdoc(sys.modules[cls.__module__]) or inspect.getdoc(cls) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    if first.startswith("`") and "`: " in first:
        first = first.split("`: ", 1)[1]
    return first[:1].upper() + first[1:]


def _wrap(text: str, indent: int, width: int = 100) -> str:
    return textwrap.fill(" ".join(text.split()), width, initial_indent=" " * indent,
                         subsequent_indent=" " * indent)


def passes_help(passes: dict[str, type[ModulePass]]) -> str:
    """The passes section of `coop-opt --help`: each pass, its summary and its options."""
    out = ["coopdialect passes (-p 'pass{option=value,...},pass,...'; --help-all also lists "
           "xDSL's):", ""]
    for name, cls in passes.items():
        out.append(f"  {name}")
        out.append(_wrap(pass_summary(cls), 6))
        for opt in pass_options(cls):
            default = "" if opt.default is None else f" = {opt.default}"
            out.append(f"      {opt.name}: {opt.type}{default}")
            out.append(_wrap(opt.doc or "(undocumented)", 10))
        out.append("")
    return "\n".join(out)


def _shape(s) -> str:
    sat = " saturating" if s.saturating else ""
    return f"{s.m}x{s.n}x{s.k} {s.a}*{s.b}+{s.c}->{s.result}{sat} ({s.scope})"


def targets_help() -> str:
    """`coop-opt --list-targets`: every shipped target description and its native shapes."""
    from coopdialect.targets import get_target, shipped_targets

    out = ["Target descriptions (legalize-coop-sizes{target=NAME}; any other .json file by path):",
           ""]
    for name in shipped_targets():
        t = get_target(name)
        out.append(f"  {name}  ({t.api}, subgroup size {t.subgroup_size})")
        out.append(_wrap(t.description, 6))
        bf16 = (f"; bf16 (VK_KHR_shader_bfloat16): {'yes' if t.bfloat16 else 'no'}"
                if t.api == "vulkan" else "")
        out.append(f"      layouts: {', '.join(t.layouts)}; tensor addressing: "
                   f"{'yes' if t.tensor_addressing else 'no'}{bf16}")
        out.append("      native shapes (MxNxK A*B+C->Result):")
        out += [f"        {_shape(s)}" for s in t.cooperative_matrix]
        for kind, label in (("wgmma", "wgmma"), ("wgmma_sparse", "2:4 sparse wgmma")):
            for row in (t.ptx or {}).get(kind, []):
                ns = row["n"]
                out.append(f"        {label}: m{row['m']}nNk{row['k']} {row['a']}*{row['b']}+"
                           f"{row['c']}->{row['result']}, N in {ns[0]}..{ns[-1]} ({len(ns)} "
                           "sizes) (Workgroup)")
        for f in t.flexible_dimensions:
            gm, gn, gk = f.granularity
            wg = (f", {f.workgroup_invocations} invocations"
                  if f.workgroup_invocations is not None else "")
            top = ("x".join(map(str, f.max_dimensions)) if f.max_dimensions
                   else t.flexible_max_dimension)
            out.append(f"        flexible: multiples of {gm}x{gn}x{gk} up to {top}, "
                       f"{f.a}*{f.b}+{f.c}->{f.result} ({f.scope}{wg})")
        out.append("")
    return "\n".join(out)
