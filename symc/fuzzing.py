"""symc.fuzz: sizes z3 picks at the edges of each entry's guards, run compiled against eager.

    report = symc.fuzz(f, torch.randn(4, 64), n=50, backend="inductor")
    print(report)            # cases, cases/s, failures with a shrunk reproducer, skipped cases
    symc.fuzz.sizes(entry)   # a Hypothesis strategy of the sizes an entry's guards admit

For each entry compiled from the example call: `n` admitted assignments (guards.edge_assignments:
range ends, each guard's boundary, divisibility edges, sizes 1 and 2, then random ones), one aimed
at the int32 index limit, and one just outside each guard (guards.outside_assignments). The
entry's checker must admit the first and reject the last; every case must match eager. Entries
that outside cases compile are fuzzed in turn, up to `max_entries`. A failing admitted case is
shrunk: smaller sizes the same guards admit are tried while it still fails.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import sympy
import torch

import guards
from capture import frame_locals
from symbolic import ShapeGuard, symbol_key
from symc.cache import CompiledFunction
from symc.compile import compile as symc_compile
from symc.compile import compiled_functions
from symc.config import config
from symc.fuzz_compare import compare, run_call
from symc.fuzz_inputs import ExampleCall, clone_call, dims_by_source, render_call
from symc.fuzz_report import EntrySummary, Failure, FuzzCase, FuzzReport, Reproducer, Skipped

INT32_LIMIT = 2**31
SHRINK_TRIES = 40      # runs spent shrinking one failure
SHRUNK_FAILURES = 3    # failures shrunk per report (later ones are usually the same bug)


def fuzz(fn, *example_args, n: int = 100, seed: int = 0, backend="inductor",
         max_value: int = 64, max_elements: int = 1 << 22, max_entries: int = 4,
         shrink: bool = True, empty: bool = True, **example_kwargs) -> FuzzReport:
    """Fuzz `fn` (a function or nn.Module) over sizes its compiled entries' guards admit.

    `n` admitted cases per entry; `max_value` caps each symbol of those cases; a case whose inputs
    hold more than `max_elements` elements in all is skipped, with the reason in the report.
    `empty=False` leaves out the outside cases with a size 0 (empty tensors).
    """
    options = _Options(n, seed, max_value, max_elements, max_entries, shrink, empty)
    limit = config.cache_size_limit
    # Outside cases recompile on purpose; running eagerly past the limit would test nothing.
    config.cache_size_limit = max(limit, 8 * max_entries + 16)
    try:
        session = _Session.start(fn, example_args, example_kwargs, backend, options)
        try:
            session.explore()
        finally:
            session.finish()
    finally:
        config.cache_size_limit = limit
    return session.report


def sizes(entry, max_value: int = 64):
    """A Hypothesis strategy of {symbol: size} assignments `entry` (a CacheEntry) admits."""
    return guards.sizes_strategy(entry.capture.env, constraints(entry), max_value)


fuzz.sizes = sizes  # `symc.fuzz.sizes(entry)`: symc.fuzz is this function


def entry_dims(entry, values: dict) -> dict[str, dict[int, int]]:
    """{tensor source text: {dim: size}}: the entry's static sizes, then the symbols' values."""
    dims: dict[str, dict[int, int]] = {}
    for guard in entry.capture.guards.other_guards:
        if isinstance(guard, guards.TensorMatchGuard):
            dims[str(guard.source)] = dict(guard.static_sizes)
    for base, sizes in dims_by_source(entry.capture.env, values).items():
        dims.setdefault(base, {}).update(sizes)
    return dims


def constraints(entry) -> list[ShapeGuard]:
    """What sizes must satisfy to be admitted by `entry` and accepted by eager: its shape guards
    and runtime asserts, plus `s == hint` for a symbol not read from an argument's size."""
    env = entry.capture.env
    found = list(entry.capture.guards.shape_guards)
    found += [ShapeGuard(a.expr, a.where) for a in env.asserts]
    arguments = {str(src) for src in entry.capture.inputs}
    for symbol, info in env.symbols.items():
        base = getattr(info.source, "base", None)
        if base is None or str(base) not in arguments:
            found.append(ShapeGuard(sympy.Eq(symbol, info.hint)))
    return found


@dataclass(frozen=True)
class _Options:
    n: int
    seed: int
    max_value: int
    max_elements: int
    max_entries: int
    shrink: bool
    empty: bool


@dataclass
class _Session:
    """One fuzzing run: the compiled function, its eager original, the example call, the report."""

    compiled: object
    function: object                 # the root symc CompiledFunction
    eager: object
    call: ExampleCall
    params: dict
    options: _Options
    report: FuzzReport
    name: str
    saved_grads: dict = field(default_factory=dict)
    runs: int = 0
    started: float = field(default_factory=time.perf_counter)

    @classmethod
    def start(cls, fn, args, kwargs, backend, options: _Options) -> _Session:
        eager = _original(fn)
        compiled = symc_compile(eager, backend=backend)
        function = compiled_functions(compiled)[0]
        params = ({n: p for n, p in eager.named_parameters() if p.requires_grad}
                  if isinstance(eager, torch.nn.Module) else {})
        name = "model" if isinstance(eager, torch.nn.Module) else function.name
        report = FuzzReport(function.name, function.backend_name)
        session = cls(compiled, function, eager, ExampleCall.of(function, args, kwargs), params,
                      options, report, name, {n: p.grad for n, p in params.items()})
        compiled(*args, **kwargs)
        return session

    def finish(self) -> None:
        for name, p in self.params.items():
            p.grad = self.saved_grads.get(name)
        self.report.cases_run = self.runs
        self.report.seconds = time.perf_counter() - self.started

    # ------------------------------------------------------------------ exploration
    def explore(self) -> None:
        if self.function.broken is not None:
            self.report.notes.append(f"graph break on the example call ({self.function.broken});"
                                     f" nothing compiled to fuzz")
            return
        done: list = []
        while len(done) < self.options.max_entries:
            pending = [e for e in self.function.entries if not any(e is d for d in done)]
            if not pending:
                return
            # Entries with symbols first: those specialised on empty inputs vary no size.
            chosen = min(pending, key=lambda e: not e.capture.env.symbols)
            done.append(chosen)
            self.fuzz_entry(chosen)
        left = len(self.function.entries) - len(done)
        if left > 0:
            self.report.notes.append(f"{left} more entries compiled while fuzzing were not "
                                     f"fuzzed (max_entries={self.options.max_entries})")

    def fuzz_entry(self, entry) -> None:
        index = _position(self.function, entry)
        summary = EntrySummary(index, [guards.render_expr(g.expr)
                                       for g in entry.capture.guards.shape_guards])
        self.report.entries.append(summary)
        env, found = entry.capture.env, constraints(entry)
        o = self.options
        admitted = guards.edge_assignments(env, found, n=o.n, seed=o.seed, max_value=o.max_value)
        for values in admitted if env.symbols else [{}]:
            summary.admitted += self.run_admitted(entry, self.case(entry, "admitted", values))
        int32 = self.int32_values(entry, found)
        if int32 is not None:
            summary.admitted += self.run_admitted(entry, self.case(entry, "int32 edge", int32))
        for outside in self.outside_cases(entry, found):
            case = self.case(entry, "outside", outside.values, outside.violated)
            summary.outside += self.run_outside(entry, case, summary)

    def case(self, entry, kind: str, values: dict, violated: str = "") -> FuzzCase:
        dims = entry_dims(entry, values)
        ordered = sorted(values.items(), key=lambda kv: symbol_key(kv[0]))
        named = {str(s): int(v) for s, v in ordered}
        return FuzzCase(_position(self.function, entry), kind, named,
                        self.call.shapes(dims), violated)

    def int32_values(self, entry, found: list) -> dict | None:
        """Sizes where one input just passes 2**31 elements: one symbol grown, the others near
        the example's sizes. None when the guards keep every input below that."""
        env = entry.capture.env
        hints = {s: info.hint for s, info in env.symbols.items()}
        shapes = self.call.shapes(entry_dims(entry, hints))
        for symbol in _growable_symbols(env, shapes, hints)[:4]:
            base = str(env.symbols[symbol].source.base)
            rest = max(1, math.prod(shapes[base]) // hints[symbol])
            target = INT32_LIMIT // rest + 1
            values = guards.nearest_assignment(env, found, {**hints, symbol: target},
                                               max_value=2 * target)
            grown = self.call.shapes(entry_dims(entry, values)) if values else {}
            if any(math.prod(shape) >= INT32_LIMIT for shape in grown.values()):
                return values
        return None

    def outside_cases(self, entry, found: list) -> list[guards.OutsideCase]:
        """Sizes just outside each guard and range end (asserts excluded: eager rejects those).

        A guard's case is moved near the example's sizes where z3 finds such sizes, so that the
        recompile it causes is not specialised on the 0s and 1s of the smallest violation.
        """
        env = entry.capture.env
        asserts = {guards.render_expr(a.expr) for a in env.asserts}
        by_text = {guards.render_expr(g.expr): g for g in found}
        seen, cases = set(), []
        for case in guards.outside_assignments(env, found, self.options.max_value):
            if case.violated in asserts or (not self.options.empty and 0 in case.values.values()):
                continue
            guard = by_text.get(case.violated)
            if guard is not None and case.exactly_one:
                others = [g for g in found if g is not guard]
                hints = {s: info.hint for s, info in env.symbols.items()}
                near = guards.nearest_assignment(env, [*others, sympy.Not(guard.expr)], hints,
                                                 max_value=max(self.options.max_value,
                                                               *case.values.values()))
                case = guards.OutsideCase(near, case.violated) if near else case
            key = tuple(sorted((str(s), v) for s, v in case.values.items()))
            if key not in seen:
                seen.add(key)
                cases.append(case)
        return cases

    # ------------------------------------------------------------------ running cases
    def run_admitted(self, entry, case: FuzzCase) -> int:
        """Run one admitted case; on failure shrink it. Returns 1 if it ran, 0 if skipped."""
        result = self.check(entry, case, expect_admitted=True)
        if isinstance(result, Skipped):
            self.report.skipped.append(result)
            return 0
        if isinstance(result, Failure):
            if self.options.shrink and len(self.report.failures) < SHRUNK_FAILURES:
                result = Failure(result.case, result.problem, result.max_error,
                                 self.shrink(entry, result))
            self.report.failures.append(result)
        return 1

    def run_outside(self, entry, case: FuzzCase, summary: EntrySummary) -> int:
        compiles = self.function.compiles
        result = self.check(entry, case, expect_admitted=False)
        if isinstance(result, Skipped):
            self.report.skipped.append(result)
            return 0
        if isinstance(result, Failure):
            self.report.failures.append(result)
        if self.function.compiles > compiles:
            summary.recompiled += 1
        return 1

    def check(self, entry, case: FuzzCase, *, expect_admitted: bool):
        """Run `case` on compiled and eager: None when they agree, else a Failure or Skipped."""
        reason = self.too_large(case)
        if reason:
            return Skipped(case, reason)
        self.runs += 1
        generator = torch.Generator().manual_seed(self.options.seed * 1_000_003 + self.runs)
        dims = entry_dims(entry, self.symbol_values(entry, case))
        args, kwargs = self.call.rebuild(dims, generator)
        wrong_guard = self.guard_problem(entry, args, kwargs, expect_admitted)
        if wrong_guard:
            return Failure(case, wrong_guard, None)
        got = run_call(self.compiled, *clone_call(args, kwargs), self.params, self.runs)
        want = run_call(self.eager, *clone_call(args, kwargs), self.params, self.runs)
        self.note_fallbacks(case, eager_raised=want.error is not None)
        mismatch = compare(got, want)
        return None if mismatch is None else Failure(case, str(mismatch), mismatch.max_error)

    def symbol_values(self, entry, case: FuzzCase) -> dict:
        by_name = {s.name: s for s in entry.capture.env.symbols}
        return {by_name[name]: v for name, v in case.values.items()}

    def guard_problem(self, entry, args, kwargs, expect_admitted: bool) -> str:
        f = self.function
        full = (f.self_obj, *args) if f.self_obj is not None else args
        L, G = frame_locals(f.fn, full, kwargs, f.signature), f.fn.__globals__
        index = entry.checker(L, G)
        position = _position(f, entry)
        if expect_admitted and index >= 0:
            reason = entry.checker.reason(L, G, index, position)
            return f"entry {position}'s checker rejects sizes its guards admit: {reason}"
        if not expect_admitted and index < 0:
            return f"entry {position}'s checker admits sizes outside its guards"
        return ""

    def too_large(self, case: FuzzCase) -> str:
        elements = sum(math.prod(shape) for shape in case.shapes.values())
        if elements > self.options.max_elements:
            return (f"inputs would hold {elements:,} elements, over max_elements="
                    f"{self.options.max_elements:,}")
        needed = 4 * sum(math.prod(s) * t.element_size() for (_, s), (_, t)
                         in zip(case.shapes.items(), self.call.tensors(), strict=True))
        devices = [t.device for _, t in self.call.tensors()]
        free = _free_memory(devices[0] if devices else torch.device("cpu"))
        if free is not None and needed > free:
            return f"needs about {needed / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free"
        return ""

    def note_fallbacks(self, case: FuzzCase, eager_raised: bool) -> None:
        """A graph break or the cache limit makes later calls run eagerly: note it (unless eager
        rejects the sizes too), and undo the break so later cases still test compiled code."""
        f = self.function
        if f.broken is not None and eager_raised:
            f.broken = None
        if f.broken is not None:
            reason = str(f.broken).strip().splitlines()[0]
            self.report.notes.append(f"{case}: graph break while recompiling ({reason}); "
                                     f"this case ran eagerly")
            f.broken = None
        if f.limit_hit:
            self.report.notes.append(f"{case}: cache_size_limit reached; later cases ran eagerly")
            f.limit_hit = False

    # ------------------------------------------------------------------ shrinking
    def shrink(self, entry, failure: Failure) -> Reproducer:
        """Smaller sizes the same guards admit, kept while the case still fails."""
        env, found = entry.capture.env, constraints(entry)
        best, problem, tries = failure.case, failure.problem, 0
        improved = True
        while improved and tries < SHRINK_TRIES:
            improved = False
            for target in _smaller_targets(env, self.symbol_values(entry, best)):
                values = guards.nearest_assignment(env, found, target,
                                                   max_value=max(best.values.values()))
                if values is None or sum(values.values()) >= best.size:
                    continue
                candidate = self.case(entry, best.kind, values)
                tries += 1
                result = self.check(entry, candidate, expect_admitted=True)
                if isinstance(result, Failure):
                    best, problem, improved = candidate, result.problem, True
                    break
                if tries >= SHRINK_TRIES:
                    break
        dims = entry_dims(entry, self.symbol_values(entry, best))
        return Reproducer(best, render_call(self.name, self.call, dims), problem, tries)


def _smaller_targets(env, values: dict) -> list[dict]:
    """For each symbol: its smallest admitted value, then steps back from its value that halve
    (value - d/2, value - d/4, ..., value - 1, with d the distance to the smallest), so a size
    threshold (`fails when T > 256`) is bisected; the other symbols keep their values."""
    targets = []
    for symbol, value in sorted(values.items(), key=lambda kv: symbol_key(kv[0])):
        low = env.symbols[symbol].range.lo
        low = 0 if math.isinf(low) else int(low)
        steps, distance = [low], (value - low) // 2
        while distance >= 1:
            steps.append(value - distance)
            distance //= 2
        steps.append(value - 1)
        targets += [{**values, symbol: v} for v in dict.fromkeys(steps) if low <= v < value]
    return targets


def _growable_symbols(env, shapes: dict, hints: dict) -> list:
    """Symbols read from an argument's size (not replaced by another: `s2 -> s0` grows s0),
    those of the largest inputs first, then the largest example size first."""
    candidates = []
    for symbol, info in env.symbols.items():
        base = str(getattr(info.source, "base", ""))
        if base in shapes and symbol not in env.replacements:
            candidates.append((-math.prod(shapes[base]), -hints[symbol], symbol_key(symbol),
                               symbol))
    return [symbol for *_, symbol in sorted(candidates, key=lambda c: c[:3])]


def _original(fn):
    """The plain function or module behind what symc.compile returned (fuzzing compiles anew)."""
    fn = getattr(fn, "_orig_mod", fn)
    if isinstance(fn, CompiledFunction):
        return fn.fn if fn.self_obj is None else fn.self_obj
    return fn


def _position(function, entry) -> int:
    return next(i for i, e in enumerate(function.entries) if e is entry)


def _free_memory(device: torch.device) -> int | None:
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
