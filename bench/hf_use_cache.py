"""Hugging Face models with their default configs (`use_cache=True`) trained through symc:
compilations, recompiles, graph breaks and step time against eager (issue 22 part 1).

    python bench/hf_use_cache.py                         # llama,mistral,qwen2,gpt2 on the GPU
    python bench/hf_use_cache.py --models llama --small  # CPU smoke run (tiny sizes)

Sizes are reduced from the defaults (a 7B LLaMA does not fit a quick run): hidden 1024, 8
layers, vocab 32000 (--small: hidden 32, 2 layers, vocab 96); everything else, `use_cache`
included, is the config's default. Each step draws a new length in [--min-len, --max-len].
Prints one line per model and writes JSON to bench/results/hf_use_cache.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import symc  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def build(name: str, small: bool):
    import transformers

    hidden, layers, vocab = (32, 2, 96) if small else (1024, 8, 32000)
    torch.manual_seed(0)
    if name == "gpt2":
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_embd=hidden, n_layer=layers, n_head=max(4, hidden // 64), vocab_size=vocab))
        model.loss_type = "ForCausalLM"   # the name-derived default warns (a side effect)
        return model
    config_class, model_class = {
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM),
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
    }[name]
    heads = max(4, hidden // 64)
    return model_class(config_class(hidden_size=hidden, intermediate_size=4 * hidden,
                                    num_hidden_layers=layers, num_attention_heads=heads,
                                    num_key_value_heads=heads // 2, vocab_size=vocab))


def train(model, lengths, batch, vocab, device) -> float:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    start = time.perf_counter()
    for t in lengths:
        ids = torch.randint(0, vocab, (batch, t), device=device)
        model(input_ids=ids, labels=ids).loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def run(name: str, args, device: str) -> dict:
    rng = random.Random(0)
    lengths = [rng.randint(args.min_len, args.max_len) for _ in range(args.steps)]
    eager = build(name, args.small).to(device).train()
    assert eager.config.use_cache is True
    compiled_model = build(name, args.small).to(device).train()
    vocab = eager.config.vocab_size
    compiled = symc.compile(compiled_model, backend=args.backend)
    first = train(compiled, lengths, args.batch, vocab, device)      # compiles here
    symc_time = train(compiled, lengths, args.batch, vocab, device)
    train(eager, lengths[:3], args.batch, vocab, device)               # warm-up
    eager_time = train(eager, lengths, args.batch, vocab, device)
    report = symc.explain(compiled)
    return {"model": name, "compiles": report.compiles, "recompiles": report.recompiles,
            "breaks": len(report.breaks), "break_reasons": [str(b) for b in report.breaks],
            "recompile_reasons": list(report.recompile_reasons), "first_pass_s": first,
            "symc_s": symc_time, "eager_s": eager_time, "speedup": eager_time / symc_time}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="llama,mistral,qwen2,gpt2")
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--min-len", type=int, default=1)
    parser.add_argument("--max-len", type=int, default=512)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() and not args.small else "cpu"
    if args.small:
        args.max_len = min(args.max_len, 32)
    results = []
    for name in args.models.split(","):
        try:
            row = run(name, args, device)
        except Exception as exc:  # noqa: BLE001 - one failing model is recorded, not fatal
            row = {"model": name, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        results.append(row)
        print(json.dumps({k: v for k, v in row.items() if not k.endswith("reasons")}),
              flush=True)
        for reason in row.get("break_reasons", []) + row.get("recompile_reasons", []):
            print("   ", reason.splitlines()[0])
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "hf_use_cache.json"
    out.write_text(json.dumps({"device": device, "args": vars(args), "results": results},
                              indent=1))
    print("wrote", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
