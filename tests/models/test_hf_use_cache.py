"""Hugging Face models with their DEFAULT configs except sizes (hidden size, layers, vocab made
tiny; `use_cache` left as the config says: True) train through symc.compile: forward, backward
and an optimizer step at lengths 7, 1 and 9 match eager (loss, logits, gradients, weights).

With `use_cache=True` each forward builds a `DynamicCache` (and T5 an `EncoderDecoderCache`),
fills it layer by layer and returns it: capture tracks these objects (capture/objects.py)
and rebuilds the returned cache after the graph. Known compilations and breaks per model
(transformers 5.24, CPU), asserted exactly so that a change shows up:

    model      compiles  breaks  why
    llama      1         0       masking_utils.py:292's `if (q_length == 1 or kv_length ==
    mistral    1         0         q_length) and ...` is one merged condition (short_circuit.py),
    qwen2      1         0         and sdpa_attention.py:182's `is_causal=q_length > 1` is True
    gpt2       1         0         for every length: a causal mask over one key keeps it
                                 (capture/torch_ops.py `_causal_flag`): no size-1 guard
    bert       1         0       (the `q_length > 1 and ...` test of sdpa_attention.py is one
                                 symbolic condition, capture/short_circuit.py: no size-1 guard)
    t5         1         0       `if is_causal:` (sdpa_attention.py:73, `is_causal` the
                                 SymBool `s3 > 1`) builds a causal position-bias mask only for
                                 lengths >= 2; both arms are pure tensor code, so the branch
                                 is if-converted (capture/if_conversion.py): `where(s3 > 1,
                                 masked bias, bias)`, no guard `s3 >= 2`. `DynamicCache(config=
                                 T5Config)` calls `get_text_config`, which deep-copies the
                                 config: run at capture time (capture/state_calls.py)
GPT-2 gets `loss_type = "ForCausalLM"`: its name-derived default logs a warning (a side effect).
At length 1 a causal LM's loss has no target (eager's is nan): the step trains on the logits.
"""

from __future__ import annotations

import pytest
import torch

import symc
from tests.device import DEVICE, ON_GPU

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.hf

VOCAB = 96
LENGTHS = (7, 1, 9)
KNOWN = {   # name -> (compiles, breaks)
    "llama": (1, 0), "mistral": (1, 0), "qwen2": (1, 0), "gpt2": (1, 0), "bert": (1, 0),
    "t5": (1, 0),
}
TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, vocab_size=VOCAB)


def build(name: str) -> torch.nn.Module:
    """Default config but sizes (dropout 0 where the default has dropout, to compare)."""
    torch.manual_seed(0)
    if name in ("llama", "mistral", "qwen2"):
        config_class, model_class = {
            "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
            "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM),
            "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
        }[name]
        model = model_class(config_class(**TINY))
    elif name == "gpt2":
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_positions=64, n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))
        model.loss_type = "ForCausalLM"
    elif name == "bert":
        model = transformers.BertForMaskedLM(transformers.BertConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=64, vocab_size=VOCAB, hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0))
    elif name == "t5":
        model = transformers.T5ForConditionalGeneration(transformers.T5Config(
            d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, vocab_size=VOCAB,
            dropout_rate=0.0, decoder_start_token_id=0))
    else:
        raise ValueError(name)
    assert model.config.use_cache is True
    return model.train().to(DEVICE)


def make_batch(name: str, length: int) -> dict:
    g = torch.Generator().manual_seed(length)
    ids = torch.randint(1, VOCAB, (2, length), generator=g)
    batch = {"input_ids": ids, "labels": torch.randint(1, VOCAB, (2, length), generator=g)}
    if name == "bert":
        batch["attention_mask"] = torch.ones_like(ids)
    return {k: v.to(DEVICE) for k, v in batch.items()}


def train_loss(name: str, out, length: int):
    causal = name not in ("bert", "t5")
    return out.logits.square().mean() if causal and length == 1 else out.loss


# Known on CUDA only (H200 run, 2026-11-28, transformers 5.17): Mistral's sliding-window cache
# layer moves a CPU tensor built in its __init__ to the GPU (`self._sliding_window_tensor.to(
# self.device)`, cache_utils.py), and a device move inside compiled code is not a prim: 6 graph
# breaks, 18 compilations. Values and gradients still match eager.
CUDA_KNOWN = {"mistral": "a CPU -> CUDA .to() inside the cache object is a graph break (6 breaks)"}
CASES = [pytest.param(name, "aot_eager", marks=pytest.mark.xfail(
            ON_GPU and name in CUDA_KNOWN, reason=CUDA_KNOWN.get(name, ""), strict=True))
         for name in sorted(KNOWN)] + [("llama", "eager"), ("llama", "inductor")]


@pytest.mark.parametrize("name, backend", CASES)
def test_default_config_trains_with_the_cache_in_the_graph(name, backend):
    reference, model = build(name), build(name)
    model.load_state_dict(reference.state_dict())
    compiled = symc.compile(model, backend=backend)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference)]
    for length in LENGTHS:
        batch = make_batch(name, length)
        where = f"{name} at length {length}"
        out, ref = compiled(**batch), reference(**batch)
        torch.testing.assert_close(out.logits, ref.logits, atol=1e-4, rtol=1e-4, msg=where)
        assert type(getattr(out, "cache", None)) is type(getattr(ref, "cache", None)), where
        for m, o in ((model, out), (reference, ref)):
            train_loss(name, o, length).backward()
        torch.testing.assert_close(train_loss(name, out, length), train_loss(name, ref, length),
                                   atol=1e-5, rtol=1e-5, msg=where)
        for (key, p), q in zip(model.named_parameters(), reference.parameters()):
            torch.testing.assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-3,
                                       msg=lambda m, key=key: f"{where}: grad of {key}: {m}")
        for opt in optimizers:
            opt.step()
            opt.zero_grad(set_to_none=True)
    report = symc.explain(compiled)
    breaks = [f"{b.function}: {b.reason} at {b.where}" for b in report.breaks]
    assert all(b.reason for b in report.breaks), str(report)
    assert (report.compiles, len(breaks)) == KNOWN[name], "\n".join(
        [str(report)] + breaks + report.recompile_reasons)


def test_returned_cache_holds_eagers_keys_and_values():
    """The DynamicCache a compiled forward returns is rebuilt with eager's layers and tensors."""
    reference, model = build("llama"), build("llama")
    model.load_state_dict(reference.state_dict())
    compiled = symc.compile(model, backend="aot_eager", fullgraph=True)
    batch = make_batch("llama", 5)
    # the output's cache field: `cache` in transformers 5.2x, `past_key_values` before
    got, want = (getattr(out, "cache", None) or out.past_key_values
                 for out in (compiled(**batch), reference(**batch)))
    assert type(got) is transformers.DynamicCache
    assert len(got.layers) == len(want.layers) == 2
    for a, b in zip(got.layers, want.layers):
        assert type(a) is type(b) and list(vars(a)) == list(vars(b))
        assert a.is_initialized and a.device == b.device
        torch.testing.assert_close(a.keys, b.keys)
        torch.testing.assert_close(a.values, b.values)
    assert got.get_seq_length() == 5
