"""The `-t ptx` target for coop-opt (re-exported from the printer)."""

from coopdialect.ptx.printer import PtxTarget

__all__ = ["PtxTarget"]
