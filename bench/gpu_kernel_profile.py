"""Per generated Triton kernel of one GPT training step: GPU time, bytes moved, GB/s, the config
and alignment level it ran with, PTX traits (vector loads, 64-bit divisions), its source; then an
A/B sweep of block configs on the slowest kernels, replayed with the step's own arguments.

    python bench/gpu_kernel_profile.py --out $OUT            # T=512, batch 8, bf16 (H100)
    python bench/gpu_kernel_profile.py --lengths 512,128 --top 14 --per-kernel 18 \
        --reductions-only --out $OUT                         # ~2 min on an H100: reductions
    SYMC_CPU_BACKEND=triton TRITON_INTERPRET=1 python bench/gpu_kernel_profile.py --small \
        --device cpu --lengths 16 --top 0                    # smoke run (interpreter)

Bytes per launch are the sizes of the tensor arguments (each read or written once: what a
memory-bound kernel at bandwidth moves). The sweep compiles every alternative config in the
precompile worker pool first, then times each with triton.testing.do_bench (L2 flushed between
repetitions) next to the config the launcher picked. JSON: gpu_kernel_profile.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import environment, error_text, now, write_json  # noqa: E402
from bench.profile_step import _device_events, train_step  # noqa: E402
from bench.train_varlen import build_model, make_optimizer, model_config  # noqa: E402
from tests.models.models import make_batch  # noqa: E402

RECORD: list | None = None
_PTX_TRAITS = {
    "ld_v4": r"ld\.global(\.\w+)*\.v4", "ld_v2": r"ld\.global(\.\w+)*\.v2",
    "ld_scalar": r"ld\.global(\.\w+)*\.(b|u|s|f)(16|32|64)\s", "st_v4": r"st\.global(\.\w+)*\.v4",
    "st_v2": r"st\.global(\.\w+)*\.v2", "div64": r"(div|rem)\.(s|u)64", "div32": r"(div|rem)\.(s|u)32",
    "mul_wide": r"mul\.wide", "bar_sync": r"bar\.sync",
}


def install_recorder() -> None:
    """Wrap every TritonKernel's generated launch: while RECORD is a list, each launch appends
    (kernel, args). Must run before the model compiles."""
    from inductor.runtime import triton_launch

    original = triton_launch.make_launch

    def make_launch(kernel, namespace):
        fast = original(kernel, namespace)

        def launch(*args):
            if RECORD is not None:
                RECORD.append((kernel, args))
            return fast(*args)
        launch.kernel = kernel
        return launch
    triton_launch.make_launch = make_launch


def arg_bytes(args) -> int:
    total = 0
    for a in args:
        if isinstance(a, torch.Tensor):
            n = a.numel() * a.element_size()
            total += min(n, a.untyped_storage().nbytes())
    return total


def ptx_traits(binary) -> dict:
    try:
        ptx = binary.asm["ptx"]
    except Exception:  # noqa: BLE001 - the interpreter has no binary
        return {}
    out = {k: len(re.findall(p, ptx)) for k, p in _PTX_TRAITS.items()}
    out["n_regs"] = getattr(binary, "n_regs", None)
    out["shared"] = getattr(binary, "shared", None)
    return out


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def alternatives(kernel, rnumel, limit: int) -> list:
    from inductor.runtime.triton_launch import BlockConfig

    bodies = {c.body for c in kernel.spec.configs}
    out = []
    if kernel.spec.meta.get("layout") == "outer":  # column reductions: wide-in-x tiles
        if rnumel is not None and rnumel <= 4096:
            rb = _next_pow2(rnumel)
            for xb, w in ((2, 4), (2, 8), (4, 8), (8, 8)):
                if xb * rb <= 32768:
                    out.append(BlockConfig("persistent", XBLOCK=xb, RBLOCK=rb, num_warps=w))
        for xb, rb, w in ((4, 512, 4), (2, 512, 4), (2, 1024, 4), (2, 2048, 8), (4, 256, 4),
                          (4, 1024, 8), (8, 128, 4), (8, 256, 4), (8, 512, 8), (16, 64, 4),
                          (16, 128, 4), (16, 256, 8), (4, 512, 8), (8, 256, 8), (2, 512, 2),
                          (4, 256, 2), (32, 64, 8), (1, 2048, 8)):
            out.append(BlockConfig("looped", XBLOCK=xb, RBLOCK=rb, num_warps=w))
        return out[:limit]
    if "pointwise" in bodies:
        for xb, w in ((256, 2), (512, 2), (512, 4), (1024, 4), (1024, 8), (2048, 4), (2048, 8),
                      (4096, 8), (4096, 16)):
            out.append(BlockConfig("pointwise", XBLOCK=xb, num_warps=w))
        return out[:limit]
    if "tiled" in bodies:  # [YBLOCK, XBLOCK] tiles over rows x cols (codegen/triton_tiled.py)
        for yb, xb, w in ((1, 1024, 4), (2, 512, 4), (4, 256, 4), (8, 128, 4), (1, 2048, 8),
                          (2, 1024, 8), (4, 512, 8), (8, 256, 8), (1, 512, 2), (2, 256, 2),
                          (16, 64, 4), (1, 4096, 8), (4, 1024, 8), (8, 512, 16)):
            out.append(BlockConfig("tiled", XBLOCK=xb, YBLOCK=yb, num_warps=w))
        return out[:limit]
    if rnumel is not None and rnumel <= 16384 and "persistent" in bodies:
        rb = _next_pow2(rnumel)
        for xb in (1, 2, 4, 8, 16, 32, 64):
            for w in (1, 2, 4, 8, 16):
                elems = xb * rb
                if elems > 32768 or elems < 32 * w * 2 or elems > 32 * w * 64:
                    continue
                out.append(BlockConfig("persistent", XBLOCK=xb, RBLOCK=rb, num_warps=w))
        out = out[::max(1, len(out) // 6)][:6]
    if "looped" in bodies:
        for xb, rb, w in ((1, 2048, 8), (4, 512, 4), (32, 64, 4), (64, 32, 4), (128, 16, 4),
                          (64, 64, 8), (16, 128, 4), (1, 1024, 4), (128, 32, 8), (8, 256, 4),
                          (2, 1024, 4), (32, 128, 8), (256, 8, 4), (1, 4096, 8), (8, 512, 8)):
            out.append(BlockConfig("looped", XBLOCK=xb, RBLOCK=rb, num_warps=w))
    return out[:limit]


def bench_ms(fn) -> float:
    import triton.testing

    if not torch.cuda.is_available():  # smoke runs: one interpreted call
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    return float(triton.testing.do_bench(fn, warmup=5, rep=25, return_mode="median"))


def sweep(rows: list[dict], by_name: dict, deadline: float, max_per_kernel: int) -> list[dict]:
    from inductor.runtime.triton_launch import TritonKernel, is_interpreting, wait_for_jobs
    from inductor.runtime.triton_precompile import submit

    jobs = []  # (row, cfg, TritonKernel)
    for row in rows:
        kernel, args = by_name[row["name"]]
        dtypes = {name: a.dtype for name, a in zip(kernel.spec.args, args)
                  if isinstance(a, torch.Tensor)}
        levels = Counter()
        for (_, lvl), n in kernel.picks.items():
            levels[lvl] += n
        level = levels.most_common(1)[0][0] if levels else 1
        for cfg in alternatives(kernel, row["rnumel"], max_per_kernel):
            spec = dataclasses.replace(kernel.spec, configs=(cfg,))
            alt = TritonKernel(spec, precompile=True)
            alt.levels = lambda level=level: (level,)  # compile the level the step ran only
            if not is_interpreting():
                alt.pending = submit(alt, dtypes)
            jobs.append((row, cfg, alt))
    print(f"sweep: {len(jobs)} variants submitted", flush=True)
    results = defaultdict(list)
    for row in rows:
        if time.time() > deadline:
            break
        kernel, args = by_name[row["name"]]
        try:
            row["replay_ms"] = bench_ms(lambda: kernel.launch(*args))
        except Exception as exc:  # noqa: BLE001
            row["replay_error"] = error_text(exc)
    for row, cfg, alt in jobs:
        if time.time() > deadline:
            row.setdefault("sweep_cut", True)
            continue
        kernel, args = by_name[row["name"]]
        try:
            if alt.pending:
                wait_for_jobs(alt.pending)
                alt.pending = []
            alt(*args)
            ms = bench_ms(lambda: alt.launch(*args))
            results[row["name"]].append({"config": cfg.name, "ms": ms,
                                         "gbps": row["bytes_per_call_max"] / ms / 1e6})
        except Exception as exc:  # noqa: BLE001
            results[row["name"]].append({"config": cfg.name, "error": error_text(exc)[:300]})
    for row in rows:
        row["sweep"] = sorted(results.get(row["name"], []), key=lambda r: r.get("ms", 1e9))
    return rows


def profile_length(runner, model, opt, config, t: int, args) -> tuple[list, dict, dict]:
    """One length: the profiled step's events, the recorded launches, a row per kernel."""
    global RECORD
    batch = make_batch("gpt", args.batch, t, seed=t, vocab_size=config.vocab_size,
                       device=args.device)
    t0 = now(args.device)
    train_step(runner, model, opt, batch, args.device)
    first_s = now(args.device) - t0
    train_step(runner, model, opt, batch, args.device)
    now(args.device)
    profiled, events = {}, []
    if args.device.startswith("cuda"):
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            train_step(runner, model, opt, batch, args.device)
            now(args.device)
        events = _device_events(prof)
        profiled = {e["name"]: e for e in events}
    RECORD = []
    train_step(runner, model, opt, batch, args.device)
    now(args.device)
    records, RECORD = RECORD, None
    per = defaultdict(lambda: {"calls": 0, "bytes": 0, "bytes_max": 0, "args": None,
                               "sizes": set()})
    for kernel, a in records:
        entry = per[kernel.spec.name]
        entry["kernel"] = kernel
        b = arg_bytes(a)
        entry["calls"] += 1
        entry["bytes"] += b
        entry["sizes"].add(tuple(a[i] for i in kernel._size_pos))
        if b >= entry["bytes_max"]:
            entry["bytes_max"], entry["args"] = b, a
    rows, by_name = [], {}
    for name, e in per.items():
        kernel = e["kernel"]
        fns = {f"{name}_{b}{w}" for b in ("pointwise", "tiled", "persistent", "looped")
               for w in ("", "_i64")}
        gpu_ms = sum(v["gpu_ms"] for k, v in profiled.items() if k in fns)
        sizes = next(iter(e["sizes"]))
        rnumel = kernel.spec.rnumel(*sizes) if kernel.spec.rnumel is not None else None
        row = {"name": name, "calls": e["calls"], "gpu_ms": gpu_ms,
               "us_per_call": gpu_ms * 1e3 / max(1, e["calls"]),
               "bytes": e["bytes"], "bytes_per_call_max": e["bytes_max"],
               "gbps": (e["bytes"] / (gpu_ms * 1e-3) / 1e9) if gpu_ms else None,
               "xnumel": kernel.spec.xnumel(*sizes), "rnumel": rnumel,
               "size_tuples": [list(s) for s in e["sizes"]][:6],
               "configs": [c.name for c in kernel.spec.configs],
               "layout": kernel.spec.meta.get("layout"),
               "picks": {f"{c}@{lvl}": n for (c, lvl), n in kernel.picks.items()},
               "index_dtype": kernel.spec.meta.get("index_dtype"),
               "int64_fallback": kernel.spec.meta.get("int64_fallback"),
               "arg_shapes": [[list(a.shape), list(a.stride()), str(a.dtype)[6:]]
                              if isinstance(a, torch.Tensor) else a for a in e["args"]],
               "ptx": {f"{cfg.name}@{lvl}": ptx_traits(b)
                       for (cfg, lvl, *_), b in kernel._binaries_of.items()},
               "source": kernel.spec.source}
        rows.append(row)
        by_name[name] = (kernel, e["args"])
    rows.sort(key=lambda r: -r["gpu_ms"])
    summary = {"T": t, "first_step_s": first_s, "step_events": events[:60],
               "gpu_kernel_ms": sum(e["gpu_ms"] for e in events),
               "generated_ms": sum(r["gpu_ms"] for r in rows),
               "generated_launches": sum(r["calls"] for r in rows),
               "reduction_ms": sum(r["gpu_ms"] for r in rows if r["rnumel"] is not None),
               "pointwise_ms": sum(r["gpu_ms"] for r in rows if r["rnumel"] is None),
               "outer_ms": sum(r["gpu_ms"] for r in rows if r["layout"] == "outer"),
               "kernels": rows}
    for r in rows[:25]:
        print(f"T={t} {r['gpu_ms']:7.3f} ms {r['calls']:3d}x {r['us_per_call']:6.1f} us "
              f"{(r['gbps'] or 0):6.0f} GB/s x={r['xnumel']} r={r['rnumel']} {r['layout']} "
              f"{r['picks']} {r['name']}", flush=True)
    print(f"T={t}: generated {summary['generated_ms']:.3f} ms ({summary['generated_launches']} "
          f"launches), reductions {summary['reduction_ms']:.3f}, outer {summary['outer_ms']:.3f}"
          f", pointwise {summary['pointwise_ms']:.3f}", flush=True)
    return rows, by_name, summary


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lengths", default="512")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--small", action="store_true")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--budget", type=float, default=170.0, help="seconds; the sweep stops there")
    p.add_argument("--top", type=int, default=20, help="kernels swept per length")
    p.add_argument("--per-kernel", type=int, default=14)
    p.add_argument("--reductions-only", action="store_true", help="sweep reductions only")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    start = time.time()
    deadline = start + args.budget
    out_path = Path(args.out) / "gpu_kernel_profile.json"
    payload = {"benchmark": "gpu_kernel_profile", "batch": args.batch,
               "environment": environment(), "lengths": []}
    install_recorder()
    import symc

    config = model_config("gpt", args.small, 1024)
    model = build_model("gpt", config, args.device, 0)
    opt = make_optimizer(model, 1e-4, args.device)
    runner = symc.compile(model, backend="inductor")
    for t in [int(v) for v in args.lengths.split(",")]:
        rows, by_name, summary = profile_length(runner, model, opt, config, t, args)
        payload["lengths"].append(summary)
        write_json(out_path, payload)
        if args.top <= 0:
            continue
        chosen = [r for r in rows if r["rnumel"] is not None or not args.reductions_only]
        chosen = chosen[:args.top]
        try:
            sweep(chosen, by_name, deadline, args.per_kernel)
        except Exception as exc:  # noqa: BLE001
            summary["sweep_error"] = error_text(exc)
        payload["total_s"] = time.time() - start
        write_json(out_path, payload)
        for r in chosen:
            best = next((s for s in r.get("sweep", []) if "ms" in s), None)
            print(f"T={t} {r['name']}: replay {(r.get('replay_ms') or 0) * 1e3:.1f} us, best "
                  f"{best and best['config']} {(best or {}).get('ms', 0) * 1e3:.1f} us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
