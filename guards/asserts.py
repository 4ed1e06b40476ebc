"""Runtime asserts: size conditions eager would fail on too, checked per call, never recompiled.

    checker = compile_assert_checker(env)      # env.asserts: [s1 == s0 (matmul inner dims)]
    checker.check(L, G)   # raises ShapeError:
        matmul inner dims: expected s1 == s0, got s0 = 3 (L['x'].size(1)), s1 = 4 (L['w'].size(0))
        at model.py:12

Like the guard checker, one generated function reads each symbol from its source once; the
message is built only on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from guards.constraints import sorted_symbols
from guards.model import GuardError
from guards.reasons import describe_values
from guards.render import render_expr
from symbolic import ConstantSource, RuntimeAssert, ShapeError, symbol_key


@dataclass(frozen=True, eq=False)
class AssertChecker:
    """`check(L, G)` returns None or raises ShapeError naming the first failing assert."""

    source: str
    asserts: tuple[RuntimeAssert, ...]
    check: Callable[[dict, dict], None]

    def __call__(self, L: dict, G: dict | None = None) -> None:
        self.check(L, G)


def compile_assert_checker(env) -> AssertChecker:
    """Generate the function checking every runtime assert of `env` (a no-op if none)."""
    asserts = tuple(env.asserts)
    infos = dict(sorted_symbols(env))
    used = sorted({s for a in asserts for s in a.expr.free_symbols}, key=symbol_key)
    lines = []
    for symbol in used:
        if symbol not in infos:
            raise GuardError(f"runtime assert uses {symbol}, which has no source")
        source = infos[symbol].source
        if isinstance(source, ConstantSource):
            raise GuardError(f"runtime assert reads {source}, which has no run-time value")
        lines.append(f"{symbol.name} = {source}")
    for index, item in enumerate(asserts):
        lines.append(f"if not ({render_expr(item.expr)}): _fail({index}, L)")
    body = [f"    {line}" for line in lines] or ["    pass"]
    source = "\n".join(["def check_asserts(L, G=None):", *body]) + "\n"
    namespace = {"_fail": _make_fail(asserts, infos)}
    exec(compile(source, "<symc check_asserts>", "exec"), namespace)  # noqa: S102 - generated
    return AssertChecker(source, asserts, namespace["check_asserts"])


def _make_fail(asserts, infos) -> Callable[[int, dict], None]:
    def fail(index: int, L: dict) -> None:
        item = asserts[index]
        values = []
        for symbol in sorted(item.expr.free_symbols, key=symbol_key):
            source = infos[symbol].source
            try:
                value = source.read(L)
            except Exception as error:  # noqa: BLE001 - shown in the message
                value = f"<{type(error).__name__}>"
            values.append((symbol.name, value, str(source)))
        head = item.message or "size check failed"
        got = describe_values(values, None)
        at = f" at {item.where}" if item.where else ""
        raise item.error(f"{head}: expected {render_expr(item.expr)}, got {got}{at}")

    return fail
