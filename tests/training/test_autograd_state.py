"""Grad mode, None gradients, higher-order autograd and torch.func through compiled functions
(issue 26, classes 1, 2, 4, 5): each against eager PyTorch, on every backend."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

import symc

BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# ---------------------------------------------------------------------- 1: grad mode
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("first", ["no_grad", "inference_mode"])
def test_entry_compiled_without_grad_is_not_reused_for_training(backend, first):
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    compiled = symc.compile(model, backend=backend)
    context = torch.no_grad if first == "no_grad" else torch.inference_mode
    with context():
        compiled(torch.randn(3, 4))          # a validation pass first
    for n in (2, 7, 1, 11):                  # sizes incl. 1, 2, primes, above the first hint
        x = torch.randn(n, 4)
        model.zero_grad()
        compiled(x).pow(2).sum().backward()
        got = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        model(x).pow(2).sum().backward()
        for g, p in zip(got, model.parameters()):
            torch.testing.assert_close(g, p.grad)
    report = symc.explain(compiled)
    assert report.compiles >= 2, str(report)
    assert any("grad mode" in r for r in report.recompile_reasons), str(report)
    assert {e.grad_mode for e in report.entries} == {
        "grad enabled", "grad disabled (torch.no_grad)" if first == "no_grad" else "inference mode"}
    assert "grad mode: grad enabled" in str(report)


@pytest.mark.parametrize("backend", BACKENDS)
def test_enable_grad_inside_a_call_made_without_grad(backend):
    def f(x, w):
        frozen = x * w                      # caller's mode: no grad
        with torch.enable_grad():
            tracked = (x * w).sin()
        return frozen, tracked

    compiled = symc.compile(f, backend=backend)
    w = torch.randn(5, requires_grad=True)
    for n in (5, 1):
        x = torch.randn(n, 5) if n > 1 else torch.randn(5)
        with torch.no_grad():
            frozen, tracked = compiled(x, w)
            ref_frozen, ref_tracked = f(x, w)
        assert not frozen.requires_grad and tracked.requires_grad
        torch.testing.assert_close(tracked, ref_tracked)
        (g,) = torch.autograd.grad(tracked.sum(), w)
        (ref,) = torch.autograd.grad(ref_tracked.sum(), w)
        torch.testing.assert_close(g, ref)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_grad_entry_after_training_entry(backend):
    model = nn.Linear(3, 2)
    compiled = symc.compile(model, backend=backend)
    compiled(torch.randn(4, 3)).sum().backward()
    with torch.no_grad():
        out = compiled(torch.randn(6, 3))
    assert not out.requires_grad and out.grad_fn is None
    assert symc.explain(compiled).compiles == 2


# ---------------------------------------------------------------------- 2: None gradients
class PartlyFrozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.c = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.nn.functional.linear(x, self.a.weight.detach(), self.a.bias)
        with torch.no_grad():
            shift = self.b(x)
        return self.c(h + shift).relu()


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_cut_off_get_none_grads(backend):
    model = PartlyFrozen()
    compiled = symc.compile(model, backend=backend)
    for n in (2, 5):
        model.zero_grad(set_to_none=True)
        compiled(torch.randn(n, 4)).sum().backward()
        grads = {name: p.grad for name, p in model.named_parameters()}
        model.zero_grad(set_to_none=True)
        model(torch.randn(n, 4)).sum().backward()
        assert {k for k, g in grads.items() if g is None} == {
            name for name, p in model.named_parameters() if p.grad is None}
        assert grads["a.weight"] is None and grads["b.weight"] is None
        assert grads["b.bias"] is None
        assert grads["a.bias"] is not None and grads["c.weight"] is not None


@pytest.mark.parametrize("backend", BACKENDS)
def test_weight_decay_leaves_cut_off_parameters_alone(backend):
    model = PartlyFrozen()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    compiled = symc.compile(model, backend=backend)
    opt = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.5)
    for n in (3, 7):
        opt.zero_grad()
        compiled(torch.randn(n, 4)).sum().backward()
        opt.step()
    assert torch.equal(model.a.weight, before["a.weight"])
    assert torch.equal(model.b.weight, before["b.weight"])
    assert not torch.equal(model.c.weight, before["c.weight"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameter_reaching_only_an_unused_output_gets_none(backend):
    head, aux = nn.Linear(4, 2), nn.Linear(4, 3)

    def f(x):
        return head(x), aux(x)

    compiled = symc.compile(f, backend=backend)
    out, _ = compiled(torch.randn(5, 4))
    out.sum().backward()
    assert head.weight.grad is not None and aux.weight.grad is None


# ---------------------------------------------------------------------- 4: higher order
def _penalty_grads(fn, w, x):
    w.grad = None
    x = x.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(x), x, create_graph=True)
    penalty = (g.norm(2, dim=-1) - 1).pow(2).mean()
    penalty.backward()
    return penalty.detach(), w.grad.clone()


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_penalty_trains_on_eager_gradients(backend):
    w = torch.randn(4, 4, requires_grad=True)

    def critic(x):
        return torch.tanh(x @ w).pow(2).sum()

    compiled = symc.compile(critic, backend=backend)
    for n in (3, 1, 2, 13):
        x = torch.randn(n, 4)
        got = _penalty_grads(compiled, w, x)
        want = _penalty_grads(critic, w, x)
        torch.testing.assert_close(got, want)
        assert want[1].abs().sum() > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_double_backward(backend):
    def f(x):
        return (x.sin() * x).sum()

    compiled = symc.compile(f, backend=backend)
    for n in (2, 5):
        x = torch.randn(n, requires_grad=True)
        (g,) = torch.autograd.grad(compiled(x), x, create_graph=True)
        (gg,) = torch.autograd.grad(g.sum(), x)
        x2 = x.detach().requires_grad_(True)
        (g2,) = torch.autograd.grad(f(x2), x2, create_graph=True)
        (gg2,) = torch.autograd.grad(g2.sum(), x2)
        torch.testing.assert_close(g, g2)
        torch.testing.assert_close(gg, gg2)


# ---------------------------------------------------------------------- 5: torch.func
@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_func_grad_and_vmap_give_eager_answers(backend):
    def f(x):
        return (x.sin() * x).sum()

    compiled = symc.compile(f, backend=backend)
    x = torch.randn(5)
    torch.testing.assert_close(torch.func.grad(compiled)(x), torch.func.grad(f)(x))
    xs = torch.randn(3, 5)
    torch.testing.assert_close(torch.vmap(compiled)(xs), torch.vmap(f)(xs))
    torch.testing.assert_close(compiled(x), f(x))     # outside a transform: compiled
    report = symc.explain(compiled)
    assert report.compiles == 1
    assert any("torch.func transform" in line for line in report.eager_calls), str(report)
    assert "calls run eagerly" in str(report)


@pytest.mark.parametrize("backend", BACKENDS)
def test_functional_call_grad_of_a_compiled_module(backend):
    model = nn.Linear(3, 1)
    compiled = symc.compile(model, backend=backend)
    params = dict(model.named_parameters())
    x = torch.randn(4, 3)

    def loss(p, module):
        return torch.func.functional_call(module, p, (x,)).pow(2).sum()

    got = torch.func.grad(loss)({"_orig_mod." + k: v for k, v in params.items()}, compiled)
    want = torch.func.grad(loss)(params, model)
    for k, v in want.items():
        torch.testing.assert_close(got["_orig_mod." + k], v)
