"""Triton GEMM baselines at their best, for the benchmarks (runs on a GPU machine with Triton).

* `tiled(b_layout)`: the tutorial-style tiled matmul (grouped tile order, masked edges),
  autotuned per shape over 8 Hopper-sized configurations; `b_layout` "nk" reads B as given
  (Bt, N x K row-major, K-major B) and "kn" reads a row-major K x N copy of B (the layout Triton's
  tutorial uses, which runs at 0.95-0.99x cuBLAS on the H200).
* `persistent_tma(b_layout)`: a persistent matmul whose operands move by TMA tensor descriptors
  (`triton.tools.tensor_descriptor.TensorDescriptor`, the Hopper variant of Triton's persistent
  matmul tutorial), autotuned over 6 configurations; None where this Triton has no host tensor
  descriptors. TMA needs 16-byte aligned row strides, so it runs only where K (and N for "kn")
  times the element size is a multiple of 16: `persistent_tma_runs(m, n, k, es, b_layout)`.

Each returns `run(a, b, c)` (torch tensors: a M x K, b in the layout named, c M x N, written).
"""

from __future__ import annotations


def _configs(triton, persistent: bool):
    if persistent:
        shapes = [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 4, 8),
                  (128, 128, 64, 5, 4), (64, 128, 64, 5, 4), (64, 64, 128, 6, 4)]
    else:
        shapes = [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 3, 8),
                  (128, 128, 64, 4, 4), (128, 128, 64, 4, 8), (64, 256, 64, 4, 4),
                  (64, 128, 64, 5, 4), (64, 64, 128, 5, 4)]
    return [triton.Config({"BM": bm, "BN": bn, "BK": bk, "G": 8}, num_stages=s, num_warps=w)
            for bm, bn, bk, s, w in shapes]


def tiled(b_layout: str):
    import triton
    import triton.language as tl

    @triton.autotune(configs=_configs(triton, False), key=["M", "N", "K"])
    @triton.jit
    def mm(a, b, c, M, N, K, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           G: tl.constexpr):
        pid = tl.program_id(0)
        npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
        width = G * npn
        first = (pid // width) * G
        gs = min(npm - first, G)
        pm = first + ((pid % width) % gs)
        pn = (pid % width) // gs
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        ap = a + rm[:, None] * K + rk[None, :]
        bp = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            kmask = (k0 + rk) < K
            av = tl.load(ap, mask=(rm[:, None] < M) & kmask[None, :], other=0.0)
            bv = tl.load(bp, mask=kmask[:, None] & (rn[None, :] < N), other=0.0)
            acc = tl.dot(av, bv, acc)
            ap += BK
            bp += BK * sbk
        cm = (rm[:, None] < M) & (rn[None, :] < N)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty), mask=cm)

    def run(a, b, c):
        m, k = a.shape
        n = c.shape[1]
        sbk, sbn = (1, k) if b_layout == "nk" else (n, 1)
        mm[lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)](
            a, b, c, m, n, k, sbk, sbn)
    return run


def persistent_tma_runs(m: int, n: int, k: int, es: int, b_layout: str) -> bool:
    """Whether the TMA descriptors of the operands are legal (16-byte aligned row strides)."""
    rows = [k * es, n * es] + ([k * es] if b_layout == "nk" else [n * es])
    return all(r % 16 == 0 for r in rows)


def persistent_tma(b_layout: str, multiprocessors: int):
    import triton
    import triton.language as tl
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:
        return None

    def prune(configs, nargs, **kw):
        return configs

    @triton.autotune(configs=_configs(triton, True), key=["M", "N", "K"],
                     prune_configs_by={"early_config_prune": prune})
    @triton.jit
    def mm(a_desc, b_desc, c_desc, M, N, K, NSM: tl.constexpr, KN: tl.constexpr,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, G: tl.constexpr):
        start = tl.program_id(0)
        npm, npn = tl.cdiv(M, BM), tl.cdiv(N, BN)
        ksteps = tl.cdiv(K, BK)
        tiles = npm * npn
        per_group = G * npn
        for tile in tl.range(start, tiles, NSM, flatten=True):
            gid = tile // per_group
            fm = gid * G
            gs = min(npm - fm, G)
            pm = fm + (tile % gs)
            pn = (tile % per_group) // gs
            om, on = pm * BM, pn * BN
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for ks in range(ksteps):
                ok = ks * BK
                av = a_desc.load([om, ok])
                if KN:
                    bv = b_desc.load([ok, on])
                    acc = tl.dot(av, bv, acc)
                else:
                    bv = b_desc.load([on, ok])
                    acc = tl.dot(av, bv.T, acc)
            c_desc.store([om, on], acc.to(c_desc.dtype))

    def set_blocks(nargs):
        bm, bn, bk = nargs["BM"], nargs["BN"], nargs["BK"]
        nargs["a_desc"].block_shape = [bm, bk]
        nargs["b_desc"].block_shape = [bk, bn] if b_layout == "kn" else [bn, bk]
        nargs["c_desc"].block_shape = [bm, bn]

    for cfg in mm.configs:
        cfg.pre_hook = set_blocks

    def run(a, b, c):
        m, k = a.shape
        n = c.shape[1]
        dummy = [1, 1]
        a_d = TensorDescriptor(a, a.shape, a.stride(), dummy)
        b_d = TensorDescriptor(b, b.shape, b.stride(), dummy)
        c_d = TensorDescriptor(c, c.shape, c.stride(), dummy)
        grid = lambda meta: (min(multiprocessors, triton.cdiv(m, meta["BM"]) *  # noqa: E731
                                 triton.cdiv(n, meta["BN"])),)
        mm[grid](a_d, b_d, c_d, m, n, k, NSM=multiprocessors, KN=b_layout == "kn")
    return run
