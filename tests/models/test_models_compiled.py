"""The team models train under symc.compile with every backend: one compilation serves every
length and batch size, and losses and gradients match eager PyTorch."""

from __future__ import annotations

from tests.device import DEVICE, interpret_triton, use_triton

# Before triton is imported: its language functions are built for the interpreter or not at
# import time (the C++ tests here are unaffected; on CPU the Triton test below runs interpreted).
# SYMC_TEST_DEVICE=cuda (the GPU run) puts models and batches on CUDA: inductor runs Triton.
interpret_triton()

import pytest  # noqa: E402
import torch  # noqa: E402

import symc  # noqa: E402
from tests.models.models import MODELS, build, make_batch  # noqa: E402

BACKENDS = ["eager", "prims", "aot_eager", "inductor"]
SHAPES = [(2, 5), (3, 7), (2, 1), (2, 16), (3, 13), (2, 31), (1, 2), (3, 24)]  # 1s after the first


def _grads(model):
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_one_compilation_trains_every_length_like_eager(name, backend):
    reference = build(name).to(DEVICE)
    model = build(name).to(DEVICE)
    model.load_state_dict(reference.state_dict())
    compiled = symc.compile(model, backend=backend)
    for batch, seqlen in SHAPES:
        inputs = make_batch(name, batch=batch, seqlen=seqlen, seed=seqlen, device=DEVICE)
        for m in (model, reference):
            m.zero_grad(set_to_none=True)
        logits, loss = compiled(**inputs)
        loss.backward()
        ref_logits, ref_loss = reference(**inputs)
        ref_loss.backward()
        where = f"{name}/{backend} at batch {batch}, length {seqlen}"
        torch.testing.assert_close(logits, ref_logits, atol=1e-4, rtol=1e-4, msg=where)
        torch.testing.assert_close(loss, ref_loss, atol=1e-5, rtol=1e-5, msg=where)
        got, want = _grads(model), _grads(reference)
        assert got.keys() == want.keys(), where
        for key in want:
            torch.testing.assert_close(got[key], want[key], atol=1e-4, rtol=1e-3,
                                       msg=lambda m, key=key: f"{where}: grad of {key}: {m}")
    report = symc.explain(compiled)
    assert (report.compiles, report.recompiles, report.graph_breaks) == (1, 0, 0), str(report)
    if backend == "inductor":
        assert report.entries[0].kernels > 0
        assert set(report.entries[0].generated_code) == {"forward", "backward"}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_inference_under_no_grad_uses_the_forward_only_graph(name):
    model = build(name).eval().to(DEVICE)
    compiled = symc.compile(model, backend="inductor")
    with torch.no_grad():
        for batch, seqlen in SHAPES[:4]:
            inputs = make_batch(name, batch=batch, seqlen=seqlen, seed=seqlen, device=DEVICE)
            logits, _ = compiled(**inputs)
            assert not logits.requires_grad
            torch.testing.assert_close(logits, model(**inputs)[0], atol=1e-4, rtol=1e-4)
    report = symc.explain(compiled)
    assert report.compiles == 1 and set(report.entries[0].generated_code) == {"inference"}


@pytest.mark.parametrize("name", ["gpt", "llama"])
def test_training_through_generated_triton_kernels_matches_eager(name, monkeypatch):
    """The CUDA code path (Triton kernels): on CPU tensors under TRITON_INTERPRET=1 in CI."""
    use_triton(monkeypatch)
    reference, model = build(name).to(DEVICE), build(name).to(DEVICE)
    model.load_state_dict(reference.state_dict())
    compiled = symc.compile(model, backend="inductor")
    for batch, seqlen in SHAPES[:3]:
        inputs = make_batch(name, batch=batch, seqlen=seqlen, seed=seqlen, device=DEVICE)
        _, loss = compiled(**inputs)
        loss.backward()
        _, ref_loss = reference(**inputs)
        ref_loss.backward()
        torch.testing.assert_close(loss, ref_loss, atol=1e-5, rtol=1e-5)
    for (key, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-3, msg=key)
    entry = symc.explain(compiled).entries[0]
    assert symc.explain(compiled).compiles == 1
    assert "# ---- kernels (triton) ----" in entry.generated_code["forward"]
