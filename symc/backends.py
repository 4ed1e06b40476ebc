"""The backend table: name -> function(Capture) -> run(*inputs) -> tuple of outputs.

    run = BACKENDS["eager"](capture)
    outputs = run(x, wte_weight, ...)      # one value per placeholder, in order

"eager" interprets the torch-level graph with torch itself; "prims" decomposes it into prims
(`prims.decompose`) and runs their reference implementations (`prims.run_reference`). Both are
plain torch code at run time, so autograd works through them. "aot_eager" and "inductor"
differentiate the prims graph ahead of time (autograd_aot) and run the forward and backward graphs
with prims' references or with inductor's generated kernels.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy
import torch
import torch.fx as fx

from symbolic import SymbolicError, SymcError
from symbolic.binding import SymbolReader, bind, source_readers
from symc.torch_graph import compile_torch_graph


class BackendError(SymcError):
    """An unknown backend name, or a backend whose stage is not available in this install."""


BACKENDS: dict[str, Callable] = {}


def register_backend(name: str, fn: Callable | None = None):
    """`register_backend("inductor", compile_fn)` or as a decorator."""
    def register(f):
        BACKENDS[name] = f
        return f

    return register(fn) if fn is not None else register


def get_backend(name):
    if callable(name):
        return name
    try:
        return BACKENDS[name]
    except KeyError:
        known = ", ".join(repr(k) for k in sorted(BACKENDS))
        raise BackendError(f"unknown backend {name!r}; available backends: {known}") from None


def symbol_readers(capture) -> list[SymbolReader]:
    """Where every symbol of the capture's env is read among the graph's inputs."""
    try:
        return list(source_readers(capture.env.symbols, capture.inputs))
    except SymbolicError as error:
        raise BackendError(str(error)) from None


@register_backend("eager")
def eager_backend(capture):
    graph = capture.graph
    run = compile_torch_graph(graph, symbol_readers(capture))
    run.graph = graph
    return run


def _decomposed(capture):
    """(prims graph, device of its rng_seed placeholder or None when it draws no randomness,
    what torch's generators must be after a run: prims.generators `rng_final`)."""
    import prims

    graph = prims.decompose(capture.graph, capture.env)
    seeds = [n.meta["val"].device for n in graph.nodes
             if n.op == "placeholder" and n.meta.get("rng_seed")]
    return graph, (seeds[0] if seeds else None), graph.rng_final


def _fresh_seed(device) -> torch.Tensor:
    """A seed for a graph's `rng_seed` placeholder, drawn from torch's generator so that
    `torch.manual_seed` makes compiled dropout reproducible."""
    return torch.randint(0, 2**31 - 1, (), dtype=torch.int64, device=device)


_AUTOCAST_DEVICES = ("cuda", "cpu")
_ANY_AUTOCAST = getattr(torch._C, "_is_any_autocast_enabled", None)


def _autocast_off(run):
    """A prims-level graph already holds the casts autocast asked for (prims.autocast): run it
    with the caller's autocast off so torch does not cast a second time.

    Only torch ops of the graph (an inductor graph's externs) see autocast: a graph that says
    it calls none (`autocast_free`, decided at compile time) runs as it is. Otherwise each
    device's flag is switched off and back around the call: what `torch.autocast(enabled=
    False)` does for the ops inside, without its Python context (9 us for two on the CPU)."""
    if getattr(run, "autocast_free", False):
        return run

    def run_without_autocast(*inputs):
        on = _autocast_devices()
        if not on:
            return run(*inputs)
        return _with_autocast_off(on, run, inputs)

    def boxed(args: list):
        from autograd_aot.runtime import call_boxed

        on = _autocast_devices()
        if not on:
            return call_boxed(run, args)
        return _with_autocast_off(on, call_boxed, (run, args))

    run_without_autocast.inner = run  # the backend's own object (a CompiledGraph for inductor)
    run_without_autocast.boxed = boxed  # the backward's call on a list it empties
    # which outputs share memory (autograd_aot's runtime saves those as views of user outputs)
    run_without_autocast.output_aliases = getattr(run, "output_aliases", ())
    # which saved outputs come back as permuted views (the backward reads them in place)
    run_without_autocast.output_dims = getattr(run, "output_dims", {})
    return run_without_autocast


def _autocast_devices() -> tuple:
    """The device types whose autocast is on (one torch call when none is)."""
    if _ANY_AUTOCAST is not None and not _ANY_AUTOCAST():
        return ()
    return tuple(d for d in _AUTOCAST_DEVICES if torch.is_autocast_enabled(d))


def _with_autocast_off(devices: tuple, fn, args: tuple):
    for device in devices:
        torch.set_autocast_enabled(device, False)
    try:
        return fn(*args)
    finally:
        for device in devices:
            torch.set_autocast_enabled(device, True)


def _without_autocast(compile_fn):
    return lambda graph, env=None: _autocast_off(compile_fn(graph, env))


def _generator_state(device):
    if device.type == "cuda":
        return torch.cuda.get_rng_state(device), lambda s: torch.cuda.set_rng_state(s, device)
    return torch.get_rng_state(), torch.set_rng_state


class Forward:
    """`run(*inputs)` unchanged, as an object of its own (the backend sets attributes on it);
    `direct` names `run`, so the per-call path calls it without this frame (symc/fast_path.py
    `direct_callable`). A class attribute: `functools.wraps` of it does not copy `direct`."""

    def __init__(self, run):
        self.target = run

    def __call__(self, *inputs):
        return self.target(*inputs)

    @property
    def direct(self):
        return self.target


def _with_seed(run, seed_device, final=None):
    """A new callable (attributes may be set on it) appending a fresh seed when needed, and
    leaving torch's generators as `final` (a prims.generators RngFinal) says: the draw
    generator "advanced" by the seed draw, "restored" to its state before the call, or
    ("seeded", c, drew): seeded with c, one more draw when the stream drew; then each other
    generator of `final.reseed` seeded with its c."""
    draw, reseed = (final.draw, final.reseed) if final is not None else ("advanced", ())
    if draw in ("advanced", "restored") and not reseed:
        if seed_device is None:
            return Forward(run)
        if draw == "advanced":
            return lambda *inputs: run(*inputs, _fresh_seed(seed_device))

    from prims.generators import seed_generator

    def run_with_generators(*inputs):
        if seed_device is None:
            outputs = run(*inputs)  # nothing drawn: only seeds to replay
        elif draw == "restored":
            state, restore = _generator_state(torch.device(seed_device))
            try:
                outputs = run(*inputs, _fresh_seed(seed_device))
            finally:
                restore(state)
        else:
            outputs = run(*inputs, _fresh_seed(seed_device))
        if draw not in ("advanced", "restored"):
            _, seed, drew = draw
            seed_generator(final.kind, seed)
            if drew:
                _fresh_seed(seed_device or torch.device(final.kind))
        for kind, seed in reseed:
            seed_generator(kind, seed)
        return outputs

    return run_with_generators


@register_backend("prims")
def prims_backend(capture):
    from prims import run_reference

    readers = symbol_readers(capture)
    graph, seed_device, final = _decomposed(capture)

    def run(*inputs):
        # sympy Integers: run_reference substitutes them with xreplace.
        values = {s: sympy.Integer(v) for s, v in bind(readers, inputs).items()}
        return tuple(run_reference(graph, list(inputs), values))

    wrapped = _with_seed(_autocast_off(run), seed_device, final)
    wrapped.graph = graph
    return wrapped


def _aot_backend(capture, compile_fn):
    from autograd_aot import compile_for_training

    graph, seed_device, final = _decomposed(capture)
    run = compile_for_training(graph, capture.env, None, _without_autocast(compile_fn))
    wrapped = _with_seed(run, seed_device, final)
    wrapped.graph = graph
    wrapped.compiled = run
    return wrapped


@register_backend("aot_eager")
def aot_eager_backend(capture):
    """Ahead-of-time forward/backward prims graphs, run with the prims' references."""
    from autograd_aot import reference_compile

    return _aot_backend(capture, reference_compile)


class ReferenceFallback:
    """A graph inductor could not compile (a dtype its kernels cannot hold, an op without a
    lowering): it runs the prims' reference implementations instead, and says why in
    `symc.explain(f).entries[i].generated_code` (never an error out of the user's call)."""

    kernels = 0
    backend = "reference"

    def __init__(self, graph: fx.Graph, env, reason: str):
        from autograd_aot import reference_compile

        self.reason = reason
        self.run = reference_compile(graph, env)
        self.source = (f"# inductor did not compile this graph: {reason}\n"
                       "# it runs the prims' reference implementations (as backend='aot_eager')\n")

    def __call__(self, *inputs):
        return self.run(*inputs)


def inductor_compile(graph: fx.Graph, env=None):
    import inductor
    from symc.logs import log

    try:
        compiled = inductor.compile_graph(graph, env)
    except (inductor.LoweringError, NotImplementedError) as e:
        fallback = ReferenceFallback(graph, env, f"{type(e).__name__}: {e}")
        log("breaks", "inductor fell back to the prims reference: %s", fallback.reason)
        return fallback
    log("kernels", "inductor (%s backend), %d kernel(s):\n%s", compiled.backend,
        compiled.kernels, compiled.source)
    return compiled


@register_backend("inductor")
def inductor_backend(capture):
    """Ahead-of-time forward/backward prims graphs, each compiled by inductor into size-generic
    kernels (C++/OpenMP on CPU, Triton on CUDA)."""
    return _aot_backend(capture, inductor_compile)


def lazy_compiles(run) -> dict:
    """{"forward"|"backward"|"inference": the lazily compiled graph holder} of an AOT backend's
    callable; each has `.compiled` (None until first use) and `.seconds`."""
    inner = getattr(run, "compiled", None)
    training = getattr(inner, "training", None)
    holders = {"forward": getattr(training, "forward", None),
               **_backward_holders(training),
               "inference": getattr(inner, "inference", inner)}
    return {name: h for name, h in holders.items() if hasattr(h, "compiled")}


def _backward_holders(training) -> dict:
    """The backward's holders: one variant per set of outputs given no gradient (a loss's logits
    get none), each compiled on first use. The first compiled one is "backward", the others
    name their absent outputs; with none compiled yet, the all-gradients one."""
    variants = getattr(training, "backward_variants", None)
    if not variants:
        return {"backward": getattr(training, "backward", None)}
    used = [(absent, lazy) for absent, lazy in variants.items() if lazy.compiled is not None]
    if not used:
        return {"backward": variants[frozenset()]}
    names = ["backward"] + [f"backward (no grad for outputs {sorted(absent)})"
                            for absent, _ in used[1:]]
    return dict(zip(names, (lazy for _, lazy in used)))
