"""The warp-specialized wgmma pipeline (coopdialect/ptx/pipelined.py) through ptxas, its launch
description against the kernel's memrefs, and its refusals.

Its numbers are checked on the GPU (benchmarks/bench_ptx.py: bit-exact against the interpreter
at 512^3 and against torch on integer data at 4096/8192); here every variant must assemble with
`ptxas -arch=sm_90a -v` with no spill and no warning or C75xx info, so the emitted fences and
register budgets are right.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from coopdialect import api
from coopdialect.ptx.launch import describe
from coopdialect.kernels.gemm_tiles import gemm_wg_ir, sparse_gemm_wg_ir, workgroup_gemm_ir
from coopdialect.ptx.printer import emit_ptx
from cli import run_coop_opt
from validators import ptxas as find_ptxas
from validators import run_once
import parsed


def lower(ir: str, stages: int, extra: str = ""):
    m = parsed.parse(ir)
    api.run_pipeline(m, f"pipeline-coop-loads{{stages={stages}}},convert-coop-to-ptx{extra}")
    return m


def _ptxas(tmp_path: Path, text: str) -> str:
    """`ptxas -arch=sm_90a -v` on `text`: it must assemble without spilling; returns its report
    (run once per PTX text in a run: several tests assemble the same kernel, `run_once`)."""
    def assemble() -> bytes:
        p = tmp_path / "k.ptx"
        p.write_text(text)
        r = subprocess.run([find_ptxas(), "-arch=sm_90a", "-v", str(p), "-o", str(tmp_path / "k.o")],
                           capture_output=True, text=True)
        return f"{r.returncode}\n{r.stdout}{r.stderr}".encode()

    rc, out = run_once("ptxas-v", [text.encode()], assemble).decode().split("\n", 1)
    assert rc == "0" and "0 bytes spill stores, 0 bytes spill loads" in out, out
    return out


def _assembles_clean(tmp_path: Path, text: str) -> None:
    """As `_ptxas`, and the report holds nothing beyond the usage lines (no warning, no info)."""
    out = _ptxas(tmp_path, text)
    noise = [ln for ln in out.splitlines()
             if not re.match(r"ptxas info\s+: (Compiling|Function properties|Used|Compile time|\d+ bytes gmem)", ln)
             and "bytes stack frame" not in ln]
    assert not noise, out


@pytest.mark.parametrize("dt,stages,bm,bn", [("f16", 4, 128, 256), ("bf16", 3, 128, 256),
                                             ("f16", 2, 64, 128), ("bf16", 4, 192, 128),
                                             ("f16", 4, 256, 128)])
def test_pipeline_assembles_without_spills(tmp_path: Path, dt: str, stages: int, bm: int,
                                           bn: int) -> None:
    m = lower(gemm_wg_ir(2 * bm, 2 * bn, 512, dt, TM=bm, TN=bn), stages)
    _assembles_clean(tmp_path, emit_ptx(m))


@pytest.mark.parametrize("stages,bm,bn,bk", [(4, 128, 128, 128), (3, 64, 256, 64),
                                             (2, 256, 128, 128), (4, 128, 40, 32),
                                             (3, 192, 48, 64)])
def test_s8_pipeline_assembles_without_spills(tmp_path: Path, stages: int, bm: int, bn: int,
                                              bk: int) -> None:
    """8-bit operands (K-major, swizzled like 16-bit ones: 32 bytes of K per instruction) into
    s32 accumulators: wgmma.mma_async.m64nNk32.s32.s8.s8, integer N chunks (40 = 32 + 8)."""
    ir = workgroup_gemm_ir(2 * bm, 4 * bn, 512, bm, bn, bk, 128, "i8", b_col=True)
    text = emit_ptx(lower(ir, stages))
    assert all(f"wgmma.mma_async.sync.aligned.m64n{w}k32.s32.s8.s8" in text
               for w in ([32, 8] if bn == 40 else [bn]))
    assert "satfinite" not in text
    _assembles_clean(tmp_path, text)


def test_staged_saturating_product_refused() -> None:
    """A staged product whose C addition saturates has no place in the pipelined chain: one line."""
    ir = workgroup_gemm_ir(256, 256, 256, 128, 128, 64, 128, "i8", b_col=True).replace(
        "ResultSigned>", "ResultSigned|SaturatingAccumulation>")
    with pytest.raises(Exception, match="SaturatingAccumulation in a staged kernel"):
        lower(ir, 2)


@pytest.mark.parametrize("dt,stages,batch,flight", [("f16", 4, 1, 1), ("bf16", 3, 2, 0),
                                                    ("e4m3", 5, 2, 0), ("s8", 2, 1, 1),
                                                    ("f16", 5, 2, 0), ("e4m3", 4, 1, 1),
                                                    ("f16", 4, 1, 0), ("bf16", 5, 2, 1)])
def test_sparse_pipeline_assembles_without_spills(tmp_path: Path, dt: str, stages: int,
                                                  batch: int, flight: int) -> None:
    m = lower(sparse_gemm_wg_ir(256, 512, 512, dt), stages,
              f"{{sparse_batch={batch} sparse_in_flight={flight}}}")
    text = emit_ptx(m)
    # K step / instruction K per loop iteration; a trip runs batch x (1 + in flight) iterations
    assert text.count("wgmma.mma_async.sp.sync.aligned") == 2 * batch * (1 + flight)
    # a sparse batch stays in flight only where the loop keeps its sp-meta registers live
    assert ("wgmma.wait_group.sync.aligned 1;" in text) == bool(flight)
    _ptxas(tmp_path, text)
    (k,) = describe(m)["kernels"]
    swz = {p["arg"]: p["swizzle"] for p in k["params"] if p["kind"] == "tensor_map"}
    # compressed A rows are K/2 values (64 bytes for f16 K=64 and for 8-bit K=128): 64B swizzle;
    # metadata bytes unswizzled; B rows 128 bytes
    assert swz == {0: "64B", 1: "NONE", 2: "128B"}


def _ptxas_registers(tmp_path: Path, text: str) -> int:
    return int(re.search(r"Used (\d+) registers", _ptxas(tmp_path, text)).group(1))


@pytest.mark.parametrize("kind,bm,bn,consumers", [("dense", 64, 256, 1), ("dense", 128, 256, 2),
                                                  ("dense", 192, 128, 3), ("dense", 256, 128, 2),
                                                  ("sparse", 128, 256, 2), ("sparse", 256, 128, 2)])
def test_setmaxnreg_stays_within_the_launch_allocation(tmp_path: Path, kind: str, bm: int, bn: int,
                                                      consumers: int) -> None:
    """setmaxnreg.inc only takes registers the CTA's .dec released; asking for more waits forever
    (a 5-warpgroup kernel hung on the H200). ptxas's own register count is the reference."""
    gen = gemm_wg_ir if kind == "dense" else sparse_gemm_wg_ir
    m = lower(gen(2 * bm, 2 * bn, 512, "f16", TM=bm, TN=bn), 4)
    text = emit_ptx(m)
    threads = 128 * (consumers + 1)
    assert f".maxntid {threads}, 1, 1" in text
    used = _ptxas_registers(tmp_path, text)
    dec = [int(x) for x in re.findall(r"setmaxnreg\.dec\.sync\.aligned\.u32 (\d+);", text)]
    inc = [int(x) for x in re.findall(r"setmaxnreg\.inc\.sync\.aligned\.u32 (\d+);", text)]
    if consumers == 1:
        assert not inc
        return
    assert len(dec) == len(inc) == 1 and inc[0] >= used >= dec[0], (used, dec, inc)
    assert 128 * dec[0] + 128 * consumers * inc[0] <= threads * used, (used, dec, inc)


def test_256_rows_are_two_blocks_per_consumer() -> None:
    """A 256x128 accumulator: two consumer warpgroups of 128 rows, each two m64 products per K
    step whose A descriptors are 64 rows apart, and a sparse product's metadata words likewise."""
    dense = emit_ptx(lower(gemm_wg_ir(512, 256, 128, "f16", TM=256, TN=128), 2))
    assert ".maxntid 384, 1, 1" in dense
    assert dense.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 2 * 64 // 16
    sparse = emit_ptx(lower(sparse_gemm_wg_ir(512, 256, 128, "f16", TM=256, TN=128), 2,
                            "{sparse_batch=1 sparse_in_flight=0}"))
    assert sparse.count("wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.f16.f16") == 2 * 64 // 32
    # metadata rows are 16 bytes: the second block's words are 64 rows = 1024 bytes further
    offsets = {int(o) for o in re.findall(r"ld\.shared\.b32 %r\d+, \[%r\d+\+(\d+)\];", sparse)}
    assert {128, 1024, 1024 + 128} <= offsets, offsets


def test_accumulators_wider_than_the_registers_refused(tmp_path: Path) -> None:
    """192 rows = three consumer warpgroups, which start with 128 registers a thread: a 64x256
    f32 block (128 registers) does not fit, and ptxas would reject the kernel (C7602)."""
    src = tmp_path / "k.mlir"
    src.write_text(sparse_gemm_wg_ir(384, 512, 128, "f16", TM=192, TN=256))
    out = tmp_path / "k.ptx"
    r = run_coop_opt([src, "-p", "pipeline-coop-loads{stages=2},convert-coop-to-ptx", "-t", "ptx",
                      "-o", out])
    line = r.stderr.strip()
    assert r.returncode == 1 and not out.exists() and "\n" not in line, line
    assert re.match(rf"{re.escape(str(src))}:\d+:\d+: error: ", line), line
    assert "192x256 accumulators need 128 registers" in line and "starts with 128" in line, line


def test_too_many_stages_refused() -> None:
    m = parsed.parse(gemm_wg_ir(128, 256, 1024, "f16"))
    with pytest.raises(Exception) as e:
        api.run_pipeline(m, "pipeline-coop-loads{stages=5},convert-coop-to-ptx")
    assert "more than the 232448" in str(e.value)


def test_launch_description_matches_the_kernel() -> None:
    M, N, K = 256, 512, 320
    m = lower(gemm_wg_ir(M, N, K, "f16"), 4)
    (k,) = describe(m)["kernels"]
    assert k["block"] == [384, 1, 1]  # one producer + two consumer warpgroups for 128 rows
    # four slots of A (128x64) and B (256x64) f16, 4 full + 4 empty mbarriers, 16 bytes of
    # scratch (retired sp-meta words of a 2:4 kernel), alignment slack
    assert k["dynamic_shared_bytes"] == 4 * (128 * 64 + 256 * 64) * 2 + 8 * 8 + 16 + 1024
    a, bt, d = k["params"]
    assert a == {"kind": "tensor_map", "arg": 0, "data_type": "FLOAT16", "global_dims": [K, M],
                 "global_strides": [K * 2], "box_dims": [64, 128], "element_strides": [1, 1],
                 "interleave": "NONE", "swizzle": "128B", "l2_promotion": "L2_256B",
                 "oob_fill": "NONE"}
    assert bt["global_dims"] == [K, N] and bt["box_dims"] == [64, 256]
    assert d == {"kind": "pointer", "arg": 2}
    text = emit_ptx(m)
    # the .entry parameters are in the description's order and kinds
    params = re.findall(r"\.param (?:\.align 64 \.b8 (\w+)\[128\]|\.u64 (\w+))", text)
    assert [bool(t) for t, _ in params] == [True, True, False]
    assert json.loads(json.dumps(k)) == k


def test_staged_kernel_refused_on_sm80(tmp_path: Path) -> None:
    src = tmp_path / "k.mlir"
    src.write_text(gemm_wg_ir(128, 256, 128, "f16"))
    out = tmp_path / "k.ptx"
    r = run_coop_opt([src, "-p", "pipeline-coop-loads{stages=2},convert-coop-to-ptx{target=sm_80}",
                      "-t", "ptx", "-o", out])
    assert r.returncode == 1 and not out.exists()
    line = r.stderr.strip()
    # before sm_90a the staged form lowers op by op, and Workgroup-scope matrices need wgmma
    assert "\n" not in line and "workgroup-scope matrices lower to wgmma, which needs target " \
        "sm_90a, not sm_80" in line, line
    # located at the staged loop (the user's scf.for), not inside the message
    assert re.match(rf"{re.escape(str(src))}:\d+:\d+: error: ", line), line


def test_register_budget_checked() -> None:
    m = parsed.parse(gemm_wg_ir(128, 256, 128, "f16"))
    with pytest.raises(Exception) as e:
        api.run_pipeline(m, "pipeline-coop-loads{stages=2},convert-coop-to-ptx{consumer_registers=256}")
    assert "register budget" in str(e.value)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_subgroup_staged_kernel_lowers_op_by_op(tmp_path: Path, target: str) -> None:
    """Subgroup-scope staged kernels (and every staged kernel before sm_90a) take the op-by-op
    path: cp.async copies by every invocation, cp.async.wait_group + bar.sync, mma.sync."""
    src = (Path(__file__).resolve().parents[1] / "examples" / "gemm_f16_vk.mlir").read_text()
    m = parsed.parse(src.replace("8192", "256"))
    api.run_pipeline(m, "pipeline-coop-loads{stages=2},distribute-coop-workgroup,"
                        "legalize-coop-sizes{target=sm90a-ptx flexible=false},"
                        f"convert-coop-to-ptx{{target={target}}}")
    text = emit_ptx(m)
    assert f".target {target}" in text
    assert "cp.async.wait_group 0;" in text and "cp.async.commit_group;" in text
    assert "mma.sync.aligned.m16n8k16" in text and "cp.async.bulk" not in text
    assert re.search(r"\.shared \.align 16 \.b8 \w+\[\d+\];", text)
    p = tmp_path / "k.ptx"
    p.write_text(text)
    r = subprocess.run([find_ptxas(), "-arch=sm_90a", str(p), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr


def test_cluster_releases_remote_stages_without_a_cluster_fence(tmp_path: Path) -> None:
    """cluster_m=2: consumers release the peer's slot with a plain remote arrive. A
    `.release.cluster` arrive makes ptxas put a MEMBAR before it, which stalled the consumers
    34-43% of the time on the H200 (docs/performance.md)."""
    text = emit_ptx(lower(sparse_gemm_wg_ir(512, 512, 512, "f16"), 4, "{cluster_m=2}"))
    assert ".reqnctapercluster 1, 2, 1" in text
    assert re.search(r"mapa\.shared::cluster\.u32 (%r\d+), %r\d+, %r\d+;\n\s*"
                     r"mbarrier\.arrive\.shared::cluster\.b64 _, \[\1\];", text), text
    assert "mbarrier.arrive.release.cluster" not in text
    assert "multicast::cluster" in text
    _ptxas_registers(tmp_path, text)


@pytest.mark.parametrize("dt,kstep", [("f16", 64), ("e4m3", 128)])
def test_contiguous_metadata_tiles_are_copied_in_128_byte_rows(tmp_path: Path, dt: str,
                                                               kstep: int) -> None:
    """Metadata in tile order: each 128 x K/4 tile is contiguous, so its box is re-viewed as
    rows of 128 bytes (fewer L2 requests); in row order the 16/32-byte rows stay as they are."""
    m, n, k = 256, 512, 512
    w = kstep // 4
    tiled = lower(sparse_gemm_wg_ir(m, n, k, dt, meta_tiles=True), 4)
    (kern,) = describe(tiled)["kernels"]
    e = kern["params"][1]
    assert e["global_dims"] == [128, m * k // 4 // 128] and e["global_strides"] == [128]
    assert e["box_dims"] == [128, 128 * w // 128] and e["swizzle"] == "NONE"
    _ptxas_registers(tmp_path, emit_ptx(tiled))
    (kern,) = describe(lower(sparse_gemm_wg_ir(m, n, k, dt), 4))["kernels"]
    assert kern["params"][1]["box_dims"] == [w, 128]


def _staged_loop_text(text: str) -> str:
    """The consumers' part of a pipelined kernel (after `setmaxnreg.inc`)."""
    return text[text.index("setmaxnreg.inc"):]


@pytest.mark.parametrize("k,paired", [(512, True), (64 * 7, False), (64, False)])
def test_sparse_batch_pairs_iterations_of_an_even_constant_trip_count(tmp_path: Path, k: int,
                                                                      paired: bool) -> None:
    """sparse_batch=2: a loop of constant, even trip count runs two iterations per trip, the
    four wgmma.mma_async.sp of both K steps issued after both iterations' sp-meta words are
    loaded, then `wait_group 0` and both stages released; an odd trip count keeps one
    iteration per batch."""
    m = lower(sparse_gemm_wg_ir(256, 512, k, "f16"), 4 if k > 64 else 2,
              "{sparse_batch=2 sparse_in_flight=0}")
    text = emit_ptx(m)
    _ptxas(tmp_path, text)
    body = _staged_loop_text(text)
    lines = body.splitlines()
    mma = [i for i, ln in enumerate(lines) if "wgmma.mma_async.sp.sync.aligned" in ln]
    assert len(mma) == (4 if paired else 2)
    assert all(b == a + 1 for a, b in zip(mma, mma[1:]))  # one batch, nothing between
    loads = [i for i, ln in enumerate(lines) if ln.strip().startswith("ld.shared.b32")]
    waits = [i for i, ln in enumerate(lines) if "mbarrier.try_wait" in ln]
    # every sp-meta word (2 per instruction: rows g and g+8) is loaded before the batch starts
    assert len(loads) == 2 * len(mma) and max(loads) < mma[0]
    assert len([w for w in waits if w < mma[0]]) == (2 if paired else 1)
    after = lines[mma[-1] + 1:]
    assert after[0].strip() == "wgmma.commit_group.sync.aligned;"
    assert after[1].strip() == "wgmma.wait_group.sync.aligned 0;"
    arrives = [ln for ln in after[:20] if "mbarrier.arrive.shared::cta" in ln]
    assert len(arrives) == (2 if paired else 1)


_META = re.compile(r"\}, %rd\d+, %rd\d+, (%r\d+), ")  # the sp-meta operand of wgmma.mma_async.sp


@pytest.mark.parametrize("k,in_flight", [(512, True), (64 * 7, False), (64, False)])
def test_sparse_in_flight_keeps_one_batch_running(tmp_path: Path, k: int, in_flight: bool) -> None:
    """sparse_in_flight=1 with sparse_batch=1 (the defaults): a loop of constant, even trip count
    runs two iterations per trip, each batch closed by `wait_group 1`; after each wait the
    other batch's sp-meta words (the one it retired) are stored to shared memory, so they stay in
    their registers until then; the second batch's words are the registers the loop carries,
    written in place (no copy). An odd trip count keeps `wait_group 0`."""
    m = lower(sparse_gemm_wg_ir(256, 512, k, "f16"), 4 if k > 64 else 2)
    text = emit_ptx(m)
    _ptxas(tmp_path, text)
    body = _staged_loop_text(text)
    lines = [ln.strip() for ln in body.splitlines()]
    mma = [i for i, ln in enumerate(lines) if ln.startswith("wgmma.mma_async.sp.sync.aligned")]
    if not in_flight:
        assert len(mma) == 2 and "wgmma.wait_group.sync.aligned 1;" not in body
        assert lines[mma[-1] + 2] == "wgmma.wait_group.sync.aligned 0;"
        return
    assert len(mma) == 4
    words = [_META.search(lines[i]).group(1) for i in mma]
    a, b = set(words[:2]), set(words[2:])
    assert not a & b

    def stored_after(i: int) -> tuple[str, set[str]]:
        """The wait that follows line i's batch, and the words the next shared store writes."""
        assert lines[i + 1] == "wgmma.commit_group.sync.aligned;"
        wait = lines[i + 2]
        st = next(ln for ln in lines[i + 3:] if ln.startswith("st.shared"))
        return wait, set(re.findall(r"%r\d+", st[st.index("{"):]))

    assert stored_after(mma[1]) == ("wgmma.wait_group.sync.aligned 1;", b)  # last trip's batch 2
    assert stored_after(mma[3]) == ("wgmma.wait_group.sync.aligned 1;", a)
    after_loop = lines[mma[3] + 3:]
    last = after_loop.index("wgmma.wait_group.sync.aligned 0;")
    st = next(ln for ln in after_loop[last:] if ln.startswith("st.shared"))
    assert set(re.findall(r"%r\d+", st[st.index("{"):])) == b
    # batch 2's words: written by prmt in the loop, set (to 0) once before it, never copied
    for w in b:
        assert sum(1 for ln in lines if ln.startswith(f"prmt.b32 {w},")) == 1
        assert sum(1 for ln in lines if ln.startswith(f"mov.b32 {w},")) == 1


def test_sparse_in_flight_sass_keeps_each_sp_meta_register_until_its_batch_retires(
        tmp_path: Path) -> None:
    """In ptxas's SASS of the 2:4 pipeline with a batch in flight, no path from a sparse MMA to
    the WARPGROUP.DEPBAR that retires it writes the MMA's sp-meta register
    (tests/sass_check.py; the hardware reads it while the MMA runs): f16, s8 and e4m3, each
    plain and persistent, disassembled together (`sass_of_many`: nvdisasm's start-up is most of
    a disassembly's cost)."""
    from sass_check import sass_of_many, sp_meta_hazards, sparse_gmma_count

    variants = [(dt, extra) for extra in ("", "{persistent=true}") for dt in ("f16", "s8", "e4m3")]
    texts = [emit_ptx(lower(sparse_gemm_wg_ir(256, 512, 1024, dt), 4, extra))
             for dt, extra in variants]
    for variant, sass in zip(variants, sass_of_many(texts, tmp_path, find_ptxas()), strict=True):
        assert sparse_gmma_count(sass) == 4, variant
        assert sp_meta_hazards(sass) == [], variant


def test_sass_check_finds_sp_meta_registers_written_while_their_batch_runs(
        tmp_path: Path, monkeypatch) -> None:
    """The check above can fail. (1) A batch left in flight in a loop of one iteration per trip,
    its words not kept: every trip's words land in the same registers, the configuration
    measured wrong on the H200; both MMAs are reported. (2) In the real pipeline's SASS, a write
    of the second batch's register at the top of the trip (before the wait that retires the
    previous trip's batch: found through the back edge) and one right after the first batch's
    MMA are reported; the same write after the retiring wait is not."""
    from xdsl.dialects import scf

    from coopdialect.ptx import pipelined_loop, pipelined_sparse
    from coopdialect.ptx.kernel_lowering import RULES
    from sass_check import parse, sass_of_many, sp_meta_hazards

    ir = sparse_gemm_wg_ir(256, 512, 1024, "f16")
    good_ptx = emit_ptx(lower(ir, 4))

    def one_per_trip(lw, op):
        lw.unroll, lw.tied = 1, [None] * 8
        RULES[scf.ForOp](lw, op)

    monkeypatch.setattr(pipelined_loop, "_unrolled_for", one_per_trip)
    no_retire = lambda lw: setattr(lw, "live_meta", [])  # noqa: E731
    monkeypatch.setattr(pipelined_loop, "retire_meta", no_retire)
    monkeypatch.setattr(pipelined_sparse, "retire_meta", no_retire)
    good, bad = sass_of_many([good_ptx, emit_ptx(lower(ir, 4))], tmp_path, find_ptxas())
    found = sp_meta_hazards(bad)
    assert len(found) == 2 and all("written at" in f for f in found), found

    lines = good.splitlines()
    at = [i for i, ln in enumerate(lines) if re.search(r"\bHGMMA\.SP\.", ln)]
    meta = [re.search(r"gdesc\[UR\d+\], R\d+, (R\d+)", lines[i]).group(1) for i in at]
    depbar = next(i for i in range(at[1], len(lines)) if "WARPGROUP.DEPBAR" in lines[i])

    def with_write(after: int, reg: str) -> str:
        return "\n".join(lines[:after + 1] + [f"        /*fff0*/   MOV {reg}, RZ ;"] + lines[after + 1:])

    assert parse(good)[0] and sp_meta_hazards(good) == []
    assert any("written at fff0" in f for f in sp_meta_hazards(with_write(at[0] - 1, meta[2])))
    assert any("written at fff0" in f for f in sp_meta_hazards(with_write(at[0], meta[0])))
    assert sp_meta_hazards(with_write(depbar, meta[2])) == []


def test_pass_options_are_the_lowerings_options_with_the_same_defaults() -> None:
    """convert-coop-to-ptx's options are `pipelined_plan.Options` field for field (the pass builds
    Options from them by name), with the same defaults."""
    from dataclasses import fields

    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
    from coopdialect.ptx.pipelined_plan import Options

    pass_ = ConvertCoopToPtxPass()
    for f in fields(Options):
        assert getattr(pass_, f.name) == f.default, f.name


def test_sparse_batch_option_is_checked() -> None:
    with pytest.raises(Exception, match="sparse-batch must be 1 or 2"):
        lower(sparse_gemm_wg_ir(256, 512, 512, "f16"), 4, "{sparse_batch=3}")
    with pytest.raises(Exception, match="sparse-in-flight must be 0 or 1"):
        lower(sparse_gemm_wg_ir(256, 512, 512, "f16"), 4, "{sparse_in_flight=2}")


@pytest.mark.parametrize("kind,dt,stages,extra", [("dense", "f16", 3, ""), ("dense", "bf16", 4, ""),
                                                  ("sparse", "f16", 5, ""),
                                                  ("sparse", "f16", 5, " sparse_batch=2 sparse_in_flight=0"),
                                                  ("sparse", "f16", 4, " sparse_batch=1"),
                                                  ("sparse", "e4m3", 3, "")])
def test_persistent_pipeline_assembles_and_describes_its_grid(tmp_path: Path, kind: str, dt: str,
                                                              stages: int, extra: str) -> None:
    ir = (gemm_wg_ir(256, 512, 512, dt) if kind == "dense"
          else sparse_gemm_wg_ir(256, 512, 1024, dt))
    m = lower(ir, stages, f"{{persistent=true{extra}}}")
    (k,) = describe(m)["kernels"]
    assert k["grid"] == "persistent"
    assert k["params"][-2:] == [{"kind": "grid", "dim": "x"}, {"kind": "grid", "dim": "y"}]
    text = emit_ptx(m)
    names = re.findall(r"\.param (?:\.align 64 \.b8 (\w+)\[128\]|\.u64 (\w+))", text)
    assert [n or t for t, n in names][-2:] == [f"{k['name']}_grid_x", f"{k['name']}_grid_y"]
    _assembles_clean(tmp_path, text)


def test_persistent_kernel_refuses_clusters() -> None:
    with pytest.raises(Exception, match="persistent kernel runs without clusters"):
        lower(gemm_wg_ir(256, 512, 512, "f16"), 4, "{persistent=true cluster_m=2}")


def test_persistent_kernel_needs_the_guarded_copies_of_the_staging_pass() -> None:
    # the loop's copies must fill group P + i only while it is a group the loop reads: a guard
    # that lets one more copy through would start a barrier phase that no consumer completes
    m = parsed.parse(gemm_wg_ir(128, 256, 512, "f16"))
    api.run_pipeline(m, "pipeline-coop-loads{stages=3}")
    text = str(m)
    guard = re.search(r"(%\w+) = arith\.cmpi slt, (%\w+), (%\w+) : index\n(\s*)(%\w+ = .*\n\s*)*?scf\.if \1", text)
    assert guard, text
    bad = text.replace(guard.group(0), guard.group(0).replace("cmpi slt", "cmpi sle", 1), 1)
    with pytest.raises(Exception, match=r"guarded by `iv \+ 128 < ub`"):
        api.run_pipeline(parsed.parse(bad), "convert-coop-to-ptx{persistent=true}")


def _prmt(a: int, b: int, sel: int) -> int:
    """`prmt.b32 d, a, b, c` in the default mode (PTX ISA 9.7.8.7): byte i of d is byte
    c[4i+2:4i] of {b, a} (a = bytes 0-3), or that byte's sign replicated when c[4i+3] is set."""
    pool = [(a >> 8 * i) & 255 for i in range(4)] + [(b >> 8 * i) & 255 for i in range(4)]
    out = 0
    for i in range(4):
        c = (sel >> 4 * i) & 15
        byte = pool[c & 7]
        out |= ((255 if byte & 128 else 0) if c & 8 else byte) << 8 * i
    return out


def _value(v, loads: dict) -> int:
    """The .b32 value of `v`, from the instructions that compute it (the sp-meta words' chain:
    shared-memory loads given by `loads`, immediates, and/or/shl/shr/prmt)."""
    from coopdialect.dialects import ptx

    op = v.owner
    if isinstance(op, ptx.LdOp):
        return loads[v]
    if isinstance(op, ptx.MovImmOp):
        return int(op.imm.data, 0) & 0xFFFFFFFF
    x = [_value(a, loads) for a in op.args]
    r = {ptx.AndOp: lambda: x[0] & x[1], ptx.OrOp: lambda: x[0] | x[1],
         ptx.ShlOp: lambda: x[0] << x[1], ptx.ShrOp: lambda: x[0] >> x[1],
         ptx.PrmtOp: lambda: _prmt(*x), ptx.PrmtIntoOp: lambda: _prmt(*x)}[type(op)]()
    return r & 0xFFFFFFFF


@pytest.mark.parametrize("dt,rows_apart", [("f16", 8), ("s8", 0), ("e4m3", 0)])
def test_sparse_meta_words_pack_the_metadata_bytes_as_the_spec_says(dt: str, rows_apart: int) -> None:
    """Every sp-meta operand of the pipeline's wgmma.mma_async.sp, evaluated from the two
    metadata words it loads (random bytes; one byte per 4-chunk, low nibble significant, as
    `sparse_mma` keeps them): chunk j of the first word at bits 4j, of the second at 16 + 4j
    (ptx-wgmma-sparse.md section 3: f16 rows r and r + 8 of the lane, 8-bit types chunks 0-3
    and 4-7 of one row), whatever the bytes' high nibbles hold."""
    import random

    from coopdialect.dialects import ptx

    m = lower(sparse_gemm_wg_ir(256, 512, 1024, dt), 3)
    rng = random.Random(7)
    nib16 = lambda w: sum(((w >> 8 * j) & 15) << 4 * j for j in range(4))  # noqa: E731
    mmas = [op for op in m.walk() if isinstance(op, ptx.WgmmaMmaAsyncSpOp)]
    assert mmas
    for mma in mmas:
        meta = mma.args[mma.a_count.data + 1]
        chain = [meta]
        lds = []
        while chain:
            v = chain.pop()
            if isinstance(v.owner, ptx.LdOp):
                lds.append(v.owner)
            elif isinstance(v.owner, ptx.PtxInst | ptx.PrmtIntoOp):
                chain.extend(v.owner.args)
        x, y = sorted({id(o): o for o in lds}.values(), key=lambda o: o.offset.data)
        assert x.addr is y.addr and x.mods.data == y.mods.data == ".shared.b32"
        # f16: a stage's metadata rows are K/4 = 16 bytes (one byte a chunk); 8-bit: the next word
        assert y.offset.data - x.offset.data == (rows_apart * 16 if rows_apart else 4)
        for _ in range(50):
            loads = {x.results[0]: rng.getrandbits(32), y.results[0]: rng.getrandbits(32)}
            want = nib16(loads[x.results[0]]) | nib16(loads[y.results[0]]) << 16
            assert _value(meta, loads) == want
