"""The external validators the suite runs (spirv-val, spirv-dis, ptxas): found, or a test failure.

A missing validator never skips a test: CI must install it (tools/test.sh does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


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
