"""symbolic: sizes as sympy expressions, decided through one ShapeEnv.

In: example sizes and where they come from. Out: symbols (`s0, s1, ...`), `TensorMeta`s with
symbolic shapes, and the guards and runtime asserts that decisions about them recorded.

    >>> env = ShapeEnv(); s0 = env.create_symbol(5, LocalSource("x"))
    >>> env.evaluate(s0 > 100), [str(g) for g in env.guards]
    (False, ['s0 <= 100'])

Every other package asks its size questions through one `Analyzer(env)` (symbolic/analyzer.py),
passed explicitly: equality, proofs, guards, non-negativity and int32 fits under loop extents,
and the one symbol order `symbol_key`.
"""

from symbolic.analyzer import Analyzer, sort_symbols, symbol_key
from symbolic.errors import (
    ShapeAssertionError,
    ShapeError,
    ShapeValueError,
    SymbolicError,
    SymcError,
)
from symbolic.functions import FloorDiv, sym_int
from symbolic.printer import python_str
from symbolic.ranges import UNBOUNDED, ValueRange, bounds
from symbolic.shape_env import (
    RuntimeAssert,
    ShapeEnv,
    ShapeEnvConfig,
    ShapeGuard,
    SymbolInfo,
    user_location,
)
from symbolic.source import (
    AttrSource,
    ConstantSource,
    DefaultDeviceSource,
    GlobalSource,
    ItemSource,
    LocalSource,
    SizeSource,
    Source,
    StrideSource,
)
from symbolic.tensor_meta import TensorMeta, contiguous_strides, meta_of, verify
from symbolic.z3_bridge import Z3_LOCK, from_z3, to_z3, z3_locked

__all__ = [
    "Analyzer",
    "UNBOUNDED",
    "AttrSource",
    "ConstantSource",
    "DefaultDeviceSource",
    "FloorDiv",
    "GlobalSource",
    "ItemSource",
    "LocalSource",
    "RuntimeAssert",
    "ShapeAssertionError",
    "ShapeValueError",
    "ShapeEnv",
    "ShapeEnvConfig",
    "ShapeError",
    "ShapeGuard",
    "SizeSource",
    "Source",
    "StrideSource",
    "SymbolInfo",
    "SymbolicError",
    "SymcError",
    "TensorMeta",
    "ValueRange",
    "Z3_LOCK",
    "bounds",
    "contiguous_strides",
    "from_z3",
    "meta_of",
    "python_str",
    "sort_symbols",
    "sym_int",
    "symbol_key",
    "to_z3",
    "user_location",
    "verify",
    "z3_locked",
]
