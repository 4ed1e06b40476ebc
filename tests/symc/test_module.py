"""Module wrappers: shared parameters, state_dict, train/eval, graph breaks, training, backends."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

import symc
from symc.demo_model import GPT, GPTConfig


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.5)
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        return self.drop(self.lin(x)) * self.scale


def test_wrapper_shares_parameters_and_state_dict():
    m = Small()
    cm = symc.compile(m, backend="eager")
    assert list(cm.parameters()) == list(m.parameters())
    assert cm.state_dict().keys() == m.state_dict().keys()
    assert cm.lin is m.lin
    cm.load_state_dict({k: torch.zeros_like(v) for k, v in m.state_dict().items()})
    assert torch.count_nonzero(m.lin.weight) == 0


def test_train_eval_switch_recompiles_on_the_training_flag():
    torch.manual_seed(0)
    m = Small()
    cm = symc.compile(m, backend="eager")
    x = torch.randn(5, 4)
    cm.eval()
    torch.testing.assert_close(cm(x), m(x))
    cm.train()
    assert m.training
    cm(x)
    report = symc.explain(cm)
    assert report.compiles == 2
    assert "training" in report.recompile_reasons[0]


def test_forward_hook_still_runs():
    m = Small().eval()
    seen = []
    m.register_forward_hook(lambda mod, inp, out: seen.append(out.shape))
    cm = symc.compile(m, backend="eager")
    cm(torch.randn(2, 4))
    assert seen == [torch.Size([2, 3])]


class Breaky(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        h = self.a(x)
        if h.sum() > 0:  # data-dependent: graph break
            h = h * 2
        return self.b(h)


class BreakyTry(Breaky):
    def forward(self, x):
        h = self.a(x)
        try:
            if h.sum() > 0:  # inside a try block: no resume, the whole frame runs eagerly
                h = h * 2
        except ValueError:
            pass
        return self.b(h)


def test_unresumable_break_in_module_compiles_children_on_their_own():
    torch.manual_seed(0)
    m = BreakyTry()
    cm = symc.compile(m, backend="eager")
    for n in (3, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(cm(x), m(x))
    report = symc.explain(cm)
    assert report.graph_breaks == 1
    assert "not resumed: inside a try block" in report.breaks[0].reason
    assert {e.function for e in report.entries} == {"BreakyTry.a.forward", "BreakyTry.b.forward"}
    assert "forward" not in m.a.__dict__  # the patch is removed after each call


def test_break_in_module_splits_the_forward():
    torch.manual_seed(0)
    m = Breaky()
    cm = symc.compile(m, backend="eager")
    for n in (3, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(cm(x), m(x))
    report = symc.explain(cm)
    assert report.graph_breaks == 1
    assert "data-dependent" in report.breaks[0].reason
    assert report.breaks[0].line == "if h.sum() > 0:  # data-dependent: graph break"
    # The frame is split at the break: a graph before it and a resume function after it.
    assert [e.function for e in report.entries] == ["Breaky.forward",
                                                    "Breaky.forward_resume_at_67"]
    assert report.compiles == 2 and report.recompiles == 0


def test_fullgraph_raises_with_reason_and_source_line():
    cm = symc.compile(Breaky(), backend="eager", fullgraph=True)
    with pytest.raises(symc.Unsupported) as info:
        cm(torch.randn(3, 4))
    text = str(info.value)
    assert "data-dependent branch" in text and "test_module.py:" in text
    assert "if h.sum() > 0:" in text


@pytest.mark.parametrize("backend", ["eager", "prims"])
def test_training_gradients_match_eager(backend):
    torch.manual_seed(0)
    m = Small().eval()
    cm = symc.compile(m, backend=backend, fullgraph=True)
    x = torch.randn(6, 4)
    cm(x).square().sum().backward()
    grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    m(x).square().sum().backward()
    for got, want in zip(grads, [p.grad for p in m.parameters()]):
        torch.testing.assert_close(got, want)


def _tiny(**overrides) -> GPTConfig:
    return GPTConfig(**{"vocab_size": 64, "block_size": 32, "n_layer": 2, "n_head": 2,
                        "n_embd": 16, **overrides})


@pytest.mark.parametrize("use_sdpa", [True, False])
def test_tiny_gpt_captures_whole_with_one_compile(use_sdpa):
    torch.manual_seed(0)
    m = GPT(_tiny(use_sdpa=use_sdpa))
    cm = symc.compile(m, backend="eager", fullgraph=True)
    for b, t in [(2, 8), (3, 13), (1, 5), (2, 32)]:
        idx = torch.randint(0, 64, (b, t))
        targets = torch.randint(0, 64, (b, t))
        logits, loss = cm(idx, targets)
        ref_logits, ref_loss = m(idx, targets)
        torch.testing.assert_close(logits, ref_logits)
        torch.testing.assert_close(loss, ref_loss)
    report = symc.explain(cm)
    assert report.compiles == 1, str(report)
    assert report.entries[0].runtime_asserts  # t <= block_size became a runtime assert


def test_tiny_gpt_trains_with_prims_backend():
    torch.manual_seed(0)
    m = GPT(_tiny())
    ref = GPT(_tiny())
    ref.load_state_dict(m.state_dict())
    cm = symc.compile(m, backend="prims", fullgraph=True)
    idx = torch.randint(0, 64, (2, 9))
    _, loss = cm(idx, idx)
    loss.backward()
    _, ref_loss = ref(idx, idx)
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss)
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
