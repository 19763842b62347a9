"""Define one op of a family of same-shape ops: a subclass of the family's base with constants.

Used by the dialect modules whose ops differ only in their name and a few class constants
(coop.py's element-wise and conversion ops, ptx.py's instructions, spirv.py, spirv_nv2.py,
tensor_addr.py): the base class holds the fields, the constructor and the verifier.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.irdl import IRDLOperation, irdl_op_definition


def op_class(cls_name: str, base: type, op_name: str, doc: str, module: str,
             **consts) -> type[IRDLOperation]:
    """The IRDL op class `cls_name(base)` named `op_name` (e.g. "ptx.add") in module `module`.

    `consts` become class attributes annotated `ClassVar[...]`, the only class-level values
    besides fields and methods that IRDL accepts on an op definition.
    """
    body = {"name": op_name, "__doc__": doc, "__module__": module, **consts,
            "__annotations__": {k: ClassVar[type(v)] for k, v in consts.items()}}
    return irdl_op_definition(type(cls_name, (base,), body))
