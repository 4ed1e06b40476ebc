"""guards: what must hold for a compiled entry to be reused.

In: guard records from capture and shape guards from the ShapeEnv. Out: a z3-minimised GuardSet,
one generated check function per entry, and readable recompile reasons.

    L['x']: float32 cpu tensor of rank 2
    2 <= s0 <= 1024
"""

from guards.model import (
    DictKeysGuard,
    Guard,
    GuardError,
    GuardSet,
    IdentityGuard,
    LengthGuard,
    TensorMatchGuard,
    TypeGuard,
    ValueGuard,
)

__all__ = [
    "DictKeysGuard", "Guard", "GuardError", "GuardSet", "IdentityGuard", "LengthGuard",
    "TensorMatchGuard", "TypeGuard", "ValueGuard",
]
