"""Kernel census of a compiled GPT training step: every kernel group, extern and copy, per graph.

    python bench/kernel_census.py                    # tiny GPT, f32, CPU (Triton interpreter)
    python bench/kernel_census.py --backend torch --json out.json   # the IR run by torch: faster
    python bench/kernel_census.py --layers 2 --embd 64 --heads 4 --batch 2 --seq 16
    python bench/kernel_census.py --backend torch --layers 12 --embd 768 --heads 12 \
        --vocab 50257 --batch 2 --seq 3 --at-batch 8 --at-seq 512   # GPT-2 small's bytes at T=512

Runs one training step of the tiny GPT (symc/demo_model.py) under symc's inductor backend and
prints, for the forward and backward graphs: the generated kernels by kind (pointwise,
reduction) with their member nodes and an estimate of the bytes each reads and writes (at the
first call's sizes, or at --at-batch/--at-seq), the externs (matmul, attention, ...) with the
operands passed as strided views, and every copy the step makes at run time (aten clone/copy_/zeros/_to_copy seen by a
dispatch mode) with the line of symc's runtime that made it. The counts are what the GPU
profile (bench/profile_step.py) shows as `generated_*` launches and `copies`. A *copy kernel*
is a pointwise kernel that only moves one buffer ("transpose", "copy") or casts it ("cast").
(By default the census runs in f32; --bf16 runs the step under CPU autocast decomposed with
CUDA autocast's op lists, the casts and bf16 buffers of the GPU's bf16 step. Attention is the
`sdpa` extern as on the GPU when dropout is 0.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sympy  # noqa: E402
import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

COPY_OPS = ("clone", "copy_", "_to_copy", "zeros", "zero_", "fill_", "contiguous", "new_zeros",
            "full", "empty_strided")
_HERE = str(Path(__file__).resolve().parents[1])


def _origin() -> str:
    """The innermost frame of the project (not torch, not this tool) that made the call."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        f = frame.filename
        if f.startswith(_HERE) and not f.endswith("kernel_census.py"):
            return f"{os.path.relpath(f, _HERE)}:{frame.lineno} {frame.line}"
        if f == "<symc wrapper>":
            return f"<wrapper>:{frame.lineno}"
    return "?"


_NOT_THE_STEP = ("triton/runtime/interpreter", "inductor/ir_eval.py", "prims/random.py")


def _interpreter_copy() -> bool:
    """Copies made by the CPU stand-ins of the kernels (the Triton interpreter moving arguments,
    the torch backend evaluating the IR) are not copies of the step on the GPU."""
    return any(any(k in f.filename.replace(os.sep, "/") for k in _NOT_THE_STEP)
               for f in traceback.extract_stack(limit=16))


class CopyRecorder(TorchDispatchMode):
    """Records every copy-like aten op of the step: (op, shape, dtype, where)."""

    def __init__(self):
        super().__init__()
        self.copies: list[dict] = []
        self.phase = "?"

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in COPY_OPS and not _interpreter_copy():
            shape = next((tuple(a.shape) for a in args if isinstance(a, torch.Tensor)), None)
            out = func(*args, **(kwargs or {}))
            if shape is None and isinstance(out, torch.Tensor):
                shape = tuple(out.shape)
            dtype = out.dtype if isinstance(out, torch.Tensor) else None
            self.copies.append({"phase": self.phase, "op": name, "shape": shape,
                                "dtype": str(dtype).removeprefix("torch."),
                                "where": _origin()})
            return out
        return func(*args, **(kwargs or {}))


def _numel(buf, env, at: dict | None = None) -> int:
    """Elements of `buf` at the first call's sizes, or with `at` (example value -> value: the
    step's sizes the GPU benchmark runs) substituted for every symbol whose hint is a key."""
    n = buf.layout.numel()
    if env is None:
        return int(n)
    if at:
        values = {s: sympy.Integer(at.get(h, h)) for s, h in env.hints.items()}
        n = sympy.sympify(env.simplify(n)).xreplace(values)
        return int(sympy.sympify(n).xreplace(values))
    return int(env.size_hint(n))


def group_bytes(group, buffers, env, at: dict | None = None) -> tuple[int, int]:
    """(bytes read, bytes written) of one kernel group: each input and output once."""
    def size(name):
        buf = buffers[name]
        return _numel(buf, env, at) * buf.dtype.itemsize
    return (sum(size(n) for n in group.inputs), sum(size(n) for n in group.outputs))


def copy_reason(group, buffers) -> str | None:
    """Why a pointwise kernel is only a copy ("transpose", "cast", "copy"), else None."""
    from inductor.ir import index_vars
    from inductor.ops import CountingHandler
    if group.rranges or len(group.inputs) != 1 or len(group.outputs) != 1:
        return None
    counter = CountingHandler()
    xvars = index_vars("x", len(group.xranges))
    for node in group.nodes:
        node.body(counter, xvars, ())
    if len(counter.loads) != 1 or len(counter.stores) != 1 or counter.count > 2:
        return None
    (src, load_at), (dst, store_at) = counter.loads[0], counter.stores[0]
    if buffers[src].dtype != buffers[dst].dtype:
        return "cast"
    return "copy" if sympy.expand(load_at - store_at) == 0 else "transpose"


def census_of(compiled, env, at: dict | None = None) -> dict:
    """Kernels, externs and their byte estimates of one CompiledGraph."""
    from inductor.ir import ExternNode, PermutedBuffer, StridedBuffer
    buffers = compiled.buffers
    kernels, externs = [], []
    for step in compiled.steps:
        if isinstance(step, ExternNode):
            views = []

            def visit(v):
                if isinstance(v, (PermutedBuffer, StridedBuffer)):
                    views.append(str(v))
                elif isinstance(v, (tuple, list)):
                    for x in v:
                        visit(x)
            visit(step.args)
            externs.append({"name": step.name, "prim": step.prim.name, "strided_views": views,
                            "outputs": [str(b) for b in step.outputs]})
            continue
        read, written = group_bytes(step, buffers, env, at)
        kernels.append({"name": step.name, "kind": "reduction" if step.rranges else "pointwise",
                        "members": [n.name for n in step.nodes],
                        "member_kinds": [n.kind for n in step.nodes],
                        "inputs": list(step.inputs), "outputs": list(step.outputs),
                        "bytes_read": read, "bytes_written": written,
                        "copy": copy_reason(step, buffers)})
    return {"kernels": kernels, "externs": externs}


def _autocast(bf16: bool):
    from prims.autocast import cpu_autocast_as_cuda
    return cpu_autocast_as_cuda() if bf16 else contextlib.nullcontext()


def run_step(args) -> tuple[list, list]:
    import inductor
    import symc
    from symc.demo_model import GPT, GPTConfig

    compiled_graphs: list = []
    original = inductor.compile_graph

    def recording(graph, env=None, **kw):
        cg = original(graph, env, **kw)
        compiled_graphs.append((cg, env))
        return cg
    inductor.compile_graph = recording
    try:
        torch.manual_seed(0)
        config = GPTConfig(vocab_size=args.vocab, block_size=max(64, args.seq), n_layer=args.layers,
                           n_head=args.heads, n_embd=args.embd, dropout=args.dropout)
        model = GPT(config).train()
        step = symc.compile(model, backend="inductor")
        idx = torch.randint(0, args.vocab, (args.batch, args.seq))
        targets = torch.randint(0, args.vocab, (args.batch, args.seq))
        # the first step compiles; the second is the one recorded (compiles make no copies)
        for record in (False, True):
            recorder = CopyRecorder()
            with recorder if record else contextlib.nullcontext(), _autocast(args.bf16):
                recorder.phase = "forward"
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
                    _, loss = step(idx, targets)
                recorder.phase = "backward"
                loss.backward()
            model.zero_grad(set_to_none=True)
    finally:
        inductor.compile_graph = original
    return compiled_graphs, recorder.copies


def summarize(compiled_graphs, copies, at: dict | None = None) -> dict:
    graphs = []
    for i, (cg, env) in enumerate(compiled_graphs):
        if not hasattr(cg, "steps"):
            graphs.append({"graph": i, "fallback": getattr(cg, "reason", "?")})
            continue
        c = census_of(cg, env, at)
        c["graph"] = i
        graphs.append(c)
    kinds = Counter(k["kind"] for g in graphs for k in g.get("kernels", ()))
    copy_kernels = Counter(k["copy"] for g in graphs for k in g.get("kernels", ()) if k["copy"])
    total = {"kernels": sum(kinds.values()), "pointwise": kinds["pointwise"],
             "copy_kernels": dict(copy_kernels),
             "reduction": kinds["reduction"],
             "externs": sum(len(g.get("externs", ())) for g in graphs),
             "copies": len(copies),
             "kernel_bytes": sum(k["bytes_read"] + k["bytes_written"]
                                 for g in graphs for k in g.get("kernels", ()))}
    return {"total": total, "bytes_at": {str(k): v for k, v in (at or {}).items()},
            "graphs": graphs, "copies": copies}


def print_report(report) -> None:
    for g in report["graphs"]:
        if "fallback" in g:
            print(f"== graph {g['graph']}: reference fallback: {g['fallback']}")
            continue
        kb = sum(k["bytes_read"] + k["bytes_written"] for k in g["kernels"])
        print(f"== graph {g['graph']}: {len(g['kernels'])} kernels, {len(g['externs'])} externs, "
              f"{kb / 1e3:.1f} kB moved by kernels")
        for k in g["kernels"]:
            print(f"  {k['kind'][:3]} {k['name'][:48]:48s} r={k['bytes_read']:>9} "
                  f"w={k['bytes_written']:>9}  in={','.join(k['inputs'])} "
                  f"out={','.join(k['outputs'])}" + (f"  [{k['copy']}]" if k["copy"] else ""))
        for e in g["externs"]:
            views = f" views: {' '.join(e['strided_views'])}" if e["strided_views"] else ""
            print(f"  ext {e['name']:12s} {e['prim']}{views}")
    print("== copies at run time (one step)")
    where = Counter((c["phase"], c["op"], c["where"]) for c in report["copies"])
    for (phase, op, line), n in where.most_common():
        print(f"  {n:3d} x {phase:8s} {op:10s} {line}")
    print("== total", json.dumps(report["total"]))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--dropout", type=float, default=0.0, help="> 0 takes the spelled-out "
                   "attention on the CPU (the GPU runs flash attention with dropout either way)")
    p.add_argument("--backend", default="triton", help="device backend on the CPU (triton runs "
                   "in the interpreter)")
    p.add_argument("--at-batch", type=int, help="count bytes at this batch (the symbols whose "
                   "example value is --batch; --batch and --seq must differ)")
    p.add_argument("--at-seq", type=int, help="count bytes at this sequence length (the "
                   "symbols whose example value is --seq), e.g. 512 as bench/profile_step.py")
    p.add_argument("--bf16", action="store_true", help="the forward under bf16 autocast with "
                   "CUDA's op lists, as bench/profile_step.py runs it on the GPU")
    p.add_argument("--json", help="write the census here")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.backend == "triton":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    os.environ["SYMC_CPU_BACKEND"] = args.backend
    at = {}
    if args.at_batch is not None or args.at_seq is not None:
        if args.batch == args.seq:
            p.error("--at-batch/--at-seq map symbols by their example value: --batch and --seq "
                    f"must differ, found both {args.batch}")
        at = {args.batch: args.at_batch or args.batch, args.seq: args.at_seq or args.seq}
    report = summarize(*run_step(args), at)
    if not args.quiet:
        print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    return report


if __name__ == "__main__":
    main()
