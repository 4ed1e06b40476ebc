"""Training the demo's GPT on the CPU: eager, torch.compile(dynamic=True) and symc in one run.

    python bench/demo_train_cpu.py                     # 120 steps, JSON in bench/results/
    python bench/demo_train_cpu.py --steps 60 --modes eager,symc --out /tmp/t.json

The model, batches and optimizer are `symc demo`'s on the CPU (symc/demo.py: 3 layers, d=64,
batch 16, a sequence length drawn in [16, 128] every step, AdamW). Every mode trains its own
copy of the same initial weights on the same batches, in one process, and the steps are
interleaved: step i runs in every mode (in an order that rotates each step) before step i+1
runs in any, so a shared machine's changing load falls on every mode alike. A mode's first
`--warmup` steps (its compilations) are left out of its steady speed; compilations after them
are counted (torch.compile: frames compiled, symc: `symc.explain`'s compiles), not hidden.

Per mode: compiles, first-step seconds, steady tokens/s, the steady time against eager's
(total, and the median of per-step ratios: robust to a burst of load), and the last loss.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import (  # noqa: E402
    RESULTS, TorchCounts, environment, error_text, print_table, symc_counts, wrap_mode,
    write_json)
from symc.demo import (  # noqa: E402
    DemoOptions, _make_optimizer, draw_lengths, load_text, make_batches)
from symc.demo_model import GPT, GPTConfig  # noqa: E402

MODES = ("eager", "torch_dynamic", "symc")


class Mode:
    """One mode's model, optimizer, step times and losses."""

    def __init__(self, name: str, config: GPTConfig, state: dict, lr: float):
        model = GPT(config)
        model.load_state_dict(state)
        self.name, self.model = name, model
        self.step_fn = wrap_mode(name, model)
        self.opt = _make_optimizer(model, lr)
        self.seconds: list[float] = []
        self.losses: list[float] = []
        self.error: str | None = None

    def step(self, x, y) -> None:
        if self.error is not None:
            return
        try:
            t0 = time.perf_counter()
            self.opt.zero_grad(set_to_none=True)
            _, loss = self.step_fn(x, y)
            loss.backward()
            self.opt.step()
            self.seconds.append(time.perf_counter() - t0)
            self.losses.append(float(loss.detach()))
        except Exception as exc:  # noqa: BLE001 - a failing mode is recorded, not fatal
            self.error = error_text(exc)


def steady(mode: Mode, tokens: list[int], warmup: int) -> tuple[float, float]:
    """(seconds, tokens) over the steps after the first `warmup`."""
    return sum(mode.seconds[warmup:]), sum(tokens[warmup:len(mode.seconds)])


def summarize(mode: Mode, tokens: list[int], warmup: int, eager: Mode | None) -> dict:
    row = {"mode": mode.name, "error": mode.error, "steps": len(mode.seconds),
           "first_step_s": mode.seconds[0] if mode.seconds else None,
           "last_loss": mode.losses[-1] if mode.losses else None}
    seconds, n = steady(mode, tokens, warmup)
    if seconds > 0:
        row.update(steady_s=seconds, steady_tokens_per_s=n / seconds)
    if eager is not None and eager.error is None and seconds > 0 and mode is not eager:
        e_seconds, _ = steady(eager, tokens, warmup)
        pairs = list(zip(eager.seconds[warmup:], mode.seconds[warmup:]))
        row["speed_vs_eager"] = e_seconds / seconds  # > 1: faster than eager
        row["median_step_speed_vs_eager"] = statistics.median(e / s for e, s in pairs)
    return row


def run(args) -> dict:
    opts = DemoOptions(steps=args.steps)
    torch.manual_seed(opts.seed)
    config = GPTConfig(n_layer=opts.n_layer, n_head=opts.n_head, n_embd=opts.n_embd,
                       block_size=max(opts.seqlen_max, 16))
    state = copy.deepcopy(GPT(config).state_dict())
    lengths = draw_lengths(opts.steps, opts.seqlen_min, opts.seqlen_max, opts.seed)
    batches = make_batches(load_text(), lengths, opts.batch, opts.seed)
    tokens = [x.numel() for x, _ in batches]
    counts = TorchCounts().__enter__() if "torch_dynamic" in args.modes else None
    modes = [Mode(name, config, state, opts.lr) for name in args.modes]
    for i, (x, y) in enumerate(batches):
        k = i % len(modes)
        for mode in modes[k:] + modes[:k]:  # the order rotates: no mode always runs first
            mode.step(x, y)
        if args.verbose:
            print(f"step {i} T={x.shape[1]} " + " ".join(
                f"{m.name} {m.seconds[-1] * 1e3:.1f}ms" for m in modes if m.seconds), flush=True)
    eager = next((m for m in modes if m.name == "eager"), None)
    rows = []
    for mode in modes:
        row = summarize(mode, tokens, args.warmup, eager)
        if mode.name == "torch_dynamic" and counts is not None:
            row.update(counts.as_dict())
        elif mode.name == "symc" and mode.error is None:
            row.update({k: v for k, v in symc_counts(mode.step_fn).items() if k != "guards"})
        rows.append(row)
    return {"benchmark": "demo_train_cpu", "options": {
        "steps": opts.steps, "warmup": args.warmup, "batch": opts.batch,
        "seqlen": [opts.seqlen_min, opts.seqlen_max], "n_layer": opts.n_layer,
        "n_embd": opts.n_embd, "n_head": opts.n_head, "lr": opts.lr, "modes": list(args.modes),
        "threads": torch.get_num_threads()}, "environment": environment(),
        "load_average": _load(), "results": rows}


def _load() -> list[float] | None:
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--warmup", type=int, default=3, help="steps left out of the steady speed")
    p.add_argument("--modes", default=",".join(MODES), help=f"a subset of {','.join(MODES)}")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    p.add_argument("--out", type=Path, default=RESULTS / "demo_train_cpu.json")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in args.modes if m not in MODES]
    if unknown:
        p.error(f"expected modes among {MODES}, found {unknown}")
    if args.steps <= args.warmup:
        p.error(f"expected --steps > --warmup, found {args.steps} <= {args.warmup}")
    if args.threads:
        torch.set_num_threads(args.threads)
    payload = run(args)
    write_json(args.out, payload)
    print_table(f"demo GPT training on the CPU ({payload['options']['threads']} threads, load "
                f"{payload['load_average']})", payload["results"], [
        ("mode", "mode", ""), ("compiles", "compiles", ""), ("first_step_s", "first step s",
                                                              ".2f"),
        ("steady_tokens_per_s", "steady tok/s", ",.0f"),
        ("speed_vs_eager", "speed vs eager", ".3f"),
        ("median_step_speed_vs_eager", "median step", ".3f"), ("last_loss", "loss", ".3f"),
        ("error", "error", "")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
