"""placeholder"""
import coopdialect.ptx.tensor_rules  # noqa: F401
import coopdialect.ptx.nv2_rules  # noqa: F401
