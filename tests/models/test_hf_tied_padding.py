"""Tied embeddings with padding rows in real models (issue 18, class 2): BERT's word embedding
has padding_idx=0 and is tied to the MLM decoder; GPT-2 ties wte to lm_head. Batches that do
contain the padding token must give eager's gradients for the shared weight (symc gave relative
errors of 0.06-0.9 before embedding's backward skipped the padding row)."""

from __future__ import annotations

import pytest
import torch

import symc
from tests.models.test_hf import VOCAB, build

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.hf


def _batch(name, batch, seqlen):
    g = torch.Generator().manual_seed(7 * batch + seqlen)
    ids = torch.randint(0, VOCAB, (batch, seqlen), generator=g)
    ids[:, -2:] = 0  # padding (BERT's pad_token_id, GPT-2's bos/eos here) in every row
    inputs = dict(input_ids=ids, labels=ids.clone())
    if name == "bert":
        inputs["attention_mask"] = (ids != 0).long()
    return inputs


@pytest.mark.parametrize("name", ["bert", "gpt2"])
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_tied_padded_embedding_gradients_match_eager(name, backend):
    reference, model = build(name, "sdpa"), build(name, "sdpa")
    model.load_state_dict(reference.state_dict())
    embedding = model.get_input_embeddings()
    assert embedding.weight is model.get_output_embeddings().weight  # tied
    compiled = symc.compile(model, backend=backend)
    for batch, seqlen in [(2, 6), (3, 11), (2, 1 + 2)]:
        inputs = _batch(name, batch, seqlen)
        for m in (model, reference):
            m.zero_grad(set_to_none=True)
        compiled(**inputs).loss.backward()
        reference(**inputs).loss.backward()
        got = embedding.weight.grad
        want = reference.get_input_embeddings().weight.grad
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-3,
                                   msg=lambda m: f"{name}/{backend} {batch}x{seqlen}: {m}")
