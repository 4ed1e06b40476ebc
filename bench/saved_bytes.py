"""What the backward saves, per GPT block: bytes of the tensors autograd keeps after a forward.

    python bench/saved_bytes.py --out $OUT                 # CUDA, bf16 autocast, T=512, batch 8
    python bench/saved_bytes.py --device cpu --small       # smoke run

Every mode (eager, torch.compile(dynamic=True), symc) runs one forward of a GPT with 1 and with
2 layers under `torch.autograd.graph.saved_tensors_hooks`, which sees every tensor saved for
backward (symc's autograd.Function saves through `ctx.save_for_backward`, so it is seen too).
Storage is counted once however many views of it are saved; parameters are not counted (alive
anyway). Bytes per block = bytes(2 layers) - bytes(1 layer). Split by dtype. JSON out.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import (  # noqa: E402
    environment, error_text, print_table, reset_compilers, wrap_mode, write_json)
from bench.train_varlen import model_config  # noqa: E402
from tests.models.models import GPT, make_batch  # noqa: E402

MODES = ("eager", "symc", "torch_dynamic")


def saved_by_forward(mode: str, layers: int, args) -> dict:
    """Bytes of distinct non-parameter storages saved for backward by one forward."""
    import dataclasses

    reset_compilers()
    config = dataclasses.replace(model_config("gpt", args.small, 1024), n_layer=layers)
    torch.manual_seed(0)
    model = GPT(config).to(args.device).train()
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    runner = wrap_mode(mode, model)
    batch = make_batch("gpt", args.batch, args.seqlen, seed=0, vocab_size=config.vocab_size,
                       device=args.device)
    autocast = torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.device != "cpu")
    with autocast:  # a first call compiles (its saved tensors are not counted)
        runner(**batch)[1].backward()
    seen: dict = {}

    def pack(t):
        if isinstance(t, torch.Tensor):
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr not in params and ptr not in seen:
                seen[ptr] = (storage.nbytes(), str(t.dtype).removeprefix("torch."))
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast:
        _, loss = runner(**batch)
    by_dtype = Counter()
    for nbytes, dtype in seen.values():
        by_dtype[dtype] += nbytes
    del loss, runner, model
    return {"bytes": sum(by_dtype.values()), "tensors": len(seen), "by_dtype": dict(by_dtype)}


def run_mode(mode: str, args) -> dict:
    try:
        one, two = saved_by_forward(mode, 1, args), saved_by_forward(mode, 2, args)
    except Exception as exc:  # noqa: BLE001 - a failing mode is recorded, not fatal
        return {"mode": mode, "error": error_text(exc)}
    per_dtype = {d: two["by_dtype"].get(d, 0) - one["by_dtype"].get(d, 0)
                 for d in set(one["by_dtype"]) | set(two["by_dtype"])}
    return {"mode": mode, "one_layer": one, "two_layers": two,
            "per_block_bytes": two["bytes"] - one["bytes"],
            "per_block_tensors": two["tensors"] - one["tensors"], "per_block_by_dtype": per_dtype}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--small", action="store_true")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seqlen", type=int, default=512)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    results = []
    for mode in args.modes.split(","):  # JSON after every mode: a cut-off run keeps its data
        results.append(run_mode(mode, args))
        write_json(Path(args.out) / "saved_bytes.json",
                   {"benchmark": "saved_bytes", "device": args.device, "batch": args.batch,
                    "seqlen": args.seqlen, "small": args.small, "environment": environment(),
                    "results": results})
    rows = [{"mode": r["mode"], "mb": r.get("per_block_bytes", 0) / 2**20,
             "tensors": r.get("per_block_tensors"), "error": r.get("error"),
             "dtypes": ", ".join(f"{d} {b / 2**20:.1f}" for d, b in
                                 sorted(r.get("per_block_by_dtype", {}).items()))}
            for r in results]
    print_table(f"saved for backward per GPT block (batch {args.batch}, T={args.seqlen})", rows,
                [("mode", "mode", ""), ("mb", "MiB / block", ".2f"),
                 ("tensors", "tensors", ""), ("dtypes", "MiB by dtype", ""),
                 ("error", "error", "")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
