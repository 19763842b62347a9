"""The SPIR-V Memory Operands (SPIR-V spec 3.26, "Memory Operands") of a coop memory op, as the
`spirv` dialect spells them: what convert-coop-to-spirv and its coopmat2 rules
(`convert_coop_nv2_to_spirv.py`) both write on loads and stores."""

from __future__ import annotations

from xdsl.ir import Operation

from coopdialect.dialects import coop
from coopdialect.errors import CoopError


def memory_operand(op: Operation, access: coop.MemoryAccessAttr | None) -> str | None:
    """The grammar spelling of a Memory Operand (`Aligned(16)|Nontemporal`), or None."""
    if access is None or not access.flag_set:
        return None
    parts = []
    for flag in coop.MemoryAccess:
        if flag not in access.flag_set:
            continue
        if flag in (coop.MemoryAccess.MakePointerAvailable, coop.MemoryAccess.MakePointerVisible):
            raise CoopError(op, f"the SPIR-V writer does not encode the Scope <id> of {flag.value} yet")
        parts.append(f"Aligned({access.alignment.data})" if flag == coop.MemoryAccess.Aligned
                     else flag.value)
    return "|".join(parts)
