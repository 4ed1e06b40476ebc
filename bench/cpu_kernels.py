"""CPU kernel benchmark: symc's C++/OpenMP kernels vs eager vs torch.compile (default, dynamic).

    python bench/cpu_kernels.py [--quick] [--modes eager,symc,compile_default,compile_dynamic]

Ops: layer norm, softmax and gelu over [rows, 768] for 6 row counts (odd ones included).
  - eager:            the torch functions;
  - symc:             ONE compiled graph per op (rows symbolic) serving every size;
  - compile_default:  torch.compile() (recompiles once, then dynamic);
  - compile_dynamic:  torch.compile(dynamic=True).
Reports median microseconds per call and max error against eager; the first call of each
(mode, size) is not timed but its wall time is recorded (compile cost). JSON goes to
$OUT/cpu_kernels.json if $OUT is set, else bench/results/cpu_kernels.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import environment, error_text, print_table, write_json  # noqa: E402

COLS = 768
ROWS = (1, 7, 64, 257, 1000, 4099)
OPS = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (COLS,), w, b, 1e-5), 3),
    "softmax": (lambda x: torch.softmax(x, -1), 1),
    "gelu": (lambda x: F.gelu(x), 1),
}


def make_inputs(op: str, rows: int, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, COLS, generator=gen)
    if op == "layer_norm":
        return (x, torch.randn(COLS, generator=gen), torch.randn(COLS, generator=gen))
    return (x,)


def symc_compile(op: str):
    """A prims graph of the op's decomposition with symbolic rows, compiled with inductor."""
    import torch.fx as fx

    from inductor import compile_graph
    from prims import GraphTracer, TracedTensor, tracing
    from prims.decompositions import DECOMPOSITIONS
    from symbolic import LocalSource, ShapeEnv, SizeSource, TensorMeta

    env = ShapeEnv()
    rows = env.create_symbol(8, SizeSource(LocalSource("x"), 0))
    graph = fx.Graph()
    shapes = [(rows, COLS)] + ([(COLS,), (COLS,)] if op == "layer_norm" else [])
    args = []
    for i, shape in enumerate(shapes):
        node = graph.placeholder(f"in{i}")
        meta = TensorMeta.contiguous(shape, torch.float32, "cpu")
        node.meta["val"] = meta
        args.append(TracedTensor(node, meta))
    with env, tracing(GraphTracer(graph)):
        if op == "layer_norm":
            out = DECOMPOSITIONS[F.layer_norm](args[0], (COLS,), args[1], args[2], 1e-5)
        elif op == "softmax":
            out = DECOMPOSITIONS[torch.softmax](args[0], -1)
        else:
            out = DECOMPOSITIONS[F.gelu](args[0])
    graph.output((out.node,))
    compiled = compile_graph(graph, env, device_backend="cpp")
    return lambda *xs: compiled(*xs)[0], compiled.kernels


def time_us(fn, args, reps: int) -> float:
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn(*args)
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def build(mode: str, op: str):
    eager = OPS[op][0]
    if mode == "eager":
        return eager, {}
    if mode == "symc":
        start = time.perf_counter()
        fn, kernels = symc_compile(op)
        return fn, {"compile_s": time.perf_counter() - start, "kernels": kernels}
    if mode == "compile_default":
        return torch.compile(eager), {}
    if mode == "compile_dynamic":
        return torch.compile(eager, dynamic=True), {}
    raise ValueError(mode)


def run(modes, rows_list, reps: int) -> list[dict]:
    rows_out = []
    for op in OPS:
        for mode in modes:
            if mode.startswith("compile"):
                torch._dynamo.reset()
            try:
                fn, info = build(mode, op)
            except Exception as e:  # noqa: BLE001 - a failing mode is recorded, not raised
                rows_out.append({"op": op, "mode": mode, "error": error_text(e)})
                continue
            for rows in rows_list:
                args = make_inputs(op, rows)
                row = {"op": op, "mode": mode, "rows": rows, **info}
                try:
                    start = time.perf_counter()
                    out = fn(*args)
                    row["first_call_s"] = time.perf_counter() - start
                    row["max_err"] = (out - OPS[op][0](*args)).abs().max().item()
                    row["us"] = time_us(fn, args, reps)
                except Exception as e:  # noqa: BLE001
                    row["error"] = error_text(e)
                rows_out.append(row)
    return rows_out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 sizes, few repetitions")
    parser.add_argument("--modes", default="eager,symc,compile_default,compile_dynamic")
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = parser.parse_args(argv)
    rows_list = ROWS[:3] if args.quick else ROWS
    results = run(args.modes.split(","), rows_list, 5 if args.quick else 30)
    print_table("CPU kernels (median us per call)", results,
                [("op", "op", ""), ("mode", "mode", ""), ("rows", "rows", ""), ("us", "us", ".1f"),
                 ("first_call_s", "first call s", ".3f"), ("max_err", "max err", ".2e")])
    write_json(Path(args.out) / "cpu_kernels.json",
               {"environment": environment(), "cols": COLS, "results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
