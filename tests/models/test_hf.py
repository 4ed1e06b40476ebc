"""Hugging Face transformers models, built from tiny random configs, train through symc.compile:
one compilation serves every length and batch size, losses, logits and gradients match eager.
Models and batches live on the test device (tests/device.py: CUDA in the GPU run).

Known graph breaks per model (both attention implementations, every backend); the test asserts
these counts, so a regression or an improvement shows up here. Update the table with the reason.

    model                        attention      graphs  breaks
    GPT2LMHeadModel              eager, sdpa    1       0
    BertForMaskedLM              eager, sdpa    1       0
    LlamaForCausalLM             eager, sdpa    1       0
    T5ForConditionalGeneration   eager, sdpa    1       0

The table holds for transformers 5.17 and 5.24 alike: 5.17's eager mask calls
`torch.tensor(0.0, device=..., dtype=...)`, its rotary embedding enters `maybe_autocast(...)`
(a `contextlib.nullcontext()` when autocast is off) and its Llama sdpa path passes
`enable_gqa=True`; all three are captured (tests/symc/test_tensor_literals.py,
test_null_context.py, test_attention_gqa.py).

Configs set `use_cache=False`: a full-sequence forward needs no KV cache. The default
(`use_cache=True`, a DynamicCache built and returned by each forward) is covered by
tests/models/test_hf_use_cache.py. GPT-2 gets
`loss_type = "ForCausalLM"`: the name-derived default is None, which logs a warning (a side
effect, so a break) and then picks the same loss.
"""

from __future__ import annotations

import pytest
import torch

import symc
from tests.device import DEVICE

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.hf

VOCAB = 96
# 8 lengths over 2 batch sizes; the first call is not at size 1 (that may specialise).
SHAPES = [(2, 5), (3, 7), (2, 9), (3, 12), (2, 16), (3, 3), (2, 21), (3, 30)]
KNOWN_BREAKS = {
    ("gpt2", "eager"): 0, ("gpt2", "sdpa"): 0,
    ("bert", "eager"): 0, ("bert", "sdpa"): 0,
    ("llama", "eager"): 0, ("llama", "sdpa"): 0,
    ("t5", "eager"): 0, ("t5", "sdpa"): 0,
}


def build(name: str, attn: str) -> torch.nn.Module:
    """A tiny model with random weights (seeded), dropout 0; no download."""
    torch.manual_seed(0)
    common = dict(vocab_size=VOCAB, attn_implementation=attn, use_cache=False)
    if name == "gpt2":
        config = transformers.GPT2Config(n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                         resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                         bos_token_id=0, eos_token_id=0, **common)
        model = transformers.GPT2LMHeadModel(config)
        model.loss_type = "ForCausalLM"
    elif name == "bert":
        config = transformers.BertConfig(hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=4, intermediate_size=64,
                                         max_position_embeddings=64, hidden_dropout_prob=0.0,
                                         attention_probs_dropout_prob=0.0, **common)
        model = transformers.BertForMaskedLM(config)
    elif name == "llama":
        config = transformers.LlamaConfig(hidden_size=32, intermediate_size=64,
                                          num_hidden_layers=2, num_attention_heads=4,
                                          num_key_value_heads=2, max_position_embeddings=64,
                                          bos_token_id=0, eos_token_id=0, **common)
        model = transformers.LlamaForCausalLM(config)
    elif name == "t5":
        config = transformers.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                       dropout_rate=0.0, decoder_start_token_id=0,
                                       pad_token_id=0, eos_token_id=1, **common)
        model = transformers.T5ForConditionalGeneration(config)
    else:
        raise ValueError(name)
    return model.train().to(DEVICE)


def make_batch(name: str, batch: int, seqlen: int, labels: bool = True) -> dict:
    g = torch.Generator().manual_seed(1000 * batch + seqlen)
    ids = torch.randint(1, VOCAB, (batch, seqlen), generator=g)
    inputs = dict(input_ids=ids)
    if name == "t5":
        targets = torch.randint(1, VOCAB, (batch, seqlen), generator=g)
        if labels:
            inputs["labels"] = targets
        else:
            inputs["decoder_input_ids"] = targets
    elif name == "bert":
        inputs["attention_mask"] = torch.ones_like(ids)
        if labels:
            inputs["labels"] = torch.where(torch.rand(ids.shape, generator=g) < 0.3, ids, -100)
    elif labels:
        inputs["labels"] = ids.clone()
    return {k: v.to(DEVICE) for k, v in inputs.items()}


def _grads(model):
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def _check_report(compiled, name, attn, where):
    report = symc.explain(compiled)
    per_function = {e.function for e in report.entries}
    assert report.recompiles == 0, str(report)
    assert report.compiles == len(per_function), str(report)   # one compile per function
    assert all(b.reason for b in report.breaks), str(report)
    breaks = [f"{b.function}: {b.reason}" for b in report.breaks]
    assert len(breaks) == KNOWN_BREAKS[name, attn], f"{where}: breaks changed: {breaks}"
    return report


MODELS = sorted({name for name, _ in KNOWN_BREAKS})
TRAIN_CASES = [(n, a, b) for n in MODELS for a in ("eager", "sdpa") for b in ("eager", "aot_eager")]
TRAIN_CASES += [("gpt2", "sdpa", "inductor"), ("llama", "sdpa", "inductor")]


@pytest.mark.parametrize("name, attn, backend", TRAIN_CASES)
def test_hf_model_trains_every_length_with_one_compilation(name, attn, backend):
    reference, model = build(name, attn), build(name, attn)
    model.load_state_dict(reference.state_dict())
    compiled = symc.compile(model, backend=backend)
    for batch, seqlen in SHAPES:
        inputs = make_batch(name, batch, seqlen)
        for m in (model, reference):
            m.zero_grad(set_to_none=True)
        out = compiled(**inputs)
        out.loss.backward()
        ref = reference(**inputs)
        ref.loss.backward()
        where = f"{name}/{attn}/{backend} at batch {batch}, length {seqlen}"
        torch.testing.assert_close(out.logits, ref.logits, atol=1e-4, rtol=1e-4, msg=where)
        torch.testing.assert_close(out.loss, ref.loss, atol=1e-5, rtol=1e-5, msg=where)
        got, want = _grads(model), _grads(reference)
        assert got.keys() == want.keys(), where
        for key in want:
            torch.testing.assert_close(got[key], want[key], atol=1e-4, rtol=1e-3,
                                       msg=lambda m, key=key: f"{where}: grad of {key}: {m}")
    _check_report(compiled, name, attn, f"{name}/{attn}/{backend}")


@pytest.mark.parametrize("name", MODELS)
def test_hf_model_inference_under_no_grad_matches_eager(name):
    model = build(name, "sdpa").eval()
    compiled = symc.compile(model, backend="aot_eager")
    with torch.no_grad():
        for batch, seqlen in SHAPES[:3]:
            inputs = make_batch(name, batch, seqlen, labels=False)
            logits = compiled(**inputs).logits
            assert not logits.requires_grad
            torch.testing.assert_close(logits, model(**inputs).logits, atol=1e-4, rtol=1e-4)
    _check_report(compiled, name, "sdpa", f"{name}/no_grad")
