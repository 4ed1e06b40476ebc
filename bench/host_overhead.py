"""symc's own host cost in a GPT training step, measured on a CPU with Triton launches stubbed.

    python bench/host_overhead.py --label after      # writes bench/results/host_overhead_after.json

A small GPT (the `--layers` / `--embd` / `--seq` shape, dropout on) is compiled with symc's
Triton backend (TRITON_INTERPRET=1, CPU tensors, set below) and stepped under
`triton_launch.stub_launches()`: every launch runs symc's whole host path (plan lookup,
alignment, argument packing, the compiled launcher's call sequence) and hands the arguments to a
no-op instead of a binary. One recording step notes each compiled-graph call, each wrapper
launch and extern call, and the autograd entry's calls; each is then replayed `--reps` times:
  - us per launch: symc's code per Triton launch, from the wrapper line to the binary's `run`;
  - us per compiled-graph call (forward, backward), and that minus its launches and externs
    (the wrapper's own lines: allocation, symbol reads);
  - the autograd.Function's own cost: forward + backward through the Function minus the two
    compiled graphs called directly, next to an empty autograd.Function (torch's floor).
Host time only: on the GPU, Triton's launcher and the driver add their own (bench/launch_overhead.py).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("SYMC_CPU_BACKEND", "triton")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import environment, print_table, write_json  # noqa: E402


ROUNDS = 25


def best_us(fn, reps: int) -> float:
    """The fastest of ROUNDS rounds of `reps` calls, in microseconds per call (the minimum: on
    a shared machine the other processes only ever add time)."""
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        rounds.append((time.perf_counter() - start) / reps * 1e6)
    return min(rounds)


class Recorder:
    """Notes, during one step, every compiled-graph call and, inside it, every call its wrapper
    makes to a kernel launcher or an extern (by swapping the wrapper's globals for a moment)."""

    def __init__(self):
        from inductor.compile import CompiledGraph

        self.cls = CompiledGraph
        self.original = CompiledGraph.__call__
        self.graph_calls: list = []  # (graph, inputs, launches, externs)

    def __enter__(self):
        recorder = self

        def call(graph, *inputs):
            launches, externs = [], []
            namespace = graph.run.__globals__
            swapped = {}
            for name, value in list(namespace.items()):
                kind = _kind_of(value, name)
                if kind is None:
                    continue
                swapped[name] = value
                log = launches if kind == "launch" else externs
                namespace[name] = _logged(value, log)
            try:
                out = recorder.original(graph, *inputs)
            finally:
                namespace.update(swapped)
            recorder.graph_calls.append((graph, inputs, launches, externs))
            return out
        self.cls.__call__ = call
        return self

    def __exit__(self, *exc):
        self.cls.__call__ = self.original


def _kind_of(value, name: str = "") -> str | None:
    """"launch", "extern" (a generated `run`, or the torch op a wrapper line calls as its
    extern `externN`) or None for a wrapper global."""
    from inductor.codegen.triton import GroupKernel
    from inductor.runtime.triton_launch import TritonKernel

    owner = getattr(value, "kernel", None)  # a generated launch function (triton_fast_launch)
    if isinstance(value, (GroupKernel, TritonKernel)) or isinstance(owner, TritonKernel):
        return "launch"
    code = getattr(value, "__code__", None)
    if getattr(value, "__name__", "") == "run" and (
            getattr(value, "__qualname__", "").startswith("make_extern")
            or getattr(code, "co_filename", "").startswith("<symc extern")):
        return "extern"
    if re.fullmatch(r"extern\d+", name):
        return "extern"
    return None


def _logged(fn, log: list):
    def call(*args):
        log.append((fn, args))
        return fn(*args)
    return call


def replay(calls, reps: int) -> float:
    def run():
        for fn, args in calls:
            fn(*args)
    return best_us(run, reps)


def build(args):
    import symc
    from bench.train_varlen import build_model
    from tests.models.models import GPTConfig, make_batch

    config = GPTConfig(vocab_size=256, block_size=args.seq, n_layer=args.layers, n_head=2,
                       n_embd=args.embd, dropout=0.1)
    model = build_model("gpt", config, "cpu", seed=0)
    batch = make_batch("gpt", 2, args.seq, vocab_size=256)
    return model, symc.compile(model, backend="inductor"), batch


def safe_empty(shape, strides, dtype, device):
    """The wrappers' `empty` (torch.empty_strided) while launches are stubbed: integer buffers
    zeroed, since no kernel fills them and an extern may index with them (scatter_add in the
    embedding's backward)."""
    out = torch.empty_strided(shape, strides, dtype=dtype, device=device)
    return out if dtype.is_floating_point else out.zero_()


def patch_wrapper_empty() -> None:
    from inductor import wrapper

    original = wrapper.WrapperWriter.__init__

    def init(self, *a, **k):
        original(self, *a, **k)
        self.globals["empty"] = safe_empty
    wrapper.WrapperWriter.__init__ = init


def autograd_runs():
    """Patch make_training_callable to note every `run` it returns with its inputs."""
    from autograd_aot import runtime

    noted: list = []
    original = runtime.make_training_callable

    def make(*a, **k):
        run = original(*a, **k)

        def noting(*inputs):
            noted.append((run, inputs))
            return run(*inputs)
        noting.__dict__.update(run.__dict__)
        return noting
    runtime.make_training_callable = make
    return noted


def empty_function_us(num_inputs: int, reps: int) -> float:
    """torch's floor: an autograd.Function that computes nothing, forward + backward."""

    class Empty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            return inputs[0].new_empty(())

        @staticmethod
        def backward(ctx, grad):
            return (None,) * num_inputs

    inputs = [torch.zeros((), requires_grad=True)] + [torch.zeros(()) for _ in
                                                         range(num_inputs - 1)]

    def step():
        Empty.apply(*inputs).backward()
    return best_us(step, reps)


def main() -> int:
    from inductor.runtime.triton_launch import stub_launches

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--label", default="after")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=32)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    torch.set_num_threads(1)  # the step's tensors are tiny; idle threads only add noise
    noted = autograd_runs()
    patch_wrapper_empty()
    model, compiled, batch = build(args)
    with stub_launches():
        for _ in range(2):  # compile, then fill every launcher's caches
            model.zero_grad(set_to_none=True)
            compiled(**batch)[1].backward()
        noted.clear()
        with Recorder() as rec:
            model.zero_grad(set_to_none=True)
            compiled(**batch)[1].backward()
        rows = []
        for graph, inputs, launches, externs in rec.graph_calls:
            total = best_us(lambda g=graph, i=inputs: g.run(*i), args.reps)
            launch_us = replay(launches, args.reps)
            extern_us = replay(externs, args.reps) if externs else 0.0
            rows.append({"graph": f"{len(inputs)} inputs", "us_call": total,
                         "launches": len(launches), "us_launches": launch_us,
                         "us_per_launch": launch_us / max(1, len(launches)),
                         "externs": len(externs), "us_externs": extern_us,
                         "us_wrapper_self": total - launch_us - extern_us})
        autograd = []
        for run, inputs in noted:
            outs = run(*inputs)
            diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
            grads = [torch.ones_like(o) for o in diff]

            def step(run=run, inputs=inputs, grads=grads):
                outs = run(*inputs)
                torch.autograd.backward([o for o in outs if o.requires_grad], grads)
            autograd.append({"inputs": len(inputs), "us_fwd_bwd": best_us(step, args.reps),
                             "us_empty_function": empty_function_us(len(inputs), args.reps)})
        model.zero_grad(set_to_none=True)

        def whole():
            compiled(**batch)[1].backward()
        step_us = best_us(whole, 1)
    graphs_us = sum(r["us_call"] for r in rows)
    for a in autograd:
        a["us_graphs"] = graphs_us
        a["us_function_own"] = a["us_fwd_bwd"] - graphs_us
    launches = sum(r["launches"] for r in rows)
    per_launch = sum(r["us_launches"] for r in rows) / max(1, launches)
    print_table(f"compiled-graph calls ({args.label})", rows,
                [("graph", "graph", ""), ("us_call", "us/call", ".1f"),
                 ("launches", "launches", ""), ("us_per_launch", "us/launch", ".2f"),
                 ("externs", "externs", ""), ("us_externs", "extern us", ".1f"),
                 ("us_wrapper_self", "wrapper self us", ".1f")])
    print_table("autograd entry", autograd,
                [("inputs", "inputs", ""), ("us_fwd_bwd", "fwd+bwd us", ".1f"),
                 ("us_graphs", "graphs us", ".1f"), ("us_function_own", "Function own us", ".1f"),
                 ("us_empty_function", "empty Function us", ".1f")])
    print(f"{launches} launches per step, {per_launch:.2f} us of symc code per launch; "
          f"whole step (forward + backward, host) {step_us:.0f} us")
    write_json(Path(args.out) / f"host_overhead_{args.label}.json",
               {"benchmark": "host_overhead", "label": args.label, "environment": environment(),
                "shape": {"layers": args.layers, "embd": args.embd, "seq": args.seq, "batch": 2},
                "launches_per_step": launches, "us_per_launch": per_launch,
                "us_step_host": step_us, "graphs": rows, "autograd": autograd})
    return 0


if __name__ == "__main__":
    sys.exit(main())
