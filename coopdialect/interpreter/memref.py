"""`memref` impls on numpy views: any element type, bounds checks, lane-vector indices,
workgroup memory shared by the subgroups of a workgroup.

* `memref.load` / `memref.store` address the memref through a zero-copy numpy view (so f16,
  bf16 and f8 work, which xDSL's struct-based impls cannot do for all of them). An index that is a
  lane vector makes a gather (load gives a lane vector) or a scatter (store writes each active
  lane's value; inactive lanes of a partial subgroup write nothing). Out-of-bounds raises.
* `memref.alloc` / `memref.alloca` in workgroup memory (`#gpu.address_space<workgroup>` or
  `#coop.storage_class<Workgroup>`) allocate once per workgroup: every subgroup of the workgroup
  gets the same buffer, as on a GPU. Other allocations are private to the subgroup.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import RawPtr, TypedPtr
from xdsl.ir import Operation

from coopdialect.errors import location_of
from coopdialect.dialects import coop
from coopdialect.interpreter.common import fail, is_lanes, numpy_dtype, subgroup_context
from coopdialect.interpreter.coop import memref_view, to_dtype
from coopdialect.interpreter.races import access


def is_workgroup_memory(t: MemRefType) -> bool:
    space = t.memory_space
    if isinstance(space, coop.StorageClassAttr):
        return space.data == coop.StorageClass.Workgroup
    # xDSL 0.74 has no gpu address-space attribute; accept any spelling naming workgroup memory
    return "workgroup" in str(space).lower()


def new_memref(t: MemRefType) -> ShapedArray:
    """A zero-filled memref value of static type `t`."""
    shape = list(t.get_shape())
    dt = numpy_dtype(t.element_type)
    raw = RawPtr(bytearray(prod(shape) * dt.itemsize))
    return ShapedArray(TypedPtr(raw, xtype=t.element_type), shape)


def _flat_index(op: Operation, shape: list[int], indices: tuple[Any, ...]) -> tuple[Any, bool]:
    if len(indices) != len(shape):
        raise fail(op, f"{len(indices)} indices for a memref of rank {len(shape)}")
    vector = any(is_lanes(i) for i in indices)
    flat: Any = 0
    for i, (ix, dim) in enumerate(zip(indices, shape)):
        ix = np.asarray(ix, dtype=np.int64)
        bad = (ix < 0) | (ix >= dim)
        if np.any(bad):
            v = ix[np.nonzero(bad)][0] if ix.ndim else int(ix)
            raise fail(op, f"out-of-bounds index {v} in dimension {i} of size {dim} "
                           f"(memref shape {shape})")
        flat = flat * dim + ix
    return flat, vector


def _location(op: Operation) -> str:
    """The result's SSA name and the op's `file:line:col`, for race messages."""
    name = op.results[0].name_hint if op.results else None
    return f"{'%' + name + ' ' if name else ''}at {location_of(op)}"


def _scalar(v: Any, dt: np.dtype) -> Any:
    """A numpy element as an interpreter scalar: Python int/bool, or a float of its type."""
    if dt.kind in "iu":
        return int(v)
    if dt.kind == "b":
        return bool(v)
    return v


@register_impls
class CoopMemRefFunctions(MemRefFunctions):
    """xDSL's memref impls, with numpy load/store and shared workgroup allocations."""

    @impl(memref.LoadOp)
    def run_load(self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues):
        t = op.memref.type
        assert isinstance(t, MemRefType)
        view = memref_view(op, args[0], t)
        flat, vector = _flat_index(op, args[0].shape, tuple(args[1:]))
        if vector and np.shape(flat) == (subgroup_context(interpreter).subgroup_size,):
            access(interpreter, op, args[0], flat[subgroup_context(interpreter).active()],
                   write=False)  # inactive lanes of a partial subgroup read nothing
        else:
            access(interpreter, op, args[0], flat, write=False)
        v = view[flat]
        if vector:
            return (v.astype(np.int64) if view.dtype.kind in "iu" else v.copy(),)
        return (_scalar(v, view.dtype),)

    @impl(memref.StoreOp)
    def run_store(self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues):
        value, mem, *indices = args
        t = op.memref.type
        assert isinstance(t, MemRefType)
        view = memref_view(op, mem, t)
        flat, vector = _flat_index(op, mem.shape, tuple(indices))
        v = to_dtype(value, view.dtype)
        if vector or is_lanes(value):
            ctx = subgroup_context(interpreter)
            s = ctx.subgroup_size
            flat = np.broadcast_to(flat, (s,))
            v = np.broadcast_to(v, (s,))
            active = ctx.active()
            access(interpreter, op, mem, flat[active], write=True)
            view[flat[active]] = v[active]
        else:
            access(interpreter, op, mem, flat, write=True)
            view[flat] = v
        return ()

    def _alloc(self, interpreter: Interpreter, op: Operation, t: MemRefType):
        if not t.has_static_shape():
            raise fail(op, f"dynamic allocation sizes are not supported: {t}")
        if not is_workgroup_memory(t):
            return (new_memref(t),)
        wg = subgroup_context(interpreter).workgroup
        with wg.lock:  # the subgroups of a workgroup may run in threads
            if op not in wg.shared:
                wg.shared[op] = new_memref(t)
                if wg.races is not None:  # unregistered again when the workgroup ends
                    wg.races.register(wg.shared[op], f"the workgroup memory of {op.name} "
                                      f"{_location(op)}", True)
            return (wg.shared[op],)

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues):
        return self._alloc(interpreter, op, op.memref.type)

    @impl(memref.AllocaOp)
    def run_alloca(self, interpreter: Interpreter, op: memref.AllocaOp, args: PythonValues):
        return self._alloc(interpreter, op, op.memref.type)

