"""FlashAttention-style forward kernels in coop IR: any batch, heads and sequence length.

    python -m coopdialect.kernels.attention            # prints examples/attention.mlir

`attention_ir(head_dim, dtype, block_m, block_n, threads)` writes the kernel `attention_d{D}`
(`AttentionConfig` holds the same numbers; `attention_module(configs)` writes several kernels into
one module, with the helper functions once) for

    O = softmax(Q Kᵀ · scale [+ causal mask]) V,   LSE = log(sum(exp(Q Kᵀ · scale [+ mask])))

per batch and head, rows of the softmax along the keys:

* arguments `(%Q, %K, %V, %O: memref<?xT>, %LSE: memref<?xf32>, %B: i32, %H: i32, %S: i32,
  %scale: f32, %causal: i32)`: Q, K, V, O are [B, H, S, D] row-major (D = head_dim, static),
  LSE is [B, H, S] (the natural log, as FlashAttention returns it); T is f16 or bf16;
  `causal` != 0 masks key j for query i when j > i (the upper-left-aligned mask of
  `torch.nn.functional.scaled_dot_product_attention(is_causal=True)`);
* one workgroup of `threads` invocations per (query block of `block_m` rows, head, batch): the
  declared grid is ceil(S / block_m) x H x B, workgroup x taking query block
  ceil(S / block_m) - 1 - x (the longest causal blocks first). Tiles are slices of 3-D tensor
  layouts [B*H, S, D] (SPV_NV_tensor_addressing) with clamp mode Constant and clampValue 0:
  rows past S read 0 and are not stored, so every sequence length is exact; K is read as the
  MatrixB Kᵀ (D x block_n) through the view `!tensor_addr.view<3, false, 0, 2, 1>`, which
  swaps the sequence and head dimensions;
* the loop over key blocks of `block_n` (up to the diagonal block when causal) is the online
  softmax in base 2, with log2(e) folded into the scale (scale2 = scale * log2(e), f32), the
  running max taken on the unscaled scores and the scale applied in the exponential's fused
  multiply-add (FlashAttention's form: one `fma` per score instead of a multiply and a
  subtraction; it takes scale > 0, as softmax(x * scale) has its max where x has only then);
  the K and V blocks are loaded together at the top of an iteration (one staging of both):

      S  = Q Kᵀ, or -FLT_MAX where masked             coop.mul_add, f32 accumulator;
                                                      coop.per_element_op (row, column known)
      mb = rowmax(S); mn = max(m, mb)                 coop.reduce Row @max
      n  = -mn * scale2                               coop.per_element_op (row-constant)
      P  = exp2(fma(S, scale2, n))                    math.fma, math.exp2 fastmath<afn> in a
      a  = exp2(fma(m, scale2, n))                    per_element_op
      l  = a * l + rowsum(P)                          coop.reduce Row @add
      O  = a * O + T(P) V                             coop.f_convert, coop.convert to MatrixA,
                                                      coop.mul_add
      m  = mn

  With `overlap` (AttentionConfig) the loops carry S of the block they work on, computed by
  the trip before (block 0's before the loops), and compute the next block's S first, before
  this block's softmax, with which a backend that runs products asynchronously overlaps it (the
  op-by-op PTX does); past the last block the layout reads rows of zeros. The arithmetic is
  the same, in the same order.

  With `late_pv` they carry P of the previous block instead (T, MatrixA; zeros before the
  first) and read its V one block back (before block 0 the layout reads rows of zeros): a trip
  computes S = Q Kᵀ, then O = O + P_prev V_prev (O already scaled by the previous trip), then
  the softmax and O = a * O; after the loops, O = O + P V of the last block. O = a * O + P V in
  the same order, so the same bits; the PTX runs the product beside the softmax.
  `pingpong` adds the kernel attribute `coop.pingpong` (warpgroups taking turns, docs/ptx.md).

  It is two loops with the same body: first the key blocks in which no key is masked (wholly
  before S and, causal, wholly at or before the block's first query row), then the rest, whose
  scores pass through the masks (`@score`);

  and at the end O / l is stored as T and LSE = (m * scale2 + log2(l)) * ln(2) for each row.
  Masked scores are -FLT_MAX rather than -inf (exp2 of them is 0 all the same) so that no
  infinity reaches a Vulkan driver, which may assume there are none (the modules declare no
  float controls); m starts at -FLT_MAX too. A row always has key 0 unmasked, so mn is finite
  after the first block.
  The running max m and sum l are block_m x 8 accumulators (`STAT_COLS`) whose rows are
  constant: Row reductions of the scores produce them, and a Row reduction of them (@max of
  equal values: exact) broadcasts them back to the score's or O's shape where an element-wise op
  needs them (8 columns: one wgmma n8 accumulator, two registers per row and lane on sm_90a).

The float64 model and the error bound against it (dominated by T's rounding of P and of O):
`coopdialect.kernels.attention_bound`; docs/attention.md derives the bound.

Raises ValueError for a dtype, head dim, block or invocation count it does not take.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

DTYPES = ("f16", "bf16")
LOG2E = "0x3FB8AA3B"  # log2(e) rounded to f32 (1.44269502...)
LN2 = "0x3F317218"  # ln(2) rounded to f32 (0.693147182...)
NEG = "0xFF7FFFFF"  # -FLT_MAX: the masked score and the initial running max
STAT_COLS = 8  # columns of the row statistics m, l (one wgmma n8 accumulator: 2 per row and lane)


@dataclass(frozen=True)
class AttentionConfig:
    """One kernel: head dim D, element type, a block_m x block_n score tile, and the invocations of
    its workgroup (a multiple of 128: 64 accumulator rows per 128 invocations on sm_90a)."""

    head_dim: int = 64
    dtype: str = "f16"
    block_m: int = 128
    block_n: int = 64
    threads: int = 256
    # nvvm.minctasm of the kernel: PTX keeps its registers within 64K / (threads x min_ctas) so
    # that many workgroups share a multiprocessor (0: no such attribute)
    min_ctas: int = 0
    # issue Q Kᵀ of the next key block before this block's softmax (the scores carried through
    # the loops): a backend that runs a product asynchronously overlaps the two
    overlap: bool = False
    # coop.pingpong: the warpgroups take turns issuing their products, so that one's softmax
    # runs while another's products do (PTX, with the bulk-copy staging)
    pingpong: bool = False
    # issue P V of a block in the next trip, after that trip's Q Kᵀ (the loops carry P and
    # read the block's V one trip later): the product runs beside the next block's softmax
    late_pv: bool = False

    @property
    def name(self) -> str:
        return f"attention_d{self.head_dim}" + ("" if self.dtype == "f16" else f"_{self.dtype}")

    def check(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.head_dim % 16 or not 16 <= self.head_dim <= 256:
            raise ValueError(f"head_dim {self.head_dim}: a multiple of 16 up to 256 (the K of "
                             "Q Kᵀ in steps of 16, the N of P V at most 256)")
        if self.block_n % 16 or not 16 <= self.block_n <= 256:
            raise ValueError(f"block_n {self.block_n}: a multiple of 16 up to 256 (the K of P V "
                             "in steps of 16)")
        if self.threads not in (128, 256) or self.block_m != self.threads // 2:
            raise ValueError(f"block_m {self.block_m} with {self.threads} invocations: 64 rows "
                             "per 128 invocations (block_m 64 with 128, 128 with 256)")
        if self.overlap and self.late_pv:
            raise ValueError("overlap and late_pv are two forms of one loop: choose one")
        if self.min_ctas < 0:
            raise ValueError(f"min_ctas {self.min_ctas}: 0 (none) or the workgroups per "
                             "multiprocessor")


# The kernels of examples/attention.mlir: f16, the largest tiles whose staged operands fit 48 KB
# of shared memory (Q, a K block and a V block: 32 KB at D 64, 48 KB at D 128), the most a
# Vulkan driver gives a workgroup (the H200's maxComputeSharedMemorySize).
EXAMPLE = (AttentionConfig(64, "f16", 128, 64, 256), AttentionConfig(128, "f16", 64, 64, 128))

# The fastest PTX form measured per head dim (docs/attention.md, "Tiles"): tiles and the stages
# of `pipeline-coop-loads`, which copies the K and V blocks of iteration t+S-1 at the top of
# iteration t, by the bulk tensor copy engine, into shared memory the kernel takes dynamically
# (1 KB of mbarriers + Q + S x (K + V), at D 128 also the last V block's tile: 81 KB at D 64,
# 193 KB at D 128). D 64 runs two workgroups a multiprocessor (nvvm.minctasm 2: at most 128
# registers a thread); D 128 one, with 128 x 128 tiles, its two warpgroups taking turns
# (`pingpong`) and each block's P V issued after the next block's Q Kᵀ (`late_pv`): 6 % faster
# than the plain loop, 10 % causal; each alone gained nothing, and D 64 lost with them (spills).
PTX_TUNED = {64: (AttentionConfig(64, "f16", 128, 128, 256, 2), 2),
             128: (AttentionConfig(128, "f16", 128, 128, 256, 1, pingpong=True, late_pv=True), 2)}


def ptx_pipeline(stages: int) -> str:
    """The coop-opt pipeline of a PTX kernel with `stages` (0: no staging pass)."""
    return (f"pipeline-coop-loads{{stages={stages}}}," if stages else "") + "convert-coop-to-ptx"


def _helpers() -> list[str]:
    """The functions the per-element ops and reductions call (f32, shared by every kernel)."""
    return [
        "func.func @max(%a: f32, %b: f32) -> f32 {",
        "  %r = arith.maximumf %a, %b : f32",
        "  func.return %r : f32",
        "}",
        "func.func @add(%a: f32, %b: f32) -> f32 {",
        "  %r = arith.addf %a, %b : f32",
        "  func.return %r : f32",
        "}",
        "// S, or -FLT_MAX for a key past the sequence or (causal) after the query",
        "func.func @score(%r: i32, %c: i32, %x: f32, %row0: i32, %col0: i32, %S: i32, "
        "%causal: i32) -> f32 {",
        "  %zero = arith.constant 0 : i32",
        f"  %neg = arith.constant {NEG} : f32",
        "  %q = arith.addi %row0, %r : i32",
        "  %k = arith.addi %col0, %c : i32",
        "  %past = arith.cmpi sge, %k, %S : i32",
        "  %after = arith.cmpi sgt, %k, %q : i32",
        "  %isc = arith.cmpi ne, %causal, %zero : i32",
        "  %cm = arith.andi %after, %isc : i1",
        "  %masked = arith.ori %past, %cm : i1",
        "  %s = arith.select %masked, %neg, %x : f32",
        "  func.return %s : f32",
        "}",
        "func.func @maximum(%r: i32, %c: i32, %a: f32, %b: f32) -> f32 {",
        "  %y = arith.maximumf %a, %b : f32",
        "  func.return %y : f32",
        "}",
        "// -m * scale2: the exponent's offset (nscale2 = -scale2)",
        "func.func @offset(%r: i32, %c: i32, %m: f32, %nscale2: f32) -> f32 {",
        "  %y = arith.mulf %m, %nscale2 : f32",
        "  func.return %y : f32",
        "}",
        "// exp2(x * scale2 - m * scale2), the product and the sum rounded once; afn: PTX may",
        "// flush results below 2^-126 to 0 (ex2.approx.ftz)",
        "func.func @exp2_fma(%r: i32, %c: i32, %x: f32, %nm: f32, %scale2: f32) -> f32 {",
        "  %d = math.fma %x, %scale2, %nm : f32",
        "  %e = math.exp2 %d fastmath<afn> : f32",
        "  func.return %e : f32",
        "}",
        "// the natural log-sum-exp of a row from its max m and sum l: (m scale2 + log2 l) ln 2",
        "func.func @lse(%r: i32, %c: i32, %m: f32, %l: f32, %scale2: f32) -> f32 {",
        f"  %ln2 = arith.constant {LN2} : f32",
        "  %b = math.log2 %l : f32",
        "  %a = math.fma %m, %scale2, %b : f32",
        "  %y = arith.mulf %a, %ln2 : f32",
        "  func.return %y : f32",
        "}",
    ]


def _types(c: AttentionConfig, sfx: str) -> list[str]:
    t, d, bm, bn = c.dtype, c.head_dim, c.block_m, c.block_n
    return [f"!q{sfx} = !coop.matrix<{bm}x{d}x{t}, Workgroup, MatrixA>",
            f"!kt{sfx} = !coop.matrix<{d}x{bn}x{t}, Workgroup, MatrixB>",
            f"!v{sfx} = !coop.matrix<{bn}x{d}x{t}, Workgroup, MatrixB>",
            f"!s{sfx} = !coop.matrix<{bm}x{bn}xf32, Workgroup, MatrixAcc>",
            f"!ph{sfx} = !coop.matrix<{bm}x{bn}x{t}, Workgroup, MatrixAcc>",
            f"!pa{sfx} = !coop.matrix<{bm}x{bn}x{t}, Workgroup, MatrixA>",
            f"!r{sfx} = !coop.matrix<{bm}x{STAT_COLS}xf32, Workgroup, MatrixAcc>",
            f"!o{sfx} = !coop.matrix<{bm}x{d}xf32, Workgroup, MatrixAcc>",
            f"!oh{sfx} = !coop.matrix<{bm}x{d}x{t}, Workgroup, MatrixAcc>"]


def _block(sfx: str, mem: str, masked: bool, overlap: bool, late_pv: bool = False) -> list[str]:
    """One key block of the online softmax (the body of either loop). With `overlap` the loop
    carries this block's scores %st, computed by the trip before (or before the loop), and
    computes the next block's, %sn, first. With `late_pv` it carries the previous block's P
    %pp, whose product with that block's V it adds to O after this block's Q Kᵀ."""
    q, kt, v, s, ph, pa, o, r = (f"!{x}{sfx}" for x in ("q", "kt", "v", "s", "ph", "pa", "o", "r"))
    scores_in = "%s2" if masked else "%st"  # what the softmax reads: masked or not
    k = f"coop.load_tensor %K, %okt, %lkv view %vt : {mem}, {kt}, !L3, !V3 -> {kt}"
    if late_pv:
        scores = [
            "    %jp32 = arith.subi %j32, %tbn : i32",
            "    %lvp = tensor_addr.layout_slice %lt, %bh, %one, %jp32, %tbn, %zero, %td : !L3",
            f"    %k = {k}",
            f"    %vp = coop.load_tensor %V, %ov, %lvp : {mem}, {v}, !L3 -> {v}",
            f"    %st = coop.mul_add %qt, %k, %zs : {q}, {kt}, {s} -> {s}",
            "    // the previous block's P V (before the first block: zeros)",
            f"    %o1 = coop.mul_add %pp, %vp, %o : {pa}, {v}, {o} -> {o}"]
    elif overlap:
        scores = [
            "    %jn = arith.addi %j, %cbn : index",
            "    %jn32 = arith.index_cast %jn : index to i32",
            "    %lkn = tensor_addr.layout_slice %lt, %bh, %one, %jn32, %tbn, %zero, %td : !L3",
            f"    %kn = coop.load_tensor %K, %okt, %lkn view %vt : {mem}, {kt}, !L3, !V3 -> {kt}",
            f"    %vb = coop.load_tensor %V, %ov, %lkv : {mem}, {v}, !L3 -> {v}",
            "    // the next block's scores (past the last block: rows the layout clamps to 0)",
            f"    %sn = coop.mul_add %qt, %kn, %zs : {q}, {kt}, {s} -> {s}"]
    else:
        scores = [
            f"    %k = {k}",
            f"    %vb = coop.load_tensor %V, %ov, %lkv : {mem}, {v}, !L3 -> {v}",
            f"    %st = coop.mul_add %qt, %k, %zs : {q}, {kt}, {s} -> {s}"]
    if late_pv:  # this block's P is the next trip's (or the loops' end)
        tail = [f"    scf.yield %oa, %mn, %ln, %pm : {o}, {r}, {r}, {pa}"]
    else:
        tail = [f"    %on = coop.mul_add %pm, %vb, %oa : {pa}, {v}, {o} -> {o}",
                f"    scf.yield %on, %mn, %ln{', %sn' if overlap else ''} : {o}, {r}, {r}"
                f"{', ' + s if overlap else ''}"]
    return [
        "    %j32 = arith.index_cast %j : index to i32",
        "    %lkv = tensor_addr.layout_slice %lt, %bh, %one, %j32, %tbn, %zero, %td : !L3",
        *scores,
        *([f"    %s2 = coop.per_element_op @score(%st, %row0, %j32, %S, %causal) : {s}, "
           f"i32, i32, i32, i32 -> {s}"] if masked else []),
        f"    %mb = coop.reduce Row {scores_in}, @max : {s} -> {r}",
        f"    %mn = coop.per_element_op @maximum(%m, %mb) : {r}, {r} -> {r}",
        f"    %nm = coop.per_element_op @offset(%mn, %nscale2) : {r}, f32 -> {r}",
        f"    %nw = coop.reduce Row %nm, @max : {r} -> {s}",
        f"    %p = coop.per_element_op @exp2_fma({scores_in}, %nw, %scale2) : {s}, {s}, f32 "
        f"-> {s}",
        f"    %a = coop.per_element_op @exp2_fma(%m, %nm, %scale2) : {r}, {r}, f32 -> {r}",
        f"    %rs = coop.reduce Row %p, @add : {s} -> {r}",
        f"    %la = coop.fmul %l, %a : {r}",
        f"    %ln = coop.fadd %la, %rs : {r}",
        f"    %ao = coop.reduce Row %a, @max : {r} -> {o}",
        f"    %oa = coop.fmul {'%o1' if late_pv else '%o'}, %ao : {o}",
        f"    %pt = coop.f_convert %p : {s} -> {ph}",
        f"    %pm = coop.convert %pt : {ph} -> {pa}",
        *tail,
        "  }",
    ]


def _kernel(c: AttentionConfig, sfx: str) -> list[str]:
    t, d, bm, bn = c.dtype, c.head_dim, c.block_m, c.block_n
    q, kt, v, s, o, oh, r, ph, pa = (f"!{x}{sfx}" for x in ("q", "kt", "v", "s", "o", "oh", "r",
                                                            "ph", "pa"))
    mem = f"memref<?x{t}>"
    n, carried = (4, f", {s}") if c.overlap else (4, f", {pa}") if c.late_pv else (3, "")
    init4 = ", %st = %s0" if c.overlap else ", %pp = %p0" if c.late_pv else ""
    next4 = ", %st = %full#3" if c.overlap else ", %pp = %full#3" if c.late_pv else ""
    body = [
        f"func.func @{c.name}(%Q: {mem}, %K: {mem}, %V: {mem}, %O: {mem}, %LSE: memref<?xf32>, "
        "%B: i32, %H: i32, %S: i32, %scale: f32, %causal: i32)",
        f"    attributes {{coop.workgroup_size = array<i32: {c.threads}, 1, 1>,",
        *([f"                nvvm.minctasm = {c.min_ctas} : i32,"] if c.min_ctas else []),
        *(["                coop.pingpong,"] if c.pingpong else []),
        f"                coop.grid = affine_map<()[s0, s1, s2, s3] -> (s2 ceildiv {bm}, s1, s0)>}} {{",
        "  %c0 = arith.constant 0 : index",
        f"  %cbn = arith.constant {bn} : index",
        "  %zero = arith.constant 0 : i32",
        "  %one = arith.constant 1 : i32",
        f"  %tbm = arith.constant {bm} : i32",
        f"  %tbn = arith.constant {bn} : i32",
        f"  %td = arith.constant {d} : i32",
        f"  %tst = arith.constant {STAT_COLS} : i32",
        f"  %log2e = arith.constant {LOG2E} : f32",
        "  %scale2 = arith.mulf %scale, %log2e : f32",
        "  %nscale2 = arith.negf %scale2 : f32",
        "  %wx = gpu.block_id x",
        "  %wy = gpu.block_id y",
        "  %wz = gpu.block_id z",
        "  // query blocks in reverse (the last first): with the causal mask the later blocks",
        "  // have more keys, and starting the longest first leaves less of a tail",
        "  %xw = arith.index_cast %wx : index to i32",
        f"  %bm1 = arith.constant {bm - 1} : i32",
        "  %sb = arith.addi %S, %bm1 : i32",
        "  %nq = arith.divsi %sb, %tbm : i32",
        "  %nq1 = arith.subi %nq, %one : i32",
        "  %x = arith.subi %nq1, %xw : i32",
        "  %h = arith.index_cast %wy : index to i32",
        "  %b = arith.index_cast %wz : index to i32",
        "  %row0 = arith.muli %x, %tbm : i32",
        "  %bh0 = arith.muli %b, %H : i32",
        "  %bh = arith.addi %bh0, %h : i32",
        "  %BH = arith.muli %B, %H : i32",
        "  // [B*H, S, D]: this workgroup's rows of Q and O, blocks of K and V",
        "  %l0 = tensor_addr.create_layout : !L3",
        "  %lt = tensor_addr.layout_set_dimension %l0, %BH, %S, %td : !L3",
        "  %lq = tensor_addr.layout_slice %lt, %bh, %one, %row0, %tbm, %zero, %td : !L3",
        "  %vt = tensor_addr.create_view : !V3",
        f"  %zh = arith.constant 0.0 : {t}",
        "  %zf = arith.constant 0.0 : f32",
        f"  %neg = arith.constant {NEG} : f32",
        f"  %oq = coop.composite_construct %zh : {t} -> {q}",
        f"  %okt = coop.composite_construct %zh : {t} -> {kt}",
        f"  %ov = coop.composite_construct %zh : {t} -> {v}",
        f"  %zs = coop.composite_construct %zf : f32 -> {s}",
        f"  %zr = coop.composite_construct %zf : f32 -> {r}",
        f"  %m0 = coop.composite_construct %neg : f32 -> {r}",
        f"  %o0 = coop.composite_construct %zf : f32 -> {o}",
        f"  %qt = coop.load_tensor %Q, %oq, %lq : {mem}, {q}, !L3 -> {q}",
        "  // key blocks with no masked key: those wholly before S and (causal) wholly at or",
        "  // before the block's first query row; then the rest, masked, up to the last key or",
        "  // (causal) the one holding the last query row",
        "  %isc = arith.cmpi ne, %causal, %zero : i32",
        "  %row1 = arith.addi %row0, %one : i32",
        "  %first = arith.minsi %row1, %S : i32",
        "  %lim = arith.select %isc, %first, %S : i32",
        "  %nfull = arith.divsi %lim, %tbn : i32",
        "  %uend32 = arith.muli %nfull, %tbn : i32",
        "  %uend = arith.index_cast %uend32 : i32 to index",
        "  %rend = arith.addi %row0, %tbm : i32",
        "  %diag = arith.minsi %rend, %S : i32",
        "  %kend32 = arith.select %isc, %diag, %S : i32",
        "  %kend = arith.index_cast %kend32 : i32 to index",
        *(["  // the scores of key block 0 (the first the loops read)",
           "  %lk0 = tensor_addr.layout_slice %lt, %bh, %one, %zero, %tbn, %zero, %td : !L3",
           f"  %k0 = coop.load_tensor %K, %okt, %lk0 view %vt : {mem}, {kt}, !L3, !V3 -> {kt}",
           f"  %s0 = coop.mul_add %qt, %k0, %zs : {q}, {kt}, {s} -> {s}"] if c.overlap else []),
        *([f"  %ph0 = coop.composite_construct %zh : {t} -> {ph}",
           f"  %p0 = coop.convert %ph0 : {ph} -> {pa}"] if c.late_pv else []),
        f"  %full:{n} = scf.for %j = %c0 to %uend step %cbn iter_args(%o = %o0, %m = %m0, %l = %zr"
        f"{init4}) -> ({o}, {r}, {r}{carried}) {{",
        *_block(sfx, mem, False, c.overlap, c.late_pv),
        f"  %res:{n} = scf.for %j = %uend to %kend step %cbn "
        f"iter_args(%o = %full#0, %m = %full#1, %l = %full#2{next4})"
        f" -> ({o}, {r}, {r}{carried}) {{",
        *_block(sfx, mem, True, c.overlap, c.late_pv),
        *(["  // the last block's P V: its V at the last multiple of block_n before kend",
           "  %kb = arith.addi %kend32, %tbn : i32",
           "  %kb1 = arith.subi %kb, %one : i32",
           "  %nk = arith.divsi %kb1, %tbn : i32",
           "  %nk1 = arith.subi %nk, %one : i32",
           "  %jl32 = arith.muli %nk1, %tbn : i32",
           "  %lvl = tensor_addr.layout_slice %lt, %bh, %one, %jl32, %tbn, %zero, %td : !L3",
           f"  %vl = coop.load_tensor %V, %ov, %lvl : {mem}, {v}, !L3 -> {v}",
           f"  %ol = coop.mul_add %res#3, %vl, %res#0 : {pa}, {v}, {o} -> {o}"]
          if c.late_pv else []),
        f"  %lo = coop.reduce Row %res#2, @max : {r} -> {o}",
        f"  %of = coop.fdiv {'%ol' if c.late_pv else '%res#0'}, %lo : {o}",
        f"  %oc = coop.f_convert %of : {o} -> {oh}",
        f"  coop.store_tensor %oc, %O, %lq : {oh}, {mem}, !L3",
        "  // LSE [B*H, S, 1]: column 0 of the row-constant matrix; the other columns are dropped",
        f"  %lse = coop.per_element_op @lse(%res#1, %res#2, %scale2) : {r}, {r}, f32 -> {r}",
        "  %ll = tensor_addr.layout_set_dimension %l0, %BH, %S, %one : !L3",
        "  %lls = tensor_addr.layout_slice %ll, %bh, %one, %row0, %tbm, %zero, %tst : !L3",
        f"  coop.store_tensor %lse, %LSE, %lls : {r}, memref<?xf32>, !L3",
        "  func.return",
        "}",
    ]
    return body


def attention_module(configs: tuple[AttentionConfig, ...] | list[AttentionConfig] = EXAMPLE) -> str:
    """The kernels `configs` (module docstring) in one module, as IR text. Raises ValueError for
    a config `AttentionConfig.check` refuses or two kernels of one name."""
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ValueError(f"two kernels of one name among {names}")
    for c in configs:
        c.check()
    lines = [
        "// FlashAttention-style forward: O = softmax(Q K^T * scale [+ causal mask]) V and the row",
        "// log-sum-exp, at any batch, heads and sequence length (kernel arguments), f32 softmax and",
        "// accumulation; the online softmax over key blocks in base 2 (log2(e) folded into the scale).",
        "// Q, K, V, O: [B, H, S, D] row-major; LSE: [B, H, S]; causal != 0: key j masked for query",
        "// i < j. Grid: ceil(S / block_m) x H x B (declared). docs/attention.md.",
        "//",
        "// Kernels: " + "; ".join(
            f"{c.name}: {c.dtype}, {c.block_m}x{c.block_n} score tiles, {c.threads} invocations"
            for c in configs) + ".",
        "// Regenerate: python -m coopdialect.kernels.attention > examples/attention.mlir",
        "!L3 = !tensor_addr.layout<3, Constant>",
        "!V3 = !tensor_addr.view<3, false, 0, 2, 1>",
    ]
    single = len(configs) == 1
    for c in configs:
        lines += _types(c, "" if single else f"_{c.name[len('attention_'):]}")
    lines += _helpers()
    for c in configs:
        lines += _kernel(c, "" if single else f"_{c.name[len('attention_'):]}")
    return "\n".join(lines) + "\n"


def attention_ir(head_dim: int = 64, dtype: str = "f16", block_m: int = 128, block_n: int = 64,
                 threads: int | None = None) -> str:
    """One kernel `attention_d{head_dim}[_bf16]` (module docstring) as IR text; `threads`
    defaults to 2 * block_m. Raises ValueError for sizes `AttentionConfig.check` refuses."""
    return attention_module([AttentionConfig(head_dim, dtype, block_m, block_n,
                                             threads or 2 * block_m)])


def grid(c: AttentionConfig, batch: int, heads: int, seq: int) -> tuple[int, int, int]:
    """The declared grid: (ceil(seq / block_m), heads, batch)."""
    return (-(-seq // c.block_m), heads, batch)


def main(argv: list[str] | None = None) -> int:
    sys.stdout.write(attention_module(EXAMPLE))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
