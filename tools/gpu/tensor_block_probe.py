"""Focused GPU probes of tensor-addressed loads: block sizes x clamp modes (tensor addressing).

Built around tensor_check's random_012 (ClampToEdge, Dim 4, layoutDimension (1,5,4,5), blockSize
(2,1,1,3), the last OpTensorLayoutSetDimensionNV after OpTensorLayoutSetBlockSizeNV): the same
layout with block sizes that divide / do not divide the dimensions, strides implicit (set by
OpTensorLayoutSetDimensionNV after or before the block size) or explicit
(OpTensorLayoutSetStrideNV), every clamp mode, 1-D and 2-D layouts with slices that go out of
bounds on both sides; and RepeatMirrored with a layoutDimension of 1 (in bounds), with and without
views, against Repeat / ClampToEdge and layouts without a 1.

    python3 tools/gpu/tensor_check.py --cases 0 --probes --save-all --out $OUT   # on the GPU

The tensor buffer holds its own element index (buf[i] = i, exact in f16 up to 2048) and Object
holds -(1 + r*N + c), so a GPU value tells which element was loaded (or that the element was
left alone / given the clamp value). Expected buffers come from the interpreter.
"""

from __future__ import annotations

import numpy as np

MODES = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"]
CLAMP_BITS = {"f32": 0xC59C4000, "f16": 0xEC00}  # -5000.0 / -4096.0: never a loaded value


def probes() -> list[tuple[str, dict]]:
    """(name, case) in tests/tensor_ir.py's case format (loads, no view, constant operands)."""
    out: list[tuple[str, dict]] = []

    def add(name: str, ldim: int, lops: list, mode: str, etype: str = "f32", rows: int = 16,
            cols: int = 16, view: dict | None = None) -> None:
        lops = lops + [("set_clamp_value", [CLAMP_BITS[etype]])] if mode == "Constant" else lops
        out.append((name, {"ldim": ldim, "mode": mode, "kind": "load", "lops": lops,
                           "rows": rows, "cols": cols, "etype": etype, "mem": 2048,
                           "view": view, "dynamic": set()}))

    # random_012's exact chain, then the same final state reached in other ways
    orig = [("set_dimension", [6, 6, 5, 3]), ("set_block_size", [3, 1, 2, 2]),
            ("set_block_size", [3, 3, 3, 1]), ("set_block_size", [2, 1, 1, 3]),
            ("set_dimension", [1, 5, 4, 5])]
    for mode in MODES:  # no coordinate is out of bounds: the mode must not matter
        add(f"r12_orig_{mode}", 4, orig, mode)
    add("r12_orig_ClampToEdge_f16", 4, orig, "ClampToEdge", "f16")
    d4 = [1, 5, 4, 5]
    for tag, bs in (("bs2113", [2, 1, 1, 3]), ("bs1113", [1, 1, 1, 3]), ("bs2111", [2, 1, 1, 1]),
                    ("bs1115", [1, 1, 1, 5]), ("bs1111", [1, 1, 1, 1]), ("bs1213", [1, 2, 1, 3]),
                    ("bs1123", [1, 1, 2, 3])):
        add(f"d4_{tag}_bsfirst", 4, [("set_block_size", bs), ("set_dimension", d4)], "ClampToEdge")
    # the block sizes after set_dimension: strides stay in elements (100, 20, 5, 1)
    add("d4_bs2113_dimfirst", 4, [("set_dimension", d4), ("set_block_size", [2, 1, 1, 3])],
        "ClampToEdge")
    # explicit strides equal to what set_dimension computes after the block size (40, 8, 2, 1)
    add("d4_bs2113_explicit", 4, [("set_block_size", [2, 1, 1, 3]), ("set_dimension", d4),
                                  ("set_stride", [40, 8, 2, 1])], "ClampToEdge")
    # 1-D: dimension 5, block 3 (does not divide) / 5 (divides); slice -2..6 goes out on both sides
    for bs in (3, 5):
        for mode in MODES[1:]:
            add(f"d1_bs{bs}_slice_{mode}", 1, [("set_block_size", [bs]), ("set_dimension", [5]),
                                               ("slice", [-2, 9])], mode)
    # 2-D: 4x5, blocks (1,3) / (1,5) / (2,3), strides set after the block size; slice out of
    # bounds on both sides in both dimensions (rows -1..4, columns -2..6)
    for tag, bs in (("bs13", [1, 3]), ("bs15", [1, 5]), ("bs23", [2, 3])):
        for mode in MODES[1:]:
            add(f"d2_{tag}_slice_{mode}", 2, [("set_block_size", bs), ("set_dimension", [4, 5]),
                                              ("slice", [-1, 6, -2, 9])], mode)
        add(f"d2_{tag}_inbounds", 2, [("set_block_size", bs), ("set_dimension", [4, 5])],
            "ClampToEdge")
    add("d2_bs13_dimfirst_slice_ClampToEdge", 2,
        [("set_dimension", [4, 5]), ("set_block_size", [1, 3]), ("slice", [-1, 6, -2, 9])],
        "ClampToEdge")
    # RepeatMirrored with a layoutDimension of 1 and every coordinate in bounds (defined by the
    # text: the clamp formula, which would divide by 2*1-2 = 0, is not reached), with and without
    # a view; the other modes and dimensions without a 1 as controls
    for tag, dims in (("651", [6, 5, 1]), ("165", [1, 6, 5]), ("615", [6, 1, 5]),
                      ("652", [6, 5, 2])):
        for mode in ("RepeatMirrored", "Repeat", "ClampToEdge"):
            add(f"m{tag}_noview_{mode}", 3, [("set_dimension", dims)], mode)
            add(f"m{tag}_spanview_{mode}", 3, [("set_dimension", dims)], mode,
                view={"vdim": 3, "has_dims": False, "perm": [0, 1, 2], "vops": []})
        add(f"m{tag}_ownview_RepeatMirrored", 3, [("set_dimension", dims)], "RepeatMirrored",
            view={"vdim": 3, "has_dims": True, "perm": [0, 1, 2],
                  "vops": [("set_dimension", dims)]})
        add(f"m{tag}_clipview_RepeatMirrored", 3, [("set_dimension", dims)], "RepeatMirrored",
            view={"vdim": 3, "has_dims": False, "perm": [0, 1, 2],
                  "vops": [("set_clip", [1, 8, 2, 8])]})
    return out


def probe_cases() -> list[tuple[tuple, dict]]:
    """((name, IR text, kernel, grid, pipeline, inputs, interpreter outputs), info) per probe,
    for tensor_check.py."""
    import tensor_ir

    from coopdialect import api

    out = []
    for name, case in probes():
        text, _ = tensor_ir.case_ir(case)
        dt = tensor_ir.NP[case["etype"]]
        R, C = case["rows"], case["cols"]
        buf = np.arange(case["mem"]).astype(dt)
        mat = (-1 - np.arange(R * C)).reshape(R, C).astype(dt)
        got = [buf.copy(), mat.copy()]
        api.run_kernel(api.parse(text, name), "k", got, (1, 1, 1))
        info = {"kind": "load", "mode": case["mode"], "ldim": case["ldim"], "view": None,
                "layout_ops": [o for o, _ in case["lops"]], "shape": [R, C],
                "etype": case["etype"]}
        out.append(((name, text, "k", (1, 1, 1), None, [buf, mat], got), info))
    return out
