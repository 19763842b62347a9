"""Kernel parameters from the PTX launch description (coopdialect.ptx.launch), without a driver.

`parse_launch` checks a description and returns one `KernelLaunch` per kernel. `encode_args`
turns a `tensor_map` parameter and its buffer's device address into the exact arguments of
`cuTensorMapEncodeTiled` (CUDA Driver API 6.29 "Tensor Map Object Management"), after checking
the requirements that section documents (so that a bad description is one line here, not
CUDA_ERROR_INVALID_VALUE there); `global_dims` / `global_strides` entries that are host
expressions (`coopdialect.host_expr`) are evaluated with the launch's scalar arguments first.
`param_bytes` lays the parameters out as the `.entry` declares them: `.param .u64` (8 bytes, a
device address), `.param .align 64 .b8 [128]` (a CUtensorMap) or a scalar's `.param` (`pack_scalar`:
i32 4 bytes, i64/index 8, f32 4, f16 2; little-endian). `KernelLaunch.declared_grid` evaluates a
kernel's `grid_dims`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from coopdialect.host_expr import check_host_expr, eval_host_expr
from coopdialect.ptx.launch import FORMAT, VERSION
from coopdialect.runtime.device import DeviceError

# CU_TENSOR_MAP_DATA_TYPE_* suffix -> element size in bytes (cuda.h, CUtensorMapDataType)
DATA_TYPE_BYTES = {
    "UINT8": 1, "UINT16": 2, "UINT32": 4, "INT32": 4, "UINT64": 8, "INT64": 8, "FLOAT16": 2,
    "FLOAT32": 4, "FLOAT64": 8, "BFLOAT16": 2, "FLOAT32_FTZ": 4, "TFLOAT32": 4,
    "TFLOAT32_FTZ": 4,
}
# the other enums' suffixes (CUtensorMapInterleave, ...Swizzle, ...L2promotion, ...FloatOOBfill)
INTERLEAVE = ("NONE", "16B", "32B")
SWIZZLE = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}  # suffix -> swizzle span in bytes
L2_PROMOTION = ("NONE", "L2_64B", "L2_128B", "L2_256B")
OOB_FILL = ("NONE", "NAN_REQUEST_ZERO_FMA")
TENSOR_MAP_BYTES = 128  # sizeof(CUtensorMap), CU_TENSOR_MAP_NUM_QWORDS = 16
TENSOR_MAP_ALIGN = 64
GRIDS = ("dispatch", "persistent")  # launch description "grid" rules (coopdialect.ptx.launch)
# scalar param dtype -> (bytes, signed range or None for floats)
SCALAR_DTYPES = {"i32": (4, 32), "i64": (8, 64), "index": (8, 64), "f32": (4, None),
                 "f16": (2, None)}
_INTEGER_DTYPES = ("i32", "i64", "index")


class LaunchError(DeviceError):
    """A launch description that cannot be launched (one line, says which field)."""


@dataclass(frozen=True)
class KernelLaunch:
    name: str
    block: tuple[int, int, int]
    dynamic_shared_bytes: int
    args: list[dict[str, Any]]
    params: list[dict[str, Any]]
    grid: str = "dispatch"
    grid_dims: list[Any] | None = None

    def scalars(self, args: Sequence[Any]) -> dict[int, Any]:
        """{argument index: value} of the scalar arguments among `args` (one per argument)."""
        if len(args) != len(self.args):
            raise LaunchError(f"kernel '{self.name}' takes {len(self.args)} arguments, got "
                              f"{len(args)}")
        return {i: args[i] for i, a in enumerate(self.args) if a.get("scalar")}

    def declared_grid(self, args: Sequence[Any]) -> tuple[int, int, int]:
        """The workgroups the kernel declares (`grid_dims`) for `args` (one per argument; the
        scalars' values are read). Raises LaunchError when it declares none or a count is < 1."""
        if self.grid_dims is None:
            raise LaunchError(f"kernel '{self.name}' declares no grid: give the grid to dispatch")
        try:
            grid = tuple(eval_host_expr(e, self.scalars(args)) for e in self.grid_dims)
        except ValueError as e:
            raise LaunchError(f"kernel '{self.name}': grid_dims: {e}") from None
        if min(grid) < 1:
            raise LaunchError(f"kernel '{self.name}': the declared grid is {grid}; every count "
                              "must be positive")
        return grid  # type: ignore[return-value]

    def launch_grid(self, dispatch: tuple[int, int, int], multiprocessors: int) -> tuple[int, int, int]:
        """The CTAs to launch for a dispatch of `dispatch` workgroups: the dispatch itself, or
        for a persistent kernel min(x * y, multiprocessors) CTAs along x (each loops over the
        tiles; one CTA fits an SM). Raises LaunchError for a persistent dispatch with z > 1."""
        x, y, z = (int(d) for d in dispatch)
        if self.grid == "dispatch":
            return x, y, z
        if z != 1:
            raise LaunchError(f"kernel '{self.name}' is persistent over a 2-D grid of tiles; "
                              f"got a dispatch of {x}x{y}x{z}")
        return max(1, min(x * y, multiprocessors)), 1, 1


def parse_launch(desc: dict) -> dict[str, KernelLaunch]:
    """The kernels of a launch description, by name. Raises LaunchError for a wrong format or
    version, a block that is not three positive counts, a grid rule other than those of GRIDS, a
    param of unknown kind, naming a missing argument or (grid params) a dimension other than
    x, y, z, or a tensor map with bad fields."""
    if desc.get("format") != FORMAT or desc.get("version") != VERSION:
        raise LaunchError(f"not a {FORMAT} version {VERSION} description "
                          f"(format {desc.get('format')!r}, version {desc.get('version')!r})")
    out = {}
    for k in desc.get("kernels", []):
        name = k.get("name", "?")
        block = k.get("block")
        if not (isinstance(block, list) and len(block) == 3
                and all(isinstance(b, int) and b > 0 for b in block)):
            raise LaunchError(f"kernel '{name}': block must be three positive counts, got {block}")
        if k.get("grid") not in GRIDS:
            raise LaunchError(f"kernel '{name}': grid {k.get('grid')!r} is not supported "
                              f"(one of {', '.join(GRIDS)})")
        shared = k.get("dynamic_shared_bytes", 0)
        if not isinstance(shared, int) or shared < 0:
            raise LaunchError(f"kernel '{name}': dynamic_shared_bytes must be >= 0, got {shared}")
        args = k.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, dict) for a in args):
            raise LaunchError(f"kernel '{name}': args must be a list of objects")
        for i, a in enumerate(args):
            if a.get("scalar") and a.get("dtype") not in SCALAR_DTYPES:
                raise LaunchError(f"kernel '{name}': scalar argument {i} has dtype "
                                  f"{a.get('dtype')!r} (one of {', '.join(SCALAR_DTYPES)})")
        int_args = {i for i, a in enumerate(args) if a.get("scalar")
                    and a.get("dtype") in _INTEGER_DTYPES}
        grid_dims = k.get("grid_dims")
        if grid_dims is not None:
            if k["grid"] != "dispatch" or not isinstance(grid_dims, list) or len(grid_dims) != 3:
                raise LaunchError(f"kernel '{name}': grid_dims must be three host expressions "
                                  "of a dispatch grid")
            for d, e in zip("xyz", grid_dims):
                if (why := check_host_expr(e, int_args.__contains__)) is not None:
                    raise LaunchError(f"kernel '{name}': grid_dims {d}: {why}")
        for i, p in enumerate(k.get("params", [])):
            if p.get("kind") == "grid":
                if p.get("dim") not in ("x", "y", "z"):
                    raise LaunchError(f"kernel '{name}': grid param {i} has dim {p.get('dim')!r} "
                                      "(x, y or z)")
                continue
            if not isinstance(p.get("arg"), int) or not 0 <= p["arg"] < len(args):
                raise LaunchError(f"kernel '{name}': param {i} names argument {p.get('arg')} "
                                  f"of {len(args)}")
            scalar = bool(args[p["arg"]].get("scalar"))
            if p.get("kind") == "scalar":
                if not scalar or p.get("dtype") != args[p["arg"]].get("dtype"):
                    raise LaunchError(f"kernel '{name}': scalar param {i} must name a scalar "
                                      f"argument of its dtype {p.get('dtype')!r}")
                continue
            if p.get("kind") in ("pointer", "tensor_map") and scalar:
                raise LaunchError(f"kernel '{name}': {p['kind']} param {i} names scalar "
                                  f"argument {p['arg']}")
            if p.get("kind") == "tensor_map":
                _check_tensor_map(name, i, p, int_args)
            elif p.get("kind") != "pointer":
                raise LaunchError(f"kernel '{name}': param {i} has unknown kind {p.get('kind')!r}")
        out[name] = KernelLaunch(name, tuple(block), shared, args, list(k.get("params", [])),
                                 k["grid"], grid_dims)
    if not out:
        raise LaunchError("the launch description has no kernels")
    return out


def _check_tensor_map(kernel: str, i: int, p: dict, int_args: set[int] | None = None) -> None:
    """The requirements of cuTensorMapEncodeTiled's documentation that the fields decide. With
    `int_args` (the integer scalar arguments), `global_dims` / `global_strides` entries may be
    host expressions over them; their values are checked once known (`encode_args`)."""
    def bad(msg: str) -> LaunchError:
        return LaunchError(f"kernel '{kernel}': tensor_map param {i}: {msg}")

    for key, allowed in (("data_type", DATA_TYPE_BYTES), ("interleave", INTERLEAVE),
                         ("swizzle", SWIZZLE), ("l2_promotion", L2_PROMOTION),
                         ("oob_fill", OOB_FILL)):
        if p.get(key) not in allowed:
            raise bad(f"{key} {p.get(key)!r} is not one of {', '.join(allowed)}")
    dims, strides = p.get("global_dims", []), p.get("global_strides", [])
    box, estr = p.get("box_dims", []), p.get("element_strides", [])
    for key, values in (("global_dims", dims), ("global_strides", strides)):
        for e in values:
            if isinstance(e, int) and not isinstance(e, bool):
                continue
            why = (check_host_expr(e, int_args.__contains__) if int_args is not None
                   else f"{e!r} is not an integer")
            if why is not None:
                raise bad(f"{key}: {why}")
    rank = len(dims)
    if not 1 <= rank <= 5:
        raise bad(f"rank {rank} is not 1..5")
    if p["interleave"] != "NONE" and rank < 3:
        raise bad("an interleaved layout needs rank >= 3")
    if len(strides) != rank - 1 or len(box) != rank or len(estr) != rank:
        raise bad(f"rank {rank} needs {rank - 1} global_strides, {rank} box_dims and "
                  f"{rank} element_strides")
    known = lambda xs: [x for x in xs if isinstance(x, int)]  # noqa: E731
    if any(not 0 < d <= 2 ** 32 for d in known(dims)):
        raise bad(f"global_dims {dims} must be in 1..2^32")
    if any(s % 16 or not 0 <= s < 2 ** 40 for s in known(strides)):
        raise bad(f"global_strides {strides} must be multiples of 16 below 2^40 (bytes)")
    if any(not isinstance(b, int) or not 0 < b <= 256 for b in box):
        raise bad(f"box_dims {box} must be in 1..256")
    if any(not isinstance(e, int) or not 0 < e <= 8 for e in estr):
        raise bad(f"element_strides {estr} must be in 1..8")
    inner_bytes = box[0] * DATA_TYPE_BYTES[p["data_type"]]
    if p["interleave"] == "NONE":
        if inner_bytes % 16:
            raise bad(f"box_dims[0] * element size = {inner_bytes} bytes is not a multiple of 16")
        span = SWIZZLE[p["swizzle"]]
        if span and inner_bytes > span:
            raise bad(f"the inner box ({inner_bytes} bytes) exceeds the {p['swizzle']} swizzle span")


def resolve_tensor_map(p: dict, scalars: dict[int, Any] | Sequence[Any] | None = None,
                       kernel: str = "?", i: int = 0) -> dict:
    """Tensor-map param `p` with its `global_dims` / `global_strides` host expressions evaluated
    with `scalars` ({argument index: value}, or all the arguments in order) and every field
    checked (`_check_tensor_map`). Raises LaunchError for an expression that cannot be evaluated
    or a value the driver API would refuse."""
    def value(e: Any) -> int:
        if isinstance(e, int):
            return e
        try:
            return eval_host_expr(e, scalars if scalars is not None else {})
        except ValueError as err:
            raise LaunchError(f"kernel '{kernel}': tensor_map param {i}: {err}") from None

    q = dict(p, global_dims=[value(d) for d in p["global_dims"]],
             global_strides=[value(s) for s in p["global_strides"]])
    _check_tensor_map(kernel, i, q)
    return q


@dataclass(frozen=True)
class Repack:
    """A copy the host makes before a launch so that a tensor map is legal: the 2-D operand at
    `src` (`rows` rows of `width` bytes, `src_pitch` bytes apart — not a multiple of 16, which
    cuTensorMapEncodeTiled requires) into a scratch buffer whose rows are `pitch` bytes apart (the
    next multiple of 16). The kernel reads the copy through the tensor map; the operand is only
    read (a tensor-map argument that is also a pointer param is not repacked)."""

    param: int
    src: int
    rows: int
    width: int
    src_pitch: int
    pitch: int

    @property
    def bytes(self) -> int:
        return self.rows * self.pitch


def repack_plan(launch: "KernelLaunch", args: Sequence[Any]) -> list[Repack]:
    """The repacks a launch of `launch` with `args` needs (one per 2-D tensor map whose row
    stride is not a multiple of 16 bytes); LaunchError for one that cannot be repacked (a
    tensor map of more dimensions, or an argument the kernel may also write through a
    pointer)."""
    pointers = {p["arg"] for p in launch.params if p["kind"] == "pointer"}
    out = []
    for i, p in enumerate(launch.params):
        if p["kind"] != "tensor_map":
            continue
        def value(e: Any) -> int:
            try:
                return e if isinstance(e, int) else eval_host_expr(e, launch.scalars(args))
            except ValueError as err:
                raise LaunchError(f"kernel '{launch.name}': tensor_map param {i}: {err}") from None
        strides = [value(x) for x in p["global_strides"]]
        if all(x % 16 == 0 for x in strides):
            continue
        if len(p["global_dims"]) != 2 or p["arg"] in pointers:
            raise LaunchError(f"kernel '{launch.name}': tensor_map param {i}: global_strides "
                              f"{strides} must be multiples of 16 (bytes)")
        es = DATA_TYPE_BYTES[p["data_type"]]
        width = value(p["global_dims"][0]) * es
        out.append(Repack(i, int(args[p["arg"]]), value(p["global_dims"][1]), width, strides[0],
                          -(-strides[0] // 16) * 16))
    return out


def repacked(p: dict, r: Repack) -> dict:
    """Tensor-map param `p` over the repacked copy: row stride `r.pitch`."""
    return dict(p, global_strides=[r.pitch])


def encode_args(p: dict, address: int,
                scalars: dict[int, Any] | Sequence[Any] | None = None) -> dict[str, Any]:
    """The arguments of cuTensorMapEncodeTiled for tensor-map param `p` (a checked description
    entry) over the buffer at device `address`, by the driver API's parameter names; enum values
    as the CU_TENSOR_MAP_* suffixes (the caller maps them onto cuda.bindings' enums). Host
    expressions among the global dims and strides take their values from `scalars`
    (`resolve_tensor_map`). Raises LaunchError when `address` is not 16-byte aligned (32 with
    interleave 32B), or for a resolved value the driver API would refuse."""
    p = resolve_tensor_map(p, scalars)
    align = 32 if p["interleave"] == "32B" else 16
    if address % align:
        raise LaunchError(f"tensor map global address {address:#x} is not {align}-byte aligned")
    return {
        "tensorDataType": p["data_type"],
        "tensorRank": len(p["global_dims"]),
        "globalAddress": address,
        "globalDim": [int(d) for d in p["global_dims"]],
        "globalStrides": [int(s) for s in p["global_strides"]],
        "boxDim": [int(b) for b in p["box_dims"]],
        "elementStrides": [int(e) for e in p["element_strides"]],
        "interleave": p["interleave"],
        "swizzle": p["swizzle"],
        "l2Promotion": p["l2_promotion"],
        "oobFill": p["oob_fill"],
    }


def pack_scalar(dtype: str, value: Any) -> bytes:
    """The bytes of a scalar param: i32 4 bytes, i64 and index 8 (signed two's complement; an
    i32/i64 also takes its unsigned range), f32 4 and f16 2 (IEEE, rounded to nearest even as
    numpy rounds; beyond the range an infinity), little-endian. Raises LaunchError for a value
    of the wrong kind or out of range."""
    size, bits = SCALAR_DTYPES[dtype]
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise LaunchError(f"a {dtype} param takes a number, got {type(value).__name__}")
    if bits is None:
        with np.errstate(over="ignore"):
            return np.asarray(float(value), np.float64).astype(f"<f{size}").tobytes()
    if not isinstance(value, int | np.integer):
        raise LaunchError(f"a {dtype} param takes an integer, got {value!r}")
    v = int(value)
    top = 1 << (bits - 1) if dtype == "index" else 1 << bits
    if not -(1 << (bits - 1)) <= v < top:
        raise LaunchError(f"{v} does not fit {dtype}")
    return (v % (1 << bits)).to_bytes(size, "little")


def param_bytes(launch: KernelLaunch, args: Sequence[Any], tensor_maps: dict[int, bytes],
                dispatch: tuple[int, int, int] = (1, 1, 1)) -> list[bytes]:
    """The value of every `.entry` parameter in order. `args` has one entry per kernel argument:
    the device address of a memref argument, the value of a scalar one. A pointer param is its
    argument's address as a little-endian u64; a scalar param its argument's value
    (`pack_scalar`); a tensor_map param is the 128 bytes of its encoded CUtensorMap
    (`tensor_maps[param index]`); a grid param (persistent kernels) is that dimension of the
    `dispatch` grid, in workgroups, as a u64."""
    out = []
    for i, p in enumerate(launch.params):
        if p["kind"] == "pointer":
            out.append(struct.pack("<Q", int(args[p["arg"]])))
        elif p["kind"] == "scalar":
            out.append(pack_scalar(p["dtype"], args[p["arg"]]))
        elif p["kind"] == "grid":
            out.append(struct.pack("<Q", int(dispatch["xyz".index(p["dim"])])))
        else:
            tm = tensor_maps[i]
            if len(tm) != TENSOR_MAP_BYTES:
                raise LaunchError(f"param {i}: a CUtensorMap is {TENSOR_MAP_BYTES} bytes, "
                                  f"got {len(tm)}")
            out.append(bytes(tm))
    return out
