"""The user docs (README.md, docs/*.md) stand alone and stay true:

* every relative link and every repository path they name exists;
* none points outside the repository (../shared, shared/docs, shared/specs) or at a file that
  is not in it;
* none speaks of how the work was organised (sessions, issue numbers, the lead, device calls);
* the README's five-minute tour runs as written (its GPU lines, marked `# GPU`, are skipped),
  each console script it uses started once as installed (tests/tool_processes.py forks the
  others);
* docs/performance.md's figures are what benchmarks/render_results.py renders from
  benchmarks/results/*.json now.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tool_processes

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
IDS = [str(d.relative_to(ROOT)) for d in DOCS]

TOP = ("coopdialect", "tools", "tests", "docs", "examples", "benchmarks", "passes")
PATH_RE = re.compile(r"(?<![\w./~$-])((?:%s)/[\w./{},*-]*[\w}*])" % "|".join(TOP))
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
EXTERNAL = ("http://", "https://", "mailto:", "#")


def _expand(path: str) -> list[str]:
    """`a_{x,y}.mlir` -> [a_x.mlir, a_y.mlir] (brace lists, as a shell expands them)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [q for alt in m.group(1).split(",")
            for q in _expand(path[:m.start()] + alt + path[m.end():])]


def _exists(path: str) -> bool:
    path = path.rstrip(".")
    if "*" in path:
        return any(ROOT.glob(path))
    # a Python module named by its package path (coopdialect/ptx/fragments) or a folder
    return (ROOT / path).exists() or (ROOT / f"{path}.py").exists()


@pytest.mark.parametrize("doc", DOCS, ids=IDS)
def test_relative_links_exist(doc):
    missing = []
    for target in LINK_RE.findall(doc.read_text()):
        if target.startswith(EXTERNAL):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        if not path.exists():
            missing.append(target)
    assert not missing, f"{doc.name} links to missing files: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=IDS)
def test_repository_paths_exist(doc):
    text = doc.read_text()
    missing = sorted({p for raw in PATH_RE.findall(text) for p in _expand(raw) if not _exists(p)})
    assert not missing, f"{doc.name} names files that are not in the repository: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=IDS)
def test_nothing_outside_the_repository(doc):
    text = doc.read_text()
    for bad in ("../shared", "shared/docs", "shared/specs", "docs/h200.md", "/work/"):
        assert bad not in text, f"{doc.name} points outside the repository: {bad}"


ORGANISATION = re.compile(
    r"\bthe lead\b|\bsessions?\b|\bissues? #?\d+|\bdevice call|\bcarry (?:`?\.|the)|"
    r"\brun \d+ on the|this session", re.I)


@pytest.mark.parametrize("doc", DOCS, ids=IDS)
def test_no_words_about_how_the_work_was_organised(doc):
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(doc.read_text().splitlines(), 1)
            if ORGANISATION.search(line)]
    assert not hits, f"{doc.name}:\n" + "\n".join(hits)


def _tour() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## A five-minute tour", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def _tool_shims(folder: Path, path: str) -> None:
    """coop-opt, coop-run and coop-layout in `folder` for the tour's shell: each one's first
    command line runs the console script installed on `path`, started as a user's shell starts
    it; the later ones are forked from tests/tool_processes.py's server (the same module,
    arguments, files and exit status, without the second of imports of a fresh interpreter)."""
    sock = tool_processes.server()
    for tool in tool_processes.tool_server.MODULES:
        installed = shutil.which(tool, path=path)
        assert installed, f"{tool} is not installed (pip install -e .)"
        shim = folder / tool
        shim.write_text(f"""#!/bin/sh
if mkdir "{folder}/{tool}.started" 2>/dev/null; then exec "{installed}" "$@"; fi
exec "{sys.executable}" -S "{tool_processes.SERVER}" "{sock}" {tool} "$@"
""")
        shim.chmod(0o755)


def test_readme_tour_runs(tmp_path):
    """Every line of the tour without the `# GPU` marker, in a fresh folder next to the examples."""
    lines = _tour()
    gpu = [line for line in lines if re.search(r"#\s*GPU\b", line)]
    assert gpu, "the tour's GPU lines lost their '# GPU' marker"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    script = ["set -euo pipefail"]
    for line in lines:
        if line in gpu:
            continue
        if line.startswith("source .venv/bin/activate"):
            continue  # the test runs in the project's environment already
        script.append(line)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    shims = tmp_path / ".tools"
    shims.mkdir()
    _tool_shims(shims, env["PATH"])
    env["PATH"] = os.pathsep.join([str(shims), env["PATH"]])
    r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"README tour failed:\n{r.stderr[-3000:]}"
    assert (tmp_path / "gemm.spv").stat().st_size > 0


def test_performance_doc_is_current():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "render_results.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
