"""PTX backend: printer (`emit_ptx`, `PtxTarget`) and the lowering used by convert-coop-to-ptx."""

from coopdialect.ptx.printer import PtxTarget, emit_ptx

__all__ = ["PtxTarget", "emit_ptx"]
