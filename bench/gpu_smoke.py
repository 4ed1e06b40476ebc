"""A quick GPU check of the whole stack before the long benchmarks: a small GPT trained by eager
and by symc.compile(backend="inductor") on the same lengths, in float32 and under bf16 autocast.

    python bench/gpu_smoke.py --out $OUT        # -> gpu_smoke.json: losses, grad diffs, timings

Per precision: compiles (must be 1), max |loss difference| and max relative grad difference per
step, first-step time (capture + compile), steady step time of both, Triton binaries compiled.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import environment, error_text, now, write_json  # noqa: E402
from tests.models.models import GPT, GPTConfig, make_batch  # noqa: E402

LENGTHS = [37, 64, 1, 200, 129, 512, 33, 77]


def _grad_error(model, reference) -> float:
    worst = 0.0
    for p, q in zip(model.parameters(), reference.parameters()):
        scale = q.grad.abs().max().item() + 1e-6
        worst = max(worst, (p.grad.float() - q.grad.float()).abs().max().item() / scale)
    return worst


def check(precision: str, device: str, config: GPTConfig, batch: int) -> dict:
    import symc
    from inductor.runtime.triton_launch import COUNTERS, reset_counters

    reset_counters()
    torch.manual_seed(0)
    reference = GPT(config).to(device)
    model = GPT(config).to(device)
    model.load_state_dict(reference.state_dict())
    compiled = symc.compile(model, backend="inductor")
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if precision == "bf16_autocast"
                else contextlib.nullcontext())
    rows = []
    for step, seqlen in enumerate(LENGTHS + LENGTHS):
        inputs = make_batch("gpt", batch, seqlen, seed=step, vocab_size=config.vocab_size,
                            device=device)
        timings = {}
        for name, m, runner in (("symc", model, compiled), ("eager", reference, reference)):
            m.zero_grad(set_to_none=True)
            start = now(device)
            with autocast:
                _, loss = runner(**inputs)
            loss.backward()
            timings[name] = now(device) - start
            timings[f"{name}_loss"] = loss.item()
        rows.append({"seqlen": seqlen, "symc_s": timings["symc"], "eager_s": timings["eager"],
                     "loss_diff": abs(timings["symc_loss"] - timings["eager_loss"]),
                     "grad_rel_err": _grad_error(model, reference)})
    report = symc.explain(compiled)
    second = rows[len(LENGTHS):]
    return {
        "precision": precision, "compiles": report.compiles, "recompiles": report.recompiles,
        "graph_breaks": report.graph_breaks, "breaks": [str(b) for b in report.breaks],
        "kernels": sum(e.kernels for e in report.entries),
        "kernel_compile_s": sum(e.kernel_compile_seconds for e in report.entries),
        "capture_and_compile_s": sum(e.compile_seconds for e in report.entries),
        "first_step_s": rows[0]["symc_s"],
        "steady_symc_s": sum(r["symc_s"] for r in second),
        "steady_eager_s": sum(r["eager_s"] for r in second),
        "max_loss_diff": max(r["loss_diff"] for r in rows),
        "max_grad_rel_err": max(r["grad_rel_err"] for r in rows),
        "triton": dict(COUNTERS), "steps": rows,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=256)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--precisions", default="fp32,bf16_autocast")
    args = p.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = GPTConfig(vocab_size=4096, block_size=1024, n_layer=args.layers, n_head=4,
                       n_embd=args.embd, dropout=0.0)
    results = []
    for precision in args.precisions.split(","):
        start = time.perf_counter()
        try:
            result = check(precision, device, config, args.batch)
        except Exception as exc:  # noqa: BLE001 - record and go on to the next precision
            import traceback

            traceback.print_exc()
            result = {"precision": precision, "error": error_text(exc)}
        result["wall_s"] = time.perf_counter() - start
        results.append(result)
        print({k: v for k, v in result.items() if k != "steps"}, flush=True)
    write_json(Path(args.out) / "gpu_smoke.json",
               {"benchmark": "gpu_smoke", "config": vars(config), "lengths": LENGTHS,
                "environment": environment(), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
