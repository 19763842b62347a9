"""The external tools the suite runs (spirv-val, spirv-dis, ptxas, glslang): found, or a test failure.

A missing validator never skips a test: CI must install it (tools/test.sh does).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL_CACHE = "COOP_TEST_TOOL_CACHE"
"""The environment variable naming this run's folder of tool outputs (tests/conftest.py)."""


def spirv_tool(name: str) -> str:
    """Path of a SPIRV-Tools/glslang binary: PATH, $SPIRV_TOOLS_CACHE/bin, ~/.cache/coopdialect/spirv-tools-forky/bin."""
    found = shutil.which(name)
    candidates = [Path(found)] if found else []
    if os.environ.get("SPIRV_TOOLS_CACHE"):
        candidates.append(Path(os.environ["SPIRV_TOOLS_CACHE"]) / "bin" / name)
    candidates.append(Path.home() / ".cache/coopdialect/spirv-tools-forky/bin" / name)
    for c in candidates:
        if c.is_file():
            return str(c)
    pytest.fail(f"{name} not found on PATH, in $SPIRV_TOOLS_CACHE/bin or ~/.cache/coopdialect/spirv-tools-forky/bin "
                "(install it with tools/install_spirv_tools.sh)")


def spirv_dis(data: bytes, tmp_path: Path, raw_id: bool = False, name: str = "dis.spv") -> str:
    """SPIRV-Tools' disassembly of `data` (`--raw-id`: ids as numbers, not names)."""
    f = tmp_path / name
    f.write_bytes(data)
    r = subprocess.run([spirv_tool("spirv-dis"), *(["--raw-id"] if raw_id else []), str(f)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"spirv-dis rejected {name}:\n{r.stderr}"
    return r.stdout


def spirv_val(data: bytes, tmp_path: Path, name: str = "m.spv") -> None:
    """Assert that `data` passes `spirv-val --target-env vulkan1.3`."""
    f = tmp_path / name
    f.write_bytes(data)
    r = subprocess.run([spirv_tool("spirv-val"), "--target-env", "vulkan1.3", str(f)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"spirv-val rejected {name}:\n{r.stderr}{r.stdout}"


def ptxas() -> str:
    """Path of CUDA's ptxas (PATH or /usr/local/bin), or a test failure."""
    found = shutil.which("ptxas") or ("/usr/local/bin/ptxas" if os.path.isfile("/usr/local/bin/ptxas") else None)
    if found is None:
        pytest.fail("ptxas not found on PATH or at /usr/local/bin/ptxas (CUDA's PTX assembler is required)")
    return found


def run_once(kind: str, key: list[bytes], produce):
    """`produce()` (bytes), or what it gave for the same `key` earlier in this run: a tool's
    output is a function of its inputs and options, and several tests feed some tools the same
    input. Kept in the run's $COOP_TEST_TOOL_CACHE folder (tests/conftest.py), which the
    pytest-xdist workers share; written whole, then renamed, so a worker reads all of it or none."""
    cache = os.environ.get(TOOL_CACHE)
    if not cache:
        return produce()
    digest = hashlib.sha256(b"\0".join(key)).hexdigest()
    kept = Path(cache) / f"{kind}-{digest}"
    if kept.is_file():
        return kept.read_bytes()
    data = produce()
    part = kept.with_suffix(f".{os.getpid()}.part")
    part.write_bytes(data)
    os.replace(part, kept)
    return data


def glslang(source: str | os.PathLike, *defines: str) -> bytes:
    """The SPIR-V binary of `glslangValidator -V --target-env vulkan1.3 DEFINES SOURCE` (a path,
    relative ones from the repository root); a compile error fails the test with glslang's
    output. glslang's binary is a function of the source text and the options (it does not
    record the file's folder), and a compile takes ~0.2 s of CPU, most of it glslang setting up
    its built-in symbols: one run of the suite compiles each (file name, text, options) once, the
    pytest-xdist workers sharing the binaries (`run_once`)."""
    path = ROOT / source
    text = path.read_bytes()
    # a -D of a macro the source never names leaves glslang's binary as it is (no shader of the
    # suite #includes another): dropped, so that a shader compiled with and without
    # `grammar_defines()` (which only tests/data/coopmat_nv_length.comp names) is compiled once
    if b"#include" not in text:
        defines = tuple(d for d in defines
                        if not d.startswith("-D") or d[2:].split("=")[0].encode() in text)
    options = ["-V", "--target-env", "vulkan1.3", *defines]

    def compile_() -> bytes:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.spv"
            r = subprocess.run([spirv_tool("glslangValidator"), *options, "-o", str(out), str(path)],
                               capture_output=True, text=True)
            assert r.returncode == 0, f"glslangValidator failed on {source}:\n{r.stdout}{r.stderr}"
            return out.read_bytes()

    return run_once("glslang", [path.name.encode(), text, *map(str.encode, options)], compile_)


def grammar_defines() -> list[str]:
    """The `-D` options the shaders of tests/data take from the SPIR-V grammar rather than from a
    number typed by hand: SCOPE_SUBGROUP, the Scope enumerant Subgroup."""
    from coopdialect.spirv.grammar_tables import ENUMS

    return [f"-DSCOPE_SUBGROUP={ENUMS['Scope']['Subgroup'][0]}"]
