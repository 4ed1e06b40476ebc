"""`compile_graph`: prims fx graph -> CompiledGraph (lower, fuse, generate kernels, wrap).

    cg = compile_graph(graph, env)          # backend: "cpp" on CPU, "triton" on CUDA
    cg(x, w)                                # -> tuple of tensors, any sizes the graph allows
    print(cg.source)                        # wrapper + kernel sources
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch.fx as fx

from inductor.graph import GraphLowering
from inductor.ir import Buffer, ExternNode, LoweringError
from inductor.kernels import BACKENDS
from inductor.scheduler import finalize, schedule
from symbolic import Analyzer, TensorMeta

# backends whose reductions split into partial and final sums (inductor/reduction_split.py):
# Triton's grid is one program per output block, so few outputs need more programs; "torch"
# evaluates the same IR (bench/kernel_census.py's stand-in for the GPU step). C++/OpenMP
# threads already share a long reduction, and a column sum runs rows outer over blocks of columns
# (codegen/cpp_outer.py): split, the GPT's [16 * 72, C] bias sums measured 4x slower or worse.
SPLIT_BACKENDS = frozenset({"triton", "torch"})


@dataclass
class CompiledGraph:
    """Callable `(*inputs) -> tuple`; `.source` is the wrapper and the kernels."""

    run: object
    wrapper_source: str
    kernel_source: str
    kernels: int
    backend: str
    steps: list = field(default_factory=list)
    reused_buffers: int = 0
    distinct_kernels: int | None = None  # kernels compiled for `kernels` groups (dedupe)
    buffers: dict = field(default_factory=dict)  # name -> Buffer (sizes of steps' buffers)
    boxed_run: object = None  # `call_boxed(args)`: the wrapper emptying its input list
    # (output index, index of an earlier output whose memory it shares): a training forward's
    # saved value in a user output's buffer (see GraphLowering._outputs)
    output_aliases: tuple = ()
    # output index -> dims: returned as `buffer.permute(dims)`, a view (GraphLowering.output_dims)
    output_dims: dict = field(default_factory=dict)

    def __call__(self, *inputs) -> tuple:
        return self.run(*inputs)

    @property
    def direct(self):
        """The generated wrapper itself: what a call runs (the per-call path calls it)."""
        return self.run

    def boxed(self, args: list) -> tuple:
        """The call on a list of inputs it empties: each input is freed after its last use
        when the caller holds no other reference (the backward's saved tensors)."""
        if self.boxed_run is None:
            inputs = tuple(args)
            args.clear()
            return self.run(*inputs)
        return self.boxed_run(args)

    @property
    def autocast_free(self) -> bool:
        """Whether no torch op runs in a call (no extern; kernels that are not torch
        evaluations): the caller's autocast cannot change it (symc/backends.py `_autocast_off`)."""
        return self.backend in ("triton", "cpp") and not any(
            isinstance(step, ExternNode) for step in self.steps)

    @property
    def source(self) -> str:
        return f"{self.wrapper_source}\n# ---- kernels ({self.backend}) ----\n{self.kernel_source}"

    def __str__(self) -> str:
        return self.source


def _device_of(graph: fx.Graph) -> str:
    devices = [(meta.device, 0 in meta.shape) for node in graph.nodes
               if node.op == "placeholder" and isinstance(meta := node.meta.get("val"), TensorMeta)]
    # an empty input (capture's carrier of an int argument, always on the CPU) decides nothing
    for device, empty in sorted(devices, key=lambda d: d[1]):
        return str(device)
    return "cpu"


def choose_backend(graph: fx.Graph, requested: str | None) -> str:
    if requested is not None:
        if requested not in BACKENDS:
            raise LoweringError(f"expected device_backend in {sorted(BACKENDS)} or None, found "
                                f"{requested!r}")
        return requested
    if _device_of(graph).startswith("cuda"):
        return "triton"
    return os.environ.get("SYMC_CPU_BACKEND", "cpp")


def _expressible_dtypes(backend: str) -> frozenset | None:
    if backend == "triton":
        from inductor.codegen.triton_printer import TRITON_DTYPES
        return frozenset(TRITON_DTYPES)
    if backend == "cpp":
        from inductor.codegen.cpp_ops import STORAGE_CTYPE
        return frozenset(STORAGE_CTYPE)
    return None  # "torch": the IR evaluated with torch takes any dtype


def check_dtypes(graph: fx.Graph, backend: str) -> None:
    """Raise LoweringError, before any code is generated, when a tensor of the graph has a
    dtype the backend's kernels cannot hold (complex64 in Triton or C++, say)."""
    allowed = _expressible_dtypes(backend)
    if allowed is None:
        return
    for node in graph.nodes:
        meta = node.meta.get("val")
        for m in meta if isinstance(meta, (tuple, list)) else (meta,):
            if isinstance(m, TensorMeta) and m.dtype not in allowed:
                names = ", ".join(sorted(str(d).removeprefix("torch.") for d in allowed))
                target = getattr(node.target, "__name__", node.target)
                raise LoweringError(
                    f"expected dtypes the {backend} backend can express ({names}), found "
                    f"{m.dtype} at {node.op} {node.name} ({target})")


def compile_graph(graph: fx.Graph, env=None, *, device_backend: str | None = None
                  ) -> CompiledGraph:
    """Compile a prims-level graph; symbol values are read from the inputs on every call."""
    from inductor.wrapper import build_wrapper

    backend = choose_backend(graph, device_backend)
    check_dtypes(graph, backend)
    an = Analyzer(env)  # every size question of the backend, passed down explicitly
    lowering = GraphLowering(graph, an, _device_of(graph),
                             split_reductions=backend in SPLIT_BACKENDS).run()
    live = {b.name for b in lowering.outputs if isinstance(b, Buffer)}
    steps = finalize(schedule(lowering.nodes, an), lowering.buffers, live)
    groups = [s for s in steps if not isinstance(s, ExternNode)]
    kernel_set = BACKENDS[backend](groups, an)
    source, run, reused, boxed = build_wrapper(lowering, steps, kernel_set, an)
    distinct = kernel_set.distinct if kernel_set.distinct is not None else len(groups)
    return CompiledGraph(run, source, kernel_set.source, len(groups), backend, steps, reused,
                         distinct, lowering.buffers, boxed, output_aliases(lowering.outputs),
                         {i: dims for i, (dims, _) in lowering.output_dims.items()})


def output_aliases(outputs: list) -> tuple:
    """(i, j) for each output i whose buffer an earlier output j (the first one) also is."""
    first: dict[str, int] = {}
    pairs = []
    for i, out in enumerate(outputs):
        if isinstance(out, Buffer):
            if out.name in first:
                pairs.append((i, first[out.name]))
            else:
                first[out.name] = i
    return tuple(pairs)
