"""Byte comparison of a device's buffers with the expected ones (the GPU tests' verdict)."""

from __future__ import annotations

import numpy as np


def differing_bytes(got: list[np.ndarray], expected: dict[int, np.ndarray]) -> tuple[int, int]:
    """(bytes that differ, bytes compared) between buffers `got[i]` and `expected[i]`: bit
    patterns, so -0.0 and 0.0 or two NaN payloads differ."""
    bad = size = 0
    for i, want in expected.items():
        g = np.ascontiguousarray(got[i]).view(np.uint8)
        w = np.ascontiguousarray(want).view(np.uint8)
        if g.shape != w.shape:
            return max(g.size, w.size), max(g.size, w.size)
        bad += int(np.count_nonzero(g != w))
        size += g.size
    return bad, size
