"""The team models run forward and backward eagerly at several lengths (the model code is right)."""

from __future__ import annotations

import pytest
import torch

from tests.models.models import GPTConfig, MODELS, build, make_batch

LENGTHS = [1, 7, 16, 33]


@pytest.mark.parametrize("seqlen", LENGTHS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_forward_backward_gives_finite_loss_and_grads(name, seqlen):
    model = build(name)
    logits, loss = model(**make_batch(name, batch=3, seqlen=seqlen, seed=seqlen))
    assert logits.shape[0] == 3
    assert torch.isfinite(loss), f"{name} at length {seqlen}: loss {loss}"
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert any(g is not None and g.abs().sum() > 0 for g in grads), "no gradient reached params"
    assert all(g is None or torch.isfinite(g).all() for g in grads)


def test_gpt_manual_attention_matches_sdpa():
    torch.manual_seed(0)
    sdpa = build("gpt")
    manual = build("gpt", use_sdpa=False)
    manual.load_state_dict(sdpa.state_dict())
    batch = make_batch("gpt", batch=2, seqlen=13, seed=1)
    torch.testing.assert_close(sdpa(**batch)[0], manual(**batch)[0], atol=1e-5, rtol=1e-5)


def test_llama_kv_repeat_styles_agree():
    a = build("llama")
    b = build("llama", kv_repeat="expand")
    b.load_state_dict(a.state_dict())
    batch = make_batch("llama", batch=2, seqlen=9, seed=2)
    torch.testing.assert_close(a(**batch)[0], b(**batch)[0])


def test_bert_padding_does_not_change_real_tokens():
    model = build("bert").eval()
    batch = make_batch("bert", batch=2, seqlen=8, seed=3)
    batch["attention_mask"][1] = torch.tensor([1, 1, 1, 0, 0, 0, 0, 0])
    logits, _ = model(**batch)
    short = {k: v[1:2, :3] for k, v in batch.items()}
    torch.testing.assert_close(model(**short)[0][0], logits[1, :3], atol=1e-5, rtol=1e-5)


def test_t5_plain_variant_runs():
    model = build("t5", relative_bias=False)
    _, loss = model(**make_batch("t5", batch=2, seqlen=5, seed=4))
    assert torch.isfinite(loss)


def test_gpt_dropout_config_is_honoured_in_training():
    model = build("gpt", dropout=0.5).train()
    batch = make_batch("gpt", batch=2, seqlen=6, seed=5)
    assert not torch.equal(model(**batch)[0], model(**batch)[0])
    assert GPTConfig.tiny().n_layer == 2
