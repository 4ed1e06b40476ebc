"""Where a CPU training step of the demo's GPT goes, symc against eager, op by op.

    python bench/cpu_step_profile.py --seq 72 --threads 1      # JSON in bench/results/

symc: each generated wrapper (forward, backward) is re-run on the inputs it got in a recorded
step with a timer around every line; each line's minimum over `--rounds` calls is its cost (a
line preempted in one call is not charged for it), summed by kind: a C++ kernel, an extern by
its prim (mm, sdpa, sdpa_backward, ...), an allocation, the wrapper's other lines.
Eager: every aten op of one forward + backward is recorded (a dispatch mode) and replayed alone
`--rounds` times; its minimum is its cost, summed by op. Both ignore what lies between the
graphs' lines or the ops (autograd's engine, symc's guards, Python): `step_ms` gives each
mode's minimum whole forward and backward, in turns, for that.

Minimums make the sums comparable on a loaded machine (a 2-core machine shared with other
jobs), where whole-step times are not; at 1 thread they measure the work itself.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from bench.common import RESULTS, environment, record_wrapper_inputs, write_json  # noqa: E402
from symc.demo import DemoOptions, load_text, make_batches  # noqa: E402
from symc.demo_model import GPT, GPTConfig  # noqa: E402

_EXTERN = re.compile(r"=\s*extern\d+\(.*#\s*(\w+)")


def line_kind(line: str) -> str:
    """'kernel', 'extern <prim>', 'alloc' or 'other' for one line of a generated wrapper."""
    text = line.strip()
    found = _EXTERN.search(text)
    if found:
        return f"extern {found.group(1)}"
    if "= empty(" in text:
        return "alloc"
    if re.match(r"k\d+_\w+\(", text):
        return "kernel"
    return "other"


def training_graphs() -> list:
    """(name, CompiledGraph) of every compiled forward and backward variant of symc's entries."""
    from symc import cache

    graphs = []
    for cf in list(cache._ALL):
        for entry in cf.entries:
            training = getattr(getattr(entry.run, "compiled", None), "training", None)
            if training is None:
                continue
            lazies = [("forward", training.forward)] + [
                (f"backward{i}", lazy) for i, lazy in enumerate(
                    training.backward_variants.values())]
            for name, lazy in lazies:
                if lazy.compiled is not None:
                    graphs.append((name, getattr(lazy.compiled, "inner", lazy.compiled)))
    return graphs


def line_minimums(graph, inputs: tuple, rounds: int) -> list[tuple[str, float]]:
    """(line, minimum seconds over `rounds` calls) for each body line of `graph`'s wrapper."""
    lines = graph.wrapper_source.splitlines()
    body = [lines[0]]
    for i, line in enumerate(lines[1:]):
        indent = line[:len(line) - len(line.lstrip())]
        if line.rstrip().endswith(":"):  # a block's header (`if deferred:`): its lines are timed
            body.append(line)
            continue
        returns = line.strip().startswith("return ")
        code = line.replace("return ", "__out = ", 1) if returns else line
        body += [f"{indent}__t = __clock()", code, f"{indent}__spent[{i}] = __clock() - __t"]
        if returns:
            body.append(f"{indent}return __out")
    namespace = dict(graph.run.__globals__)
    spent = [0.0] * (len(lines) - 1)
    namespace.update(__spent=spent, __clock=time.perf_counter)
    exec(compile("\n".join(body) + "\n", "<timed wrapper>", "exec"), namespace)
    best = [float("inf")] * len(spent)
    for _ in range(rounds):
        namespace["call"](*inputs)
        best = [min(a, b) for a, b in zip(best, spent)]
    return list(zip(lines[1:], best))


class _Record(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.calls.append((func, args, kwargs))
        return out


def eager_op_minimums(model, x, y, rounds: int) -> Counter:
    """aten op -> the sum over one forward + backward of each call's minimum (seconds)."""
    recorder = _Record()
    with recorder:
        _, loss = model(x, y)
        loss.backward()
    model.zero_grad(set_to_none=True)
    totals: Counter = Counter()
    for func, args, kwargs in recorder.calls:
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            func(*args, **kwargs)
            best = min(best, time.perf_counter() - t0)
        totals[str(func)] += best
    return totals


def step_minimums(fn, model, x, y, rounds: int) -> tuple[float, float]:
    """(forward, backward) minimum seconds of `fn(x, y)` and its loss's backward."""
    fwd = bwd = float("inf")
    for _ in range(rounds):
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        _, loss = fn(x, y)
        t1 = time.perf_counter()
        loss.backward()
        fwd, bwd = min(fwd, t1 - t0), min(bwd, time.perf_counter() - t1)
    return fwd, bwd


def _ms(seconds: float) -> float:
    return round(seconds * 1e3, 3)


def profile(seq: int, rounds: int, top: int) -> dict:
    import symc

    opts = DemoOptions()
    torch.manual_seed(opts.seed)
    config = GPTConfig(n_layer=opts.n_layer, n_head=opts.n_head, n_embd=opts.n_embd,
                       block_size=opts.seqlen_max)
    model, eager = GPT(config), GPT(config)
    eager.load_state_dict(model.state_dict())
    (x, y), = make_batches(load_text(), [seq], opts.batch, opts.seed)
    compiled = symc.compile(model)

    def step():
        model.zero_grad(set_to_none=True)
        compiled(x, y)[1].backward()
    step()  # compiles
    graphs = training_graphs()
    inputs = record_wrapper_inputs([g for _, g in graphs], step)
    symc_rows, by_kind = [], defaultdict(float)
    for name, graph in graphs:
        if id(graph) not in inputs:
            continue  # a backward variant this step does not call
        timed = line_minimums(graph, inputs[id(graph)], rounds)
        for line, seconds in timed:
            by_kind[line_kind(line)] += seconds
        symc_rows.append({"graph": name, "ms": _ms(sum(s for _, s in timed)), "top": [
            {"ms": _ms(s), "line": line.strip()[:160]}
            for line, s in sorted(timed, key=lambda p: -p[1])[:top]]})
    eager_ops = eager_op_minimums(eager, x, y, rounds)
    turns = {"eager": [], "symc": []}
    for _ in range(3):  # in turns: a burst of load falls on both
        turns["eager"].append(step_minimums(eager, eager, x, y, rounds))
        turns["symc"].append(step_minimums(compiled, model, x, y, rounds))
    return {
        "symc_lines_ms": _ms(sum(by_kind.values())),
        "symc_by_kind_ms": {k: _ms(v) for k, v in sorted(by_kind.items(), key=lambda p: -p[1])},
        "symc_graphs": symc_rows,
        "eager_ops_ms": _ms(sum(eager_ops.values())),
        "eager_by_op_ms": {k: _ms(v) for k, v in eager_ops.most_common()},
        "step_ms": {mode: {"forward": _ms(min(f for f, _ in v)),
                           "backward": _ms(min(b for _, b in v))}
                    for mode, v in turns.items()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, default=72, help="sequence length (batch 16, the demo's)")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--top", type=int, default=12, help="most costly lines kept per graph")
    p.add_argument("--out", type=Path, default=RESULTS / "cpu_step_profile.json")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    result = profile(args.seq, args.rounds, args.top)
    payload = {"benchmark": "cpu_step_profile", "seq": args.seq, "batch": DemoOptions().batch,
               "threads": torch.get_num_threads(), "rounds": args.rounds,
               "environment": environment(), **result}
    write_json(args.out, payload)
    print(f"symc: sum of line minimums {result['symc_lines_ms']} ms")
    for kind, ms in result["symc_by_kind_ms"].items():
        print(f"  {ms:9.3f} ms  {kind}")
    print(f"eager: sum of op minimums {result['eager_ops_ms']} ms")
    for op, ms in list(result["eager_by_op_ms"].items())[:12]:
        print(f"  {ms:9.3f} ms  {op}")
    print(f"whole forward/backward minimums: {result['step_ms']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
