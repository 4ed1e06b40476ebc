"""Compilations of the Hugging Face tiny models at lengths 7, 1 and 9 (issue 22's recompile count).

    python scripts/recompile_counts.py                 # both attention implementations
    ATTN=eager python scripts/recompile_counts.py gpt2,bert

Models are tests/models/test_hf.py's (gpt2, bert, llama, t5) plus DistilBERT, ALBERT, ELECTRA
and DeBERTa-v2 in the same tiny shape; each trains one step per length (backend eager: capture
decides the guards, the backend does not matter). Prints compiles, recompiles, graph breaks and
the first failing guard of each recompile.
"""

from __future__ import annotations

import os
import sys

import torch

import symc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import transformers  # noqa: E402

from tests.models.test_hf import build, make_batch  # noqa: E402

EXTRA = {
    "distilbert": lambda: transformers.DistilBertForMaskedLM(transformers.DistilBertConfig(
        dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64, dropout=0.0,
        attention_dropout=0.0, vocab_size=96)),
    "albert": lambda: transformers.AlbertForMaskedLM(transformers.AlbertConfig(
        embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, vocab_size=96)),
    "electra": lambda: transformers.ElectraForMaskedLM(transformers.ElectraConfig(
        embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, vocab_size=96)),
    "deberta": lambda: transformers.DebertaV2ForMaskedLM(transformers.DebertaV2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        vocab_size=96)),
}


def model_and_batches(name: str, attn: str):
    if name in EXTRA:
        torch.manual_seed(0)
        model = EXTRA[name]()
        model.config._attn_implementation = attn
        model.train()

        def batch(b, t):
            ids = torch.randint(1, 96, (b, t))
            return dict(input_ids=ids, labels=ids.clone())
        return model, batch
    return build(name, attn), lambda b, t: make_batch(name, b, t)


def main() -> None:
    names = (sys.argv[1] if len(sys.argv) > 1 else "gpt2,bert,llama,t5," + ",".join(EXTRA))
    attns = [os.environ["ATTN"]] if "ATTN" in os.environ else ["eager", "sdpa"]
    for attn in attns:
        for name in names.split(","):
            if name == "deberta" and attn == "sdpa":
                continue  # transformers has no sdpa path for DeBERTa-v2
            model, batch = model_and_batches(name, attn)
            compiled = symc.compile(model, backend="eager")
            for t in (7, 1, 9):
                compiled(**batch(2, t)).loss.backward()
            report = symc.explain(compiled)
            print(f"{name:10s} {attn:5s} compiles={report.compiles} "
                  f"recompiles={report.recompiles} breaks={len(report.breaks)}", flush=True)
            for reason in report.recompile_reasons:
                if "failed" in reason:
                    print(f"    {reason[:160]}")


if __name__ == "__main__":
    main()
