"""An independent, scalar re-implementation of the tensor-addressing pseudo-code, written from
the text of SPV_NV_tensor_addressing and SPV_NV_cooperative_matrix2 (3.X Tensor Layout and View),
one element at a time in plain Python ints. It shares no code with coopdialect's interpreter; the
tests compare the two. Also: a random case generator (layout/view op chains) used by the tests.

State is a dict; every uint32 is masked with & 0xFFFFFFFF like C's unsigned arithmetic.
"""

from __future__ import annotations

import random

M32 = 0xFFFFFFFF
UNDEF = "undefined"  # marker: the element's calculation hits undefined behavior


def i32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


# ---- state transitions, from the instruction descriptions ------------------------------------

def create_layout(dim: int) -> dict:
    return {"blockSize": [1] * dim, "layoutDimension": [0] * dim, "stride": [0] * dim,
            "offset": [0] * dim, "span": [0] * dim, "clampValue": 0}


def create_view(dim: int) -> dict:
    return {"viewDimension": [0] * dim, "viewStride": [0] * dim,
            "clip": [0, M32, 0, M32]}


def stride_rule_ok(t: dict, name: str, args: list[int]) -> bool:
    """OpTensorLayoutSetStrideNV: Stride<i> >= Stride<i+1> * ceiling(layoutDimension[i+1] /
    blockSize[i+1]); OpTensorLayoutSliceNV: the same on the layout's strides."""
    n = len(t["span"])
    strides = [a & M32 for a in args] if name == "set_stride" else t["stride"]
    if name not in ("set_stride", "slice"):
        return True
    for i in range(n - 1):
        b = t["blockSize"][i + 1]
        if b and strides[i] < strides[i + 1] * ((t["layoutDimension"][i + 1] + b - 1) // b):
            return False
    return True


def layout_op(t: dict, name: str, args: list[int], rounding: str = "ceiling") -> dict:
    """One layout instruction. rounding="floor" models the H200 driver's observed
    OpTensorLayoutSetDimensionNV (stride[i+1] * floor(Dim<i+1> / blockSize[i+1]); the text says
    ceiling) and checks no stride rule; it is not the spec."""
    if rounding == "ceiling" and not stride_rule_ok(t, name, args):
        raise ValueError("stride rule")
    t = {k: (list(v) if isinstance(v, list) else v) for k, v in t.items()}
    n = len(t["span"])
    if name == "set_dimension":
        for i in range(n):
            t["layoutDimension"][i] = args[i] & M32
            t["span"][i] = args[i] & M32
            t["offset"][i] = 0
        t["stride"][n - 1] = 1
        for i in range(n - 2, -1, -1):
            d, b = t["layoutDimension"][i + 1], t["blockSize"][i + 1]
            blocks = (d + b - 1) // b if rounding == "ceiling" else d // b
            t["stride"][i] = (t["stride"][i + 1] * blocks) & M32
    elif name == "set_stride":
        t["stride"] = [a & M32 for a in args]
    elif name == "set_block_size":
        t["blockSize"] = [a & M32 for a in args]
    elif name == "slice":
        for i in range(n):
            t["offset"][i] = i32(t["offset"][i] + args[2 * i])
            t["span"][i] = args[2 * i + 1] & M32
    elif name == "set_clamp_value":
        t["clampValue"] = args[0] & M32
    return t


def view_op(v: dict, name: str, args: list[int]) -> dict:
    v = {k: list(x) for k, x in v.items()}
    n = len(v["viewDimension"])
    if name == "set_dimension":
        v["viewDimension"] = [a & M32 for a in args]
        v["viewStride"][n - 1] = 1
        for i in range(n - 2, -1, -1):
            p = 1
            for j in range(i + 1, n):
                p = (p * v["viewDimension"][j]) & M32
            v["viewStride"][i] = p
    elif name == "set_stride":
        v["viewStride"] = [a & M32 for a in args]
    elif name == "set_clip":
        v["clip"] = [a & M32 for a in args]
    return v


# ---- the pseudo-code ------------------------------------------------------------------------

def span_coord_to_tensor_coord(t, mode, span_coord, is_store):
    """Returns ('discard', None) | ('ub', None) | ('ok', (blockCoord, coordInBlock))."""
    n = len(t["span"])
    block, inner = [0] * n, [0] * n
    for dim in range(n):
        c = i32(span_coord[dim] + t["offset"][dim])
        L = t["layoutDimension"][dim]
        if c < 0 or c >= L:
            m = mode
            if is_store and m != "Undefined":
                m = "Constant"
            if m == "Undefined":
                return "ub", None
            if m == "Constant":
                return "discard", None
            if m == "ClampToEdge":
                c = min(max(c, 0), L - 1)
            elif m == "Repeat":
                if L == 0:
                    return "ub", None
                c = c % L  # Python % takes the divisor's sign, as OpSMod
            else:  # RepeatMirrored, per the clamp-mode table
                if 2 * L - 2 == 0:
                    return "ub", None
                c = c % (2 * L - 2)
                c = (2 * L - 2 - c) if c >= L else c
        b = t["blockSize"][dim]
        if b == 0:
            return "ub", None
        inner[dim] = c % b
        block[dim] = c // b
    return "ok", (block, inner)


def element(t, mode, row, col, N, view=None, is_store=False):
    """('clip'|'discard'|'ub'|'ok', index, blockCoord, coordInBlock) for element (row, col)."""
    if view is None:
        index = (row * N + col) & M32
    else:
        v, has_dims, perm = view
        ro, rs, co, cs = v["clip"]
        # The text computes `clipRowOffset + clipRowSpan` in uint32 (it would wrap) but the
        # hardware does not wrap: coopdialect treats a sum above 2^32 - 1 as undefined (an error).
        if ro + rs > M32 or co + cs > M32:
            return "ub", None, None, None
        if row < ro or row >= ro + rs or col < co or col >= co + cs:
            return "clip", None, None, None
        r, c = row - ro, col - co
        width = min(N, cs)
        index = (r * width + c) & M32
        vdim = len(perm)
        dims = v["viewDimension"] if has_dims else t["span"]
        vc = [0] * vdim
        for dim in range(vdim - 1, -1, -1):
            i = perm[dim]
            if dims[i] == 0:
                return "ub", None, None, None
            vc[i] = index % dims[i]
            index //= dims[i]
        if has_dims:
            stride = v["viewStride"]
        else:
            stride = [0] * vdim
            stride[vdim - 1] = 1
            for dim in range(vdim - 2, -1, -1):
                stride[dim] = (stride[dim + 1] * t["span"][dim + 1]) & M32
        index = 0
        for dim in range(vdim - 1, -1, -1):
            index = (index + vc[dim] * stride[dim]) & M32
    n = len(t["span"])
    sc = [0] * n
    for dim in range(n - 1, -1, -1):
        if t["span"][dim] == 0:
            return "ub", None, None, None
        sc[dim] = index % t["span"][dim]
        index //= t["span"][dim]
    kind, res = span_coord_to_tensor_coord(t, mode, sc, is_store)
    if kind != "ok":
        return kind, None, None, None
    block, inner = res
    index = 0
    for dim in range(n):
        index = (index + block[dim] * t["stride"][dim]) & M32
    return "ok", index, block, inner


# ---- random cases ---------------------------------------------------------------------------

MODES = ("Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored")
LAYOUT_OPS = ("set_dimension", "set_stride", "set_block_size", "slice", "set_clamp_value")
VIEW_OPS = ("set_dimension", "set_stride", "set_clip")


def random_layout_chain(rng: random.Random, dim: int, nops: int, store: bool = False):
    """A list of (op, args) with small values; set_dimension comes first most of the time; strides
    mostly satisfy the stride rule."""
    ops = []
    if rng.random() < 0.85:
        ops.append(("set_dimension", [rng.randint(1, 7) for _ in range(dim)]))
    for _ in range(nops):
        name = rng.choice(LAYOUT_OPS)
        if store and name == "set_block_size":
            name = "slice"
        if name == "set_dimension":
            args = [rng.randint(1, 7) for _ in range(dim)]
        elif name == "set_stride" and rng.random() < 0.2:
            args = [rng.randint(1, 40) for _ in range(dim)]  # may break the stride rule
        elif name == "set_stride":
            try:
                t = run_chain(dim, ops)
            except ValueError:
                t = create_layout(dim)
            args = [0] * dim
            args[dim - 1] = rng.randint(1, 3)
            for i in range(dim - 2, -1, -1):
                b = t["blockSize"][i + 1] or 1
                need = args[i + 1] * ((t["layoutDimension"][i + 1] + b - 1) // b)
                args[i] = need + rng.choice([0, 0, rng.randint(1, 5)])
        elif name == "set_block_size":
            args = [rng.randint(1, 3) for _ in range(dim)]
        elif name == "slice":
            args = []
            for _ in range(dim):
                args += [rng.randint(-3, 5), rng.randint(1, 6)]
        else:
            args = [rng.randint(0, M32)]
        ops.append((name, args))
    return ops


def random_view_chain(rng: random.Random, dim: int, nops: int, avoid_clip_overflow: bool = True):
    """(op, args) list; with avoid_clip_overflow False, a set_clip may have offset + span above
    2^32 - 1 (undefined: the interpreter must refuse it)."""
    ops = []
    for _ in range(nops):
        name = rng.choice(VIEW_OPS)
        if name == "set_dimension":
            args = [rng.randint(1, 6) for _ in range(dim)]
        elif name == "set_stride":
            args = [rng.randint(0, 30) for _ in range(dim)]
        elif avoid_clip_overflow:
            # huge spans, but offset + span stays <= 2^32 - 1 (a larger sum is undefined)
            ro, co = rng.randint(0, 4), rng.randint(0, 4)
            args = [ro, rng.choice([rng.randint(1, 16), M32 - ro - rng.randint(0, 3)]),
                    co, rng.choice([rng.randint(1, 16), M32 - co - rng.randint(0, 3)])]
        else:
            args = [rng.randint(0, 4), rng.choice([rng.randint(1, 16), M32 - rng.randint(0, 3)]),
                    rng.randint(0, 4), rng.choice([rng.randint(1, 16), M32 - rng.randint(0, 3)])]
        ops.append((name, args))
    return ops


def run_chain(dim: int, ops, view: bool = False, rounding: str = "ceiling") -> dict:
    """The state after `ops`; ValueError when a layout op breaks a stride rule. rounding: see
    layout_op."""
    s = create_view(dim) if view else create_layout(dim)
    for name, args in ops:
        s = view_op(s, name, args) if view else layout_op(s, name, args, rounding)
    return s
