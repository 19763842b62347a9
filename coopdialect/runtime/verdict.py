"""Per-buffer verdicts: a device's buffers against the interpreter's, on the same inputs.

A buffer is `bit-exact` when every byte equals the interpreter's. Otherwise the verdict counts the
elements that differ and gives, for floats, the largest error in ulp of the interpreter's value
(|device - interpreter| / ulp(interpreter), where ulp(x) is the gap from |x| to the next
representable number of the buffer's type: the unit in which the Vulkan spec states precision)
and the largest relative difference; for integers, the largest absolute difference. A float
buffer passes within `tolerance_ulp` ulp (0: bit-exact only); an integer buffer only bit-exact.

Printed form (one line per buffer, `check:` summary last; docs/runtime.md):

    %C f32[128x128]: bit-exact
    %Y f32[64x16]: within 3 ulp: 17/1024 elements differ, max 1 ulp, max rel 5.96e-08
    %C si32[64x64]: MISMATCH: 3/4096 elements differ, max abs diff 5
    check: FAIL (1 of 3 buffers differ from the interpreter)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Verdict:
    name: str
    type: str
    """`f32[128x128]`: element type (MLIR spelling) and shape."""
    differing: int
    size: int
    max_ulp: float | None
    """floats: largest error in ulp of the interpreter's value; None for integers."""
    max_rel: float | None
    max_abs: float
    tolerance_ulp: float

    @property
    def exact(self) -> bool:
        return self.differing == 0

    @property
    def ok(self) -> bool:
        if self.exact:
            return True
        return self.max_ulp is not None and self.max_ulp <= self.tolerance_ulp

    def line(self) -> str:
        if self.exact:
            return f"%{self.name} {self.type}: bit-exact"
        head = f"within {self.tolerance_ulp:g} ulp" if self.ok else "MISMATCH"
        body = f"{self.differing}/{self.size} elements differ"
        if self.max_ulp is None:
            return f"%{self.name} {self.type}: {head}: {body}, max abs diff {self.max_abs:g}"
        return (f"%{self.name} {self.type}: {head}: {body}, max {self.max_ulp:.3g} ulp, "
                f"max rel {self.max_rel:.3g}")


def _ulp(want: np.ndarray) -> np.ndarray:
    """Gap from |want| to the next larger value of want's (IEEE-style) type, as float64."""
    width = want.dtype.itemsize
    utype = np.dtype(f"u{width}")
    mag = np.abs(want)
    bits = mag.view(utype)
    up = (bits + utype.type(1)).view(want.dtype)
    return up.astype(np.float64) - mag.astype(np.float64)


def compare(name: str, type_text: str, got: np.ndarray, want: np.ndarray,
            tolerance_ulp: float = 0) -> Verdict:
    """The verdict of one buffer (`got` from the device, `want` from the interpreter; same
    dtype and shape). Bit patterns are compared, so -0.0 vs 0.0 or two NaNs with different
    payloads count as differing."""
    width = want.dtype.itemsize
    ubits = np.dtype(f"u{width}")
    g, w = np.ascontiguousarray(got).reshape(-1), np.ascontiguousarray(want).reshape(-1)
    diff = g.view(ubits) != w.view(ubits)
    n = int(np.count_nonzero(diff))
    is_int = np.issubdtype(want.dtype, np.integer) or want.dtype == np.bool_
    if n == 0:
        return Verdict(name, type_text, 0, w.size, None if is_int else 0.0,
                       None if is_int else 0.0, 0.0, tolerance_ulp)
    gd, wd = g[diff], w[diff]
    err = np.abs(gd.astype(np.float64) - wd.astype(np.float64))
    max_abs = float(np.nanmax(err)) if np.isfinite(err).any() else float("inf")
    if is_int:
        return Verdict(name, type_text, n, w.size, None, None, max_abs, tolerance_ulp)
    with np.errstate(divide="ignore", invalid="ignore"):
        ulps = err / _ulp(wd)
        rel = err / np.abs(wd.astype(np.float64))
    ulps = np.where(np.isnan(ulps), np.inf, ulps)  # NaN on either side: no finite error
    rel = np.where(np.isnan(rel), np.inf, rel)
    return Verdict(name, type_text, n, w.size, float(ulps.max()), float(rel.max()), max_abs,
                   tolerance_ulp)


def summary(verdicts: list[Verdict]) -> str:
    """The `check:` line: PASS when every buffer passes."""
    bad = [v for v in verdicts if not v.ok]
    if bad:
        return f"check: FAIL ({len(bad)} of {len(verdicts)} buffers differ from the interpreter)"
    exact = sum(v.exact for v in verdicts)
    if exact == len(verdicts):
        return f"check: PASS (all {exact} buffers bit-exact)"
    return (f"check: PASS ({exact} bit-exact, {len(verdicts) - exact} within "
            f"{verdicts[0].tolerance_ulp:g} ulp)")
