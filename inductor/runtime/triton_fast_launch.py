"""The per-launch host path of a Triton kernel: one generated function per kernel, fixed arity.

    launch = make_launch(kernel)      # once per TritonKernel
    launch(buf0, buf1, s0, s1)        # every launch: the wrapper's line calls this

Per launch it reads each pointer once (`data_ptr()`, handed to Triton's launcher as an int, so
the launcher neither calls `data_ptr()` again nor asks the driver about it), looks the size
arguments up in the kernel's plans (`(s0, s1) -> [entry if a pointer is misaligned, entry if
all are 16-byte aligned]`, filled by the kernel's general path the first time a size tuple and
alignment is met) and calls the compiled binary's launcher with pre-packed constants: no
lists, dicts or closures are built. Anything else (a size tuple or alignment not planned yet,
a Triton launch hook installed, the interpreter, an empty launch) goes to the general path,
`TritonKernel.__call__`, which plans, launches and adds the entry.

How the binary is called is decided once per launcher class (`launcher_layout`): Triton's
`CompiledKernel.run(grid, stream, function, metadata, hooks, *args)` always works; where the
launcher's `__call__` is one of the known shapes below and the kernel needs no scratch memory,
its C `launch` is called directly, skipping a Python frame that defines closures per call.
SYMC_TRITON_DIRECT_LAUNCH=0 keeps every launch on `run`. Before all of these, where the binary
allows it, the "c" layout calls symc's own C launcher (runtime/c_launch.py: one cuLaunchKernel,
argument types read once); SYMC_C_LAUNCH=0 turns it off.
"""

from __future__ import annotations

import inspect
import os
import re

from inductor.runtime.c_launch import ENABLED as C_LAUNCH, c_launcher

DIRECT = os.environ.get("SYMC_TRITON_DIRECT_LAUNCH", "1") != "0"

# the argument text of the last `self.launch(...)` in a launcher class's `__call__`, by layout
# (whitespace removed): "annotated" is Triton 3.9's generic C launcher, "positional" the
# per-signature launchers of the 3.4-3.6 line. Only these exact shapes are called directly.
_LAYOUTS = {
    "annotated": "gridX,gridY,gridZ,stream,function,self.launch_cooperative_grid,self.launch_pdl,"
                 "kernel_metadata,launch_metadata,launch_enter_hook,launch_exit_hook,"
                 "global_scratch,profile_scratch,self.arg_annotations,self.kernel_signature,"
                 "kernel_args",
    "positional": "gridX,gridY,gridZ,stream,function,self.launch_cooperative_grid,"
                  "self.launch_pdl,global_scratch,profile_scratch,*args",
}
_SIGNATURES = {
    "annotated": "(self,gridX,gridY,gridZ,stream,function,kernel_metadata,launch_metadata,"
                 "launch_enter_hook,launch_exit_hook,*args)",
    "positional": "(self,gridX,gridY,gridZ,stream,function,*args)",
}
_layout_cache: dict = {}


def launcher_layout(launcher_type) -> str:
    """"annotated", "positional" or "run" (call the launcher object itself) for a class of
    Triton launchers, from the source of its `__call__` (read once per class)."""
    if launcher_type in _layout_cache:
        return _layout_cache[launcher_type]
    layout = "run"
    call = getattr(launcher_type, "__call__", None)
    try:
        source = inspect.getsource(call)
        signature = re.sub(r"\s+", "", str(inspect.signature(call)))
    except (OSError, TypeError, ValueError):
        source, signature = "", ""
    calls = source.split("self.launch(")
    if len(calls) > 1:
        text = re.sub(r"\s+", "", calls[-1])
        depth, end = 1, 0
        for end, ch in enumerate(text):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                break
        for name, args in _LAYOUTS.items():
            if text[:end] == args and signature == _SIGNATURES[name]:
                layout = name
    _layout_cache[launcher_type] = layout
    return layout


def _direct_ok(run, layout: str) -> bool:
    """The direct call passes no scratch buffers: only for kernels that need none."""
    if layout == "run" or not DIRECT:
        return False
    if getattr(run, "global_scratch_size", 1) or getattr(run, "profile_scratch_size", 1):
        return False
    return not getattr(run, "gsan_enabled", False)


def make_entry(binary, grid0: int, constexprs: tuple, counter: list, stream,
               arg_names=None) -> tuple:
    """What the generated launch function unpacks per launch: (layout, call, grid0, function,
    packed metadata, constexpr values, extra, counter, stream query, device). `extra` holds the
    direct layouts' constants; `stream` is (the current-stream query, the binary's device).
    Given the kernel's `arg_names`, the "c" layout (runtime/c_launch.py) is tried first."""
    run = binary.run
    if arg_names is not None and C_LAUNCH:
        launcher = c_launcher(binary, arg_names, stream[1])
        if launcher is not None:
            return ("c", launcher, grid0, binary.function, binary.packed_metadata, constexprs,
                    (), counter, *stream)
    layout = launcher_layout(type(run))
    if _direct_ok(run, layout):
        if layout == "annotated":
            extra = (run.launch_cooperative_grid, run.launch_pdl, run.arg_annotations,
                     run.kernel_signature)
        else:
            extra = (run.launch_cooperative_grid, run.launch_pdl)
        return (layout, run.launch, grid0, binary.function, binary.packed_metadata, constexprs,
                extra, counter, *stream)
    return ("run", run, grid0, binary.function, binary.packed_metadata, constexprs, (), counter,
            *stream)


# per layout, the call made with the entry's fields: `call`, `g` (grid0), `fn`, `pk` (packed
# metadata), `cx` (constexpr values), `x` (extra constants), `st(dv)` (the current stream of
# the binary's device) and the launch's own values `ARGS`
_CALLS = {
    "c": "call(g, st(dv), ARGS)",
    "run": "call(g, 1, 1, st(dv), fn, pk, None, None, None, ARGS, *cx)",
    "annotated": "call(g, 1, 1, st(dv), fn, x[0], x[1], pk, None, None, None, None, None, "
                 "x[2], x[3], (ARGS, *cx))",
    "positional": "call(g, 1, 1, st(dv), fn, x[0], x[1], None, None, pk, None, None, None, "
                  "ARGS, *cx)",
}

_TEMPLATE = """\
def launch({params}):
{reads}    plan = plans_get(({key}))
    if plan is not None:
        e = plan[not ({align}) & 15]
        if e is not None:
            en = rt.launch_enter_hook
            ex = rt.launch_exit_hook
            if (en is None or (en.__class__ is Chain and not en.calls)) and (
                    ex is None or (ex.__class__ is Chain and not ex.calls)):
                layout, call, g, fn, pk, cx, x, n, st, dv = e
                n[0] += 1
                counters["launches"] += 1
{dispatch}                return
    slow({params})
"""


def launch_source(num_pointers: int, num_scalars: int) -> str:
    """The launch function's source for a kernel of this arity (see the module docstring)."""
    ptrs = [f"p{i}" for i in range(num_pointers)]
    scalars = [f"v{i}" for i in range(num_scalars)]
    params = ", ".join(ptrs + scalars)
    reads = "".join(f"    a{i} = p{i}.data_ptr()\n" for i in range(num_pointers))
    key = "".join(f"{v}, " for v in scalars)
    align = " | ".join(f"a{i}" for i in range(num_pointers)) or "0"
    args = ", ".join([f"a{i}" for i in range(num_pointers)] + scalars)
    dispatch = ""
    for i, (layout, call) in enumerate(_CALLS.items()):
        word = "if" if i == 0 else "elif"
        dispatch += f"                {word} layout == {layout!r}:\n"
        dispatch += f"                    {call.replace('ARGS', args)}\n"
    return _TEMPLATE.format(params=params, reads=reads, key=key, align=align,
                            dispatch=dispatch)


def make_launch(kernel, namespace: dict):
    """The launch function of `kernel` (a TritonKernel): `namespace` supplies `plans_get`,
    `slow`, `rt` (Triton's runtime knobs), `Chain` (its hook-chain class) and `counters`."""
    spec = kernel.spec
    source = launch_source(len(spec.pointer_args), len(spec.args) - len(spec.pointer_args))
    scope = dict(namespace)
    exec(compile(source, f"<symc launch {spec.name}>", "exec"), scope)
    launch = scope["launch"]
    launch.kernel = kernel
    launch.source = source
    return launch
