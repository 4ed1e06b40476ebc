"""guards: what must hold for a compiled entry to be reused.

In: guard records from capture and shape guards from the ShapeEnv. Out: a z3-minimised set of
shape guards, one generated check function per entry, readable recompile reasons, explain data,
overlap analysis between entries, and z3-chosen sizes for fuzzing.

    >>> print(describe_guards(guard_set))
    L['x'].dtype == torch.float32, device.type == 'cpu', dim() == 2, requires_grad == False
    2 <= s0 <= 1024                      L['x'].size(0)
    s0 % 8 == 0
"""

from guards.asserts import AssertChecker, compile_assert_checker
from guards.checker import MISS, Checker, CheckItem, compile_checker, compile_reader
from guards.fuzz_sizes import (
    OutsideCase,
    edge_assignments,
    nearest_assignment,
    outside_assignments,
    sizes_strategy,
)
from guards.minimize import MinimizedGuards, RemovedGuard, SymbolRange, minimize
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
from guards.overlap import (
    overlap_example,
    overlaps,
    size_constraints,
    tensor_conflict,
    uncovered_examples,
)
from guards.reasons import RecompileReason
from guards.render import bound_of, render_expr, render_range
from guards.report import GuardLine, GuardReport, RemovedLine, describe_guards

__all__ = [
    "MISS",
    "AssertChecker",
    "CheckItem",
    "Checker",
    "DictKeysGuard",
    "Guard",
    "GuardError",
    "GuardLine",
    "GuardReport",
    "GuardSet",
    "IdentityGuard",
    "LengthGuard",
    "MinimizedGuards",
    "OutsideCase",
    "RecompileReason",
    "RemovedGuard",
    "RemovedLine",
    "SymbolRange",
    "TensorMatchGuard",
    "TypeGuard",
    "ValueGuard",
    "bound_of",
    "compile_assert_checker",
    "compile_checker", "compile_reader",
    "describe_guards",
    "edge_assignments",
    "minimize",
    "nearest_assignment",
    "outside_assignments",
    "overlap_example",
    "overlaps",
    "render_expr",
    "render_range",
    "size_constraints",
    "sizes_strategy",
    "tensor_conflict",
    "uncovered_examples",
]
