"""The `xdsl.interpreters` package without its `__init__`, until something asks for what it defines.

Importing any module of a package first runs the package's `__init__`, and xDSL's
`xdsl/interpreters/__init__.py` imports every interpreter xDSL ships (RISC-V, Snitch, linalg,
PDL, ...) for its `register_implementations`: half a second, half of `coop-run`'s start-up.
The interpreter uses five of those modules (builtin, func, arith, scf, memref) and two helpers
(shaped_array, utils.ptr), imported by their full names.

`install()` puts the package in `sys.modules` as the import system would, minus running its
`__init__`: its submodules import as usual. A name the package's `__init__` defines (xDSL's
`register_implementations`, or a submodule not yet imported) looked up on the package is found
as before: the first such lookup imports that submodule, or runs the `__init__` then. Nothing
happens if `xdsl.interpreters` was imported already.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

NAME = "xdsl.interpreters"


class _Package(types.ModuleType):
    """A package module whose `__init__` runs on the first lookup of a name it lacks."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        if importlib.util.find_spec(f"{self.__name__}.{name}") is not None:  # a submodule
            return importlib.import_module(f"{self.__name__}.{name}")
        spec = self.__dict__.pop("_pending_init", None)
        if spec is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        spec.loader.exec_module(self)
        return getattr(self, name)


def install() -> None:
    """Make `xdsl.interpreters` importable without its `__init__` (module docstring)."""
    if NAME in sys.modules:
        return
    import xdsl

    spec = importlib.util.find_spec(NAME)
    module = _Package(NAME)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = spec.origin
    module.__path__ = list(spec.submodule_search_locations)
    module.__package__ = NAME
    module._pending_init = spec
    sys.modules[NAME] = module
    xdsl.interpreters = module
