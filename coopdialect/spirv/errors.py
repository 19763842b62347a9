"""Errors of the SPIR-V binary writer and reader (one-line messages)."""


class SpirvEmitError(Exception):
    """The writer cannot encode the module as a valid SPIR-V binary; the message names the op."""


class SpirvReadError(Exception):
    """The binary is truncated, corrupt, invalid or uses something the reader does not support.

    `word` is the offset (in 32-bit words from the start of the binary) of the instruction at
    fault, `message` one line; `str(e)` is "word N: message"."""

    def __init__(self, message: str, word: int = 0):
        self.message = message
        self.word = word
        super().__init__(f"word {word}: {message}")
