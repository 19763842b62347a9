"""The attention kernels (coopdialect.kernels.attention, examples/attention.mlir): the checked-in
example is the generator's output; the interpreter's O and LSE are within the documented bound
of the float64 model (coopdialect.kernels.attention_bound) at sequence lengths that are and are
not block multiples, causal and not, f16 and bf16; the PTX lowering, run by tests/ptx_sim.py,
writes the interpreter's bits; the SPIR-V module passes spirv-val and, read back and raised,
interprets to the same bits."""

from __future__ import annotations

import functools
import re
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from validators import spirv_val

from coopdialect import api
from coopdialect.kernels.attention import (EXAMPLE, PTX_TUNED, AttentionConfig, attention_module,
                                           grid, ptx_pipeline)
from coopdialect.kernels.attention_bound import error_bound, row_stats
import parsed

ROOT = Path(__file__).resolve().parents[1]
NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _data(rng, b, h, s, d, dtype, spread=1.0):
    return [(rng.standard_normal((b, h, s, d)) * spread).astype(NP[dtype]) for _ in range(3)]


def _run(text, name, q, k, v, scale, causal, cfg):
    """O and LSE of one interpreted launch on its declared grid."""
    b, h, s, _ = q.shape
    o, lse = np.zeros_like(q), np.zeros((b, h, s), np.float32)
    args = [q.reshape(-1), k.reshape(-1), v.reshape(-1), o.reshape(-1), lse.reshape(-1),
            b, h, s, np.float32(scale), int(causal)]
    api.run_kernel(parsed.parse(text), name, args)
    assert grid(cfg, b, h, s) == (-(-s // cfg.block_m), h, b)
    return o, lse


def test_example_is_the_generator_output():
    assert (ROOT / "examples/attention.mlir").read_text() == attention_module(EXAMPLE)
    r = subprocess.run([sys.executable, "-m", "coopdialect.kernels.attention"],
                       capture_output=True, text=True, check=True)
    assert r.stdout == attention_module(EXAMPLE)


@pytest.mark.parametrize("bad", [dict(dtype="f32"), dict(head_dim=72), dict(block_n=40),
                                 dict(block_m=128, threads=128)])
def test_generator_refuses(bad):
    with pytest.raises(ValueError):
        attention_module([AttentionConfig(**{**AttentionConfig().__dict__, **bad})])


# (config, batch, heads, seq): the example's tiles at one full and one cut key block, a block
# multiple, and narrow tiles whose block_n differs from head_dim (the Row reduction of a and l to
# O's shape) with several query blocks
CASES = [(EXAMPLE[0], 1, 2, 100), (EXAMPLE[0], 2, 1, 128), (EXAMPLE[1], 1, 1, 70),
         (AttentionConfig(32, "f16", 64, 16, 128), 1, 2, 150),
         (AttentionConfig(32, "bf16", 64, 48, 128), 1, 1, 100)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("cfg,b,h,s", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_interpreter_is_within_the_bound(cfg, b, h, s, causal):
    rng = np.random.default_rng(s + 7 * causal)
    q, k, v = _data(rng, b, h, s, cfg.head_dim, cfg.dtype, 1.5)
    scale = cfg.head_dim ** -0.5
    o, lse = _run(attention_module([cfg]), cfg.name, q, k, v, scale, causal, cfg)
    st = row_stats(q, k, v, scale, causal)
    bo, blse = error_bound(st, cfg, causal)
    err_o = np.abs(o.astype(np.float64) - st.o)
    err_l = np.abs(lse.astype(np.float64) - st.lse)
    assert (err_o <= bo).all(), float((err_o / bo).max())
    assert (err_l <= blse).all(), float((err_l / blse).max())
    # the bound is P's and O's rounding to T, not slack: it is reached to within a small factor
    assert (err_o / bo).max() > 0.25


def _same_bits_as_plain(form: AttentionConfig, text: str, seq: int, causal: bool, seed: int):
    """The interpreter runs `text` (the kernel of `form`, a reordered loop) and the plain kernel
    of the same tiles on one random input: O and LSE must be the same bits."""
    import dataclasses

    plain = dataclasses.replace(form, overlap=False, late_pv=False)
    q, k, v = _data(np.random.default_rng(seed), 1, 2, seq, plain.head_dim, plain.dtype, 1.5)
    want = _run(attention_module([plain]), plain.name, q, k, v, 0.2, causal, plain)
    got = _run(text, form.name, q, k, v, 0.2, causal, form)
    for a, b in zip(want, got):
        assert np.array_equal(a.view(np.uint16 if a.itemsize == 2 else np.uint32),
                              b.view(np.uint16 if b.itemsize == 2 else np.uint32))


@pytest.mark.parametrize("causal", [False, True])
def test_overlap_computes_the_same_bits(causal):
    """`overlap` (the next key block's Q Kᵀ issued before this block's softmax, the scores
    carried through both loops) reorders no arithmetic: the interpreter gives the plain
    kernel's bits, at a cut last block and several query blocks."""
    import dataclasses

    ov = dataclasses.replace(AttentionConfig(32, "f16", 64, 16, 128), overlap=True)
    text = attention_module([ov])
    assert text.count("coop.mul_add %qt") == 3  # before the loops and in each
    _same_bits_as_plain(ov, text, 150, causal, 9 + causal)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq", [150, 16])
def test_late_pv_computes_the_same_bits(causal, seq):
    """`late_pv` (a block's P V issued in the next trip, after its Q Kᵀ; the last one after
    the loops) computes O = a·O + P V in the same order: the interpreter gives the plain
    kernel's bits, at a cut last block, several query blocks, and a sequence of one block."""
    import dataclasses

    late = dataclasses.replace(AttentionConfig(32, "f16", 64, 16, 128), late_pv=True)
    text = attention_module([late])
    assert text.count("coop.mul_add %pp") == 2 and "coop.mul_add %res#3" in text
    _same_bits_as_plain(late, text, seq, causal, 19 + causal)


def test_masked_and_cut_rows_are_not_written():
    """Rows past S are dropped by the store (the memref holds exactly B*H*S rows); a causal row
    ignores later keys: changing them leaves the row's output unchanged."""
    cfg = AttentionConfig(32, "f16", 64, 16, 128)
    rng = np.random.default_rng(3)
    q, k, v = _data(rng, 1, 1, 40, 32, "f16")
    o1, l1 = _run(attention_module([cfg]), cfg.name, q, k, v, 0.2, True, cfg)
    k2, v2 = k.copy(), v.copy()
    k2[0, 0, 20:], v2[0, 0, 20:] = 7, -7
    o2, l2 = _run(attention_module([cfg]), cfg.name, q, k2, v2, 0.2, True, cfg)
    assert np.array_equal(o1[0, 0, :20], o2[0, 0, :20]) and np.array_equal(l1[0, 0, :20], l2[0, 0, :20])
    assert not np.array_equal(o1[0, 0, 20:], o2[0, 0, 20:])


def _ptx_kernel(module, name):
    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass

    # cp.async copies: the simulator has no bulk tensor copies or mbarriers (those are checked
    # on the GPU, tests/gpu/test_gpu_attention.py)
    ConvertCoopToPtxPass(bulk_copies=False).apply(make_context(), module)
    return {k.sym_name.data: k for k in module.ops}[name]


SIM_SCALE = np.float32(0.3)


@functools.lru_cache(maxsize=None)
def _interpreted(cfg: AttentionConfig, s: int, causal: bool):
    """(kernel text, the interpreter's buffers Q K V O LSE after one head of `s` rows) on
    small-integer Q, K, V with SIM_SCALE: every product and sum is exact, so the PTX must write
    the interpreter's bits. Once per case: the op-by-op and the staged tests, aligned and
    shifted, share it (callers must not write to the buffers)."""
    rng = np.random.default_rng(11)
    q, k, v = (rng.integers(-3, 4, s * cfg.head_dim).astype(NP[cfg.dtype]) for _ in range(3))
    text = attention_module([cfg])
    want = [q, k, v, np.zeros_like(q), np.zeros(s, np.float32)]
    api.run_kernel(parsed.parse(text), cfg.name, want + [1, 1, s, SIM_SCALE, int(causal)])
    for w in want:
        w.flags.writeable = False
    return text, want


def _exact_case(cfg: AttentionConfig, s: int, causal: bool):
    """(kernel text, `_interpreted`'s buffers, the simulator's argument list with O and LSE
    zeroed)."""
    text, want = _interpreted(cfg, s, causal)
    q, k, v = (x.copy() for x in want[:3])
    got = [q, k, v, np.zeros_like(q), np.zeros(s, np.float32), struct.pack("<i", 1),
           struct.pack("<i", 1), struct.pack("<i", s), struct.pack("<f", SIM_SCALE),
           struct.pack("<i", int(causal))]
    return text, want, got


@functools.lru_cache(maxsize=None)
def _op_by_op(cfg: AttentionConfig):
    """The op-by-op PTX kernel of `cfg` (shared by the aligned and the shifted runs)."""
    return _ptx_kernel(parsed.parse(attention_module([cfg])), cfg.name)


@pytest.mark.parametrize("cfg,s,causal,shift", [
    (AttentionConfig(16, "f16", 64, 32, 128), 40, True, 0),
    (AttentionConfig(32, "bf16", 64, 16, 128), 20, False, 0),
    (AttentionConfig(64, "f16", 64, 16, 128), 70, True, 0),
    (AttentionConfig(64, "f16", 64, 16, 128), 70, True, 2),
    (AttentionConfig(32, "f16", 64, 16, 128, late_pv=True), 70, True, 0)],
    ids=["d16_bn32_causal", "d32_bn16_bf16", "d64_bn16_causal", "d64_bn16_causal_unaligned",
         "d32_bn16_causal_late_pv"])
def test_ptx_runs_like_the_interpreter(cfg, s, causal, shift):
    """The op-by-op PTX (wgmma QKᵀ, Row reductions in registers, P·V with A in registers,
    ex2.approx modelled as the exact value rounded once, as the interpreter's exp2) on the
    simulator: bit for bit the interpreter's O and LSE, with a cut key block and both masks.
    At D = 64 Q, K and V are staged 16 bytes at a time (rows past S discarded as whole groups;
    V's groups run along N, so its tile is MN-major and P·V transposes B); `shift` moves them
    off 16-byte alignment, which takes the element-by-element path of the same groups. At
    S = 70, causal, the second query block has four unmasked key blocks before the masked
    one."""
    import ptx_sim

    _, want, got = _exact_case(cfg, s, causal)
    ptx_sim.Kernel(_op_by_op(cfg)).run(got, grid(cfg, 1, 1, s), (cfg.threads, 1, 1),
                                       [shift] * 3 + [0, 0])
    for i in (3, 4):
        assert np.array_equal(got[i].view(np.uint8), want[i].view(np.uint8)), \
            f"buffer {i}: {np.count_nonzero(got[i] != want[i])} elements differ"
    assert np.abs(want[3].astype(np.float64)).max() > 0


def _staged(text: str, stages: int):
    module = parsed.parse(text)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        api.run_pipeline(module, f"pipeline-coop-loads{{stages={stages}}}")
    return module


@functools.lru_cache(maxsize=None)
def _staged_kernel(cfg: AttentionConfig, s: int, causal: bool, stages: int):
    """`cfg`'s kernel staged by pipeline-coop-loads{stages}: checked to stage K and V in shared
    buffers and to interpret to `_interpreted`'s bits, then lowered to its PTX kernel (shared by
    the aligned and the shifted runs)."""
    from coopdialect.dialects import coop_async

    text, want = _interpreted(cfg, s, causal)
    module = _staged(text, stages)
    ops = list(module.walk())
    assert sum(isinstance(o, coop_async.AllocWorkgroupOp) for o in ops) == 2  # K and V, shared
    assert sum(isinstance(o, coop_async.AsyncCopyTensorOp) for o in ops) == 4 * stages
    staged = [*(w.copy() for w in want[:3]), np.zeros_like(want[3]), np.zeros_like(want[4])]
    api.run_kernel(module, cfg.name, staged + [1, 1, s, SIM_SCALE, int(causal)])
    for i in (3, 4):
        assert np.array_equal(staged[i].view(np.uint8), want[i].view(np.uint8))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        return _ptx_kernel(module, cfg.name)


@pytest.mark.parametrize("cfg,s,causal,shift,stages", [
    (AttentionConfig(16, "f16", 64, 32, 128), 40, True, 0, 2),
    (AttentionConfig(64, "f16", 64, 16, 128), 70, True, 0, 3),
    (AttentionConfig(64, "f16", 64, 16, 128), 70, True, 2, 3),
    (AttentionConfig(32, "bf16", 64, 16, 128), 20, False, 0, 2),
    (AttentionConfig(64, "f16", 64, 16, 128, overlap=True), 70, True, 0, 3),
    (AttentionConfig(32, "f16", 64, 32, 128, overlap=True), 100, False, 0, 2),
    (AttentionConfig(64, "f16", 64, 16, 128, late_pv=True), 70, True, 0, 3),
    (AttentionConfig(32, "f16", 64, 32, 128, late_pv=True), 100, False, 0, 2)],
    ids=["d16_s2_causal", "d64_s3_causal", "d64_s3_causal_unaligned", "d32_bf16_s2",
         "d64_s3_causal_overlap", "d32_s2_overlap", "d64_s3_causal_late_pv", "d32_s2_late_pv"])
def test_staged_ptx_runs_like_the_interpreter(cfg, s, causal, shift, stages):
    """`pipeline-coop-loads{stages=S}` stages K (a 3-D layout read through the view that swaps
    its last two dimensions) and V in both key loops, which share their buffers; the staged
    kernel interprets to the same bits as the original (the interpreter refuses a read of a
    copy that has not landed), and its PTX — op by op, cp.async copies of 16-byte groups into
    the wgmma tiles (src-size 0 past S), one barrier per wait — runs on the simulator, where
    a copy lands only at the cp.async.wait_group that retires it, to the same bits."""
    import ptx_sim

    _, want, got = _exact_case(cfg, s, causal)
    kernel = _staged_kernel(cfg, s, causal, stages)
    ptx_sim.Kernel(kernel).run(got, grid(cfg, 1, 1, s), (cfg.threads, 1, 1), [shift] * 3 + [0, 0])
    for i in (3, 4):
        assert np.array_equal(got[i].view(np.uint8), want[i].view(np.uint8)), \
            f"buffer {i}: {np.count_nonzero(got[i] != want[i])} elements differ"


@pytest.mark.parametrize("d", sorted(PTX_TUNED))
def test_tuned_ptx_kernels_assemble(d, tmp_path):
    """The benchmark's PTX kernels (PTX_TUNED: tiles past 48 KB of shared memory, K and V
    staged S-1 blocks ahead): ptxas fits min_ctas of them a multiprocessor, their shared memory is the
    kernel's dynamic `.extern .shared` array, and the launch asks for exactly the mbarriers
    (the first 1024 bytes: the swizzled tiles after them are 1024-byte aligned) + Q + S x (K + V).
    K and V are copied by the bulk tensor copy engine, 64 columns a box, through 3-D tensor maps
    of the [B*H, S, D] layout (innermost first, strides in bytes) that the host encodes."""
    from coopdialect.ptx.launch import describe
    from coopdialect.ptx.printer import emit_ptx
    from validators import ptxas

    cfg, stages = PTX_TUNED[d]
    module = parsed.parse(attention_module([cfg]))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        api.run_pipeline(module, ptx_pipeline(stages))
    text = emit_ptx(module)
    (desc,) = describe(module)["kernels"]
    # (with `overlap`, key block 0's K tile before the loops, with `late_pv` the last V tile
    # after them, staged by the threads)
    want = 1024 + 2 * cfg.block_m * d \
        + (stages * 2 + cfg.overlap + cfg.late_pv) * (2 * cfg.block_n * d)
    assert desc["dynamic_shared_bytes"] == want > 48 * 1024
    assert f".extern .shared .align 1024 .b8 {cfg.name}_dsmem[];" in text
    assert ".shared .align" not in text.replace(".extern .shared", "")
    assert "cp.async.bulk.tensor.3d" in text and "cp.async.cg" not in text
    assert "mbarrier.try_wait.parity" in text and "bar.sync" in text
    maps = [p for p in desc["params"] if p["kind"] == "tensor_map"]
    assert [p["arg"] for p in maps] == [1, 2]  # K and V
    bh = {"op": "mul", "args": [{"arg": 5}, {"arg": 6}]}
    for p in maps:
        assert p["global_dims"] == [d, {"arg": 7}, bh]
        assert p["global_strides"] == [2 * d, {"op": "mul", "args": [
            {"op": "mul", "args": [d, {"arg": 7}]}, 2]}]
        assert p["box_dims"] == [64, cfg.block_n, 1] and p["swizzle"] == "128B"
    path = tmp_path / "a.ptx"
    path.write_text(text)
    r = subprocess.run([ptxas(), "-arch=sm_90a", "-v", str(path), "-o", str(tmp_path / "a.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "C75" not in r.stderr, r.stderr  # no wgmma serialized
    # overlap: the softmax's ex2 run between a product's commit and its wait
    between = [seg.split("wgmma.wait_group")[0] for seg in text.split("wgmma.commit_group")[1:]]
    assert any("ex2.approx" in seg for seg in between) == cfg.overlap
    # late_pv: after Q Kᵀ and the previous block's P V, the wait for the older group only
    # (`wait_group 1`); the softmax's ex2 before the wait for P V
    late = [seg.split("wgmma.wait_group.sync.aligned 0")[0]
            for seg in text.split("wgmma.wait_group.sync.aligned 1;")[1:]]
    assert len(late) == (2 if cfg.late_pv else 0)  # one in each loop
    assert all("ex2.approx" in seg for seg in late)
    # pingpong: the last warpgroup's first thread copies (it is last to take each turn)
    issuer = re.search(r"setp\.eq\.u32 (%p\d+), %r\d+, (%r\d+);\s*@\1 bra", text)
    assert re.search(rf"mov\.b32 {issuer.group(2)}, {128 if cfg.pingpong else 0};", text)
    # nvvm.minctasm N: N workgroups a multiprocessor, in registers (64K) and in shared memory
    # (228 KB, 1 KB of it reserved a workgroup); without it, one
    ctas = cfg.min_ctas or 1
    assert (f".minnctapersm {cfg.min_ctas}" in text) == bool(cfg.min_ctas)
    regs = int(re.search(r"Used (\d+) registers", r.stderr).group(1))
    assert regs * cfg.threads * ctas <= 65536, r.stderr
    assert ctas * (desc["dynamic_shared_bytes"] + 1024) <= 228 * 1024
    spilled = int(re.search(r"(\d+) bytes spill stores", r.stderr).group(1))
    # two workgroups of D 64 spill about 230 bytes at 128 registers, and are still the faster form
    assert spilled <= (512 if ctas > 1 else 0), r.stderr


def _tuned_ptx(cfg: AttentionConfig, stages: int, lowering: str = "convert-coop-to-ptx") -> str:
    from coopdialect.ptx.printer import emit_ptx

    module = _staged(attention_module([cfg]), stages)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        api.run_pipeline(module, lowering)
    return emit_ptx(module)


def test_pingpong_warpgroups_take_turns():
    """`coop.pingpong` (PTX_TUNED at D 128): the last warpgroup gives warpgroup 0 its first
    turn; each loop of products takes the turn on entry (`bar.sync` on the warpgroup's own
    barrier, 256 threads: its 128 and the previous warpgroup's arrival) and gives it at its
    exit (`bar.arrive` on the next one's). In between, a warpgroup issues wgmma only holding
    the turn, gives it before its softmax, and never waits at a workgroup barrier while it
    holds it (the other warpgroup, waiting for the turn, could not arrive)."""
    cfg, stages = PTX_TUNED[128]
    assert cfg.pingpong
    text = _tuned_ptx(cfg, stages)
    events = re.findall(r"(bar\.sync %r\d+, 256|bar\.arrive %r\d+, 256|bar\.sync 0|"
                        r"wgmma\.fence|// coop\.per_element_op|// coop\.async_wait_group|"
                        r"ret;)", text)
    first = next(i for i, e in enumerate(events) if e.startswith("bar.sync %r"))
    assert [e.split()[0] for e in events[:first]].count("bar.arrive") == 1  # the first turn
    held, takes, prev = False, 0, ""
    for e in events[first:]:
        if e.startswith("bar.sync %r"):
            assert not held
            held, takes = True, takes + 1
        elif e.startswith("bar.arrive"):
            assert held
            held = False
        elif e == "wgmma.fence":
            assert held
        elif e == "// coop.async_wait_group":
            # held only at a loop's top, entered with the turn: its groups were committed in
            # earlier turns (after a loop, a drain waits for the last turns' commits)
            assert not held or prev.startswith("bar.sync %r"), "a wait in the turn"
        else:  # a softmax, a workgroup barrier, the end
            assert not held, e
        prev = e
    # taken at each loop's entry and back edge (a trip issues Q Kᵀ, then the previous block's
    # P V: late_pv), and for the last block's P V after them
    assert takes == 5 and re.search(r"bar\.arrive (%r\d+), 256;", text)
    # the issuing thread, 128, initializes the mbarriers
    init = text.split("mbarrier.init")[0].rsplit("setp.eq.u32", 1)[1]
    reg = re.match(r" %p\d+, %r\d+, (%r\d+);", init).group(1)
    assert re.search(rf"mov\.b32 {reg}, 128;", text)


def test_pingpong_not_applied_is_said():
    """Where the kernel's form does not allow turns, `coop.pingpong` leaves a comment saying
    why and no named barrier: cp.async copies (each wait is a workgroup barrier), one
    warpgroup."""
    import dataclasses

    cfg, stages = PTX_TUNED[128]
    text = _tuned_ptx(cfg, stages, "convert-coop-to-ptx{bulk-copies=false}")
    assert "// coop.pingpong not applied: the kernel's copies are not all bulk tensor" in text
    assert "bar.arrive" not in text and not re.search(r"bar\.sync %r", text)
    one = dataclasses.replace(cfg, block_m=64, block_n=64, threads=128)
    text = _tuned_ptx(one, stages)
    assert "// coop.pingpong not applied: 128 invocations are not 2 to 15 warpgroups" in text
    assert "bar.arrive" not in text


def test_overlap_ptx_runs_the_softmax_beside_the_next_product(tmp_path):
    """With `overlap` the op-by-op PTX commits the next block's Q Kᵀ and waits for it only at
    the loop's end: the softmax's ex2 and the P V product are issued in between, and ptxas
    finds no register of a product in flight touched (no C7517/C7519: it injects no wait)."""
    from coopdialect.ptx.printer import emit_ptx
    from validators import ptxas

    cfg = AttentionConfig(64, "f16", 128, 64, 256, overlap=True)
    module = parsed.parse(attention_module([cfg]))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        api.run_pipeline(module, ptx_pipeline(2))
    text = emit_ptx(module)
    between = [seg.split("wgmma.wait_group")[0] for seg in text.split("wgmma.commit_group")[1:]]
    assert sum("ex2.approx" in seg and "wgmma.mma_async" in seg for seg in between) == 2  # 2 loops
    path = tmp_path / "a.ptx"
    path.write_text(text)
    r = subprocess.run([ptxas(), "-arch=sm_90a", str(path), "-o", str(tmp_path / "a.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stderr


def test_spirv_is_valid_and_raises_to_the_same_results(tmp_path):
    from test_raise_spirv import raised

    spirv_val(api.compile_to_spirv(parsed.parse_file(str(ROOT / "examples/attention.mlir"))),
              tmp_path, "attention.spv")
    cfg = AttentionConfig(32, "f16", 64, 16, 128)
    text = attention_module([cfg])
    module, name = raised(api.compile_to_spirv(parsed.parse(text)))
    rng = np.random.default_rng(5)
    q, k, v = _data(rng, 1, 2, 50, 32, "f16")
    for causal in (False, True):
        want = _run(text, cfg.name, q, k, v, 0.25, causal, cfg)
        o, lse = np.zeros_like(q), np.zeros((1, 2, 50), np.float32)
        api.run_kernel(module, name, [q.reshape(-1), k.reshape(-1), v.reshape(-1), o.reshape(-1),
                                      lse.reshape(-1), 1, 2, 50, np.float32(0.25), int(causal)],
                       grid(cfg, 1, 2, 50))
        assert np.array_equal(o, want[0]) and np.array_equal(lse, want[1])


def test_vulkan_check_tolerates_the_matrix_division():
    """coop-run --check on Vulkan allows OpFDiv's 2.5 ulp for coop.fdiv as for arith.divf."""
    from coopdialect.runtime.run import VULKAN_FDIV_ULP, documented_ulp

    module = parsed.parse_file(str(ROOT / "examples/attention.mlir"))
    assert documented_ulp(module, "vulkan") == VULKAN_FDIV_ULP
    assert documented_ulp(module, "cuda") == 0
