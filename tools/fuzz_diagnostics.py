"""Fuzz the diagnostics contract (docs/diagnostics.md) with malformed inputs of every kind.

    python tools/fuzz_diagnostics.py [--cases N] [--seed S] [--jobs J] [--timeout T] [--show K]

Inputs are generated here from `examples/` and `tests/filecheck/` by seeded mutators, one
category each (`CATEGORIES`): token and line edits, wrong types and enums, zero/negative/huge
numbers, deep nesting, bad bytes, oversized matrices, bad kernel attributes, bad target
descriptions, bad command lines (coop-opt and coop-run) and API misuse. Each case runs in a
forked child (no import cost, a crash or a hang cannot take the run down) under a time limit and
an address-space limit, and is judged against the contract:

* exit 1: stderr is exactly one line `LOC: error: MESSAGE`, LOC being `file:line:col` inside the
  input, the input file, a file named on the command line, or `<command line>`; never
  `<unknown>`, `<internal>`, "internal error", a traceback, or a location inside the message;
  nothing on stdout, no output file.
* exit 0: nothing on stderr, and the output valid — `spirv-val --target-env vulkan1.3` for
  `-t spirv`, `ptxas -arch=sm_90a` for `-t ptx`; an input known to be invalid (bad bytes, nesting
  over the limit, a bad workgroup size, ...) that is accepted is a missed rejection.
* exit 2 only for argparse's usage errors (the command-line category); no hang, no crash, no
  more than MAX_RSS_MB of memory added to the forked image.
* API: only CoopError, TypeError, ValueError or OSError, with a one-line `str()`.

Prints the cases per category and every violation; exit status 1 if there was any.
`run(...)` is the same as a function (tests/test_diagnostics_fuzz.py runs a short seeded slice).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_RSS_MB = 1000
"""Peak resident memory a case may add to what the forked child starts with (the parent's)."""
AS_LIMIT = 3 << 30
"""Address space a child may add to the parent's: a runaway allocation fails there instead of
swapping."""


def _proc_status_kb(key: str) -> int:
    """A `VmRSS`/`VmSize` figure of this process in kB (0 where /proc is not available)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0

CATEGORIES = ("token", "line", "type_enum", "number", "shape", "nesting", "bytes", "huge",
              "kernel_attr", "target", "cmdline", "api", "run", "regression")

PIPELINES = [
    [],
    ["-p", "convert-coop-to-spirv", "-t", "spirv"],
    ["-p", "convert-coop-to-spirv{flavor=nv}", "-t", "spirv"],
    ["-p", "legalize-coop-sizes{target=h200-vulkan}"],
    ["-p", "fold-tensor-views,legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv", "-t", "spirv"],
    ["-p", "convert-coop-to-ptx", "-t", "ptx"],
    ["-p", "legalize-coop-sizes{target=sm90a-ptx},convert-coop-to-ptx", "-t", "ptx"],
    # xDSL's own passes before ours (coop-opt offers them too)
    ["-p", "canonicalize,cse,convert-coop-to-ptx", "-t", "ptx"],
    ["-p", "convert-scf-to-cf,convert-coop-to-spirv", "-t", "spirv"],
    ["-p", "dce,canonicalize,convert-coop-to-spirv{flavor=nv}", "-t", "spirv-asm"],
]


@dataclass
class Case:
    category: str
    tool: str  # "coop-opt" | "coop-run" | "api"
    argv: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)  # name -> content, written to the case dir
    must_fail: bool = False
    api: str = ""  # index into API_CASES
    note: str = ""


# ---------------------------------------------------------------------------------------------
# Seeds and mutators
# ---------------------------------------------------------------------------------------------


def seeds() -> list[tuple[str, str]]:
    """(name, text) of every example and every `// -----` chunk of the FileCheck tests."""
    out = []
    for p in sorted((ROOT / "examples").glob("*.mlir")):
        out.append((p.name, p.read_text()))
    for p in sorted((ROOT / "tests" / "filecheck").rglob("*.mlir")):
        if "Output" in p.parts:
            continue
        for i, chunk in enumerate(p.read_text().split("// -----")):
            body = "\n".join(ln for ln in chunk.splitlines() if not ln.lstrip().startswith("//"))
            if body.strip():
                out.append((f"{p.name}#{i}", body))
    return out


class ValidSeeds:
    """Draws from the seeds that parse and verify, parsing a seed only when it is drawn: each
    draw is uniform over the valid seeds (among those `where` accepts) without parsing the
    whole corpus first (some 280 seeds, ~3 s of CPU, for a run of a few dozen cases)."""

    def __init__(self, all_seeds: list[tuple[str, str]]):
        self.seeds = all_seeds
        self._valid: dict[int, bool] = {}

    def _is_valid(self, i: int) -> bool:
        if i not in self._valid:
            from coopdialect import api

            name, text = self.seeds[i]
            try:
                api.parse(text, name)
                self._valid[i] = True
            except Exception:  # noqa: BLE001
                self._valid[i] = False
        return self._valid[i]

    def draw(self, rng: random.Random, where=lambda text: True) -> tuple[str, str] | None:
        """A valid seed whose text `where` accepts, or None if there is none: a candidate drawn
        uniformly and found invalid is dropped and the draw repeated (rejection sampling)."""
        candidates = [i for i, (_, text) in enumerate(self.seeds) if where(text)]
        while candidates:
            i = rng.choice(candidates)
            if self._is_valid(i):
                return self.seeds[i]
            candidates.remove(i)
        return None


_TOKEN = re.compile(r'%[\w.$#-]+|@[\w.$-]+|"[^"\n]*"|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[A-Za-z_][\w.$]*|\S')
TYPES = ["f16", "f32", "bf16", "f64", "i8", "si8", "ui8", "i32", "si32", "ui32", "i1", "i7", "i64",
         "index", "f8E4M3FN", "i128", "f80", "none"]
ENUMS = ["RowMajor", "ColumnMajor", "RowBlockedInterleavedARM", "Subgroup", "Workgroup", "Device",
         "MatrixA", "MatrixB", "MatrixAcc", "Bogus", "Clamp", "Constant", "Repeat", "MatrixASigned",
         "SaturatingAccumulation", "Volatile", "x", "y", "z", "w"]
NUMBERS = ["0", "-1", "1", "3", "-7", "2147483647", "2147483648", "4294967296",
           "9223372036854775808", "1000000000000000000000000000000", "4096", "65536", "1.5", "-0"]


def _tokens(text: str) -> list[re.Match]:
    return list(_TOKEN.finditer(text))


def _splice(text: str, m: re.Match, new: str) -> str:
    return text[:m.start()] + new + text[m.end():]


def mutate(category: str, text: str, rng: random.Random, corpus: list[str]) -> tuple[str | bytes, bool]:
    """A mutant of `text` for `category`, and whether it is known to be invalid."""
    toks = _tokens(text)
    if category == "token":
        for _ in range(rng.randint(1, 3)):
            toks = _tokens(text)
            if not toks:
                break
            m = rng.choice(toks)
            op = rng.randrange(4)
            if op == 0:
                text = _splice(text, m, "")
            elif op == 1:
                text = _splice(text, m, m.group() + " " + m.group())
            elif op == 2:
                text = _splice(text, m, rng.choice(corpus))
            else:
                i = toks.index(m)
                if i + 1 < len(toks):
                    n = toks[i + 1]
                    text = text[:m.start()] + n.group() + text[m.end():n.start()] + m.group() + text[n.end():]
        return text, False
    if category == "line":
        lines = text.splitlines()
        if not lines:
            return text, False
        op = rng.randrange(4)
        i = rng.randrange(len(lines))
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            cut = rng.randrange(len(text) + 1)
            return text[:cut], False
        return "\n".join(lines) + "\n", False
    if category == "type_enum":
        words = TYPES if rng.random() < 0.5 else ENUMS
        hits = [m for m in toks if m.group() in words]
        if not hits:
            return text, False
        m, new = rng.choice(hits), rng.choice(words)
        if rng.random() < 0.5:  # everywhere: the program stays consistent and reaches the passes
            return re.sub(rf"(?<![\w.]){re.escape(m.group())}(?![\w.])", new, text), False
        return _splice(text, m, new), False
    if category == "number":
        hits = [m for m in toks if re.fullmatch(r"-?\d+(\.\d+)?", m.group())]
        dims = list(re.finditer(r"(?<=[<x])\d+(?=x)", text))
        pool = hits + dims
        if not pool:
            return text, False
        m, new = rng.choice(pool), rng.choice(NUMBERS + ["8", "16", "32", "64", "24", "2"])
        if rng.random() < 0.5:
            return re.sub(rf"(?<![\w.-]){re.escape(m.group())}(?![\w.])", new, text), False
        return _splice(text, m, new), False
    if category == "shape":
        shapes = sorted(set(re.findall(r"matrix<(\d+x\d+)x", text)))
        if not shapes:
            return text, False
        old_shape = rng.choice(shapes)
        new_shape = rng.choice(["8x8", "16x8", "8x16", "32x32", "64x64", "16x32", "32x16", "48x16",
                                "16x24", "128x128", "64x256", "1x1", "256x256", "1024x1024", "1x4096"])
        return text.replace(f"matrix<{old_shape}x", f"matrix<{new_shape}x"), False
    if category == "nesting":
        depth = rng.choice([20, 60, 65, 100, 1000, 5000])
        kind = rng.randrange(3)
        if kind == 0:
            line = '"test.op"() {a = ' + "[" * depth + "]" * depth + "} : () -> ()"
        elif kind == 1:
            line = '"test.op"() : () -> ' + "memref<" * depth + "f32" + ">" * depth
        else:
            line = '"test.op"() (' + "{" * 1 + ' "test.op"() ({' * depth + "})" * depth + "}) : () -> ()"
        lines = text.splitlines()
        i = rng.randrange(len(lines) + 1)
        lines.insert(i, line)
        return "\n".join(lines) + "\n", depth > 64
    if category == "bytes":
        data = bytearray(text.encode())
        pos = rng.randrange(len(data) + 1)
        bad = rng.choice([b"\xff", b"\xfe\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x1b[31m"])
        data[pos:pos] = bad
        invalid = bad not in (b"\x00", b"\x1b[31m")
        return bytes(data), invalid
    if category == "huge":
        mats = list(re.finditer(r"matrix<(\d+)x(\d+)x", text))
        if not mats:
            return text, False
        m = rng.choice(mats)
        r, c = rng.choice([(4096, 4096), (65536, 65536), (1024, 2048), (4096, 16), (2048, 2048)])
        new = text[:m.start()] + f"matrix<{r}x{c}x" + text[m.end():]
        return new, r * c > (1 << 20)
    if category == "kernel_attr":
        attrs = list(re.finditer(r"coop\.workgroup_size = array<i32: [^>]*>", text))
        if not attrs:
            return text, False
        m = rng.choice(attrs)
        bad = rng.choice(["array<i32: 0, 1, 1>", "array<i32: -32, 1, 1>", "array<i32: 128, 1>",
                          "array<i32: 32, 1, 1, 1>", "array<i64: 32, 1, 1>", "array<i32: 2048, 1, 1>",
                          "array<i32: 64, 64, 1>", "array<i32: 1, 1, 65>", "[32, 1, 1]", "32 : i32",
                          "array<i32>", "\"x\"", "array<i32: 1, 0, 1>"])
        return text[:m.start()] + "coop.workgroup_size = " + bad + text[m.end():], True
    raise ValueError(category)


def target_mutant(rng: random.Random) -> tuple[bytes, bool]:
    """A broken target description (JSON), derived from a shipped one."""
    base = json.loads((ROOT / "coopdialect" / "targets" / rng.choice(
        ["h200-vulkan.json", "arm-mali.json", "sm90a-ptx.json"])).read_text())
    kind = rng.randrange(8)
    if kind == 0:
        return json.dumps(base)[: rng.randrange(10, 200)].encode(), True  # truncated
    if kind == 1:
        return ("[" * rng.choice([100, 5000, 100000]) + "]" * 10).encode(), True
    if kind == 2:
        return b"\xff\xfe" + json.dumps(base).encode(), True
    if kind == 3:
        key = rng.choice(sorted(base))
        del base[key]
        return json.dumps(base).encode(), key not in ("flexible_max_dimension", "ptx")
    if kind == 4:
        key = rng.choice(["subgroup_size", "flexible_max_dimension", "api", "layouts", "name"])
        # (an empty layout list is valid; so is any string as a name, any size as a maximum)
        base[key] = rng.choice([-1, 0, 1 << 40, None, {}, True, 1.5] + ([] if key == "name" else ["32"])
                               + ([] if key == "layouts" else [[]])
                               + ([] if key == "flexible_max_dimension" else [3]))
        return json.dumps(base).encode(), True
    rows = base.get("cooperative_matrix") or [{}]
    row = rows[0] if rows else {}
    if kind == 5 and row:
        row[rng.choice(["m", "n", "k"])] = rng.choice([0, -16, 1 << 40, "16", None, 2.5, True])
        return json.dumps(base).encode(), True
    if kind == 6 and row:
        row[rng.choice(["a", "b", "c", "result", "scope"])] = rng.choice(["f17", 16, None, "Device"])
        return json.dumps(base).encode(), True
    depth = rng.choice([5, 50, 3000])
    base["ptx"] = "@NEST@"
    nest = '{"x": ' * depth + "1" + "}" * depth
    return json.dumps(base).replace('"@NEST@"', nest).encode(), True


def cmdline_cases(rng: random.Random, example: str) -> list[Case]:
    """Bad command lines of coop-opt and coop-run (exit 1 with `<command line>`/path, or 2)."""
    opt = [
        ["-p", "no-such-pass"], ["-p", "convert-coop-to-spirv{flavor=xyz}"],
        ["-p", "convert-coop-to-spirv{nope=1}"], ["-p", "legalize-coop-sizes{target=nope}"],
        ["-p", "legalize-coop-sizes{target=/nonexistent/t.json}"], ["-p", "legalize-coop-sizes{flexible=3}"],
        ["-p", "convert-coop-to-ptx{target=sm_70}"], ["-p", "convert-coop-to-ptx{target=5}"],
        ["-p", "convert-coop-to-spirv{"], ["-p", ",,"], ["-t", "nope"], ["-o", ""],
        ["-o", "/nonexistent-dir/x.spv", "-p", "convert-coop-to-spirv", "-t", "spirv"],
        ["-o", "{case}"], ["-t", "ptx"], ["-t", "spirv"],
        ["--split-input-file", "-p", "convert-coop-to-spirv", "-t", "spirv"],
        ["-p", "convert-coop-to-spirv,convert-coop-to-ptx", "-t", "ptx"],
        ["-p", "convert-coop-to-ptx,convert-coop-to-ptx", "-t", "ptx"],
        ["-p", "convert-coop-to-spirv,convert-coop-to-spirv", "-t", "spirv"],
        ["--no-such-flag"],
    ]
    inputs = [example, example, example, "/nonexistent.mlir", "{case}", "{case}/in.txt"]
    cases = []
    for extra in opt:
        cases.append(Case("cmdline", "coop-opt", [rng.choice(inputs[:3])] + extra))
    cases.append(Case("cmdline", "coop-opt", [rng.choice(inputs[3:])]))
    runs = [
        ["--grid", "1,1"], ["--grid", "0,1,1"], ["--grid", "a,b,c"], ["--grid", "1.5,1,1"],
        ["--grid", "1,1,1", "--input", "Z=a.npy"], ["--grid", "1,1,1", "--input", "0=/nonexistent.npy"],
        ["--grid", "1,1,1", "--input", "0={case}/bad.npy"], ["--grid", "1,1,1", "--input", "0"],
        ["--grid", "1,1,1", "--save", "README.md/x"], ["--grid", "1,1,1", "--save", ""],
        ["--grid", "1,1,1", "--subgroup-size", "3"], ["--grid", "1,1,1", "--subgroup-size", "0"],
        ["--grid", "1,1,1", "--kernel", "nope"], ["--grid", "100000,100000,1"], ["--grid", "1,1,1", "--seed", "-1"],
        ["--grid", "1,1,1", "--input", "0={case}/wrong.npy"],
    ]
    for extra in runs:
        cases.append(Case("cmdline", "coop-run", [example] + extra))
    cases.append(Case("cmdline", "coop-run", ["/nonexistent.mlir", "--grid", "1,1,1"]))
    return cases


def _read(path: str) -> str:
    return (ROOT / path).read_text()


_WG_NV = """func.func @k(%A: memref<4096xf16>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %a = coop.load %A[%c0], %c16, RowMajor : memref<4096xf16> -> !coop.matrix<64x16xf16, Workgroup>
  coop.store %a, %A[%c0], %c16, RowMajor : !coop.matrix<64x16xf16, Workgroup>, memref<4096xf16>
  func.return
}
"""


def regression_cases() -> list[Case]:
    """Inputs that once broke the contract (each named in its note); all must keep it."""
    gemm = _read("examples/gemm_f16.mlir")
    big = gemm.replace("!coop.matrix<16x16xf16, Subgroup, MatrixA>", "!coop.matrix<4096x4096xf16, Subgroup, MatrixA>")
    decode = _read("examples/block_decode_load.mlir").replace(
        "memref<2304xi16>", "memref<2304xi16, #coop.storage_class<Workgroup>>")
    target = (ROOT / "coopdialect" / "targets" / "h200-vulkan.json").read_bytes()
    staged = _read("tests/filecheck/passes/pipeline_coop_loads.mlir").replace(", Subgroup, ", ", Workgroup, ")
    f80 = _read("tests/filecheck/ptx/elementwise.mlir").replace("arith.constant 1.5 : f16",
                                                               "arith.constant 1.5 : f80", 1)
    return [
        # a matrix over MAX_MATRIX_ELEMENTS: located at its type, not at the file
        Case("regression", "coop-opt", ["{case}/in.mlir"], {"in.mlir": big.encode()}, must_fail=True,
             note="matrix over the element limit"),
        Case("regression", "coop-opt", ["{case}/in.mlir", "-p", "convert-coop-to-spirv", "-t", "spirv"],
             {"in.mlir": big.encode()}, must_fail=True, note="matrix over the element limit, lowered"),
        # a workgroup-scope matrix without a Use reaching the PTX backend (was an AttributeError)
        Case("regression", "coop-opt", ["{case}/in.mlir", "-p", "convert-coop-to-ptx", "-t", "ptx"],
             {"in.mlir": _WG_NV.encode()}, must_fail=True, note="workgroup NV matrix to PTX"),
        # a DecodeFunc load from Workgroup memory (SPV_NV_cooperative_matrix2: a PhysicalStorageBuffer
        # pointer parameter), once accepted
        Case("regression", "coop-opt", ["{case}/in.mlir"], {"in.mlir": decode.encode()}, must_fail=True,
             note="decode from Workgroup storage"),
        # a target description given by an unquoted path (once 'Unknown token')
        Case("regression", "coop-opt", [str(ROOT / "examples" / "gemm_f16.mlir"), "-p",
                                        "legalize-coop-sizes{target={case}/t.json}"], {"t.json": target},
             note="unquoted target path"),
        # an ill-typed pass option: one line naming the pass, the option and its type
        Case("regression", "coop-opt", [str(ROOT / "examples" / "gemm_f16.mlir"), "-p",
                                        "pipeline-coop-loads{stages=two}"], must_fail=True,
             note="ill-typed pass option"),
        # an access chain indexed by a loop's induction variable (a block argument: its verifier
        # once asked the argument's Block for an op name)
        Case("regression", "coop-opt", ["{case}/in.mlir", "-p", "convert-coop-to-spirv{flavor=nv}",
                                        "-t", "spirv"], {"in.mlir": staged.encode()},
             note="access chain indexed by a block argument"),
        # a verifier's refusal whose op xDSL cannot print (an f80 constant): the refusal, not
        # the printer's NotImplementedError
        Case("regression", "coop-opt", ["{case}/in.mlir", "-p", "convert-coop-to-ptx", "-t", "ptx"],
             {"in.mlir": f80.encode()}, must_fail=True, note="f80 scalar to matrix_times_scalar"),
        Case("regression", "api", api="deserialize_none", note="reader given None"),
        Case("regression", "api", api="disassemble_none", note="disassembler given None"),
        Case("regression", "api", api="disassemble_short_instruction", note="operands past the word count"),
    ]


API_CASES = {
    "run_kernel_none": "api.run_kernel(M(), None, [], (1, 1, 1))",
    "run_kernel_float_grid": "api.run_kernel(M(), 'gemm_f16', bufs(), (1.5, 1, 1))",
    "run_kernel_zero_grid": "api.run_kernel(M(), 'gemm_f16', bufs(), (0, 1, 1))",
    "run_kernel_two_grid": "api.run_kernel(M(), 'gemm_f16', bufs(), (1, 1))",
    "run_kernel_str_grid": "api.run_kernel(M(), 'gemm_f16', bufs(), '1,1,1')",
    "run_kernel_bad_name": "api.run_kernel(M(), 'nope', bufs(), (1, 1, 1))",
    "run_kernel_few_buffers": "api.run_kernel(M(), 'gemm_f16', bufs()[:2], (1, 1, 1))",
    "run_kernel_wrong_dtype": "api.run_kernel(M(), 'gemm_f16', [b.astype(np.float64) for b in bufs()], (1, 1, 1))",
    "run_kernel_wrong_shape": "api.run_kernel(M(), 'gemm_f16', [np.zeros(3, b.dtype) for b in bufs()], (1, 1, 1))",
    "run_kernel_list_buffer": "api.run_kernel(M(), 'gemm_f16', [[1, 2]] * 3, (1, 1, 1))",
    "run_kernel_array_buffers": "api.run_kernel(M(), 'gemm_f16', np.zeros(3), (1, 1, 1))",
    "run_kernel_subgroup_3": "api.run_kernel(M(), 'gemm_f16', bufs(), (1, 1, 1), subgroup_size=3)",
    "run_kernel_subgroup_float": "api.run_kernel(M(), 'gemm_f16', bufs(), (1, 1, 1), subgroup_size=32.0)",
    "run_kernel_text": "api.run_kernel('text', 'gemm_f16', bufs(), (1, 1, 1))",
    "run_kernel_huge_grid": "api.run_kernel(M(), 'gemm_f16', bufs(), (1 << 20, 1 << 20, 1))",
    "run_pipeline_text": "api.run_pipeline('text', 'convert-coop-to-spirv')",
    "run_pipeline_none": "api.run_pipeline(M(), None)",
    "run_pipeline_unknown": "api.run_pipeline(M(), 'no-such-pass')",
    "run_pipeline_both": "api.run_pipeline(M(), 'convert-coop-to-spirv,convert-coop-to-ptx')",
    "run_pipeline_bad_option": "api.run_pipeline(M(), 'convert-coop-to-spirv{flavor=q}')",
    "compile_ptx_twice": "m = M(); api.compile_to_ptx(m); api.compile_to_ptx(m)",
    "compile_spirv_twice": "m = M(); api.compile_to_spirv(m); api.compile_to_spirv(m)",
    "compile_spirv_flavor": "api.compile_to_spirv(M(), flavor='amd')",
    "compile_ptx_target": "api.compile_to_ptx(M(), target='sm_70')",
    "compile_ptx_str": "api.compile_to_ptx('module {}')",
    "parse_bad": "api.parse('func.func @k( {')",
    "parse_none": "api.parse(None)",
    "parse_bytes_bad": "api.parse(b'\\xff\\xfe')",
    "parse_deep": "api.parse('\"test.op\"() {a = ' + '[' * 3000 + ']' * 3000 + '} : () -> ()')",
    "parse_file_missing": "api.parse_file('/nonexistent.mlir')",
    "parse_file_dir": "api.parse_file('/tmp')",
    "parse_file_int": "api.parse_file(3)",
    "parse_empty_ptx": "api.compile_to_ptx(api.parse(''))",
    "parse_empty_spirv": "api.compile_to_spirv(api.parse(''))",
    "get_target_int": "__import__('coopdialect.targets', fromlist=['x']).get_target(5)",
    "deserialize_none": "__import__('coopdialect.spirv.reader', fromlist=['x']).deserialize(None)",
    "disassemble_none": "__import__('coopdialect.spirv.disassembler', fromlist=['x']).disassemble(None)",
    # an OpName whose word count (1) leaves out its Target: the operands run past the instruction
    "disassemble_short_instruction": "__import__('coopdialect.spirv.disassembler', fromlist=['x']).disassemble("
                                     "__import__('struct').pack('<6I', 0x07230203, 0x10600, 0, 9, 0, 1 << 16 | 5))",
    "read_spirv_none": "api.read_spirv(None)",
}


def _api_child(name: str) -> None:
    """Runs one API misuse in the child; prints VIOLATION lines on stderr, if any."""
    import numpy as np  # noqa: F401 (used by the expressions)

    from coopdialect import api
    from coopdialect.errors import CoopError

    example = str(ROOT / "examples" / "gemm_f16.mlir")

    def M():  # noqa: N802
        return api.parse_file(example)

    def bufs():
        return [np.zeros((128, 256), np.float16), np.zeros((256, 128), np.float16),
                np.zeros((128, 128), np.float32)]

    try:
        exec(API_CASES[name], {"api": api, "np": np, "M": M, "bufs": bufs})  # noqa: S102
    except (CoopError, TypeError, ValueError, OSError) as e:
        text = str(e)
        if _PY_LEAK.search(text):
            print(f"VIOLATION internal: Python's own message leaked: {text}", file=sys.stderr)
        elif "\n" in text.strip() or not text.strip():
            print(f"VIOLATION malformed: str() of {type(e).__name__} is not one line: {text!r}", file=sys.stderr)
        elif isinstance(e, CoopError) and text.startswith("<unknown>"):
            print(f"VIOLATION unlocated: {text}", file=sys.stderr)
        elif "internal error" in text:
            print(f"VIOLATION internal: {text}", file=sys.stderr)
        return
    except BaseException as e:  # noqa: BLE001
        print(f"VIOLATION internal: undocumented {type(e).__name__}: {str(e).splitlines()[:1]}", file=sys.stderr)
        return
    print("VIOLATION missed: the misuse was accepted", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Running and judging
# ---------------------------------------------------------------------------------------------


def make_cases(n: int, seed: int, categories: tuple[str, ...] = CATEGORIES) -> list[Case]:
    """`n` cases spread round-robin over `categories` (seeded)."""
    rng = random.Random(seed)
    corpus_seeds = seeds()
    valid = ValidSeeds(corpus_seeds)
    words = sorted({m.group() for _, t in corpus_seeds for m in _tokens(t)})
    example = str(ROOT / "examples" / "gemm_f16.mlir")
    fixed_cmd = cmdline_cases(rng, example)
    regressions = regression_cases()
    api_names = list(API_CASES)
    cases: list[Case] = []
    counters = Counter()
    while len(cases) < n:
        cat = categories[len(cases) % len(categories)]
        k = counters[cat]
        counters[cat] += 1
        if cat == "cmdline":
            cases.append(fixed_cmd[k % len(fixed_cmd)])
            continue
        if cat == "regression":
            cases.append(regressions[k % len(regressions)])
            continue
        if cat == "api":
            cases.append(Case("api", "api", api=api_names[k % len(api_names)]))
            continue
        if cat == "target":
            data, bad = target_mutant(rng)
            pipe = rng.choice(['legalize-coop-sizes{target="{case}/t.json"}',
                               'legalize-coop-sizes{target="{case}/t.json"},convert-coop-to-spirv'])
            src = rng.choice([example, str(ROOT / "examples" / "gemm_s8.mlir")])
            cases.append(Case("target", "coop-opt", [src, "-p", pipe], {"t.json": data}, must_fail=bad))
            continue
        # mostly valid seeds: a mutant of an already invalid test input tests little
        name, text = (rng.random() < 0.8 and valid.draw(rng)) or rng.choice(corpus_seeds)
        if cat == "run":  # the interpreter on mutated kernels (coop-run)
            name, text = (valid.draw(rng, lambda t: "coop.workgroup_size" in t)
                          or valid.draw(rng) or rng.choice(corpus_seeds))
            data, bad = mutate(rng.choice(["number", "type_enum", "shape", "token"]), text, rng, words)
            blob = data if isinstance(data, bytes) else data.encode()
            grid = rng.choice(["1,1,1", "2,1,1", "1,2,1"])
            cases.append(Case(cat, "coop-run", ["{case}/in.mlir", "--grid", grid], {"in.mlir": blob},
                              must_fail=bad, note=name))
            continue
        data, bad = mutate(cat, text, rng, words)
        blob = data if isinstance(data, bytes) else data.encode()
        pipe = rng.choice(PIPELINES)
        if rng.random() < 0.15 and not pipe:
            argv = ["{case}/in.mlir", "--split-input-file"]
        else:
            argv = ["{case}/in.mlir", *pipe]
        if rng.random() < 0.1 and cat in ("kernel_attr", "huge", "number", "token"):
            cases.append(Case(cat, "coop-run", ["{case}/in.mlir", "--grid", "1,1,1"], {"in.mlir": blob},
                              must_fail=bad, note=name))
            continue
        cases.append(Case(cat, "coop-opt", argv, {"in.mlir": blob}, must_fail=bad, note=name))
    return cases


@dataclass
class Result:
    case: Case
    violations: list[str]
    seconds: float
    rss_mb: float
    accepted: bool = False  # exit 0 (its output validated)


_LINE = re.compile(r"^(?P<loc>.+?): error: (?P<msg>\S.*)$")
_PY_ERROR = re.compile(r"\b(TypeError|ValueError|KeyError|IndexError|AttributeError|AssertionError|"
                       r"ZeroDivisionError|OverflowError|RecursionError|MemoryError|NotImplementedError|"
                       r"UnboundLocalError|NameError|UnicodeDecodeError)\b|object has no attribute|"
                       r"codec can't|unsupported operand type|not subscriptable|is not iterable|"
                       r"takes \d+ positional|unexpected keyword")
_LOC_IN_MSG = re.compile(r"\.(mlir|json|npy):\d+(:\d+)?:|<unknown>|<internal>")
# Python's messages about its own objects, which say nothing to the caller of the API
_PY_LEAK = re.compile(r"object of type '\w+' has no|has no len\(\)|object is not subscriptable|"
                      r"object has no attribute|unsupported operand type|list index out of range|"
                      r"tuple index out of range")


def _run_child(case: Case, argv: list[str], out_path: str, err_path: str, timeout: float) -> None:
    """In the forked child: limits, redirections, then the tool's main; never returns."""
    try:
        limit = _proc_status_kb("VmSize") * 1024 + AS_LIMIT
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        signal.alarm(int(timeout) + 1)
        fo = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        fe = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fo, 1)
        os.dup2(fe, 2)
        # under pytest sys.stdout/err are in-memory: write to the redirected descriptors
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        code = 0
        try:
            if case.tool == "coop-opt":
                from coopdialect.tools.coop_opt import main
                main(argv)
            elif case.tool == "coop-run":
                from coopdialect.tools.coop_run import main
                main(argv)
            else:
                _api_child(case.api)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:  # noqa: BLE001 - the contract is broken: show it
            import traceback
            traceback.print_exc()
            code = 3
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    except BaseException:  # noqa: BLE001
        os._exit(4)


def run_case(case: Case, workdir: str, timeout: float = 20.0) -> Result:
    """Run one case in a forked child and judge it (module docstring)."""
    d = tempfile.mkdtemp(dir=workdir)
    for name, data in case.files.items():
        Path(d, name).write_bytes(data)
    Path(d, "bad.npy").write_bytes(b"not an array")
    import numpy as np
    np.save(Path(d, "wrong.npy"), np.zeros(3, np.float64))
    argv = [a.replace("{case}", d) for a in case.argv]
    out_file = None
    if case.tool == "coop-opt" and "-o" not in argv:
        out_file = os.path.join(d, "out.bin")
        argv += ["-o", out_file]
    stdout, stderr = os.path.join(d, ".stdout"), os.path.join(d, ".stderr")
    base_rss = _proc_status_kb("VmRSS") / 1024
    t0 = time.time()
    pid = os.fork()
    if pid == 0:
        _run_child(case, argv, stdout, stderr, timeout)
    deadline = t0 + timeout
    status, usage, timed_out = 0, None, False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            timed_out = True
            break
        time.sleep(0.005)
    seconds = time.time() - t0
    rss = usage.ru_maxrss / 1024 if usage else 0.0
    out = Path(stdout).read_text(errors="replace")
    err = Path(stderr).read_text(errors="replace")
    v: list[str] = []
    rc = os.waitstatus_to_exitcode(status)
    if timed_out or rc == -signal.SIGALRM:
        v.append(f"hang: no answer within {timeout:.0f} s")
    elif rc < 0:
        v.append(f"crash: killed by signal {-rc} (stderr {err.strip()[-200:]!r})")
    rss = max(rss - base_rss, 0.0)  # what the case added to the forked image
    if rss > MAX_RSS_MB:
        v.append(f"memory: peak {rss:.0f} MB over the forked image")
    if "Traceback (most recent call last)" in err:
        v.append("traceback: " + err.strip().splitlines()[-1][:200])
    if case.tool == "api":
        v += [ln[len("VIOLATION "):] for ln in err.splitlines() if ln.startswith("VIOLATION ")]
    elif not v:
        v += _judge(case, argv, d, rc, out, err, out_file)
    shutil.rmtree(d, ignore_errors=True)
    return Result(case, v, seconds, rss, rc == 0 and case.tool != "api")


def _judge(case: Case, argv: list[str], d: str, rc: int, out: str, err: str, out_file: str | None) -> list[str]:
    v = []
    lines = err.splitlines()
    if rc == 1:
        if out_file and os.path.exists(out_file):
            v.append("partial output: an output file was written")
        if case.tool == "coop-opt" and out:
            v.append("partial output: stdout is not empty")
        if case.tool == "coop-run" and out:
            v.append("partial output: coop-run printed results")
        if len(lines) != 1:
            v.append(f"malformed: {len(lines)} lines on stderr: {err.strip()[:300]!r}")
            return v
        m = _LINE.match(lines[0])
        if not m:
            v.append(f"malformed: {lines[0][:300]!r}")
            return v
        loc, msg = m.group("loc"), m.group("msg")
        if "internal error" in msg or loc in ("<internal>", "<unknown>") or _PY_ERROR.search(msg):
            v.append(f"internal: {lines[0][:300]}")
        elif _LOC_IN_MSG.search(msg):
            v.append(f"unlocated: location inside the message: {lines[0][:300]}")
        elif not _located_ok(loc, argv, d, case):
            v.append(f"unlocated: {lines[0][:300]}")
        elif loc.endswith(".mlir") and _NAMES_OP_OR_TYPE.search(msg):
            v.append(f"unlocated: about an op or type, but no line and column: {lines[0][:300]}")
    elif rc == 0:
        if err.strip():
            v.append(f"noise: exit 0 with stderr {err.strip()[:200]!r}")
        if case.must_fail:
            v.append("missed rejection: an invalid input was accepted")
        if out_file and "-t" in argv:
            v += _validate(argv[argv.index("-t") + 1], out_file)
    elif rc == 2 and case.category == "cmdline":
        if not lines or "error:" not in lines[-1]:
            v.append(f"malformed usage error: {err.strip()[:200]!r}")
    else:
        v.append(f"exit status {rc}: {err.strip()[-200:]!r}")
    return v


# a message about one op or type (of an IR input) is located at it, not at the file
_NAMES_OP_OR_TYPE = re.compile(r"'[\w.]+' op |\bmatrix\b|MAX_MATRIX_ELEMENTS|!coop\.|!tensor_addr\.")


def _located_ok(loc: str, argv: list[str], d: str, case: Case) -> bool:
    if loc == "<command line>":
        return True
    m = re.fullmatch(r"(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)", loc)
    path = m.group("file") if m else loc
    paths = {a for a in argv} | {p for a in argv for p in re.findall(r"[\w./-]+\.(?:json|npy|mlir)", a)}
    paths |= {a.split("=", 1)[-1] for a in argv}
    if path not in paths and not path.startswith(d):
        return False
    if m and path.endswith(".mlir") and os.path.exists(path):
        n = Path(path).read_bytes().count(b"\n") + 1
        return 1 <= int(m.group("line")) <= n and int(m.group("col")) >= 1
    return True


def _validate(target: str, path: str) -> list[str]:
    if target == "spirv":
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", path], capture_output=True, text=True)
        return [] if r.returncode == 0 else [f"invalid output: spirv-val: {(r.stderr or r.stdout).strip()[:200]}"]
    if target == "ptx":
        r = subprocess.run(["ptxas", "-arch=sm_90a", path, "-o", os.devnull], capture_output=True, text=True)
        return [] if r.returncode == 0 else [f"invalid output: ptxas: {(r.stderr or r.stdout).strip()[:200]}"]
    return []


def run(n: int, seed: int, jobs: int = 1, timeout: float = 20.0,
        categories: tuple[str, ...] = CATEGORIES) -> list[Result]:
    """Generate and judge `n` cases; `jobs` children at a time."""
    from coopdialect.tools import coop_opt, coop_run  # noqa: F401 - imported once, before forking
    from coopdialect import api  # noqa: F401
    import coopdialect.passes.convert_coop_to_spirv  # noqa: F401
    import coopdialect.passes.convert_coop_to_ptx  # noqa: F401
    import coopdialect.passes.legalize_coop_sizes  # noqa: F401
    import coopdialect.passes.fold_tensor_views  # noqa: F401
    import coopdialect.spirv.target  # noqa: F401
    import coopdialect.ptx.printer  # noqa: F401
    import coopdialect.ptx.lower  # noqa: F401
    import coopdialect.ptx.coop_rules  # noqa: F401
    import coopdialect.ptx.wgmma  # noqa: F401
    import coopdialect.ptx.sparse  # noqa: F401
    import coopdialect.interpreter.kernel  # noqa: F401

    cases = make_cases(n, seed, categories)
    work = tempfile.mkdtemp(prefix="coop-fuzz-")
    try:
        if jobs <= 1:
            return [run_case(c, work, timeout) for c in cases]
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(jobs) as pool:
            return list(pool.map(lambda c: run_case(c, work, timeout), cases))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(results: list[Result], show: int = 20) -> str:
    per = Counter(r.case.category for r in results)
    bad = Counter(r.case.category for r in results if r.violations)
    kinds = Counter(v.split(":")[0] for r in results for v in r.violations)
    ok = Counter(r.case.category for r in results if r.accepted)
    lines = [f"{'category':<12} {'cases':>6} {'accepted':>9} {'violations':>10}"]
    for c in CATEGORIES:
        if per[c]:
            lines.append(f"{c:<12} {per[c]:>6} {ok[c]:>9} {bad[c]:>10}")
    lines.append(f"{'total':<12} {len(results):>6} {sum(ok.values()):>9} {sum(bad.values()):>10}")
    if results:
        lines.append(f"slowest case {max(r.seconds for r in results):.1f} s, "
                     f"peak memory added {max(r.rss_mb for r in results):.0f} MB")
    if kinds:
        lines.append("violations by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    for r in [r for r in results if r.violations][:show]:
        lines.append(f"- [{r.case.category}] {r.case.tool} {' '.join(r.case.argv)} ({r.case.note or r.case.api}): "
                     f"{r.violations[0]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--show", type=int, default=30)
    args = ap.parse_args(argv)
    t0 = time.time()
    results = run(args.cases, args.seed, args.jobs, args.timeout)
    print(report(results, args.show))
    print(f"wall {time.time() - t0:.0f} s")
    sys.exit(1 if any(r.violations for r in results) else 0)


if __name__ == "__main__":
    main()
