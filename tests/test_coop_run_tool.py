"""coop-run's command line: help for every option, `--save` (inputs before, outputs after, all or
nothing), files with the umask's mode, random inputs of benchmark size.

References: numpy's own product for the saved GEMM (C_out = A·Bᵀ + C_in), the replay of the
saved inputs, `os.stat` for the modes.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from coopdialect.tools import coop_opt, coop_run

ROOT = Path(__file__).resolve().parent.parent
GEMM_S8 = ROOT / "examples" / "gemm_s8.mlir"


def _run(capsys, main, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main([*argv])
        sys.exit(0)
    out, err = capsys.readouterr()
    return e.value.code or 0, out, err


def test_every_option_has_help(capsys):
    rc, out, _ = _run(capsys, coop_run.main, "--help")
    assert rc == 0
    options = re.findall(r"\[(--[a-z-]+)", out.split("\n\n")[0])
    assert len(options) >= 12
    body = out.split("options:", 1)[1]
    for opt in options:
        m = re.search(rf"^  {opt}(?: [^ \n]+)?(?:  +(\S.*)|\n {{20,}}(\S.*))", body, re.M)
        assert m and (m.group(1) or m.group(2)), f"{opt} has no help text"


def test_save_writes_inputs_before_and_outputs_after(tmp_path, capsys):
    out_dir = tmp_path / "run"
    rc, out, err = _run(capsys, coop_run.main, str(GEMM_S8), "--grid", "4,2,1", "--seed", "5",
                        "--save", str(out_dir))
    assert rc == 0, err
    a, bt, c_in = (np.load(out_dir / "in" / f"{n}.npy") for n in ("A", "Bt", "C"))
    c_out = np.load(out_dir / "out" / "C.npy")
    # examples/gemm_s8.mlir: C = A·B + C with B column-major, i.e. Bt row-major
    want = a.astype(np.int64) @ bt.astype(np.int64).T + c_in
    np.testing.assert_array_equal(c_out, want.astype(np.int32))
    assert not np.array_equal(c_in, c_out)
    np.testing.assert_array_equal(np.load(out_dir / "out" / "A.npy"), a)
    # the saved inputs replay the run
    rc, out2, err = _run(capsys, coop_run.main, str(GEMM_S8), "--grid", "4,2,1",
                         *[x for n in ("A", "Bt", "C") for x in ("--input", f"{n}={out_dir}/in/{n}.npy")])
    assert rc == 0, err
    assert out2 == out
    assert sorted(p.name for p in out_dir.rglob("*")) == sorted(
        ["in", "out", "A.npy", "Bt.npy", "C.npy", "A.npy", "Bt.npy", "C.npy"])


def test_a_failed_run_saves_nothing(tmp_path, capsys):
    bad = tmp_path / "a.npy"
    np.save(bad, np.zeros((3, 3), np.int8))
    out_dir = tmp_path / "run"
    rc, out, err = _run(capsys, coop_run.main, str(GEMM_S8), "--grid", "4,2,1",
                        "--input", f"A={bad}", "--save", str(out_dir))
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert not out_dir.exists()


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def test_output_files_have_the_umasks_mode(tmp_path, capsys, umask_027):
    rc, _, err = _run(capsys, coop_run.main, str(GEMM_S8), "--grid", "4,2,1",
                      "--save", str(tmp_path / "run"))
    assert rc == 0, err
    for f in (tmp_path / "run").rglob("*.npy"):
        assert f.stat().st_mode & 0o777 == 0o640, f
    for target, name in (("mlir", "x.mlir"), ("spirv", "x.spv")):
        p = tmp_path / name
        coop_opt.main([str(GEMM_S8), "-p", "convert-coop-to-spirv", "-t", target, "-o", str(p)]
                      if target == "spirv" else [str(GEMM_S8), "-o", str(p)])
        assert p.stat().st_mode & 0o777 == 0o640, name
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_output_that_is_not_a_regular_file_is_written_not_replaced(tmp_path, capsys):
    """`-o` to a named pipe (as to /dev/null or /dev/stdout) writes into it: renaming a
    temporary file over it, as for a regular file, would replace the pipe (or, as root, the
    system's /dev/null) with a plain file."""
    import stat
    import threading

    expected = tmp_path / "x.spv"
    coop_opt.main([str(GEMM_S8), "-p", "convert-coop-to-spirv", "-t", "spirv", "-o", str(expected)])
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        coop_opt.main([str(GEMM_S8), "-p", "convert-coop-to-spirv", "-t", "spirv", "-o", str(fifo)])
    finally:
        if not got:  # unblock the reader should the write not have opened the pipe
            with open(fifo, "wb"):
                pass
        reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got == [expected.read_bytes()] and len(got[0]) > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe", "x.spv"]


BIG = """
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @copy_tile(%A: memref<4096x4096xf32>, %B: memref<16x16xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %ld = arith.constant 4096 : index
  %c16 = arith.constant 16 : index
  %t = coop.load %A[%c0], %ld, RowMajor : memref<4096x4096xf32> -> !m
  coop.store %t, %B[%c0], %c16, RowMajor : !m, memref<16x16xf32>
  func.return
}
"""


def test_random_inputs_of_benchmark_size(tmp_path, capsys):
    """A 4096x4096 f32 operand (64 MiB) gets random data without --input."""
    src = tmp_path / "big.mlir"
    src.write_text(BIG)
    rc, out, err = _run(capsys, coop_run.main, str(src), "--grid", "1,1,1", "--bench", "1",
                        "--seed", "3")
    assert rc == 0, err
    sums = dict(re.findall(r"%(\w+): .*? sum=(\S+)", out))
    rng = np.random.default_rng(3)  # one draw of the whole buffer, as documented
    a = rng.integers(-4, 5, (4096, 4096)).astype(np.float32)
    assert float(sums["A"]) == float(a.astype(np.float64).sum())
    b_sum = float(a[:16, :16].astype(np.float64).sum())
    assert float(sums["B"]) == b_sum
    assert "bench: interp median" in out
