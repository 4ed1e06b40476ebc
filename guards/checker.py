"""Generate one Python function that checks an entry's guards; explain the guard that failed.

    checker = compile_checker(guard_set)
    checker.check(L, G)  ->  -1 when every guard holds, else the index of the first failure
    print(checker.source)
        def check_guards(L, G):
            v0 = L['x']
            if not type(v0) is Tensor: return 0
            if v0.dtype is not c0: return 1
            ...
            s0 = v0.size(1)
            if not (2 <= s0 <= 1024): return 6
            return -1

Order: identity, type, tensor match, length, dict keys, values, then symbol ranges and shape
predicates (cheapest and most likely to fail first; a type check precedes reading attributes).
Each source is read once into a local; constants live in the function's globals. A tensor's
checks share one `if`; on any failure (or if reading a source raises) a slow path evaluates the
guards one by one from there and returns the exact first failure.

The same lines also make the *guarded call* (`checker.guarded(call)`): it returns MISS at the
first failing guard, else `call(L, G, *inputs)` with the inputs read from the checker's locals;
the compiled function's per-call path is that one function. Given an example (L, G), an
attribute of an nn.Module whose identity is already checked is read from the module's
`_parameters`/`_buffers`/`_modules` dict, as `Module.__getattr__` would find it (a tenth of the
cost); an identity guard with an example compares with `is` against the object itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy
import torch

from guards.constraints import sorted_symbols
from guards.minimize import MinimizedGuards, minimize
from guards.model import (
    DictKeysGuard,
    GuardError,
    IdentityGuard,
    LengthGuard,
    TensorMatchGuard,
    TypeGuard,
    ValueGuard,
    tensor_type_name,
)
from guards.reasons import RecompileReason
from guards.render import render_expr, render_range
from symbolic import AttrSource, ConstantSource, ItemSource, SizeSource, Source, symbol_key

_KIND_ORDER = {
    IdentityGuard: 0,  # first (an `is`; a module checked, its attributes are read fast below)
    TypeGuard: 1,
    TensorMatchGuard: 2,
    LengthGuard: 3,
    DictKeysGuard: 4,
    ValueGuard: 5,
}


class _Miss:
    """What a guarded call returns when a guard fails (never a value a program returns)."""

    def __repr__(self) -> str:
        return "MISS"


MISS = _Miss()
_MODULE_DICTS = ("_parameters", "_buffers", "_modules")


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One check of the generated function: readable text, standalone code, what to show."""

    text: str
    code: str  # a boolean expression over L and G alone (the slow path and explain use it)
    shown: tuple[tuple[str, str, str], ...]  # (name, value code over L/G, source text) per value
    where: str | None = None


@dataclass(frozen=True, eq=False)
class Checker:
    """A compiled check function plus what is needed to explain a failure.

    `guarded_source` is the guarded call's text (`guarded(call)` compiles it around `call`).
    """

    source: str
    items: tuple[CheckItem, ...]
    check: Callable[[dict, dict], int]
    guarded_source: str = ""
    namespace: dict = field(default_factory=dict)

    def __call__(self, L: dict, G: dict | None = None) -> int:
        return self.check(L, G)

    def guarded(self, call: Callable) -> Callable[[dict, dict], object]:
        """`fn(L, G)`: MISS if a guard fails, else `call(L, G, *inputs)`."""
        namespace = dict(self.namespace, _call=call)
        exec(compile(self.guarded_source, "<symc guarded_call>", "exec"), namespace)  # noqa: S102
        return namespace["guarded_call"]

    def reason(self, L: dict, G: dict | None, index: int, entry_index: int = 0):
        """The RecompileReason for guard `index` failing on these locals/globals."""
        item = self.items[index]
        values = tuple((name, _read(code, L, G), src) for name, code, src in item.shown)
        return RecompileReason(entry_index, item.text, values, item.where)

    def explain_failure(self, L: dict, G: dict | None, index: int) -> str:
        """`s0 <= 1024 failed: s0 = 1500 (L['idx'].size(1), model.py:57)`."""
        return self.reason(L, G, index).describe()


def compile_checker(
    guard_set, minimized: MinimizedGuards | None = None, *, example=None, inputs=()
) -> Checker:
    """Generate and compile the check function of `guard_set` (minimising it if not given).

    `example`: the (L, G) the entry was captured from, to pick fast reads; `inputs`: the sources
    the guarded call passes to its `call`."""
    if minimized is None:
        minimized = minimize(guard_set)
    builder = _Builder(example)
    others = sorted(guard_set.other_guards, key=_order)
    builder.identities = {str(g.source) for g in others if isinstance(g, IdentityGuard)}
    if minimized is not None:
        builder.unpacked = _unpackable(guard_set.env, others)
    for guard in others:
        builder.add_guard(guard)
    if minimized is not None:
        builder.add_shape(guard_set.env, minimized)
    return builder.finish("check_guards", inputs)


def _unpackable(env, guards) -> dict[str, tuple[str, ...]]:
    """Source text -> its symbols' names in dim order, for each matched tensor whose every size
    is a symbol: one `s0, s1 = v.shape` reads them all and fails on another rank, so the
    tensor's fast line leaves out `v.dim() == 2` (its item stays: the slow path still names
    it). A tenth of the guard time of a layer norm's three tensors."""
    dims: dict[str, dict[int, str]] = {}
    for symbol, info in env.symbols.items():
        if isinstance(info.source, SizeSource):
            dims.setdefault(str(info.source.base), {})[info.source.dim] = symbol.name
    out = {}
    for guard in guards:
        if isinstance(guard, TensorMatchGuard) and guard.ndim and not guard.static_sizes:
            found = dims.get(str(guard.source), {})
            if sorted(found) == list(range(guard.ndim)):
                out[str(guard.source)] = tuple(found[d] for d in range(guard.ndim))
    return out


def _order(guard) -> tuple[int, int]:
    """Kind, then (for identities) parents before children: `L['m']` before `L['m'].h`."""
    depth = len(str(guard.source)) if isinstance(guard, IdentityGuard) else 0
    return _KIND_ORDER[type(guard)], depth


def _read(code: str, L: dict, G: dict | None):
    try:
        return eval(code, {"L": L, "G": G or {}, "torch": torch})  # noqa: S307 - our own text
    except Exception as error:  # noqa: BLE001 - shown to the user as the value
        return f"<{type(error).__name__}: {error}>"


class _Builder:
    """Accumulates the generated lines, the constants bound as globals, and the CheckItems.

    A failing check is a line `if not (...): <FAIL start>`; `finish` writes FAIL as the slow
    path from item `start` (the check function) or as `return MISS` (the guarded call).
    """

    def __init__(self, example=None) -> None:
        self.lines: list[str] = []
        self.items: list[CheckItem] = []
        self.constants: dict[str, object] = {"Tensor": torch.Tensor}
        self.local_of: dict[str, str] = {}  # source text -> local variable
        self.symbol_names: dict[sympy.Symbol, str] = {}
        self.example = example  # (L, G) of the captured call, or None
        self.identities: set[str] = set()  # sources with an identity guard
        self.unpacked: dict[str, tuple[str, ...]] = {}  # see `_unpackable`
        self.checked: set[str] = set()  # ... whose identity check is already emitted

    # ---------------------------------------------------------------- helpers
    def constant(self, value) -> str:
        for name, existing in self.constants.items():
            if existing is value:
                return name
        name = f"c{len(self.constants) - 1}"
        self.constants[name] = value
        return name

    def read(self, source: Source) -> str:
        """Code reading `source`, reusing locals of already-read bases."""
        text = str(source)
        if text in self.local_of:
            return self.local_of[text]
        if isinstance(source, ConstantSource):
            raise GuardError(f"guard on {source}, which has no run-time value to check")
        # bases go into locals: guards on a deep module tree share every prefix of their paths
        if isinstance(source, SizeSource):
            return f"{self.bind(source.base)}.shape[{source.dim}]"  # faster than .size(d)
        if isinstance(source, AttrSource | ItemSource):
            fast = self.module_read(source)
            if fast is not None:
                return fast
        if isinstance(source, AttrSource):
            return f"{self.bind(source.base)}.{source.attr}"
        if isinstance(source, ItemSource):
            return f"{self.bind(source.base)}[{source.index!r}]"
        return text

    def module_read(self, source: AttrSource | ItemSource) -> str | None:
        """`v._modules['h']` for `v.h` (or `v[0]` of a ModuleList) when `v` is an nn.Module
        already checked to be the example's object, where `Module.__getattr__` finds the name:
        `getattr` first fails in C and raises before reaching it, ten times the cost."""
        base = source.base
        if self.example is None or str(base) not in self.checked:
            return None
        try:
            module = base.read(*self.example)
        except Exception:  # noqa: BLE001 - no example value: read it the plain way
            return None
        if not isinstance(module, torch.nn.Module):
            return None
        if isinstance(source, AttrSource):
            name = source.attr
            if name in vars(module) or any(name in vars(k) for k in type(module).__mro__):
                return None  # found before __getattr__: a plain read is the right one
        elif isinstance(module, torch.nn.ModuleList | torch.nn.Sequential):
            if type(source.index) is not int or source.index < 0:
                return None
            name = str(source.index)
        elif isinstance(module, torch.nn.ModuleDict) and type(source.index) is str:
            name = source.index
        else:
            return None
        for dict_name in _MODULE_DICTS:
            if name in getattr(module, dict_name):
                return f"{self.bind(base)}.{dict_name}[{name!r}]"
        return None

    def bind(self, source: Source) -> str:
        """Read `source` into a local once; later reads of it (or through it) use the local."""
        text = str(source)
        if text not in self.local_of:
            code = self.read(source)  # binds the bases first
            name = f"v{len(self.local_of)}"
            self.lines.append(f"{name} = {code}")
            self.local_of[text] = name
        return self.local_of[text]

    def emit(self, fast: str, *items: CheckItem) -> None:
        """One `if` for `items` (several for a tensor's properties: one branch, not five)."""
        self.lines.append(f"if not ({fast}): <FAIL {len(self.items)}>")
        self.items.extend(items)

    # ---------------------------------------------------------------- guards
    def add_guard(self, guard) -> None:
        src = str(guard.source)
        where = guard.where
        if isinstance(guard, TensorMatchGuard):
            self.add_tensor_match(guard)
            return
        if isinstance(guard, TypeGuard):
            v = self.bind(guard.source)
            t = self.constant(guard.type_)
            text = f"type({src}) is {guard.type_.__qualname__}"
            shown = ((f"type({src})", f"type({src}).__qualname__", src),)
            self.emit(f"type({v}) is {t}", CheckItem(text, f"type({src}) is {t}", shown, where))
        elif isinstance(guard, LengthGuard):
            v = self.read(guard.source)
            code = f"len({{}}) == {guard.length}"
            shown = ((f"len({src})", f"len({src})", src),)
            self.emit(code.format(v), CheckItem(str(guard), code.format(src), shown, where))
        elif isinstance(guard, DictKeysGuard):
            v = self.read(guard.source)
            keys = self.constant(tuple(guard.keys))
            code = f"tuple({{}}.keys()) == {keys}"
            shown = ((f"{src}.keys()", f"list({src}.keys())", src),)
            self.emit(code.format(v), CheckItem(str(guard), code.format(src), shown, where))
        elif isinstance(guard, IdentityGuard):
            self.add_identity(guard)
        elif isinstance(guard, ValueGuard):
            self.add_value(guard)
        else:
            raise GuardError(f"no checker rule for guard {guard!r}; add one to guards/checker.py")

    def add_identity(self, guard: IdentityGuard) -> None:
        src = str(guard.source)
        code = f"id({src}) == {guard.object_id}"
        shown = ((src, f"repr({src})[:80]", src),)
        item = CheckItem(str(guard), code, shown, guard.where)
        obj = self.example_value(guard.source)
        v = self.bind(guard.source)
        if obj is not None and id(obj) == guard.object_id:
            # `is` against the object itself: cheaper than id(), and an id reused after the
            # object died cannot pass (the checker holds the object).
            self.emit(f"{v} is {self.constant(obj)}", item)
        else:
            self.emit(f"id({v}) == {guard.object_id}", item)
        self.checked.add(src)

    def example_value(self, source: Source):
        if self.example is None:
            return None
        try:
            return source.read(*self.example)
        except Exception:  # noqa: BLE001 - no example value
            return None

    def add_value(self, guard: ValueGuard) -> None:
        src, value = str(guard.source), guard.value
        if value is None or isinstance(value, bool):
            v = self.read(guard.source)
            code = f"{{}} is {value!r}"
        else:
            v = self.bind(guard.source)
            literal = repr(value) if type(value) in (int, str) else self.constant(value)
            code = f"type({{0}}) is {self.constant(type(value))} and {{0}} == {literal}"
        shown = ((src, src, src),)
        text = f"{src} == {value!r}"
        self.emit(code.format(v), CheckItem(text, code.format(src), shown, guard.where))

    def add_tensor_match(self, guard: TensorMatchGuard) -> None:
        src, where = str(guard.source), guard.where
        v = self.bind(guard.source)
        items = [
            (f"type({src}) is {tensor_type_name(guard.type_)}", f"type({src})",
             f"type({src}).__name__"),
            (f"{src}.dtype == {guard.dtype}", f"{src}.dtype", f"{src}.dtype"),
            (f"{src}.device.type == {guard.device.type!r}", f"{src}.device", f"{src}.device"),
            (f"{src}.dim() == {guard.ndim}", f"{src}.dim()", f"{src}.dim()"),
            (
                f"{src}.requires_grad == {guard.requires_grad}",
                f"{src}.requires_grad",
                f"{src}.requires_grad",
            ),
        ]
        items += [
            (f"{src}.size({d}) == {n}", f"{src}.size({d})", f"{src}.size({d})")
            for d, n in guard.static_sizes
        ]
        fast = [
            f"type({v}) is {self.constant(guard.type_)}",
            f"{v}.dtype is {self.constant(guard.dtype)}",
            _device_check(guard.device.type).format(v),
            f"{v}.requires_grad is {guard.requires_grad}",
        ]
        static = dict(guard.static_sizes)
        if len(static) == guard.ndim:  # every size static: one tuple compare checks the rank too
            fast.append(f"{v}.shape == {tuple(static[d] for d in range(guard.ndim))!r}")
        elif src not in self.unpacked:  # else add_shape's unpacking checks the rank
            fast.append(f"{v}.dim() == {guard.ndim}")
            fast += [f"{v}.shape[{d}] == {n}" for d, n in guard.static_sizes]
        checks = [CheckItem(text, text, ((name, code, name),), where) for text, name, code in items]
        self.emit(" and ".join(fast), *checks)

    # ---------------------------------------------------------------- shapes
    def add_shape(self, env, minimized: MinimizedGuards) -> None:
        infos = dict(sorted_symbols(env))
        for symbol, info in infos.items():
            name = symbol.name
            base = str(info.source.base) if isinstance(info.source, SizeSource) else None
            names = self.unpacked.get(base)
            if names is None:
                self.lines.append(f"{name} = {self.read(info.source)}")
            elif info.source.dim == 0:  # every size of the tensor at once (all are read
                # before the first check that uses one)
                targets = f"{names[0]}," if len(names) == 1 else ", ".join(names)
                self.lines.append(f"{targets} = {self.bind(info.source.base)}.shape")
            self.symbol_names[symbol] = name
        standalone = {s: f"({info.source})" for s, info in infos.items()}
        for symbol_range in minimized.ranges:
            symbol = symbol_range.symbol
            text = render_range(symbol, symbol_range.range)
            if text == "True":
                continue
            code = render_range(symbol, symbol_range.range, standalone[symbol])
            shown = _shown_symbols([symbol], infos)
            where = ", ".join(dict.fromkeys(symbol_range.wheres)) or None
            self.emit(text, CheckItem(text, code, shown, where))
        for guard in minimized.predicates:
            missing = guard.expr.free_symbols - infos.keys()
            if missing:
                raise GuardError(f"shape guard {guard} uses symbols {missing} with no source")
            text = render_expr(guard.expr)
            code = render_expr(guard.expr, standalone)
            shown = _shown_symbols(sorted(guard.expr.free_symbols, key=symbol_key), infos)
            self.emit(text, CheckItem(text, code, shown, guard.where))

    def finish(self, name: str, inputs=()) -> Checker:
        check_lines = [_FAIL.sub(r"return _first_failure(L, G, \1)", x) for x in self.lines]
        body = [f"        {line}" for line in [*check_lines, "return -1"]]
        source = "\n".join([f"def {name}(L, G=None):", "    try:", *body])
        source += "\n    except Exception:\n        return _first_failure(L, G)\n"
        args = ", ".join(["L", "G", *(self.bind(s) for s in inputs)])  # binds after the checks
        guarded = [_FAIL.sub("return MISS", x) for x in self.lines]
        guarded_source = "\n".join(["def guarded_call(L, G=None):", "    try:",
                                    *(f"        {line}" for line in guarded or ["pass"]),
                                    "    except Exception:", "        return MISS",
                                    f"    return _call({args})"]) + "\n"
        namespace = dict(self.constants, torch=torch, MISS=MISS)
        slow = [compile(item.code, f"<guard {i}>", "eval") for i, item in enumerate(self.items)]
        namespace["_first_failure"] = _make_slow_path(slow, namespace)
        exec(compile(source, f"<symc {name}>", "exec"), namespace)  # noqa: S102 - generated
        return Checker(source, tuple(self.items), namespace[name], guarded_source, namespace)


_FAIL = re.compile(r"<FAIL (\d+)>")


def compile_reader(sources) -> Callable:
    """`read(L, G) -> list`: the value of every source, each shared prefix read once (the
    compiled function's inputs: parameters deep in a module tree share most of their paths)."""
    builder = _Builder()
    values = [builder.bind(source) for source in sources]
    body = ["def read_inputs(L, G=None):", *(f"    {line}" for line in builder.lines),
            f"    return [{', '.join(values)}]"]
    namespace = dict(builder.constants)
    exec(compile("\n".join(body), "<symc read_inputs>", "exec"), namespace)  # noqa: S102
    return namespace["read_inputs"]


def _device_check(device_type: str) -> str:
    """`x.is_cpu` costs a seventh of `x.device.type == 'cpu'` (no device object is made)."""
    if device_type in ("cpu", "cuda", "meta", "mps", "xpu"):
        return f"{{}}.is_{device_type}"
    return f"{{}}.device.type == {device_type!r}"


def _shown_symbols(symbols, infos) -> tuple[tuple[str, str, str], ...]:
    return tuple((s.name, str(infos[s].source), str(infos[s].source)) for s in symbols)


def _make_slow_path(codes, namespace) -> Callable[[dict, dict, int], int]:
    """Evaluate guards one at a time from `start` (those before it passed); a guard whose
    evaluation raises counts as failed."""

    def first_failure(L, G, start=0):
        scope = dict(namespace, L=L, G=G or {})
        for index in range(start, len(codes)):
            code = codes[index]
            try:
                if not eval(code, scope):  # noqa: S307 - compiled from our own text
                    return index
            except Exception:  # noqa: BLE001 - a guard that cannot be read has failed
                return index
        return -1

    return first_failure


__all__ = ["MISS", "CheckItem", "Checker", "compile_checker", "compile_reader"]
