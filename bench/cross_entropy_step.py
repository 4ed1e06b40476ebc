"""Cross-entropy forward + backward over a GPT-2 vocabulary: memory and time, symc vs torch.

    python bench/cross_entropy_step.py [--rows 1024,4096] [--vocab 50257] [--quick]

For each mode (eager, torch.compile(dynamic=True), symc) and dtype (bf16, f32 logits), the loss
`F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)` and its backward:
  - class_sized: tensors of N x V elements that aten ops allocate during the step (forward,
    backward; counted through a TorchDispatchMode, so the logits themselves are not counted);
  - peak_mb: peak device memory of the step above the logits and labels (CUDA only);
  - ms: median wall time of forward + backward (CUDA only; synchronised);
  - kernels (symc): launches in the generated forward and backward wrappers.
Results go to $OUT/cross_entropy_step.json if $OUT is set, else bench/results/ (CPU runs use
the C++ kernels and small sizes: only the counts mean something there).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def loss_fn(logits, labels):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)


class ClassSized(TorchDispatchMode):
    def __init__(self, numel):
        super().__init__()
        self.numel, self.count = numel, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        leaves = torch.utils._pytree.tree_leaves
        inputs = {a.untyped_storage().data_ptr() for a in leaves((args, kwargs))
                  if isinstance(a, torch.Tensor)}
        self.count += sum(1 for t in leaves(out) if isinstance(t, torch.Tensor)
                          and t.numel() == self.numel
                          and t.untyped_storage().data_ptr() not in inputs)
        return out


def make(rows, vocab, dtype, device, seed=0):
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(1, rows, vocab, generator=g, device=device).to(dtype).requires_grad_()
    y = torch.randint(0, vocab, (1, rows), generator=g, device=device)
    y[0, ::7] = -100
    return x, y


def measure(fn, rows, vocab, dtype, device, repeats):
    x, y = make(rows, vocab, dtype, device)
    fn(x, y).backward()  # compile / warm up
    x.grad = None
    fwd, bwd = ClassSized(rows * vocab), ClassSized(rows * vocab)
    with fwd:
        loss = fn(x, y)
    with bwd:
        loss.backward()
    result = {"class_sized_forward": fwd.count, "class_sized_backward": bwd.count}
    if device == "cuda":
        times = []
        for _ in range(repeats):
            x.grad = None
            torch.cuda.synchronize()
            start = time.perf_counter()
            fn(x, y).backward()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
        x.grad = None
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn(x, y).backward()
        torch.cuda.synchronize()
        result["ms"] = round(statistics.median(times), 4)
        result["peak_mb_above_inputs"] = round((torch.cuda.max_memory_allocated() - base) / 2**20, 1)
    return result


def main():
    import symc

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="1024,4096")
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows_list = [int(r) for r in args.rows.split(",")]
    vocab = args.vocab
    if device == "cpu":
        rows_list, vocab = [64], 1031
    repeats = 5 if args.quick else 30
    results = []
    for dtype in (torch.bfloat16, torch.float32):
        compiled = symc.compile(loss_fn)
        modes = {"eager": loss_fn, "symc": compiled}
        if device == "cuda":
            modes["compile_dynamic"] = torch.compile(loss_fn, dynamic=True)
        for rows in rows_list:
            for mode, fn in modes.items():
                row = {"mode": mode, "dtype": str(dtype), "rows": rows, "vocab": vocab}
                try:
                    row.update(measure(fn, rows, vocab, dtype, device, repeats))
                except Exception as e:  # a failing mode is recorded, not raised
                    row["error"] = f"{type(e).__name__}: {e}"[:500]
                if mode == "symc":
                    entries = symc.explain(compiled).entries
                    row["entries"] = len(entries)
                    code = entries[0].generated_code if entries else {}
                    row["kernels"] = {k: len(re.findall(r"^\s+k\d+_\w+\(", v.split("# ----")[0],
                                                        re.M)) for k, v in code.items()}
                print(json.dumps(row), flush=True)
                results.append(row)
    out = pathlib.Path(os.environ.get("OUT", ROOT / "bench" / "results"))
    out.mkdir(parents=True, exist_ok=True)
    name = "cross_entropy_step.json" if device == "cuda" else "cross_entropy_step_cpu.json"
    (out / name).write_text(json.dumps({"device": torch.cuda.get_device_name() if device == "cuda"
                                        else "cpu", "torch": torch.__version__,
                                        "results": results}, indent=1))


if __name__ == "__main__":
    main()
