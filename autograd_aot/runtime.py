"""Running split graphs under eager autograd: one torch.autograd.Function per compiled entry.

    run = compile_for_training(graph, env, requires_grad, compile_fn)
    loss, = run(x, w)            # forward graph; saved values kept on the autograd ctx
    loss.backward()              # backward graph, compiled once (on first use) for all sizes

`compile_fn(graph, env) -> callable(*inputs) -> tuple` is the backend: `reference_compile` runs
prims' reference implementations ("aot_eager"), inductor passes its compile_graph. Under
`torch.no_grad()` (or when no input that may require grad does) only the untouched forward
graph runs, compiled on first use.

Gradients are eager's: an input whose grad no output reaches (a detached parameter), or only
outputs the backward got no grad for, gets None, not zeros. With `create_graph=True` (a gradient
penalty, double backward) the backward must itself be differentiable: the forward graph is run
again with prims' reference implementations under torch autograd and differentiated by torch.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import sympy
import torch
import torch.fx as fx

from autograd_aot.errors import AutogradError
from autograd_aot.split import SplitGraphs, split, without_tangents
from prims import run_reference, symbol_values
from prims.trace import INPUT_PERMUTE
from symbolic import ShapeEnv, TensorMeta
from symbolic.binding import symbol_readers


def reference_compile(graph: fx.Graph, env: ShapeEnv | None = None) -> Callable:
    """A compile_fn running `graph` with every prim's reference implementation."""

    def run(*inputs):
        symbols = {s: sympy.Integer(v) for s, v in symbol_values(graph, inputs).items()}
        return run_reference(graph, inputs, symbols)

    return run


class _Lazy:
    """A graph compiled on first call, then reused for every size."""

    def __init__(self, graph: fx.Graph, env, compile_fn):
        self.graph, self.env, self.compile_fn = graph, env, compile_fn
        self.compiled = None
        self.seconds = 0.0  # time spent in compile_fn

    def _ready(self):
        if self.compiled is None:
            start = time.perf_counter()
            self.compiled = self.compile_fn(self.graph, self.env)
            self.seconds = time.perf_counter() - start
        return self.compiled

    def __call__(self, *inputs):
        return self._ready()(*inputs)

    @property
    def direct(self):
        """The compiled graph once there is one (the per-call path then calls it itself)."""
        return self.compiled

    def boxed(self, args: list):
        """The call on a list it empties (see `call_boxed`)."""
        return call_boxed(self._ready(), args)


def call_boxed(fn, args: list):
    """`fn(*args)`, emptying `args` first: a callable with `.boxed(list)` (inductor's wrapper)
    frees each input after its last use when `args` held the only other reference."""
    boxed = getattr(fn, "boxed", None)
    if boxed is not None:
        return boxed(args)
    inputs = tuple(args)
    args.clear()
    return fn(*inputs)


def make_inference_callable(graph: fx.Graph, env: ShapeEnv, compile_fn) -> Callable:
    """The forward-only graph, compiled on first call."""
    return _Lazy(graph, env, compile_fn)


def make_training_callable(split_graphs: SplitGraphs, compile_fn) -> Callable:
    """A callable `run(*inputs) -> tuple` whose tensor outputs carry a grad_fn into the backward
    graph. Grads flow to the inputs flagged in `split_graphs.requires_grad`. Both graphs are
    compiled on first use (the backward at the first backward call), once for all sizes."""
    s = split_graphs
    forward = _Lazy(s.forward, s.env, compile_fn)
    backward = _Lazy(s.backward, s.env, compile_fn)
    # per set of absent tangents, the backward that makes their zeros inside (compiled lazily)
    variants = {frozenset(): backward}

    def backward_for(absent: frozenset) -> _Lazy:
        if absent not in variants:
            variants[absent] = _Lazy(without_tangents(s.backward, absent), s.env, compile_fn)
        return variants[absent]
    differentiable = s.output_differentiable
    wanted = s.requires_grad
    sources = s.grad_sources or tuple(frozenset(range(len(differentiable))) for _ in wanted)
    needed_symbols = s.symbols
    num_outs = s.num_outputs + s.num_saved_outputs  # derived once, not on every call
    draws_random = any(n.op == "placeholder" and n.meta.get("rng_seed")
                       for n in s.original.nodes)
    readers = _symbol_readers(s.forward, needed_symbols)  # bound once, read on every call
    layouts_marked: list = []  # once the forward is compiled (see _mark_saved_layouts)

    class CompiledFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            outs = tuple(forward(*inputs))
            if not layouts_marked:
                layouts_marked.append(_mark_saved_layouts(s, forward.compiled))
            if len(outs) != num_outs:
                raise AutogradError(f"compiled forward returned {len(outs)} values, expected "
                                    f"{s.num_outputs} outputs + {s.num_saved_outputs} saved")
            user = outs[:s.num_outputs]
            saved = s.saved_values(inputs, _as_views(outs, s.num_outputs, forward))
            if isinstance(readers, AutogradError):
                raise readers
            ctx.symbol_args = tuple([read(inputs) for read in readers])
            ctx.save_for_backward(*saved)
            ctx.num_inputs = len(inputs)
            # For a differentiable backward (create_graph=True) only: the inputs themselves.
            ctx.inputs = inputs
            ctx.versions = tuple(x._version if isinstance(x, torch.Tensor) else None
                                 for x in inputs)
            ctx.set_materialize_grads(False)
            frozen = [o for o, d in zip(user, differentiable)
                      if isinstance(o, torch.Tensor) and not d]
            if frozen:
                ctx.mark_non_differentiable(*frozen)
            return user

        @staticmethod
        def backward(ctx, *grad_outputs):
            given = [g for g, d in zip(grad_outputs, differentiable) if d]
            if torch.is_grad_enabled():  # create_graph=True: grads must be differentiable
                return _differentiable_backward(s, ctx, given, draws_random)
            present = [g is not None for g in given]
            # an absent grad (an output the loss does not use) is zeros made by the backward
            # graph itself, not a zero-filled tensor passed in
            absent = frozenset(i for i, p in enumerate(present) if not p)
            tangents = [g.contiguous() for g in given if g is not None]
            args = [*ctx.saved_tensors, *ctx.symbol_args, *tangents]
            del tangents, given, grad_outputs
            # autograd's references go now (kept under retain_graph=True), the list's in the
            # call: each saved tensor is freed after its last use in the backward graph
            ctx.maybe_clear_saved_tensors()
            grads = iter(backward_for(absent).boxed(args))
            out = []
            for w, src in zip(wanted, sources):
                g = next(grads) if w else None
                out.append(g if g is not None and any(present[j] for j in src) else None)
            return tuple(out)

    def run(*inputs):
        return CompiledFunction.apply(*inputs)

    run.function = CompiledFunction
    run.forward, run.backward = forward, backward  # each compiled on first use
    run.backward_variants = variants  # by the tangents absent at the call
    run.split = s
    return run


def _mark_saved_layouts(s: SplitGraphs, compiled_forward) -> int:
    """Tell the backward graph's compile (still to come: it is lazy) which saved tensors the
    compiled forward returns as `buffer.permute(dims)` (inductor's `output_dims`: attention's
    output in the memory order of its operands), so the backward reads them in place instead of
    copying them to contiguous (placeholder meta INPUT_PERMUTE). Returns how many it marked."""
    dims_of = getattr(compiled_forward, "output_dims", None) or {}
    placeholders = [n for n in s.backward.nodes if n.op == "placeholder"]
    output, marked = s.num_outputs, 0
    for k, source in enumerate(s.info.saved_inputs):
        if source >= 0:  # a forward input, saved as the caller passed it
            continue
        dims = dims_of.get(output)
        output += 1
        if dims is not None:
            placeholders[k].meta[INPUT_PERMUTE] = tuple(dims)
            marked += 1
    return marked


def _as_views(outs: tuple, num_user: int, forward: _Lazy) -> list:
    """The saved outputs, each one that shares a user output's memory (a compiled forward's
    `output_aliases`: logits returned and saved for the cross-entropy's backward, one buffer)
    made a view of that output's detached alias: they share its version counter, so an in-place
    change of the user's tensor before the backward raises in autograd (eager's "modified by an
    inplace operation") instead of silently changing what was saved."""
    saved = list(outs[num_user:])
    for i, j in getattr(forward.compiled, "output_aliases", ()):
        if i >= num_user and j < num_user:
            t = saved[i - num_user]
            saved[i - num_user] = outs[j].detach().as_strided(t.shape, t.stride(),
                                                              t.storage_offset())
    return saved


def _symbol_readers(graph: fx.Graph, symbols) -> list | AutogradError:
    """Per symbol the backward needs, `read(inputs) -> int` from the forward graph's inputs
    (symbolic/binding.py's readers); the error to raise at a call when one has no source."""
    placeholders = [n.meta.get("val") for n in graph.nodes if n.op == "placeholder"]
    shapes = [tuple(m.shape) if isinstance(m, TensorMeta) else
              m if isinstance(m, sympy.Symbol) else None for m in placeholders]
    by_symbol = {r.symbol: r for r in symbol_readers(shapes)}
    missing = [str(x) for x in symbols if x not in by_symbol]
    if missing:
        return AutogradError(f"the backward needs symbols {missing}, which no input size of "
                             f"the forward graph gives")
    return [by_symbol[x].read for x in symbols]


def _differentiable_backward(s: SplitGraphs, ctx, given: list, draws_random: bool) -> tuple:
    """The grads of a `create_graph=True` backward, themselves differentiable: the forward prims
    graph run again on the saved inputs with reference implementations under torch autograd,
    then `torch.autograd.grad(..., create_graph=True)` through it."""
    inputs = ctx.inputs
    if draws_random:
        raise AutogradError("create_graph=True (double backward) through a compiled graph that "
                            "draws random numbers (dropout, rand) is not supported: the forward "
                            "cannot be recomputed with the same numbers; compile with "
                            "backend='eager' or disable dropout")
    for x, version in zip(inputs, ctx.versions):
        if isinstance(x, torch.Tensor) and x._version != version:
            raise AutogradError("create_graph=True (double backward): an input of the compiled "
                                "function was modified in place after its forward; expected "
                                f"version {version}, found {x._version}")
    targets = [i for i, (w, x) in enumerate(zip(s.requires_grad, inputs))
               if w and isinstance(x, torch.Tensor) and x.requires_grad]
    with torch.enable_grad():
        outs = run_reference(s.original, list(inputs))
        pairs = [(o, g) for o, d, g in zip(outs, s.output_differentiable, _spread(given, s))
                 if d and g is not None and o.requires_grad]
        grads = [None] * len(targets)
        if pairs and targets:
            grads = torch.autograd.grad([o for o, _ in pairs], [inputs[i] for i in targets],
                                        [g for _, g in pairs], create_graph=True,
                                        allow_unused=True)
    out = [None] * len(inputs)
    for i, g in zip(targets, grads):
        out[i] = g
    return tuple(out)


def _spread(given: list, s: SplitGraphs):
    """The grads of the differentiable outputs, one per output (None for the others)."""
    rest = iter(given)
    return [next(rest) if d else None for d in s.output_differentiable]


def requires_grad_flags(graph: fx.Graph) -> list:
    """One flag per placeholder: a floating tensor whose TensorMeta says requires_grad."""
    flags = []
    for node in graph.nodes:
        if node.op == "placeholder":
            meta = node.meta.get("val")
            flags.append(isinstance(meta, TensorMeta) and meta.requires_grad
                         and (meta.dtype.is_floating_point or meta.dtype.is_complex))
    return flags


def compile_for_training(graph: fx.Graph, env: ShapeEnv, requires_grad, compile_fn) -> Callable:
    """Split, compile and wrap: `run(*inputs) -> tuple`, differentiable where grads are needed.

    `requires_grad` has one flag per placeholder (None: read from the placeholders' TensorMetas).
    With grad disabled, or when no flagged input requires grad at this call, only the
    forward-only graph runs (compiled on first use).
    """
    requires_grad = requires_grad_flags(graph) if requires_grad is None else list(requires_grad)
    inference = make_inference_callable(graph, env, compile_fn)
    if not any(requires_grad):
        return inference
    training = make_training_callable(split(graph, env, requires_grad), compile_fn)

    def run(*inputs):
        needs_grad = torch.is_grad_enabled() and any(
            flag and isinstance(x, torch.Tensor) and x.requires_grad
            for flag, x in zip(requires_grad, inputs))
        return training(*inputs) if needs_grad else tuple(inference(*inputs))

    run.training = training
    run.inference = inference
    return run
