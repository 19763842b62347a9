"""A small executor of the `ptx` dialect, for tests: runs a lowered kernel on numpy buffers.

It follows the PTX ISA's semantics for the instructions the tensor-addressing and
cooperative-matrix-2 rules emit (integer and f16/bf16/f32 arithmetic, cvt with its rounding
modifiers, setp/selp, ld/st in the global and shared spaces, branches with block arguments,
shfl.sync.bfly, bar.warp.sync, bar.sync). `_inst` and the functions it calls give an
instruction's result for one thread. A CTA runs in lock step: every register is an array with a
value per thread, and each instruction runs once on the arrays of the threads at it (numpy doing,
lane by lane, what those functions do; the few instructions without such a form call them per
lane); the threads that branch apart run in turns, the lowest-numbered block first, until they
meet again, and a barrier, shuffle or matrix instruction needs every live thread at it. A load
or store outside a buffer raises (the GPU would fault or corrupt memory).

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


def _keys(values) -> tuple[int, ...]:
    """The register keys of SSA values (see Kernel._decode)."""
    return tuple(map(id, values))


# -- lanes: a CTA's registers as arrays ---------------------------------------------------------
#
# Every register holds one uint64 per thread of the CTA (a predicate 0 or 1, a float its bits),
# and each instruction runs once for a group of threads (`idx`: None for all of them, else their
# indices), on numpy arrays: what the per-thread semantics above do to each thread's value,
# lane by lane. An instruction without an array form here runs those per-thread functions on each
# lane (`_per_lane`), so every instruction keeps exactly their semantics.

U64 = np.uint64


def _mask(w: int) -> np.uint64:
    return U64((1 << w) - 1)


def _lane_sval(bits: np.ndarray, w: int) -> np.ndarray:
    """int64 lanes: the low `w` bits of `bits` read signed (`_sval`)."""
    x = bits & _mask(w)
    if w == 64:
        return x.view(np.int64)
    s = np.int64(1 << (w - 1))
    return (x.astype(np.int64) ^ s) - s


def _lane_read_int(bits: np.ndarray, t: str) -> np.ndarray:
    """`_read` of an integer type: int64 lanes for .sN, masked uint64 lanes otherwise."""
    w = _w(t)
    return _lane_sval(bits, w) if t[0] == "s" else bits & _mask(w)


def _lane_fval(bits: np.ndarray, t: str) -> np.ndarray:
    """`_fval`: lanes of type t from their bits."""
    w = 16 if t == "bf16" else _w(t)
    return (bits & _mask(w)).astype(UINT[w]).view(FLOAT[t])


def _lane_fbits(x: np.ndarray, t: str) -> np.ndarray:
    """`_fbits`: the bits of lanes already of type t."""
    return x.view(UINT[16 if t == "bf16" else _w(t)]).astype(U64)


def _lane_flush(x: np.ndarray, t: str) -> np.ndarray:
    """`_flush` (.ftz) of lanes of type t."""
    if t != "f32":
        return x
    sub = (x != 0) & (np.abs(x) < np.float32(2.0 ** -126))
    return np.where(sub, np.copysign(np.float32(0), x), x) if sub.any() else x


class _Cta:
    """One CTA's state: registers, the special registers, memory, the cp.async copies in flight."""

    def __init__(self, n: int, mem, shared, sreg: dict, kernel: "Kernel"):
        self.n, self.mem, self.shared, self.sreg, self.kernel = n, mem, shared, sreg, kernel
        self.regs: dict[int, np.ndarray] = {}
        self.cp_count = np.zeros(n, np.int64)  # cp.async groups each thread has committed
        self.cp_copies: list[list] = []  # [thread ids, group numbers, shared addresses, bytes]

    def get(self, key: int, idx) -> np.ndarray:
        a = self.regs[key]
        return a if idx is None else a[idx]

    def put(self, key: int, idx, vals) -> None:
        if idx is None:
            self.regs[key] = np.array(np.broadcast_to(vals, (self.n,)), U64)
            return
        a = self.regs.get(key)
        if a is None:
            a = self.regs[key] = np.zeros(self.n, U64)
        a[idx] = vals

    def size(self, idx) -> int:
        return self.n if idx is None else len(idx)

    def tids(self, idx) -> np.ndarray:
        return np.arange(self.n) if idx is None else idx

    def locate(self, space: str, addr: np.ndarray, nbytes: int) -> list[tuple]:
        """[(buffer, lanes of `addr` in it, byte offsets)] for an access of `nbytes` at each
        lane's address (`Kernel._addr`'s rules), SimError where one is out of bounds."""
        if space == "shared":
            bad = (addr < 16) | (addr + nbytes > len(self.shared))
            if bad.any():
                raise SimError(f"shared access at {int(addr[bad][0])} ({nbytes} bytes) outside the window")
            return [(self.shared, None, addr)]
        mem, shifts = self.mem, self.kernel.shifts
        which = (addr >> GLOBAL_SHIFT) - 1
        out = []
        for i in np.unique(which).tolist():
            lanes = None if len(out) == 0 and (which == i).all() else np.nonzero(which == i)[0]
            at = addr if lanes is None else addr[lanes]
            if not 0 <= i < len(mem):
                raise SimError(f"global access at buffer {i} byte {int(at[0] & ((1 << GLOBAL_SHIFT) - 1))} "
                               f"({nbytes} bytes) out of bounds")
            off = (at & ((1 << GLOBAL_SHIFT) - 1)) - shifts[i]
            bad = (off < 0) | (off + nbytes > len(mem[i]))
            if bad.any():
                raise SimError(f"global access at buffer {i} byte {int(off[bad][0])} ({nbytes} bytes) out of bounds")
            out.append((mem[i], lanes, off))
        return out


def _gather(buf: np.ndarray, off: np.ndarray, nbytes: int) -> np.ndarray:
    """(lanes, nbytes) uint8: the bytes at each lane's offset."""
    return buf[off[:, None] + np.arange(nbytes)]


def _le(chunk: np.ndarray, w: int) -> np.ndarray:
    """uint64 lanes from (lanes, w) little-endian bytes."""
    return np.ascontiguousarray(chunk).view(f"<u{w}").reshape(-1).astype(U64)


def _per_lane(fn, args: tuple[int, ...], out: int):
    """A step computing `fn(list of the lane's input values)` lane by lane (Python ints, as the
    per-thread functions take them)."""
    def step(cta: _Cta, idx) -> None:
        cols = [cta.get(a, idx).tolist() for a in args]
        cta.put(out, idx, np.array([int(fn(list(v))) for v in zip(*cols)], U64))
    return step


def _inst_step(code: str, tokens: list[str], args: tuple[int, ...], out: int, rw: int):
    """The lanes step of one plain instruction (`_inst`'s semantics)."""
    t = tokens[-1] if tokens else ""
    fast = _lane_inst(code, tokens, args, out, rw, t)
    if fast is not None:
        return fast

    def one(a: list[int]) -> int:
        r: dict = {}
        _inst(code, tokens, a, "out", rw, r)
        return r["out"]
    return _per_lane(one, args, out)


_LANE_CMP = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
             "eq": np.equal, "ne": np.not_equal, "lo": np.less, "ls": np.less_equal,
             "hi": np.greater, "hs": np.greater_equal}
_LANE_FLOAT = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _lane_inst(code, tokens, args, out, rw, t):
    """The array form of `_inst` for the instructions that have one, else None."""
    rm = _mask(rw)
    if code == "mov":
        a0 = args[0]
        return lambda cta, idx: cta.put(out, idx, cta.get(a0, idx) & rm)
    if code == "cvta":
        a0 = args[0]
        return lambda cta, idx: cta.put(out, idx, cta.get(a0, idx))
    if code == "selp":
        a0, a1, a2 = args
        return lambda cta, idx: cta.put(out, idx, np.where(cta.get(a2, idx) != 0, cta.get(a0, idx),
                                                           cta.get(a1, idx)))
    if code == "setp":
        if len(tokens) < 2 or tokens[0] not in _LANE_CMP or len(args) != 2:
            return None
        cmp, st, (a0, a1) = _LANE_CMP[tokens[0]], tokens[1], args
        if st in FLOAT:
            def setp_f(cta, idx):
                x = _lane_fval(cta.get(a0, idx), st).astype(np.float64)
                y = _lane_fval(cta.get(a1, idx), st).astype(np.float64)
                cta.put(out, idx, cmp(x, y))
            return setp_f
        if st == "pred":
            return None

        def setp_i(cta, idx):
            cta.put(out, idx, cmp(_lane_read_int(cta.get(a0, idx), st),
                                  _lane_read_int(cta.get(a1, idx), st)))
        return setp_i
    if t == "pred" and code in ("and", "or", "xor") and len(args) == 2:
        a0, a1 = args
        fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.not_equal}[code]
        return lambda cta, idx: cta.put(out, idx, fn(cta.get(a0, idx) != 0, cta.get(a1, idx) != 0))
    if t == "pred" and code == "not" and len(args) == 1:
        a0 = args[0]
        return lambda cta, idx: cta.put(out, idx, cta.get(a0, idx) == 0)
    if code == "cvt":
        return _lane_cvt(tokens, args[0], out)
    if t in FLOAT:
        return _lane_float(code, tokens, t, args, out)
    if t[:1] in ("s", "u", "b") and t[1:].isdigit():
        return _lane_int(code, tokens, t, args, out, rw)
    return None


def _lane_cvt(tokens, a0, out):
    """`_cvt` on lanes: int -> int, float -> float, int -> float; None for float -> int."""
    dst, src = tokens[-2], tokens[-1]
    rnd = tokens[0] if len(tokens) > 2 else ""
    if src in FLOAT and dst in FLOAT:
        irnd = _IRND.get(rnd)

        def f2f(cta, idx):
            x = _lane_fval(cta.get(a0, idx), src).astype(np.float64)
            if irnd is not None:
                x = irnd(x)
            cta.put(out, idx, _lane_fbits(x.astype(FLOAT[dst]), dst))
        return f2f
    if src in FLOAT or src == "pred" or dst == "pred":
        return None
    if dst in FLOAT:
        if rnd != "rn":
            return None

        def i2f(cta, idx):
            v = _lane_read_int(cta.get(a0, idx), src)
            cta.put(out, idx, _lane_fbits(v.astype(np.float64).astype(FLOAT[dst]), dst))
        return i2f
    m = _mask(_w(dst))

    def i2i(cta, idx):
        v = _lane_read_int(cta.get(a0, idx), src)
        cta.put(out, idx, v.astype(U64) & m)
    return i2i


def _lane_float(code, tokens, t, args, out):
    """`_float_op` on lanes (None for the functions it leaves to the per-lane form)."""
    ftz = "ftz" in tokens
    nan = "NaN" in tokens or code not in ("max", "min")
    ft = FLOAT[t]

    def inputs(cta, idx):
        xs = [_lane_fval(cta.get(a, idx), t) for a in args]
        return [_lane_flush(x, t) for x in xs] if ftz else xs

    def finish(cta, idx, r):
        r = np.asarray(r)
        if r.dtype != ft:
            r = r.astype(ft)
        cta.put(out, idx, _lane_fbits(_lane_flush(r, t) if ftz else r, t))

    if code in _LANE_FLOAT and len(args) == 2:
        fn = _LANE_FLOAT[code]
        return lambda cta, idx: finish(cta, idx, fn(*inputs(cta, idx)))
    if code in ("fma", "mad") and len(args) == 3:
        def fma(cta, idx):
            x = [v.astype(np.float64) for v in inputs(cta, idx)]
            finish(cta, idx, x[0] * x[1] + x[2])
        return fma
    if code in ("max", "min") and len(args) == 2:
        fn = (np.maximum if nan else np.fmax) if code == "max" else (np.minimum if nan else np.fmin)
        return lambda cta, idx: finish(cta, idx, fn(*inputs(cta, idx)))
    if code == "neg" and len(args) == 1:
        return lambda cta, idx: finish(cta, idx, -inputs(cta, idx)[0])
    if code == "abs" and len(args) == 1:
        return lambda cta, idx: finish(cta, idx, np.abs(inputs(cta, idx)[0]))
    if code == "copysign" and len(args) == 2:
        return lambda cta, idx: finish(cta, idx, np.copysign(*inputs(cta, idx)[::-1]))
    if code == "sqrt" and len(args) == 1:
        return lambda cta, idx: finish(cta, idx, np.sqrt(inputs(cta, idx)[0].astype(np.float64)))
    if code in APPROX and len(args) == 1:
        def approx(cta, idx):  # the model may be any Python function: applied per lane
            f = APPROX[code]
            finish(cta, idx, np.array([f(np.float64(v)) for v in inputs(cta, idx)[0]]))
        return approx
    return None


def _lane_int(code, tokens, t, args, out, rw):
    """`_int_op` on lanes where the result is no wider than the type (None otherwise, and for
    div/rem, mul.hi/.wide and add.sat: those run per lane)."""
    w = _w(t)
    if rw > w or "wide" in tokens or "hi" in tokens or "sat" in tokens:
        return None
    signed = t[0] == "s"
    m, rm = _mask(w), _mask(rw)
    # the low w bits of these do not depend on reading the operands signed
    if code in ("add", "sub", "and", "or", "xor") and len(args) == 2:
        fn = {"add": np.add, "sub": np.subtract, "and": np.bitwise_and, "or": np.bitwise_or,
              "xor": np.bitwise_xor}[code]
        a0, a1 = args
        return lambda cta, idx: cta.put(out, idx, fn(cta.get(a0, idx) & m, cta.get(a1, idx) & m) & rm)
    if code == "mul" and "lo" in tokens and len(args) == 2:
        a0, a1 = args
        return lambda cta, idx: cta.put(out, idx, ((cta.get(a0, idx) & m) * (cta.get(a1, idx) & m)) & m & rm)
    if code == "mad" and "lo" in tokens and len(args) == 3:
        a0, a1, a2 = args

        def mad(cta, idx):
            p = ((cta.get(a0, idx) & m) * (cta.get(a1, idx) & m)) & m
            cta.put(out, idx, (p + (cta.get(a2, idx) & m)) & rm)
        return mad
    if code == "neg" and len(args) == 1:
        a0 = args[0]
        return lambda cta, idx: cta.put(out, idx, (U64(0) - (cta.get(a0, idx) & m)) & rm)
    if code == "not" and len(args) == 1:
        a0 = args[0]
        return lambda cta, idx: cta.put(out, idx, ~(cta.get(a0, idx) & m) & rm)
    if code in ("min", "max") and len(args) == 2:
        fn, (a0, a1) = (np.minimum if code == "min" else np.maximum), args

        def minmax(cta, idx):
            x, y = _lane_read_int(cta.get(a0, idx), t), _lane_read_int(cta.get(a1, idx), t)
            cta.put(out, idx, fn(x, y).astype(U64) & rm)
        return minmax
    if code in ("shl", "shr") and len(args) == 2:
        a0, a1 = args

        def shift(cta, idx):
            k = np.minimum(cta.get(a1, idx) & U64(0xFFFFFFFF), U64(w))
            x = cta.get(a0, idx)
            if code == "shl":
                r = np.where(k >= 64, U64(0), (x & m) << np.minimum(k, U64(63)))
            elif signed:
                r = (_lane_sval(x, w) >> np.minimum(k, U64(63)).astype(np.int64)).astype(U64)
            else:
                r = np.where(k >= 64, U64(0), (x & m) >> np.minimum(k, U64(63)))
            cta.put(out, idx, r & rm)
        return shift
    return None


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
    #
    # The threads run in lock step: each round runs the lowest-numbered block any live thread
    # is at, for the threads at it (blocks are numbered in program order, so the threads that
    # took one side of a branch reach the join before those still inside a loop or on the other
    # side go on past it). A barrier, shuffle or matrix instruction needs every live thread at
    # it; memory is read and written in program order, instruction by instruction, which is
    # what a kernel without data races between its barriers sees either way.

    def _cta(self, mem, ctaid, grid, block) -> None:
        n = block[0] * block[1] * block[2]
        shared = np.zeros(self.shared_size, np.uint8)
        t = np.arange(n, dtype=np.uint64)
        tid = (t % U64(block[0]), t // U64(block[0]) % U64(block[1]), t // U64(block[0] * block[1]))
        sreg = {"%laneid": t % U64(32)}
        for i, d in enumerate("xyz"):
            sreg[f"%tid.{d}"] = tid[i]
            sreg[f"%ctaid.{d}"] = np.full(n, ctaid[i], U64)
            sreg[f"%ntid.{d}"] = np.full(n, block[i], U64)
            sreg[f"%nctaid.{d}"] = np.full(n, grid[i], U64)
        cta = _Cta(n, mem, shared, sreg, self)
        pc = np.zeros(n, np.int64)  # each thread's next block; -1 once it has returned
        while True:
            live = pc >= 0
            if not live.any():
                return
            b = int(pc[live].min())
            at = pc == b
            idx = None if at.all() else np.nonzero(at)[0]
            self._run_block(cta, b, idx, pc, live)

    def _run_block(self, cta: _Cta, b: int, idx, pc: np.ndarray, live: np.ndarray) -> None:
        sel = slice(None) if idx is None else idx
        for e in self.code[b]:
            tag = e[0]
            if tag == "steps":
                for step in e[1]:
                    step(cta, idx)
                continue
            if tag == "bra":
                vals = [cta.get(v, idx) for v in e[1]]  # a parallel copy: all read first
                for a, v in zip(e[2], vals):
                    cta.put(a, idx, v)
                pc[sel] = e[3]
                return
            if tag == "cbra":
                p = cta.get(e[1], idx) != 0
                if e[2]:
                    p = ~p
                pc[sel] = np.where(p, e[3], e[4])
                return
            if tag == "ret":
                pc[sel] = -1
                return
            self._sync(cta, e, idx, live)
        pc[sel] = b + 1 if b + 1 < len(self.code) else -1

    def _sync(self, cta: _Cta, e: tuple, idx, live: np.ndarray) -> None:
        """A barrier, shuffle or matrix instruction: every live thread is at it."""
        tag, n = e[0], cta.n
        here = np.ones(n, bool) if idx is None else np.isin(np.arange(n), idx)
        if not np.array_equal(here, live):
            raise SimError(f"threads diverge at synchronisation points: {tag}")
        if tag == "bar":
            if not live.all():
                raise SimError("bar.sync with exited threads")
            return
        if tag == "warp":
            return
        if tag == "shfl":
            vals, b = (cta.regs[k] for k in e[1][:2])
            t = np.arange(n, dtype=np.uint64) if idx is None else idx.astype(np.uint64)
            src = ((t & ~U64(31)) | ((t & U64(31)) ^ (b[t.astype(np.int64)] & U64(31)))).astype(np.int64)
            if not live[src].all():
                raise SimError("shfl from an exited lane")
            cta.put(e[2], idx, vals[src])
            return
        if tag == "mma":
            _, mods, a, b, c, outs = e
            if mods != ".m16n8k16.row.col.f32.f16.f16.f32":
                raise SimError(f"simulator lacks mma.sync{mods}")
            cols = [np.stack([cta.regs[k] for k in ks], axis=1) for ks in (a, b, c)]
            for w in range(0, n, 32):
                if not live[w:w + 32].all():
                    raise SimError("mma.sync with exited lanes")
                lanes = [("mma", *(x[lane].tolist() for x in cols)) for lane in range(w, w + 32)]
                got = np.array(_mma(lanes), U64)
                for j, o in enumerate(outs):
                    cta.put(o, np.arange(w, w + 32), got[:, j])
            return
        # wgmma
        _, mods, imms, a, desc_b, acc, outs = e
        if n % 128:
            raise SimError("wgmma outside whole warpgroups")
        A = np.stack([cta.regs[k] for k in a], axis=1)
        D = np.stack([cta.regs[k] for k in acc], axis=1)
        B = cta.regs[desc_b]
        for w in range(0, n, 128):
            if not live[w:w + 128].all():
                raise SimError("wgmma with exited threads")
            group = [("wgmma", mods, imms, A[i, 0].item() if len(a) == 1 else A[i].tolist(),
                      B[i].item(), D[i].tolist()) for i in range(w, w + 128)]
            got = np.array(_wgmma(group, cta.shared), U64)
            for j, o in enumerate(outs):
                cta.put(o, np.arange(w, w + 128), got[:, j])

    # Each op is decoded once: a plain op into a function of (CTA, threads) that runs it for
    # those threads, a branch or synchronisation into a tuple (tag, fields...) the block loop
    # reads; a run of plain ops is one ("steps", [function, ...]) entry. A register is keyed by
    # its SSA value's id (`_keys`): the kernel op, alive while the Kernel is, keeps them unique.

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
                    if entries and entries[-1][0] == "steps":
                        entries[-1][1].append(fn)
                    else:
                        entries.append(("steps", [fn]))
            code.append(entries)
        return code

    def _step_fn(self, op):
        """The op as a function of (CTA, threads)."""
        if isinstance(op, ptx.MovImmOp):
            out, val = id(op.out), int(_literal(ptx.reg_kind(op.out), op.imm.data))
            return lambda cta, idx: cta.put(out, idx, U64(val))
        if isinstance(op, ptx.MovSpecialOp):
            out, src = id(op.out), op.source.data

            def mov_special(cta, idx):
                v = cta.sreg.get(src)
                cta.put(out, idx, U64(self.shared[src]) if v is None else
                        (v if idx is None else v[idx]))
            return mov_special
        if isinstance(op, ptx.LdParamOp):
            out, i = id(op.out), self.params.index(op.param.data)
            width, param_type = WIDTH[ptx.reg_kind(op.out)] // 8, op.param_type

            def ld_param(cta, idx):
                if i in self.scalars:  # a scalar .param: its bytes, little-endian
                    data = self.scalars[i]
                    if len(data) != width:
                        raise SimError(f"ld.param.{param_type} of {len(data)} bytes")
                    cta.put(out, idx, U64(int.from_bytes(data, "little")))
                else:
                    cta.put(out, idx, U64(((i + 1) << GLOBAL_SHIFT) + self.shifts[i]))
            return ld_param
        if isinstance(op, ptx.PackOp):  # mov.b32 {b16, b16} or mov.b64 {b32, b32}
            out, (lo_v, hi_v) = id(op.out), _keys(op.args)
            h = _w(op.mods.data) // 2
            m = _mask(h)
            return lambda cta, idx: cta.put(out, idx, (cta.get(lo_v, idx) & m) |
                                            ((cta.get(hi_v, idx) & m) << U64(h)))
        if isinstance(op, ptx.UnpackOp):
            arg, (o0, o1) = id(op.arg), _keys(op.outs)
            h = _w(op.mods.data) // 2
            m = _mask(h)

            def unpack(cta, idx):
                v = cta.get(arg, idx)
                cta.put(o0, idx, v & m)
                cta.put(o1, idx, (v >> U64(h)) & m)
            return unpack
        if isinstance(op, ptx.CpAsyncOp):
            # the source is read when the copy is issued; the bytes land in shared memory only
            # at the cp.async.wait_group that retires the copy's group, so a read before it
            # sees the old bytes (a missing wait fails a comparison)
            dst, src, n, off = id(op.dst), id(op.src), op.size.data, op.offset.data
            soff = op.src_offset.data
            size = id(op.src_size) if op.src_size is not None else None

            def cp_async(cta, idx):
                k = cta.size(idx)
                take = np.full(k, n, np.int64) if size is None else \
                    cta.get(size, idx).astype(np.int64)
                data = np.zeros((k, n), np.uint8)
                some = take > 0
                if some.any():
                    lanes = np.nonzero(some)[0]
                    addr = cta.get(src, idx)[lanes].astype(np.int64) + soff
                    if (take[lanes] != n).any():  # per-lane sizes: each its own bytes
                        for lane, a, tk in zip(lanes.tolist(), addr.tolist(), take[lanes].tolist()):
                            ((buf, _, o),) = cta.locate("global", np.array([a], np.int64), tk)
                            data[lane, :tk] = buf[int(o[0]):int(o[0]) + tk]
                    else:
                        for buf, sub, o in cta.locate("global", addr, n):
                            rows = lanes if sub is None else lanes[sub]
                            data[rows] = _gather(buf, o, n)
                to = cta.get(dst, idx).astype(np.int64) + off
                if (to % n).any():
                    raise SimError(f"misaligned cp.async of {n} bytes at {int(to[to % n != 0][0])}")
                cta.locate("shared", to, n)
                tids = cta.tids(idx)
                cta.cp_copies.append([tids, cta.cp_count[tids], to, data])
            return cp_async
        if isinstance(op, ptx.CpAsyncCommitGroupOp):
            def commit(cta, idx):
                cta.cp_count[cta.tids(idx)] += 1
            return commit
        if isinstance(op, ptx.CpAsyncWaitGroupOp):
            keep = op.pending.data

            def wait(cta, idx):
                waiting = np.zeros(cta.n, bool)
                waiting[cta.tids(idx)] = True
                limit = cta.cp_count - keep  # groups below it have landed for that thread
                kept = []
                for copy in cta.cp_copies:
                    tids, groups, to, data = copy
                    done = waiting[tids] & (groups < limit[tids])
                    for lane in np.nonzero(done)[0].tolist():  # in issue order
                        cta.shared[to[lane]:to[lane] + data.shape[1]] = data[lane]
                    if not done.all():
                        rest = ~done
                        kept.append([tids[rest], groups[rest], to[rest], data[rest]])
                cta.cp_copies = kept
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

                def ld(cta, idx):
                    addr = cta.get(base, idx).astype(np.int64) + offset
                    if count > 1 and (addr % (w * count)).any():
                        bad = addr[addr % (w * count) != 0][0]
                        raise SimError(f"misaligned ld/st{mods} at {int(bad)}")
                    k = len(addr)
                    vals = np.zeros((k, count), U64)
                    for buf, lanes, o in cta.locate(space, addr, w * count):
                        chunk = _gather(buf, o, w * count)
                        rows = slice(None) if lanes is None else lanes
                        for i in range(count):
                            vals[rows, i] = _le(chunk[:, i * w:(i + 1) * w], w)
                    for i, (out, rw) in enumerate(outs):
                        v = vals[:, i]
                        if signed:
                            v = _lane_sval(v, 8 * w).astype(U64) & _mask(rw)
                        cta.put(out, idx, v)
                return ld
            values, mask = _keys(op.values), _mask(8 * w)

            def st(cta, idx):
                addr = cta.get(base, idx).astype(np.int64) + offset
                if count > 1 and (addr % (w * count)).any():
                    bad = addr[addr % (w * count) != 0][0]
                    raise SimError(f"misaligned ld/st{mods} at {int(bad)}")
                data = np.concatenate([(cta.get(v, idx) & mask).astype(f"<u{w}").view(np.uint8)
                                       .reshape(-1, w) for v in values], axis=1)
                for buf, lanes, o in cta.locate(space, addr, w * count):
                    # where two lanes write one byte the later thread's value stays
                    buf[o[:, None] + np.arange(w * count)] = data if lanes is None else data[lanes]
            return st
        if isinstance(op, ptx.PtxInst):
            code = op.OPCODE
            tokens = op.mods.data.strip(".").split(".") if op.mods.data else []
            args, out = _keys(op.args), id(op.outs[0])
            rw = WIDTH[ptx.reg_kind(op.outs[0])]
            return _inst_step(code, tokens, args, out, rw)
        name = op.name

        def lacking(cta, idx):
            raise SimError(f"simulator lacks '{name}'")
        return lacking


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
