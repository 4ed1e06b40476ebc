"""The C launcher on a GPU: a small GPT trained by eager and by symc (bench/gpu_smoke.py's check,
the same losses and gradients compared), then which launcher every kernel's entries use.

    python bench/c_launch_check.py --out $OUT --precisions fp32,bf16_autocast

Writes c_launch_check.json: gpu_smoke's results per precision, the entries per layout ("c" is
runtime/c_launch.py's launcher; "run"/"positional"/"annotated" are Triton's) and the reasons any
kernel kept Triton's launcher.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import environment, error_text, write_json  # noqa: E402
from bench.gpu_smoke import check  # noqa: E402
from tests.models.models import GPTConfig  # noqa: E402


def layouts() -> Counter:
    from inductor.runtime.triton_launch import _KERNELS

    seen: Counter = Counter()
    for kernel in list(_KERNELS):
        for slots in kernel._launch_plans.values():
            for entry in slots:
                if entry is not None:
                    seen[entry[0]] += 1
    return seen


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    p.add_argument("--precisions", default="fp32,bf16_autocast")
    args = p.parse_args()
    from inductor.runtime import c_launch

    config = GPTConfig(vocab_size=4096, block_size=1024, n_layer=2, n_head=4, n_embd=256,
                       dropout=0.0)
    results = []
    for precision in args.precisions.split(","):
        start = time.perf_counter()
        try:
            result = check(precision, "cuda", config, 4)
        except Exception as exc:  # noqa: BLE001 - record and go on
            import traceback

            traceback.print_exc()
            result = {"precision": precision, "error": error_text(exc)}
        result["wall_s"] = time.perf_counter() - start
        result.pop("steps", None)
        results.append(result)
        print(result, flush=True)
    payload = {"benchmark": "c_launch_check", "environment": environment(),
               "c_launch_module": c_launch._STATE.get("module") is not None,
               "c_launch_reason": c_launch._STATE.get("reason"),
               "layouts": dict(layouts()), "fallbacks": dict(c_launch.FALLBACKS),
               "results": results}
    print({k: v for k, v in payload.items() if k != "results"}, flush=True)
    write_json(Path(args.out) / "c_launch_check.json", payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
