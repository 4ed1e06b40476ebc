"""GPU kernel benchmark: symc's size-generic Triton kernels vs eager vs torch.compile.

    python bench/gpu_kernels.py [--dtypes float32,bfloat16] [--quick] [--out DIR]

For each op (layer norm, softmax, gelu+bias, dropout+residual+layer norm, cross-entropy over a
50257 vocab and its backward's pointwise: per-row values broadcast over the vocab, the 2-D
tiled body of codegen/triton_tiled.py) and each size (odd ones included), times four modes
side by side:
  - eager:           the torch functions;
  - symc:            ONE compiled graph per op (symbolic rows) serving every size;
  - compile_dynamic: torch.compile(dynamic=True), compiled once (recompiles are counted);
  - compile_static:  torch.compile(dynamic=False), which recompiles per size.
Reports median time, achieved bandwidth (bytes of the op's inputs and outputs / time) against a
measured device copy bandwidth, compile counts (symc: Triton binaries built, before and after
the timed sizes), and max error against eager. Failures of one mode are recorded in the JSON,
not raised. Results go to $OUT/gpu_kernels.json if $OUT is set, else bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import time
import traceback

import torch
import torch.fx as fx
import torch.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VOCAB = 50257
# the backward's vocabulary per op: GPT-2's padded 50304 (rows 16-byte aligned in bf16: the 2-D
# tiled body) and the odd 50257 (the 1-D body; SYMC_TRITON_TILED=always tiles it too)
CE_BWD_VOCAB = {"cross_entropy_bwd": 50304, "cross_entropy_bwd_odd": 50257}
HIDDEN = 768
FFN = 3072


# ---------------------------------------------------------------------------------------- ops
def eager_layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def eager_softmax(x):
    return torch.softmax(x, -1)


def eager_gelu_bias(x, b):
    return F.gelu(x + b)


def eager_dropout_residual_ln(x, res, w, b, seed=None):
    return F.layer_norm(F.dropout(x, 0.1, True) + res, (x.shape[-1],), w, b, 1e-5)


def eager_cross_entropy(logits, target):
    return F.cross_entropy(logits, target)


def eager_cross_entropy_bwd(logits, lse, target, g):
    """Cross-entropy's logits gradient from the saved log-sum-exp: one pointwise kernel over
    [rows, vocab] reading four per-row values (the GPT step's largest pointwise kernel)."""
    p = torch.exp(logits.float() - lse.unsqueeze(1))
    hit = torch.arange(logits.shape[1], device=logits.device) == target.unsqueeze(1)
    return (torch.where(hit, p - 1.0, p) * g.unsqueeze(1)).to(logits.dtype)


def eager_bias_grad(g):
    return g.sum(0)


def eager_sigmoid_bwd_bias_grad(g, x):
    """A pointwise backward (g * sigmoid(x), standing for gelu's) and its bias gradient."""
    dx = g * torch.sigmoid(x)
    return dx, dx.sum(0)


def make_inputs(op: str, rows: int, dtype, device="cuda"):
    g = torch.Generator(device=device).manual_seed(rows)

    def randn(*shape, dt=dtype):
        return torch.randn(shape, generator=g, device=device, dtype=torch.float32).to(dt)
    if op == "layer_norm":
        return [randn(rows, HIDDEN), randn(HIDDEN), randn(HIDDEN)]
    if op == "softmax":
        return [randn(rows, rows_to_cols(rows))]
    if op == "gelu_bias":
        return [randn(rows, FFN), randn(FFN)]
    if op == "dropout_residual_ln":
        return [randn(rows, HIDDEN), randn(rows, HIDDEN), randn(HIDDEN), randn(HIDDEN)]
    if op == "cross_entropy":
        target = torch.randint(0, VOCAB, (rows,), generator=g, device=device)
        return [randn(rows, VOCAB), target]
    if op in CE_BWD_VOCAB:
        logits = randn(rows, CE_BWD_VOCAB[op])
        target = torch.randint(0, CE_BWD_VOCAB[op], (rows,), generator=g, device=device)
        lse = torch.logsumexp(logits.float(), 1)
        return [logits, lse, target, randn(rows, dt=torch.float32)]
    if op == "bias_grad":
        return [randn(rows, FFN)]
    if op == "sigmoid_bwd_bias_grad":
        return [randn(rows, FFN), randn(rows, FFN)]
    raise KeyError(op)


def rows_to_cols(rows: int) -> int:
    """Softmax rows are (batch*heads*seq, seq): the sequence length is the row's last dim."""
    return SOFTMAX_SEQ[rows]


# softmax sizes: seq lengths (odd ones included); rows = 16 heads * 4 batch * seq
SOFTMAX_SEQ = {64 * s: s for s in (127, 256, 511, 1024)}
SIZES = {
    "layer_norm": [511, 2048, 4097, 8192, 16383],
    "softmax": sorted(SOFTMAX_SEQ),
    "gelu_bias": [511, 2048, 4097, 8192],
    "dropout_residual_ln": [511, 2048, 4097, 8192, 16383],
    "cross_entropy": [511, 1024, 2047, 4096],
    "cross_entropy_bwd": [511, 1024, 2047, 4096],
    "cross_entropy_bwd_odd": [511, 1024, 2047, 4096],
    # column sums (bias gradients over B*T rows): GPT-2's fc1 bias at T=512 is 4096 x 3072
    "bias_grad": [511, 2048, 4096, 8191],
    "sigmoid_bwd_bias_grad": [511, 2048, 4096, 8191],
}
# --large: memory-bound sizes (hundreds of MB moved per call), for bandwidth against copy
LARGE_SIZES = {
    "layer_norm": [65535, 131072],
    "softmax": [32704, 65536],
    "gelu_bias": [32769, 65536],
    "dropout_residual_ln": [65535, 131072],
    "cross_entropy": [8191, 16384],
    "cross_entropy_bwd": [8191, 16384],
    "cross_entropy_bwd_odd": [8191, 16384],
    "bias_grad": [32769, 65536],
    "sigmoid_bwd_bias_grad": [32769, 65536],
}
EAGER = {"layer_norm": eager_layer_norm, "softmax": eager_softmax, "gelu_bias": eager_gelu_bias,
         "dropout_residual_ln": eager_dropout_residual_ln, "cross_entropy": eager_cross_entropy,
         "cross_entropy_bwd": eager_cross_entropy_bwd,
         "cross_entropy_bwd_odd": eager_cross_entropy_bwd, "bias_grad": eager_bias_grad,
         "sigmoid_bwd_bias_grad": eager_sigmoid_bwd_bias_grad}
RANDOM_OPS = {"dropout_residual_ln"}


def io_bytes(inputs, outputs) -> int:
    tensors = [t for t in list(inputs) + list(outputs) if isinstance(t, torch.Tensor)]
    return sum(t.numel() * t.element_size() for t in tensors)


# --------------------------------------------------------------------------------------- symc
def symc_graph(op: str, dtype, device="cuda"):
    """Trace the op's prims decomposition with symbolic row (and seq) sizes: one graph."""
    from inductor.compile import compile_graph
    from prims import GraphTracer, TracedTensor, tracing
    from prims.decompositions import DECOMPOSITIONS as D
    from symbolic import LocalSource, ShapeEnv, SizeSource, TensorMeta

    env = ShapeEnv()
    rows = env.create_symbol(2048, SizeSource(LocalSource("x"), 0))
    seq = env.create_symbol(256, SizeSource(LocalSource("x"), 1)) if op == "softmax" else None
    shapes = {
        "layer_norm": [((rows, HIDDEN), dtype), ((HIDDEN,), dtype), ((HIDDEN,), dtype)],
        "softmax": [((rows, seq), dtype)],
        "gelu_bias": [((rows, FFN), dtype), ((FFN,), dtype)],
        "dropout_residual_ln": [((rows, HIDDEN), dtype), ((rows, HIDDEN), dtype),
                                ((HIDDEN,), dtype), ((HIDDEN,), dtype)],
        "cross_entropy": [((rows, VOCAB), dtype), ((rows,), torch.int64)],
        **{name: [((rows, vocab), dtype), ((rows,), torch.float32), ((rows,), torch.int64),
                  ((rows,), torch.float32)] for name, vocab in CE_BWD_VOCAB.items()},
        "bias_grad": [((rows, FFN), dtype)],
        "sigmoid_bwd_bias_grad": [((rows, FFN), dtype), ((rows, FFN), dtype)],
    }[op]
    graph = fx.Graph()
    args = []
    for i, (shape, dt) in enumerate(shapes):
        node = graph.placeholder(f"in{i}")
        meta = TensorMeta.contiguous(tuple(shape), dt, device)
        node.meta["val"] = meta
        args.append(TracedTensor(node, meta))
    with tracing(GraphTracer(graph, env)):
        if op == "layer_norm":
            out = D[F.layer_norm](args[0], (HIDDEN,), args[1], args[2], 1e-5)
        elif op == "softmax":
            out = D[torch.softmax](args[0], -1)
        elif op == "gelu_bias":
            out = D[F.gelu](D[torch.add](args[0], args[1]))
        elif op == "dropout_residual_ln":
            dropped = D[F.dropout](args[0], 0.1, True)
            out = D[F.layer_norm](D[torch.add](dropped, args[1]), (HIDDEN,), args[2], args[3],
                                  1e-5)
        elif op in CE_BWD_VOCAB:
            logits, lse, target, g = args
            p = D[torch.exp](D[torch.sub](D[torch.Tensor.float](logits),
                                          D[torch.unsqueeze](lse, 1)))
            hit = D[torch.eq](D[torch.arange](CE_BWD_VOCAB[op], device=device),
                              D[torch.unsqueeze](target, 1))
            out = D[torch.mul](D[torch.where](hit, D[torch.sub](p, 1.0), p),
                               D[torch.unsqueeze](g, 1))
            out = D[torch.Tensor.to](out, dtype)
        elif op == "bias_grad":
            out = D[torch.sum](args[0], (0,))
        elif op == "sigmoid_bwd_bias_grad":
            out = D[torch.mul](args[0], D[torch.sigmoid](args[1]))
            out = (out, D[torch.sum](out, (0,)))
        else:
            out = D[F.cross_entropy](args[0], args[1])
    outs = out if isinstance(out, tuple) else (out,)
    graph.output(tuple(o.node for o in outs))
    takes_seed = any(n.meta.get("rng_seed") for n in graph.nodes if n.op == "placeholder")
    t0 = time.perf_counter()
    compiled = compile_graph(graph, env, device_backend="triton")
    build_s = time.perf_counter() - t0
    if takes_seed:
        seed = torch.tensor(1234, dtype=torch.int64, device=device)
        return (lambda *xs: compiled(*xs, seed)[0]), compiled, build_s
    if len(outs) > 1:
        return (lambda *xs: compiled(*xs)), compiled, build_s
    return (lambda *xs: compiled(*xs)[0]), compiled, build_s


# ------------------------------------------------------------------------------------- timing
def time_ms(fn, args, reps: int) -> float:
    """Median of `reps` CUDA-event timings after warm-up; flushes nothing (hot L2 for small)."""
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def copy_bandwidth_gbs() -> float:
    x = torch.empty(256 * 2**20 // 4, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    ms = time_ms(lambda a, b: b.copy_(a), (x, y), 20)
    return 2 * x.numel() * 4 / (ms * 1e-3) / 1e9


def dynamo_counts() -> dict:
    try:
        from torch._dynamo.utils import counters
        return {"frames_ok": int(counters["frames"]["ok"]),
                "recompiles": int(sum(counters["recompiles"].values()))
                if "recompiles" in counters else None}
    except Exception:  # noqa: BLE001 - best effort diagnostics
        return {}


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def max_error(a, b) -> float | None:
    try:
        return max(float((x.float() - y.float()).abs().max())
                   for x, y in zip(_as_list(a), _as_list(b), strict=True))
    except Exception:  # noqa: BLE001
        return None


def cpu_us_per_call(fn, args, n: int = 2000) -> float:
    """Host time per call with the GPU not the bottleneck (tiny tensors): launch overhead."""
    for _ in range(20):
        fn(*args)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def measure_overhead() -> dict:
    """Per-call host overhead (us) at a tiny size: eager, symc graph, symc launcher, raw Triton."""
    import sympy

    from inductor.codegen.triton import compile_group
    from inductor.codegen.triton_group import GroupNode, KernelGroup

    out = {}
    x, w, b = make_inputs("layer_norm", 8, torch.float32)
    out["eager_layer_norm"] = cpu_us_per_call(eager_layer_norm, (x, w, b))
    fn, _, _ = symc_graph("layer_norm", torch.float32)
    out["symc_graph_layer_norm"] = cpu_us_per_call(fn, (x, w, b))
    s0 = sympy.Symbol("s0", integer=True, positive=True)

    def body(ops, xv, rv):
        ops.store("out", xv[0], ops.exp(ops.load("a", xv[0])))
    group = KernelGroup("ovh", (s0,), (), (GroupNode(body),),
                        {"a": torch.float32, "out": torch.float32},
                        inputs=("a",), outputs=("out",), symbol_args=(s0,))
    kernel = compile_group(group)
    a = torch.randn(64, device="cuda")
    o = torch.empty_like(a)
    out["symc_launcher_exp"] = cpu_us_per_call(kernel, (a, o, 64))
    cfg = kernel.spec.configs[0]
    jit = kernel.variant(cfg.body, kernel.alignment_level((a, o, 64)))
    out["triton_jit_exp"] = cpu_us_per_call(
        lambda *xs: jit[(1,)](*xs, num_warps=cfg.num_warps, **cfg.constexprs()), (a, o, 64))
    out["eager_exp"] = cpu_us_per_call(torch.exp, (a,))
    return out


# --------------------------------------------------------------------------------------- main
def run_op(op: str, dtype, reps: int, modes: list[str]) -> dict:
    from inductor.runtime.triton_launch import COUNTERS

    result = {"op": op, "dtype": str(dtype), "sizes": SIZES[op], "modes": {}}
    eager = EAGER[op]
    makers = {
        "eager": lambda: (eager, {}),
        "symc": lambda: _symc_mode(op, dtype),
        "compile_dynamic": lambda: (torch.compile(eager, dynamic=True), {}),
        "compile_static": lambda: (torch.compile(eager, dynamic=False), {}),
    }
    for mode in modes:
        entry = {"per_size": {}, "errors": {}}
        result["modes"][mode] = entry
        try:
            torch._dynamo.reset()
            t0 = time.perf_counter()
            fn, info = makers[mode]()
            entry.update(info)
            entry["setup_s"] = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001
            entry["failed"] = f"{type(e).__name__}: {e}"
            entry["traceback"] = traceback.format_exc()[-3000:]
            continue
        compiles_before = COUNTERS["compiles"]
        first_call = {}
        for rows in SIZES[op]:
            try:
                inputs = make_inputs(op, rows, dtype)
                t0 = time.perf_counter()
                out = fn(*inputs)
                torch.cuda.synchronize()
                first_call[rows] = time.perf_counter() - t0
                ms = time_ms(fn, inputs, reps)
                nbytes = io_bytes(inputs, _as_list(out))
                row = {"ms": ms, "GBps": nbytes / (ms * 1e-3) / 1e9, "bytes": nbytes,
                       "first_call_s": first_call[rows]}
                if op not in RANDOM_OPS and mode != "eager":
                    row["max_err_vs_eager"] = max_error(out, eager(*inputs))
                entry["per_size"][str(rows)] = row
            except Exception as e:  # noqa: BLE001
                entry["errors"][str(rows)] = f"{type(e).__name__}: {e}"
        if mode == "symc":
            entry["triton_binaries_after_first_size"] = entry.get("binaries_after_build")
            entry["triton_binaries_built_during_sizes"] = COUNTERS["compiles"] - compiles_before
            entry["counters"] = dict(COUNTERS)
        if mode.startswith("compile"):
            entry["dynamo"] = dynamo_counts()
    return result


def _symc_mode(op, dtype):
    from inductor.runtime.triton_launch import COUNTERS

    fn, compiled, build_s = symc_graph(op, dtype)
    info = {"build_s": build_s, "kernels": compiled.kernels,
            "kernel_source_lines": compiled.kernel_source.count("\n")}
    # the first call compiles every variant up front (precompile): count it here
    before = COUNTERS["compiles"]
    inputs = make_inputs(op, SIZES[op][0], dtype)
    t0 = time.perf_counter()
    fn(*inputs)
    torch.cuda.synchronize()
    info["precompile_s"] = time.perf_counter() - t0
    info["binaries_after_build"] = COUNTERS["compiles"] - before
    return fn, info


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--ops", default=",".join(SIZES))
    parser.add_argument("--modes", default="eager,symc,compile_dynamic,compile_static")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="2 sizes per op, 10 reps")
    parser.add_argument("--large", action="store_true", help="large memory-bound sizes only")
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("gpu_kernels: no CUDA device; nothing to measure", file=sys.stderr)
        return 1
    if args.large:
        SIZES.update(LARGE_SIZES)
    if args.quick:
        for op in SIZES:
            SIZES[op] = SIZES[op][:2]
        args.reps = 10
    report = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "copy_GBps": copy_bandwidth_gbs(),
        "results": [],
    }
    try:
        import triton
        report["triton"] = triton.__version__
    except ImportError:
        report["triton"] = None
    try:
        report["overhead_us"] = measure_overhead()
        print("host overhead per call (us):",
              {k: round(v, 1) for k, v in report["overhead_us"].items()}, flush=True)
    except Exception as e:  # noqa: BLE001
        report["overhead_us"] = {"failed": f"{type(e).__name__}: {e}"}
    modes = args.modes.split(",")
    for dt_name in args.dtypes.split(","):
        dtype = getattr(torch, dt_name)
        for op in args.ops.split(","):
            print(f"== {op} {dt_name}", flush=True)
            res = run_op(op, dtype, args.reps, modes)
            report["results"].append(res)
            print_table(res, report["copy_GBps"])
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ("gpu_kernels_large.json" if args.large else "gpu_kernels.json")
    path.write_text(json.dumps(report, indent=1, default=str))
    print(f"wrote {path}")
    return 0


def print_table(res: dict, copy_gbps: float) -> None:
    modes = list(res["modes"])
    print(f"{'rows':>8} " + " ".join(f"{m:>22}" for m in modes))
    for rows in res["sizes"]:
        cells = []
        for m in modes:
            entry = res["modes"][m]
            row = entry.get("per_size", {}).get(str(rows))
            if entry.get("failed"):
                cells.append(f"{'FAILED':>22}")
            elif row is None:
                cells.append(f"{'error':>22}")
            else:
                pct = 100 * row["GBps"] / copy_gbps
                cells.append(f"{row['ms']:8.4f}ms {row['GBps']:6.0f}GB/s{pct:3.0f}%")
        print(f"{rows:>8} " + " ".join(cells))
    for m in modes:
        entry = res["modes"][m]
        if entry.get("failed"):
            print(f"  {m} failed: {entry['failed']}")
        if m == "symc" and not entry.get("failed"):
            print(f"  symc: {entry.get('kernels')} kernel(s), binaries built at first call "
                  f"{entry.get('binaries_after_build')}, during later sizes "
                  f"{entry.get('triton_binaries_built_during_sizes')}")


if __name__ == "__main__":
    sys.exit(main())
