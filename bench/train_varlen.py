"""The headline benchmark: training with a sequence length drawn anew every step.

    python bench/train_varlen.py                      # GPT-2-small class, batch 8, T in [32, 1024]
    python bench/train_varlen.py --small --modes eager,torch_dynamic   # CPU smoke run

Modes (each in try/except; a failing mode is recorded, not fatal): eager, torch_default
(torch.compile), torch_dynamic (torch.compile(dynamic=True)), symc (symc.compile), symc_lazy
(symc.compile compiling each Triton variant on first use instead of all up front). Every mode
trains a fresh copy of the same initial weights on the same seeded lengths. Per mode: compiles,
recompiles, first-step time, total time of a first pass of N steps, steady-state tokens/s over a
second pass over the same lengths, peak memory. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import (  # noqa: E402
    allocated_mb,
    RESULTS, TorchCounts, default_device, draw_lengths, environment, error_text, now,
    peak_memory_mb, print_table, reset_compilers, reset_peak_memory, symc_counts, write_json)
from tests.models.models import (  # noqa: E402
    GPT, BertConfig, BertEncoder, GPTConfig, make_batch)

ALL_MODES = ["eager", "torch_default", "torch_dynamic", "symc", "symc_lazy"]


def model_config(name: str, small: bool, max_len: int):
    """GPT-2 small (124M) / BERT-base sized configs, or tiny ones for CPU smoke runs."""
    if name == "gpt":
        if small:
            return GPTConfig(vocab_size=512, block_size=max_len, n_layer=2, n_head=4, n_embd=64,
                             dropout=0.1)
        return GPTConfig(vocab_size=50304, block_size=max(1024, max_len), n_layer=12, n_head=12,
                         n_embd=768, dropout=0.1)
    if small:
        return BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2,
                          num_attention_heads=4, intermediate_size=256,
                          max_position_embeddings=max_len, hidden_dropout_prob=0.1,
                          attention_probs_dropout_prob=0.1)
    return BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                      num_attention_heads=12, intermediate_size=3072,
                      max_position_embeddings=max(512, max_len), hidden_dropout_prob=0.1,
                      attention_probs_dropout_prob=0.1, layer_norm_eps=1e-12)


def build_model(name: str, config, device: str, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = GPT(config) if name == "gpt" else BertEncoder(config)
    return model.to(device).train()


def batches_for(name, lengths, batch, vocab, device, seed):
    return [make_batch(name, batch, t, seed=seed + i, vocab_size=vocab, device=device)
            for i, t in enumerate(lengths)]


def wrap(mode: str, model: torch.nn.Module, symc_backend: str):
    if mode == "eager":
        return model
    if mode == "torch_default":
        return torch.compile(model)
    if mode == "torch_dynamic":
        return torch.compile(model, dynamic=True)
    if mode.startswith("symc"):
        import symc

        if mode == "symc_lazy":  # Triton variants compiled when a size class first needs them
            os.environ["SYMC_TRITON_PRECOMPILE"] = "0"
        return symc.compile(model, backend=symc_backend)
    raise ValueError(f"unknown mode {mode!r}; expected one of {ALL_MODES}")


def make_optimizer(model: torch.nn.Module, lr: float, device: str):
    """AdamW as every mode (and every rank) trains with it; fused on CUDA."""
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1,
                             fused=device.startswith("cuda"))


def train_pass(step_model, opt, batches, device, on_step=None) -> list[float]:
    """One pass over `batches`; returns per-step seconds. bf16 autocast on CUDA."""
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if device.startswith("cuda")
                else contextlib.nullcontext())
    times = []
    for i, batch in enumerate(batches):
        t0 = now(device)
        opt.zero_grad(set_to_none=True)
        with autocast:
            _, loss = step_model(**batch)
        loss.backward()
        opt.step()
        times.append(now(device) - t0)
        if on_step:
            on_step(i, float(loss.detach()))
    return times


def run_mode(mode, args, config, initial_state, batches, tokens_per_pass, live=None) -> dict:
    """One mode's compile, first pass and steady pass. With `live` (a dict; --interleave) the
    compilers are not reset (modes share the process) and the trained model and optimizer are
    kept in live[mode] for the interleaved passes; peak memory is counted above what was
    allocated when the mode started (the other modes' models), so it is the mode's own."""
    result = {"mode": mode, "error": None}
    if live is None:
        reset_compilers()
    reset_peak_memory(args.device)
    base_mb = allocated_mb(args.device)
    counts = TorchCounts().__enter__() if mode.startswith("torch") else None
    try:
        model = build_model(args.model, config, args.device, args.seed)
        model.load_state_dict(initial_state)
        step_model = wrap(mode, model, args.symc_backend)
        opt = make_optimizer(model, args.lr, args.device)
        losses = []

        def on_step(i, loss):
            losses.append(loss)
            if i == 0 and counts is not None:
                counts.mark_first_step()
            if args.verbose:
                print(f"  {mode} step {i} T={batches[i][next(iter(batches[i]))].shape[1]} "
                      f"loss {loss:.4f}", flush=True)

        first = train_pass(step_model, opt, batches, args.device, on_step)
        result.update(first_step_s=first[0], first_pass_s=sum(first), first_loss=losses[0],
                      last_loss=losses[-1])
        if counts is not None:
            result.update(counts.as_dict())
        elif mode.startswith("symc"):
            first_counts = symc_counts(step_model)
            result.update({k: first_counts[k] for k in ("compiles", "recompiles",
                                                         "graph_breaks", "kernels")})
            result["guards"] = first_counts["guards"]
        else:
            result.update(compiles=0, recompiles=0, graph_breaks=0)
        second = train_pass(step_model, opt, batches, args.device)
        result["steady_s"] = sum(second)
        result["steady_tokens_per_s"] = tokens_per_pass / sum(second)
        if counts is not None:
            result["compiles_after_pass2"] = counts.compiles
        elif mode.startswith("symc"):
            result["compiles_after_pass2"] = symc_counts(step_model)["compiles"]
        if live is not None:
            live[mode] = (step_model, opt)
    except Exception as exc:  # noqa: BLE001 - a failing mode is recorded, not fatal
        result["error"] = error_text(exc)
        if args.verbose:
            import traceback

            traceback.print_exc()
    mem, kind = peak_memory_mb(args.device)
    result.update(peak_memory_mb=mem - base_mb, memory_kind=kind)
    return result


def interleaved_steady(live: dict, args, batches, tokens_per_pass: int, rounds: int) -> dict:
    """Steady passes of every kept mode, alternated round by round (the order rotates each
    round), so a host whose speed drifts over minutes slows every mode alike. Per mode: each
    pass's seconds and the tokens/s of the median pass."""
    modes = list(live)
    times = {m: [] for m in modes}
    for r in range(rounds):
        for m in modes[r % len(modes):] + modes[:r % len(modes)]:
            step_model, opt = live[m]
            times[m].append(sum(train_pass(step_model, opt, batches, args.device)))
    return {m: {"pass_s": ts, "median_tokens_per_s": tokens_per_pass / statistics.median(ts)}
            for m, ts in times.items()}


def payload(args, config, lengths, results) -> dict:
    return {"benchmark": "train_varlen", "model": args.model, "small": args.small,
            "config": vars(config), "batch": args.batch, "lengths": lengths, "steps": args.steps,
            "environment": environment(), "results": results}


def run_mode_in_subprocess(mode: str, argv: list[str] | None, args) -> dict:
    """Run one mode in a fresh interpreter so no compiler state (in memory, automatic-dynamic
    profiles, on-disk caches unless --warm-cache) carries over from another mode."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="symc_bench_") as tmp:
        out = Path(tmp) / "result.json"
        env = dict(os.environ)
        if not args.warm_cache:
            env["TORCHINDUCTOR_CACHE_DIR"] = str(Path(tmp) / "inductor")
            env["TRITON_CACHE_DIR"] = str(Path(tmp) / "triton")
            env["SYMC_CACHE_DIR"] = str(Path(tmp) / "symc")
        cmd = [sys.executable, str(Path(__file__).resolve()), *argv, "--modes", mode,
               "--one-mode-json", str(out)]
        try:
            proc = subprocess.run(cmd, env=env, check=False, timeout=args.mode_timeout)
        except subprocess.TimeoutExpired:
            return {"mode": mode, "error": f"timed out after {args.mode_timeout} s"}
        if out.exists():
            return json.loads(out.read_text())
        return {"mode": mode, "error": f"subprocess exited with code {proc.returncode}"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40, help="steps per pass (default 40)")
    p.add_argument("--modes", default=",".join(ALL_MODES),
                   help=f"comma-separated subset of {','.join(ALL_MODES)}")
    p.add_argument("--model", choices=["gpt", "bert"], default="gpt")
    p.add_argument("--small", action="store_true", help="tiny config and lengths for CPU smoke")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--min-len", type=int, default=None, help="default 32 (8 with --small)")
    p.add_argument("--max-len", type=int, default=None, help="default 1024 (64 with --small)")
    p.add_argument("--device", default=default_device())
    p.add_argument("--symc-backend", default="inductor")
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="JSON path (default "
                   "bench/results/train_varlen_<device>.json)")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--in-process", action="store_true", help="run all modes in this process "
                   "(default: one fresh subprocess per mode, with fresh compiler cache dirs)")
    p.add_argument("--warm-cache", action="store_true",
                   help="let subprocesses use the default torch/symc on-disk caches")
    p.add_argument("--mode-timeout", type=float, default=None,
                   help="seconds one mode's subprocess may run (default: no limit)")
    p.add_argument("--interleave", type=int, default=0, metavar="R",
                   help="after each mode's passes, R rounds of steady passes alternating the "
                   "modes in this process (implies --in-process); steady tok/s of the median")
    p.add_argument("--one-mode-json", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.in_process = args.in_process or args.interleave > 0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in ALL_MODES]
    if unknown:
        p.error(f"unknown modes {unknown}; expected some of {ALL_MODES}")
    lo = args.min_len or (8 if args.small else 32)
    hi = args.max_len or (64 if args.small else 1024)
    config = model_config(args.model, args.small, hi)
    vocab = config.vocab_size
    lengths = draw_lengths(args.steps, lo, hi, args.seed)
    batches = batches_for(args.model, lengths, args.batch, vocab, args.device, args.seed)
    tokens_per_pass = sum(args.batch * t for t in lengths)
    initial_state = {k: v.detach().clone()
                     for k, v in build_model(args.model, config, args.device,
                                             args.seed).state_dict().items()}
    n_params = sum(v.numel() for k, v in initial_state.items() if "lm_head" not in k)
    if not args.one_mode_json:
        print(f"train_varlen: {args.model} ({n_params / 1e6:.1f}M params), batch {args.batch}, "
              f"T in [{lo}, {hi}] ({len(set(lengths))} distinct of {args.steps}), {args.device}")
    if args.one_mode_json:  # child process: one mode, result to a JSON file
        result = run_mode(modes[0], args, config, initial_state, batches, tokens_per_pass)
        Path(args.one_mode_json).write_text(json.dumps(result, default=str))
        return 0
    out = args.out or RESULTS / f"train_varlen_{args.model}{'_small' if args.small else ''}_" \
                               f"{args.device.split(':')[0]}.json"
    results = []
    live = {} if args.interleave else None
    if live is not None:
        reset_compilers()
    for mode in modes:
        print(f"-- {mode}", flush=True)
        if args.in_process:
            results.append(run_mode(mode, args, config, initial_state, batches, tokens_per_pass,
                                    live))
        else:
            results.append(run_mode_in_subprocess(mode, argv, args))
        r = results[-1]
        if r["error"]:
            print(f"   failed: {r['error']}")
        else:
            print(f"   compiles {r.get('compiles')} recompiles {r.get('recompiles')} first step "
                  f"{r.get('first_step_s', 0):.2f}s pass 1 {r.get('first_pass_s', 0):.2f}s steady "
                  f"{r.get('steady_tokens_per_s', 0):,.0f} tok/s", flush=True)
        write_json(out, payload(args, config, lengths, results))  # partial results survive a kill
    extra = {}
    if live:
        extra["interleaved"] = interleaved_steady(live, args, batches, tokens_per_pass,
                                                  args.interleave)
        for r in results:
            r["interleaved_tokens_per_s"] = extra["interleaved"].get(r["mode"], {}).get(
                "median_tokens_per_s")
        write_json(out, {**payload(args, config, lengths, results), **extra})
    print_table(f"train_varlen ({args.model}, {args.device})", results, [
        ("mode", "mode", ""), ("compiles", "compiles", ""), ("recompiles", "recompiles", ""),
        ("graph_breaks", "breaks", ""), ("first_step_s", "first step s", ".2f"),
        ("first_pass_s", f"pass 1 ({args.steps}) s", ".2f"),
        ("steady_tokens_per_s", "steady tok/s", ",.0f"),
        ("interleaved_tokens_per_s", "interleaved tok/s", ",.0f"),
        ("peak_memory_mb", "peak MB", ",.0f"),
        ("last_loss", "loss", ".3f"), ("error", "error", "")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
