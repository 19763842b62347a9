"""coop-opt targets for SPIR-V: `-t spirv` (binary) and `-t spirv-asm` (disassembly text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from coopdialect.errors import CoopError


def find_spirv_module(module: ModuleOp):
    """The single `spirv.module` inside `module`; CoopError if there is none or more than one."""
    from coopdialect.dialects.spirv import ModuleOp as SpirvModule

    found = [op for op in module.body.blocks[0].ops if isinstance(op, SpirvModule)]
    if len(found) != 1:
        raise CoopError(module, "the SPIR-V targets need exactly one spirv.module "
                        "(run -p convert-coop-to-spirv first)")
    return found[0]


def emit_spirv(module: ModuleOp) -> bytes:
    """Serialize the module's `spirv.module` (bytes; little-endian 32-bit words)."""
    from coopdialect.spirv.errors import SpirvEmitError
    from coopdialect.spirv.writer import serialize

    spv = find_spirv_module(module)
    try:
        return serialize(spv)
    except SpirvEmitError as e:
        raise CoopError(spv, str(e).splitlines()[0]) from None


@dataclass(frozen=True)
class SpirvTarget(Target):
    """`-t spirv`: the SPIR-V binary of the module's `spirv.module`."""

    name = "spirv"

    def emit_bytes(self, ctx: Context, module: ModuleOp) -> bytes:
        return emit_spirv(module)

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_spirv(module).hex())


@dataclass(frozen=True)
class SpirvAsmTarget(Target):
    """`-t spirv-asm`: the binary, disassembled into SPIR-V assembly (spirv-dis syntax)."""

    name = "spirv-asm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from coopdialect.spirv.disassembler import disassemble

        output.write(disassemble(emit_spirv(module)))
