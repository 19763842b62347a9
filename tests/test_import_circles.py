"""No import circles in the package: no two modules of coopdialect/, passes/ (coopdialect.passes)
and tools/ (coopdialect.tools) import each other, directly or through others. Every import
statement counts, at module level or inside a function (a lazy import hides a circle, it does
not remove it). Imports of a package's `__init__` do not count: importing a package runs its
`__init__`, which is not a layer of its own.

grimp (import-linter's graph) finds a package's modules under its own directory and so misses
coopdialect.passes and coopdialect.tools, which pyproject.toml maps to passes/ and tools/; the
graph is built here with `ast` instead."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# directory -> the package it is installed as (pyproject.toml's package-dir)
PACKAGES = {"coopdialect": "coopdialect", "passes": "coopdialect.passes", "tools": "coopdialect.tools"}


def modules(root: Path, packages: dict[str, str]) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package directories."""
    out = {}
    for top, name in packages.items():
        base = root / top
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([name, *parts])] = path
    return out


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (any import statement anywhere in the file)."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = m.split(".")
                    base = parts[:len(parts) - node.level + (1 if is_pkg else 0)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and mods[t].name != "__init__.py":
                    graph[m].add(t)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_circles() -> None:
    mods = modules(ROOT, PACKAGES)
    assert "coopdialect.passes.convert_coop_to_ptx" in mods and "coopdialect.tools.coop_opt" in mods
    found = circles(import_graph(mods))
    assert not found, "import circles:\n" + "\n".join(", ".join(c) for c in found)


def test_a_circle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    """The check itself: a circle closed by an import inside a function, one through a relative
    import and a three-module one are found; imports of the package `__init__` are not edges."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg import a\n",
        "a.py": "import pkg\nfrom pkg.b import f\n",
        "b.py": "def f():\n    from pkg import a\n    return a\n",
        "c.py": "from .d import g\n",
        "d.py": "from pkg.sub.e import h\ng = 1\n",
        "sub/__init__.py": "",
        "sub/e.py": "def h():\n    from ..c import g\n    return g\n",
        "lone.py": "import pkg\nfrom pkg import a\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    found = circles(import_graph(modules(tmp_path, {"pkg": "pkg"})))
    assert sorted(found) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d", "pkg.sub.e"]]
