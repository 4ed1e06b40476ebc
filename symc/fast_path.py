"""The per-call path of a compiled function, as generated straight-line code.

    bind = make_binder(fn, self_obj)      # fn(x, y=2) -> def bind(x=unset, y=unset) -> L
    call = make_entry_call(entry)         # def call_entry(L, G, a0, a1): o = run(a0, a1); return o[0]
    entry.guarded = entry.checker.guarded(call)   # MISS, or the entry's result

A call then costs one binder call (Python's own argument binding, no inspect.Signature), one
generated guard check per entry tried, and the backend's run: from the second call on, the
innermost callable the run's layers only pass the call on to (`direct_callable`: inductor's
generated wrapper, without the seed, lazy-compile and CompiledGraph frames). Anything the generated forms do not
cover (an empty closure cell, outputs that hold sizes, mutated inputs, a resume function) goes
through the general path: `frame_locals` and `CacheEntry.__call__`.
"""

from __future__ import annotations

import inspect

import torch

from capture import frame_locals

_PREFIX = "__symc_"


def make_binder(fn, self_obj=None):
    """`bind(*args, **kwargs) -> L` with `fn`'s own parameters (its code's names, defaults as
    they are at the call); a method's `self` is the bound object. Falls back to `frame_locals`."""
    code = fn.__code__
    if (self_obj is not None and code.co_argcount == 0) or any(
        name.startswith(_PREFIX) for name in code.co_varnames):
        return _general_binder(fn, self_obj)
    names = code.co_varnames
    n_pos, n_posonly, n_kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    positional, kwonly = names[:n_pos], names[n_pos:n_pos + n_kwonly]
    rest = iter(names[n_pos + n_kwonly:])
    varargs = next(rest) if code.co_flags & inspect.CO_VARARGS else None
    varkw = next(rest) if code.co_flags & inspect.CO_VARKEYWORDS else None
    # Every parameter defaults to a sentinel and reads `fn`'s defaults at call time, so a
    # later `fn.__defaults__ = ...` binds as Python would (and the guards see the new value).
    namespace: dict = {f"{_PREFIX}unset": _UNSET, f"{_PREFIX}default": _default,
                       f"{_PREFIX}fn": fn}
    params, fills = [], []
    for i, name in enumerate(positional):
        params.append(f"{name}={_PREFIX}unset")
        fills.append(f"if {name} is {_PREFIX}unset: {name} = {_PREFIX}default({_PREFIX}fn, "
                     f"{name!r}, {i})")
        if i + 1 == n_posonly:
            params.append("/")
    if self_obj is not None:  # the bound object fills the first parameter
        namespace[f"{_PREFIX}self"] = self_obj
        params = params[1:] if params[1:2] != ["/"] else params[2:]
        fills = fills[1:]
    if varargs:
        params.append(f"*{varargs}")
    elif kwonly:
        params.append("*")
    for name in kwonly:
        params.append(f"{name}={_PREFIX}unset")
        fills.append(f"if {name} is {_PREFIX}unset: {name} = {_PREFIX}default({_PREFIX}fn, "
                     f"{name!r}, None)")
    if varkw:
        params.append(f"**{varkw}")
    values = [f"{name!r}: {name}" for name in (*positional, varargs, *kwonly, varkw) if name]
    if self_obj is not None:
        values[0] = f"{positional[0]!r}: {_PREFIX}self"
    out = f"{_PREFIX}L"  # no parameter starts with the prefix
    lines = [*fills, f"{out} = {{{', '.join(values)}}}"]
    cells = tuple(zip(code.co_freevars, fn.__closure__ or (), strict=True))
    if cells:  # an empty cell (a name not yet assigned) is left out, as frame_locals does
        namespace[f"{_PREFIX}cells"] = cells
        namespace[f"{_PREFIX}fill"] = _fill_cells
        lines += ["try:"]
        lines += [f"    {out}[{name!r}] = {_PREFIX}cells[{i}][1].cell_contents"
                  for i, (name, _) in enumerate(cells)]
        lines += ["except ValueError:", f"    {_PREFIX}fill({out}, {_PREFIX}cells)"]
    body = "\n    ".join([*lines, f"return {out}"])
    source = f"def bind({', '.join(params)}):\n    {body}\n"
    exec(compile(source, f"<symc bind {fn.__qualname__}>", "exec"), namespace)  # noqa: S102
    bind = namespace["bind"]
    bind.source = source
    return bind


class _Unset:
    """The binder's default for every parameter: the argument was not passed."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


def _default(fn, name: str, index: int | None):
    """`fn`'s current default for parameter `name` (positional `index`, or keyword-only)."""
    if index is None:
        kwdefaults = fn.__kwdefaults__ or {}
        if name in kwdefaults:
            return kwdefaults[name]
    else:
        defaults = fn.__defaults__ or ()
        j = index - fn.__code__.co_argcount + len(defaults)
        if j >= 0:
            return defaults[j]
    raise TypeError(f"{fn.__qualname__}() missing required argument: {name!r}")


def _fill_cells(L: dict, cells) -> None:
    for name, cell in cells:
        try:
            L[name] = cell.cell_contents
        except ValueError:
            pass


def _general_binder(fn, self_obj):
    signature = inspect.signature(fn, follow_wrapped=False)

    def bind(*args, **kwargs):
        if self_obj is not None:
            args = (self_obj, *args)
        return frame_locals(fn, args, kwargs, signature)

    bind.source = "frame_locals (inspect.Signature.bind)"
    return bind


def output_code(spec, constant) -> str | None:
    """Python text rebuilding `spec` from the backend's output tuple `o`; None for kinds that
    need symbol values or objects (the general path rebuilds those)."""
    kind = spec.kind
    if kind == "tensor":
        return f"o[{spec.value}]"
    if kind == "const":
        return constant(spec.value)
    children = [output_code(c, constant) for c in spec.children]
    if None in children:
        return None
    if kind == "tuple":
        return "(" + "".join(f"{c}, " for c in children) + ")"
    if kind == "list":
        return "[" + ", ".join(children) + "]"
    if kind == "size":
        return f"{constant(torch.Size)}((" + "".join(f"{c}, " for c in children) + "))"
    if kind == "dict":
        keys = [constant(k) for k in spec.value]
        return "{" + ", ".join(f"{k}: {c}" for k, c in zip(keys, children, strict=True)) + "}"
    return None


def make_entry_call(entry):
    """`call(L, G, *inputs)` for `entry`: straight-line (asserts,) run + rebuild when nothing
    else is due (no mutated inputs, size outputs or resume), else `entry(L, G)`."""
    cap = entry.capture
    namespace = {"_entry": entry}
    namespace["_run"] = _resolving(entry.run, namespace)

    def constant(value) -> str:
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        name = f"k{len(namespace)}"
        namespace[name] = value
        return name

    rebuild = output_code(cap.output, constant)
    if (cap.mutated or getattr(cap, "resume", None) or rebuild is None
            or getattr(cap, "output_views", ()) or getattr(cap, "effects", ())):
        def general(L, G, *inputs):
            return entry(L, G)

        general.source = "entry(L, G)  # the general path: symc.cache.CacheEntry.__call__"
        return general
    args = ", ".join(f"a{i}" for i in range(len(cap.inputs)))
    # runtime asserts (`T <= block_size`) read the frame's sizes, as the general path does
    asserts = ["    _entry.asserts(L, G)"] if cap.env.asserts else []
    source = "\n".join([f"def call_entry(L, G{', ' if args else ''}{args}):",
                        "    _entry.hits += 1",
                        *asserts,
                        f"    o = _run({args})",
                        f"    return {rebuild}"]) + "\n"
    exec(compile(source, "<symc call_entry>", "exec"), namespace)  # noqa: S102 - generated
    call = namespace["call_entry"]
    call.source = source
    return call


def direct_callable(run):
    """The innermost callable `run` forwards its inputs and result to unchanged: each layer
    that only passes a call on names its target as `direct` (None while it has none yet, as
    a graph compiled at its first call). A layer that does anything else has no `direct`."""
    while (target := getattr(run, "direct", None)) is not None:
        run = target
    return run


def _resolving(run, namespace: dict):
    """`run` for the first call; then `namespace["_run"]` becomes `direct_callable(run)`: the
    generated call skips the frames that only pass the call on (graphs compile on first use)."""

    def first_call(*inputs):
        out = run(*inputs)
        namespace["_run"] = direct_callable(run)
        return out

    return first_call


def _any_autocast_fallback() -> bool:
    return any(torch.is_autocast_enabled(d) for d in ("cuda", "cpu"))


# `autocast_is_on()`: whether any autocast is on (the state is then part of the entries' key);
# torch's own function where it has one, called from the per-call path without a frame of ours
autocast_is_on = getattr(torch._C, "_is_any_autocast_enabled", _any_autocast_fallback)
