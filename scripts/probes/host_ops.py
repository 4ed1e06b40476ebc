"""Host microseconds of the tensor calls a symc wrapper line makes, on one device (GPU probe).

    source scripts/gpu_env.sh && python3 scripts/probes/host_ops.py --out $OUT
    python3 scripts/probes/host_ops.py --device cpu --batch 1 --seq 8   # here (CPU matmuls
                                                                         # compute: small sizes)

Each call of `make_calls` runs in rounds, interleaved with the others (a noisy host inflates
every call of a round alike), at GPT-2 small's sizes (batch 8, T=512); the table gives each
call's minimum over the rounds. Answers, for the host path of issue 21: is an allocation
cheaper as a bound `new_empty_strided` than as `torch.empty_strided(..., dtype=, device=)`; a
reuse view as `as_strided` than as `.view(shape)`; `linear(a, w)` than `mm(a, w.mT)`
(SYMC_MM_AS_LINEAR); a stream query or a `data_ptr()` worth hoisting out of the launches.
JSON in $OUT/host_ops.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch


def make_calls(device: torch.device, s0: int, s1: int) -> dict:
    """name -> a no-argument callable making one wrapper-line tensor call (batch s0, T s1)."""
    bf16 = torch.bfloat16
    proto = torch.empty(0, dtype=bf16, device=device)
    new_empty = proto.new_empty_strided
    empty = torch.empty_strided
    big = torch.empty(s0 * s1 * 2304, dtype=bf16, device=device)
    act = torch.empty(s0 * s1 * 768, dtype=bf16, device=device)
    act2 = act.view(s0 * s1, 768)
    w = torch.randn(2304, 768, dtype=bf16, device=device)
    mm, linear = torch.mm, torch.nn.functional.linear
    calls = {
        "empty_strided(dtype=, device=)": lambda: empty(
            (s0, s1, 768), (768 * s1, 768, 1), dtype=bf16, device=device),
        "bound new_empty_strided": lambda: new_empty((s0, s1, 768), (768 * s1, 768, 1)),
        "as_strided (reuse view)": lambda: big.as_strided((s0, s1, 12, 64),
                                                          (768 * s1, 768, 64, 1)),
        ".view(-1)[:n].view(shape)": lambda: big.view(-1)[:768 * s0 * s1].view(
            (s0, s1, 12, 64)),
        ".view(shape tuple)": lambda: act.view((s0, s1, 12, 64)),
        ".permute(0, 2, 1, 3)": lambda: act.view(s0, s1, 12, 64).permute(0, 2, 1, 3),
        ".transpose(1, 2)": lambda: act.view(s0, s1, 12, 64).transpose(1, 2),
        ".mT": lambda: w.mT,
        "mm(a, w.mT)": lambda: mm(act2, w.mT),
        "linear(a, w)": lambda: linear(act2, w),
        "is_contiguous()": lambda: act.is_contiguous(),
        "data_ptr()": lambda: act.data_ptr(),
        "(nothing: the loop)": lambda: None,
    }
    if device.type == "cuda":
        stream, index = torch._C._cuda_getCurrentRawStream, device.index or 0
        calls["current raw stream"] = lambda: stream(index)
    return calls


def measure(calls: dict, rounds: int, reps: int, sync) -> dict:
    """Per call, the minimum over `rounds` of the mean microseconds of `reps` back-to-back
    calls (the GPU queue drained before each timing: host time only)."""
    best = {name: float("inf") for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            sync()
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / reps * 1e6)
            sync()
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--out", default=".")
    args = p.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    with torch.no_grad():
        best = measure(make_calls(device, args.batch, args.seq), args.rounds, args.reps, sync)
    width = max(map(len, best))
    for name, us in best.items():
        print(f"{name:<{width}}  {us:8.2f} us")
    out = Path(args.out) / "host_ops.json"
    out.write_text(json.dumps({"device": str(device), "torch": torch.__version__,
                               "us_min": best, "rounds": args.rounds, "reps": args.reps},
                              indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
