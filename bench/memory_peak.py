"""Peak CPU memory of a GPT training step (forward + backward), eager against symc, by the
allocation replay of symc/memory_peak.py, and what is alive at each peak.

    python bench/memory_peak.py                      # small GPT, T = 64, 128 (symbolic T)
    python bench/memory_peak.py --d 256 --layers 4 --t 128 256 --out bench/results

Per mode and T: the peak bytes above the step's start (parameters and the optimizer state are
not counted; gradients are, as the step allocates them), the bytes still live after it (the
gradients), and the largest blocks alive at the peak with where they were allocated. symc
runs warmed up (one step per T first, so compilation is not measured). JSON:
`memory_peak.json` under --out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import environment, now, write_json  # noqa: E402
from symc.demo_model import GPT, GPTConfig  # noqa: E402
from symc.memory_peak import training_step  # noqa: E402

MODES = ("eager", "symc")


def gpt_batch(batch: int, t: int, vocab: int, seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab, (batch, t + 1), generator=g)
    return {"idx": tokens[:, :-1].contiguous(), "targets": tokens[:, 1:].contiguous()}


def measure(mode: str, config: GPTConfig, lengths: list, batch: int, top: int,
            backend: str = "inductor") -> list[dict]:
    torch.manual_seed(0)
    model = GPT(config).train()
    runner = model
    if mode == "symc":
        import symc

        runner = symc.compile(model, backend=backend)
    rows = []
    for i, t in enumerate(lengths):
        data = gpt_batch(batch, t, config.vocab_size, seed=i)
        start = now("cpu")
        training_step(runner, data, traced=False)  # warm-up: the compile, caches
        warm_s = now("cpu") - start
        trace = training_step(runner, data)
        rows.append({"mode": mode, "T": t, "batch": batch, "warmup_s": round(warm_s, 2),
                     **trace.summary(top)})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--modes", nargs="+", default=list(MODES))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    config = GPTConfig(vocab_size=args.vocab, block_size=max(args.t), n_layer=args.layers,
                       n_head=args.heads, n_embd=args.d, dropout=args.dropout)
    rows = [row for mode in args.modes
            for row in measure(mode, config, args.t, args.batch, args.top)]
    eager = {r["T"]: r["peak_bytes"] for r in rows if r["mode"] == "eager"}
    for r in rows:
        ratio = r["peak_bytes"] / eager[r["T"]] if eager.get(r["T"]) else None
        r["peak_vs_eager"] = None if ratio is None else round(ratio, 3)
        print(f"{r['mode']:6s} T={r['T']:5d} peak {r['peak_bytes'] / 2**20:8.2f} MiB "
              f"end {r['end_bytes'] / 2**20:7.2f} MiB  vs eager {r['peak_vs_eager']}")
        for what in ("live_at_peak", "live_at_end"):
            print(f"  {what}:")
            for b in r[what][:args.top]:
                print(f"    {b['bytes'] / 2**20:7.3f} MiB  {b['phase']:8s} {b['site'][:50]:50s} "
                      f"{b['text'][:80]}")
    if args.out:
        path = write_json(Path(args.out) / "memory_peak.json",
                          {"environment": environment(), "config": vars(args), "rows": rows})
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
