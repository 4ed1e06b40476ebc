"""Host cost per Triton launch and per compiled-graph call (issue 21's launcher budget: 3 us).

    python bench/launch_overhead.py --out $OUT        # CUDA
    TRITON_INTERPRET=1 python bench/launch_overhead.py --device cpu --calls 20   # smoke run

One compiled graph `x * 2 + 1` (one pointwise kernel) and one of `depth` chained pointwise
kernels separated by matmuls (externs) run `calls` times at a fixed tiny size without
synchronising: host microseconds per call and per kernel launch (the GPU is idle, so this is
Python and the launcher, not the kernel). One kernel's `launch()` is also timed alone, and with
symc's C launcher (runtime/c_launch.py) its C call alone and cuLaunchKernel from a C loop (the
driver's floor), each both back to back ("stream": past the GPU queue's depth the host waits for
these tiny kernels to run) and in batches of 100 started on an idle GPU ("batched": host cost).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "inductor"))

import torch  # noqa: E402

from bench.common import environment, print_table, sync, write_json  # noqa: E402


def compiled(fn, shapes, device):
    from inductor_graphs import prims_graph

    from inductor.compile import compile_graph

    graph, env, _ = prims_graph(fn, shapes, device=device)
    return compile_graph(graph, env, device_backend="triton")


def measure(cg, inputs, calls: int, device: str) -> float:
    for _ in range(3):
        cg(*inputs)
    sync(device)
    start = time.perf_counter()
    for _ in range(calls):
        cg(*inputs)
    host = time.perf_counter() - start
    sync(device)
    return host / calls * 1e6


def direct_launch_us(cg, x, calls: int, device: str) -> dict:
    """Host us of one generated kernel launch (runtime/triton_fast_launch.py) called directly,
    and how it reaches the binary: "annotated"/"positional" (Triton's C launcher directly),
    "run" (CompiledKernel.run), or "general" (no entry: the interpreter, say)."""
    namespace = cg.run.__globals__
    name = next(k for k, v in namespace.items() if hasattr(v, "kernel"))
    launch, seen = namespace[name], []
    namespace[name] = lambda *a: seen.append(a)  # the arguments the wrapper passes
    try:
        cg(x)
    finally:
        namespace[name] = launch
    kernel, args = launch.kernel, seen[0]
    for _ in range(3):
        launch(*args)
    sync(device)
    out = {"us": _per_call(lambda n: _loop(launch, args, n), calls, device)}
    entries = [e for slots in kernel._launch_plans.values() for e in slots if e is not None]
    out["layout"] = entries[0][0] if entries else "general"
    if entries and entries[0][0] == "c":  # the C launcher called by itself: its own cost
        from inductor.runtime.c_launch import module

        call, g, stream = entries[0][1], entries[0][2], entries[0][8](entries[0][9])
        flat = (g, stream, *[a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args])
        out["c_call_us"] = _per_call(lambda n: _loop(call, flat, n), calls, device)
        # the same launches from one C loop: cuLaunchKernel's own cost, the floor
        out["driver_us"] = _per_call(lambda n: module().repeat(call, n, *flat), calls, device)
    return out


def _loop(fn, args, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return time.perf_counter() - start


BATCH = 100  # launches between synchronisations: the GPU's queue never fills


def _per_call(timed, calls: int, device: str) -> dict:
    """Host us per call: "stream" times `calls` calls back to back (past the queue's depth the
    host waits for the GPU to run these tiny kernels), "batched" sums batches of BATCH calls
    each started on an idle GPU (the host's own cost), "min_batch" is the fastest batch."""
    sync(device)
    stream = timed(calls) / calls * 1e6
    sync(device)
    batches = []
    for _ in range(max(1, calls // BATCH)):
        batches.append(timed(BATCH) / BATCH * 1e6)
        sync(device)
    return {"stream": stream, "batched": sum(batches) / len(batches), "min_batch": min(batches)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    from inductor_graphs import decomposed

    def one(x):
        return decomposed(torch.add, decomposed(torch.mul, x, 2.0), 1.0)

    def chain(x, w):
        for _ in range(args.depth):
            x = decomposed(torch.matmul, decomposed(torch.tanh, x), w)
        return x
    x = torch.randn(8, 16, device=args.device)
    w = torch.randn(16, 16, device=args.device) / 4
    single = compiled(one, [("a", 16)], args.device)
    deep = compiled(chain, [("a", 16), (16, 16)], args.device)
    us_single = measure(single, (x,), args.calls, args.device)
    us_deep = measure(deep, (x, w), args.calls, args.device)
    eager_mm = measure(lambda a, b: (torch.tanh(a) @ b,), (x, w), args.calls, args.device)
    rows = [{"what": "graph with 1 Triton kernel", "us": us_single, "kernels": 1},
            {"what": f"graph with {deep.kernels} kernels + {args.depth} matmuls", "us": us_deep,
             "kernels": deep.kernels},
            {"what": "eager tanh + matmul (reference)", "us": eager_mm, "kernels": None}]
    per_launch = (us_deep - args.depth * eager_mm / 2) / max(1, deep.kernels)
    direct = direct_launch_us(single, x, args.calls, args.device)
    rows.append({"what": f"one kernel's launch() alone ({direct['layout']} layout)",
                 "us": direct["us"]["batched"], "kernels": 1})
    print_table("host cost per call (no sync)", rows,
                [("what", "what", ""), ("us", "us / call", ".2f"), ("kernels", "kernels", "")])
    for key in ("us", "c_call_us", "driver_us"):
        if key in direct:
            print(f"{key} ({direct['layout']}): " + ", ".join(
                f"{k} {v:.2f}" for k, v in direct[key].items()))
    print(f"~{per_launch:.2f} us per Triton launch in a graph (matmul host cost estimated as half "
          f"of eager tanh+matmul)")
    write_json(Path(args.out) / "launch_overhead.json",
               {"benchmark": "launch_overhead", "device": args.device, "calls": args.calls,
                "environment": environment(), "rows": rows,
                "estimated_us_per_triton_launch": per_launch,
                "direct_launch": direct})
    return 0


if __name__ == "__main__":
    sys.exit(main())
