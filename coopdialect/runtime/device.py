"""The one interface every runner implements, and the one error they raise.

A `Device` compiles a module for itself (`compile` -> a `Program`), holds buffers (`upload` /
`download`: numpy arrays in and out, C order, the memref's element type), launches a kernel of a
program on a grid of workgroups and times launches with device events (CUDA events, Vulkan
timestamp queries; the interpreter: wall clock). Devices are context managers (`close`).

A launch takes one entry per kernel argument, in order: the device buffer of a memref argument
(what `upload` returned), the value of a scalar argument (a Python int or float, as
`coop_kernel.scalar_value` gives it); the device passes scalars as its target says (CUDA
`.param`s, Vulkan push constants, interpreter values).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from coopdialect.errors import CoopError


class DeviceError(CoopError):
    """No driver, no GPU, a missing device feature, or a failing driver call: one line,
    `WHERE: error: message` (WHERE is the kernel's location when the caller knows it)."""

    def __init__(self, message: str, where: str = "<device>"):
        super().__init__(None, message, where=where)


@dataclass
class Program:
    """A module compiled for one device: `binary` is PTX text (cuda), SPIR-V bytes (vulkan) or the
    lowered module itself (interp); `kernels` maps each kernel name to what the device needs to
    launch it (cuda: its launch-description entry; vulkan: its arguments' types)."""

    device: str
    binary: object
    kernels: dict[str, object] = field(default_factory=dict)


class Device(ABC):
    """A place to run kernels (see the module docstring)."""

    name: str
    """`interp`, `cuda` or `vulkan`."""
    default_pipeline: str
    """The conversion appended when a pipeline leaves the module above the target dialect."""

    @abstractmethod
    def compile(self, module: ModuleOp, pipeline: str | None = None) -> Program:
        """Lower a clone of `module` with `pipeline` (coop-opt syntax; default: this device's
        conversion, also appended when `pipeline` leaves any func.func) and load it.
        Raises CoopError for IR the pipeline rejects, DeviceError for what the device refuses."""

    @abstractmethod
    def upload(self, array: np.ndarray) -> object:
        """A device buffer holding a copy of `array` (its C-order bytes)."""

    @abstractmethod
    def download(self, buffer: object, like: np.ndarray) -> np.ndarray:
        """The buffer's contents as a new array of `like`'s dtype and shape."""

    @abstractmethod
    def launch(self, program: Program, kernel: str, args: Sequence[object],
               grid: tuple[int, int, int]) -> None:
        """Run `kernel` over `grid` workgroups on `args` (one per kernel argument: a device
        buffer for a memref, a number for a scalar; see the module docstring) and wait."""

    @abstractmethod
    def time(self, program: Program, kernel: str, args: Sequence[object],
             grid: tuple[int, int, int], reps: int) -> list[float]:
        """Seconds of each of `reps` launches (after one warm-up), measured on the device."""

    def close(self) -> None:
        """Release the device (contexts, modules, buffers). Safe to call twice."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def lower(module: ModuleOp, pipeline: str | None, default: str) -> ModuleOp:
    """A clone of `module` after `pipeline`; `default` (the device's conversion) runs after it
    when func.func ops are left (a pipeline of only `legalize-coop-sizes{...}`, or none)."""
    from coopdialect.pipeline import apply_pipeline

    lowered = module.clone()
    if pipeline:
        apply_pipeline(lowered, pipeline)
    if default and any(isinstance(op, func.FuncOp) for op in lowered.ops):
        apply_pipeline(lowered, default)
    return lowered
