"""Variable-length training under DistributedDataParallel: every rank draws its own lengths.

    python bench/train_varlen_ddp.py --nproc 2                  # spawns 2 ranks (NCCL on GPUs)
    torchrun --nproc_per_node 2 bench/train_varlen_ddp.py       # the same, launched by torchrun
    python bench/train_varlen_ddp.py --small --steps 4          # CPU/gloo smoke run

Modes: eager (DDP(model)), torch_dynamic (torch.compile(DDP(model), dynamic=True), DDPOptimizer
splitting the graph at bucket boundaries), torch_default, and symc (the inner model compiled in
place, `symc.compile(model).install()`, then DDP(model)). Rank r trains on
draw_lengths(steps, lo, hi, seed + 1000 r) with its own data. Per rank: compiles, recompiles,
first-step time, a first pass (compiles included), steady-state tokens/s over a second pass of
the same lengths, peak memory; per mode: tokens/s of all ranks together. Self-spawned runs start
fresh ranks (and fresh compiler cache dirs unless --warm-cache) for each mode; under torchrun the
modes run one after another in the same ranks. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import traceback
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off on these machines

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from bench.common import (  # noqa: E402
    RESULTS, TorchCounts, draw_lengths, environment, error_text, peak_memory_mb, print_table,
    reset_compilers, reset_peak_memory, symc_counts, write_json)
from bench.train_varlen import (  # noqa: E402
    batches_for, build_model, make_optimizer, model_config, train_pass)

DDP_MODES = ["eager", "torch_default", "torch_dynamic", "symc"]
DEFAULT_MODES = ["eager", "torch_dynamic", "symc"]


def wrap_distributed(mode: str, model: torch.nn.Module, device: str, symc_backend: str):
    """(what each step calls, what symc.explain reads or None) for `mode` under DDP."""
    device_ids = [torch.device(device).index] if device.startswith("cuda") else None
    if mode == "symc":
        import symc

        # Compile the inner module in place so the whole model is one graph; DDP's forward and
        # its gradient hooks on the parameters stay eager around it.
        compiled = symc.compile(model, backend=symc_backend).install()
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids), compiled
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
    if mode == "eager":
        return ddp, None
    if mode == "torch_default":
        return torch.compile(ddp), None
    if mode == "torch_dynamic":
        return torch.compile(ddp, dynamic=True), None
    raise ValueError(f"unknown mode {mode!r}; expected one of {DDP_MODES}")


def rank_lengths(args, rank: int) -> list[int]:
    return draw_lengths(args.steps, args.lo, args.hi, args.seed + 1000 * rank)


def run_rank(mode: str, args, rank: int, world: int) -> dict:
    """One mode on this rank: two passes over the rank's own lengths."""
    device = args.device
    result = {"mode": mode, "rank": rank, "error": None}
    reset_compilers()
    reset_peak_memory(device)
    counts = TorchCounts().__enter__() if mode.startswith("torch") else None
    try:
        config = model_config(args.model, args.small, args.hi)
        lengths = rank_lengths(args, rank)
        batches = batches_for(args.model, lengths, args.batch, config.vocab_size, device,
                              args.seed + 1000 * rank)
        result["lengths"] = lengths
        tokens = sum(args.batch * t for t in lengths)
        model = build_model(args.model, config, device, args.seed)  # same init on every rank
        step_model, compiled = wrap_distributed(mode, model, device, args.symc_backend)
        opt = make_optimizer(model, args.lr, device)
        losses = []

        def on_step(i, loss):
            losses.append(loss)
            if i == 0 and counts is not None:
                counts.mark_first_step()
            if args.verbose:
                print(f"  rank {rank} {mode} step {i} T={lengths[i]} loss {loss:.4f}",
                      flush=True)

        first = train_pass(step_model, opt, batches, device, on_step)
        result.update(first_step_s=first[0], first_pass_s=sum(first), first_loss=losses[0],
                      last_loss=losses[-1])
        if counts is not None:
            result.update(counts.as_dict())
        elif compiled is not None:
            found = symc_counts(compiled)
            result.update({k: found[k] for k in ("compiles", "recompiles", "graph_breaks",
                                                 "kernels")})
        else:
            result.update(compiles=0, recompiles=0, graph_breaks=0)
        second = train_pass(step_model, opt, batches, device)
        result.update(tokens_per_pass=tokens, steady_s=sum(second),
                      steady_tokens_per_s=tokens / sum(second))
        if counts is not None:
            result["compiles_after_pass2"] = counts.compiles
        elif compiled is not None:
            result["compiles_after_pass2"] = symc_counts(compiled)["compiles"]
    except Exception as exc:  # noqa: BLE001 - recorded; the launcher stops the other ranks
        result["error"] = error_text(exc)
        result["traceback"] = traceback.format_exc()[-4000:]
        if args.verbose:
            traceback.print_exc()
    mem, kind = peak_memory_mb(device)
    result.update(peak_memory_mb=mem, memory_kind=kind)
    return result


def init_rank(args, rank: int, world: int, local_rank: int) -> None:
    if torch.cuda.is_available() and not args.cpu:
        torch.cuda.set_device(local_rank)
        args.device = f"cuda:{local_rank}"
        backend = "nccl"
    else:
        args.device = "cpu"
        backend = "gloo"
    dist.init_process_group(backend, rank=rank, world_size=world,
                            timeout=timedelta(seconds=args.collective_timeout))


def close_compile_workers() -> None:
    """Shut symc's pool of Triton compile workers down. It registers its shutdown with atexit,
    which a multiprocessing child never runs: without this a spawned rank hangs at exit, joining
    pool workers that still wait for jobs."""
    precompile = sys.modules.get("inductor.runtime.triton_precompile")
    for pool in getattr(precompile, "_POOL", []):
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def spawned_rank(local_rank: int, args, world: int, port: int, mode: str, out_dir: str) -> None:
    """Entry point of one self-spawned rank: one mode, result to out_dir/rank<r>.json."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    init_rank(args, local_rank, world, local_rank)
    result = run_rank(mode, args, local_rank, world)
    Path(out_dir, f"rank{local_rank}.json").write_text(json.dumps(result, default=str))
    close_compile_workers()
    if result["error"]:
        raise RuntimeError(f"rank {local_rank}: {result['error']}")  # mp.spawn stops the others
    dist.barrier()
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn_mode(mode: str, args, world: int) -> list[dict]:
    """Run one mode on `world` fresh ranks; returns the per-rank results that came back."""
    with tempfile.TemporaryDirectory(prefix="symc_ddp_bench_") as tmp:
        saved = dict(os.environ)
        if not args.warm_cache:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(tmp) / "inductor")
            os.environ["TRITON_CACHE_DIR"] = str(Path(tmp) / "triton")
            os.environ["SYMC_CACHE_DIR"] = str(Path(tmp) / "symc")
        if args.cpu or not torch.cuda.is_available():  # ranks share this machine's cores
            os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // world)))
        error = None
        try:
            mp.spawn(spawned_rank, args=(args, world, free_port(), mode, tmp), nprocs=world,
                     join=True)
        except Exception as exc:  # noqa: BLE001 - a failing mode is recorded, not fatal
            error = error_text(exc)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        results = []
        for rank in range(world):
            path = Path(tmp, f"rank{rank}.json")
            if path.exists():
                results.append(json.loads(path.read_text()))
            else:
                results.append({"mode": mode, "rank": rank,
                                "error": error or "rank wrote no result"})
        return results


def summarize(mode: str, ranks: list[dict]) -> dict:
    """One row for all ranks: total tokens over the slowest rank's steady time."""
    row = {"mode": mode, "rank": "all", "ranks": ranks,
           "error": next((r["error"] for r in ranks if r.get("error")), None)}
    if row["error"] is None:
        row["steady_tokens_per_s"] = (sum(r["tokens_per_pass"] for r in ranks)
                                      / max(r["steady_s"] for r in ranks))
        for key in ("compiles", "recompiles", "graph_breaks"):
            row[key] = "/".join(str(r.get(key)) for r in ranks)
        row["first_pass_s"] = max(r["first_pass_s"] for r in ranks)
        row["first_step_s"] = max(r["first_step_s"] for r in ranks)
        row["peak_memory_mb"] = max(r["peak_memory_mb"] for r in ranks)
    return row


def report(args, world: int, summaries: list[dict]) -> None:
    out = args.out or RESULTS / (f"train_varlen_ddp_{args.model}{'_small' if args.small else ''}"
                                 f"_{world}x{'cpu' if args.device.startswith('cpu') else 'cuda'}"
                                 ".json")
    config = model_config(args.model, args.small, args.hi)
    write_json(out, {"benchmark": "train_varlen_ddp", "model": args.model, "small": args.small,
                     "world_size": world, "device": args.device.split(":")[0],
                     "config": vars(config), "batch": args.batch, "steps": args.steps,
                     "lengths": {r: rank_lengths(args, r) for r in range(world)},
                     "symc_backend": args.symc_backend, "environment": environment(),
                     "results": summaries})
    rows = []
    for summary in summaries:
        rows += summary["ranks"]
        rows.append(summary)
    print_table(f"train_varlen_ddp ({args.model}, {world} ranks, {args.device.split(':')[0]})",
                rows, [("mode", "mode", ""), ("rank", "rank", ""),
                       ("compiles", "compiles", ""), ("recompiles", "recompiles", ""),
                       ("graph_breaks", "breaks", ""), ("first_step_s", "first step s", ".2f"),
                       ("first_pass_s", f"pass 1 ({args.steps}) s", ".2f"),
                       ("steady_tokens_per_s", "steady tok/s", ",.0f"),
                       ("peak_memory_mb", "peak MB", ",.0f"), ("last_loss", "loss", ".3f"),
                       ("error", "error", "")])


def print_mode(summary: dict) -> None:
    if summary["error"]:
        print(f"   failed: {summary['error']}", flush=True)
    else:
        print(f"   compiles {summary['compiles']} recompiles {summary['recompiles']} pass 1 "
              f"{summary['first_pass_s']:.2f}s steady {summary['steady_tokens_per_s']:,.0f} "
              "tok/s (all ranks)", flush=True)


def main_torchrun(args, modes: list[str]) -> int:
    """Under torchrun: every mode in turn in these ranks; rank 0 gathers and reports."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    init_rank(args, rank, world, int(os.environ.get("LOCAL_RANK", rank)))
    summaries = []
    for mode in modes:
        if rank == 0:
            print(f"-- {mode}", flush=True)
        result = run_rank(mode, args, rank, world)
        gathered = [None] * world
        dist.all_gather_object(gathered, result)
        summaries.append(summarize(mode, gathered))
        if rank == 0:
            print_mode(summaries[-1])
    if rank == 0:
        report(args, world, summaries)
    dist.destroy_process_group()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nproc", type=int, default=None,
                   help="ranks to spawn (default: the GPU count, else 2); ignored under torchrun")
    p.add_argument("--steps", type=int, default=40, help="steps per pass (default 40)")
    p.add_argument("--modes", default=",".join(DEFAULT_MODES),
                   help=f"comma-separated subset of {','.join(DDP_MODES)}")
    p.add_argument("--model", choices=["gpt", "bert"], default="gpt")
    p.add_argument("--small", action="store_true", help="tiny config and lengths for CPU smoke")
    p.add_argument("--cpu", action="store_true", help="gloo on CPU even when GPUs are present")
    p.add_argument("--batch", type=int, default=8, help="per-rank batch size")
    p.add_argument("--min-len", type=int, default=None, help="default 32 (8 with --small)")
    p.add_argument("--max-len", type=int, default=None, help="default 1024 (64 with --small)")
    p.add_argument("--symc-backend", default="inductor")
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="JSON path (default "
                   "bench/results/train_varlen_ddp_<model>_<N>x<device>.json)")
    p.add_argument("--warm-cache", action="store_true",
                   help="spawned ranks use the default torch/symc on-disk caches")
    p.add_argument("--collective-timeout", type=float, default=1800,
                   help="seconds a rank waits in a collective (covers the others' compiles)")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in DDP_MODES]
    if unknown:
        p.error(f"unknown modes {unknown}; expected some of {DDP_MODES}")
    args.lo = args.min_len or (8 if args.small else 32)
    args.hi = args.max_len or (64 if args.small else 1024)
    gpus = torch.cuda.is_available() and not args.cpu
    args.device = "cuda" if gpus else "cpu"
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        return main_torchrun(args, modes)
    world = args.nproc or (torch.cuda.device_count() if gpus else 2)
    if gpus and world > torch.cuda.device_count():
        p.error(f"--nproc {world} but only {torch.cuda.device_count()} GPUs")
    print(f"train_varlen_ddp: {args.model}, {world} ranks ({'nccl' if gpus else 'gloo'}), "
          f"batch {args.batch} per rank, T in [{args.lo}, {args.hi}] drawn per rank, "
          f"{args.steps} steps", flush=True)
    summaries = []
    for mode in modes:
        print(f"-- {mode}", flush=True)
        summaries.append(summarize(mode, spawn_mode(mode, args, world)))
        print_mode(summaries[-1])
    report(args, world, summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
