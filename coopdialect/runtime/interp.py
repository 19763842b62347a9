"""The interpreter as a device: the reference every other device is checked against.

`compile` runs the pipeline (if any) on a clone and keeps the module above the target dialects
(the interpreter runs any stage before convert-coop-to-spirv/-ptx); buffers are numpy copies;
`time` is wall-clock time per launch (there are no device events).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from coopdialect.runtime.device import Device, Program, lower


class InterpDevice(Device):
    name = "interp"
    default_pipeline = ""

    def __init__(self, subgroup_size: int = 32):
        self.subgroup_size = subgroup_size

    def compile(self, module: ModuleOp, pipeline: str | None = None) -> Program:
        return Program("interp", lower(module, pipeline, self.default_pipeline))

    def upload(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, order="C", copy=True)

    def download(self, buffer: np.ndarray, like: np.ndarray) -> np.ndarray:
        return buffer.copy()

    def launch(self, program: Program, kernel: str, args: Sequence[object],
               grid: tuple[int, int, int]) -> None:
        from coopdialect.interpreter.kernel import run_kernel

        run_kernel(program.binary, kernel, list(args), grid, subgroup_size=self.subgroup_size)

    def time(self, program: Program, kernel: str, args: Sequence[object],
             grid: tuple[int, int, int], reps: int) -> list[float]:
        self.launch(program, kernel, args, grid)
        out = []
        for _ in range(reps):
            t = time.perf_counter()
            self.launch(program, kernel, args, grid)
            out.append(time.perf_counter() - t)
        return out
