"""SASS checks of ptxas output (a test helper): compile PTX with ptxas, disassemble with nvdisasm
(the `nvidia-cuda-nvdisasm` wheel of the test extras), and find sp-meta register hazards.

The hazard: a sparse warpgroup MMA (`HGMMA.SP`, `IGMMA.SP`, `QGMMA.SP`: wgmma.mma_async.sp)
reads its sp-meta register while it runs, and ptxas (13.0) does not know it, so code that writes
that register before the `WARPGROUP.DEPBAR` that retires the MMA's wgmma-group corrupts the
product (measured on the H200: 14-99% of the outputs wrong). `sp_meta_hazards` walks every control-flow path from each of them to the wait
that retires it and reports each instruction on the way that writes the register.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


def nvdisasm() -> str | None:
    """Path of nvdisasm: on PATH, or in the nvidia-cuda-nvdisasm wheel (nvidia/cu*/bin)."""
    found = shutil.which("nvdisasm")
    if found:
        return found
    try:
        import nvidia
    except ImportError:
        return None
    for root in nvidia.__path__:
        for p in sorted(Path(root).glob("cu*/bin/nvdisasm")):
            return str(p)
    return None


def sass_of(ptx_text: str, tmp: Path, ptxas: str = "ptxas", arch: str = "sm_90a") -> str:
    """SASS text (nvdisasm -c) of `ptx_text` compiled by `ptxas` for `arch` (once per text and
    arch in a test run: tests/validators.py's `run_once`)."""
    from validators import run_once

    def disassemble() -> bytes:
        src, cubin = tmp / "k.ptx", tmp / "k.cubin"
        src.write_text(ptx_text)
        subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(cubin)], check=True,
                       capture_output=True, text=True)
        tool = nvdisasm()
        assert tool, "nvdisasm not found (pip install nvidia-cuda-nvdisasm: the test extras)"
        return subprocess.run([tool, "-c", str(cubin)], check=True, capture_output=True).stdout

    return run_once("sass", [arch.encode(), ptx_text.encode()], disassemble).decode()


def sass_of_many(ptx_texts: list[str], tmp: Path, ptxas: str = "ptxas",
                 arch: str = "sm_90a") -> list[str]:
    """`[sass_of(t, tmp, ptxas, arch) for t in ptx_texts]`, from one ptxas and one nvdisasm run
    over one module holding every text's kernels: nvdisasm spends ~0.8 s of CPU starting up,
    whatever it disassembles (a one-instruction kernel too), several times what ptxas takes on a
    pipelined kernel. Text i's names that start with one of its kernels' names (the kernel, its
    parameters, its dynamic shared memory) get the prefix `mI_`, so the texts' symbols stay
    apart; each text's SASS is the disassembly's functions of its kernels, in order. Where the
    merged module does not assemble, each text goes through `sass_of` alone, so that ptxas's
    error names the text that has it. Once per (texts, arch) in a test run (`run_once`)."""
    from validators import run_once

    headers, bodies, names = [], [], []
    for i, text in enumerate(ptx_texts):
        head = [ln for ln in text.splitlines()
                if ln.startswith((".version", ".target", ".address_size"))]
        body = "\n".join(ln for ln in text.splitlines() if ln not in head)
        kernels = re.findall(r"\.entry\s+(\w+)", body)
        assert kernels, f"PTX text {i} holds no .entry"
        for k in sorted(kernels, key=len, reverse=True):
            body = re.sub(rf"\b{re.escape(k)}", f"m{i}_{k}", body)
        headers.append(head)
        bodies.append(body)
        names.append([f"m{i}_{k}" for k in kernels])
    version = max((h for hs in headers for h in hs if h.startswith(".version")),
                  key=lambda v: tuple(int(x) for x in v.split()[1].split(".")))
    rest = {h for hs in headers for h in hs if not h.startswith(".version")}
    merged = "\n".join([version, *sorted(rest, reverse=True), *bodies]) + "\n"

    def disassemble() -> bytes:
        src, cubin = tmp / "many.ptx", tmp / "many.cubin"
        src.write_text(merged)
        r = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(cubin)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return b""
        tool = nvdisasm()
        assert tool, "nvdisasm not found (pip install nvidia-cuda-nvdisasm: the test extras)"
        return subprocess.run([tool, "-c", str(cubin)], check=True, capture_output=True).stdout

    whole = run_once("sass-many", [arch.encode(), *(t.encode() for t in ptx_texts)],
                     disassemble).decode()
    if not whole:
        return [sass_of(t, tmp, ptxas, arch) for t in ptx_texts]
    # nvdisasm starts each function's section with `//---...--- .text.NAME  ---...`
    sections = re.split(r"^(?=//-+ \.text\.)", whole, flags=re.M)
    of = {}
    for sec in sections:
        m = re.match(r"//-+ \.text\.(\w+)\s", sec)
        if m:
            of[m.group(1)] = sec
    out = []
    for i, ks in enumerate(names):
        missing = [k for k in ks if k not in of]
        assert not missing, f"no SASS for {missing} in nvdisasm's output"
        out.append("".join(of[k] for k in ks))
    return out


@dataclass
class Inst:
    addr: str
    pred: str  # "" or the guard, e.g. "@!P0"
    opcode: str
    operands: list[str]


_LINE = re.compile(r"/\*([0-9a-f]+)\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)\s*(.*?)\s*;")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_REG = re.compile(r"^R(\d+)$")
_GMMA = re.compile(r"^[HIQ]GMMA\.")  # f16/bf16/tf32, integer, fp8 warpgroup MMA
_SPARSE = re.compile(r"^[HIQ]GMMA\.SP\.")
# opcodes whose first operand is not a register they write (prefixes: ST covers STS, STG, STL)
_NO_DEST = ("ST", "RED", "BRA", "BAR", "SYNCS.ARRIVE", "WARPGROUP", "EXIT",
            "RET", "NOP", "MEMBAR", "FENCE", "UTMA", "UBLKCP", "CCTL", "ERRBAR", "DEPBAR", "CALL",
            "WARPSYNC", "BSYNC", "BSSY", "YIELD", "ACQBULK", "UCGABAR")


def parse(sass: str) -> tuple[list[Inst], dict[str, int]]:
    """The instructions of a disassembly (all kernels in order) and each label's index."""
    insts: list[Inst] = []
    labels: dict[str, int] = {}
    for line in sass.splitlines():
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = len(insts)
            continue
        m = _LINE.search(line)
        if m:
            ops = [o.strip() for o in m.group(4).split(",")] if m.group(4) else []
            insts.append(Inst(m.group(1), (m.group(2) or "").strip(), m.group(3), ops))
    return insts, labels


def written(inst: Inst) -> set[int]:
    """The R registers an instruction writes (a 64-bit result two, a 128-bit four)."""
    if inst.opcode.startswith(_NO_DEST) or not inst.operands:
        return set()
    m = _REG.match(inst.operands[0].split(".")[0])
    if not m:
        return set()
    r = int(m.group(1))
    mods = inst.opcode.split(".")[1:]  # e.g. LDS.64, IMAD.WIDE.U32 (not HGMMA's 64x256x32)
    n = 4 if "128" in mods else 2 if ("64" in mods or "WIDE" in mods) else 1
    return set(range(r, r + n))


def _successors(insts: list[Inst], labels: dict[str, int], i: int) -> list[int]:
    inst = insts[i]
    if inst.opcode.startswith(("EXIT", "RET")) and not inst.pred:
        return []
    if inst.opcode.startswith("BRA"):
        target = re.search(r"\((\.L_x_\d+)\)", " ".join(inst.operands))
        to = [labels[target.group(1)]] if target else []
        return to + ([i + 1] if inst.pred else [])
    return [i + 1] if i + 1 < len(insts) else []


def sp_meta_hazards(sass: str) -> list[str]:
    """Every write of a sparse MMA's sp-meta register on a path from the MMA to the
    `WARPGROUP.DEPBAR.LE gsb0, n` that retires its group (the group closes at the next MMA
    carrying `gsb0`; DEPBAR.LE n retires it once n later groups have closed), as
    "ADDR: OPCODE sp-meta Rm written at ADDR2 by OPCODE"."""
    insts, labels = parse(sass)
    out = []
    for i, inst in enumerate(insts):
        if not _SPARSE.match(inst.opcode):
            continue
        meta = int(_REG.match(inst.operands[3].split(".")[0]).group(1))
        start = (i, "gsb0" in inst.operands, 0)
        seen, todo = {start}, [start]
        while todo:
            j, closed, later = todo.pop()
            for k in _successors(insts, labels, j):
                nxt = insts[k]
                c, n = closed, later
                if _GMMA.match(nxt.opcode) and "gsb0" in nxt.operands:
                    c, n = True, later + (1 if closed else 0)
                if nxt.opcode.startswith("WARPGROUP.DEPBAR") and c:
                    if n >= int(nxt.operands[-1], 0):
                        continue  # retired on this path
                if n > 8:  # no wait retires it: report rather than walk on
                    out.append(f"{inst.addr}: {inst.opcode} not retired by any wait")
                    continue
                if meta in written(nxt):
                    out.append(f"{inst.addr}: {inst.opcode} sp-meta R{meta} written at {nxt.addr} by "
                               f"{nxt.opcode}")
                    continue
                state = (k, c, n)
                if state not in seen:
                    seen.add(state)
                    todo.append(state)
    return out


def sparse_gmma_count(sass: str) -> int:
    """How many sparse warpgroup MMAs (HGMMA.SP, IGMMA.SP, QGMMA.SP) the disassembly holds."""
    return sum(1 for i in parse(sass)[0] if _SPARSE.match(i.opcode))
