"""Shape-generic GEMM kernels in coop IR: sizes as kernel arguments, tiles through tensor layouts.

`gemm_ir(dtype, config, epilogue)` writes the kernel a user would write for D = A @ B (the product
`torch.matmul(A, Bt.T)` computes; `examples/gemm_any.mlir` is one of them):

* arguments `(%A: memref<?x?xT>, %Bt: memref<?x?xT>, %D: memref<?x?xT>[, %bias: memref<?xT>],
  %M: i32, %N: i32, %K: i32)`: A is M x K row-major, B is given as Bt = B^T (N x K row-major, a
  linear layer's weight), D is M x N row-major, bias has N elements; T is f16 or bf16;
* one workgroup of 256 invocations computes a `bm` x `bn` tile of D as one Workgroup-scope f32
  accumulator, in K steps of `bk` (`config`); tiles are slices of 2-D tensor layouts
  (SPV_NV_tensor_addressing) with clamp mode Constant and clampValue 0, so every edge of every
  partial tile is exact (loads past M, N or K read 0, stores past M or N are dropped); B is read
  through the transposing view `!tensor_addr.view<2, false, 1, 0>` of Bt;
* the grid is declared (`coop.grid`): ceil(N / bn) x ceil(M / bm) workgroups;
* the epilogue between the K loop and the store: `"none"`, `"bias"` (D = A @ B + bias, the bias
  row broadcast down the tile through a 1-D layout), `"bias_gelu"` (D = gelu(A @ B + bias) with
  the erf GELU x * (1 + erf(x / sqrt 2)) / 2, a `coop.per_element_op`; its erf is marked
  `fastmath<afn>`, as the result is rounded to T: PTX takes the fast erf, absolute error 2^-20,
  docs/math.md), all in f32 before the conversion to T.

`GemmConfig` is a tile (bm x bn x bk) plus the pass options that pipeline it (stages,
persistent) and a split of K (`split_k`); `pick_config(m, n, k, configs, multiprocessors)` is
the default rule that picks one by shape. Raises ValueError for a dtype, tile or epilogue it
does not know.

Split-K (`split_k` > 1, for few tiles over a long K): `splitk_ir` writes two kernels. The first
(`..._splitk`, grid ceil(N / bn) x ceil(M / bm) x S, S = the `%S` argument) computes, in
workgroup z, the partial product over K columns [z * Kc, (z + 1) * Kc) (`%Kc` a multiple of bk)
and stores it as f32 into slice z of the workspace `%W: memref<?xf32>` (S x M x N, through a
3-D layout); the second (`..._splitk_reduce`, 64 x 128 tiles of D as Workgroup-scope
accumulators, grid ceil(N / 128) x ceil(M / 64)) sums the S partials in order z = 0, 1, ... and applies the epilogue.
"""

from __future__ import annotations

from dataclasses import dataclass

DTYPES = ("f16", "bf16")
EPILOGUES = ("none", "bias", "bias_gelu")


@dataclass(frozen=True)
class GemmConfig:
    """One compiled variant: a bm x bn tile, K step bk (elements), `stages` workgroup buffers per
    operand (pipeline-coop-loads), `persistent` CTAs (convert-coop-to-ptx)."""

    bm: int = 128
    bn: int = 256
    bk: int = 64
    stages: int = 4
    persistent: bool = True
    split_k: int = 1  # > 1: K split over that many workgroups at most (splitk_ir)

    @property
    def name(self) -> str:
        return (f"{self.bm}x{self.bn}x{self.bk}_s{self.stages}{'_p' if self.persistent else ''}"
                f"{f'_k{self.split_k}' if self.split_k > 1 else ''}")

    def splits(self, k: int) -> tuple[int, int]:
        """(S, Kc): the workgroups K is split over and the K columns each takes (a multiple of
        bk), for a K of `k` (S <= split_k, every split non-empty)."""
        steps = max(1, -(-k // self.bk))
        per = -(-steps // max(1, self.split_k))
        return -(-steps // per), per * self.bk

    def pipeline(self) -> str:
        """The coop-opt pipeline that lowers a kernel of this config to PTX."""
        p = "{persistent=true}" if self.persistent else ""
        return f"pipeline-coop-loads{{stages={self.stages}}},convert-coop-to-ptx{p}"

    def check(self) -> None:
        if self.bm not in (64, 128, 256) or self.bn % 8 or not 8 <= self.bn <= 256:
            raise ValueError(f"tile {self.bm}x{self.bn}: bm must be 64, 128 or 256 and bn a "
                             "multiple of 8 up to 256 (wgmma m64nNk16)")
        if self.bk not in (16, 32, 64):
            raise ValueError(f"bk {self.bk}: a K step of 16, 32 or 64 (a 2-byte operand row of 32, "
                             "64 or 128 bytes, the TMA swizzle modes)")
        if self.stages < 2:
            raise ValueError(f"stages {self.stages}: at least 2")
        if self.split_k < 1 or (self.split_k > 1 and self.persistent):
            raise ValueError(f"split_k {self.split_k}: at least 1, and a split kernel is not "
                             "persistent (its grid has a z dimension)")


def pick_config(m: int, n: int, k: int, configs: list[GemmConfig], multiprocessors: int = 132,
                tuned: list[dict] | None = None) -> GemmConfig:
    """The config for an m x n x k product.

    With `tuned` (a target description's `gemm_tuned` table: entries `{"m", "n", "k",
    "config"}` naming the fastest config measured at that shape, written by `coop-tune`), the
    winner at the nearest tuned shape (distance: the sum of |log2| ratios of m, n and k) among
    `configs`. Otherwise a rule: the config with the most work per tile among those whose tile
    count fills the multiprocessors at least once; when none does, split-K configs when K is
    long against the tiles (K >= 8 * (m + n)), then the config with the most tiles."""
    import math

    by_name = {c.name: c for c in configs}
    if tuned:
        def dist(e: dict) -> float:
            return sum(abs(math.log2(max(1, a)) - math.log2(max(1, e[key])))
                       for a, key in ((m, "m"), (n, "n"), (k, "k")))
        usable = [e for e in tuned if e.get("config") in by_name]
        if usable:
            return by_name[min(usable, key=dist)["config"]]

    def tiles(c: GemmConfig) -> int:
        return -(-m // c.bm) * -(-n // c.bn) * (c.splits(k)[0] if c.split_k > 1 else 1)

    plain = [c for c in configs if c.split_k == 1]
    full = [c for c in plain if tiles(c) >= multiprocessors]
    if full:
        return max(full, key=lambda c: (c.bm * c.bn, c.persistent, c.stages))
    split = [c for c in configs if c.split_k > 1]
    if split and k >= 8 * (m + n):
        return max(split, key=lambda c: (min(tiles(c), multiprocessors), -c.bm * c.bn))
    return max(plain or configs, key=lambda c: (tiles(c), -c.bm * c.bn, c.stages))


def _check(dtype: str, epilogue: str, config: GemmConfig) -> None:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    if epilogue not in EPILOGUES:
        raise ValueError(f"epilogue must be one of {EPILOGUES}, got {epilogue!r}")
    config.check()


def _types(t: str, bm: int, bn: int, bk: int) -> list[str]:
    return ["!L = !tensor_addr.layout<2, Constant>",
            "!L1 = !tensor_addr.layout<1, Constant>",
            "!L3 = !tensor_addr.layout<3, Constant>",
            "!Vt = !tensor_addr.view<2, false, 1, 0>",
            f"!a = !coop.matrix<{bm}x{bk}x{t}, Workgroup, MatrixA>",
            f"!b = !coop.matrix<{bk}x{bn}x{t}, Workgroup, MatrixB>",
            f"!c = !coop.matrix<{bm}x{bn}xf32, Workgroup, MatrixAcc>",
            f"!d = !coop.matrix<{bm}x{bn}x{t}, Workgroup, MatrixAcc>"]


def _tile_origin(bm: int, bn: int) -> list[str]:
    """%row0, %col0 of the workgroup's tile (%tbm, %tbn the tile's sizes as i32)."""
    return [f"  %tbm = arith.constant {bm} : i32",
            f"  %tbn = arith.constant {bn} : i32",
            "  %wx = gpu.block_id x",
            "  %wy = gpu.block_id y",
            "  %x = arith.index_cast %wx : index to i32",
            "  %y = arith.index_cast %wy : index to i32",
            "  %row0 = arith.muli %y, %tbm : i32",
            "  %col0 = arith.muli %x, %tbn : i32",
            "  %zf = arith.constant 0.0 : f32"]


def _main_loop(t: str, bk: int, lo: str, hi: str) -> list[str]:
    """%acc = A[row0:, lo:hi] @ Bt[col0:, lo:hi]^T over K steps of bk, through Constant-0 tensor
    layouts of M x K and N x K (B through the transposing view)."""
    return [
        f"  %cbk = arith.constant {bk} : index",
        f"  %tbk = arith.constant {bk} : i32",
        "  %l0 = tensor_addr.create_layout : !L",
        "  %la = tensor_addr.layout_set_dimension %l0, %M, %K : !L",
        "  %lb = tensor_addr.layout_set_dimension %l0, %N, %K : !L",
        "  %vt = tensor_addr.create_view : !Vt",
        f"  %zh = arith.constant 0.0 : {t}",
        f"  %oa = coop.composite_construct %zh : {t} -> !a",
        f"  %ob = coop.composite_construct %zh : {t} -> !b",
        "  %init = coop.composite_construct %zf : f32 -> !c",
        f"  %acc = scf.for %k = {lo} to {hi} step %cbk iter_args(%cc = %init) -> (!c) {{",
        "    %k32 = arith.index_cast %k : index to i32",
        "    %las = tensor_addr.layout_slice %la, %row0, %tbm, %k32, %tbk : !L",
        "    %lbs = tensor_addr.layout_slice %lb, %col0, %tbn, %k32, %tbk : !L",
        f"    %av = coop.load_tensor %A, %oa, %las : memref<?x?x{t}>, !a, !L -> !a",
        f"    %bv = coop.load_tensor %Bt, %ob, %lbs view %vt : memref<?x?x{t}>, !b, !L, !Vt -> !b",
        "    %r = coop.mul_add %av, %bv, %cc : !a, !b, !c -> !c",
        "    scf.yield %r : !c",
        "  }",
    ]


def _epilogue(t: str, epilogue: str, acc: str, f32: str, out: str, cols: str) -> list[str]:
    """The epilogue on f32 tile `acc` (type `f32`; `out` its t twin), stored into %D through a
    Constant-0 layout of M x N at (%row0, %col0); the tile has `cols` (an i32 value) columns."""
    lines, result = [], acc
    if epilogue != "none":
        lines += [
            # bias[col0 + c] for every element (r, c): the 1-D span of cols elements wraps each
            # row's linear index r * cols + c back to c (linearToSpanCoord)
            "  %l1 = tensor_addr.create_layout : !L1",
            "  %lbias = tensor_addr.layout_set_dimension %l1, %N : !L1",
            f"  %lbiass = tensor_addr.layout_slice %lbias, %col0, {cols} : !L1",
            f"  %zd = arith.constant 0.0 : {t}",
            f"  %od = coop.composite_construct %zd : {t} -> {out}",
            f"  %bt = coop.load_tensor %bias, %od, %lbiass : memref<?x{t}>, {out}, !L1 -> {out}",
            f"  %bf = coop.f_convert %bt : {out} -> {f32}",
            f"  %sum = coop.fadd {acc}, %bf : {f32}",
        ]
        result = "%sum"
        if epilogue == "bias_gelu":
            lines.append(f"  %act = coop.per_element_op @gelu(%sum) : {f32} -> {f32}")
            result = "%act"
    rows = "%tbm" if cols == "%tbn" else "%t64"
    return lines + [
        f"  %out = coop.f_convert {result} : {f32} -> {out}",
        "  %lo0 = tensor_addr.create_layout : !L",
        "  %ld = tensor_addr.layout_set_dimension %lo0, %M, %N : !L",
        f"  %lds = tensor_addr.layout_slice %ld, %row0, {rows}, %col0, {cols} : !L",
        f"  coop.store_tensor %out, %D, %lds : {out}, memref<?x?x{t}>, !L",
        "  func.return",
        "}",
    ]


def _doc(t: str, epilogue: str) -> str:
    gelu = epilogue == "bias_gelu"
    return (f"// D = {'gelu(' if gelu else ''}A @ B{' + bias' if epilogue != 'none' else ''}"
            f"{')' if gelu else ''} at any M, N, K (kernel arguments): {t} operands, f32 sums, {t} out")


def gemm_ir(dtype: str = "f16", config: GemmConfig = GemmConfig(), epilogue: str = "none",
            name: str | None = None) -> str:
    """The kernel (module docstring) as IR text."""
    _check(dtype, epilogue, config)
    bm, bn, bk, t = config.bm, config.bn, config.bk, dtype
    name = name or f"gemm_{t}" + ("" if epilogue == "none" else f"_{epilogue}")
    bias_arg = f"%bias: memref<?x{t}>, " if epilogue != "none" else ""
    body = [
        f"func.func @{name}(%A: memref<?x?x{t}>, %Bt: memref<?x?x{t}>, %D: memref<?x?x{t}>, "
        f"{bias_arg}%M: i32, %N: i32, %K: i32)",
        "    attributes {coop.workgroup_size = array<i32: 256, 1, 1>,",
        f"                coop.grid = affine_map<()[s0, s1, s2] -> (s1 ceildiv {bn}, "
        f"s0 ceildiv {bm}, 1)>}} {{",
        "  %c0 = arith.constant 0 : index",
        "  %kend = arith.index_cast %K : i32 to index",
        *_tile_origin(bm, bn),
        *_main_loop(t, bk, "%c0", "%kend"),
        *_epilogue(t, epilogue, "%acc", "!c", "!d", "%tbn"),
    ]
    doc = [_doc(t, epilogue) + ";",
           f"// {bm}x{bn} tiles, K step {bk}. Generated by coopdialect.kernels.gemm.gemm_ir."]
    funcs = _GELU if epilogue == "bias_gelu" else []
    return "\n".join(doc + _types(t, bm, bn, bk) + funcs + body) + "\n"


def splitk_ir(dtype: str = "f16", config: GemmConfig = GemmConfig(64, 64, 64, 8, False, 4),
              epilogue: str = "none", name: str | None = None) -> str:
    """The two split-K kernels (module docstring) as one IR text."""
    _check(dtype, epilogue, config)
    bm, bn, bk, t = config.bm, config.bn, config.bk, dtype
    name = name or f"gemm_{t}" + ("" if epilogue == "none" else f"_{epilogue}")
    bias_arg = f"%bias: memref<?x{t}>, " if epilogue != "none" else ""
    lines = [
        _doc(t, epilogue) + ", with K split over %S",
        f"// workgroups: f32 partial sums in the workspace %W (S x M x N), reduced in split order",
        f"// by a second kernel; {bm}x{bn} tiles, K step {bk}. Generated by "
        "coopdialect.kernels.gemm.splitk_ir.",
        *_types(t, bm, bn, bk),
        "!r = !coop.matrix<64x128xf32, Workgroup, MatrixAcc>",
        f"!rd = !coop.matrix<64x128x{t}, Workgroup, MatrixAcc>",
        *(_GELU if epilogue == "bias_gelu" else []),
        f"func.func @{name}_splitk(%A: memref<?x?x{t}>, %Bt: memref<?x?x{t}>, %W: memref<?xf32>, "
        "%M: i32, %N: i32, %K: i32, %S: i32, %Kc: i32)",
        "    attributes {coop.workgroup_size = array<i32: 256, 1, 1>,",
        f"                coop.grid = affine_map<()[s0, s1, s2, s3, s4] -> (s1 ceildiv {bn}, "
        f"s0 ceildiv {bm}, s3)>}} {{",
        "  %one = arith.constant 1 : i32",
        "  %wz = gpu.block_id z",
        "  %z = arith.index_cast %wz : index to i32",
        "  %k0 = arith.muli %z, %Kc : i32",
        "  %k1 = arith.addi %k0, %Kc : i32",
        "  %kend = arith.minsi %k1, %K : i32",
        "  %lo = arith.index_cast %k0 : i32 to index",
        "  %hi = arith.index_cast %kend : i32 to index",
        *_tile_origin(bm, bn),
        *_main_loop(t, bk, "%lo", "%hi"),
        "  %l3 = tensor_addr.create_layout : !L3",
        "  %lw = tensor_addr.layout_set_dimension %l3, %S, %M, %N : !L3",
        "  %lws = tensor_addr.layout_slice %lw, %z, %one, %row0, %tbm, %col0, %tbn : !L3",
        "  coop.store_tensor %acc, %W, %lws : !c, memref<?xf32>, !L3",
        "  func.return",
        "}",
        f"func.func @{name}_splitk_reduce(%W: memref<?xf32>, %D: memref<?x?x{t}>, {bias_arg}"
        "%M: i32, %N: i32, %S: i32)",
        "    attributes {coop.workgroup_size = array<i32: 128, 1, 1>,",
        "                coop.grid = affine_map<()[s0, s1, s2] -> (s1 ceildiv 128, s0 ceildiv 64, 1)>} {",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %one = arith.constant 1 : i32",
        "  %t64 = arith.constant 64 : i32",
        "  %t128 = arith.constant 128 : i32",
        "  %l3 = tensor_addr.create_layout : !L3",
        "  %lw = tensor_addr.layout_set_dimension %l3, %S, %M, %N : !L3",
        "  %wx = gpu.block_id x",
        "  %wy = gpu.block_id y",
        "  %x = arith.index_cast %wx : index to i32",
        "  %y = arith.index_cast %wy : index to i32",
        "  %row0 = arith.muli %y, %t64 : i32",
        "  %col0 = arith.muli %x, %t128 : i32",
        "  %zf = arith.constant 0.0 : f32",
        "  %init = coop.composite_construct %zf : f32 -> !r",
        "  %s = arith.index_cast %S : i32 to index",
        "  %sum0 = scf.for %zz = %c0 to %s step %c1 iter_args(%acc = %init) -> (!r) {",
        "    %zi = arith.index_cast %zz : index to i32",
        "    %lws = tensor_addr.layout_slice %lw, %zi, %one, %row0, %t64, %col0, %t128 : !L3",
        "    %p = coop.load_tensor %W, %init, %lws : memref<?xf32>, !r, !L3 -> !r",
        "    %a2 = coop.fadd %acc, %p : !r",
        "    scf.yield %a2 : !r",
        "  }",
        *_epilogue(t, epilogue, "%sum0", "!r", "!rd", "%t128"),
    ]
    return "\n".join(lines) + "\n"


_GELU = [
    "func.func @gelu(%row: i32, %col: i32, %x: f32) -> f32 {",
    "  %half = arith.constant 0.5 : f32",
    "  %one = arith.constant 1.0 : f32",
    "  %rsqrt2 = arith.constant 0.70710678118654752 : f32",
    "  %s = arith.mulf %x, %rsqrt2 : f32",
    "  %e = math.erf %s fastmath<afn> : f32",
    "  %p = arith.addf %e, %one : f32",
    "  %h = arith.mulf %x, %half : f32",
    "  %y = arith.mulf %h, %p : f32",
    "  func.return %y : f32",
    "}",
]


def gemm_launches(names: list[str], config: GemmConfig, a: int, bt: int, d: int, m: int, n: int,
                  k: int, bias: int | None = None, workspace=None) -> list[tuple]:
    """The launches `(kernel name, arguments, grid)` of one product D = A @ Bt^T [+ bias] by the
    kernels `names` that `gemm_ir` / `splitk_ir` wrote for `config` (a, bt, d, bias: buffer
    handles, e.g. device addresses): one launch, or for split-K the partial products into
    `workspace(bytes)` (a callable returning a buffer of that many bytes) and their reduction.
    Raises ValueError when a split-K config has no `workspace`."""
    extra = [bias] if bias is not None else []
    if config.split_k == 1:
        grid = (-(-n // config.bn), -(-m // config.bm), 1)
        return [(names[0], [a, bt, d, *extra, m, n, k], grid)]
    if workspace is None:
        raise ValueError("a split-K product needs a workspace (S x M x N f32)")
    splits, kc = config.splits(k)
    w = workspace(splits * m * n * 4)
    part, red = sorted(names, key=lambda x: x.endswith("_reduce"))
    return [(part, [a, bt, w, m, n, k, splits, kc],
             (-(-n // config.bn), -(-m // config.bm), splits)),
            (red, [w, d, *extra, m, n, splits], (-(-n // 128), -(-m // 64), 1))]
