"""numpy semantics of coopdialect kernels, on xDSL's interpreter framework.

Public API:

* `run_kernel(module, kernel, buffers, grid, *, subgroup_size=32)`: run a kernel in place.
* `interpret_file(path, kernel, buffers, grid, *, subgroup_size=32)`: parse, verify, run.
* `InterpreterError`: the one exception type (one-line `file:line:col: error: ...` message).
* `register_implementations(interpreter)`: every impl, for use with a bare xDSL `Interpreter`.

Modules: `coop` (the coop dialect), `gpu` (ids, barrier), `arith`, `scf`, `memref` (overrides
for per-type float rounding, lane vectors, workgroup memory), `coop_async` (the staged form:
workgroup buffers and asynchronous copies, on the per-workgroup core `async_copies`), `kernel`
(the runner's entry), `lockstep` (all subgroups of a grid interpreted together, in lock-step),
`races` (data-race detection), `common` (value model, dtypes, errors), `xdsl_package`
(xDSL's interpreter modules imported without the rest of their package).
"""

from coopdialect.interpreter import xdsl_package

xdsl_package.install()  # xDSL's interpreter modules without the RISC-V and other ones we never run

from coopdialect.interpreter.common import InterpreterError, numpy_dtype  # noqa: E402
from coopdialect.interpreter.kernel import interpret_file, register_implementations, run_kernel  # noqa: E402

__all__ = ["InterpreterError", "interpret_file", "numpy_dtype", "register_implementations",
           "run_kernel"]
