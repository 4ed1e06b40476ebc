"""Where the host time of a symc training step goes, by category, on a CPU with launches stubbed.

    python bench/host_profile.py --label before     # a run in bench/results/host_profile_cpu.json

A GPT with GPT-2 small's structure (12 layers, 12 heads; `--embd` / `--seq` tiny so the CPU
externs stay cheap) is compiled with symc's Triton backend (TRITON_INTERPRET=1, CPU tensors) and
stepped (forward + backward, no optimizer) with CUDA bf16 autocast's flag set (`cuda_autocast`:
CPU tensors get no casts, but the per-call path is the one a CUDA bf16 step takes: the general
cache path, `_autocast_off`'s contexts; symc refuses CPU autocast's op lists), and under
`triton_launch.stub_launches()` (every launch runs symc's host path, no kernel runs).

Direct timers: each piece of the call path is wrapped for the measured steps by a region timer
that charges its time to its own category and subtracts it from its caller's (exclusive times;
the timer's own cost is calibrated and taken off). The categories:
  symc entry      CompiledFunction.__call__ and the general cache path (bind, modes, rebuild)
  guard check     the entry's generated checker, or its guarded call (guards and input reads
                  in one generated function) where the step takes that path
  read inputs     the entry's input reader (the general path only)
  seed draw       the fresh dropout seed (one torch.randint per call)
  autograd apply  torch.autograd.Function.apply's own machinery (+ compile_for_training's run)
  Function fwd    CompiledFunction.forward's body (ctx, save_for_backward, symbol readers)
  Function bwd    CompiledFunction.backward's body (tangents, argument list)
  autocast off    `_autocast_off`'s checks and its two autocast contexts
  wrapper         the generated wrapper's own lines (contiguity checks, symbols, views, dels)
  allocation      `empty(...)` calls of the wrapper (alloc + free)
  launch          symc's Triton launch path up to the (stubbed) binary
  extern glue     the generated extern `run` minus the torch op it calls (operand views, output
                  contiguity)
  extern torch    the torch op of an extern (torch's Python + dispatch + tiny CPU compute)
The five inside the graph calls are timed line by line (`line_split`: each wrapper re-run with a
timer per line on the inputs of a recorded step, each line's minimum over the rounds); an extern
line is split into torch op and glue in the proportion the replayed calls show (`replay_split`).
The region timers serve the rest (few calls each).
  engine          loss.backward()'s autograd engine minus the compiled backward (grad
                  accumulation into .grad included: eager pays that too)
  zero_grad       model.zero_grad(set_to_none=True) (eager pays it too)
A cProfile of the same steps (top functions by own time) is written next to it.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("SYMC_CPU_BACKEND", "triton")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import (  # noqa: E402
    environment, print_table, record_wrapper_inputs, write_json)

CATEGORIES = ("symc entry", "guard check", "read inputs", "seed draw", "autograd apply",
              "Function fwd", "Function bwd", "autocast off", "wrapper", "allocation", "launch",
              "extern glue", "extern torch", "engine", "zero_grad")


class Regions:
    """Exclusive time per category: a region's time minus its child regions' (and minus the
    calibrated cost of timing each child)."""

    def __init__(self):
        self.total = defaultdict(float)
        self.calls = defaultdict(int)
        self.stack: list[list] = []  # [category, children's inclusive seconds]
        self.on = False
        self.child_cost = 0.0  # seconds a timed child adds to its parent beyond its interval

    def wrap(self, category: str, fn):
        if getattr(fn, "_timed", False):
            return fn
        regions = self
        clock = time.perf_counter

        def timed(*args, **kwargs):
            if not regions.on:
                return fn(*args, **kwargs)
            frame = [category, 0.0]
            regions.stack.append(frame)
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = clock() - start
                regions.stack.pop()
                regions.total[category] += spent - frame[1]
                regions.calls[category] += 1
                if regions.stack:
                    regions.stack[-1][1] += spent + regions.child_cost
        timed._timed = True
        timed.__wrapped__ = fn
        for attr in ("source", "boxed", "inner", "kernel"):
            if hasattr(fn, attr):
                setattr(timed, attr, getattr(fn, attr))
        return timed

    def calibrate(self) -> None:
        """The cost a timed child adds to its parent outside its own measured interval."""
        noop = self.wrap("calibration", lambda: None)
        parent = self.wrap("calibration parent", lambda n: [noop() for _ in range(n)])
        plain = lambda n: [(lambda: None)() for _ in range(n)]  # noqa: E731
        self.on, n, best = True, 2000, []
        for _ in range(20):
            self.total.clear()
            t0 = time.perf_counter()
            plain(n)
            base = time.perf_counter() - t0
            parent(n)
            best.append((self.total["calibration parent"] - base) / n)
        self.on = False
        self.child_cost = max(0.0, min(best))
        self.total.clear()
        self.calls.clear()


def instrument(compiled_module, regions: Regions) -> None:
    """Wrap every piece of the call path of the (already compiled) entries in timers."""
    import symc.backends as backends
    from autograd_aot import runtime
    from symc import cache
    from symc.fast_path import make_entry_call

    backends._fresh_seed = regions.wrap("seed draw", backends._fresh_seed)
    call = cache.CompiledFunction.__call__
    cache.CompiledFunction.__call__ = regions.wrap("symc entry", call)
    for cf in list(cache._ALL):
        for entry in cf.entries:
            entry.checker = _wrapped_checker(regions, entry.checker)
            entry.read_inputs = regions.wrap("read inputs", entry.read_inputs)
            run = entry.run
            if getattr(run, "compiled", None) is None:
                continue
            entry.run = regions.wrap("autograd apply", run)
            # the generated per-call path (guards, input reads, run), rebuilt around the timers
            entry.guarded = regions.wrap("guard check", entry.checker.guarded(
                make_entry_call(entry)))
            training = getattr(run.compiled, "training", None)
            if training is None:
                continue
            fn = training.function
            fn.forward = staticmethod(regions.wrap("Function fwd", fn.forward))
            fn.backward = staticmethod(regions.wrap("Function bwd", fn.backward))
            for lazy in (training.forward, *training.backward_variants.values()):
                if lazy.compiled is not None:  # the backward variants the steps ran
                    _instrument_lazy(regions, lazy)
        cf._refresh()
    del runtime, compiled_module


def _wrapped_checker(regions: Regions, checker):
    class Timed:
        def __init__(self):
            self.call = regions.wrap("guard check", checker)

        def __call__(self, L, G):
            return self.call(L, G)

        def __getattr__(self, name):
            return getattr(checker, name)
    return Timed()


def _instrument_lazy(regions: Regions, lazy) -> None:
    """The graph call as one region ("wrapper", split later by `replay_split`): timing each of
    its ~1,000 launches, externs and allocations would cost more than some of them take."""
    compiled = lazy._ready()
    graph = getattr(compiled, "inner", compiled)
    if not hasattr(graph, "boxed_run"):
        return
    if graph is not compiled:
        timed = regions.wrap("autocast off", compiled)
        timed.boxed = regions.wrap("autocast off", compiled.boxed)
        lazy.compiled = timed
    graph.run = regions.wrap("wrapper", graph.run)
    if graph.boxed_run is not None:
        graph.boxed_run = regions.wrap("wrapper", graph.boxed_run)


def compiled_graphs() -> list:
    """Every CompiledGraph the compiled entries have built (forward, and each backward variant
    that ran: a step whose loss leaves an output unused runs the variant without its tangent,
    never `training.backward` itself)."""
    from symc import cache

    graphs = []
    for cf in list(cache._ALL):
        for entry in cf.entries:
            training = getattr(getattr(entry.run, "compiled", None), "training", None)
            lazies = [training.forward, *training.backward_variants.values()] if training else []
            for lazy in lazies:
                if lazy.compiled is not None:
                    graphs.append(getattr(lazy.compiled, "inner", lazy.compiled))
    return graphs


def record_graph_calls(graphs, step) -> dict:
    """One step's calls made inside the wrappers, by kind: (fn, args) of each launch, extern
    `run`, extern torch op (`ref`, with the views the extern made) and allocation."""
    calls: dict = {"launch": [], "extern": [], "ref": [], "allocation": []}
    restore = []

    def logged(fn, *logs):
        def call(*args, **kwargs):
            for log in logs:
                log.append((fn, args, kwargs))
            return fn(*args, **kwargs)
        return call
    for graph in graphs:
        namespace = graph.run.__globals__
        for name, value in list(namespace.items()):
            kind = "allocation" if name == "empty" else _kind_of(value)
            if kind is None and re.fullmatch(r"extern\d+", name):
                # a torch op the wrapper calls on its own line: the extern is its op, no glue
                restore.append((namespace, name, value))
                namespace[name] = logged(value, calls["ref"], calls["extern"])
                continue
            if kind is None:
                continue
            restore.append((namespace, name, value))
            namespace[name] = logged(value, calls[kind])
            if kind == "extern":
                scope = value.__globals__
                restore.append((scope, "ref", scope["ref"]))
                scope["ref"] = logged(scope["ref"], calls["ref"])
    try:
        step()
    finally:
        for namespace, name, value in reversed(restore):
            namespace[name] = value
    return calls


def replay_split(calls: dict, rounds: int) -> dict:
    """Microseconds per step of each kind of call, replayed back to back (min of `rounds`)."""
    out = {}
    for kind, log in calls.items():
        def run(log=log):
            for fn, args, kwargs in log:
                fn(*args, **kwargs)
        best = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            run()
            best.append((time.perf_counter() - t0) * 1e6)
        out[kind] = min(best)
    return out


def line_kind(line: str) -> str:
    """The category of one line of a generated wrapper."""
    text = line.strip()
    if "= empty(" in text:
        return "allocation"
    if re.search(r"=\s*extern\d+\(", text):  # `bufs = externN(` or `:= externN(` (inline)
        return "extern"
    if re.match(r"k\d+_\w+\(", text):
        return "launch"
    return "wrapper"


def line_split(graphs, step, rounds: int) -> dict:
    """Per category, the microseconds one step's graph calls spend on lines of that kind: each
    wrapper is re-generated with a timer around every line and called on the inputs it got in
    a recorded step; each line's minimum over `rounds` calls (a preempted line inflates one
    call only). The timer adds ~0.1 us per line."""
    namespaces = {id(graph): graph.run.__globals__ for graph in graphs}
    inputs = record_wrapper_inputs(graphs, step)
    totals: dict = defaultdict(float)
    for graph in graphs:
        if id(graph) not in inputs:
            continue  # not called by this step
        lines = graph.wrapper_source.splitlines()
        body = [lines[0]]
        for i, line in enumerate(lines[1:]):
            indent = line[:len(line) - len(line.lstrip())]
            if line.rstrip().endswith(":"):  # a block's header (`if deferred:`): untimed
                body.append(line)
                continue
            code = line.replace("return ", "__out = ", 1) if line.strip().startswith(
                "return ") else line
            body += [f"{indent}__t = __clock()", code, f"{indent}__spent[{i}] = __clock() - __t"]
            if code is not line:
                body.append(f"{indent}return __out")
        namespace = dict(namespaces[id(graph)])
        spent = [0.0] * (len(lines) - 1)
        namespace.update(__spent=spent, __clock=time.perf_counter)
        exec(compile("\n".join(body) + "\n", "<timed wrapper>", "exec"), namespace)
        timed = namespace["call"]
        best = [float("inf")] * len(spent)
        for _ in range(rounds):
            timed(*inputs[id(graph)])
            best = [min(a, b) for a, b in zip(best, spent)]
        for line, seconds in zip(lines[1:], best):
            totals[line_kind(line)] += seconds * 1e6
    return dict(totals)


def _kind_of(value) -> str | None:
    from inductor.codegen.triton import GroupKernel
    from inductor.runtime.triton_launch import TritonKernel

    owner = getattr(value, "kernel", None)  # a generated launch function (triton_fast_launch)
    if isinstance(value, (GroupKernel, TritonKernel)) or isinstance(owner, TritonKernel):
        return "launch"
    code = getattr(value, "__code__", None)
    if getattr(value, "__name__", "") == "run" and getattr(code, "co_filename", "").startswith(
            "<symc extern"):
        return "extern"
    return None


def build(args):
    import symc
    from bench.host_overhead import patch_wrapper_empty
    from bench.train_varlen import build_model
    from tests.models.models import GPTConfig, make_batch

    patch_wrapper_empty()  # integer buffers zeroed: no kernel fills them (see host_overhead)
    config = GPTConfig(vocab_size=256, block_size=args.seq, n_layer=args.layers,
                       n_head=args.heads, n_embd=args.embd, dropout=0.1)
    model = build_model("gpt", config, "cpu", seed=0)
    batch = make_batch("gpt", args.batch, args.seq, vocab_size=256)
    return model, symc.compile(model, backend="inductor"), batch


@contextlib.contextmanager
def cuda_autocast():
    """CUDA bf16 autocast's thread state, on a machine without CUDA (`torch.autocast("cuda")`
    would switch itself off): the state every autocast check of the call path reads."""
    enabled, dtype = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")
    torch.set_autocast_enabled("cuda", True)
    torch.set_autocast_dtype("cuda", torch.bfloat16)
    try:
        yield
    finally:
        torch.set_autocast_enabled("cuda", enabled)
        torch.set_autocast_dtype("cuda", dtype)


def make_step(model, compiled, batch, regions: Regions | None):
    engine = lambda loss: loss.backward()  # noqa: E731
    zero = lambda: model.zero_grad(set_to_none=True)  # noqa: E731
    if regions is not None:
        engine, zero = regions.wrap("engine", engine), regions.wrap("zero_grad", zero)

    def step():
        zero()
        with cuda_autocast():
            loss = compiled(**batch)[1]
        engine(loss)
    return step


def best_step_us(step, rounds: int) -> tuple[float, float]:
    """(min, median) microseconds of one step over `rounds` steps."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return times[0], times[len(times) // 2]


def breakdown(step, regions: Regions, rounds: int) -> dict:
    """Per category, the minimum and the median over `rounds` instrumented steps of its
    exclusive microseconds (the machine is shared: a preempted call inflates one category of
    one step by milliseconds, so each category's minimum is its estimate)."""
    per_round = []
    for _ in range(rounds):
        regions.total.clear()
        regions.calls.clear()
        regions.on = True
        t0 = time.perf_counter()
        step()
        total = (time.perf_counter() - t0) * 1e6
        regions.on = False
        us = {c: regions.total[c] * 1e6 for c in CATEGORIES}
        counted = sum(us.values()) + regions.child_cost * 1e6 * sum(regions.calls.values())
        us["other"] = total - counted
        us["step"] = total
        per_round.append((us, dict(regions.calls)))
    out = {}
    for c in (*CATEGORIES, "other", "step"):
        values = sorted(r[0][c] for r in per_round)
        out[c] = {"min": values[0], "median": values[len(values) // 2],
                  "calls": per_round[0][1].get(c, 0)}
    return out


def profile_top(step, steps: int, top: int) -> list[dict]:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    stats = pstats.Stats(prof)
    rows = []
    for (file, line, name), (_, calls, own, cum, _) in stats.stats.items():
        rows.append({"function": f"{Path(file).name}:{line}({name})", "calls": calls // steps,
                     "us_own": own / steps * 1e6, "us_cum": cum / steps * 1e6})
    rows.sort(key=lambda r: -r["us_own"])
    return rows[:top]


def main() -> int:
    from inductor.runtime.triton_launch import stub_launches

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--label", default="after")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--embd", type=int, default=48)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    torch.set_num_threads(1)  # the step's tensors are tiny; idle threads only add noise
    model, compiled, batch = build(args)
    with stub_launches():
        plain = make_step(model, compiled, batch, None)
        for _ in range(3):  # compile forward and backward, fill every launcher's cache
            plain()
        step_min, step_median = best_step_us(plain, args.rounds)
        top = profile_top(plain, 3, 25)
        calls = record_graph_calls(compiled_graphs(), plain)
        replayed = replay_split(calls, args.rounds)
        lines = line_split(compiled_graphs(), plain, args.rounds)
        regions = Regions()
        regions.calibrate()
        instrument(compiled, regions)
        timed = make_step(model, compiled, batch, regions)
        timed()
        parts = breakdown(timed, regions, args.rounds)
    # the graph calls, line by line (`line_split`); an extern line split into its torch op and
    # its own code in the proportion the replayed calls show
    torch_share = replayed["ref"] / replayed["extern"] if replayed["extern"] else 0.0
    inside = {"wrapper": (lines["wrapper"], 2),
              "launch": (lines["launch"], len(calls["launch"])),
              "allocation": (lines["allocation"], len(calls["allocation"])),
              "extern torch": (lines["extern"] * torch_share, len(calls["ref"])),
              "extern glue": (lines["extern"] * (1 - torch_share), len(calls["extern"]))}
    for c, (us, n) in inside.items():
        parts[c] = {"min": us, "median": float("nan"), "calls": n}
    rows = [{"category": c, "us": parts[c]["min"], "us_median": parts[c]["median"],
             "calls": parts[c]["calls"]} for c in (*CATEGORIES, "other")]
    estimate = sum(r["us"] for r in rows)
    for r in rows:
        r["share"] = r["us"] / estimate
    print_table(f"host time of one step by category ({args.label}): min / median of "
                f"{args.rounds} steps", rows,
                [("category", "category", ""), ("us", "min us", ".0f"),
                 ("us_median", "median us", ".0f"), ("calls", "calls", ""),
                 ("share", "share of sum", ".1%")])
    print_table("cProfile, own time per step (top 25)", top,
                [("function", "function", ""), ("calls", "calls", ""),
                 ("us_own", "own us", ".0f"), ("us_cum", "cum us", ".0f")])
    print(f"step (forward + backward, host, uninstrumented): min {step_min:.0f} us, median "
          f"{step_median:.0f} us over {args.rounds}; sum of the categories' minima {estimate:.0f} us"
          f" (timer cost {regions.child_cost * 1e6:.2f} us per region, taken off)")
    path = Path(args.out) / "host_profile_cpu.json"  # one file, a run per label
    runs = json.loads(path.read_text()).get("runs", {}) if path.exists() else {}
    runs[args.label] = {
                "label": args.label, "environment": environment(),
                "shape": {"layers": args.layers, "heads": args.heads, "embd": args.embd,
                          "seq": args.seq, "batch": args.batch, "autocast": "cuda bf16 flag"},
                "us_step_min": step_min, "us_step_median": step_median,
                "rounds": args.rounds, "timer_us_per_region": regions.child_cost * 1e6,
                "breakdown": rows, "us_sum_of_minima": estimate,
                "us_step_instrumented": parts["step"],
                "cprofile_top": top}
    write_json(path, {"benchmark": "host_profile", "runs": runs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
