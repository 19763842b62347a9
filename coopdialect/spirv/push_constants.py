"""The push-constant block of a kernel's scalar arguments: its layout and its bytes.

convert-coop-to-spirv gives every kernel with scalar arguments one `Block`-decorated struct in
the PushConstant storage class, member k being the kernel's k-th scalar argument (argument order,
memrefs skipped); the Vulkan runtime fills it with `vkCmdPushConstants` from `pack`. Both use
`layout`, so the bytes the host pushes are the struct the shader reads.

Member types: i32 -> OpTypeInt 32, i64 -> OpTypeInt 64, index -> OpTypeInt 32 (index is 32-bit in
the SPIR-V lowering), f32 -> OpTypeFloat 32, f16 -> OpTypeFloat 16. Offsets follow the Vulkan
spec's "Offset and Stride Assignment" for push constants (the std430-like rules; a scalar's base
alignment is its size): each member at the next multiple of its size. The block's size is the end
of the last member; a `VkPushConstantRange` rounds it up to a multiple of 4.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float16Type, Float32Type, IndexType, IntegerType, i32
from xdsl.ir import Attribute

MIN_MAX_PUSH_CONSTANTS_SIZE = 128
"""Bytes of push constants every Vulkan device accepts (`maxPushConstantsSize` is at least 128,
Vulkan spec "Required Limits"); a larger block is refused when the kernel is lowered."""

# scalar argument type -> (struct.pack format, size in bytes)
_FORMATS = {"i32": ("<i", 4), "index": ("<i", 4), "i64": ("<q", 8), "f32": ("<f", 4),
            "f16": ("<e", 2)}
_FLOAT = {"f32": np.dtype("<f4"), "f16": np.dtype("<f2")}


def _name(t: Attribute) -> str:
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, IntegerType) and t.width.data in (32, 64):
        return f"i{t.width.data}"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float16Type):
        return "f16"
    raise ValueError(f"{t} is not a scalar kernel argument type (i32, i64, index, f32, f16)")


@dataclass(frozen=True)
class Member:
    """One member of the block: the source argument's type, the SPIR-V member type and its
    byte offset."""

    source: Attribute
    member_type: Attribute
    offset: int

    @property
    def size(self) -> int:
        return _FORMATS[_name(self.source)][1]


def member_type(t: Attribute) -> Attribute:
    """The SPIR-V member type of a scalar argument of type `t` (index -> i32)."""
    return i32 if isinstance(t, IndexType) else t


def layout(types: Sequence[Attribute]) -> list[Member]:
    """The members of the block of scalar arguments of `types` (in argument order), each at the
    next offset aligned to its size. ValueError for a type that is no scalar argument type."""
    out, end = [], 0
    for t in types:
        size = _FORMATS[_name(t)][1]
        offset = -(-end // size) * size
        out.append(Member(t, member_type(t), offset))
        end = offset + size
    return out


def block_size(members: Sequence[Member]) -> int:
    """Bytes of the block: the end of its last member (0 without members)."""
    return max((m.offset + m.size for m in members), default=0)


def pack(members: Sequence[Member], values: Sequence[int | float]) -> bytes:
    """The block's bytes for `values` (one per member, as `coop_kernel.scalar_value` returns
    them: signed ints, Python floats): little-endian, zero padding between members. An index
    must fit 32 bits signed here (ValueError otherwise), as it does in the SPIR-V lowering;
    floats round to nearest even, as numpy (and the interpreter) round them (a value beyond the
    type's range becomes an infinity)."""
    if len(values) != len(members):
        raise ValueError(f"{len(members)} push constants, {len(values)} values")
    out = bytearray(block_size(members))
    for m, v in zip(members, values):
        name = _name(m.source)
        fmt, _ = _FORMATS[name]
        if name == "index" and not -(1 << 31) <= int(v) < 1 << 31:
            raise ValueError(f"index value {v} does not fit the 32-bit index of the SPIR-V "
                             "lowering")
        if name == "i32" and int(v) >= 1 << 31:  # the unsigned reading of an i32
            v = int(v) - (1 << 32)
        if name == "i64" and int(v) >= 1 << 63:
            v = int(v) - (1 << 64)
        if name in ("f32", "f16"):
            with np.errstate(over="ignore"):
                data = np.asarray(float(v), np.float64).astype(_FLOAT[name])
            out[m.offset:m.offset + m.size] = data.tobytes()
            continue
        struct.pack_into(fmt, out, m.offset, v)
    return bytes(out)
