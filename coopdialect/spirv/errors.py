"""Errors of the SPIR-V binary writer and reader (one-line messages)."""


class SpirvEmitError(Exception):
    """The writer cannot encode the module as a valid SPIR-V binary; the message names the op."""


class SpirvReadError(Exception):
    """The binary is truncated, corrupt or uses something the reader does not support; the
    message is one line and names the word offset (in 32-bit words from the start)."""
