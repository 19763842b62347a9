"""A small executor of the `ptx` dialect, for tests: runs a lowered kernel on numpy buffers.

It follows the PTX ISA's semantics for the instructions the tensor-addressing and
cooperative-matrix-2 rules emit (integer and f16/bf16/f32 arithmetic, cvt with its rounding
modifiers, setp/selp, ld/st in the global and shared spaces, branches with block arguments,
shfl.sync.bfly, bar.warp.sync, bar.sync). Every thread is a Python generator over its own
registers; it stops at a warp or CTA synchronisation point, where the scheduler exchanges the
shuffled values and resumes the warp (or the CTA). A load or store outside a buffer raises
(the GPU would fault or corrupt memory).

`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (PTX ISA 9.7.14.5.8 fragment figures) and
`wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}` / `m64nNk32{.satfinite}.s32.{s8,u8}.{s8,u8}`
(accumulation wraps without .satfinite) with B in shared memory, K-major, no swizzle (9.7.15.5.1:
descriptor start/LBO/SBO in 16-byte units at bits 0, 16, 32; core matrices of 8 rows x 16
bytes, LBO between core matrices along K, SBO along M/N) and A there too or (f16/bf16) in
registers (four .b32 per thread, a_{2i}, a_{2i+1} in register i at row 16w + g + 8(i&1), column
2q + 8(i>>1), the m16n8k16 A figure per warp w of the warpgroup); D fragment d_i at row 16w + g
+ 8((i>>1)&1), column 8(i>>2) + 2q + (i&1)) are computed exactly
(f64 products and sums, rounded once: exact for the small-integer data the tests use).
wgmma.fence/commit_group/wait_group and fence.proxy.async order nothing here.

The special-function instructions (`ex2`, `lg2`, `rsqrt`, `tanh` `.approx.f32`) are modelled by
`APPROX`: by default the float64 value of the function rounded to f32; a test may replace an
entry to move results within the bound the PTX ISA gives. `sqrt.rn`, `abs`, `copysign` and
`cvt.{rni,rmi,rpi,rzi}` between floats are exact. `.ftz` flushes f32 subnormal operands and
results to zeros of their sign; `min`/`max` propagate a NaN only with `.NaN`.
"""

from __future__ import annotations

import functools
import operator

import ml_dtypes
import numpy as np

from coopdialect.dialects import ptx

APPROX = {
    "ex2": lambda x: np.exp2(x),
    "lg2": lambda x: np.log2(x),
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": lambda x: np.tanh(x),
}
_IRND = {"rni": np.rint, "rmi": np.floor, "rpi": np.ceil, "rzi": np.trunc}
WIDTH = {"pred": 1, "b16": 16, "b32": 32, "b64": 64, "f32": 32, "f64": 64}
FLOAT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
GLOBAL_SHIFT = 40


class SimError(Exception):
    """The kernel did something the GPU would fault on, or that the simulator lacks."""


@functools.lru_cache(maxsize=None)
def _w(t: str) -> int:
    return int("".join(ch for ch in t if ch.isdigit()))


def _sval(bits: int, w: int) -> int:
    bits &= (1 << w) - 1
    return bits - (1 << w) if bits >> (w - 1) else bits


@functools.lru_cache(maxsize=1 << 16)
def _fval(bits: int, t: str):
    # cached: a kernel reads the same few thousand values over and over, and a numpy scalar is
    # immutable, so every reader may share one
    w = _w(t) if t != "bf16" else 16
    return np.array([bits & ((1 << w) - 1)], UINT[w]).view(FLOAT[t])[0]


def _fbits(x, t: str) -> int:
    return int(np.array([x], FLOAT[t]).view(UINT[16 if t == "bf16" else _w(t)])[0])


def _read(bits: int, t: str):
    """A register's bits read as operand type t."""
    if t in FLOAT:
        return _fval(bits, t)
    if t == "pred":
        return bool(bits)
    w = _w(t)
    return _sval(bits, w) if t[0] == "s" else bits & ((1 << w) - 1)


def _write(v, t: str) -> int:
    if t in FLOAT:
        return _fbits(v, t)
    if t == "pred":
        return bool(v)
    return int(v) & ((1 << _w(t)) - 1)


def _literal(kind: str, lit: str) -> int:
    if lit.startswith("0f") or lit.startswith("0F"):
        return int(lit[2:], 16)
    if lit.startswith("0d") or lit.startswith("0D"):
        return int(lit[2:], 16)
    if kind == "pred":
        return bool(int(lit, 0))
    return int(lit, 0) & ((1 << WIDTH[kind]) - 1)


def _cvt(tokens: list[str], bits: int) -> int:
    dst, src = tokens[-2], tokens[-1]
    rnd = tokens[0] if len(tokens) > 2 else ""
    if src in FLOAT and dst in FLOAT:
        x = np.float64(_fval(bits, src))
        if rnd in _IRND:  # integral rounding within a float type
            x = _IRND[rnd](x)
        return _fbits(np.array([x]).astype(FLOAT[dst])[0], dst)
    if src in FLOAT:  # float -> int: rzi, saturating, NaN -> 0
        x = float(_fval(bits, src))
        w = _w(dst)
        if x != x:
            return 0
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst[0] == "s" else (0, (1 << w) - 1)
        assert rnd == "rzi", tokens
        v = int(np.trunc(x)) if abs(x) < 2.0**70 else (hi if x > 0 else lo)
        return min(max(v, lo), hi) & ((1 << w) - 1)
    v = _read(bits, src)
    if dst in FLOAT:  # int -> float, one rounding (exact in f64 below 2^53)
        assert rnd == "rn", tokens
        return _fbits(np.array([np.float64(v)]).astype(FLOAT[dst])[0], dst)
    return int(v) & ((1 << _w(dst)) - 1)  # extend (by src signedness) or truncate


def _int_op(op: str, mods: list[str], a: list[int], rw: int) -> int:
    t = mods[-1]
    w = _w(t)
    signed = t[0] == "s"
    x = [_sval(v, w) if signed else v & ((1 << w) - 1) for v in a]
    if op == "add":
        r = x[0] + x[1]
        if "sat" in mods:
            r = min(max(r, -(1 << (w - 1))), (1 << (w - 1)) - 1)
    elif op == "sub":
        r = x[0] - x[1]
    elif op in ("mul", "mad"):
        p = x[0] * x[1]
        if "wide" in mods:
            r = p + (_sval(a[2], 2 * w) if signed else a[2]) if op == "mad" else p
            return r & ((1 << (2 * w)) - 1)
        r = (p & ((1 << w) - 1)) if "lo" in mods else p >> w
        if op == "mad":
            r = r + x[2]
    elif op in ("div", "rem"):
        if x[1] == 0:
            return 0  # undefined in PTX; only unused results divide by zero
        q = abs(x[0]) // abs(x[1]) * (1 if (x[0] >= 0) == (x[1] >= 0) else -1)
        r = q if op == "div" else x[0] - x[1] * q
    elif op == "min":
        r = min(x)
    elif op == "max":
        r = max(x)
    elif op == "neg":
        r = -x[0]
    elif op == "and":
        r = x[0] & x[1]
    elif op == "or":
        r = x[0] | x[1]
    elif op == "xor":
        r = x[0] ^ x[1]
    elif op == "not":
        r = ~x[0]
    elif op == "shl":
        r = x[0] << min(a[1] & 0xFFFFFFFF, w)
    elif op == "shr":
        k = min(a[1] & 0xFFFFFFFF, w)
        r = x[0] >> k
    else:
        raise SimError(f"integer {op}{''.join('.' + m for m in mods)}")
    return r & ((1 << rw) - 1)


def _flush(x, t: str):
    """.ftz: an f32 subnormal becomes a zero of its sign."""
    return np.copysign(np.float32(0), x) if t == "f32" and 0 < abs(x) < 2.0 ** -126 else x


def _float_op(op: str, t: str, a: list[int], nan: bool = True, ftz: bool = False):
    x = [_fval(v, t) for v in a]
    if ftz:
        x = [_flush(v, t) for v in x]
    # no np.errstate here: run holds it (entering it per instruction cost ~10% of a run)
    if op == "add":
        r = x[0] + x[1]
    elif op == "sub":
        r = x[0] - x[1]
    elif op == "mul":
        r = x[0] * x[1]
    elif op == "div":
        r = x[0] / x[1]
    elif op == "neg":
        r = -x[0]
    elif op in ("fma", "mad"):
        r = np.float64(x[0]) * np.float64(x[1]) + np.float64(x[2])  # f32 only (exact in f64)
    elif op == "max":  # .NaN propagates; without it a NaN operand gives the other
        r = np.maximum(x[0], x[1]) if nan else np.fmax(x[0], x[1])
    elif op == "min":
        r = np.minimum(x[0], x[1]) if nan else np.fmin(x[0], x[1])
    elif op in APPROX:
        r = APPROX[op](np.float64(x[0]))
    elif op == "sqrt":
        r = np.sqrt(np.float64(x[0]))
    elif op == "abs":
        r = np.abs(x[0])
    elif op == "copysign":  # copysign d, a, b: |b| with the sign of a
        r = np.copysign(x[1], x[0])
    else:
        raise SimError(f"float {op}.{t}")
    if type(r) is not FLOAT[t]:  # a cast to its own type would copy the bits unchanged
        r = np.array([r]).astype(FLOAT[t])[0]
    return _fbits(_flush(r, t) if ftz else r, t)


def _f16(bits: int, hi: bool) -> float:
    return float(_fval(bits >> 16 if hi else bits, "f16"))


def _f32(x: float) -> int:
    return _fbits(np.float32(x), "f32")


def _mma(lanes) -> list:
    """m16n8k16 f16 x f16 + f32 over one warp (ISA fragment figures for m16n8k16)."""
    A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
    for lane, s in enumerate(lanes):
        _, a, b, c = s
        g, q = lane >> 2, lane & 3
        for i in range(4):  # a_{2i}, a_{2i+1} in register i
            r = g + 8 * (i & 1)
            col = 2 * q + 8 * (i >> 1)
            A[r, col], A[r, col + 1] = _f16(a[i], False), _f16(a[i], True)
        for i in range(2):
            k = 2 * q + 8 * i
            B[k, g], B[k + 1, g] = _f16(b[i], False), _f16(b[i], True)
        for i in range(4):
            C[g + 8 * (i >> 1), 2 * q + (i & 1)] = float(_fval(c[i], "f32"))
    D = A @ B + C
    return [[_f32(D[(lane >> 2) + 8 * (i >> 1), 2 * (lane & 3) + (i & 1)]) for i in range(4)]
            for lane in range(32)]


def _smem_matrix(shared, desc: int, rows: int, t: str, mn_major: bool = False) -> np.ndarray:
    """rows x (32 bytes of K) elements of type t of a K-major, no-swizzle operand described by
    `desc`: element (r, k) at byte kb = k*E of its row, start + (r/8)*SBO + (kb/16)*LBO +
    (r%8)*16 + kb%16 (PTX ISA 9.7.15.5.1.2); MN-major (imm-trans 1, 2-byte types): the
    canonical layout ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) with T = 8, element (r, k) at
    start + (r/8)*SBO + (k/8)*LBO + (k%8)*16 + (r%8)*2."""
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    if desc >> 62:
        raise SimError("simulator lacks swizzled wgmma operands")
    es = 1 if t in ("s8", "u8") else 2
    # the offsets of all elements at once (one numpy gather rather than a Python loop per element)
    r = np.arange(rows, dtype=np.int64)[:, None]
    k = np.arange(32 // es, dtype=np.int64)[None, :]
    if mn_major:
        off = start + (r // 8) * sbo + (k // 8) * lbo + (k % 8) * 16 + (r % 8) * 2
    else:
        kb = k * es
        off = start + (r // 8) * sbo + (kb // 16) * lbo + (r % 8) * 16 + kb % 16
    outside = (off < 16) | (off + es > len(shared))
    if outside.any():
        raise SimError(f"wgmma operand byte {off[outside][0]} outside shared memory")
    if es == 1:
        return shared[off].view(np.int8 if t == "s8" else np.uint8).astype(np.float64)
    bits = shared[off].astype(np.uint16) | (shared[off + 1].astype(np.uint16) << 8)
    return bits.view(FLOAT[t]).astype(np.float64)


def _wgmma(group, shared) -> list:
    """m64nNk16 f32 += A (64x16) * B (16xN) of f16/bf16, or m64nNk32 s32 += A (64x32) * B
    (32xN) of s8/u8 (wrapping; .satfinite clamps): B from a shared-memory descriptor, A from one
    or (f16/bf16) from four registers per thread."""
    _, mods, imms, da, db, _acc = group[0]
    tokens = mods.strip(".").split(".")
    n = int(tokens[0][tokens[0].index("n") + 1:tokens[0].index("k")])
    sat = "satfinite" in tokens
    dt, at, bt = [x for x in tokens[1:] if x != "satfinite"]
    integer = dt == "s32"
    regs_a = isinstance(da, list)
    flags = imms.replace(" ", "").split(",")
    trans = [] if integer else flags[3:]
    if flags[:3] != (["1"] if integer else ["1", "1", "1"]) or len(trans) != (0 if integer else 1 if regs_a else 2) \
            or any(x not in ("0", "1") for x in trans) \
            or dt not in ("f32", "s32") or (sat and not integer) or (regs_a and integer):
        raise SimError(f"simulator lacks wgmma{mods} {imms}")
    trans_a = not regs_a and not integer and trans[0] == "1"
    trans_b = not integer and trans[-1] == "1"
    for s in group:
        if (not regs_a and s[3] != da) or s[4] != db:
            raise SimError("wgmma descriptors differ between threads of a warpgroup")
    # thread tid's fragment element i sits at row 16*(tid/32) + (tid%32)/4 + ..., column
    # 2*(tid%4) + ... (the fragment figures): index arrays, so that whole fragments move at once
    tid = np.arange(len(group), dtype=np.int64)[:, None]
    row0, col0 = 16 * (tid >> 5) + ((tid & 31) >> 2), 2 * (tid & 3)
    if regs_a:
        A = np.zeros((64, 16))
        bits = np.array([s[3] for s in group], np.uint64)
        i = np.arange(bits.shape[1], dtype=np.int64)[None, :]
        r, col = row0 + 8 * (i & 1), col0 + 8 * (i >> 1)
        A[r, col] = (bits & 0xFFFF).astype(np.uint16).view(FLOAT[at]).astype(np.float64)
        A[r, col + 1] = ((bits >> 16) & 0xFFFF).astype(np.uint16).view(FLOAT[at]).astype(np.float64)
    else:
        A = _smem_matrix(shared, da, 64, at, trans_a)
    Bt = _smem_matrix(shared, db, n, bt, trans_b)  # N x K
    acc = (np.array([s[5] for s in group], np.uint64) & 0xFFFFFFFF).astype(np.uint32)
    i = np.arange(acc.shape[1], dtype=np.int64)[None, :]
    r, col = row0 + 8 * ((i >> 1) & 1), col0 + 8 * (i >> 2) + (i & 1)
    # int64 is exact here: |A.B| <= 32*255*255 per element, and the accumulator is an s32
    D = np.zeros((64, n), np.int64 if integer else np.float64)
    D[r, col] = acc.view(np.int32) if integer else acc.view(np.float32)
    if integer:
        D = A.astype(np.int64) @ Bt.astype(np.int64).T + D
        if sat:
            D = np.minimum(np.maximum(D, -(1 << 31)), (1 << 31) - 1)
        return (D[r, col] & 0xFFFFFFFF).tolist()
    D = A @ Bt.T + D
    return D[r, col].astype(np.float32).view(np.uint32).tolist()


def _resume(g, v):
    try:
        return g.send(v)
    except StopIteration:
        return None


def _keys(values) -> tuple[int, ...]:
    """The register keys of SSA values (see Kernel._decode)."""
    return tuple(map(id, values))


class Kernel:
    """Runs one `ptx.kernel` over a grid (see the module docstring)."""

    def __init__(self, kernel: ptx.KernelOp):
        self.kernel = kernel
        self.params = [p.data for p in kernel.params]
        self.blocks = list(kernel.body.blocks)
        self.shared: dict[str, int] = {}
        size = 0
        for b in self.blocks:
            for op in b.ops:
                if isinstance(op, ptx.SharedDeclOp):
                    a = op.align.data
                    size = (size + a - 1) // a * a
                    self.shared[op.sym_name.data] = size + 16  # never address 0
                    size += op.size.data
        if kernel.dynamic_shared is not None:  # `.extern .shared .align 1024`, after the static
            size = (size + 1023) // 1024 * 1024
            self.shared[kernel.dynamic_shared_name] = size + 16
            size += kernel.dynamic_shared.data
        self.shared_size = size + 16
        self.code = self._decode()

    def run(self, buffers: list[np.ndarray], grid: tuple[int, int, int],
            block: tuple[int, int, int], shifts: list[int] | None = None) -> None:
        """Run the kernel; `buffers` (one per parameter: a numpy array for a pointer parameter,
        the bytes the host passes for a scalar one) are updated in place. `shifts[i]` moves
        buffer i's base address by that many bytes (to test alignment checks; buffers start
        2^40-aligned otherwise)."""
        self.shifts = shifts or [0] * len(buffers)
        self.scalars = {i: b for i, b in enumerate(buffers) if isinstance(b, bytes)}
        mem = [np.ascontiguousarray(b).view(np.uint8).reshape(-1).copy()
               if not isinstance(b, bytes) else np.zeros(0, np.uint8) for b in buffers]
        with np.errstate(all="ignore"):  # IEEE results: overflow, NaN and inexact are data
            for z in range(grid[2]):
                for y in range(grid[1]):
                    for x in range(grid[0]):
                        self._cta(mem, (x, y, z), grid, block)
        for b, m in zip(buffers, mem):
            if not isinstance(b, bytes):
                b.reshape(-1).view(np.uint8)[:] = m

    # -- one CTA ------------------------------------------------------------------------------

    def _cta(self, mem, ctaid, grid, block) -> None:
        n = block[0] * block[1] * block[2]
        shared = np.zeros(self.shared_size, np.uint8)
        threads = []
        for t in range(n):
            tid = (t % block[0], t // block[0] % block[1], t // (block[0] * block[1]))
            sreg = {"%laneid": t % 32}
            for i, d in enumerate("xyz"):
                sreg[f"%tid.{d}"] = tid[i]
                sreg[f"%ctaid.{d}"] = ctaid[i]
                sreg[f"%ntid.{d}"] = block[i]
                sreg[f"%nctaid.{d}"] = grid[i]
            threads.append(self._thread(mem, shared, sreg))
        state = [next(g, None) for g in threads]
        while any(s is not None for s in state):
            live = [s for s in state if s is not None]
            kinds = {s[0] for s in live}
            if len(kinds) != 1:
                raise SimError(f"threads diverge at synchronisation points: {kinds}")
            kind = kinds.pop()
            if kind == "bar" and len(live) != n:
                raise SimError("bar.sync with exited threads")
            send = [None] * n
            if kind == "mma":
                for w in range(0, n, 32):
                    send[w:w + 32] = _mma(state[w:w + 32])
            elif kind == "wgmma":
                if n % 128:
                    raise SimError("wgmma outside whole warpgroups")
                for w in range(0, n, 128):
                    send[w:w + 128] = _wgmma(state[w:w + 128], shared)
            elif kind == "shfl":
                for w in range(0, n, 32):
                    lanes = state[w:w + 32]
                    for i, s in enumerate(lanes):
                        if s is None:
                            continue
                        _, val, b, c, mask = s
                        src = i ^ (b & 31)
                        if lanes[src] is None:
                            raise SimError("shfl from an exited lane")
                        send[w + i] = lanes[src][1]
            state = [_resume(g, v) if s is not None else None
                     for g, s, v in zip(threads, state, send)]

    # Each op is decoded once into a tuple (tag, fields...): a thread's step then reads plain
    # Python values instead of walking xDSL's operand descriptors again for every thread; a run
    # of ops that neither branch nor synchronise is one ("steps", [function, ...]) entry. A
    # register is keyed by its SSA value's id (`_keys`): the kernel op, alive while the Kernel
    # is, keeps the ids unique, and an int hashes in C where an SSAValue's __hash__ is Python.

    def _decode(self) -> list[list[tuple]]:
        index = {b: i for i, b in enumerate(self.blocks)}
        code = []
        for b in self.blocks:
            entries = []
            for op in b.ops:
                if isinstance(op, ptx.BraOp):
                    entries.append(("bra", _keys(op.args), _keys(op.target.args),
                                    index[op.target]))
                elif isinstance(op, ptx.CbraOp):
                    entries.append(("cbra", id(op.pred), op.negate is not None, index[op.taken],
                                    index[op.other]))
                elif isinstance(op, ptx.RetOp):
                    entries.append(("ret",))
                elif isinstance(op, ptx.ShflSyncOp):
                    entries.append(("shfl", _keys(op.args), id(op.outs[0])))
                elif isinstance(op, ptx.BarWarpSyncOp):
                    entries.append(("warp",))
                elif isinstance(op, ptx.BarSyncOp):
                    entries.append(("bar",))
                elif isinstance(op, ptx.MmaSyncOp):
                    a, b_, c = op.groups()
                    entries.append(("mma", op.mods.data, _keys(a), _keys(b_), _keys(c),
                                    _keys(op.outs)))
                elif isinstance(op, ptx.WgmmaMmaAsyncOp):
                    entries.append(("wgmma", op.mods.data, op.imms.data, _keys(op.a), id(op.desc_b),
                                    _keys(op.acc), _keys(op.outs)))
                elif isinstance(op, ptx.WgmmaFenceOp | ptx.WgmmaCommitGroupOp |
                                ptx.WgmmaWaitGroupOp | ptx.FenceProxyAsyncOp |
                                ptx.CommentOp | ptx.SharedDeclOp):
                    continue
                else:
                    fn = self._step_fn(op)
                    if entries and entries[-1][0] == "steps":  # a run of plain steps: one entry
                        entries[-1][1].append(fn)
                    else:
                        entries.append(("steps", [fn]))
            code.append(entries)
        return code

    def _thread(self, mem, shared, sreg):
        regs: dict = {}
        code = self.code
        bi: int | None = 0
        while bi is not None:
            nxt = bi + 1 if bi + 1 < len(code) else None
            for e in code[bi]:
                tag = e[0]
                if tag == "steps":
                    for step in e[1]:
                        step(regs, mem, shared, sreg)
                elif tag == "bra":
                    vals = [regs[v] for v in e[1]]
                    for a, v in zip(e[2], vals):
                        regs[a] = v
                    nxt = e[3]
                    break
                elif tag == "cbra":
                    p = bool(regs[e[1]])
                    if e[2]:
                        p = not p
                    nxt = e[3] if p else e[4]
                    break
                elif tag == "ret":
                    return
                elif tag == "shfl":
                    a = [regs[v] for v in e[1]]
                    regs[e[2]] = yield ("shfl", a[0], a[1], a[2], a[3])
                elif tag == "warp":
                    yield ("warp",)
                elif tag == "bar":
                    yield ("bar",)
                elif tag == "mma":
                    if e[1] != ".m16n8k16.row.col.f32.f16.f16.f32":
                        raise SimError(f"simulator lacks mma.sync{e[1]}")
                    got = yield ("mma", [regs[v] for v in e[2]], [regs[v] for v in e[3]],
                                 [regs[v] for v in e[4]])
                    for o, v in zip(e[5], got):
                        regs[o] = v
                else:  # wgmma
                    a = [regs[v] for v in e[3]]
                    got = yield ("wgmma", e[1], e[2], a[0] if len(a) == 1 else a, regs[e[4]],
                                 [regs[v] for v in e[5]])
                    for o, v in zip(e[6], got):
                        regs[o] = v
            bi = nxt

    def _addr(self, space: str, addr: int, n: int, mem, shared):
        if space == "shared":
            if addr < 16 or addr + n > len(shared):
                raise SimError(f"shared access at {addr} ({n} bytes) outside the window")
            return shared, addr
        i = (addr >> GLOBAL_SHIFT) - 1
        off = (addr & ((1 << GLOBAL_SHIFT) - 1)) - (self.shifts[i] if 0 <= i < len(mem) else 0)
        if not 0 <= i < len(mem) or off < 0 or off + n > len(mem[i]):
            raise SimError(f"global access at buffer {i} byte {off} ({n} bytes) out of bounds")
        return mem[i], off

    def _step_fn(self, op):
        """The op as a function of (regs, mem, shared, sreg)."""
        if isinstance(op, ptx.MovImmOp):
            out, val = id(op.out), _literal(ptx.reg_kind(op.out), op.imm.data)

            def mov_imm(regs, mem, shared, sreg):
                regs[out] = val
            return mov_imm
        if isinstance(op, ptx.MovSpecialOp):
            out, src = id(op.out), op.source.data

            def mov_special(regs, mem, shared, sreg):
                regs[out] = sreg[src] if src in sreg else self.shared[src]
            return mov_special
        if isinstance(op, ptx.LdParamOp):
            out, i = id(op.out), self.params.index(op.param.data)
            width, param_type = WIDTH[ptx.reg_kind(op.out)] // 8, op.param_type

            def ld_param(regs, mem, shared, sreg):
                if i in self.scalars:  # a scalar .param: its bytes, little-endian
                    data = self.scalars[i]
                    if len(data) != width:
                        raise SimError(f"ld.param.{param_type} of {len(data)} bytes")
                    regs[out] = int.from_bytes(data, "little")
                else:
                    regs[out] = ((i + 1) << GLOBAL_SHIFT) + self.shifts[i]
            return ld_param
        if isinstance(op, ptx.PackOp):  # mov.b32 {b16, b16} or mov.b64 {b32, b32}
            out, (lo_v, hi_v) = id(op.out), _keys(op.args)
            h = _w(op.mods.data) // 2
            m = (1 << h) - 1

            def pack(regs, mem, shared, sreg):
                regs[out] = (regs[lo_v] & m) | (regs[hi_v] & m) << h
            return pack
        if isinstance(op, ptx.UnpackOp):
            arg, (o0, o1) = id(op.arg), _keys(op.outs)
            h = _w(op.mods.data) // 2
            m = (1 << h) - 1

            def unpack(regs, mem, shared, sreg):
                v = regs[arg]
                regs[o0], regs[o1] = v & m, v >> h & m
            return unpack
        if isinstance(op, ptx.CpAsyncOp):
            # the source is read when the copy is issued; the bytes land in shared memory only
            # at the cp.async.wait_group that retires the copy's group, so a read before it
            # sees the old bytes (a missing wait fails a comparison)
            dst, src, n, off = id(op.dst), id(op.src), op.size.data, op.offset.data
            soff = op.src_offset.data
            size = id(op.src_size) if op.src_size is not None else None

            def cp_async(regs, mem, shared, sreg):
                take = n if size is None else regs[size]
                data = np.zeros(n, np.uint8)
                if take:
                    buf, o = self._addr("global", regs[src] + soff, take, mem, shared)
                    data[:take] = buf[o:o + take]
                addr = regs[dst] + off
                if addr % n:
                    raise SimError(f"misaligned cp.async of {n} bytes at {addr}")
                self._addr("shared", addr, n, mem, shared)
                regs.setdefault("cp.async group", []).append((addr, data))
            return cp_async
        if isinstance(op, ptx.CpAsyncCommitGroupOp):
            def commit(regs, mem, shared, sreg):
                regs.setdefault("cp.async pending", []).append(regs.pop("cp.async group", []))
            return commit
        if isinstance(op, ptx.CpAsyncWaitGroupOp):
            keep = op.pending.data

            def wait(regs, mem, shared, sreg):
                pending = regs.get("cp.async pending", [])
                done, regs["cp.async pending"] = (pending[:len(pending) - keep],
                                                  pending[len(pending) - keep:]) if keep else (pending, [])
                for group in done:
                    for addr, data in group:
                        shared[addr:addr + len(data)] = data
            return wait
        if isinstance(op, ptx.LdOp | ptx.StOp):
            mods = op.mods.data
            tokens = mods.strip(".").split(".")
            space, t = tokens[0], tokens[-1]
            count = int(tokens[1][1:]) if tokens[1].startswith("v") else 1
            w = 2 if t in ("f16", "bf16") else _w(t) // 8
            base, offset = id(op.addr), op.offset.data
            if isinstance(op, ptx.LdOp):
                outs = [(id(o), WIDTH[ptx.reg_kind(o)]) for o in op.outs]
                signed = t[0] == "s"

                def ld(regs, mem, shared, sreg):
                    addr = regs[base] + offset
                    if count > 1 and addr % (w * count):
                        raise SimError(f"misaligned ld/st{mods} at {addr}")
                    buf, off = self._addr(space, addr, w * count, mem, shared)
                    data = buf.data  # the bytes of a 1-D uint8 array (run's and _cta's buffers)
                    for i, (out, rw) in enumerate(outs):
                        raw = int.from_bytes(data[off + i * w:off + (i + 1) * w], "little")
                        if signed:
                            raw = _sval(raw, 8 * w) & ((1 << rw) - 1)
                        regs[out] = raw
                return ld
            values, mask = _keys(op.values), (1 << (8 * w)) - 1

            def st(regs, mem, shared, sreg):
                addr = regs[base] + offset
                if count > 1 and addr % (w * count):
                    raise SimError(f"misaligned ld/st{mods} at {addr}")
                buf, off = self._addr(space, addr, w * count, mem, shared)
                data = buf.data
                for i, val in enumerate(values):
                    data[off + i * w:off + (i + 1) * w] = (regs[val] & mask).to_bytes(w, "little")
            return st
        if isinstance(op, ptx.PtxInst):
            code = op.OPCODE
            tokens = op.mods.data.strip(".").split(".") if op.mods.data else []
            args, out = _keys(op.args), id(op.outs[0])
            rw = WIDTH[ptx.reg_kind(op.outs[0])]

            return _inst_fn(code, tokens, args, out, rw)
        name = op.name

        def lacking(regs, mem, shared, sreg):
            raise SimError(f"simulator lacks '{name}'")
        return lacking


def _inst_fn(code: str, tokens: list[str], args: tuple[int, ...], out, rw: int):
    """`_inst` for one instruction as a function of (regs, mem, shared, sreg), with the choice
    among its cases made once, here, rather than at every step (the same cases, the same code)."""
    t = tokens[-1] if tokens else ""
    if code == "mov":
        a0, mask = args[0], (1 << rw) - 1

        def mov(regs, mem, shared, sreg):
            regs[out] = regs[a0] & mask
        return mov
    if code == "selp":
        a0, a1, a2 = args[0], args[1], args[2]

        def selp(regs, mem, shared, sreg):
            regs[out] = regs[a0] if regs[a2] else regs[a1]
        return selp
    if code not in ("cvt", "cvta", "setp") and t != "pred":
        if t in FLOAT:
            nan, ftz = "NaN" in tokens or code not in ("max", "min"), "ftz" in tokens
            fn = None if ftz else _float_fn(code, t, args, out, nan)
            if fn is not None:
                return fn

            def float_op(regs, mem, shared, sreg):
                regs[out] = _float_op(code, t, [regs[v] for v in args], nan, ftz)
            return float_op

        return _int_fn(code, tokens, args, out, rw) or _int_op_fn(code, tokens, args, out, rw)

    fn = _other_fn(code, tokens, args, out)
    if fn is not None:
        return fn

    def inst(regs, mem, shared, sreg):
        _inst(code, tokens, [regs[v] for v in args], out, rw, regs)
    return inst


_CMP = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
        "eq": operator.eq, "ne": operator.ne, "lo": operator.lt, "ls": operator.le,
        "hi": operator.gt, "hs": operator.ge}


def _other_fn(code: str, tokens: list[str], args: tuple[int, ...], out):
    """`_inst`'s cvt, cvta, two-operand setp and predicate cases as functions of (regs, mem,
    shared, sreg), each computing what `_inst` does; None for the rest (left to `_inst`)."""
    t = tokens[-1] if tokens else ""
    if code == "cvt":
        a0 = args[0]

        def cvt(regs, mem, shared, sreg):
            regs[out] = _cvt(tokens, regs[a0])
        return cvt
    if code == "cvta":
        a0 = args[0]

        def cvta(regs, mem, shared, sreg):
            regs[out] = regs[a0]
        return cvta
    if code == "setp":
        if len(tokens) < 2 or tokens[0] not in _CMP or len(args) != 2:
            return None
        cmp, st, (a0, a1) = _CMP[tokens[0]], tokens[1], args
        if st in FLOAT:
            def setp_f(regs, mem, shared, sreg):
                regs[out] = cmp(float(_fval(regs[a0], st)), float(_fval(regs[a1], st)))
            return setp_f

        def setp(regs, mem, shared, sreg):
            regs[out] = cmp(_read(regs[a0], st), _read(regs[a1], st))
        return setp
    if t == "pred" and code in ("and", "or", "xor") and len(args) == 2:
        a0, a1 = args
        if code == "and":
            def pred_and(regs, mem, shared, sreg):
                regs[out] = bool(regs[a0]) and bool(regs[a1])
            return pred_and
        if code == "or":
            def pred_or(regs, mem, shared, sreg):
                regs[out] = bool(regs[a0]) or bool(regs[a1])
            return pred_or

        def pred_xor(regs, mem, shared, sreg):
            regs[out] = bool(regs[a0]) != bool(regs[a1])
        return pred_xor
    if t == "pred" and code == "not" and len(args) == 1:
        a0 = args[0]

        def pred_not(regs, mem, shared, sreg):
            regs[out] = not bool(regs[a0])
        return pred_not
    return None


_FLOAT_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}


def _float_fn(code: str, t: str, args: tuple[int, ...], out, nan: bool = True):
    """`_float_op`'s add/sub/mul/div, max/min and fma/mad without .ftz as functions of (regs,
    mem, shared, sreg), with the type's classes looked up once; each computes what `_float_op`
    does, in the same order. None for the others."""
    ft, ut = FLOAT[t], UINT[16 if t == "bf16" else _w(t)]
    if code in _FLOAT_BINARY and len(args) == 2:
        fn, (a0, a1) = _FLOAT_BINARY[code], args

        def float_binary(regs, mem, shared, sreg):
            r = fn(_fval(regs[a0], t), _fval(regs[a1], t))
            if type(r) is not ft:
                r = np.array([r]).astype(ft)[0]
            regs[out] = int(np.array([r], ft).view(ut)[0])
        return float_binary
    if code in ("max", "min", "div") and len(args) == 2:
        a0, a1 = args
        fn = {"max": np.maximum if nan else np.fmax, "min": np.minimum if nan else np.fmin,
              "div": operator.truediv}[code]

        def float_other(regs, mem, shared, sreg):
            r = fn(_fval(regs[a0], t), _fval(regs[a1], t))
            if type(r) is not ft:
                r = np.array([r]).astype(ft)[0]
            regs[out] = int(np.array([r], ft).view(ut)[0])
        return float_other
    if code in ("fma", "mad") and len(args) == 3:
        a0, a1, a2 = args
        f64 = np.float64

        def float_fma(regs, mem, shared, sreg):
            r = f64(_fval(regs[a0], t)) * f64(_fval(regs[a1], t)) + f64(_fval(regs[a2], t))
            if type(r) is not ft:
                r = np.array([r]).astype(ft)[0]
            regs[out] = int(np.array([r], ft).view(ut)[0])
        return float_fma
    return None


def _int_op_fn(code: str, tokens: list[str], args: tuple[int, ...], out, rw: int):
    def int_op(regs, mem, shared, sreg):
        regs[out] = _int_op(code, tokens, [regs[v] for v in args], rw)
    return int_op


_INT_BINARY = {"add": operator.add, "sub": operator.sub, "and": operator.and_,
               "or": operator.or_, "xor": operator.xor}


def _int_fn(code: str, tokens: list[str], args: tuple[int, ...], out, rw: int):
    """`_int_op`'s most frequent cases (two operands; mul.lo and mad.lo) with the type's width,
    signedness and masks worked out once; None for the others. Each computes what `_int_op`
    does, in the same order."""
    t = tokens[-1] if tokens else ""
    if t[:1] not in ("s", "u", "b") or not t[1:].isdigit():
        return None  # left to _int_op, when (if) it runs
    w, signed = _w(t), t[0] == "s"
    m, rm = (1 << w) - 1, (1 << rw) - 1
    # the low w bits of a sum, difference, bitwise op or product are those of the operands' low
    # w bits, read signed or not: with a result no wider than w, .s is .u for these
    low = signed and rw <= w
    if code in _INT_BINARY and len(args) == 2 and not (code == "add" and "sat" in tokens):
        fn, (a0, a1) = _INT_BINARY[code], args
        if signed and not low:
            def binary_s(regs, mem, shared, sreg):
                regs[out] = fn(_sval(regs[a0], w), _sval(regs[a1], w)) & rm
            return binary_s

        def binary_u(regs, mem, shared, sreg):
            regs[out] = fn(regs[a0] & m, regs[a1] & m) & rm
        return binary_u
    if code in ("shl", "shr") and len(args) == 2:
        a0, a1 = args
        left = code == "shl"

        def shift(regs, mem, shared, sreg):
            x = _sval(regs[a0], w) if signed else regs[a0] & m
            k = min(regs[a1] & 0xFFFFFFFF, w)
            regs[out] = (x << k if left else x >> k) & rm
        return shift
    if code == "mul" and len(args) == 2 and "lo" in tokens and "wide" not in tokens:
        a0, a1 = args

        if low or not signed:
            def mul_lo_u(regs, mem, shared, sreg):
                regs[out] = ((regs[a0] & m) * (regs[a1] & m) & m) & rm
            return mul_lo_u

        def mul_lo(regs, mem, shared, sreg):
            x0, x1 = ((_sval(regs[a0], w), _sval(regs[a1], w)) if signed
                      else (regs[a0] & m, regs[a1] & m))
            regs[out] = (x0 * x1 & m) & rm
        return mul_lo
    if code == "mad" and len(args) == 3 and "lo" in tokens and "wide" not in tokens:
        a0, a1, a2 = args

        if low or not signed:
            def mad_lo_u(regs, mem, shared, sreg):
                regs[out] = (((regs[a0] & m) * (regs[a1] & m) & m) + (regs[a2] & m)) & rm
            return mad_lo_u

        def mad_lo(regs, mem, shared, sreg):
            x0, x1, x2 = ((_sval(regs[a0], w), _sval(regs[a1], w), _sval(regs[a2], w))
                          if signed else (regs[a0] & m, regs[a1] & m, regs[a2] & m))
            regs[out] = ((x0 * x1 & m) + x2) & rm
        return mad_lo
    return None


def _inst(code: str, tokens: list[str], a: list[int], out, rw: int, regs) -> None:
    t = tokens[-1] if tokens else ""
    if code == "cvt":
        regs[out] = _cvt(tokens, a[0])
    elif code == "cvta":
        regs[out] = a[0]
    elif code == "mov":
        regs[out] = a[0] & ((1 << rw) - 1)
    elif code == "setp":
        cmp, st = tokens[0], tokens[1]
        if st in FLOAT:
            x, y = (float(_fval(v, st)) for v in a)
        else:
            x, y = (_read(v, st) for v in a)
        regs[out] = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y,
                     "ne": x != y, "lo": x < y, "ls": x <= y, "hi": x > y,
                     "hs": x >= y}[cmp]
    elif code == "selp":
        regs[out] = a[0] if a[2] else a[1]
    elif t == "pred":
        p = [bool(v) for v in a]
        regs[out] = {"and": lambda: p[0] and p[1], "or": lambda: p[0] or p[1],
                     "not": lambda: not p[0], "xor": lambda: p[0] != p[1]}[code]()
    elif t in FLOAT:
        regs[out] = _float_op(code, t, a, nan="NaN" in tokens or code not in ("max", "min"),
                              ftz="ftz" in tokens)
    else:
        regs[out] = _int_op(code, tokens, a, rw)
