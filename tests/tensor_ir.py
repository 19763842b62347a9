"""Build IR kernels for tensor-addressing cases and their expected results (from the independent
scalar reference in tensor_reference.py). Used by the pytest files and tensor_cases.py (the GPU
tests' cases).

A case is a dict: ldim, mode, lops [(name, args)], view None | {vdim, has_dims, perm, vops},
rows, cols, etype ('i32' | 'f16' | 'f32'), mem (elements of the tensor buffer), kind ('load' |
'store'), dynamic (set of op positions whose operands are kernel arguments; layout ops are
numbered 0.., view ops 100..).
"""

from __future__ import annotations

import random

import numpy as np

import tensor_reference as ref

NP = {"i32": np.int32, "f16": np.float16, "f32": np.float32}
LAYOUT_NAMES = {"set_dimension": "layout_set_dimension", "set_stride": "layout_set_stride",
                "set_block_size": "layout_set_block_size", "slice": "layout_slice",
                "set_clamp_value": "layout_set_clamp_value"}
VIEW_NAMES = {"set_dimension": "view_set_dimension", "set_stride": "view_set_stride",
              "set_clip": "view_set_clip"}


def random_case(rng: random.Random, kind: str | None = None, etype: str | None = None,
                avoid_clip_overflow: bool = True) -> dict:
    """A random case; with avoid_clip_overflow False its view clip may have offset + span above
    2^32 - 1 (undefined: the interpreter refuses it, `expected` returns None)."""
    kind = kind or rng.choice(["load", "load", "store"])
    ldim = rng.randint(1, 5)
    case = {"ldim": ldim, "mode": rng.choice(ref.MODES), "kind": kind,
            "lops": ref.random_layout_chain(rng, ldim, rng.randint(0, 4), store=kind == "store"),
            "rows": rng.choice([1, 2, 4, 8, 16]), "cols": rng.choice([1, 2, 4, 8, 16]),
            "etype": etype or rng.choice(["i32", "f16", "f32"]), "mem": 2048, "view": None,
            "dynamic": set()}
    if rng.random() < 0.6:
        has = rng.random() < 0.5
        vdim = rng.randint(1, 5) if has else ldim
        perm = list(range(vdim))
        rng.shuffle(perm)
        case["view"] = {"vdim": vdim, "has_dims": has, "perm": perm,
                        "vops": ref.random_view_chain(rng, vdim, rng.randint(0, 3),
                                                        avoid_clip_overflow)}
    n = len(case["lops"]) + (len(case["view"]["vops"]) if case["view"] else 0)
    for i, _ in enumerate(case["lops"]):
        if rng.random() < 0.5:
            case["dynamic"].add(i)
    if case["view"]:
        for i, _ in enumerate(case["view"]["vops"]):
            if rng.random() < 0.5:
                case["dynamic"].add(100 + i)
    del n
    return case


def case_ir(case: dict, name: str = "k") -> tuple[str, list[int]]:
    """The kernel text and the values of its scalar i32 arguments (after the two memrefs)."""
    t = case["etype"]
    R, C, N = case["rows"], case["cols"], case["mem"]
    L = f"!tensor_addr.layout<{case['ldim']}, {case['mode']}>"
    M = f"!coop.matrix<{R}x{C}x{t}, Subgroup, MatrixAcc>"
    body: list[str] = []
    scalars: list[int] = []
    params: list[str] = []
    counter = [0]

    def operand(v: int, dynamic: bool) -> str:
        counter[0] += 1
        if dynamic:
            params.append(f"%a{counter[0]}: i32")
            scalars.append(ref.i32(v))
            return f"%a{counter[0]}"
        body.append(f"  %k{counter[0]} = arith.constant {ref.i32(v)} : i32")
        return f"%k{counter[0]}"

    body.append(f"  %l0 = tensor_addr.create_layout : {L}")
    cur = "%l0"
    for i, (op, args) in enumerate(case["lops"]):
        names = [operand(a, i in case["dynamic"]) for a in args]
        body.append(f"  %l{i + 1} = tensor_addr.{LAYOUT_NAMES[op]} {cur}, {', '.join(names)} : {L}")
        cur = f"%l{i + 1}"
    view_part, view_type = "", ""
    if case["view"]:
        v = case["view"]
        V = (f"!tensor_addr.view<{v['vdim']}, {'true' if v['has_dims'] else 'false'}, "
             f"{', '.join(str(p) for p in v['perm'])}>")
        body.append(f"  %v0 = tensor_addr.create_view : {V}")
        vcur = "%v0"
        for i, (op, args) in enumerate(v["vops"]):
            names = [operand(a, 100 + i in case["dynamic"]) for a in args]
            body.append(f"  %v{i + 1} = tensor_addr.{VIEW_NAMES[op]} {vcur}, {', '.join(names)} : {V}")
            vcur = f"%v{i + 1}"
        view_part, view_type = f" view {vcur}", f", {V}"
    body.append("  %z = arith.constant 0 : index")
    body.append(f"  %ld = arith.constant {C} : index")
    body.append(f"  %obj = coop.load %out[%z], %ld, RowMajor : memref<{R}x{C}x{t}> -> {M}")
    if case["kind"] == "load":
        body.append(f"  %m = coop.load_tensor %buf, %obj, {cur}{view_part} : memref<{N}x{t}>, "
                    f"{M}, {L}{view_type} -> {M}")
        body.append(f"  coop.store %m, %out[%z], %ld, RowMajor : {M}, memref<{R}x{C}x{t}>")
    else:
        body.append(f"  coop.store_tensor %obj, %buf, {cur}{view_part} : {M}, memref<{N}x{t}>, "
                    f"{L}{view_type}")
    sig = ", ".join([f"%buf: memref<{N}x{t}>", f"%out: memref<{R}x{C}x{t}>", *params])
    text = (f"func.func @{name}({sig}) attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} "
            "{\n" + "\n".join(body) + "\n  func.return\n}\n")
    return text, scalars


def case_inputs(case: dict, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(tensor buffer, matrix buffer): distinct small integers (exact in f16)."""
    dt = NP[case["etype"]]
    buf = (rng.permutation(case["mem"]) % 2000 - 1000).astype(dt)
    out = (rng.integers(-1000, 1000, (case["rows"], case["cols"]))).astype(dt)
    return buf, out


def expected(case: dict, buf: np.ndarray, out: np.ndarray, rounding: str = "ceiling"):
    """(expected tensor buffer, expected matrix buffer) or None when the run must fail.
    rounding="floor": the H200 driver's OpTensorLayoutSetDimensionNV strides (not the spec; see
    tensor_reference.layout_op)."""
    try:
        t = ref.run_chain(case["ldim"], case["lops"], rounding=rounding)
    except ValueError:  # a stride rule is broken: the interpreter must refuse
        return None
    view = None
    if case["view"]:
        v = case["view"]
        view = (ref.run_chain(v["vdim"], v["vops"], view=True), v["has_dims"], v["perm"])
    R, C = case["rows"], case["cols"]
    dt = buf.dtype
    store = case["kind"] == "store"
    if store and any(b > 1 for b in t["blockSize"]):
        return None
    nb, no = buf.copy(), out.copy()
    written: dict[int, int] = {}
    for r in range(R):
        for c in range(C):
            kind, idx, _, _ = ref.element(t, case["mode"], r, c, C, view, store)
            if kind == "ub":
                return None
            if kind == "clip":
                continue
            if kind == "discard":
                if not store:
                    bits = t["clampValue"] & ((1 << (8 * dt.itemsize)) - 1)
                    no[r, c] = np.array([bits], f"u{dt.itemsize}").view(dt)[0]
                continue
            if idx >= len(buf):
                return None
            if store:
                b = int(out[r:r + 1, c:c + 1].view(f"u{dt.itemsize}")[0, 0])
                if written.get(idx, b) != b:
                    return None
                written[idx] = b
                nb[idx] = out[r, c]
            else:
                no[r, c] = buf[idx]
    return nb, no
