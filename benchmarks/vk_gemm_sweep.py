"""Which Vulkan GEMM structure does the NVIDIA driver make fastest? (the experiments behind
convert-coop-to-spirv's staged form)

    python benchmarks/vk_gemm_sweep.py build build/vksweep     # here: variants -> .spv + manifest
    python3 build/vksweep/vk_gemm_sweep.py run build/vksweep --out $OUT   # on the GPU, from the
                                                                           # repository root
    (the run needs a Vulkan-ready GPU machine, docs/gpu.md, and coopdialect installed: its
    runtime.vulkan_ctypes runs the modules; `build --only REGEX` builds a subset)

C[M,N] = A[M,K] · B[K,N], A and B row-major, M = N = K = S. Variants:

* `khr_*`: KHR subgroup cooperative matrices (16×16×16 f16 / 16×16×32 s8) loaded from
  Workgroup-memory tiles. The tiles are copied global→shared by all invocations with 16-byte
  (uvec4) loads and stores; shared rows are padded (`pad`, elements) so that the 8 rows one
  ldmatrix-like fetch reads fall into different banks. Each subgroup owns a warp tile of
  (BM/wm)×(BN/wn) elements = several 16×16 accumulators. `pipe` is how copy and compute overlap:
    - `sync`:    copy tile k → barrier → compute → barrier (one buffer, 2 barriers per K step);
    - `regs1`:   one buffer; tile k+1 is loaded into registers before computing tile k and
                 stored after it (2 barriers per K step);
    - `regs2`:   two buffers; registers of tile k+1 loaded before computing tile k, stored into
                 the other buffer after it; one barrier per K step (the lowering of
                 `coop.async_copy` with 2 stages: load at issue, store at the wait);
    - `directS`: S buffers; copy of tile k+S-1 issued after computing tile k, one barrier per K
                 step (the copies go global→register→shared as the driver schedules them).
  Written as GLSL here and compiled by glslangValidator (this is an experiment to choose the
  structure that `convert-coop-to-spirv` emits; the product is generated from IR).
* `cm2_*`: the coopmat2 workgroup-scope form (SPV_NV_cooperative_matrix2, tensor-addressed
  loads), generated as coop IR and compiled by coopdialect (fold-tensor-views,
  convert-coop-to-spirv), with tile BM×BN, K step BK, invocations and K-loop unroll.

`run` screens every variant at 4096³ (S8 too), then times the fastest `--finalists` of each
kind at 8192³; each dispatch is timed with the runner's timestamp benchmark (device-local
buffers, 3 warm-up + 10 timed, median), every result is checked against torch (f16: relative
Frobenius error to the f32 product; s8: exact equality with torch._int_mm), and torch.matmul f16
and torch._int_mm s8 are timed in the same process (CUDA events, median of 20). Results are
written after every variant (a killed run still reports what it measured).
"""

from __future__ import annotations

import argparse
import json
import re
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
SMEM_LIMIT = 49152  # VkPhysicalDeviceLimits::maxComputeSharedMemorySize on the H200 (docs/vulkan.md)
SIZES = (4096, 8192)


@dataclass(frozen=True)
class Khr:
    dtype: str      # "f16" (A, B f16) or "s8"
    acc: str        # "f32" / "f16" / "s32"
    bm: int
    bn: int
    bk: int
    wg: int         # invocations
    wm: int         # subgroups along M
    wn: int         # subgroups along N
    pipe: str       # sync / regs1 / regs2 / direct2 / direct3
    pad: int        # shared row padding (elements)

    @property
    def name(self) -> str:
        return (f"khr_{self.dtype}{self.acc}_{self.bm}x{self.bn}x{self.bk}_wg{self.wg}_"
                f"{self.wm}x{self.wn}_{self.pipe}_p{self.pad}")

    @property
    def epv(self) -> int:  # elements per 16-byte vector
        return 8 if self.dtype == "f16" else 16

    @property
    def tk(self) -> int:
        return 16 if self.dtype == "f16" else 32

    @property
    def stages(self) -> int:
        return {"sync": 1, "regs1": 1, "regs2": 2, "direct2": 2, "direct3": 3}[self.pipe]

    def smem(self) -> int:
        esz = 2 if self.dtype == "f16" else 1
        return self.stages * esz * (self.bm * (self.bk + self.pad) + self.bk * (self.bn + self.pad))

    def ok(self) -> bool:
        wtm, wtn = self.bm // self.wm, self.bn // self.wn
        acc_regs = wtm * wtn // 32 * (2 if self.acc == "f16" else 4) // 4
        copies = (self.bm * self.bk + self.bk * self.bn) // self.epv
        return (self.wm * self.wn * 32 == self.wg and wtm % 16 == 0 and wtn % 16 == 0
                and self.bk % self.tk == 0 and self.pad % self.epv == 0
                and copies % self.wg == 0 and acc_regs <= 128 and self.smem() <= SMEM_LIMIT)


def khr_glsl(v: Khr, s: int) -> str:
    """GLSL of variant `v` at M = N = K = s."""
    at = "float16_t" if v.dtype == "f16" else "int8_t"
    ct = {"f32": "float", "f16": "float16_t", "s32": "int"}[v.acc]
    e, tk = v.epv, v.tk
    ap, bp = (v.bk + v.pad) // e, (v.bn + v.pad) // e           # shared row pitch (vectors)
    sa, sb = v.bm * ap, v.bk * bp                              # one stage (vectors)
    va, vb = v.bk // e, v.bn // e                              # vectors per tile row
    na, nb = v.bm * va // v.wg, v.bk * vb // v.wg              # vectors per invocation
    wtm, wtn = v.bm // v.wm, v.bn // v.wn
    cm, cn = wtm // 16, wtn // 16
    kt = s // v.bk
    return f"""#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = {v.wg}, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) readonly buffer BA {{ uvec4 A[]; }};
layout(set = 0, binding = 1) readonly buffer BB {{ uvec4 B[]; }};
layout(set = 0, binding = 2) writeonly buffer BC {{ {ct} C[]; }};
const uint S = {s}, KT = {kt};
shared uvec4 sA[{v.stages * sa}];
shared uvec4 sB[{v.stages * sb}];
uvec4 ra[{na}], rb[{nb}];
void gload(uint m0, uint n0, uint kt) {{
  [[unroll]] for (uint i = 0; i < {na}; i++) {{
    uint x = gl_LocalInvocationID.x + i * {v.wg}, r = x / {va}, c = x % {va};
    ra[i] = A[(m0 + r) * (S / {e}) + kt * {va} + c];
  }}
  [[unroll]] for (uint i = 0; i < {nb}; i++) {{
    uint x = gl_LocalInvocationID.x + i * {v.wg}, r = x / {vb}, c = x % {vb};
    rb[i] = B[(kt * {v.bk} + r) * (S / {e}) + n0 / {e} + c];
  }}
}}
void sstore(uint st) {{
  [[unroll]] for (uint i = 0; i < {na}; i++) {{
    uint x = gl_LocalInvocationID.x + i * {v.wg}, r = x / {va}, c = x % {va};
    sA[st * {sa} + r * {ap} + c] = ra[i];
  }}
  [[unroll]] for (uint i = 0; i < {nb}; i++) {{
    uint x = gl_LocalInvocationID.x + i * {v.wg}, r = x / {vb}, c = x % {vb};
    sB[st * {sb} + r * {bp} + c] = rb[i];
  }}
}}
void copy(uint m0, uint n0, uint kt, uint st) {{ gload(m0, n0, kt); sstore(st); }}
coopmat<{ct}, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[{cm * cn}];
void compute(uint st, uint wr, uint wc) {{
  [[unroll]] for (uint kk = 0; kk < {v.bk}; kk += {tk}) {{
    coopmat<{at}, gl_ScopeSubgroup, 16, {tk}, gl_MatrixUseA> ma[{cm}];
    coopmat<{at}, gl_ScopeSubgroup, {tk}, 16, gl_MatrixUseB> mb[{cn}];
    [[unroll]] for (uint i = 0; i < {cm}; i++)
      coopMatLoad(ma[i], sA, st * {sa} + (wr + i * 16) * {ap} + kk / {e}, {ap}, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint j = 0; j < {cn}; j++)
      coopMatLoad(mb[j], sB, st * {sb} + kk * {bp} + (wc + j * 16) / {e}, {bp}, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint i = 0; i < {cm}; i++)
      [[unroll]] for (uint j = 0; j < {cn}; j++)
        acc[i * {cn} + j] = coopMatMulAdd(ma[i], mb[j], acc[i * {cn} + j]);
  }}
}}
void main() {{
  uint m0 = gl_WorkGroupID.y * {v.bm}, n0 = gl_WorkGroupID.x * {v.bn};
  uint sg = gl_LocalInvocationID.x / 32;
  uint wr = (sg / {v.wn}) * {wtm}, wc = (sg % {v.wn}) * {wtn};
  [[unroll]] for (uint i = 0; i < {cm * cn}; i++)
    acc[i] = coopmat<{ct}, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0);
{_khr_loop(v)}
  [[unroll]] for (uint i = 0; i < {cm}; i++)
    [[unroll]] for (uint j = 0; j < {cn}; j++)
      coopMatStore(acc[i * {cn} + j], C, (m0 + wr + i * 16) * S + n0 + wc + j * 16, S,
                   gl_CooperativeMatrixLayoutRowMajor);
}}
"""


def _khr_loop(v: Khr) -> str:
    if v.pipe == "sync":
        return """  for (uint k = 0; k < KT; k++) {
    copy(m0, n0, k, 0); barrier(); compute(0, wr, wc); barrier();
  }"""
    if v.pipe == "regs1":
        return """  gload(m0, n0, 0);
  for (uint k = 0; k < KT; k++) {
    sstore(0); barrier();
    if (k + 1 < KT) gload(m0, n0, k + 1);
    compute(0, wr, wc); barrier();
  }"""
    if v.pipe == "regs2":
        return """  gload(m0, n0, 0); sstore(0); barrier();
  for (uint k = 0; k < KT; k++) {
    if (k + 1 < KT) gload(m0, n0, k + 1);
    compute(k & 1, wr, wc);
    if (k + 1 < KT) sstore((k + 1) & 1);
    barrier();
  }"""
    st = v.stages
    pro = "".join(f"copy(m0, n0, {i}, {i}); " for i in range(st - 1))
    return f"""  {pro}barrier();
  for (uint k = 0; k < KT; k++) {{
    compute(k % {st}, wr, wc);
    if (k + {st - 1} < KT) copy(m0, n0, k + {st - 1}, (k + {st - 1}) % {st});
    barrier();
  }}"""


def khr_variants() -> list[Khr]:
    out = []
    tiles = [(128, 128, 128, 2, 2), (128, 128, 256, 2, 4), (128, 256, 256, 2, 4),
             (256, 128, 256, 4, 2), (64, 128, 128, 2, 2), (128, 64, 128, 2, 2)]
    for dtype, accs, bks, pad in (("f16", ("f32", "f16"), (16, 32, 64), 8),
                                  ("s8", ("s32",), (32, 64, 128), 16)):
        for acc in accs:
            for bm, bn, wg, wm, wn in tiles:
                for bk in bks:
                    for pipe in ("sync", "regs1", "regs2", "direct2", "direct3"):
                        v = Khr(dtype, acc, bm, bn, bk, wg, wm, wn, pipe, pad)
                        if v.ok():
                            out.append(v)
    # bank conflicts: the same best-guess structure without padding
    for v in (Khr("f16", "f32", 128, 128, 32, 128, 2, 2, "regs2", 0),
              Khr("f16", "f32", 128, 128, 32, 256, 2, 4, "regs2", 0),
              Khr("s8", "s32", 128, 128, 64, 128, 2, 2, "regs2", 0)):
        if v.ok():
            out.append(v)
    return out


@dataclass(frozen=True)
class Cm2:
    dtype: str   # f16 (acc f32) / s8 (acc s32)
    bm: int
    bn: int
    bk: int
    inv: int
    unroll: int

    @property
    def name(self) -> str:
        return f"cm2_{self.dtype}_{self.bm}x{self.bn}x{self.bk}_inv{self.inv}_u{self.unroll}"


def cm2_ir(v: Cm2, s: int) -> str:
    """coop IR of a coopmat2 workgroup-scope GEMM (coopdialect.kernels.coopmat2_gemm's shape, parametrized)."""
    # s8: signless i8/i32 components with the KHR signedness operands (as examples/gemm_s8_vk.mlir),
    # so the accumulator starts from an arith zero like the f16 one
    et, ct, z, zc = (("f16", "f32", "0.0 : f16", "0.0 : f32") if v.dtype == "f16"
                     else ("i8", "i32", "0 : i8", "0 : i32"))
    flags = "" if v.dtype == "f16" else " <ASigned|BSigned|CSigned|ResultSigned>"
    loads = []
    for u in range(v.unroll):
        kv = "%kk" if u == 0 else f"%kk{u}"
        if u:
            loads.append(f"    %ko{u} = arith.constant {u * v.bk} : index\n"
                         f"    %kk{u} = arith.addi %kk, %ko{u} : index")
        prev = "%d" if u == 0 else f"%e{u - 1}"
        loads.append(f"""    %k32_{u} = arith.index_cast {kv} : index to i32
    %las{u} = tensor_addr.layout_slice %la, %row0, %tm, %k32_{u}, %tk : !L
    %lbs{u} = tensor_addr.layout_slice %lb, %k32_{u}, %tk, %col0, %tn : !L
    %av{u} = coop.load_tensor %A, %oa, %las{u} : memref<{s}x{s}x{et}>, !a, !L -> !a
    %bv{u} = coop.load_tensor %B, %ob, %lbs{u} : memref<{s}x{s}x{et}>, !b, !L -> !b
    %e{u} = coop.mul_add %av{u}, %bv{u}, {prev}{flags} : !a, !b, !c -> !c""")
    body = "\n".join(loads)
    init = f"""  %zh = arith.constant {z}
  %zf = arith.constant {zc}
  %oa = coop.composite_construct %zh : {et} -> !a
  %ob = coop.composite_construct %zh : {et} -> !b
  %init = coop.composite_construct %zf : {ct} -> !c
"""
    return f"""!L = !tensor_addr.layout<2, Undefined>
!a = !coop.matrix<{v.bm}x{v.bk}x{et}, Workgroup, MatrixA>
!b = !coop.matrix<{v.bk}x{v.bn}x{et}, Workgroup, MatrixB>
!c = !coop.matrix<{v.bm}x{v.bn}x{ct}, Workgroup, MatrixAcc>
func.func @gemm(%A: memref<{s}x{s}x{et}>, %B: memref<{s}x{s}x{et}>, %C: memref<{s}x{s}x{ct}>)
    attributes {{coop.workgroup_size = array<i32: {v.inv}, 1, 1>}} {{
  %S = arith.constant {s} : i32
  %tm = arith.constant {v.bm} : i32
  %tn = arith.constant {v.bn} : i32
  %tk = arith.constant {v.bk} : i32
  %c0 = arith.constant 0 : index
  %step = arith.constant {v.bk * v.unroll} : index
  %ctm = arith.constant {v.bm} : index
  %ctn = arith.constant {v.bn} : index
  %kend = arith.constant {s} : index
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %S, %S : !L
  %lb = tensor_addr.layout_set_dimension %l0, %S, %S : !L
  %lc = tensor_addr.layout_set_dimension %l0, %S, %S : !L
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %r0 = arith.muli %wy, %ctm : index
  %n0 = arith.muli %wx, %ctn : index
  %row0 = arith.index_cast %r0 : index to i32
  %col0 = arith.index_cast %n0 : index to i32
{init}  %acc = scf.for %kk = %c0 to %kend step %step iter_args(%d = %init) -> (!c) {{
{body}
    scf.yield %e{v.unroll - 1} : !c
  }}
  %lcs = tensor_addr.layout_slice %lc, %row0, %tm, %col0, %tn : !L
  coop.store_tensor %acc, %C, %lcs : !c, memref<{s}x{s}x{ct}>, !L
  func.return
}}
"""


def cm2_variants() -> list[Cm2]:
    out = []
    for dtype, kmul in (("f16", 1), ("s8", 2)):
        for bm, bn, inv in ((128, 256, 256), (256, 128, 256), (128, 128, 256), (128, 128, 128),
                            (256, 256, 256)):
            for bk in (32 * kmul, 64 * kmul, 128 * kmul):
                for unroll in (1, 2):
                    if unroll == 2 and bk != 64 * kmul:
                        continue
                    out.append(Cm2(dtype, bm, bn, bk, inv, unroll))
    # around the fastest of the grid above (128x256x64 f16 u2, 256x128x64 s8 u1): deeper
    # unrolling, and the K steps the grid's unroll rule skipped
    for dtype, bm, bn, bk, unroll in (("f16", 128, 256, 64, 3), ("f16", 128, 256, 64, 4),
                                      ("f16", 128, 256, 32, 2), ("f16", 128, 256, 32, 4),
                                      ("s8", 256, 128, 64, 2), ("s8", 256, 128, 64, 4),
                                      ("s8", 256, 128, 32, 1), ("s8", 256, 128, 32, 2),
                                      ("s8", 128, 256, 64, 2)):
        out.append(Cm2(dtype, bm, bn, bk, 256, unroll))
    return out


# ------------------------------------------------------------------------------------ build

def _glslang(src: str, path: str) -> None:
    with open(path + ".comp", "w") as f:
        f.write(src)
    subprocess.run(["glslangValidator", "--target-env", "vulkan1.3", "-V", path + ".comp", "-o", path],
                   check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def build(folder: str, only: str = "") -> None:
    sys.path.insert(0, os.getcwd())
    from coopdialect import api

    os.makedirs(folder, exist_ok=True)
    manifest, failed = [], []

    def emit(kind, v, s, make):
        if only and not re.search(only, v.name):
            return
        name = f"{v.name}_s{s}"
        path = os.path.join(folder, name + ".spv")
        try:
            make(path)
            subprocess.run(["spirv-val", "--target-env", "vulkan1.3", path], check=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except subprocess.CalledProcessError as e:  # record and go on: the sweep is about speed
            failed.append(f"{name}: {e.stdout.decode(errors='replace')[-400:] if e.stdout else e}")
            return
        except Exception as e:  # noqa: BLE001 - a variant the compiler refuses is a finding
            failed.append(f"{name}: {type(e).__name__}: {str(e)[:300]}")
            return
        bm, bn = v.bm, v.bn
        manifest.append({"name": v.name, "kind": kind, "size": s, "spv": name + ".spv",
                         "entry": "main" if kind == "khr" else "gemm",
                         "grid": [s // bn, s // bm, 1], "dtype": v.dtype,
                         "acc": getattr(v, "acc", "f32" if v.dtype == "f16" else "s32"),
                         "params": asdict(v),
                         **({"smem": v.smem()} if kind == "khr" else {})})

    for v in khr_variants():
        for s in SIZES:
            emit("khr", v, s, lambda p, v=v, s=s: _glslang(khr_glsl(v, s), p))
    for v in cm2_variants():
        for s in SIZES:
            def make(p, v=v, s=s):
                m = api.parse(cm2_ir(v, s), v.name)
                api.run_pipeline(m, "fold-tensor-views")
                with open(p, "wb") as f:
                    f.write(api.compile_to_spirv(m))
            emit("cm2", v, s, make)
    shutil.copy(os.path.abspath(__file__), folder)  # the run step needs this + coopdialect installed
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump({"variants": manifest, "build_failures": failed}, f, indent=1)
    print(f"built {len(manifest)} modules in {folder}; {len(failed)} variants failed to build")
    for line in failed:
        print("  build failure:", line.splitlines()[0] if line else line)


# -------------------------------------------------------------------------------------- run

def _torch_time(fn) -> float:
    """Nanoseconds per call of a torch baseline."""
    from gpu_timing import median_seconds  # benchmarks/, on the path in run()
    return median_seconds(fn) * 1e9


def run(folder: str, out: str | None, budget: float, finalists: int) -> None:
    import numpy as np
    import torch

    sys.path[:0] = [HERE, os.path.join(os.getcwd(), "benchmarks")]
    from coopdialect.runtime.vulkan_ctypes import VulkanContext, VulkanError

    t_start = time.time()
    with open(os.path.join(folder, "manifest.json")) as f:
        man = json.load(f)
    variants = man["variants"]
    out = out or folder
    os.makedirs(out, exist_ok=True)
    rows: list[dict] = []
    baselines: dict = {}
    data: dict = {}
    ctx_box = [VulkanContext()]
    info = ctx_box[0].device_info()
    header = f"device: {info['name']} driver {info.get('driver_version')}; torch {torch.__version__}"
    print(header, flush=True)

    def inputs(dtype, s):
        key = (dtype, s)
        if key not in data:
            if any(k[1] != s for k in data):  # a new size: drop the other size's arrays
                data.clear()
                torch.cuda.empty_cache()
            rng = np.random.default_rng(s)
            if dtype == "f16":
                a = rng.uniform(-1, 1, (s, s)).astype(np.float16)
                b = rng.uniform(-1, 1, (s, s)).astype(np.float16)
                ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                ref = ta.float() @ tb.float()
                ns = _torch_time(lambda: torch.matmul(ta, tb))
                baselines[f"torch.matmul f16 {s}"] = 2 * s ** 3 / ns / 1e3
            else:
                a = rng.integers(-128, 128, (s, s), dtype=np.int8)
                b = rng.integers(-128, 128, (s, s), dtype=np.int8)
                ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                ref = torch._int_mm(ta, tb)
                # cuBLASLt's int8 kernels want B column-major: the faster of both layouts
                tb_cm = tb.t().contiguous().t()
                ns = min(_torch_time(lambda: torch._int_mm(ta, tb)),
                         _torch_time(lambda: torch._int_mm(ta, tb_cm)))
                baselines[f"torch._int_mm s8 {s}"] = 2 * s ** 3 / ns / 1e3
            data[key] = (a, b, ref)
        return data[key]

    def save():
        base = {k: round(v, 1) for k, v in baselines.items()}
        ranked = sorted(rows, key=lambda r: -(r.get("tflops") or 0))
        lines = [header, "baselines (TFLOP/s): " + json.dumps(base),
                 f"{'variant':58s} {'size':>5s} {'TFLOP/s':>8s} {'ratio':>6s} {'ms':>8s} "
                 f"{'regs':>4s} {'spill':>5s}  check"]
        for r in ranked:
            drv = r.get("driver", {})
            # NVIDIA reports local memory as 2^36 + bytes
            spill = drv.get("Local Memory Size", 0) % (1 << 36) if "Local Memory Size" in drv else -1
            lines.append(f"{r['name']:58s} {r['size']:5d} {r.get('tflops') or 0:8.1f} "
                         f"{r.get('ratio') or 0:6.3f} {r.get('ms') or 0:8.3f} "
                         f"{drv.get('Register Count', -1):4d} {spill:5d}  {r.get('check')}")
        text = "\n".join(lines)
        with open(os.path.join(out, "vk_gemm_sweep.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(out, "vk_gemm_sweep.json"), "w") as f:
            json.dump({"header": header, "baselines": baselines, "rows": rows,
                       "build_failures": man.get("build_failures", []),
                       "elapsed_s": time.time() - t_start}, f, indent=1)
        return text

    def measure(m):
        s, dtype = m["size"], m["dtype"]
        a, b, ref = inputs(dtype, s)
        cdt = {"f32": np.float32, "f16": np.float16, "s32": np.int32}[m["acc"]]
        c = np.zeros((s, s), cdt)
        with open(os.path.join(folder, m["spv"]), "rb") as f:
            spv = f.read()
        row = {"name": m["name"], "kind": m["kind"], "size": s, "dtype": dtype, "acc": m["acc"],
               "params": m["params"]}
        try:
            outs, times = ctx_box[0].benchmark(spv, [a, b, c], tuple(m["grid"]), entry=m["entry"],
                                               repeat=10, warmup=3)
        except (VulkanError, ValueError, OSError) as e:
            row.update(check=f"ERROR {e}")
            if "DEVICE_LOST" in str(e) or "TIMEOUT" in str(e):
                try:
                    ctx_box[0].close()
                except Exception:  # noqa: BLE001
                    pass
                ctx_box[0] = VulkanContext()
            return row
        ns = float(np.median(times))
        tf = 2 * s ** 3 / ns / 1e3
        got = torch.from_numpy(outs[2]).cuda()
        if dtype == "f16":
            rel = float(torch.linalg.norm(got.float() - ref) / torch.linalg.norm(ref))
            tol = 1e-4 if m["acc"] == "f32" else 2e-2
            check = f"{'ok' if rel < tol else 'WRONG'} rel {rel:.1e}"
            base = baselines[f"torch.matmul f16 {s}"]
        else:
            bad = int((got != ref).sum())
            check = "exact" if bad == 0 else f"WRONG {bad} differ"
            base = baselines[f"torch._int_mm s8 {s}"]
        row.update(tflops=tf, ms=ns / 1e6, ratio=tf / base, check=check,
                   times_ms=[t / 1e6 for t in times])
        try:  # what the driver made of it: registers, spills (local memory), shared memory
            (ex, *_) = ctx_box[0].pipeline_statistics(spv, m["entry"], 3)
            row["driver"] = ex["statistics"]
        except (VulkanError, ValueError) as e:
            row["driver"] = {"error": str(e)}
        return row

    # round-robin over (kind, dtype, acc) so that a spent budget still leaves every group measured
    groups: dict = {}
    for m in variants:
        if m["size"] == SIZES[0]:
            groups.setdefault((m["kind"], m["dtype"], m["acc"]), []).append(m)
    screen = [g[i] for i in range(max(map(len, groups.values()))) for g in groups.values()
              if i < len(g)]
    for i, m in enumerate(screen):
        if time.time() - t_start > budget * 0.6:
            print(f"screening budget spent after {i} of {len(screen)} variants", flush=True)
            break
        r = measure(m)
        rows.append(r)
        print(f"[{time.time() - t_start:6.1f}s] {r['name']} {r['size']}: "
              f"{r.get('tflops', 0):.1f} TFLOP/s {r.get('check')}", flush=True)
        save()
    # finalists: the fastest correct variants of each (kind, dtype) at the large size
    best = {}
    for r in rows:
        if r.get("tflops") and not str(r["check"]).startswith(("WRONG", "ERROR")):
            best.setdefault((r["kind"], r["dtype"]), []).append(r)
    chosen = []
    for key, rs in sorted(best.items()):
        rs.sort(key=lambda r: -r["tflops"])
        chosen += [r["name"] for r in rs[:finalists]]
    big = [m for m in variants if m["size"] == SIZES[1] and m["name"] in chosen]
    big.sort(key=lambda m: (m["dtype"], chosen.index(m["name"])))
    for m in big:
        if time.time() - t_start > budget:
            print("time budget spent; stopping", flush=True)
            break
        r = measure(m)
        rows.append(r)
        print(f"[{time.time() - t_start:6.1f}s] {r['name']} {r['size']}: "
              f"{r.get('tflops', 0):.1f} TFLOP/s {r.get('check')}", flush=True)
        save()
    print(save())
    ctx_box[0].close()


def report(path: str) -> None:
    """Markdown for docs/performance.md: per group the best variant of each copy/compute
    structure (KHR) or tile (coopmat2) at both sizes, from a run's vk_gemm_sweep.json."""
    with open(path) as f:
        d = json.load(f)
    base = d["baselines"]
    print(f"{d['header']}; baselines (TFLOP/s): " + ", ".join(f"{k} {v:.0f}" for k, v in base.items()))
    rows = [r for r in d["rows"] if r.get("tflops")]
    big = {(r["name"]): r for r in rows if r["size"] == SIZES[1]}
    groups: dict = {}
    for r in rows:
        if r["size"] != SIZES[0]:
            continue
        p = r["params"]
        key = (r["kind"], r["dtype"], r["acc"], p.get("pipe", f"{p['bm']}x{p['bn']}"))
        if key not in groups or r["tflops"] > groups[key]["tflops"]:
            groups[key] = r
    print()
    print("| kind | A·B → C | structure | best variant | 4096³ TFLOP/s (ratio) | 8192³ TFLOP/s (ratio) | check |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], -groups[k]["tflops"])):
        r = groups[key]
        b = big.get(r["name"])
        large = f"{b['tflops']:.0f} ({b['ratio']:.2f})" if b else "–"
        print(f"| {key[0]} | {key[1]}→{key[2]} | {key[3]} | `{r['name']}` | {r['tflops']:.0f} "
              f"({r['ratio']:.2f}) | {large} | {r['check']} |")
    bad = sorted({r["name"] for r in d["rows"] if str(r.get("check", "")).startswith(("WRONG", "ERROR"))})
    if bad:
        print()
        print("Wrong or refused: " + ", ".join(f"`{n}`" for n in bad))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("folder")
    b.add_argument("--only", default="", help="build only the variants whose name matches this regex")
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--out")
    r.add_argument("--budget", type=float, default=400.0, help="seconds for the whole run")
    r.add_argument("--finalists", type=int, default=6, help="variants per kind and dtype at 8192³")
    rp = sub.add_parser("report")
    rp.add_argument("json")
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.folder, args.only)
    elif args.cmd == "report":
        report(args.json)
    else:
        run(args.folder, args.out, args.budget, args.finalists)


if __name__ == "__main__":
    main()
