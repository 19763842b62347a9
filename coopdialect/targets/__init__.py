"""Target descriptions: what a device's cooperative-matrix hardware natively does, as data.

A target is a JSON file (schema below, checked by `load_target`); the ones shipped with the
package are `coopdialect/targets/<name>.json` and are selected by name (`get_target("h200-vulkan")`),
any other file by its path (`get_target("./my-gpu.json")`), e.g. written by hand from the
`vulkaninfo` output of another GPU.

Schema (all keys required unless marked optional; type names are VkComponentTypeKHR's short
spellings `f16 bf16 f32 f64 s8 u8 s16 u16 s32 u32 s64 u64`; sizes in elements):

    name            str
    description     str
    source          str   where the numbers come from (measured / document / assumption)
    gemm_configs    list  (optional) GEMM configurations of coopdialect.kernels.gemm timed on the
                          device: {bm, bn, bk, stages, persistent, split_k, name}
    gemm_tuned      list  (optional) the fastest of them per shape, {m, n, k, config (a name),
                          ms: {config: time}}, written by `coop-tune`; pick_config reads it
    api             "vulkan" | "ptx"
    subgroup_size   int
    layouts         [Cooperative Matrix Layout name, ...]  (coop.Layout spellings)
    cooperative_matrix  [{m, n, k, a, b, c, result, saturating: bool, scope: Subgroup|Workgroup}]
                    VkCooperativeMatrixPropertiesKHR rows (MSize, NSize, KSize, ...)
    flexible_dimensions [{granularity: [M, N, K], a, b, c, result, saturating, scope,
                          workgroup_invocations: int | null, max: [M, N, K] (optional)}]
                    VkCooperativeMatrixFlexibleDimensionsPropertiesNV rows (may be empty): any
                    M×N×K that are multiples of the granularity, each at most the row's `max`
                    (default: flexible_max_dimension). For a PTX target, the whole matrices
                    convert-coop-to-ptx lowers (mma.sync tiles at Subgroup scope up to its
                    per-invocation fragment limit, 64 rows per warpgroup at Workgroup scope)
    flexible_max_dimension  int (optional; required when flexible_dimensions is not empty)
    tensor_addressing   bool  (SPV_NV_tensor_addressing loads with clamping available)
    bfloat16        bool (optional, default false; api "vulkan") the device has VK_KHR_shader_bfloat16:
                    SPIR-V SPV_KHR_bfloat16 with BFloat16TypeKHR and BFloat16CooperativeMatrixKHR.
                    convert-coop-to-spirv lowers bf16 only for such a target; a Vulkan target
                    with a bf16 cooperative_matrix or flexible_dimensions row must say true
    ptx             (optional, api "ptx") {mma_sync: [{m, n, k, a, b, c, result}],
                     wgmma: [{m, n: [N, ...], k, a, b, c, result}], wgmma_sparse: [same]}

Errors: `TargetError` with one line naming the file, the JSON path of the bad entry and what was
expected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

COMPONENT_TYPES = ("f16", "bf16", "f32", "f64", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64")
SCOPES = ("Subgroup", "Workgroup")
LAYOUTS = ("RowMajor", "ColumnMajor", "RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM")


class TargetError(ValueError):
    """A target description that cannot be found or does not match the schema (one line).

    `str(e)` is `file: $.key: what was expected`; `e.file` is the file (None when no file was
    found) and `e.detail` the rest, for drivers that print `file: error: detail`."""

    def __init__(self, message: str, file: str | None = None, detail: str | None = None):
        super().__init__(message)
        self.file = file
        self.detail = detail if detail is not None else message


MAX_SIZE = 1 << 16
"""Largest size a description may give (matrix dimensions, subgroup size, flexible maximum):
real devices stay far below it, and it keeps a typo from turning into a huge unrolling."""


@dataclass(frozen=True)
class MatrixShape:
    """One native multiply-add: A is m×k, B k×n, C and Result m×n (elements)."""

    m: int
    n: int
    k: int
    a: str
    b: str
    c: str
    result: str
    saturating: bool
    scope: str

    @property
    def types(self) -> tuple[str, str, str, str]:
        return (self.a, self.b, self.c, self.result)


@dataclass(frozen=True)
class FlexibleDimensions:
    """Any M×N×K that are multiples of `granularity` (up to the target's max dimension)."""

    granularity: tuple[int, int, int]
    a: str
    b: str
    c: str
    result: str
    saturating: bool
    scope: str
    workgroup_invocations: int | None
    max_dimensions: tuple[int, int, int] | None = None

    @property
    def types(self) -> tuple[str, str, str, str]:
        return (self.a, self.b, self.c, self.result)

    def allows(self, mnk: tuple[int, int, int], max_dimension: int) -> bool:
        """Whether M×N×K are multiples of the granularity and within the row's maxima
        (`max_dimension`, the target's flexible_max_dimension, where the row gives none)."""
        top = self.max_dimensions or (max_dimension,) * 3
        return all(d % g == 0 and d <= t for d, g, t in zip(mnk, self.granularity, top))


@dataclass(frozen=True)
class Target:
    """A loaded, checked target description (see the module docstring for the fields)."""

    name: str
    description: str
    source: str
    api: str
    subgroup_size: int
    layouts: tuple[str, ...]
    cooperative_matrix: tuple[MatrixShape, ...]
    flexible_dimensions: tuple[FlexibleDimensions, ...]
    flexible_max_dimension: int
    tensor_addressing: bool
    ptx: dict[str, Any] | None
    gemm_configs: tuple[dict, ...] = ()
    gemm_tuned: tuple[dict, ...] = ()
    bfloat16: bool = False

    def native_shapes(self) -> tuple[MatrixShape, ...]:
        """Every fixed native multiply-add shape: the cooperative_matrix rows, plus for PTX
        targets the dense wgmma shapes as Workgroup-scope rows (one per N)."""
        rows = list(self.cooperative_matrix)
        for w in (self.ptx or {}).get("wgmma", []):
            for n in w["n"]:
                rows.append(MatrixShape(w["m"], n, w["k"], w["a"], w["b"], w["c"], w["result"],
                                        False, "Workgroup"))
        return tuple(rows)


def _fail(where: str, path: str, msg: str) -> TargetError:
    return TargetError(f"{where}: {path}: {msg}", where, f"{path}: {msg}")


def _expect(where: str, obj: dict, key: str, kinds: type | tuple[type, ...], path: str,
            optional: bool = False) -> Any:
    if key not in obj:
        if optional:
            return None
        raise _fail(where, f"{path}.{key}", "missing")
    v = obj[key]
    if isinstance(v, bool) and kinds is int:
        raise _fail(where, f"{path}.{key}", f"expected an integer, got {v!r}")
    if not isinstance(v, kinds):
        names = kinds.__name__ if isinstance(kinds, type) else "/".join(k.__name__ for k in kinds)
        raise _fail(where, f"{path}.{key}", f"expected {names}, got {type(v).__name__} {v!r}")
    return v


def _pos_int(where: str, obj: dict, key: str, path: str) -> int:
    v = _expect(where, obj, key, int, path)
    if not 0 < v <= MAX_SIZE:
        raise _fail(where, f"{path}.{key}", f"expected an integer from 1 to {MAX_SIZE}, got {v}")
    return v


def _types(where: str, obj: dict, path: str) -> tuple[str, str, str, str]:
    out = []
    for key in ("a", "b", "c", "result"):
        v = _expect(where, obj, key, str, path)
        if v not in COMPONENT_TYPES:
            raise _fail(where, f"{path}.{key}", f"unknown component type {v!r} "
                                                f"(one of {', '.join(COMPONENT_TYPES)})")
        out.append(v)
    return tuple(out)  # type: ignore[return-value]


def _scope(where: str, obj: dict, path: str) -> str:
    v = _expect(where, obj, "scope", str, path)
    if v not in SCOPES:
        raise _fail(where, f"{path}.scope", f"expected Subgroup or Workgroup, got {v!r}")
    return v


_KEYS = {"name", "description", "source", "api", "subgroup_size", "layouts", "cooperative_matrix",
         "flexible_dimensions", "flexible_max_dimension", "tensor_addressing", "ptx",
         "gemm_configs", "gemm_tuned", "bfloat16"}
_CONFIG_KEYS = {"bm": int, "bn": int, "bk": int, "stages": int, "persistent": bool,
                "split_k": int, "name": str}


def parse_target(data: Any, where: str = "<target>") -> Target:
    """Check `data` (decoded JSON) against the schema and build a Target; TargetError if not."""
    if not isinstance(data, dict):
        raise _fail(where, "$", f"expected an object, got {type(data).__name__}")
    unknown = set(data) - _KEYS
    if unknown:
        raise _fail(where, "$", f"unknown key(s) {', '.join(sorted(unknown))}")
    name = _expect(where, data, "name", str, "$")
    description = _expect(where, data, "description", str, "$")
    source = _expect(where, data, "source", str, "$")
    api = _expect(where, data, "api", str, "$")
    if api not in ("vulkan", "ptx"):
        raise _fail(where, "$.api", f"expected vulkan or ptx, got {api!r}")
    subgroup = _pos_int(where, data, "subgroup_size", "$")
    if subgroup & (subgroup - 1) or subgroup > 128:
        raise _fail(where, "$.subgroup_size", f"expected a power of two from 1 to 128, got {subgroup}")
    layouts = _expect(where, data, "layouts", list, "$")
    for i, lay in enumerate(layouts):
        if not isinstance(lay, str) or lay not in LAYOUTS:
            raise _fail(where, f"$.layouts[{i}]", f"unknown layout {lay!r} (one of {', '.join(LAYOUTS)})")
    rows = []
    for i, r in enumerate(_expect(where, data, "cooperative_matrix", list, "$")):
        p = f"$.cooperative_matrix[{i}]"
        if not isinstance(r, dict):
            raise _fail(where, p, "expected an object")
        m, n, k = (_pos_int(where, r, key, p) for key in ("m", "n", "k"))
        rows.append(MatrixShape(m, n, k, *_types(where, r, p),
                                _expect(where, r, "saturating", bool, p), _scope(where, r, p)))
    flex = []
    for i, r in enumerate(_expect(where, data, "flexible_dimensions", list, "$")):
        p = f"$.flexible_dimensions[{i}]"
        if not isinstance(r, dict):
            raise _fail(where, p, "expected an object")
        g = _expect(where, r, "granularity", list, p)
        if len(g) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) and 0 < x <= MAX_SIZE
                                  for x in g):
            raise _fail(where, f"{p}.granularity", f"expected [M, N, K] positive integers, got {g!r}")
        scope = _scope(where, r, p)
        inv = _expect(where, r, "workgroup_invocations", (int, type(None)), p)
        if scope == "Workgroup" and not (isinstance(inv, int) and not isinstance(inv, bool) and 0 < inv <= 1024):
            raise _fail(where, f"{p}.workgroup_invocations", "a Workgroup-scope row needs a count from 1 to 1024")
        top = _expect(where, r, "max", list, p, optional=True)
        if top is not None and (len(top) != 3 or not all(
                isinstance(x, int) and not isinstance(x, bool) and 0 < x <= MAX_SIZE and x % y == 0
                for x, y in zip(top, g))):
            raise _fail(where, f"{p}.max", f"expected [M, N, K] positive multiples of the "
                                           f"granularity, got {top!r}")
        flex.append(FlexibleDimensions(tuple(g), *_types(where, r, p),
                                       _expect(where, r, "saturating", bool, p), scope, inv,
                                       tuple(top) if top is not None else None))
    max_dim = _expect(where, data, "flexible_max_dimension", int, "$", optional=True)
    if max_dim is not None and not 0 < max_dim <= MAX_SIZE:
        raise _fail(where, "$.flexible_max_dimension", f"expected an integer from 1 to {MAX_SIZE}, "
                                                       f"got {max_dim}")
    if flex and not max_dim:
        raise _fail(where, "$.flexible_max_dimension", "required when flexible_dimensions is not empty")
    tensor = _expect(where, data, "tensor_addressing", bool, "$")
    ptx = _expect(where, data, "ptx", dict, "$", optional=True)
    if ptx is not None:
        for table in ("mma_sync", "wgmma", "wgmma_sparse"):
            for i, r in enumerate(_expect(where, ptx, table, list, "$.ptx")):
                p = f"$.ptx.{table}[{i}]"
                if not isinstance(r, dict):
                    raise _fail(where, p, "expected an object")
                _types(where, r, p)
                _pos_int(where, r, "m", p)
                _pos_int(where, r, "k", p)
                n = r.get("n")
                ns = n if table != "mma_sync" else [n]
                if not isinstance(ns, list) or not ns or not all(
                        isinstance(x, int) and not isinstance(x, bool) and 0 < x <= MAX_SIZE for x in ns):
                    raise _fail(where, f"{p}.n", f"expected {'a list of ' if table != 'mma_sync' else 'a '}"
                                                 f"positive integer(s), got {n!r}")
    bf16 = _expect(where, data, "bfloat16", bool, "$", optional=True) or False
    if api == "vulkan" and not bf16 and any("bf16" in r.types for r in (*rows, *flex)):
        raise _fail(where, "$.bfloat16", "a Vulkan device with bf16 cooperative matrices has "
                                         "VK_KHR_shader_bfloat16: expected true")
    configs = _expect(where, data, "gemm_configs", list, "$", optional=True) or []
    for i, c in enumerate(configs):
        p = f"$.gemm_configs[{i}]"
        if not isinstance(c, dict) or set(c) != set(_CONFIG_KEYS):
            raise _fail(where, p, f"expected an object with keys {', '.join(_CONFIG_KEYS)}")
        for key, ty in _CONFIG_KEYS.items():
            _expect(where, c, key, ty, p)
    names = {c["name"] for c in configs}
    tuned = _expect(where, data, "gemm_tuned", list, "$", optional=True) or []
    for i, e in enumerate(tuned):
        p = f"$.gemm_tuned[{i}]"
        if not isinstance(e, dict):
            raise _fail(where, p, "expected an object")
        for key in ("m", "n", "k"):  # problem sizes, not matrix sizes: any positive count
            v = e.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise _fail(where, f"{p}.{key}", f"expected a positive integer, got {v!r}")
        if _expect(where, e, "config", str, p) not in names:
            raise _fail(where, f"{p}.config", f"{e['config']!r} is not one of gemm_configs")
    return Target(name, description, source, api, subgroup, tuple(layouts), tuple(rows), tuple(flex),
                  max_dim or 0, tensor, ptx, tuple(configs), tuple(tuned), bf16)


def shipped_targets() -> list[str]:
    """Names of the target descriptions shipped in the package."""
    return sorted(p.name[:-5] for p in resources.files(__name__).iterdir() if p.name.endswith(".json"))


def load_target(path: str | Path) -> Target:
    """Load and check the target description at `path` (a JSON file); TargetError if bad."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        detail = f"cannot read the target description: {e.strerror}"
        raise TargetError(f"{p}: {detail}", str(p), detail) from None
    except UnicodeDecodeError as e:
        detail = f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})"
        raise TargetError(f"{p}: {detail}", str(p), detail) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise TargetError(f"{p}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}",
                          f"{p}:{e.lineno}:{e.colno}", f"not valid JSON: {e.msg}") from None
    except RecursionError:
        detail = "$: nested too deeply (a target description is at most four levels deep)"
        raise TargetError(f"{p}: {detail}", str(p), detail) from None
    return parse_target(data, str(p))


def get_target(name_or_path: str) -> Target:
    """A shipped target by name (`h200-vulkan`, `arm-mali`, `sm90a-ptx`) or any JSON file by path.

    Raises TargetError (unknown name, unreadable file, schema violation), TypeError (not a str)."""
    if not isinstance(name_or_path, str):
        raise TypeError(f"a target is a name or a path (str), got {type(name_or_path).__name__}")
    if name_or_path in shipped_targets():
        res = resources.files(__name__).joinpath(f"{name_or_path}.json")
        return parse_target(json.loads(res.read_text()), f"{name_or_path}.json")
    if name_or_path.endswith(".json") or "/" in name_or_path:
        return load_target(name_or_path)
    raise TargetError(f"unknown target '{name_or_path}': the shipped ones are "
                      f"{', '.join(shipped_targets())}; or give the path of a .json file")
